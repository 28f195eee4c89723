#!/usr/bin/env bash
# test_boot_fail.sh - instances broken on purpose (local provider). burst-1's
# burst-node fails at once: the agent sees the instance end before it joins
# (not BootTimeout later), puts the end of its console in the event log and
# sets the node DOWN with a burst: reason that quotes it and says where to
# read it. burst-2 joins, but its slurmd cannot start: it is launched again
# a bounded number of times, each after a longer wait, then DOWN with a
# burst: reason, and not launched again.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
ctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 300 10 300)
lab_pre_ctld() {
	lab_burst_conf <<CONF
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log $LAB_NODE_LOGS"

# The image's burst-node: for burst-1 it fails at once; for burst-2 it is
# the real one (a copy outside /tmp), whose slurmd cannot start.
cp "$build/burst-node/burst-node" "$LAB/real-burst-node" || bail "cannot copy burst-node"
cat >"$LAB/broken-node" <<WRAP
#!/bin/bash
node=
a=()
for x in "\$@"; do
	[ "\$x" = -- ] && break
	[ "\${prev:-}" = --node ] && node=\$x
	prev=\$x
	a+=("\$x")
done
if [ "\$node" = burst-1 ]; then
	echo "burst-node: reading the image"
	echo "burst-node: fatal: the image is broken on purpose (test_boot_fail)" >&2
	exit 1
fi
exec $LAB/real-burst-node "\${a[@]}" -- /bin/sh -c 'echo "slurmd: fatal: slurmd broken on purpose (test_boot_fail)" >&2; exit 1'
WRAP
chmod 755 "$LAB/broken-node"
lab_agent_start "$LAB/broken-node"; ok $? "the agent is up"

reason() { scontrol show node -o "$1" 2>/dev/null | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }
wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -Eq "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}

# --- 1. burst-1: the instance ends before it joins ---
t0=$(date +%s)
sbatch --parsable --cloud-contract=here -w burst-1 -o /dev/null --wrap true >"$LAB/j1" 2>"$LAB/err"
ok $? "sbatch -w burst-1" "$LAB/err"
wait_log 'burst-1: booting -> terminating: instance [^ ]+ ended before it joined' 30
ok $? "the agent sees burst-1's instance end before it joins"
t1=$(date +%s)
[ $((t1 - t0)) -lt 30 ] && ! grep -q 'burst-1: .*did not join within BootTimeout' "$LAB/log/agent.log"
ok $? "... at once ($((t1 - t0)) s), not after BootTimeout"
"$ctl" --config "$LAB/etc/burst.conf" events --node burst-1 >"$LAB/ev1" 2>&1
grep -q ' burst-1 console local-lab[0-9]*-burst-1-1: burst-node: fatal: the image is broken on purpose (test_boot_fail)$' "$LAB/ev1" &&
	grep -q ' burst-1 console local-lab[0-9]*-burst-1-1: burst-node: reading the image$' "$LAB/ev1"
ok $? "burstctl events shows the end of its console" "$LAB/ev1"
lab_wait_node burst-1 'down.*' 10; ok $? "burst-1 is DOWN"
r=$(reason burst-1); echo "$r" >"$LAB/r1"
[[ "$r" == "burst: instance local-lab"*"-burst-1-1 ended before it joined; console: \"burst-node: fatal: the image is broken on purpose (test_boot_fail)\" (burstctl events --node burst-1; $LAB/burst/nodes/burst-1/node.log)"* ]]
ok $? "its reason quotes the console's last line and says where to read it" "$LAB/r1"

# --- 2. burst-2: admitted, but its slurmd cannot start ---
sbatch --parsable --cloud-contract=here -w burst-2 -o /dev/null --wrap true >"$LAB/j2" 2>"$LAB/err"
ok $? "sbatch -w burst-2" "$LAB/err"
wait_log 'burst-2: admitted -> terminating: .*not launched again' 150
ok $? "burst-2's slurmd never starts: the agent gives up"
grep -E 'burst-2: admitted -> terminating: instance [^ ]+ ended after its admission: its slurmd did not start' \
	"$LAB/log/agent.log" >"$LAB/fails2"
[ "$(wc -l <"$LAB/fails2")" = 4 ]; ok $? "4 instances in a row, no more" "$LAB/fails2"
grep -q 'launching it again in 5 s (1 of at most 3)' "$LAB/fails2" &&
	grep -q 'launching it again in 10 s (2 of at most 3)' "$LAB/fails2" &&
	grep -q 'launching it again in 20 s (3 of at most 3)' "$LAB/fails2"
ok $? "each relaunch after a longer wait (5, 10, 20 s)" "$LAB/fails2"
lab_wait_node burst-2 'down.*' 10; ok $? "burst-2 is DOWN"
r=$(reason burst-2); echo "$r" >"$LAB/r2"
[[ "$r" == "burst: instance "*"ended after its admission: its slurmd did not start; 4 instances in a row: not launched again; console: \"slurmd: fatal: slurmd broken on purpose (test_boot_fail)\" (burstctl events --node burst-2; "* ]]
ok $? "its reason says so, with the console's last line" "$LAB/r2"
n=$(grep -c 'burst-2: launching -> booting' "$LAB/log/agent.log")
sleep 8
[ "$(grep -c 'burst-2: launching -> booting' "$LAB/log/agent.log")" = "$n" ] && [ "$n" = 4 ]
ok $? "it is not launched again ($n launches)"
"$ctl" --config "$LAB/etc/burst.conf" events --node burst-2 >"$LAB/ev2" 2>&1
[ "$(grep -c ' burst-2 console .*: slurmd: fatal: slurmd broken on purpose (test_boot_fail)$' "$LAB/ev2")" = 4 ]
ok $? "burstctl events has the console of each of its instances" "$LAB/ev2"

scancel "$(cat "$LAB/j1")" "$(cat "$LAB/j2")" 2>/dev/null
lab_down
done_testing

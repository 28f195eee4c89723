#!/usr/bin/env bash
# test_crash_points.sh - the agent crashed at every named crash point
# (burst-agent --list-crash-points, doc/crash_points.md), on a real Slurm
# with the local provider. One lab for all points; for each point the agent
# is started with BURST_CRASH_POINT=POINT and taken through one round of
# work that reaches every point:
#   - two jobs burst onto burst-1 and burst-2 (spool, launch, join, admission);
#   - burst-3 (its burst-node fails at once: boot failure, console) and
#     burst-4 (node set "stale": rejected at join) are powered up;
#   - the agent is stopped and started again while burst-1 and burst-2 are
#     admitted (its recovery finds their instances in the provider's
#     listing; for the provider.exists points burst-1's instance is removed
#     while the agent is down, so that recovery asks about it, fails the
#     node, and the test resumes it);
#   - burst-1's instance vanishes (removed by hand): the reconciler finds it
#     lost; burst-2 is powered down (terminate).
# Whenever the agent ends at the point (status 86) it is started again,
# unarmed, and the round goes on. Then the invariants: the point was
# reached; both jobs completed, each on the one instance launched for it;
# one launch intent per node (nothing launched twice); every node back to
# idle~; no instance left once the reconciler has had a round (no orphan);
# no spool request left untaken or set aside.
#
# CRASH_POINTS="p1 p2" runs those points only.
# burst-matrix: host-only (the agent's own crash recovery, about 5 minutes over its 36 points in two labs; its Slurm calls are those test_lifecycle and test_reconcile make on both releases; left out of the second release to keep ./check.sh within CI's time)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"

# a driver's own points (gcp.*, azure.*) are reached only by its launches:
# its test runs them (test_gcp_agent.sh, test_azure_agent.sh)
points=${CRASH_POINTS:-$("$agent" --list-crash-points | cut -f1 | grep -v '^gcp\.\|^azure\.')}
[ -n "$points" ] || bail "burst-agent --list-crash-points listed nothing"

# The points are shared out over BURST_CRASH_SHARDS labs (default 2) run side
# by side, each this script in its own process with its own Slurm, agent and
# network: a round mostly waits on Slurm's and the agent's timers
# (SuspendTimeout, VanishGrace, the reconciler), so two labs take about half
# the time of one. Their TAP is renumbered here, every line kept; a shard
# that ends without its plan fails. BURST_CRASH_SHARDS=1 runs them in one lab.
shards=${BURST_CRASH_SHARDS:-2}
[[ "$shards" =~ ^[1-9]$ ]] || bail "BURST_CRASH_SHARDS=$shards: give a number from 1 to 9"
if [ -z "${BURST_CRASH_SHARD:-}" ] && [ "$shards" -gt 1 ] && [ "$(wc -w <<<"$points")" -gt 1 ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/burst-crash-shards.XXXXXX") || bail "no temporary directory"
	pids=()
	# a shard tears its lab down on TERM (lab.sh's trap): passed on
	trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$out"' EXIT
	trap 'exit 130' INT TERM
	k=0
	for p in $points; do   # dealt out in turn: each shard gets every kind of point
		echo "$p" >>"$out/points.$((k % shards + 1))"
		k=$((k + 1))
	done
	for ((s = 1; s <= shards; s++)); do
		[ -s "$out/points.$s" ] || continue
		BURST_CRASH_SHARD=$s CRASH_POINTS=$(tr '\n' ' ' <"$out/points.$s") \
			bash "$0" >"$out/tap.$s" 2>"$out/err.$s" &
		pids[s]=$!
	done
	for s in "${!pids[@]}"; do
		wait "${pids[s]}"
		rc=$?
		while IFS= read -r line; do
			case $line in
			"ok "*) ok 0 "[shard $s] ${line#* - }" ;;
			"not ok "*) ok 1 "[shard $s] ${line#* - }" /dev/null ;;
			1..*) ;;
			"Bail out!"*) ok 1 "[shard $s] ${line#Bail out! }" /dev/null ;;
			*) echo "$line" ;;
			esac
		done <"$out/tap.$s"
		grep -q '^1\.\.[0-9]' "$out/tap.$s"
		ok $? "[shard $s] ran to its plan (exit $rc; points: $(tr '\n' ' ' <"$out/points.$s"))" "$out/err.$s"
		cat "$out/err.$s" >&2
	done
	done_testing
	exit
fi

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 5 3600)
lab_pre_ctld() {
	lab_burst_conf <<CONF || return 1
RejectCooldown=1
ReconcileInterval=1
OrphanGrace=3
VanishGrace=1
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-3] Partition=burst InstanceTypes=local.host Weight=1
NodeSet=stale Nodes=burst-4 Partition=burst InstanceTypes=local.host Weight=10 BlessedKernels=0.0.0-not-this-kernel
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
N="$LAB/burst/nodes"
TAP_DIAG="$LAB/log/agent.log $LAB_NODE_LOGS $N/*/node.log.1"

# The image's burst-node: burst-3's fails at once (a boot failure, its
# console read); the others' is the real one (a copy outside /tmp).
cp "$build/burst-node/burst-node" "$LAB/real-burst-node" || bail "cannot copy burst-node"
cat >"$LAB/node-wrap" <<WRAP
#!/bin/bash
prev= node=
for x in "\$@"; do [ "\$prev" = --node ] && node=\$x; prev=\$x; done
if [ "\$node" = burst-3 ]; then
	echo "burst-node: fatal: broken on purpose (test_crash_points)" >&2
	exit 1
fi
exec $LAB/real-burst-node "\$@"
WRAP
chmod 755 "$LAB/node-wrap"

# the agent, armed with point $1 (none: unarmed)
start_agent() {
	if [ -n "${1:-}" ]; then
		BURST_CRASH_POINT=$1 lab_agent_start "$LAB/node-wrap"
	else
		lab_agent_start "$LAB/node-wrap"
	fi
}

# the agent ended on its own: at the armed point (then started again,
# unarmed), or not (a failure, said once)
point= armed= crashed= died=
keep_agent() {
	local rc
	lab_pid_alive "$AGENT_PID" && return 0
	wait "$AGENT_PID" 2>/dev/null
	rc=$?
	if [ -n "$armed" ] && [ $rc = 86 ] && grep -q "crash point $point reached" "$LAB/log/agent.log"; then
		crashed=yes
	else
		died="$died exit $rc;"
	fi
	armed=
	unset BURST_CRASH_POINT
	start_agent || died="$died no restart;"
}

# wait (keeping the agent up) until the command $2... succeeds, at most $1 s
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		keep_agent
		"$@" && return 0
		sleep 0.2
	done
	keep_agent
	"$@"
}
jobs_done() { [ "$(squeue -h -t all -j "$j1,$j2" -o %T 2>/dev/null | sort -u | tr -d '\n')" = COMPLETED ]; }
node_is() { [[ "$(lab_node_state "$1")" =~ ^($2)$ ]]; }
all_idle() { local n; for n in burst-1 burst-2 burst-3 burst-4; do node_is $n 'idle~' || return 1; done; }
in_state() { [ "$(sqlite3 "$LAB/burst/agent.db" "SELECT state FROM nodes WHERE name='$1'" 2>/dev/null)" = "$2" ]; }
no_instance() { ! ip netns list 2>/dev/null | grep -q "^burst-lab$$-"; }
segment() { tail -n +"$((mark + 1))" "$LAB/log/agent.log"; }
intents() { sqlite3 "$LAB/burst/agent.db" "SELECT count(*) FROM events WHERE id > $ev0 AND node = '$1' AND what = 'requested -> launching'"; }

lab_agent_start "$LAB/node-wrap"; ok $? "the agent is up (unarmed)"
start=$SECONDS
for point in $points; do
	t0=$SECONDS
	kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null
	mark=$(wc -l <"$LAB/log/agent.log")
	ev0=$(sqlite3 "$LAB/burst/agent.db" "SELECT coalesce(max(id), 0) FROM events")
	crashed= died= armed=yes
	start_agent "$point" || died="not started;"
	j1=$(sbatch --parsable --cloud-contract=here -w burst-1 -o "$LAB/$point.1.out" --wrap 'echo $CLOUD_INSTANCE_ID' 2>>"$LAB/err")
	j2=$(sbatch --parsable --cloud-contract=here -w burst-2 -o "$LAB/$point.2.out" --wrap 'echo $CLOUD_INSTANCE_ID' 2>>"$LAB/err")
	scontrol update nodename=burst-[3-4] state=power_up 2>>"$LAB/err"
	wait_for 90 jobs_done; jd=$?
	# the instances each job ran on, and that they still run (one each)
	ran1=$(cat "$LAB/$point.1.out" 2>/dev/null) ran2=$(cat "$LAB/$point.2.out" 2>/dev/null)
	live1=$(cat "$N/burst-1/instance" 2>/dev/null) live2=$(cat "$N/burst-2/instance" 2>/dev/null)
	# recovery with admitted nodes (their instances asked for)
	if [ -n "$armed" ] && lab_pid_alive "$AGENT_PID"; then
		kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
		# recovery finds live instances in one listing and asks the
		# provider only about one it does not list: for the exists
		# points, burst-1's goes while the agent is down (then lost at
		# once: DOWN, resumed below)
		case $point in provider.exists.*)
			"$src/burst-agent/drivers/burst-local-instance" stop "burst-lab$$-burst-1" >>"$LAB/err" 2>&1 ;;
		esac
		start_agent "$point" || died="$died not restarted;"
	fi
	wait_for 30 eval 'in_state burst-3 powered_down && in_state burst-4 powered_down'
	# burst-1's instance vanishes; burst-2 is powered down
	"$src/burst-agent/drivers/burst-local-instance" stop "burst-lab$$-burst-1" >>"$LAB/err" 2>&1
	scontrol update nodename=burst-2 state=power_down_force 2>>"$LAB/err"
	case $point in provider.exists.*)
		wait_for 30 node_is burst-1 'down.*'
		scontrol update nodename=burst-1 state=resume 2>>"$LAB/err" ;;
	esac
	wait_for 60 all_idle; idle=$?
	# a reconciler's round after everything settled (ReconcileInterval=1)
	wait_for 4 eval 'sleep 2; no_instance'; gone=$?

	name="[$point]"
	segment >"$LAB/seg"
	seg="$LAB/seg"
	[ -n "$crashed" ]; ok $? "$name the agent ended at the point (status 86) and was started again${died:+; besides:$died}" "$seg"
	[ -z "$died" ]; ok $? "$name the agent ended nowhere else${died:+:$died}" "$seg"
	[ $jd = 0 ]; ok $? "$name both jobs completed" "$seg" "$LAB/log/slurmctld.log" $TAP_DIAG
	# counted in the state's events, written with each transition: a
	# transition's log line comes after its commit, and a crash on a
	# worker thread between the two loses the line, not the transition
	n1=$(intents burst-1) n2=$(intents burst-2)
	[ "$n1" = 1 ] && [ "$n2" = 1 ]
	ok $? "$name one launch intent each for burst-1 and burst-2 ($n1, $n2): nothing launched twice" "$seg"
	if [ "$n1" != 1 ] || [ "$n2" != 1 ]; then
		grep 'burst-[12]: \|crash point\|started:\|slurmctld took' "$seg" | sed 's/^/# burst-1, burst-2: /'
		for f in "$N"/burst-[12]/node.log*; do sed "s|^|# ${f#"$LAB/"}: |" "$f"; done
	fi
	[ -n "$ran1" ] && [ "$ran1" = "$live1" ] && [ -n "$ran2" ] && [ "$ran2" = "$live2" ]
	ok $? "$name each job ran on its node's one live instance ($ran1 = $live1, $ran2 = $live2)" "$seg" $TAP_DIAG
	[ $idle = 0 ]; ok $? "$name every node is idle~ again ($(for n in 1 2 3 4; do printf '%s ' "$(lab_node_state burst-$n)"; done))" "$seg" "$LAB/log/slurmctld.log"
	[ $idle = 0 ] || grep 'burst-[1-4]: \|crash point\|started:\|spool:' "$seg" | sed 's/^/# all nodes: /'
	[ $gone = 0 ]; ok $? "$name no instance is left after the reconciler's round (no orphan): $(ip netns list | grep -c "^burst-lab$$-")" "$seg"
	left=$(ls "$LAB/burst/spool" 2>/dev/null | grep -c '\.json\|\.bad')
	[ "$left" = 0 ]; ok $? "$name no spool request left untaken or set aside ($left)" "$seg"
	echo "# $point: $((SECONDS - t0)) s"
done
echo "# $(echo $points | wc -w) points in $((SECONDS - start)) s"

labdir=$LAB
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

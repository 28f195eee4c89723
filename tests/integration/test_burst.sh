#!/usr/bin/env bash
# test_burst.sh - one job bursts into a node that did not exist, runs, and
# the node goes away: sbatch --cloud-contract, burst-resume, the agent's
# local provider (namespaces), burst-node join, slurmd, the job's CLOUD_*
# variables, burst-suspend, and nothing left behind.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 10 5)
lab_pre_ctld() {
	# the site's own PrologSlurmctld, chained by ours: it logs, and fails
	# jobs named site-says-no
	cat >"$LAB/etc/site-prolog" <<PROLOG
#!/bin/sh
echo "\$SLURM_JOB_ID \$SLURM_JOB_NAME" >>$LAB/site-prolog.log
[ "\$SLURM_JOB_NAME" != site-says-no ]
PROLOG
	chmod 755 "$LAB/etc/site-prolog"
	lab_burst_conf <<CONF
PrologSlurmctld=$LAB/etc/site-prolog
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"

id=$(sbatch --parsable --cloud-contract=here -o "$LAB/job.out" \
	--wrap 'hostname; env | grep ^CLOUD_ | sort; ls /tmp | wc -l' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here" "$LAB/err"
lab_wait_job "$id" COMPLETED 90; ok $? "the job bursts, runs and completes" "$LAB/log/agent.log" "$LAB/log/slurmctld.log" $LAB_NODE_LOGS
node=$(sacct -n -j "$id" -o NodeList 2>/dev/null | head -1 | tr -d ' ')
[ -n "$node" ] || node=$(grep -o 'burst-[0-9]' "$LAB/job.out" | head -1)
grep -qx 'burst-[12]' "$LAB/job.out"; ok $? "it ran on a burst node, whose hostname is its node name" "$LAB/job.out"
grep -q '^CLOUD_CONTRACT=node_vcpus_count>=1 accelerator_count=0$' "$LAB/job.out"; ok $? "the job sees CLOUD_CONTRACT" "$LAB/job.out"
grep -q '^CLOUD_PROVIDER=local$' "$LAB/job.out" && grep -q '^CLOUD_INSTANCE_TYPE=local.host$' "$LAB/job.out" &&
	grep -q "^CLOUD_INSTANCE_ID=local-lab$$-burst-[12]-1$" "$LAB/job.out"
ok $? "... and CLOUD_PROVIDER, CLOUD_INSTANCE_TYPE, CLOUD_INSTANCE_ID" "$LAB/job.out"
[ "$(tail -1 "$LAB/job.out")" = 0 ]; ok $? "the node has a private /tmp" "$LAB/job.out"
grep -q 'booting -> admitted' "$LAB/log/agent.log"; ok $? "the node was admitted before slurmd started" "$LAB/log/agent.log"
# what the agent started holds none of its files open (close-on-exec): a
# rotated log's space is freed, the state database's locks are the agent's
held=
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^burst-lab$$-burst-"); do
	for pid in $(ip netns pids "$ns" 2>/dev/null); do
		for fd in /proc/"$pid"/fd/*; do
			case "$(readlink "$fd" 2>/dev/null)" in
			"$LAB"/log/agent.log* | "$LAB"/burst/agent.db* | "$LAB"/burst/spool*) held="$held $pid:$(readlink "$fd")" ;;
			esac
		done
	done
done
[ -z "$held" ] && [ -n "$(ip netns list 2>/dev/null | grep "^burst-lab$$-burst-")" ]
ok $? "the instances' processes hold none of the agent's files open${held:+ (held:$held)}"
# Slurm before 23.11.1 misses a registration from a slurmd started in the
# second of the resume request (lib/core/slurm_compat.h) unless it registers
# before its boot clock ticks: such a slurmd starts in the safe window of
# that clock's second or from the request's next second, whichever comes
# first (lib/admit/slurmd_start.h); later releases start it at once
nlog="$LAB/burst/nodes/$node/node.log"
# the spool file's name starts with the time burst-resume ran, in or after
# the second of slurmctld's power-save scan
req=$(sed -n "s/.* $node: powered_down -> requested: 0*\([0-9]*\)\.[0-9]*-.*/\1/p" "$LAB/log/agent.log" | head -1)
start=$(grep -m1 "^burst-node: $node: slurmd starts" "$nlog")
nb=$(printf '%s\n' "$start" | sed -n 's/.*second \([0-9]\{9,\}\).*/\1/p')
case "$(slurmctld -V | sed 's/^[^0-9]*//')" in
22.*|23.0*|23.11.0)
	[ -n "$req" ] && [ -n "$nb" ] && [ "$nb" -gt "$req" ]
	ok $? "slurmd is told the second after the resume request's ($req < $nb): $start" "$nlog" "$LAB/log/agent.log"
	# one of the safe starts: inside the boot clock's window (before .750),
	# once the request's second is over, or after a wait for either
	phase=$(printf '%s\n' "$start" | sed -n 's/.*slurmd starts now (boot clock at \.\([0-9]\{3\}\) of its second), before second [0-9]*$/\1/p')
	{ [ -n "$phase" ] && [ "$((10#$phase))" -lt 750 ]; } ||
		printf '%s\n' "$start" | grep -Eq "slurmd starts now \(at [0-9]+\.[0-9]{3}\): second $nb is the resume request's next$" ||
		printf '%s\n' "$start" | grep -Eq "slurmd starts after the boot clock's next second or at second $nb \(now \.(7[5-9][0-9]|[89][0-9][0-9]), less than 250 ms left\)$"
	ok $? "slurmd starts in the boot clock's safe window or after the request's second: $start" "$nlog" ;;
*)
	grep -q "^burst-node: $node: slurmd starts now$" "$nlog"
	ok $? "slurmd starts as soon as the node is admitted" "$nlog" ;;
esac
grep -Eq ': report of instance [^ ]+: provenance [0-9.]+ s, no acceptance tests, [0-9]+ bytes$' "$LAB/log/agent.log" &&
	! grep -q 'acceptance -1' "$LAB/log/agent.log"
ok $? "without acceptance.conf the agent logs that no acceptance test ran (not a negative time)" "$LAB/log/agent.log"
grep -qx "$id wrap" "$LAB/site-prolog.log"; ok $? "burst-prolog-slurmctld ran the site's PrologSlurmctld first" "$LAB/site-prolog.log" "$LAB/log/slurmctld.log"

# idle: suspended after SuspendTime; the instance and its processes go away
n=$(grep -o 'burst-[12]' "$LAB/job.out" | head -1)
lab_wait_node "$n" 'idle~' 60; ok $? "the idle node is powered down again ($n)" "$LAB/log/agent.log"
ns="burst-lab$$-$n"
for i in $(seq 50); do ip netns list | grep -q "^$ns" || break; sleep 0.1; done
! ip netns list | grep -q "^$ns"; ok $? "its namespace is gone" "$LAB/log/agent.log"
! pgrep -f "slurmd -D -b -f $SLURM_CONF -N $n" >/dev/null; ok $? "its slurmd is gone"
grep -q "$n: terminating -> powered_down" "$LAB/log/agent.log"; ok $? "the agent recorded the termination" "$LAB/log/agent.log"

# a second burst of the same node works (attempt 2, a new token)
id=$(sbatch --parsable --cloud-contract=here -w "$n" -o "$LAB/job2.out" --wrap 'env | grep ^CLOUD_INSTANCE_ID')
lab_wait_job "$id" COMPLETED 90; ok $? "the node bursts again" "$LAB/log/agent.log" $LAB_NODE_LOGS
# attempt 2
inst=$(sed -n 's/^CLOUD_INSTANCE_ID=//p' "$LAB/job2.out")
[ "$inst" = "local-lab$$-$n-2" ]
ok $? "... as a new instance ($inst)" "$LAB/job2.out"

# the site's PrologSlurmctld says no: the job does not run
id=$(sbatch --parsable --cloud-contract=here -J site-says-no -o "$LAB/job3.out" --wrap 'echo ran')
for i in $(seq 100); do grep -q "^$id site-says-no" "$LAB/site-prolog.log" 2>/dev/null && break; sleep 0.1; done
sleep 1
st=$(squeue -h -t all -j "$id" -o '%T %r')
[ ! -e "$LAB/job3.out" ] && grep -q "^$id site-says-no" "$LAB/site-prolog.log" && [[ "$st" != COMPLETED* ]] && [[ "$st" != RUNNING* ]]
ok $? "a failing site PrologSlurmctld keeps its verdict ($st)" "$LAB/site-prolog.log" "$LAB/log/slurmctld.log"
scancel "$id"

# what a power-save program says reaches the agent's log, not only
# slurmctld's (which since 23.02 logs it only with DebugFlags=Script)
env -i SLURM_CONF="$SLURM_CONF" SLURM_RESUME_FILE="$LAB/no-such-resume-file" \
	"$build/plugins/power_save/burst-resume" not-a-burst-node 2>/dev/null
for i in $(seq 50); do grep -q 'burst-resume said: warning: cannot read SLURM_RESUME_FILE' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q "spool: [^ ]*-resume.json: burst-resume said: warning: cannot read SLURM_RESUME_FILE $LAB/no-such-resume-file: No such file or directory" "$LAB/log/agent.log"
ok $? "a power-save program's warning is in the agent's log" "$LAB/log/agent.log"

# the control socket admits root and SlurmUser only
if id nobody >/dev/null 2>&1; then
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
try: s.sendall(b"{\"op\":\"poke\"}\n")
except OSError: pass   # refused before anything is read: the answer may come first
print(s.recv(200).decode())' "$LAB/burst/agent.sock" 2>&1)
	echo "$out" | grep -q 'permission denied'; ok $? "an unprivileged user is refused by the agent ($out)"
	grep -q 'control: refused uid' "$LAB/log/agent.log"; ok $? "... and it is logged"
fi
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

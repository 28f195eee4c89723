#!/usr/bin/env bash
# test_lifecycle.sh - the burst path when things go wrong, on a real Slurm:
# an inline contract, srun across two burst nodes woken together, a node
# rejected at join (its job requeued at once and run elsewhere; the node
# back to idle~ after its cooldown), a node whose admission record is gone
# refused by the SPANK job prolog (the job released by the agent), the agent
# killed with SIGKILL in the middle of a burst, and resume requests made
# while the agent is down.
#
# LIFECYCLE_ONLY=kill runs only the case of the agent killed while a node
# launches (and the teardown checks): a loop over that case alone, for a
# flake hunt (each run is a new lab).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 5 30)
lab_pre_ctld() {
	# node set "stale" is chosen first (lower weight) but blesses a kernel
	# no node runs: its node is rejected at join
	lab_burst_conf <<CONF || return 1
RejectCooldown=4
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=stale Nodes=burst-1 Partition=burst InstanceTypes=local.host Weight=1 BlessedKernels=0.0.0-not-this-kernel
NodeSet=local Nodes=burst-[2-5] Partition=burst InstanceTypes=local.host Weight=10
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
# the nodes' own logs too (their consoles, their slurmds'): a node's side
# of a failure is in them
TAP_DIAG="$LAB/log/agent.log $LAB_NODE_LOGS"
only=${LIFECYCLE_ONLY:-}
case "$only" in ''|kill) ;; *) bail "LIFECYCLE_ONLY=$only: the only case that runs alone is 'kill'" ;; esac

lab_agent_start; ok $? "the agent is up"

if [ -z "$only" ]; then
# --- a node rejected at join: never registers; the job runs elsewhere ---
# (burst-[3-5] are kept for what follows)
id=$(sbatch --parsable --cloud-contract=here -x 'burst-[3-5]' -o "$LAB/rej.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here" "$LAB/err"
lab_wait_job "$id" COMPLETED 90; ok $? "the job completes although the first node it got was rejected" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -q 'burst-1: booting -> rejected: rejected at join: node set stale, local:local.host: kernel .* is not blessed' "$LAB/log/agent.log"
ok $? "burst-1 was rejected at join, the reason naming the kernel and the node set"
grep -qx 'burst-2' "$LAB/rej.out"; ok $? "... and the job ran on a node of the other node set ($(cat "$LAB/rej.out" 2>/dev/null))" "$LAB/rej.out"
! grep -q 'Node burst-1 now responding\|node burst-1 .*registered' "$LAB/log/slurmctld.log" && [ ! -e "$LAB/log/slurmd-burst-1.log" ]
ok $? "the rejected node never ran slurmd nor registered" "$LAB/log/slurmctld.log"
grep -q "burst-node: burst-1: rejected by the agent: node set stale, .*kernel .* is not blessed.*; slurmd is not started" "$LAB/burst/nodes/burst-1/node.log"
ok $? "burst-node said why it did not start slurmd" "$LAB/burst/nodes/burst-1/node.log"
lab_wait_node burst-1 'idle~' 30; ok $? "after its cooldown the rejected node is idle~ again ($(lab_node_state burst-1))" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
! ip netns list | grep -q "^burst-lab$$-burst-1 "; ok $? "... and its instance is gone"

# --- an inline contract routes the same way; srun -N2 across two burst nodes ---
timeout 90 srun --cloud-contract='node_vcpus_count>=1,accelerator_count=0' -N2 -w burst-[3-4] hostname >"$LAB/srun.out" 2>"$LAB/err"
ok $? "srun -N2 with an inline contract" "$LAB/err" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
out=$(sort "$LAB/srun.out" | tr '\n' ' ')
[ "$out" = "burst-3 burst-4 " ]; ok $? "... runs on two burst nodes woken together ($out)" "$LAB/err"
out=$(srun -N2 -w burst-[3-4] printenv CLOUD_INSTANCE_ID CLOUD_PROVENANCE_ID 2>>"$LAB/err" | sort | tr '\n' ' ')
[[ "$out" =~ ^[0-9a-f]{64}\ [0-9a-f]{64}\ local-lab$$-burst-3-1\ local-lab$$-burst-4-1\ $ ]]
ok $? "each task sees its node's CLOUD_INSTANCE_ID and CLOUD_PROVENANCE_ID ($out)" "$LAB/err"

# --- a node without an admission record is refused by the job prolog ---
rm -f "$LAB/burst/nodes/burst-3/admission.env"
id=$(sbatch --parsable --cloud-contract=here -w burst-3 -o "$LAB/pro.out" --wrap 'hostname' 2>"$LAB/err")
for i in $(seq 200); do
	grep -q "job $id was held because burst-3 refused it" "$LAB/log/agent.log" && break
	sleep 0.1
done
grep -q "job $id was held because burst-3 refused it" "$LAB/log/agent.log"
ok $? "the job prolog refused burst-3 (no admission record) and the agent saw the held job" "$LAB/log/slurmd-burst-3.log" "$LAB/log/slurmctld.log"
grep -q "refused on burst-3: node burst-3 has no admission record" "$LAB/log/slurmd-burst-3.log"
ok $? "... the node's log says why" "$LAB/log/slurmd-burst-3.log"
! grep -qx burst-3 "$LAB/pro.out" 2>/dev/null; ok $? "... and the job did not run there" "$LAB/pro.out"
ac=$(scontrol show job "$id" | grep -o 'AdminComment=.*' )
prio=$(squeue -h -j "$id" -o %Q 2>/dev/null)
[[ "$ac" == *"released after a refusal"* ]] && [ "${prio:-0}" != 0 ]
ok $? "the agent released the job (not the user's fault): $ac priority=$prio"
grep -q 'burst-3: admitted -> terminating: job prolog refused' "$LAB/log/agent.log"
ok $? "... and took the refused node out through the failure path"
scancel "$id"
fi

# --- the agent killed with SIGKILL in the middle of a burst ---
id=$(sbatch --parsable --cloud-contract=here -w burst-5 -o "$LAB/kill.out" --wrap 'echo $CLOUD_INSTANCE_ID' 2>"$LAB/err")
for i in $(seq 300); do grep -q 'burst-5: requested -> launching' "$LAB/log/agent.log" && break; sleep 0.05; done
grep -q 'burst-5: requested -> launching' "$LAB/log/agent.log" && kill -9 "$AGENT_PID"
ok $? "the agent is killed (SIGKILL) while burst-5 is launching"
sleep 1
lab_agent_start; ok $? "the agent starts again"
k5="$LAB/burst/nodes/burst-5"
lab_wait_job "$id" COMPLETED 90; ok $? "the job still runs" "$LAB/log/agent.log" "$LAB/log/slurmctld.log" "$k5/node.log.1" "$k5/node.log" "$LAB/log/slurmd-burst-5.log"
n=$(grep -c 'burst-5: requested -> launching' "$LAB/log/agent.log")
grep -qx "local-lab$$-burst-5-1" "$LAB/kill.out" && [ "$n" = 1 ]
ok $? "... on the first instance of burst-5: nothing was launched twice ($(cat "$LAB/kill.out" 2>/dev/null), $n launch intents)" "$LAB/kill.out" "$k5/node.log.1" "$k5/node.log"
[ "$(ip netns list | grep -c "^burst-lab$$-burst-5 ")" = 1 ]; ok $? "... one namespace for burst-5"

if [ -z "$only" ]; then
# --- suspend and resume while the agent is down: served once it starts ---
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
scontrol update nodename=burst-4 state=power_down_force
lab_wait_node burst-4 'idle~' 20; ok $? "with the agent down, Slurm powers burst-4 down (burst-suspend spools it)"
id=$(sbatch --parsable --cloud-contract=here -w burst-4 -o "$LAB/down.out" --wrap 'echo $CLOUD_INSTANCE_ID' 2>"$LAB/err")
for i in $(seq 100); do ls "$LAB/burst/spool/"*resume.json >/dev/null 2>&1 && break; sleep 0.1; done
ls "$LAB/burst/spool/"*resume.json >/dev/null 2>&1; ok $? "... and burst-resume spools the job's request"
lab_agent_start; ok $? "the agent starts"
lab_wait_job "$id" COMPLETED 90; ok $? "the spooled requests are served: the job completes" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -qx "local-lab$$-burst-4-2" "$LAB/down.out"; ok $? "... on a new instance of burst-4 ($(cat "$LAB/down.out" 2>/dev/null))" "$LAB/down.out"

# --- SIGHUP: burst.conf is read again; a broken one is refused, the running one kept ---
cp "$LAB/etc/burst.conf" "$LAB/etc/burst.conf.good"
echo "NodeSet=broken Nodes=burst-9 Partition=burst InstanceTypes=local.host Wieght=3" >>"$LAB/etc/burst.conf"
kill -HUP "$AGENT_PID"
for i in $(seq 50); do grep -q 'SIGHUP: .* has errors' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q "did you mean 'Weight'" "$LAB/log/agent.log" && grep -q 'SIGHUP: .* has errors (above): the running configuration is kept' "$LAB/log/agent.log" &&
	lab_pid_alive "$AGENT_PID"
ok $? "SIGHUP with a broken burst.conf: the error is logged, the agent keeps running on the old one"
sed 's/^NodeSet=local Nodes=burst-\[2-5\]/NodeSet=local Nodes=burst-[2-6]/' "$LAB/etc/burst.conf.good" >"$LAB/etc/burst.conf"
kill -HUP "$AGENT_PID"
for i in $(seq 50); do grep -q 'SIGHUP: .* read again: 6 nodes' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q 'SIGHUP: .* read again: 6 nodes in 2 node sets' "$LAB/log/agent.log" && lab_pid_alive "$AGENT_PID"
ok $? "SIGHUP with a fixed burst.conf: read again, the new node burst-6 is known"
fi
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

labdir=$LAB
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
! pgrep -f "slurmd -D -b -f $labdir/" >/dev/null; ok $? "no slurmd is left"
done_testing

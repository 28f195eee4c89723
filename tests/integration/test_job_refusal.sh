#!/usr/bin/env bash
# test_job_refusal.sh - a job refused by the job prolog for a reason of its
# own (its CLOUD_NODESETS, which the client sets, does not name the node's
# node set) is held; the healthy node it landed on is resumed, not failed
# and terminated (issue 13's security review: before, the agent failed the
# node and the job reran on a fresh instance, in a loop). No job_submit.lua
# here, as at a site that does not install it: the prolog and the agent are
# the last line.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 120 5 300 | grep -v "^PrologSlurmctld=\|^JobSubmitPlugins=")
lab_pre_ctld() {
	lab_burst_conf <<CONF
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
lab_agent_start; ok $? "the agent is up"

# the client's own SPANK plugin, after cloud_contract, claims node set "elsewhere"
mkdir -p "$LAB/forger"
cat >"$LAB/forger/forger.c" <<'C'
#include <slurm/spank.h>
SPANK_PLUGIN(forger, 1);
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_ALLOCATOR && ac > 0)
		spank_job_control_setenv(sp, "CLOUD_NODESETS", av[0], 1);
	return 0;
}
C
gcc -shared -fPIC -o "$LAB/forger/forger.so" "$LAB/forger/forger.c" 2>"$LAB/err"
ok $? "a forging SPANK plugin builds" "$LAB/err"
{ grep -v '^PlugStackConfig=' "$LAB/etc/slurm.conf"; echo "PlugStackConfig=$LAB/forger/plugstack.conf"; } >"$LAB/forger/slurm.conf"
{ cat "$LAB/etc/plugstack.conf"; echo "required $LAB/forger/forger.so elsewhere"; } >"$LAB/forger/plugstack.conf"

id=$(SLURM_CONF="$LAB/forger/slurm.conf" sbatch --parsable --cloud-contract=here -w burst-1 -o "$LAB/job.out" \
	--wrap hostname 2>"$LAB/err")
ok $? "a job claiming node set 'elsewhere' is submitted for burst-1" "$LAB/err"
for ((i = 0; i < 600; i++)); do
	grep -q "job $id refused by burst-1 for itself" "$LAB/log/agent.log" && break
	grep -q "burst-1: admitted -> terminating" "$LAB/log/agent.log" && break
	sleep 0.1
done
grep -q "job $id refused by burst-1 for itself (.*node set local of node burst-1 does not serve the job's contract (node sets elsewhere)).*: left held; burst-1 is resumed, not failed" "$LAB/log/agent.log"
ok $? "the prolog refused the job for its own claim, and the agent left the node alone" "$LAB/log/agent.log" "$LAB/log/slurmd-burst-1.log"
ac=$(scontrol show job "$id" | grep -o 'AdminComment=.*')
prio=$(squeue -h -j "$id" -o %Q 2>/dev/null)
[[ "$ac" == "AdminComment=burst: held: job refused on burst-1: "* ]] && [ "${prio:-1}" = 0 ]
ok $? "the job stays held, its admin comment says why ($ac, priority $prio)"
lab_wait_node burst-1 'idle|mixed|allocated' 30
ok $? "burst-1 is back to work, not drained ($(lab_node_state burst-1))" "$LAB/log/slurmctld.log"
! grep -q "burst-1: admitted -> terminating" "$LAB/log/agent.log"
ok $? "burst-1 was not failed nor terminated"
[ "$(ip netns list | grep -c "^burst-lab$$-burst-1 ")" = 1 ]; ok $? "... its instance still runs"
scancel "$id"
done_testing

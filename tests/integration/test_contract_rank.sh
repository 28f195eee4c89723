#!/usr/bin/env bash
# test_contract_rank.sh - contracts ranked per job (issue 11, item 5): one
# node set with two instance types, two jobs whose contracts prefer
# different ones, each job's node launched as its own preferred type. The
# contract reaches the agent by the job's id (its admin comment, set by
# job_submit.lua), the same on every Slurm release; the node set's own
# order serves a node resumed for no job (scontrol power up) and a job whose
# contract no longer resolves (said in the agent's log, naming job and node).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 90 10 300)
lab_pre_ctld() {
	# local.host (this machine, $0.05/h here) and local.small (1 vCPU,
	# 256M, $0.10/h): by price local.host comes first, which is also the
	# node set's own order; by fit (least excess) local.small does
	lab_burst_conf <<CONF
Price=local.host Provider=local Region=here OnDemand=0.05
InstanceType=local.small Provider=local node_vcpus_count=1 node_memory_size=256M accelerator_count=0
Price=local.small Provider=local Region=here OnDemand=0.10
Contract=cheap node_vcpus_count>=1 accelerator_count=0
Contract=snug node_vcpus_count>=1 accelerator_count=0 rank=fit
NodeSet=local Nodes=burst-[1-4] Partition=burst InstanceTypes=local.host,local.small
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
lab_agent_start; ok $? "the agent is up"

# burstctl resolve takes the submission's decision: the first of each
first() { "$burstctl" --config "$LAB/etc/burst.conf" --json resolve "$1" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["candidates"][0]["instance_type"])'; }
[ "$(first cheap)" = local.host ] && [ "$(first snug)" = local.small ]
ok $? "burstctl resolve: cheap ranks local.host first, snug local.small"

# launch: the agent's intent names the type and what chose it
launched() {   # NODE: the detail of its last launch intent
	sed -n "s/^.*$1: requested -> launching: \(.*\)$/\1/p" "$LAB/log/agent.log" | tail -1
}
wait_launch() {   # NODE SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -n "$(launched "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
itype() {   # NODE: its instance type, from burstctl nodes --json
	"$burstctl" --config "$LAB/etc/burst.conf" --json nodes "$1" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["instance_type"])'
}

a=$(sbatch --parsable --cloud-contract=cheap -w burst-1 -o "$LAB/a.out" --wrap 'env | grep ^CLOUD_INSTANCE_TYPE=' 2>"$LAB/err")
ok $? "job A: sbatch --cloud-contract=cheap" "$LAB/err"
b=$(sbatch --parsable --cloud-contract=snug -w burst-2 -o "$LAB/b.out" --wrap 'env | grep ^CLOUD_INSTANCE_TYPE=' 2>"$LAB/err")
ok $? "job B: sbatch --cloud-contract=snug" "$LAB/err"
scontrol show job "$b" | grep -q 'AdminComment=burst: contract=snug'
ok $? "job_submit.lua recorded B's contract in its admin comment"
lab_wait_job "$a" COMPLETED 120; ok $? "job A bursts, runs and completes" "$LAB/log/slurmctld.log"
lab_wait_job "$b" COMPLETED 120; ok $? "job B bursts, runs and completes" "$LAB/log/slurmctld.log"

[ "$(launched burst-1)" = "attempt 1 as local/local.host@here (job $a's contract cheap)" ]
ok $? "burst-1 (job A, cheap) launched as local.host by its job's contract: $(launched burst-1)"
[ "$(launched burst-2)" = "attempt 1 as local/local.small@here (job $b's contract snug)" ]
ok $? "burst-2 (job B, snug) launched as local.small by its job's contract: $(launched burst-2)"
[ "$(itype burst-1)" = local.host ] && [ "$(itype burst-2)" = local.small ]
ok $? "burstctl nodes --json: burst-1 is a local.host, burst-2 a local.small" "$LAB/nodes.json"
grep -qx CLOUD_INSTANCE_TYPE=local.host "$LAB/a.out" && grep -qx CLOUD_INSTANCE_TYPE=local.small "$LAB/b.out"
ok $? "each job ran on its own preferred type (CLOUD_INSTANCE_TYPE)" "$LAB/a.out" "$LAB/b.out"

# an admin's power up: no job, the node set's own order
scontrol update NodeName=burst-3 State=POWER_UP 2>"$LAB/err"
ok $? "scontrol power up burst-3" "$LAB/err"
wait_launch burst-3 60
[ "$(launched burst-3)" = "attempt 1 as local/local.host@here (node set order: resumed for no job)" ]
ok $? "burst-3, resumed for no job, launched in the node set's order: $(launched burst-3)"

# a job whose contract no longer resolves: the node set's order, logged
d=$(sbatch --parsable -H --cloud-contract=snug -w burst-4 -o "$LAB/d.out" --wrap 'env | grep ^CLOUD_INSTANCE_TYPE=' 2>"$LAB/err")
ok $? "job D: sbatch -H --cloud-contract=snug" "$LAB/err"
scontrol update JobId="$d" AdminComment="burst: contract=retired" 2>"$LAB/err" && scontrol release "$d" 2>>"$LAB/err"
ok $? "job D's recorded contract becomes one burst.conf does not have (retired), and D is released" "$LAB/err"
wait_launch burst-4 60
grep -q "burst-4: job $d's contract 'retired' no longer resolves: no contract named 'retired'.*: launched in node set local's own order" "$LAB/log/agent.log"
ok $? "the agent says which job's contract for which node no longer resolves"
[ "$(launched burst-4)" = "attempt 1 as local/local.host@here (node set order: job $d's contract 'retired' does not resolve)" ]
ok $? "burst-4 launched in the node set's order (local.host, not snug's local.small): $(launched burst-4)"
lab_wait_job "$d" COMPLETED 120; ok $? "job D runs and completes" "$LAB/log/slurmctld.log"

lab_down
done_testing

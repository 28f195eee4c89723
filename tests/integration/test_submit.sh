#!/usr/bin/env bash
# test_submit.sh - --cloud-contract on a real Slurm 22.05: the SPANK plugin
# rejects bad contracts in sbatch before anything is submitted, and
# job_submit.lua routes good ones to the node sets' features and partition,
# and refuses CLOUD_* values that are not the plugin's whole decision.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
plugin="$build/plugins/spank/.libs/spank_cloud_contract.so"
[ -e "$plugin" ] || bail "no plugin at $plugin (build first)"

# the node and partition lines come from 'burstctl slurm-conf' (so slurmctld
# itself checks its output); the default partition is set here
SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="JobSubmitPlugins=lua"
lab_pre_ctld() {
	# plugstack.conf takes no blanks in a path: the plugin and its catalog
	# as copies in the lab
	plugin=$(lab_plugin) || return 1
	cp -r "$src/tests/fixtures/catalog-small" "$LAB/catalog-small" || return 1
	cp "$src/contrib/job_submit.lua" "$LAB/etc/job_submit.lua"
	cat >"$LAB/etc/burst.conf" <<CONF
Provider=alpha Type=local Catalog=alpha
Contract=gpu4-ampere accelerator_count=4 accelerator_architecture=ampere
Contract=gpu-any     accelerator_count>=1
Contract=big-cpu     node_vcpus_count>=64 accelerator_count=0
NodeSet=gpu4 Nodes=burst-gpu4-[1-2] Partition=burst-gpu Constraint="accelerator_count=4"
NodeSet=gpu1 Nodes=burst-gpu1-[1-2] Partition=burst-gpu Constraint="accelerator_count=1"
NodeSet=cpu  Nodes=burst-cpu-[1-2]  Partition=burst-cpu Constraint="accelerator_count=0" Features=fast
CONF
	"$build/burstctl/burstctl" --config "$LAB/etc/burst.conf" \
		--catalog-dir "$src/tests/fixtures/catalog-small" slurm-conf --nodes-only \
		| sed 's/^\(PartitionName=burst-cpu .*\)$/\1 Default=YES/' >>"$LAB/etc/slurm.conf" || return 1
	echo "required $plugin conf=$LAB/etc/burst.conf catalog_dir=$LAB/catalog-small" \
		>"$LAB/etc/plugstack.conf"
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
sinfo -h -o '%P %D %f' >"$LAB/sinfo" 2>&1
grep -q '^burst-gpu 4 burst,gpu4,gpu4-ampere,gpu-any$' "$LAB/sinfo" ||
	grep -q '^burst-gpu 2 burst,gpu4,gpu4-ampere,gpu-any$' "$LAB/sinfo"
ok $? "slurmctld accepts the node sets from burstctl slurm-conf, with their features" "$LAB/sinfo"
printf '#!/bin/sh\nsleep 1\n' >"$LAB/job.sh"
out="$LAB/out" err="$LAB/err"
njobs() { squeue -h -t all -o %i 2>/dev/null | wc -l; }
# fails WHAT SAYING REGEX SBATCH-ARGS...: sbatch fails (WHAT) with an error
# matching REGEX (SAYING)
fails() {
	local what=$1 saying=$2 re=$3
	shift 3
	sbatch "$@" >"$out" 2>"$err"
	ok $((! $?)) "$what" "$err"
	grep -q -- "$re" "$err"
	ok $? "... $saying" "$err"
}

# --- bad contracts: sbatch fails, nothing submitted ---
before=$(njobs)
sbatch --cloud-contract=gpu4-amper "$LAB/job.sh" >"$out" 2>"$err"
ok $((! $?)) "an unknown contract name fails sbatch" "$err"
grep -q "no contract named 'gpu4-amper'; did you mean 'gpu4-ampere'?" "$err"
ok $? "... with the nearest name" "$err"
sbatch --cloud-contract='accelerator_count>=4 accelerator_architecture=hopper node_vcpus_count<8' \
	"$LAB/job.sh" >"$out" 2>"$err"
ok $((! $?)) "an unsatisfiable inline contract fails sbatch" "$err"
grep -q "no burst node set can satisfy the contract" "$err"
ok $? "... saying no node set satisfies it" "$err"
grep -q "alpha/gpu.a10g.4@r1 (node set gpu4) fails accelerator_architecture=hopper: ampere is not hopper; node_vcpus_count<8: has 48" "$err"
ok $? "... naming the assumption that excluded the nearest candidate" "$err"
sbatch --cloud-contract='acelerator_count>=1' "$LAB/job.sh" >"$out" 2>"$err"
ok $((! $?)) "a misspelled key fails sbatch" "$err"
grep -q "did you mean 'accelerator_count'" "$err"
ok $? "... with the nearest key" "$err"
[ "$(njobs)" -eq "$before" ]
ok $? "nothing was submitted"

# --- good contracts are routed ---
sbatch --parsable --cloud-contract=gpu4-ampere "$LAB/job.sh" >"$out" 2>"$err"
ok $? "a named contract is accepted" "$err"
id=$(cat "$out")
scontrol show job "$id" >"$LAB/job" 2>&1
grep -q "Partition=burst-gpu " "$LAB/job"; ok $? "... routed to the node set's partition" "$LAB/job"
grep -q "Features=gpu4 " "$LAB/job"; ok $? "... and constrained to its node set" "$LAB/job"
grep -q "AdminComment=burst: contract=gpu4-ampere" "$LAB/job"; ok $? "... with the contract recorded" "$LAB/job"

sbatch --parsable --cloud-contract='accelerator_count>=1,accelerator_architecture>=ampere' "$LAB/job.sh" >"$out" 2>"$err"
ok $? "an inline contract is accepted" "$err"
scontrol show job "$(cat "$out")" >"$LAB/job" 2>&1
grep -q "Features=gpu4 " "$LAB/job"
ok $? "... routed to the one node set with Ampere or newer (gpu1 has only a T4)" "$LAB/job"
sbatch --parsable --cloud-contract='accelerator_count>=1' "$LAB/job.sh" >"$out" 2>"$err"
scontrol show job "$(cat "$out")" >"$LAB/job" 2>&1
grep -q "Features=gpu1|gpu4 " "$LAB/job"
ok $? "an inline contract two node sets serve: both, cheapest first" "$LAB/job"

sbatch --parsable --cloud-contract=big-cpu --constraint=fast "$LAB/job.sh" >"$out" 2>"$err"
ok $? "a contract with the user's own --constraint" "$err"
scontrol show job "$(cat "$out")" >"$LAB/job" 2>&1
grep -q "Features=fast&cpu " "$LAB/job"; ok $? "... ANDs the user's constraint" "$LAB/job"

sbatch --parsable --cloud-contract=gpu4-ampere -p burst-cpu "$LAB/job.sh" >"$out" 2>"$err"
ok $((! $?)) "a partition that cannot serve the contract is refused" "$err"
grep -q "partition burst-cpu has no burst node set for contract gpu4-ampere" "$err"
ok $? "... saying where it can run" "$err"

printf '#!/bin/sh\n#SBATCH --cloud-contract=gpu-any\nsleep 1\n' >"$LAB/job2.sh"
sbatch --parsable "$LAB/job2.sh" >"$out" 2>"$err"
ok $? "#SBATCH --cloud-contract works" "$err"
scontrol show job "$(cat "$out")" >"$LAB/job" 2>&1
grep -q "AdminComment=burst: contract=gpu-any" "$LAB/job"; ok $? "... and is routed" "$LAB/job"

sbatch --parsable "$LAB/job.sh" >"$out" 2>"$err"
ok $? "a job without a contract is untouched" "$err"
scontrol show job "$(cat "$out")" >"$LAB/job" 2>&1
grep -q "Partition=burst-cpu " "$LAB/job" && ! grep -q "AdminComment=burst" "$LAB/job"
ok $? "... default partition, no burst comment" "$LAB/job"

sbatch --help 2>&1 | grep -q -- '--cloud-contract=NAME|EXPR'
ok $? "sbatch --help lists --cloud-contract"

# srun inside a job (SLURM_JOB_ID set) makes a step: the plugin decides
# nothing again and reads neither burst.conf nor the catalog (a burst node
# need not have them); a new job from srun is still checked
echo "required $plugin conf=$LAB/etc/burst.conf catalog_dir=$LAB/no-catalog-here" >"$LAB/etc/plugstack.conf"
srun --cloud-contract=gpu4-ampere true >"$out" 2>"$err"
ok $((! $?)) "srun --cloud-contract making a job, with the catalog missing, fails" "$err"
grep -q "cannot open catalog directory $LAB/no-catalog-here" "$err"
ok $? "... in the plugin, naming the catalog directory" "$err"
SLURM_JOB_ID=987654 srun --cloud-contract=gpu4-ampere true >"$out" 2>"$err"
! grep -q "cloud_contract" "$err" && grep -qi "job" "$err"
ok $? "srun in a job (a step) does not decide the contract again: no plugin error, only srun's own about job 987654" "$err"

# without conf=, burst.conf is the one beside slurm.conf ($SLURM_CONF)
echo "required $plugin catalog_dir=$LAB/catalog-small" >"$LAB/etc/plugstack.conf"
sbatch --cloud-contract=gpu4-amper "$LAB/job.sh" >"$out" 2>"$err"
grep -q "no contract named 'gpu4-amper'; did you mean 'gpu4-ampere'?" "$err"
ok $? "without conf=, the plugin reads the burst.conf beside \$SLURM_CONF" "$err"
sbatch --parsable --cloud-contract=gpu4-ampere "$LAB/job.sh" >"$out" 2>"$err"
ok $? "... and a good contract is accepted" "$err"
mv "$LAB/etc/burst.conf" "$LAB/etc/burst.conf.away"
fails "... and with no burst.conf there, sbatch fails" "naming the file it looked for" \
	"cannot use $LAB/etc/burst.conf" --cloud-contract=gpu4-ampere "$LAB/job.sh"
sbatch --parsable "$LAB/job.sh" >"$out" 2>"$err"
ok $? "... while a job without --cloud-contract is still submitted" "$err"
mkdir "$LAB/etc/burst.conf"
sbatch --cloud-contract=gpu4-ampere "$LAB/job.sh" >"$out" 2>"$err"
ok $((! $?)) "a burst.conf that cannot be read (a directory) fails sbatch --cloud-contract" "$err"
grep -q "cannot use $LAB/etc/burst.conf.*cannot read: Is a directory" "$err" ||
	{ grep -q "cannot use $LAB/etc/burst.conf" "$err" && grep -q "cannot read: Is a directory" "$err"; }
ok $? "... with a clear error, not a crash" "$err"
rmdir "$LAB/etc/burst.conf"
mv "$LAB/etc/burst.conf.away" "$LAB/etc/burst.conf"

# the decision is a module the plugin loads beside itself only when
# --cloud-contract is given: a command without the option loads nothing of it
echo "required $plugin conf=$LAB/etc/burst.conf catalog_dir=$LAB/catalog-small" >"$LAB/etc/plugstack.conf"
LD_DEBUG=files sbatch --help >"$out" 2>"$LAB/lddebug"
grep -q "file=$LAB/lib/spank_cloud_contract.so .*dynamically loaded" "$LAB/lddebug" &&
	! grep -q "cloud_contract_decide" "$LAB/lddebug"
ok $? "sbatch --help loads the plugin and not its decision module" "$LAB/lddebug"
LD_DEBUG=files sbatch --parsable --cloud-contract=gpu-any "$LAB/job.sh" >"$out" 2>"$LAB/lddebug"
ok $? "... sbatch --cloud-contract=gpu-any is accepted" "$LAB/lddebug"
grep -q "file=$LAB/lib/cloud_contract_decide.so .*dynamically loaded" "$LAB/lddebug"
ok $? "... and loads the module from the plugin's own directory" "$LAB/lddebug"
mkdir -p "$LAB/lone" && cp "$plugin" "$LAB/lone/"
echo "required $LAB/lone/spank_cloud_contract.so conf=$LAB/etc/burst.conf catalog_dir=$LAB/catalog-small" \
	>"$LAB/etc/plugstack.conf"
before=$(njobs)
fails "a plugin without its module beside it fails sbatch --cloud-contract" "naming the module it looked for" \
	"cannot load $LAB/lone/cloud_contract_decide.so (.*), so --cloud-contract cannot be checked; tell your administrator" \
	--cloud-contract=gpu-any "$LAB/job.sh"
[ "$(njobs)" = "$before" ]; ok $? "... and nothing was submitted"
sbatch --parsable "$LAB/job.sh" >"$out" 2>"$err"
ok $? "... while a job without --cloud-contract is submitted" "$err"
cp "$LAB/lib/spank_cloud_contract.so" "$LAB/lone/cloud_contract_decide.so"
fails "a module that is not the decision module fails sbatch --cloud-contract" "saying it is not from the same build" \
	"$LAB/lone/cloud_contract_decide.so has no cloud_contract_decide_v1, so --cloud-contract cannot be checked" \
	--cloud-contract=gpu-any "$LAB/job.sh"

# a plugstack argument the plugin does not know is an error
echo "required $plugin conf=$LAB/etc/burst.conf frobnicate=1" >"$LAB/etc/plugstack.conf"
sbatch --cloud-contract=gpu-any "$LAB/job.sh" >"$out" 2>"$err"
ok $((! $?)) "an unknown plugstack.conf argument fails" "$err"
grep -q "unknown plugstack.conf argument 'frobnicate=1'" "$err"
ok $? "... naming it" "$err"

# a client sets the job-control environment as it likes (its own SPANK
# plugin here, through a slurm.conf and plugstack.conf of its own; the REST
# API likewise): job_submit.lua takes no CLOUD_* value that is not one whole
# decision of the cloud_contract plugin
mkdir -p "$LAB/forger"
cat >"$LAB/forger/forger.c" <<'C'
#include <slurm/spank.h>
SPANK_PLUGIN(forger, 1);
/* after cloud_contract: CLOUD_NODESETS=av[0] in the job-control environment */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_ALLOCATOR && ac > 0)
		spank_job_control_setenv(sp, "CLOUD_NODESETS", av[0], 1);
	return 0;
}
C
gcc -shared -fPIC -o "$LAB/forger/forger.so" "$LAB/forger/forger.c" 2>"$err"
ok $? "a forging SPANK plugin builds" "$err"
{ grep -v '^PlugStackConfig=' "$LAB/etc/slurm.conf"; echo "PlugStackConfig=$LAB/forger/plugstack.conf"; } >"$LAB/forger/slurm.conf"
forge() {   # NODESETS SBATCH-ARGS...: sbatch through the forger's plugstack
	{
		echo "required $plugin conf=$LAB/etc/burst.conf catalog_dir=$LAB/catalog-small"
		echo "required $LAB/forger/forger.so $1"
	} >"$LAB/forger/plugstack.conf"
	shift
	SLURM_CONF="$LAB/forger/slurm.conf" sbatch "$@" "$LAB/job.sh" >"$out" 2>"$err"
}
before=$(njobs)
forge gpu4 --cloud-contract=big-cpu
ok $((! $?)) "a job routed to node set cpu that claims node set gpu4 is refused at submit" "$err"
grep -q "the job's contract decision is inconsistent (CLOUD_NODESETS=gpu4, CLOUD_FEATURES=cpu)" "$err"
ok $? "... saying why" "$err"
forge gpu4
ok $((! $?)) "a job without a contract that claims node set gpu4 is refused at submit" "$err"
grep -q "the job carries CLOUD_NODESETS but no --cloud-contract decision" "$err"
ok $? "... saying why" "$err"
[ "$(njobs)" = "$before" ]; ok $? "... and neither was submitted"
forge cpu --cloud-contract=big-cpu
ok $? "the plugin's own decision, unchanged, is accepted" "$err"

# ... nor change a contract job's routing afterwards
echo "required $plugin conf=$LAB/etc/burst.conf catalog_dir=$LAB/catalog-small" >"$LAB/etc/plugstack.conf"
id=$(sbatch --parsable -H --cloud-contract=big-cpu "$LAB/job.sh" 2>"$err")
ok $? "a held job with --cloud-contract=big-cpu" "$err"
scontrol update jobid="$id" Features=gpu4 >"$out" 2>&1
ok $((! $?)) "its features cannot be changed to another node set's (scontrol update Features=gpu4)" "$out"
grep -q "job $id was routed by its --cloud-contract (node sets cpu); its features cannot change" "$LAB/log/slurmctld.log"
ok $? "... and slurmctld's log says why" "$LAB/log/slurmctld.log"
scontrol show job "$id" | grep -q "Features=cpu "; ok $? "... and they are unchanged"
scontrol update jobid="$id" TimeLimit=5 >"$out" 2>&1; ok $? "other changes are allowed" "$out"
id2=$(sbatch --parsable -H "$LAB/job.sh" 2>"$err")
scontrol update jobid="$id2" Features=fast >"$out" 2>&1; ok $? "a job without a contract may change its features" "$out"
scancel "$id" "$id2"

lab_down
done_testing

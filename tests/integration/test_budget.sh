#!/usr/bin/env bash
# test_budget.sh - a Budget= line stops a launch that would cross it: a
# small budget lets the first job burst, and the second job's launch (its
# node time so far plus its own time limit at the price) would cross it, so
# its node is not launched, the job waits held with the budget named in its
# comment (squeue %k), and the event log names the budget. check-config
# refuses a bad Budget= line with its file:line. Once the budget is raised
# (SIGHUP), the agent releases the job (its note off its comment) and it runs.
# A job's nodes are held against an account's budget together: none of them
# is launched when all of them would cross it.
#
# Budgets by account cannot be escaped (issue 28, N1): with Slurm's
# association enforcement (slurmdbd, AccountingStorageEnforce=associations)
# a job of an account that is none of its user's is refused by sbatch;
# without it (slurmctld restarted so), check-config and the agent refuse a
# budget by account, unless BudgetAccountTrust=unenforced accepts the risk:
# then they warn, and the agent holds a job whose account is not one of its
# user's associations in slurmdbd, launching nothing for it, while a job of
# a real association bursts.
# burst-matrix: host-only (the lab's slurmdbd runs on MariaDB, LAB_DBD=1, which the Debian 13 root does not hold; the agent's holding and releasing of jobs is test_job_refusal's, run on both)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"

# 3.60 USD an hour; a job of --time=1 is 0.06 USD ahead; the first is
# launched (0 + 0.06 <= 0.062); the second, after the first ran 3 s or
# more (0.003 USD or more), would cross it
SLURM_CONF_NODES="# nodes: below"
LAB_PROVIDER_EXTRA="Regions=lab"
SLURM_CONF_EXTRA="$(lab_burst_slurm_conf 60 10 30)
AccountingStorageEnforce=associations"
LAB_DBD=1   # accounts and associations: slurmdbd on MariaDB (lab_dbd)
lab_pre_ctld() {
	lab_burst_conf <<CONF
RejectCooldown=2
Price=local.host Provider=local Region=lab OnDemand=3.60
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-4] Partition=burst InstanceTypes=local.host
Budget=small Amount=0.062 Period=day NodeSet=local
Budget=pair Amount=0.1 Period=month Account=pair
CONF
}
lab_up || bail "the lab did not start"
trap 'lab_down' EXIT
trap 'lab_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
conf="$LAB/etc/burst.conf"
bline=$(grep -n '^Budget=small' "$conf" | cut -d: -f1)
pline=$(grep -n '^Budget=pair' "$conf" | cut -d: -f1)

# the account pair, root a user of it (slurmctld hears of it from slurmdbd)
timeout 20 sacctmgr -i add account pair cluster="lab$$" >"$LAB/log/accounts.log" 2>&1 &&
	timeout 20 sacctmgr -i add user root account=pair cluster="lab$$" >>"$LAB/log/accounts.log" 2>&1
ok $? "account pair, root a user of it, in slurmdbd" "$LAB/log/accounts.log"
for i in $(seq 100); do
	scontrol show assoc_mgr accounts=pair users=root flags=assoc 2>/dev/null | grep -q 'UserName=root' && break
	sleep 0.1
done
scontrol show assoc_mgr accounts=pair users=root flags=assoc >"$LAB/assoc" 2>&1
grep -q 'UserName=root' "$LAB/assoc"; ok $? "slurmctld has root's association with account pair" "$LAB/assoc"

# check-config: the budget is fine; a bad one is refused, with file:line
"$burstctl" --config "$conf" check-config >"$LAB/check.out" 2>&1 && ! grep -qi warning "$LAB/check.out"
ok $? "check-config accepts the Budget= lines, Account= too: Slurm enforces associations" "$LAB/check.out"
# the dodge: a job of an account that is not one of its user's
sbatch --parsable -A whatever --time=1 --cloud-contract=here -w burst-1 --wrap 'echo ran' >"$LAB/dodge.out" 2>&1; rc=$?
[ $rc != 0 ] && grep -qi 'invalid account' "$LAB/dodge.out"
ok $? "with associations enforced, sbatch --account=whatever is refused by slurmctld (exit $rc)" "$LAB/dodge.out"
sed 's/^Budget=small .*/Budget=small Amount=lots Period=fortnite NodeSet=locl/' "$conf" >"$LAB/bad.conf"
"$burstctl" --config "$LAB/bad.conf" check-config >"$LAB/check.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "^$LAB/bad.conf:$bline: Budget small: Amount=lots: give US dollars per period" "$LAB/check.out" &&
	grep -q "^$LAB/bad.conf:$bline: Budget small: Period=fortnite: give day, week, month or year" "$LAB/check.out" &&
	grep -q "^$LAB/bad.conf:$bline: Budget small: NodeSet=locl names no NodeSet= line; did you mean 'local'?" "$LAB/check.out"
ok $? "check-config refuses a bad Budget= line, each error at its file:line" "$LAB/check.out"

lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"
id1=$(sbatch --parsable --time=1 --cloud-contract=here -w burst-1 -o "$LAB/job1.out" --wrap 'sleep 3' 2>"$LAB/err")
ok $? "sbatch job 1" "$LAB/err"
lab_wait_job "$id1" COMPLETED 90; ok $? "job 1 bursts within the budget and completes" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"

# the second job needs a launch of its own
id2=$(sbatch --parsable --time=1 --cloud-contract=here -w burst-2 -o "$LAB/job2.out" --wrap 'echo ran' 2>"$LAB/err")
ok $? "sbatch job 2" "$LAB/err"
# (held as soon as it is requeued; its reason reads Cleaning until
# slurmctld has cleaned up after the node it was given, then JobHeldAdmin)
want="PENDING|JobHeldAdmin|burst: budget=small would be crossed: held until it allows the launch"
for i in $(seq 300); do
	st=$(squeue -h -j "$id2" -o '%T|%r|%k' 2>/dev/null)
	[ "$st" = "$want" ] && break
	sleep 0.1
done
[ "$st" = "$want" ]
ok $? "job 2 waits held, the budget named in squeue ($st)" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
! grep -q 'burst-2: requested -> launching' "$LAB/log/agent.log" &&
	[ "$(sqlite3 "$LAB/burst/agent.db" "SELECT count(*) FROM instances WHERE node='burst-2'")" = 0 ]
ok $? "burst-2 was not launched" "$LAB/log/agent.log"
"$burstctl" --config "$conf" events --node burst-2 >"$LAB/events" 2>&1
grep -q "budget .*budget small (0.062 USD a day, node set local, $conf:$bline) would be crossed: 0.0[0-9]* USD spent since .*this launch of 1 local.host at 3.6000 USD/h for 0.02 h (the job's time limit) is 0.0600 USD more" "$LAB/events"
ok $? "burstctl events names the budget, its spending and the launch's estimate" "$LAB/events"
spent=$(sed -n 's/.*would be crossed: \([0-9.]*\) USD spent.*/\1/p' "$LAB/events" | head -1)
python3 -c 'import sys; s=float(sys.argv[1]); sys.exit(not (s >= 0.003 and s + 0.06 > 0.062))' "${spent:-0}"
ok $? "the spending it says ($spent USD) is at least job 1's 3 s, and with 0.06 more crosses 0.062"

lab_wait_node burst-2 'idle~' 30; ok $? "burst-2 is powered down again after RejectCooldown" "$LAB/log/agent.log"
# the agent looks every 5 s whether a held job's budget allows it now: not yet
sleep 6
[ "$(squeue -h -j "$id2" -o '%T|%Q' 2>/dev/null)" = "PENDING|0" ] && ! grep -q "job $id2 released" "$LAB/log/agent.log"
ok $? "while the budget would still be crossed, job 2 stays held" "$LAB/log/agent.log"

# more budget: SIGHUP reads it; the agent releases the job, which bursts
sed -i 's/^Budget=small Amount=0.062/Budget=small Amount=5/' "$conf"
kill -HUP "$AGENT_PID"
# within 45 s: a requeued job has a BeginTime two minutes on, which the
# release clears (the job never ran)
lab_wait_job "$id2" COMPLETED 45; ok $? "with the budget raised, the agent releases job 2 and it bursts at once" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -q "job $id2 released: budget small allows its launch now" "$LAB/log/agent.log"
ok $? "the agent says why it released it" "$LAB/log/agent.log"
c=$(scontrol show job "$id2" | sed -n 's/^ *Comment=//p' | sed 's/ *$//')
[ "$c" = "" ] || [ "$c" = "(null)" ]; ok $? "its budget note is off its comment ('$c')"

# a job's nodes together: two nodes of account pair (0.12 USD ahead) would
# cross its 0.1 USD, one would not; neither is launched
id3=$(sbatch --parsable -N 2 -A pair --time=1 --cloud-contract=here -w 'burst-[3-4]' -o "$LAB/job3.out" --wrap 'echo ran' 2>"$LAB/err")
ok $? "sbatch job 3 (two nodes, account pair)" "$LAB/err"
want="PENDING|JobHeldAdmin|burst: budget=pair would be crossed: held until it allows the launch"
for i in $(seq 300); do
	st=$(squeue -h -j "$id3" -o '%T|%r|%k' 2>/dev/null)
	[ "$st" = "$want" ] && break
	sleep 0.1
done
[ "$st" = "$want" ]; ok $? "job 3 waits held for budget pair ($st)" "$LAB/log/agent.log"
! grep -Eq 'burst-[34]: requested -> launching' "$LAB/log/agent.log" &&
	grep -q "burst-3: not launched: budget pair .*this launch of 2 local.host at 3.6000 USD/h for 0.02 h (the job's time limit) is 0.1200 USD more; its job is held" "$LAB/log/agent.log" &&
	grep -q "burst-4: not launched: budget pair" "$LAB/log/agent.log"
ok $? "neither of its nodes is launched (the two together, 0.12 USD, would cross it)" "$LAB/log/agent.log"

# ---- without association enforcement (slurmctld restarted without it) ----
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
kill "$(cat "$LAB/pid/slurmctld.pid")"
for i in $(seq 100); do scontrol ping 2>/dev/null | grep -q 'is UP' || break; sleep 0.1; done
sed -i '/^AccountingStorageEnforce=/d' "$LAB/etc/slurm.conf"
lab_ctld; ok $? "slurmctld restarted without AccountingStorageEnforce" "$LAB/log/slurmctld.log"
"$burstctl" --config "$conf" check-config >"$LAB/check.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "^$conf:$pline: Budget pair: Account=pair counts the jobs of a Slurm account, which the user chooses (sbatch --account): $LAB/etc/slurm.conf has AccountingStorageEnforce=none, AccountingStorageType=accounting_storage/slurmdbd, so slurmctld does not hold a job's account to its user's associations" "$LAB/check.out" &&
	grep -q "accept the risk with BudgetAccountTrust=unenforced" "$LAB/check.out"
ok $? "check-config refuses the budget by account (exit $rc), naming it, slurm.conf's setting and the way out" "$LAB/check.out"
n0=$(grep -c 'burst-agent: info: started: ' "$LAB/log/agent.log")
SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" BURST_NODE="$build/burst-node/burst-node" \
	timeout 60 "$agent" -c "$conf" -L "$LAB/log/agent2.log"; rc=$?
[ $rc != 0 ] && [ "$(grep -c 'burst-agent: info: started: ' "$LAB/log/agent2.log")" = 0 ] &&
	grep -q "$conf:$pline: Budget pair: Account=pair counts the jobs of a Slurm account, which the user chooses (sbatch --account): slurmctld's running configuration (scontrol show config) has AccountingStorageEnforce=none" "$LAB/log/agent2.log" &&
	grep -q "refused: budgets by account that a user can escape" "$LAB/log/agent2.log"
ok $? "the agent refuses to start with it (exit $rc), from slurmctld's running configuration" "$LAB/log/agent2.log"

# the risk accepted: a loud warning, and the agent's own check of accounts
echo "BudgetAccountTrust=unenforced" >>"$conf"
"$burstctl" --config "$conf" check-config >"$LAB/check.out" 2>&1; rc=$?
[ $rc = 0 ] && grep -q "^burstctl: warning: $conf:$pline: Budget pair: Account=pair: WARNING: Slurm does not enforce associations" "$LAB/check.out"
ok $? "with BudgetAccountTrust=unenforced check-config accepts it (exit $rc), warning loudly" "$LAB/check.out"
lab_agent_start; ok $? "the agent starts" "$LAB/log/agent.log"
grep -q "burst-agent: warning: $conf:$pline: Budget pair: Account=pair: WARNING: Slurm does not enforce associations" "$LAB/log/agent.log"
ok $? "... warning in its log" "$LAB/log/agent.log"
# (on nodes that are powered down: burst-1 and burst-2 may still be up, idle,
# and a job Slurm places on a node that is up needs no launch)
# burst-3 was set DOWN for the held job 3 and is powered down after its
# cooldown: a job submitted before that waits for a scheduling pass (up to
# sched_interval) once it is, so the job is submitted when it is idle~
for i in $(seq 300); do
	[ "$(sinfo -h -n burst-3 -o %T)" = "idle~" ] && break
	sleep 0.1
done
[ "$(sinfo -h -n burst-3 -o %T)" = "idle~" ]; ok $? "burst-3 is powered down, idle (its cooldown over)" "$LAB/log/agent.log"
id4=$(sbatch --parsable -A whatever --time=1 --cloud-contract=here -w burst-3 -o "$LAB/job4.out" --wrap 'echo ran' 2>"$LAB/err")
ok $? "sbatch --account=whatever: slurmctld takes it now (job $id4)" "$LAB/err"
want="PENDING|JobHeldAdmin|burst: held: account whatever is not an association of the job's user (budgets count accounts)"
for i in $(seq 300); do
	st=$(squeue -h -j "$id4" -o '%T|%r|%k' 2>/dev/null)
	[ "$st" = "$want" ] && break
	sleep 0.1
done
[ "$st" = "$want" ]; ok $? "the agent holds it, the account named in its comment ($st)" "$LAB/log/agent.log"
grep -q "burst-3: not launched: job $id4's account whatever is not an association of its user root in slurmdbd" "$LAB/log/agent.log" &&
	[ "$(sqlite3 "$LAB/burst/agent.db" "SELECT count(*) FROM instances WHERE job=$id4")" = 0 ] &&
	"$burstctl" --config "$conf" events --node burst-3 | grep -q "budget .*job $id4's account whatever is not an association of its user root"
ok $? "nothing is launched for it, and the event log says why" "$LAB/log/agent.log"
id5=$(sbatch --parsable -A pair --time=1 --cloud-contract=here -w burst-4 -o "$LAB/job5.out" --wrap 'echo ran' 2>"$LAB/err")
lab_wait_job "$id5" COMPLETED 90
ok $? "a job of a real association (account pair) bursts and completes" "$LAB/log/agent.log" "$LAB/err"
# a reload cannot take the acceptance back while the budget stays
sed -i '/^BudgetAccountTrust=/d' "$conf"
kill -HUP "$AGENT_PID"
for i in $(seq 100); do
	grep -q "refused: budgets by account that a user can escape" "$LAB/log/agent.log" && break
	sleep 0.1
done
grep -q "$conf:$pline: Budget pair: Account=pair counts the jobs of a Slurm account" "$LAB/log/agent.log" &&
	grep -q "refused: budgets by account that a user can escape" "$LAB/log/agent.log" && kill -0 "$AGENT_PID"
ok $? "a reload without BudgetAccountTrust=unenforced is refused; the agent goes on" "$LAB/log/agent.log"

trap - EXIT INT TERM
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

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
# burst-matrix: host-only (the agent's budgets: holding and releasing a job as test_job_refusal does, run on both)
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
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 10 30)
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

# check-config: the budget is fine; a bad one is refused, with file:line
"$burstctl" --config "$conf" check-config >"$LAB/check.out" 2>&1
ok $? "check-config accepts the Budget= line" "$LAB/check.out"
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

trap - EXIT INT TERM
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

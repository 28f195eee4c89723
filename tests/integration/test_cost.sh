#!/usr/bin/env bash
# test_cost.sh - cost per job: two jobs burst (each on a node of its own),
# the agent records each instance (type, region, price and its source, launch,
# join, end) and the nodes each job held and when; `burstctl cost --by job`
# gives each job its node time at the Price= line's price, checked against a
# hand computation from those records; a running job's cost so far is kept
# in its admin comment (the contract note job_submit.lua put there stays),
# and its final cost goes to the job's accounting record once it ended
# (slurmctld takes no update of an ended job): the lab keeps accounting in a
# slurmdbd of its own on MariaDB, and sacct shows the final note, the figure
# burstctl gives, also for a job that ended before any running note; an
# instance adopted by a restarted agent keeps its record; idle and boot time
# are shown apart and everything adds up to the instances' lives.
# burst-matrix: host-only (the final cost note goes through slurmdbd, and the Debian 13 root has no slurmdbd (nor MariaDB): the agent's slurmdbd calls run on 22.05 only)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"

PRICE=3.60   # USD an hour: a thousandth of a dollar a second
SLURM_CONF_NODES="# nodes: below"
LAB_PROVIDER_EXTRA="Regions=lab"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 10 8)
LAB_DBD=1   # job accounting: slurmdbd on MariaDB (lab_dbd)
lab_pre_ctld() {
	lab_burst_conf <<CONF
Price=local.host Provider=local Region=lab OnDemand=$PRICE
CostNoteInterval=3
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
trap 'lab_down' EXIT
trap 'lab_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
price_line=$(grep -n '^Price=' "$LAB/etc/burst.conf" | cut -d: -f1)
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"
db="$LAB/burst/agent.db"
cost() { "$burstctl" --config "$LAB/etc/burst.conf" cost "$@"; }
admin_comment() { scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=//p' | sed 's/ *$//'; }

# bad arguments: clear errors, exit 2
cost --by jobs >/dev/null 2>"$LAB/err"; rc=$?
[ $rc = 2 ] && grep -q -- "--by jobs: give job, user, account, partition, nodeset or provider (did you mean 'job'?)" "$LAB/err"
ok $? "--by jobs: refused, with the right word suggested" "$LAB/err"
cost --since yesterday >/dev/null 2>"$LAB/err"; rc=$?
[ $rc = 2 ] && grep -q -- "--since yesterday: not a time: give a duration ago" "$LAB/err"
ok $? "--since yesterday: refused, saying what a time is" "$LAB/err"
cost --since 1h --until 2h >/dev/null 2>"$LAB/err"; rc=$?
[ $rc = 2 ] && grep -q -- "--since (.*) is not before --until" "$LAB/err"
ok $? "--since after --until: refused" "$LAB/err"

# two jobs, each on a node of its own, at once; job 2 ends before its
# first running note is due (CostNoteInterval after the agent saw it run)
id1=$(sbatch --parsable --exclusive --cloud-contract=here -o "$LAB/job1.out" --wrap 'sleep 8' 2>"$LAB/err")
ok $? "sbatch job 1" "$LAB/err"
id2=$(sbatch --parsable --exclusive --cloud-contract=here -o "$LAB/job2.out" --wrap 'sleep 1' 2>"$LAB/err")
ok $? "sbatch job 2" "$LAB/err"
lab_wait_job "$id1" RUNNING 90; ok $? "job 1 bursts and runs" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
# its cost so far, in its admin comment beside the contract note
for i in $(seq 100); do
	scontrol show job "$id1" 2>/dev/null | grep -q 'AdminComment=.*burst: cost=.* so far' && break
	sleep 0.1
done
ac=$(admin_comment "$id1")
[[ "$ac" == "burst: contract=here; burst: cost="*" USD ("*" instance-seconds so far)" ]]
ok $? "a running job's cost so far is in its admin comment, after the contract note ($ac)" "$LAB/log/agent.log"

# the agent restarts while the nodes are up: their instances are adopted
# and keep the records made at their launch
sqlite3 "$db" "SELECT provider||' '||instance||' '||launched FROM instances ORDER BY instance" >"$LAB/before" 2>&1
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
lab_agent_start; ok $? "the agent starts again" "$LAB/log/agent.log"
lab_wait_job "$id1" COMPLETED 90; ok $? "job 1 completes" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
lab_wait_job "$id2" COMPLETED 90; ok $? "job 2 completes" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
sqlite3 "$db" "SELECT provider||' '||instance||' '||launched FROM instances ORDER BY instance" >"$LAB/after" 2>&1
[ -s "$LAB/before" ] && [ -z "$(comm -23 <(sort "$LAB/before") <(sort "$LAB/after"))" ]
ok $? "the instances launched before the restart keep their records ($(wc -l <"$LAB/before") of them)" "$LAB/before" "$LAB/after"

# each job's final cost goes to its accounting record once it ended (the
# agent says so); the admin comment keeps one cost note (replaced, not
# appended) and the contract note
for id in "$id1" "$id2"; do
	for i in $(seq 150); do
		grep -q "job $id: its accounting record's admin comment" "$LAB/log/agent.log" && break
		sleep 0.1
	done
	grep -q "job $id: its accounting record's admin comment (slurmdbd): burst: cost=[0-9.]* USD ([0-9.]* instance-seconds)\$" "$LAB/log/agent.log"
	ok $? "job $id: its final cost is written to its accounting record" "$LAB/log/agent.log" "$LAB/log/slurmdbd.log"
done
ac=$(admin_comment "$id1")
[ "$(grep -o 'burst: cost=' <<<"$ac" | wc -l)" = 1 ] && [[ "$ac" == "burst: contract=here; "* ]]
ok $? "one cost note in job 1's admin comment, after the contract note ($ac)"
! grep -q "setting admin_comment to .*burst: cost=.* for JobId=$id2\$" "$LAB/log/slurmctld.log"
ok $? "job 2 ended before any running note" "$LAB/log/slurmctld.log"

# the nodes go idle and are powered down: every instance ended
lab_wait_node burst-1 'idle~' 90 && lab_wait_node burst-2 'idle~' 90
ok $? "both nodes are powered down again" "$LAB/log/agent.log"
for i in $(seq 100); do
	[ "$(sqlite3 "$db" 'SELECT count(*) FROM instances WHERE ended=0')" = 0 ] && break
	sleep 0.1
done

# the records: type, region, price and its source, launch < join < end
sqlite3 -separator ' ' "$db" "SELECT node, type, region, price, price_source, launched<joined AND joined<ended FROM instances" >"$LAB/insts"
n=$(wc -l <"$LAB/insts")
[ "$n" -ge 2 ] && ! grep -v "^burst-[12] local.host lab 3.6 on-demand: Price= $LAB/etc/burst.conf:$price_line 1\$" "$LAB/insts"
ok $? "$n instances recorded: local.host in lab at 3.6 USD/h from the Price= line (line $price_line), launched, joined, ended" "$LAB/insts"
sqlite3 -separator ' ' "$db" "SELECT job, node, start, end FROM holds ORDER BY job" >"$LAB/holds"
[ "$(cut -d' ' -f1 "$LAB/holds" | sort -u | tr '\n' ' ')" = "$id1 $id2 " ] &&
	[ "$(cut -d' ' -f2 "$LAB/holds" | sort -u | wc -l)" = 2 ]
ok $? "the jobs' nodes and times are recorded, a node each" "$LAB/holds"

# by hand: a job's cost is the time it held its node after the node's
# instance joined, and before that instance ended, at the price
cost --by job --json >"$LAB/cost.json" 2>"$LAB/err"; ok $? "burstctl cost --by job --json" "$LAB/err"
python3 - "$db" "$LAB/cost.json" "$PRICE" "$id1" "$id2" >"$LAB/hand" 2>&1 <<'PY'
import json, sqlite3, sys
db, out, price, jobs = sys.argv[1], json.load(open(sys.argv[2])), float(sys.argv[3]), sys.argv[4:]
c = sqlite3.connect(db)
insts = c.execute("SELECT node, joined, ended, launched FROM instances").fetchall()
holds = c.execute("SELECT job, node, start, end FROM holds").fetchall()
rows = {(r["job"], r["kind"]): r for r in out["rows"]}
jobs_ok, totals_ok = True, True
for j in jobs:
    want = 0.0
    for job, node, s, e in holds:
        if str(job) != j:
            continue
        for n, joined, ended, launched in insts:
            if n == node and joined > 0:
                want += max(0.0, min(e, ended) - max(s, joined)) * price / 3600
    got = rows.get((j, "job"), {}).get("dollars")
    print("job %s: by hand %.6f USD, burstctl %s" % (j, want, got))
    if got is None or want <= 0 or abs(got - want) > 1e-6:
        jobs_ok = False
life = sum((ended - launched) * price / 3600 for n, joined, ended, launched in insts)
boot = sum((joined - launched) * price / 3600 for n, joined, ended, launched in insts)
print("lives %.6f USD, total %.6f; boot %.6f, burstctl %s" % (life, out["total"]["dollars"], boot,
      rows.get(("-", "boot"), {}).get("dollars")))
if abs(out["total"]["dollars"] - life) > 1e-6 or abs(rows.get(("-", "boot"), {}).get("dollars", -1) - boot) > 1e-6 or \
        ("-", "idle") not in rows:
    totals_ok = False
# one verdict a line, for the two test points (none when this fails)
with open(sys.argv[2] + ".verdict", "w") as v:
    v.write("jobs %s\ntotals %s\n" % ("ok" if jobs_ok else "off", "ok" if totals_ok else "off"))
PY
grep -qx 'jobs ok' "$LAB/cost.json.verdict"
ok $? "each job's cost is its node time at $PRICE USD/h ($(head -2 "$LAB/hand" | tr '\n' ' '))" "$LAB/hand" "$LAB/cost.json"
grep -qx 'totals ok' "$LAB/cost.json.verdict"
ok $? "boot and idle apart; all adds up to the instances' lives ($(tail -1 "$LAB/hand"))" "$LAB/hand"
# and the final cost said is what burstctl says, to the 4 decimals it writes
for id in "$id1" "$id2"; do
	said=$(sed -n "s/.*job $id: its accounting record's admin comment[^:]*: burst: cost=\([0-9.]*\) USD.*/\1/p" "$LAB/log/agent.log" | head -1)
	bc=$(python3 -c 'import json,sys; r=[x for x in json.load(open(sys.argv[1]))["rows"] if x["job"]==sys.argv[2] and x["kind"]=="job"]; print("%.4f" % r[0]["dollars"])' "$LAB/cost.json" "$id")
	[ -n "$said" ] && [ "$said" = "$bc" ]; ok $? "job $id: final cost $said USD = burstctl $bc USD"
done
# what sacct users see: the job's record carries the final note, the figure
# burstctl gives, after the contract note (not the last running note,
# which slurmctld wrote there when the job ended)
for id in "$id1" "$id2"; do
	bc=$(python3 -c 'import json,sys; r=[x for x in json.load(open(sys.argv[1]))["rows"] if x["job"]==sys.argv[2] and x["kind"]=="job"]; print("%.4f" % r[0]["dollars"])' "$LAB/cost.json" "$id")
	rec=$(sacct -j "$id" -X -n -P -o AdminComment%300 2>&1)
	[[ "$rec" =~ ^"burst: contract=here; burst: cost=$bc USD ("[0-9.]+" instance-seconds)"$ ]]
	ok $? "job $id: sacct shows its final cost, $bc USD as burstctl ($rec)"
done
cost --by job >"$LAB/cost.txt" 2>&1
grep -Eq "^$id1 +job " "$LAB/cost.txt" && grep -Eq '^- +boot ' "$LAB/cost.txt" && grep -Eq '^- +idle ' "$LAB/cost.txt" && grep -q '^total ' "$LAB/cost.txt"
ok $? "the text: a line per job, boot and idle apart, the total" "$LAB/cost.txt"
cost --by nodeset --json >"$LAB/ns.json" && cost --by partition --json >"$LAB/part.json" && cost --by user --json >"$LAB/user.json"
python3 - "$LAB/cost.json" "$LAB/ns.json" "$LAB/part.json" "$LAB/user.json" <<'PY' >"$LAB/by" 2>&1
import json, sys
tot = [json.load(open(p))["total"]["dollars"] for p in sys.argv[1:]]
ns = json.load(open(sys.argv[2]))["rows"]
part = json.load(open(sys.argv[3]))["rows"]
user = json.load(open(sys.argv[4]))["rows"]
print(tot, [r["nodeset"] for r in ns], [r["partition"] for r in part], [r["user"] for r in user])
assert max(tot) - min(tot) < 1e-9
assert {r["nodeset"] for r in ns} == {"local"}
assert {r["partition"] for r in part if r["kind"] == "job"} == {"burst"}
assert {r["user"] for r in user if r["kind"] == "job"} == {"root"}
PY
ok $? "--by nodeset, partition, user: the same total, grouped ($(cat "$LAB/by" | head -1))" "$LAB/by"
cost --since @0 --until "@$(sqlite3 "$db" 'SELECT CAST(min(launched) AS INTEGER) FROM instances')" --json >"$LAB/none.json" 2>"$LAB/err" &&
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["total"]["dollars"] != 0)' "$LAB/none.json"
ok $? "--until before the first launch (the second it began): nothing" "$LAB/none.json" "$LAB/err"

dbd_pids=$(awk '$1 == "slurmdbd" || $1 == "mariadbd" { print $2 }' "$LAB/pids")
trap - EXIT INT TERM
lab_down
left=
for pid in $dbd_pids; do lab_pid_alive "$pid" && left="$left $pid"; done
! ip netns list | grep -q "^burst-lab$$-" && [ -n "$dbd_pids" ] && [ -z "$left" ]
ok $? "nothing is left after teardown (slurmdbd and mariadbd included${left:+: left$left})"
done_testing

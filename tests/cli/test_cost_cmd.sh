#!/usr/bin/env bash
# tests/cli/test_cost_cmd.sh - burstctl cost on cost records written by
# tests/unit/state_fixture through the agent's own state functions (TAP):
# each figure against a hand computation, the groupings, a window, an
# unknown price, and the errors. Run by 'make check' with BURST_TOP_SRCDIR
# and BURST_TOP_BUILDDIR set.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
F="$build/tests/unit/state_fixture"
export TZ=UTC
unset BURST_CONF
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"

run() {   # run EXPECTED-EXIT ARGS...: burstctl, output in $tmp/out, $tmp/err
	local want=$1; shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	[ $? -eq "$want" ]
}
# check PYTHON-EXPR...: each true of the JSON in $tmp/out (j: it; row(key, kind): a row's dollars)
check() {
	python3 - "$tmp/out" "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
def row(key, kind, f="dollars"):
    for r in j["rows"]:
        if r[j["by"]] == key and r["kind"] == kind:
            return r[f]
    return None
def near(a, b):
    return a is not None and abs(a - b) < 1e-9
for e in sys.argv[2:]:
    if not eval(e):
        print("false: %s (%s)" % (e, json.dumps(j["rows"])), file=sys.stderr)
        sys.exit(1)
PY
}

state="$tmp/state"
conf="$tmp/burst.conf"
cat >"$conf" <<EOF
StateDir=$state
Provider=local Type=local Bridge=burstbr0 Address=10.77.0.1/24
NodeSet=cpu Nodes=n1 Partition=burst InstanceTypes=local.host
NodeSet=gpu Nodes=n[2-3] Partition=burst InstanceTypes=local.host
EOF
mkdir -p "$state"
db="$state/agent.db"
T=1795000000
fx() { "$F" "$db" "$@" || echo "state_fixture $* failed" >&2; }
# n1: 3.60 USD/h (0.001 a second), launched T, joined T+10, ended T+110;
#     job 7 holds it 20-60, job 8 40-80: 20-40 job 7, 40-60 both (10 s each),
#     60-80 job 8; idle 10-20 and 80-110
fx instance local i1 n1 cpu local.host lab 3.6 $T $((T + 10)) $((T + 110))
fx hold 7 n1 $((T + 20)) $((T + 60)) 0 phys p1
fx hold 8 n1 $((T + 40)) $((T + 80)) 0 chem p1
# n2: 36 USD/h (0.01 a second), joined T+20, ended T+80; job 9 from T
#     (allocated while it booted) to T+70: 50 s after the join
fx instance aws i2 n2 gpu g.big us-east-1 36 $T $((T + 20)) $((T + 80))
fx hold 9 n2 $T $((T + 70)) 0 phys p2
# n3: a type of unknown price: its time is counted, not its dollars
fx instance aws i3 n3 gpu g.odd us-east-1 - $T $((T + 5)) $((T + 50))
fx hold 10 n3 $((T + 10)) $((T + 50)) 0 bio p2

run 0 -c "$conf" cost --by job --json; ok $? "cost --by job --json"
check 'near(row("7","job"), 0.030)' 'near(row("8","job"), 0.030)' 'near(row("9","job"), 0.500)' \
	'near(row("10","job"), 0) and near(row("10","job","unpriced_seconds"), 40)'
ok $? "each job's share: 7 and 8 0.030 USD (a shared 20 s split), 9 0.500 (after the join), 10 40 s unpriced"
check 'near(row("-","boot"), 0.010 + 0.200) and near(row("-","boot","unpriced_seconds"), 5)' \
	'near(row("-","idle"), 0.040 + 0.100)' 'near(j["total"]["dollars"], 0.91)' \
	'near(j["total"]["seconds"], 110 + 80 + 50)'
ok $? "boot 0.210 and idle 0.140 apart; total 0.910 USD over 240 instance-seconds"
check 'len(j["instances"]) == 3' \
	'{i["instance"]: i["price_source"] for i in j["instances"]} == {"i1": "on-demand: catalog", "i2": "on-demand: catalog", "i3": "unknown"}' \
	'[i for i in j["instances"] if i["instance"] == "i3"][0]["price"] is None' \
	'[i for i in j["instances"] if i["instance"] == "i1"][0]["joined"] == '$((T + 10))
ok $? "--json carries the instances' records"

run 0 -c "$conf" cost --by account --json && check 'near(row("phys","job"), 0.530)' 'near(row("chem","job"), 0.030)' \
	'near(row("bio","job","unpriced_seconds"), 40)'
ok $? "--by account: phys 0.530, chem 0.030"
run 0 -c "$conf" cost --by user --json && check 'near(row("root","job"), 0.560)'
ok $? "--by user: uid 0 is root, 0.560"
run 0 -c "$conf" cost --by partition --json && check 'near(row("p1","job"), 0.060)' 'near(row("p2","job"), 0.500)'
ok $? "--by partition"
run 0 -c "$conf" cost --by nodeset --json && check 'near(row("cpu","job"), 0.060)' 'near(row("cpu","boot"), 0.010)' \
	'near(row("cpu","idle"), 0.040)' 'near(row("gpu","job"), 0.500)' 'near(row("gpu","boot"), 0.200)' \
	'near(row("gpu","idle"), 0.100)'
ok $? "--by nodeset: each node set's job, boot and idle time"
run 0 -c "$conf" cost --by provider --json && check 'near(row("local","job"), 0.060)' 'near(row("aws","boot"), 0.200)'
ok $? "--by provider"
run 0 -c "$conf" cost --since @$((T + 30)) --until @$((T + 50)) --json &&
	check 'near(row("7","job"), 0.015)' 'near(row("8","job"), 0.005)' 'near(row("9","job"), 0.200)' \
	'near(j["total"]["dollars"], 0.220)' 'row("-","idle") is None and row("-","boot") is None'
ok $? "a window (30-50 s): 7 0.015, 8 0.005, 9 0.200; no boot, no idle"
run 0 -c "$conf" cost --since 2026-11-17T00:00 --until 2026-11-17T17:00:00Z --json &&
	check 'j["since"] == 1794873600 and j["until"] == 1794934800 and j["total"]["dollars"] == 0'
ok $? "dates in UTC; a window with nothing in it"

run 0 -c "$conf" cost
grep -Eq '^7 +job +0\.0083 +0\.0300$' "$tmp/out" && grep -Eq '^- +boot +0\.0097 +0\.2100  \(some time at an unknown price: not counted\)$' "$tmp/out" &&
	grep -Eq '^total +0\.0667 +0\.9100$' "$tmp/out" && head -1 "$tmp/out" | grep -q '^cost from the first record to .*, by job'
ok $? "the text: hours and dollars a line, the total"
# (n3's 50 s, its type without a price: what to write, once per type)
[ "$(grep -c '^note: ' "$tmp/out")" = 1 ] &&
	grep -q '^note: 0\.0139 hours at no known price, not counted: g\.odd (provider aws, region us-east-1); give each a price in burst\.conf for the instances launched from now on: Price=TYPE Provider=P Region=R OnDemand=USD-PER-HOUR (burst\.conf(5))$' "$tmp/out"
ok $? "... and a note naming the type of unknown price, and the Price= line that gives one" "$tmp/out"
run 0 -c "$conf" cost --since @$((T + 60)) --until @$((T + 70))
! grep -q '^note: ' "$tmp/out"
ok $? "... no note when all was priced" "$tmp/out"

# --budgets: each Budget= line's spending in its period, as the agent counts
# it before a launch; the same records, 200 s ago, in this year's period
# (in the first 300 s of a year, wait: the records must fall in it)
y0=$(date -u -d "$(date -u +%Y)-01-01" +%s)
[ $(( $(date +%s) - y0 )) -lt 300 ] && sleep $((300 - ($(date +%s) - y0)))
state2="$tmp/state2"
conf2="$tmp/budgets.conf"
sed "s|^StateDir=.*|StateDir=$state2|" "$conf" >"$conf2"
cat >>"$conf2" <<BUDGETS
Budget=all Amount=1 Period=year
Budget=gpu Amount=2 Period=year NodeSet=gpu
Budget=phys Amount=1 Period=year Account=phys
Budget=cpuchem Amount=1 Period=year NodeSet=cpu Account=chem
BUDGETS
mkdir -p "$state2"
db2="$state2/agent.db"
N=$(( $(date +%s) - 200 ))
"$F" "$db2" instance local i1 n1 cpu local.host lab 3.6 $N $((N + 10)) $((N + 110)) &&
"$F" "$db2" hold 7 n1 $((N + 20)) $((N + 60)) 0 phys p1 && "$F" "$db2" hold 8 n1 $((N + 40)) $((N + 80)) 0 chem p1 &&
"$F" "$db2" instance aws i2 n2 gpu g.big us-east-1 36 $N $((N + 20)) $((N + 80)) &&
"$F" "$db2" hold 9 n2 $N $((N + 70)) 0 phys p2 ||
	echo "state_fixture failed" >&2
run 0 -c "$conf2" cost --budgets --json && python3 - "$tmp/out" <<'PY'
import json, sys
b = {r["budget"]: r for r in json.load(open(sys.argv[1]))["budgets"]}
want = {"all": 0.91, "gpu": 0.80, "phys": 0.53, "cpuchem": 0.03}
for k, v in want.items():
    assert abs(b[k]["spent"] - v) < 1e-9 and abs(b[k]["left"] - (b[k]["amount"] - v)) < 1e-9, (k, b[k])
assert b["gpu"]["nodeset"] == "gpu" and b["phys"]["account"] == "phys" and b["all"]["period"] == "year"
PY
ok $? "--budgets: global 0.91, node set gpu 0.80, account phys 0.53 (its jobs' time), chem in cpu 0.03"
run 0 -c "$conf2" cost --budgets && grep -Eq '^gpu +nodeset=gpu +year +[0-9-]+T00:00:00Z +0\.8000 +2\.0000 +1\.2000$' "$tmp/out" &&
	grep -Eq '^all +global +year ' "$tmp/out"
ok $? "--budgets: a line each, with its scope, period start, spent, amount, left"
run 2 -c "$conf2" cost --budgets --by job && grep -q "cost --budgets takes each budget's own period" "$tmp/err"
ok $? "--budgets with --by: exit 2"

run 2 -c "$conf" cost --by acount && grep -q "burstctl: --by acount: give job, user, account, partition, nodeset or provider (did you mean 'account'?)" "$tmp/err"
ok $? "--by acount: exit 2, the right word suggested"
run 2 -c "$conf" cost --since tomorrow && grep -q -- "--since tomorrow: not a time: give a duration ago (90s, 5m, 2h, 3d), a date in UTC (2026-11-01 or 2026-11-01T08:00), or @SECONDS since the epoch" "$tmp/err"
ok $? "--since tomorrow: exit 2, what a time is"
run 2 -c "$conf" cost --until 2026-13-01 && grep -q -- "--until 2026-13-01: not a time" "$tmp/err"
ok $? "--until 2026-13-01: not a time"
run 2 -c "$conf" cost --since @$((T + 50)) --until @$((T + 30)) && grep -q -- "--since (2026-11-18T.*Z) is not before --until" "$tmp/err"
ok $? "--since after --until: exit 2"
run 2 -c "$conf" cost 7 && grep -q "cost takes no argument such as '7'" "$tmp/err"
ok $? "an argument: exit 2"
run 2 -c "$tmp/none.conf" cost 2>/dev/null
ok $? "a missing burst.conf: exit 2"
done_testing

#!/usr/bin/env bash
# tests/cli/test_agentview.sh - burstctl status, nodes and events on an agent
# state database written by tests/unit/state_fixture through the agent's own
# state functions (TAP). Run by 'make check' with BURST_TOP_SRCDIR and
# BURST_TOP_BUILDDIR set.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
F="$build/tests/unit/state_fixture"
PY=/usr/bin/python3
export TZ=UTC
unset BURST_CONF
tmp=$(mktemp -d)
followers=()
cleanup() {
	local p
	for p in "${followers[@]}"; do kill "$p" 2>/dev/null; done
	chmod -R u+w "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"

run() {   # run EXPECTED-EXIT ARGS...: burstctl, output in $tmp/out, $tmp/err
	local want=$1; shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ]
}
has() { grep -qF -- "$1" "$tmp/$2"; }
hasre() { grep -qE -- "$1" "$tmp/$2"; }
py() { "$PY" -c "$1" <"$tmp/out"; }   # python3 CODE: reads burstctl's output on stdin

state="$tmp/state"
db="$state/agent.db"
conf="$tmp/burst.conf"
cat >"$conf" <<EOF
StateDir=$state
Provider=local Type=local Bridge=burstbr0 Address=10.77.0.1/24
NodeSet=cpu Nodes=burst-[1-3,10] Partition=burst InstanceTypes=local.host
NodeSet=gpu Nodes=gpu-[1-2] Partition=burst-gpu InstanceTypes=local.host
EOF

# --- no database yet ---
for verb in status nodes events; do
	run 2 -c "$conf" $verb
	ok $? "$verb without a database exits 2"
	has "no agent state at $db: has burst-agent run?" err
	ok $? "... and says: no agent state at $db: has burst-agent run?"
done
[ ! -e "$db" ] && [ ! -e "$state" ]
ok $? "the views create neither the database nor StateDir"

# --- the agent's state, written as the agent writes it ---
mkdir -p "$state/spool"
fx() { "$F" "$db" "$@" || echo "state_fixture $* failed" >&2; }
for n in burst-1 burst-2 burst-3 burst-10; do fx ensure $n cpu; done
fx ensure gpu-1 gpu
fx ensure gpu-2 gpu
fx move burst-1 powered_down requested detail=0001-resume.json job=17
fx move burst-1 requested launching instance=local-lab-burst-1-1 attempt=1 \
	address=10.77.0.11 token=SECRETTOKEN detail=local-lab-burst-1-1
fx move gpu-1 powered_down requested job=18
fx move gpu-1 requested launching instance=i-gpu1 attempt=1 token=SECRETTOKEN detail=i-gpu1
fx move gpu-1 launching booting detail="instance started"
fx move gpu-2 powered_down requested job=18
fx move gpu-2 requested powered_down "error=capacity: no g5.xlarge in us-east-1" cooldown=600 detail=ICE
fx age-events - 7200           # all of the above happened two hours ago
fx move burst-3 powered_down requested detail=0002-resume.json job=19
fx age burst-1 190
fx age gpu-1 7300
fx age gpu-2 7200
fx age burst-3 30
echo '{"op":"resume","nodes":"burst-2"}' >"$state/spool/0003-resume.json"
sum_before=$(sha256sum "$db")

# --- status ---
run 0 -c "$conf" status
ok $? "status exits 0"
has "active agent: none (no agent has held the lease)" out
ok $? "status says no agent holds the lease"
has "node set cpu (burst-[1-3,10]): 4 nodes: 2 powered_down, 1 requested, 1 launching" out
ok $? "status counts the cpu nodes per state, in the order of a node's life"
has "node set gpu (gpu-[1-2]): 2 nodes: 1 powered_down, 1 booting (1 powered_down in cooldown" out
ok $? "status counts the gpu nodes, and the one in cooldown"
hasre '^  burst-1 +launching +local-lab-burst-1-1 +3m +17 +1 +-$' out
ok $? "status shows burst-1 launching, its instance, 3m in that state, its job"
hasre '^  gpu-1 +booting +i-gpu1 +2h +18 ' out
ok $? "status shows gpu-1 booting for 2h"
hasre '^  burst-3 +requested +- +3[0-3]s +19 ' out
ok $? "status shows burst-3 requested for 30s"
! hasre '^  (burst-2|burst-10|gpu-2) ' out
ok $? "status lists no powered_down node"
has "pending requests: 1" out && has "0003-resume.json" out
ok $? "status shows the pending spool request"
hasre '^  [0-9-]{10}T[0-9:]{8}\.[0-9]{3} burst-3 powered_down -> requested 0002-resume.json$' out
ok $? "status shows the newest events"

run 0 -c "$conf" status --json
ok $? "status --json exits 0"
py '
import json, sys
d = json.load(sys.stdin)
sets = {s["name"]: s for s in d["nodesets"]}
assert d["state_db"].endswith("/state/agent.db"), d["state_db"]
assert sets["cpu"]["states"] == {"powered_down": 2, "requested": 1, "launching": 1}, sets["cpu"]
assert sets["gpu"]["states"] == {"powered_down": 1, "booting": 1}, sets["gpu"]
assert sets["gpu"]["cooling_down"] == 1
assert [n["name"] for n in sets["cpu"]["active"]] == ["burst-1", "burst-3"], sets["cpu"]["active"]
b1 = sets["cpu"]["active"][0]
assert b1["state"] == "launching" and b1["instance"] == "local-lab-burst-1-1" and b1["job"] == 17, b1
assert 190 <= b1["age_seconds"] < 240, b1
assert d["pending_requests"] == ["0003-resume.json"], d["pending_requests"]
assert len(d["events"]) == 5, len(d["events"])
assert d["events"][-1]["node"] == "burst-3" and d["events"][-1]["to"] == "requested", d["events"][-1]
' 2>"$tmp/err"
ok $? "status --json has the counts, active nodes, pending requests and 5 newest events"
run 0 -c "$conf" -n 2 status --json && py '
import json, sys
e = json.load(sys.stdin)["events"]
assert [x["what"] for x in e] == ["requested -> powered_down", "powered_down -> requested"], e
' 2>"$tmp/err"
ok $? "status -n 2 shows the two newest events"

# --- nodes ---
run 0 -c "$conf" nodes
ok $? "nodes exits 0"
[ "$(awk 'NR > 1 { printf "%s ", $1 }' "$tmp/out")" = "burst-1 burst-2 burst-3 burst-10 gpu-1 gpu-2 " ]
ok $? "nodes lists every node once, in natural order"
hasre '^NODE +NODESET +STATE +ATTEMPT +INSTANCE +ADDRESS +AGE +JOB +COOLDOWN +LAST_ERROR$' out
ok $? "nodes has a header"
hasre '^burst-1 +cpu +launching +1 +local-lab-burst-1-1 +10\.77\.0\.11 +3m +17 +- +-$' out
ok $? "nodes: burst-1's node set, state, attempt, instance, address, age, job"
hasre '^gpu-2 +gpu +powered_down +0 +- +- +2h +- +(9|10)m +capacity: no g5\.xlarge in us-east-1$' out
ok $? "nodes: gpu-2's cooldown left and last error, no job once powered down"
run 0 -c "$conf" nodes 'burst-[1-2],gpu-2'
ok $? "nodes HOSTLIST exits 0"
[ "$(awk 'NR > 1 { printf "%s ", $1 }' "$tmp/out")" = "burst-1 burst-2 gpu-2 " ]
ok $? "nodes HOSTLIST shows exactly those nodes"
run 1 -c "$conf" nodes 'burst-[2-3],nope-1'
ok $? "nodes with a name the agent does not know exits 1"
has "nope-1: not in the agent's state" err
ok $? "... naming it"
[ "$(awk 'NR > 1 { printf "%s ", $1 }' "$tmp/out")" = "burst-2 burst-3 " ]
ok $? "... and still shows the others"
run 2 -c "$conf" nodes 'burst-[1-'
ok $? "nodes with a bad host list exits 2"
run 0 -c "$conf" nodes --json 'gpu-[1-2]'
ok $? "nodes --json exits 0"
py '
import json, sys
v = json.load(sys.stdin)
assert [n["name"] for n in v] == ["gpu-1", "gpu-2"], v
g1, g2 = v
assert g1["state"] == "booting" and g1["instance"] == "i-gpu1" and g1["attempt"] == 1, g1
assert 7300 <= g1["age_seconds"] < 7360, g1
assert g2["last_error"] == "capacity: no g5.xlarge in us-east-1", g2
assert 540 < g2["cooldown_left_seconds"] <= 600, g2
assert g2["nodeset"] == "gpu" and g2["job"] is None, g2
' 2>"$tmp/err"
ok $? "nodes --json carries the rows"

# --- events ---
run 0 -c "$conf" events
ok $? "events exits 0"
[ "$(wc -l <"$tmp/out")" -eq 8 ]
ok $? "events shows all eight events"
hasre '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} burst-1 requested -> launching local-lab-burst-1-1$' out
ok $? "an event line is: time node from -> to detail"
cp "$tmp/out" "$tmp/all"
run 0 -c "$conf" events -n 3 && tail -3 "$tmp/all" | cmp -s - "$tmp/out"
ok $? "events -n 3 shows the newest three, oldest first"
run 0 -c "$conf" events --node gpu-1
ok $? "events --node exits 0"
[ "$(awk '{ print $2 }' "$tmp/out" | sort -u)" = "gpu-1" ] && [ "$(wc -l <"$tmp/out")" -eq 3 ]
ok $? "events --node gpu-1 shows gpu-1's three events only"
run 0 -c "$conf" events --since 600
[ "$(wc -l <"$tmp/out")" -eq 1 ] && has "burst-3 powered_down -> requested" out
ok $? "events --since 600 leaves out what happened two hours ago"
run 0 -c "$conf" events --since 3h
[ "$(wc -l <"$tmp/out")" -eq 8 ]
ok $? "events --since 3h shows everything"
run 2 -c "$conf" events --since soon
ok $? "events --since with no number exits 2"
run 1 -c "$conf" events --node nope-1
ok $? "events --node for an unknown node exits 1"
run 0 -c "$conf" events --json
py '
import json, sys, datetime, math
lines = sys.stdin.read().splitlines()
assert len(lines) == 8, len(lines)
ids = []
for l in lines:
    e = json.loads(l)
    ids.append(e["id"])
    # the timestamp is the time in whole milliseconds, cut (not rounded, as
    # datetime does to microseconds: it made x.1239996 s say .124 here)
    sec = math.floor(e["time"])
    ms = int((e["time"] - sec) * 1000.0)
    want = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%03d" % ms
    assert e["timestamp"] == want, (e["timestamp"], want)
assert ids == sorted(ids) and len(set(ids)) == 8, ids
e = json.loads(lines[1])
assert (e["node"], e["from"], e["to"], e["detail"]) == ("burst-1", "requested", "launching", "local-lab-burst-1-1"), e
' 2>"$tmp/err"
ok $? "events --json: one object per line, ids in order, time and timestamp agree"

# --- the join token is never shown ---
for args in status "status --json" nodes "nodes --json" events "events --json"; do
	"$B" -c "$conf" $args 2>&1
done | grep -q SECRETTOKEN
[ $? -ne 0 ]
ok $? "no view shows the join token"
[ "$(sha256sum "$db")" = "$sum_before" ]
ok $? "the views did not write the database"

# --- events --follow ---
"$B" -c "$conf" events --follow --node burst-2 >"$tmp/follow" 2>"$tmp/follow.err" &
fpid=$!
followers+=("$fpid")
sleep 0.5
fx move burst-3 requested launching instance=local-lab-burst-3-1 detail=local-lab-burst-3-1
fx move burst-2 powered_down requested detail=0003-resume.json
seen=1
for _ in $(seq 20); do
	if grep -qE '^[0-9-]{10}T[0-9:.]{12} burst-2 powered_down -> requested 0003-resume.json$' "$tmp/follow"; then
		seen=0
		break
	fi
	sleep 0.1
done
ok $seen "events --follow prints an event written while it runs, within 2 s" "$tmp/follow" "$tmp/follow.err"
! grep -q burst-3 "$tmp/follow"
ok $? "... and only the node it follows"
kill -TERM "$fpid"
wait "$fpid"
ok $? "... and exits 0 on SIGTERM" "$tmp/follow.err"

"$B" -c "$conf" events -f --json >"$tmp/follow" 2>"$tmp/follow.err" &
fpid=$!
followers+=("$fpid")
sleep 0.5
fx move burst-2 requested launching instance=local-lab-burst-2-1 detail=local-lab-burst-2-1
seen=1
for _ in $(seq 20); do
	if tail -1 "$tmp/follow" | "$PY" -c '
import json, sys
e = json.loads(sys.stdin.read())
assert (e["node"], e["to"], e["detail"]) == ("burst-2", "launching", "local-lab-burst-2-1")' 2>/dev/null; then
		seen=0
		break
	fi
	sleep 0.1
done
ok $seen "events -f --json prints the new event as JSON" "$tmp/follow" "$tmp/follow.err"
[ "$(wc -l <"$tmp/follow")" -eq 11 ]
ok $? "... after the newest ten, as tail -f does" "$tmp/follow"
kill -INT "$fpid"
wait "$fpid"
ok $? "... and exits 0 on SIGINT" "$tmp/follow.err"

timeout 10 "$B" -c "$conf" events -f | head -1 >/dev/null
[ "${PIPESTATUS[0]}" -eq 0 ]
ok $? "events -f stops with exit 0 when its reader goes away"

# --- a node that lived and was powered down shows no instance, address or job ---
fx move burst-10 powered_down requested job=16
fx move burst-10 requested launching instance=local-lab-burst-10-1 attempt=1 address=10.77.0.20 detail=local-lab-burst-10-1
fx move burst-10 launching powered_down "error=boot timeout" detail=gone
run 0 -c "$conf" nodes burst-10
hasre '^burst-10 +cpu +powered_down +1 +- +- +[0-9]+s +- +- +boot timeout$' out
ok $? "nodes: a powered-down node shows no old instance, address or job"
run 0 -c "$conf" --json nodes burst-10 && py '
import json, sys
n = json.load(sys.stdin)[0]
assert n["instance"] is None and n["address"] is None and n["job"] is None, n
assert n["last_instance"] == "local-lab-burst-10-1", n
' 2>"$tmp/err"
ok $? "nodes --json: null instance, address and job, last_instance kept"

# --- read while no agent runs, by a user who may not write StateDir ---
fx ensure burst-1 cpu   # the agent's last write: closing it removes the -wal file
[ ! -e "$db-wal" ]
ok $? "no -wal file: no writer has the database open"
if [ "$(id -u)" -eq 0 ]; then
	chmod 755 "$tmp"
	chmod 644 "$db"
	asuser=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
	chmod 555 "$state"
	asuser=()
fi
"${asuser[@]}" "$B" -c "$conf" nodes >"$tmp/out" 2>"$tmp/err"
ok $? "nodes works for a reader who cannot write StateDir"
[ "$(awk 'NR > 1 { printf "%s ", $1 }' "$tmp/out")" = "burst-1 burst-2 burst-3 burst-10 gpu-1 gpu-2 " ]
ok $? "... and lists every node"
[ ! -e "$db-wal" ] && [ ! -e "$db-shm" ]
ok $? "... without leaving files in StateDir"
if [ "$(id -u)" -eq 0 ]; then
	# the agent makes agent.db 0600: a user is told why, not SQLite's words
	chmod 600 "$db"
	"${asuser[@]}" "$B" -c "$conf" status >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc = 2 ] && grep -q "^burstctl: $db: cannot read the agent's state database: it is readable by its owner (uid 0) alone, as the agent makes it (mode 0600): run this as root (sudo), or as that user$" "$tmp/err" &&
		! grep -q "unable to open" "$tmp/err"
	ok $? "status as a user when agent.db is 0600: exit $rc, says whose it is and what to do" "$tmp/err"
	chmod 644 "$db"
fi

# text from nodes (a rejection's reason quotes the node's record): written
# out, never sent raw to the terminal
state2="$tmp/state2" db2="$tmp/state2/agent.db" conf2="$tmp/burst2.conf"
mkdir -p "$state2/spool"
sed "s|^StateDir=.*|StateDir=$state2|" "$conf" >"$conf2"
"$F" "$db2" ensure burst-1 cpu
"$F" "$db2" move burst-1 '*' rejected "detail=rejected at join: kernel $(printf '\033[2J\033]0;pwned\007')" \
	"error=rejected: $(printf '\033[31m')red"
run 0 -c "$conf2" events
! grep -q "$(printf '\033')" "$tmp/out" && has 'kernel \x1b[2J\x1b]0;pwned\x07' out
ok $? "events: control characters from nodes are written out ($(tail -1 "$tmp/out"))"
run 0 -c "$conf2" nodes
! grep -q "$(printf '\033')" "$tmp/out" && has 'rejected: \x1b[31mred' out
ok $? "nodes: ... and in the table"

# a database of a newer agent's schema (PRAGMA user_version): refused by
# every view, naming both versions, and left as it was
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=99"); c.commit()' "$db2"
for verb in status nodes events; do
	run 2 -c "$conf2" $verb && hasre "agent\.db is at schema 99, this burstctl reads [0-9]+ to [0-9]+: upgrade burstctl" err
	ok $? "$verb refuses a newer schema, naming both versions"
done
[ "$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$db2")" = 99 ]
ok $? "... and does not change the file's version"

done_testing

#!/usr/bin/env bash
# tests/cli/test_state_backup.sh - burstctl state backup FILE (TAP, no
# Slurm): a copy of agent.db taken while a writer keeps writing is whole
# (integrity_check), one moment of it (a writer that adds rows two at a time
# in one transaction leaves an even count in every copy), a single file
# (no -wal), 0600, and reads back as the agent's state (burstctl nodes on a
# StateDir that holds the copy: the documented restore). A copy that cannot
# be written leaves nothing behind and the old FILE as it was.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
F="$build/tests/unit/state_fixture"
PY=/usr/bin/python3
tmp=$(mktemp -d)
writer=
cleanup() { [ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
. "$src/tests/integration/tap.sh"
[ -x "$F" ] || bail "no $F (make check TESTS= builds it)"

state="$tmp/state" db="$tmp/state/agent.db" conf="$tmp/burst.conf"
mkdir -p "$state/spool" "$tmp/backups"
chmod 755 "$state"
cat >"$conf" <<CONF
StateDir=$state
Provider=local Type=local Bridge=burstbr0 Address=10.77.0.1/24
NodeSet=cpu Nodes=burst-[1-3] Partition=burst InstanceTypes=local.host
CONF
for n in burst-1 burst-2 burst-3; do "$F" "$db" ensure $n cpu || bail "state_fixture"; done
"$F" "$db" move burst-2 '*' requested "detail=resume" || bail "state_fixture"
"$B" -c "$conf" nodes >"$tmp/nodes.before" 2>&1 || bail "burstctl nodes"

# a writer beside the backups, as the agent is: rows two at a time, in WAL
cat >"$tmp/writer.py" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("CREATE TABLE IF NOT EXISTS t_pairs (n INTEGER)")
i = 0
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO t_pairs VALUES (?)", (i,))
    c.execute("INSERT INTO t_pairs VALUES (?)", (i,))
    c.execute("COMMIT")
    i += 1
PY
"$PY" "$tmp/writer.py" "$db" "$tmp/writing" "$tmp/stop" &
writer=$!
for i in $(seq 100); do [ -e "$tmp/writing" ] && break; sleep 0.1; done
[ -e "$tmp/writing" ]; ok $? "a writer is writing agent.db"
bad=0
for k in 1 2 3 4 5; do
	"$B" -c "$conf" state backup "$tmp/backups/b$k.db" >"$tmp/out" 2>"$tmp/err" || { bad=1; cat "$tmp/err"; }
	sleep 0.2
done
touch "$tmp/stop"; wait "$writer"; writer=
[ $bad = 0 ] && grep -q "^$tmp/backups/b5.db: the agent's state ($db) as of " "$tmp/out"
ok $? "five backups while it writes, each exit 0, saying what was copied" "$tmp/err" "$tmp/out"
ok=0 counts=
for k in 1 2 3 4 5; do
	f="$tmp/backups/b$k.db"
	r=$("$PY" -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(c.execute("PRAGMA integrity_check").fetchone()[0], c.execute("PRAGMA journal_mode").fetchone()[0],
      c.execute("SELECT count(*) FROM t_pairs").fetchone()[0], c.execute("SELECT count(*) FROM nodes").fetchone()[0])' "$f")
	counts="$counts $r;"
	set -- $r
	[ "$1" = ok ] && [ "$2" = delete ] && [ $(($3 % 2)) = 0 ] && [ "$4" = 3 ] &&
		[ "$(stat -c %a "$f")" = 600 ] && [ ! -e "$f-wal" ] && [ ! -e "$f-journal" ] || ok=1
done
[ $ok = 0 ]; ok $? "each copy is whole, one file (journal_mode delete), 0600, an even count of the writer's rows, 3 nodes:$counts"
[ -z "$(ls "$tmp/backups" | grep -v '^b[1-5]\.db$')" ]
ok $? "nothing else is left in the backups' directory ($(ls "$tmp/backups" | tr '\n' ' '))"
# (a copy from later than another has at least as many rows)
n1=$(echo "$counts" | cut -d';' -f1 | awk '{ print $3 }') n5=$(echo "$counts" | cut -d';' -f5 | awk '{ print $3 }')
[ "$n5" -gt "$n1" ]; ok $? "the copies follow the writer ($n1 rows in the first, $n5 in the last)"

# the restore the guide documents: the agent stopped, the copy in place
state2="$tmp/state2" conf2="$tmp/burst2.conf"
mkdir -p "$state2/spool" && chmod 755 "$state2"
install -m 0600 "$tmp/backups/b3.db" "$state2/agent.db"
sed "s|^StateDir=.*|StateDir=$state2|" "$conf" >"$conf2"
"$B" -c "$conf2" nodes >"$tmp/nodes.after" 2>&1
# (the 7th column is an age: later here)
diff <(awk '{ $7 = ""; print }' "$tmp/nodes.before") <(awk '{ $7 = ""; print }' "$tmp/nodes.after") >"$tmp/diff" &&
	grep -q '^burst-2 .* requested ' "$tmp/nodes.after"
ok $? "a restored copy is the agent's state: burstctl nodes shows the same" "$tmp/diff"

# a copy that cannot be written: nothing left, the old file kept
cp "$tmp/backups/b1.db" "$tmp/keep.db"
chmod 555 "$tmp/backups"
as_user=()
[ "$(id -u)" -eq 0 ] && { chmod 755 "$tmp"; as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups); chmod 644 "$db"; }
"${as_user[@]}" "$B" -c "$conf" state backup "$tmp/backups/b1.db" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && grep -q "^burstctl: state backup: $tmp/backups/b1.db: cannot make a file in its directory: Permission denied ($tmp/backups/b1.db is untouched; nothing was written)$" "$tmp/err" &&
	cmp -s "$tmp/keep.db" "$tmp/backups/b1.db" && [ -z "$(ls "$tmp/backups" | grep -v '^b[1-5]\.db$')" ]
ok $? "an unwritable directory: exit $rc, the reason, the old copy as it was, nothing left" "$tmp/err"
chmod 755 "$tmp/backups"
"$B" -c "$conf" state backup >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "usage: burstctl \[-c burst.conf\] state backup FILE" "$tmp/err"
ok $? "state without backup FILE: exit $rc, usage" "$tmp/err"
done_testing

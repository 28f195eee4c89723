#!/usr/bin/env bash
# tests/cli/bless.sh - `burstctl bless` end to end (TAP): --kernel appends to
# StateDir/blessed-kernels atomically and once, --from takes the kernel of a
# node's latest admitted record in the agent's database, --driver appends to
# StateDir/blessed-drivers, --list shows burst.conf's and the files' entries.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
S="$src/tests/fixtures/sysroots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/err"
F="$tmp/state/blessed-kernels"
mkdir "$tmp/state"
cat >"$tmp/burst.conf" <<EOF
StateDir=$tmp/state
BlessedKernels=6.1.0-18-amd64
NodeSet=gpu Nodes=g-[1-2] InstanceTypes=p5.48xlarge BlessedKernels=6.5.0-1018-aws:7bd50ae764b5d8e42e465245570a5c70fe958de3
EOF
export BURST_CONF="$tmp/burst.conf"

"$B" bless --kernel 5.15.0-91-generic:B0BF2A76 >"$tmp/out" 2>"$tmp/err"
ok $? "bless --kernel exits 0"
grep -qx '5.15.0-91-generic:B0BF2A76' "$F"
ok $? "the entry is in StateDir/blessed-kernels" "$F"
[ "$(stat -c %a "$F")" = 644 ]
ok $? "the file has mode 0644 ($(stat -c %a "$F"))"
"$B" bless --kernel 5.15.0-91-generic:b0bf2a76 >"$tmp/out" 2>"$tmp/err"
ok $? "blessing it again exits 0"
grep -q 'already blessed' "$tmp/out"
ok $? "and says it is already blessed" "$tmp/out"
[ "$(grep -c '^5.15.0-91-generic' "$F")" = 1 ]
ok $? "no duplicate" "$F"
! ls -a "$tmp/state" | grep -q '^\.blessed-kernels\.'
ok $? "no temporary file is left behind"

# --from: the latest ADMITTED record of the node; a later rejected one does not count
python3 - "$tmp/state/agent.db" "$S" >"$tmp/err" 2>&1 <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE records (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL,"
           " node TEXT NOT NULL, instance TEXT, provenance_id TEXT NOT NULL,"
           " decision TEXT NOT NULL, record TEXT NOT NULL)")
def add(node, fixture, decision):
    rec = open(sys.argv[2] + "/" + fixture + ".expected.json").read()
    db.execute("INSERT INTO records(time,node,instance,provenance_id,decision,record) VALUES(1,?,?,?,?,?)",
               (node, "i-1", "x", decision, rec))
add("burst-1", "a100x8", "admitted")
add("burst-1", "a10gx4", "admitted")
add("burst-1", "h100x8-missing1", "kernel 6.5.0-1018-aws is not blessed")
db.execute("PRAGMA user_version=2")  # a schema burstctl reads (lib/state/views.h)
db.commit()
PY
ok $? "made an agent database"
chmod 0444 "$tmp/state/agent.db"
sum=$(sha256sum "$tmp/state/agent.db")
"$B" bless --from burst-1 >"$tmp/out" 2>"$tmp/err"
ok $? "bless --from burst-1 exits 0"
grep -q '^5.15.0-1051-aws:a218fe16855581639c165ab4f6d33586e2200c57  # from burst-1$' "$F"
ok $? "the kernel of burst-1's latest admitted record (a10gx4) is blessed" "$F"
! grep -q '6.5.0-1018-aws' "$F"
ok $? "not the kernel of its later rejected record" "$F"
[ "$(sha256sum "$tmp/state/agent.db")" = "$sum" ]
ok $? "the database is opened read-only (unchanged)"
"$B" bless --from burst-9 >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'no admitted record of node burst-9' "$tmp/err"
ok $? "a node without an admitted record: exit 1 and a message"

"$B" bless --list >"$tmp/out" 2>"$tmp/err"
ok $? "bless --list exits 0"
grep -q "^6.1.0-18-amd64	$tmp/burst.conf (global BlessedKernels=)" "$tmp/out" &&
	grep -q "^6.5.0-1018-aws:7bd50ae764b5d8e42e465245570a5c70fe958de3	$tmp/burst.conf:3 (NodeSet gpu)" "$tmp/out" &&
	grep -q "^5.15.0-91-generic:B0BF2A76	$F" "$tmp/out" &&
	grep -q "^5.15.0-1051-aws:a218fe16855581639c165ab4f6d33586e2200c57	$F" "$tmp/out"
ok $? "--list shows burst.conf's global and node set entries and the file's" "$tmp/out"
[ "$(wc -l <"$tmp/out")" = 4 ]
ok $? "and nothing else" "$tmp/out"

"$B" bless --kernel '6.1.0 amd64' >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q 'is not RELEASE\[:BUILDID\]' "$tmp/err"
ok $? "a malformed kernel is a usage error"
"$B" bless --kernel 6.1.0:xyz >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ]
ok $? "a build-id must be hex"
"$B" bless >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q 'give one of --kernel, --driver, --from, --from-report, --list' "$tmp/err"
ok $? "bless without an action is a usage error"
"$B" bless --state-dir "$tmp/other" --kernel 6.1.0 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "cannot lock $tmp/other/blessed-kernels.lock" "$tmp/err"
ok $? "a missing state directory is named"
"$B" -c "$tmp/burst.conf" bless --state-dir "$tmp/state" --kernel 6.2.0 >"$tmp/out" 2>"$tmp/err" &&
	grep -qx '6.2.0' "$F"
ok $? "options before the verb (-c) and --state-dir work"
! grep -q '^note:' "$tmp/out"
ok $? "no note when burst.conf blesses kernels already" "$tmp/out"
echo "ClusterName=x" >"$tmp/empty.conf"
mkdir "$tmp/fresh"
BURST_CONF="$tmp/empty.conf" "$B" bless --state-dir "$tmp/fresh" --kernel 6.2.0 >"$tmp/out" 2>"$tmp/err" &&
	grep -q '^note: no kernel was blessed before, so any kernel was admitted; from now on only blessed kernels are' "$tmp/out"
ok $? "the first blessed kernel says that from now on only blessed kernels are admitted" "$tmp/out" "$tmp/err"
# --driver: StateDir/blessed-drivers, the same way
D="$tmp/state/blessed-drivers"
"$B" bless --driver nvidia=550.54.15 >"$tmp/out" 2>"$tmp/err"
ok $? "bless --driver exits 0" "$tmp/err"
grep -qx 'nvidia=550.54.15' "$D" && [ "$(stat -c %a "$D")" = 644 ]
ok $? "the entry is in StateDir/blessed-drivers, mode 0644" "$D"
grep -q "^blessed nvidia=550.54.15 ($D)$" "$tmp/out" &&
	grep -q '^note: no version of driver nvidia was blessed before, so any was admitted; from now on only blessed versions are' "$tmp/out"
ok $? "it says so, and that nvidia is now restricted" "$tmp/out"
"$B" bless --driver nvidia=550.54.15 >"$tmp/out" 2>"$tmp/err" && grep -q 'already blessed' "$tmp/out" &&
	[ "$(grep -c '^nvidia=' "$D")" = 1 ]
ok $? "blessing it again: already blessed, no duplicate" "$tmp/out"
"$B" bless --driver nvidia=535.161.07 >"$tmp/out" 2>"$tmp/err" && ! grep -q '^note:' "$tmp/out" &&
	grep -qx 'nvidia=535.161.07' "$D"
ok $? "a second version of nvidia: no note" "$tmp/out"
"$B" bless --driver efa=2.10.0g >"$tmp/out" 2>"$tmp/err"
ok $? "another driver"
! grep -q 'blessed-kernels' "$D" && ! grep -q 'nvidia=' "$F"
ok $? "drivers and kernels stay in their own files"
"$B" bless --driver 'nvidia 550' >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "'nvidia 550' is not NAME=VERSION" "$tmp/err"
ok $? "a malformed driver is a usage error" "$tmp/err"
"$B" bless --driver 'nvidia=$(reboot)' >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ]
ok $? "shell characters in a version are refused"
cat >"$tmp/drivers.conf" <<EOF
StateDir=$tmp/state
BlessedDrivers=mlx5_core=23.10-1.1.9
NodeSet=gpu Nodes=g-[1-2] InstanceTypes=p5.48xlarge BlessedDrivers=nvidia=550.54.15
EOF
BURST_CONF="$tmp/drivers.conf" "$B" bless --driver mlx5_core=24.01-0.3.3 >"$tmp/out" 2>"$tmp/err" &&
	! grep -q '^note:' "$tmp/out"
ok $? "no note when burst.conf blesses a version of that driver already" "$tmp/out"
BURST_CONF="$tmp/drivers.conf" "$B" bless --list >"$tmp/out" 2>"$tmp/err"
ok $? "bless --list with drivers exits 0" "$tmp/err"
grep -q "^mlx5_core=23.10-1.1.9	$tmp/drivers.conf (global BlessedDrivers=)$" "$tmp/out" &&
	grep -q "^nvidia=550.54.15	$tmp/drivers.conf:3 (NodeSet gpu)$" "$tmp/out" &&
	grep -q "^nvidia=535.161.07	$D$" "$tmp/out" && grep -q "^efa=2.10.0g	$D$" "$tmp/out" &&
	grep -q "^mlx5_core=24.01-0.3.3	$D$" "$tmp/out"
ok $? "--list shows burst.conf's drivers and the file's" "$tmp/out"
echo 'nvidia 1' >>"$D"
"$B" bless --driver gdrdrv=2.4 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] && grep -q "blessed-drivers:[0-9]*: 'nvidia 1' is not NAME=VERSION" "$tmp/err" && ! grep -q gdrdrv "$D"
ok $? "a broken blessed-drivers file is named (file:line) and left alone" "$tmp/err"
done_testing

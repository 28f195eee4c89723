#!/usr/bin/env bash
# tests/cli/provenance.sh - `burst-node provenance` end to end (TAP): the
# fixture sysroots give their reviewed expected records byte for byte, the
# live record of this machine is stable, and errors are clear.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
N="$build/burst-node/burst-node"
S="$src/tests/fixtures/sysroots"
export BURST_PCI_TABLE="$src/share/pci/accelerators.csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/err"

for f in a100x8 a10gx4 h100x8-missing1 host; do
	"$N" provenance --sysroot "$S/$f" --pretty >"$tmp/$f.json" 2>"$tmp/err"
	ok $? "provenance --sysroot $f exits 0"
	cmp -s "$tmp/$f.json" "$S/$f.expected.json"
	ok $? "$f: the record equals $f.expected.json byte for byte" "$tmp/err"
done

# the id is the sha256 of the compact form (checked with sha256sum, not the code)
"$N" provenance --sysroot "$S/a100x8" >"$tmp/compact" 2>"$tmp/err"
ok $? "compact record of a100x8"
want=$(printf '%s' "$(cat "$tmp/compact")" | sha256sum | cut -d' ' -f1)
got=$("$N" provenance --sysroot "$S/a100x8" --id 2>"$tmp/err")
[ "$got" = "$want" ]
ok $? "--id is sha256 of the compact record (got $got, want $want)"
# canonical form, checked independently: Python's sorted, compact dump of
# the same document gives the same bytes, and the pretty form the same data
python3 - "$tmp/compact" "$tmp/a100x8.json" >"$tmp/err" 2>&1 <<'PY'
import json, sys
c = open(sys.argv[1]).read().rstrip('\n')
assert json.dumps(json.loads(c), sort_keys=True, separators=(',', ':'), ensure_ascii=False) == c, 'not canonical'
p = open(sys.argv[2]).read()
assert json.dumps(json.loads(p), sort_keys=True, indent=2, ensure_ascii=False) + '\n' == p, 'pretty differs'
PY
ok $? "compact and pretty forms equal Python's sorted json.dumps of the same record"
grep -q '"count":8' "$tmp/compact" && grep -q '"A100-40GB":8' "$tmp/compact"
ok $? "a100x8: count 8 and 8 x A100-40GB"
"$N" provenance --sysroot "$S/h100x8-missing1" | grep -q '"count":7,'
ok $? "h100x8-missing1: count 7"

# identity from the options changes the id
id2=$("$N" provenance --sysroot "$S/a100x8" --node burst-p4d-1 --instance i-0123 \
	--instance-type p4d.24xlarge --provider aws --region us-east-1 --image ami-1 \
	--catalog-version 2026.11.22 --id)
[ -n "$id2" ] && [ "$id2" != "$got" ]
ok $? "identity options change the id"
"$N" provenance --sysroot "$S/a100x8" --node burst-p4d-1 --region us-east-1 | grep -q '"node":"burst-p4d-1","provider":null,"region":"us-east-1"'
ok $? "identity options appear in the record"

# the live record: produced, identical across two runs, 64 hex chars of id
"$N" provenance >"$tmp/live1" 2>"$tmp/err"
ok $? "live record exits 0"
"$N" provenance >"$tmp/live2" 2>>"$tmp/err"
cmp -s "$tmp/live1" "$tmp/live2"
ok $? "two live records are identical"
id=$("$N" provenance --id)
[[ "$id" =~ ^[0-9a-f]{64}$ ]]
ok $? "live id is 64 hex characters ($id)"

# the committed made-up sysroots are what the generator makes
python3 "$src/tools/make-fixture-sysroots.py" "$tmp/gen" >"$tmp/err" 2>&1 &&
	for f in a100x8 a10gx4 h100x8-missing1; do
		diff -r --no-dereference "$tmp/gen/$f" "$S/$f" >>"$tmp/err" 2>&1 || exit 1
	done
ok $? "tools/make-fixture-sysroots.py makes the committed fixture sysroots again"

# the capture script copies everything the collector reads: the record of a
# capture of this machine is the live record, less the programs' output
sh "$src/tools/capture-sysroot.sh" "$tmp/cap" 2>"$tmp/err" &&
	"$N" provenance --sysroot "$tmp/cap" >"$tmp/cap.json" 2>>"$tmp/err" &&
	python3 - "$tmp/cap.json" "$tmp/live1" >>"$tmp/err" 2>&1 <<'PY'
import json, sys
cap, live = (json.load(open(f)) for f in sys.argv[1:3])
assert cap['software']['ch_run'] is None and cap['software']['slurmd'] is None
live['software']['ch_run'] = live['software']['slurmd'] = None
assert cap == live, [k for k in live if cap.get(k) != live[k]]
PY
ok $? "the record of a capture of this machine equals the live record (programs aside)"

# from the build tree, without BURST_PCI_TABLE, the source tree's table is used
(unset BURST_PCI_TABLE; "$N" provenance --sysroot "$S/a10gx4" --pretty) >"$tmp/out" 2>"$tmp/err"
cmp -s "$tmp/out" "$S/a10gx4.expected.json"
ok $? "from the build tree burst-node finds the source tree's accelerator table"

# --admitted: the record the node joined with (StateDir/nodes/NODE/provenance.json),
# not collected anew; its id is the admission's
mkdir -p "$tmp/sd/nodes/g-1"
cp "$S/a10gx4.expected.json" "$tmp/sd/nodes/g-1/provenance.json"
"$N" provenance --admitted --state-dir "$tmp/sd" --node g-1 --pretty --sysroot "$S/a100x8" >"$tmp/out" 2>"$tmp/err" &&
	cmp -s "$tmp/out" "$S/a10gx4.expected.json"
ok $? "provenance --admitted prints the record the node was admitted with (not the sysroot's)" "$tmp/err"
want=$("$N" provenance --sysroot "$S/a10gx4" --id)
got=$("$N" provenance --admitted --record "$tmp/sd/nodes/g-1/provenance.json" --id 2>"$tmp/err")
[ -n "$want" ] && [ "$got" = "$want" ]
ok $? "... and its id is the id the node reported at join ($got)"
CLOUD_PROVENANCE_ID=$want "$N" provenance --admitted --state-dir "$tmp/sd" --node g-1 --id >"$tmp/out" 2>"$tmp/err"
ok $? "... which the admission in a job's task (CLOUD_PROVENANCE_ID) confirms" "$tmp/err"
CLOUD_PROVENANCE_ID=$(printf '%064d' 0) "$N" provenance --admitted --state-dir "$tmp/sd" --node g-1 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "g-1: $tmp/sd/nodes/g-1/provenance.json is not the record of this node's admission: its id is $want" "$tmp/err" && [ ! -s "$tmp/out" ]
ok $? "a record that is not the admission's (CLOUD_PROVENANCE_ID) is refused, exit 1" "$tmp/err"
"$N" provenance --admitted --state-dir "$tmp/sd" --node g-2 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "g-2: cannot read the record the node was admitted with, $tmp/sd/nodes/g-2/provenance.json" "$tmp/err"
ok $? "no admitted record: exit 1, naming where it was looked for" "$tmp/err"
"$N" provenance --state-dir "$tmp/sd" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q usage "$tmp/err"
ok $? "--state-dir without --admitted is a usage error" "$tmp/err"

# errors
"$N" provenance --sysroot "$S/host" --pci-table "$tmp/none.csv" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "cannot read the accelerator table $tmp/none.csv" "$tmp/err"
ok $? "a missing accelerator table exits 1 naming it"
"$N" provenance --sysroot "$tmp/nonexistent" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "cannot read the sysroot $tmp/nonexistent" "$tmp/err"
ok $? "an unreadable sysroot exits 1 with a clear message"
"$N" provenance --bogus >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q usage "$tmp/err"
ok $? "an unknown option exits 2 with the usage"

done_testing

#!/usr/bin/env bash
# tests/cli/health.sh - `burst-node health --dry-run` (TAP, no Slurm): the
# verdict of a node's fixture sysroot against an admitted record, the record
# path from StateDir, the node set's MemoryTolerance, drivers changed since
# admission or not blessed, and errors.
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
export BURST_CONF="$tmp/none.conf"

# the a10gx4 node, and the same node after a kernel rebuild (same release,
# another GNU build-id in /sys/kernel/notes)
cp -a "$S/a10gx4" "$tmp/good"
cp -a "$S/a10gx4" "$tmp/rebuilt"
chmod -R u+w "$tmp/good" "$tmp/rebuilt"   # the source tree may be read-only (distcheck)
chmod -R u+w "$tmp/good" "$tmp/rebuilt"   # the source tree may be read-only (distcheck)
python3 - "$tmp/rebuilt/sys/kernel/notes" <<'PY' >"$tmp/err" 2>&1
import sys
p = sys.argv[1]
d = open(p, 'rb').read()
old = bytes.fromhex('a218fe16855581639c165ab4f6d33586e2200c57')
assert d.count(old) == 1
open(p, 'wb').write(d.replace(old, bytes.fromhex('00112233445566778899aabbccddeeff00112233')))
PY
ok $? "made a sysroot with a rebuilt kernel"
mkdir -p "$tmp/state/nodes/gpu-1"
"$N" provenance --sysroot "$tmp/good" --node gpu-1 >"$tmp/state/nodes/gpu-1/provenance.json" 2>"$tmp/err"
ok $? "the admitted record of gpu-1"

"$N" health --dry-run --node gpu-1 --state-dir "$tmp/state" --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
ok $? "the same node is healthy (exit 0)" "$tmp/out" "$tmp/err"
grep -q "^gpu-1: healthy: matches its admitted record $tmp/state/nodes/gpu-1/provenance.json$" "$tmp/out"
ok $? "the record is StateDir/nodes/NODE/provenance.json" "$tmp/out"

"$N" health --dry-run --node gpu-1 --state-dir "$tmp/state" --sysroot "$tmp/rebuilt" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ]
ok $? "a rebuilt kernel is unhealthy (exit 1)" "$tmp/out" "$tmp/err"
grep -q "^gpu-1: unhealthy: kernel build-id a218fe16855581639c165ab4f6d33586e2200c57 admitted, 00112233445566778899aabbccddeeff00112233 now$" "$tmp/out"
ok $? "naming both build-ids" "$tmp/out"

"$N" health --dry-run --node gpu-1 --record "$S/h100x8-missing1.expected.json" --sysroot "$S/a100x8" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'accelerators: 7 x H100 admitted, 0 now (missing 0000:53:00.0 ' "$tmp/out" &&
	grep -q 'kernel release 6.5.0-1018-aws admitted, 5.15.0-91-generic now' "$tmp/out"
ok $? "--record: another machine altogether (GPUs and kernel)" "$tmp/out"

# memory: the admitted record says 10% more than the node has now
python3 - "$tmp/state/nodes/gpu-1/provenance.json" "$tmp/more.json" <<'PY' >"$tmp/err" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
r['memory']['total_bytes'] = int(r['memory']['total_bytes'] * 1.10)
json.dump(r, open(sys.argv[2], 'w'))
PY
"$N" health --dry-run --node gpu-1 --record "$tmp/more.json" --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'memory 207.3 GiB admitted, 188.4 GiB now (MemoryTolerance=5%)' "$tmp/out"
ok $? "memory shrunk beyond the default 5%" "$tmp/out"
cat >"$tmp/burst.conf" <<EOF
StateDir=$tmp/state
MemoryTolerance=2%
NodeSet=gpu Nodes=gpu-[1-2] InstanceTypes=g5.12xlarge MemoryTolerance=15%
EOF
"$N" health --dry-run --config "$tmp/burst.conf" --node gpu-1 --record "$tmp/more.json" --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
ok $? "the node set's MemoryTolerance=15% admits it" "$tmp/out" "$tmp/err"
mkdir -p "$tmp/state/nodes/other-1"
cp "$tmp/more.json" "$tmp/state/nodes/other-1/provenance.json"
"$N" health --dry-run --config "$tmp/burst.conf" --node other-1 --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'MemoryTolerance=2%' "$tmp/out"
ok $? "a node outside the node set gets the global MemoryTolerance and StateDir from burst.conf" "$tmp/out" "$tmp/err"

"$N" health --dry-run --node gpu-9 --state-dir "$tmp/state" --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && grep -q 'gpu-9: no admitted record' "$tmp/out"
ok $? "a node without an admitted record is not a burst node: exit 0" "$tmp/out"
echo '{"kernel": ' >"$tmp/bad.json"
"$N" health --dry-run --node gpu-1 --record "$tmp/bad.json" --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 3 ] && grep -q "cannot read the admitted record $tmp/bad.json" "$tmp/err"
ok $? "an unreadable record is an error (exit 3), not a verdict" "$tmp/err"
echo '{"kernel": {}}' >"$tmp/bad.json"
"$N" health --dry-run --node gpu-1 --record "$tmp/bad.json" --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 3 ] && grep -q "the admitted record has no memory section" "$tmp/err"
ok $? "a record that is not a provenance record is an error" "$tmp/err"
"$N" health --bogus >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ]
ok $? "an unknown option is a usage error"
# drivers: gpu-1 was admitted running NVIDIA's 535.161.07 (a10gx4's
# /proc/driver/nvidia/version); the driver updated in place is a change
cp -a "$tmp/good" "$tmp/newdrv"
sed -i 's/535\.161\.07/550.54.15/' "$tmp/newdrv/proc/driver/nvidia/version"
"$N" health --dry-run --node gpu-1 --state-dir "$tmp/state" --sysroot "$tmp/newdrv" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q '^gpu-1: unhealthy: driver nvidia 535.161.07 admitted, 550.54.15 now$' "$tmp/out"
ok $? "a driver updated since admission is unhealthy, naming both versions" "$tmp/out" "$tmp/err"
rm -rf "$tmp/newdrv/sys/module/lustre"
sed -i '/^lustre /d' "$tmp/newdrv/proc/modules"
"$N" health --dry-run --node gpu-1 --state-dir "$tmp/state" --sysroot "$tmp/newdrv" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q 'driver lustre 2.15.4 admitted, not loaded now' "$tmp/out"
ok $? "a driver unloaded since admission (the Lustre client) is unhealthy" "$tmp/out" "$tmp/err"
# the drivers now against the blessed versions: burst.conf's, then the file's
cat >"$tmp/drivers.conf" <<EOF
StateDir=$tmp/state
BlessedDrivers=nvidia=550.54.15
EOF
"$N" health --dry-run --config "$tmp/drivers.conf" --node gpu-1 --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q '^gpu-1: unhealthy: driver nvidia 535.161.07 is not blessed (blessed: 550.54.15; bless it with burstctl bless --driver nvidia=535.161.07, or see BlessedDrivers=)$' "$tmp/out"
ok $? "a node whose driver is not blessed is unhealthy, with the version in the reason" "$tmp/out" "$tmp/err"
echo 'nvidia=535.161.07' >"$tmp/state/blessed-drivers"
"$N" health --dry-run --config "$tmp/drivers.conf" --node gpu-1 --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
ok $? "blessed in StateDir/blessed-drivers: healthy" "$tmp/out" "$tmp/err"
echo 'nvidia 535' >"$tmp/state/blessed-drivers"
"$N" health --dry-run --config "$tmp/drivers.conf" --node gpu-1 --sysroot "$tmp/good" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q "blessed-drivers:1: 'nvidia 535' is not NAME=VERSION" "$tmp/err"
ok $? "a broken blessed-drivers file is named and blesses nothing" "$tmp/out" "$tmp/err"
rm -f "$tmp/state/blessed-drivers"
"$N" health --dry-run --config "$tmp/drivers.conf" --node gpu-1 --sysroot "$tmp/newdrv" >"$tmp/out" 2>"$tmp/err"
[ $? = 1 ] && grep -q '^gpu-1: unhealthy: driver lustre 2.15.4 admitted, not loaded now; driver nvidia 535.161.07 admitted, 550.54.15 now$' "$tmp/out"
ok $? "the blessed 550.54.15 is still a change from the admitted record" "$tmp/out" "$tmp/err"
done_testing

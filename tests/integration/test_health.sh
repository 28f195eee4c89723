#!/usr/bin/env bash
# test_health.sh - `burst-node health` against a real Slurm 22.05: a static
# node whose kernel build-id changed since its admission is drained with a
# "burst: health: kernel build-id ..." reason, resumed when it matches again,
# and a node an admin drained for another reason is left drained. Each run
# must take well under Slurm's fixed 60 s for a HealthCheckProgram.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
N="$build/burst-node/burst-node"
S="$src/tests/fixtures/sysroots"
[ -x "$N" ] || bail "no burst-node at $N (build first)"
export BURST_PCI_TABLE="$src/share/pci/accelerators.csv"
node=hc-1

SLURM_CONF_NODES="NodeName=$node NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=health Nodes=$node State=UP Default=YES"
# slurmd runs health itself (every 2 s) once $LAB/hc-sysroot names a sysroot;
# until then the wrapper does nothing, and the runs below are the test's own
hc="/var/tmp/burst-health-$$.sh"
SLURM_CONF_EXTRA="HealthCheckProgram=$hc
HealthCheckInterval=2
HealthCheckNodeState=ANY"
lab_pre_ctld() {
	# run by slurmd in its node's namespaces, which may not see the tree (a
	# private /tmp): burst-node and its table as copies in the lab
	local nb
	nb=$(lab_node_image) || return 1
	cat >"$hc" <<EOF
#!/bin/sh
[ -s "$LAB/hc-sysroot" ] || exit 0
export BURST_CONF="$LAB/etc/burst.conf" BURST_PCI_TABLE="$LAB/image/accelerators.csv" SLURM_CONF="$SLURM_CONF"
exec "$nb" health --node $node --sysroot "\$(cat "$LAB/hc-sysroot")" >>"$LAB/log/health.log" 2>&1
EOF
	chmod 755 "$hc"
}
lab_up || { rm -f "$hc"; bail "the lab did not start"; }
trap 'rm -f "$hc"; lab_down' EXIT
export BURST_CONF="$LAB/etc/burst.conf"
cat >"$BURST_CONF" <<EOF
StateDir=$LAB/burst
EOF
slurmd -f "$SLURM_CONF" -N "$node" >"$LAB/log/slurmd-start.log" 2>&1 || bail "slurmd -N $node did not start"
lab_wait_file "$LAB/pid/slurmd-$node.pid" 10 || bail "no slurmd pid file"
lab_record slurmd "$(cat "$LAB/pid/slurmd-$node.pid")"
lab_wait_node "$node" idle 30
ok $? "the static node $node registered (idle)" "$LAB/log/slurmd-$node.log"

# the node's admitted record, from a fixture sysroot; and the same node after
# a kernel rebuild: same release, another GNU build-id in /sys/kernel/notes
cp -a "$S/a10gx4" "$LAB/good" && cp -a "$S/a10gx4" "$LAB/rebuilt" &&
	chmod -R u+w "$LAB/good" "$LAB/rebuilt" || bail "cannot copy the sysroot"
python3 - "$LAB/rebuilt/sys/kernel/notes" <<'PY' || bail "cannot patch the build-id"
import sys
p = sys.argv[1]
d = open(p, 'rb').read()
old = bytes.fromhex('a218fe16855581639c165ab4f6d33586e2200c57')
assert d.count(old) == 1
open(p, 'wb').write(d.replace(old, bytes.fromhex('00112233445566778899aabbccddeeff00112233')))
PY
mkdir -p "$LAB/burst/nodes/$node"
"$N" provenance --sysroot "$LAB/good" --node "$node" >"$LAB/burst/nodes/$node/provenance.json" 2>"$LAB/err"
ok $? "wrote the admitted record StateDir/nodes/$node/provenance.json" "$LAB/err"

reason() { scontrol show node "$node" 2>/dev/null | sed -n 's/^ *Reason=\(.*\) \[.*\]$/\1/p'; }
health() {   # SYSROOT: runs health as slurmd would, timed (ms in $ms)
	local t0 t1 st
	t0=$(date +%s%N)
	"$N" health --node "$node" --sysroot "$1" >"$LAB/out" 2>"$LAB/err"
	st=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	return $st
}

health "$LAB/rebuilt"
[ $? = 1 ]
ok $? "a rebuilt kernel: health exits 1" "$LAB/out" "$LAB/err"
[ "$ms" -lt 1000 ]
ok $? "in well under a second (${ms} ms; Slurm allows 60 s)"
lab_wait_node "$node" drain 10
ok $? "the node is drained ($(lab_node_state $node))"
r=$(reason)
[[ "$r" == "burst: health: kernel build-id a218fe16855581639c165ab4f6d33586e2200c57 admitted, 00112233445566778899aabbccddeeff00112233 now" ]]
ok $? "with reason 'burst: health: kernel build-id ...' (got '$r')"

health "$LAB/rebuilt"
[ $? = 1 ] && [ "$(reason)" = "$r" ] && [ "$(lab_node_state $node)" = drain ]
ok $? "run again: still drained, same reason" "$LAB/out" "$LAB/err"

health "$LAB/good"
ok $? "the kernel matches again: health exits 0" "$LAB/out" "$LAB/err"
[ "$ms" -lt 1000 ]
ok $? "in well under a second (${ms} ms)"
lab_wait_node "$node" idle 10
ok $? "the node is resumed (idle)"
# Slurm clears a resumed node's reason only through the accounting storage
# plugin, and since 23.11 not at all with AccountingStorageType=
# accounting_storage/none (the lab's): there the reason stays, unshown by
# sinfo -R, which lists only nodes that are down, drained or failing
if [ "$(lab_slurm_release)" -lt 2311 ]; then
	[ -z "$(reason)" ]
else
	[ -z "$(sinfo -h -R -n "$node" -o %n)" ]
fi
ok $? "and no drain reason is shown (scontrol: '$(reason)'; sinfo -R: '$(sinfo -h -R -n "$node" -o '%n %E')')"

# an admin's drain is not ours to undo, nor to overwrite
scontrol update NodeName="$node" State=DRAIN Reason="disk replacement by admin" >"$LAB/err" 2>&1
ok $? "an admin drains the node for another reason" "$LAB/err"
health "$LAB/good"
ok $? "health of the matching node exits 0" "$LAB/out" "$LAB/err"
sleep 1
[ "$(lab_node_state $node)" = drain ] && [ "$(reason)" = "disk replacement by admin" ]
ok $? "the admin's drain stays, with its reason ($(lab_node_state $node): $(reason))"
health "$LAB/rebuilt"
[ $? = 1 ] && [ "$(reason)" = "disk replacement by admin" ]
ok $? "an unhealthy node drained by an admin keeps the admin's reason" "$LAB/out"
grep -q 'already drained by someone else (disk replacement by admin)' "$LAB/out"
ok $? "and health says so" "$LAB/out"
scontrol update NodeName="$node" State=RESUME >/dev/null 2>&1
lab_wait_node "$node" idle 10
ok $? "the admin resumes it"

# slurmd itself runs it as HealthCheckProgram (with no arguments: the wrapper)
echo "$LAB/rebuilt" >"$LAB/hc-sysroot"
lab_wait_node "$node" drain 15
ok $? "run by slurmd as HealthCheckProgram: the rebuilt node is drained" "$LAB/log/health.log" "$LAB/log/slurmd-$node.log"
[[ "$(reason)" == "burst: health: kernel build-id "* ]]
ok $? "by health ('$(reason)')"
echo "$LAB/good" >"$LAB/hc-sysroot"
lab_wait_node "$node" idle 15
ok $? "run by slurmd: resumed when the kernel matches again" "$LAB/log/health.log"
: >"$LAB/hc-sysroot"

# a record that cannot be read is an error, not a reason to drain
echo '{' >"$LAB/burst/nodes/$node/provenance.json"
health "$LAB/rebuilt"
[ $? = 3 ] && [ "$(lab_node_state $node)" = idle ]
ok $? "an unreadable admitted record: exit 3, node left alone" "$LAB/err"
done_testing

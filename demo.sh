#!/usr/bin/env bash
# demo.sh - the slurm-burst demo. Run as root on Debian 12 from a clean clone:
# installs what it needs, builds, and shows contract resolution on the
# example burst.conf: the ranked candidates of each contract, why the first
# won, and which assumption excluded each near miss.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
. tools/deps.sh
burst_install_deps $BURST_BUILD_DEPS

dir="$top/_build/demo"
echo "== building slurm-burst in $dir"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
if [ ! -f "$dir/Makefile" ]; then
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" >/dev/null)
fi
make -C "$dir" -s -j"$(nproc)" >/dev/null
burstctl="$dir/burst-agent/ctl/burstctl"
conf="$top/etc/burst.conf.example"

run() {
	echo
	echo "\$ burstctl $*"
	"$burstctl" "$@" || true
}

run check-config "$conf"
for c in gpu4-ampere gpu-modern cpu-hpc; do
	run --config "$conf" resolve "$c" --explain --limit 8
done
run select 'accelerator_count>=4 accelerator_architecture=ampere node_provider=aws'
run select 'accelerator_count=4 accelerator_architecture=ampere node_provider=aws node_memory_size<=256G'
run resolve 'accelerator_count>=2,accelerator_architecture>=ampere' --limit 5
run catalog show p4d.24xlarge
echo
echo "== a bad contract fails with the position and a suggestion (exit code 2):"
run select 'acelerator_count>=4,accelerator_architecture=amprere'
echo
echo "demo finished"

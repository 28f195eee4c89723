#!/bin/sh
# capture-sysroot.sh - copy exactly the files `burst-node provenance` reads
# (lib/admit/provenance.c) from a root file system into DEST, so that the record
# can be made again later with --sysroot DEST (tests/fixtures/sysroots/host).
#
#   tools/capture-sysroot.sh DEST [ROOT]      (ROOT defaults to /)
#
# Text files are copied with their content (procfs and sysfs report a size of
# 0, so cp would not do); /sys/kernel/notes is binary and copied as is. PCI
# devices become directories (sysfs has symlinks); their driver link is not
# copied (it points out of the tree, and 'make dist' would drop it): the
# collector reads the driver from uevent's DRIVER= instead. Only the dpkg
# stanzas of the packages the record names are kept. Serial numbers and
# UUIDs are never copied. The result has no symlinks.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DEST [ROOT]" >&2; exit 2; }
dest=$1
root=${2:-}
[ "$root" = / ] && root=

copy() {   # copy PATH: root$PATH -> dest$PATH if readable
	[ -f "$root$1" ] && [ -r "$root$1" ] || return 0
	mkdir -p "$dest$(dirname "$1")"
	cat "$root$1" >"$dest$1" 2>/dev/null || rm -f "$dest$1"
}

for f in /proc/sys/kernel/osrelease /proc/sys/kernel/version /proc/sys/kernel/tainted \
	/proc/sys/kernel/arch /proc/cmdline /proc/modules /proc/cpuinfo /proc/meminfo \
	/sys/kernel/notes /sys/devices/system/cpu/online /etc/os-release /usr/lib/os-release; do
	copy "$f"
done
copy /proc/driver/nvidia/version
for f in /usr/lib/charliecloud/version.txt /usr/lib64/charliecloud/version.txt \
	/usr/local/lib/charliecloud/version.txt /usr/local/lib64/charliecloud/version.txt; do
	copy "$f"
done
# the driver modules of the record's "drivers" section: keep this list the
# same as prov_driver_modules in lib/admit/provenance.c. initstate marks a module
# present even when it declares no version.
for m in nvidia nvidia_uvm nvidia_peermem nvidia_fs gdrdrv amdgpu habanalabs neuron \
	ib_core ib_uverbs rdma_ucm mlx5_core mlx5_ib mlx4_core efa hfi1 irdma bnxt_re \
	cxi_ss1 knem xpmem lustre lnet ko2iblnd mmfs26 mmfslinux tracedev beegfs; do
	[ -d "$root/sys/module/$m" ] || continue
	copy "/sys/module/$m/initstate"
	copy "/sys/module/$m/version"
	# a built-in module has no initstate: keep its directory anyway
	mkdir -p "$dest/sys/module/$m"
done
for f in sys_vendor product_name product_version board_vendor board_name \
	bios_vendor bios_version bios_date; do
	copy "/sys/class/dmi/id/$f"
done
for d in "$root"/sys/bus/pci/devices/*; do
	[ -e "$d" ] || continue
	a=/sys/bus/pci/devices/${d##*/}
	for f in vendor device class subsystem_vendor subsystem_device uevent; do
		copy "$a/$f"
	done
done
for p in "$root"/sys/class/infiniband/*/ports/*; do
	[ -d "$p" ] || continue
	rel=${p#"$root"}
	for f in state rate link_layer; do
		copy "$rel/$f"
	done
done
if [ -r "$root/var/lib/dpkg/status" ]; then
	mkdir -p "$dest/var/lib/dpkg"
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
	     /^Package: (charliecloud-runtime|libpmix2|openmpi-bin|slurmd)\n/' \
		"$root/var/lib/dpkg/status" >"$dest/var/lib/dpkg/status"
fi

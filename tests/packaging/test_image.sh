#!/usr/bin/env bash
# tests/packaging/test_image.sh - contrib/images/provision-node.sh, the node
# image's provisioning (TAP, root): run as the Packer template runs it, in a
# fresh copy of the clean Debian 12 root (tests/packaging/minbase.sh) with
# the .debs of BURST_DEBS (make check-packages: the ones test_packages.sh
# built), and then burst-node from the result: its version and its check
# of what join needs from the image. No daemon starts in the root.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
[ "$(id -u)" -eq 0 ] || bail "run as root (chroot)"
[ -n "${BURST_DEBS:-}" ] && [ -d "$BURST_DEBS" ] || bail "BURST_DEBS=DIR: the .debs (make check-packages sets it)"
. "$src/tests/packaging/minbase.sh"
# not under /tmp: big, and chroot'ed apt needs it on a real file system
tmp=$(mktemp -d /var/tmp/burst-image.XXXXXX)
R="$tmp/root"
cleanup() {
	local m
	for m in $(awk -v r="$R" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")

minbase_root
cp -a "$base" "$R"
ok $? "a fresh copy of the Debian 12 minbase root"
mount --bind /proc "$R/proc" && mount --bind /dev "$R/dev" && mount --bind /sys "$R/sys"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
# what the template uploads: the .debs, the script, the cluster's files
mkdir -p "$R/tmp/slurm-burst/debs"
cp "$BURST_DEBS"/slurm-burst-common_*.deb "$BURST_DEBS"/slurm-burst-node_*.deb \
	"$BURST_DEBS"/slurm-burst-spank_*.deb "$R/tmp/slurm-burst/debs/"
cp "$src/contrib/images/provision-node.sh" "$R/tmp/slurm-burst/"
head -c 1024 /dev/urandom >"$R/tmp/slurm-burst/munge.key"
cat >"$R/tmp/slurm-burst/slurm.conf" <<CONF
ClusterName=image
SlurmctldHost=head
AuthType=auth/munge
NodeName=burst-[1-4] CPUs=2 State=CLOUD
PartitionName=burst Nodes=burst-[1-4]
CONF
in_root() { chroot "$R" env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

in_root env MUNGE_KEY_FILE=/tmp/slurm-burst/munge.key SLURM_CONF_FILE=/tmp/slurm-burst/slurm.conf \
	sh /tmp/slurm-burst/provision-node.sh /tmp/slurm-burst/debs >"$tmp/prov.log" 2>&1
ok $? "provision-node.sh DEBDIR runs to its end in the root" "$tmp/prov.log"
grep -q "provision-node.sh: done: burst-node (slurm-burst) $version, built for Slurm " "$tmp/prov.log"
ok $? "... and ends with burst-node's version ($version)" "$tmp/prov.log"

in_root burst-node --version >"$tmp/out" 2>&1
case $(cat "$tmp/out") in "burst-node (slurm-burst) $version, built for Slurm "[0-9]*) true ;; *) false ;; esac
ok $? "burst-node --version on the PATH (/usr/local/bin): $(cat "$tmp/out")" "$tmp/out"
in_root burst-node check >"$tmp/out" 2>&1
ok $? "burst-node check: the image has what join needs" "$tmp/out"
grep -q "admission plugin" "$tmp/out" && grep -q "/usr/sbin/slurmd" "$tmp/out"
ok $? "... saying what it checked" "$tmp/out"
cmp -s "$R/tmp/slurm-burst/munge.key" "$R/etc/munge/munge.key" &&
	[ "$(in_root stat -c '%U %a' /etc/munge/munge.key)" = "munge 400" ]
ok $? "the cluster's munge key, munge's, 0400"
cmp -s "$R/tmp/slurm-burst/slurm.conf" "$R/etc/slurm/slurm.conf"
ok $? "the cluster's slurm.conf in /etc/slurm"
[ ! -e "$R/etc/systemd/system/multi-user.target.wants/slurmd.service" ] &&
	[ -L "$R/etc/systemd/system/multi-user.target.wants/munge.service" ]
ok $? "slurmd is not started at boot (burst-node join starts it), munged is"
grep -qx 'preserve_hostname: true' "$R/etc/cloud/cloud.cfg.d/90-slurm-burst.cfg" && [ -x "$R/usr/bin/cloud-init" ]
ok $? "cloud-init installed, told to keep the name the user data gives"
in_root dpkg --verify slurm-wlm-basic-plugins >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ]
ok $? "Debian's plugstack.conf untouched (the plugins come through plugstack.conf.d)" "$tmp/out"

# the check fails, saying why, on an image without the admission plugin's file
mv "$R/etc/slurm-burst/plugstack.d/burst-admission.conf" "$tmp/"
in_root burst-node check >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "spank_burst_admission.so" "$tmp/out"
ok $? "without the admission plugin's plugstack file, burst-node check fails (exit $rc) naming the plugin" "$tmp/out"
mv "$tmp/burst-admission.conf" "$R/etc/slurm-burst/plugstack.d/"
done_testing

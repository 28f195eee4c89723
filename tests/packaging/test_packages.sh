#!/usr/bin/env bash
# tests/packaging/test_packages.sh - the packages, as a site gets them (TAP,
# root): the .debs are built in a clean Debian 12 root (debootstrap
# --variant=minbase, cached; each run works on a fresh copy) with the
# commands of the admin guide's "From a clone to packages" and nothing else:
# from a clone of this checkout's HEAD commit (committed work only), `apt-get
# build-dep ./`, `autoreconf -fi`, `./configure`, `make deb` (whose
# dh_auto_test runs the unit tests); from a release tarball (no git
# checkout), the same without the clone and autoreconf. rpmbuild -ta builds
# the RPMs from the `make dist` tarball. The .debs install with apt into
# another fresh copy, where the files, owners, the unit and the plugin are
# checked, and an upgrade and a purge keep the agent's state.
#
# The root is cached under /var/cache/slurm-burst/roots (BURST_ROOTS_DIR) and
# made from the Debian mirror of this host's apt sources (BURST_DEBIAN_MIRROR)
# when missing. rpmbuild runs with --nodeps: Debian has no slurm-devel.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
[ "$(id -u)" -eq 0 ] || bail "run as root (debootstrap, chroot)"
for t in dpkg-buildpackage rpmbuild debootstrap; do
	command -v $t >/dev/null || bail "no $t: apt-get install dpkg-dev debhelper dh-autoreconf rpm debootstrap"
done
suite=bookworm
. "$src/tests/packaging/minbase.sh"
# not under /tmp: big, and chroot'ed apt needs it on a real file system
tmp=$(mktemp -d /var/tmp/burst-pkg.XXXXXX)
R="$tmp/root"
cleanup() {
	local m
	for m in $(awk -v r="$tmp/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
TAP_DIAG="$tmp/log"

# ---- the tarball ----
make -C "$build" dist >"$tmp/log" 2>&1
ok $? "make dist"
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
tarball="$build/slurm-burst-$version.tar.gz"
[ -f "$tarball" ]; ok $? "the tarball slurm-burst-$version.tar.gz" "$tmp/log"
TAP_DIAG="$tmp/none"   # from here on, each check names its own log

# ---- .debs: in a clean root, with the guide's commands only ----
minbase_root
BR="$tmp/build-root"
cp -a "$base" "$BR" && mount --bind /proc "$BR/proc" && mount --bind /dev "$BR/dev" && mount --bind /sys "$BR/sys"
ok $? "a fresh copy of the Debian $suite minbase root to build in"
cp /etc/resolv.conf "$BR/etc/resolv.conf" 2>/dev/null
if commit=$(git -C "$src" rev-parse --verify -q HEAD 2>/dev/null); then
	# a site's clone, of the commit checked out here
	git clone -q --no-checkout "$src" "$BR/root/slurm-burst" >"$tmp/deb.log" 2>&1 &&
		git -C "$BR/root/slurm-burst" checkout -q "$commit" >>"$tmp/deb.log" 2>&1
	ok $? "a clone of ${commit:0:12} in the root" "$tmp/deb.log"
	from="a clone" steps="apt-get build-dep -y ./ && autoreconf -fi && ./configure && make deb"
else
	mkdir -p "$BR/root/slurm-burst" && tar -C "$BR/root/slurm-burst" --strip-components=1 -xzf "$tarball"
	ok $? "the release tarball unpacked in the root (no git checkout here)"
	from="the tarball" steps="apt-get build-dep -y ./ && ./configure && make deb"
fi
chroot "$BR" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
	sh -ec "apt-get update && cd /root/slurm-burst && $steps" >>"$tmp/deb.log" 2>&1
ok $? "from $from, in the clean root: $steps" "$tmp/deb.log"
grep -q 'dh_auto_test' "$tmp/deb.log" && grep -Eq '^# PASS: +[1-9]' "$tmp/deb.log"
ok $? "... whose dh_auto_test ran the unit tests ($(sed -n 's/^# PASS: *//p' "$tmp/deb.log" | head -1) passed)" "$tmp/deb.log"
debs=()
for p in common agent node spank; do
	f=$(ls "$BR"/root/slurm-burst/slurm-burst-${p}_${version}_*.deb 2>/dev/null | head -1)
	[ -n "$f" ]; ok $? "slurm-burst-$p built" "$tmp/deb.log"
	debs+=("$f")
done
# make check-packages hands them on to tests/packaging/test_guide.sh
[ -n "${BURST_DEBS_OUT:-}" ] && mkdir -p "$BURST_DEBS_OUT" && cp "${debs[@]}" "$BURST_DEBS_OUT/"
grep -q 'Depends:.*slurm-wlm-basic-plugins (>= 22\.05), slurm-wlm-basic-plugins (<< 22\.06)' \
	<(dpkg-deb -I "${debs[3]}")
ok $? "the plugin's package needs this Slurm release (22.05.x), no other" <(dpkg-deb -I "${debs[3]}")

# ---- RPMs ----
# (a copy: rpmbuild's tar step breaks on a blank in the tarball's path)
cp "$tarball" "$tmp/" &&
	rpmbuild -ta --nodeps --define "_topdir $tmp/rpm" "$tmp/$(basename "$tarball")" >"$tmp/rpm.log" 2>&1
ok $? "rpmbuild -ta from the tarball" "$tmp/rpm.log"
for p in slurm-burst slurm-burst-agent slurm-burst-node slurm-burst-spank; do
	ls "$tmp"/rpm/RPMS/*/$p-$version-*.rpm >/dev/null 2>&1
	ok $? "$p RPM built" "$tmp/rpm.log"
done
rpm -qlp "$tmp"/rpm/RPMS/*/slurm-burst-spank-$version-*.rpm 2>/dev/null >"$tmp/rpm.files"
grep -qx '/usr/lib64/slurm/spank_cloud_contract.so' "$tmp/rpm.files" &&
	grep -qx '/usr/lib64/slurm/cloud_contract_decide.so' "$tmp/rpm.files"
ok $? "the RPM puts the plugin and its decision module in Slurm's plugin directory" "$tmp/rpm.files"
rpm -qlp "$tmp"/rpm/RPMS/*/slurm-burst-node-$version-*.rpm 2>/dev/null >"$tmp/rpm-node.files"
grep -qx '/usr/lib64/slurm/spank_burst_admission.so' "$tmp/rpm-node.files" &&
	grep -qx '/etc/slurm-burst/plugstack.d/burst-admission.conf' "$tmp/rpm-node.files"
ok $? "the node RPM has the admission plugin and the plugstack.d file that loads it" "$tmp/rpm-node.files"

# ---- a clean Debian 12 root ----
cp -a "$base" "$R"
ok $? "a fresh copy of the Debian $suite minbase root"
mount --bind /proc "$R/proc" && mount --bind /dev "$R/dev" && mount --bind /sys "$R/sys"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
# no daemon starts in the root (slurmctld, munge)
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
mkdir -p "$R/debs" && cp "${debs[@]}" "$R/debs/"
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

in_root apt-get update >"$tmp/apt.log" 2>&1 &&
	in_root sh -c 'apt-get install -y --no-install-recommends /debs/*.deb' >>"$tmp/apt.log" 2>&1
ok $? "apt-get install of the four .debs (and what they need) into the root" "$tmp/apt.log"

# ---- what is installed where ----
for f in /usr/bin/burstctl /usr/sbin/burst-agent /usr/libexec/slurm-burst/burst-resume \
	/usr/libexec/slurm-burst/burst-suspend /usr/libexec/slurm-burst/burst-resume-fail \
	/usr/libexec/slurm-burst/burst-prolog-slurmctld /usr/libexec/slurm-burst/burst-local-instance \
	/usr/libexec/slurm-burst/burst-node; do
	[ -x "$R$f" ]; ok $? "$f"
done
for f in /usr/share/slurm-burst/catalog/aws.csv /usr/share/slurm-burst/pci/accelerators.csv \
	/usr/share/man/man8/burstctl.8.gz /usr/share/man/man5/burst.conf.5.gz \
	/usr/share/man/man8/burst-node.8.gz /usr/share/man/man5/acceptance.conf.5.gz \
	/usr/share/doc/slurm-burst-agent/examples/job_submit.lua; do
	[ -f "$R$f" ]; ok $? "$f"
done
in_root burstctl --version >"$tmp/out" 2>&1
grep -q "$version" "$tmp/out"; ok $? "burstctl --version runs in the root: $(head -1 "$tmp/out")" "$tmp/out"

# the unit: installed where Debian 12 keeps units, with the packaged path, not enabled
unit="$R/lib/systemd/system/burst-agent.service"
grep -q '^ExecStart=/usr/sbin/burst-agent -c /etc/slurm/burst.conf$' "$unit"
ok $? "burst-agent.service, ExecStart=/usr/sbin/burst-agent" "$unit"
! ls "$R"/etc/systemd/system/*.wants/burst-agent.service >/dev/null 2>&1
ok $? "... not enabled"

# StateDir and the spool, with their owners
st=$(stat -c '%U:%G %a' "$R/var/lib/slurm-burst")
[ "$st" = "root:root 755" ]; ok $? "/var/lib/slurm-burst is root:root 755 ($st)"
in_root getent passwd slurm >/dev/null; has_slurm=$?
ok $has_slurm "Debian's Slurm packages made the user slurm"
st=$(stat -c '%U %a' "$R/var/lib/slurm-burst/spool")
[ "$st" = "slurm 700" ]; ok $? "the spool is SlurmUser's (slurm), 700 ($st)"

# the plugins: in Slurm's plugin directory, load into the root's sbatch, lean
# (both as installed: not the build tree's, which may be an ASan build)
so=$(ls "$R"/usr/lib/*/slurm-wlm/spank_cloud_contract.so 2>/dev/null | head -1)
so_adm=$(ls "$R"/usr/lib/*/slurm-wlm/spank_burst_admission.so 2>/dev/null | head -1)
[ -n "$so" ] && [ -n "$so_adm" ]
ok $? "spank_cloud_contract.so and spank_burst_admission.so in Slurm's plugin directory (${so#"$R"}, ${so_adm#"$R"})"
BURST_SPANK_SO="$so" BURST_SPANK_ADMISSION_SO="$so_adm" BURST_SPANK_STRIPPED=1 BURST_TOP_SRCDIR="$src" \
	bash "$src/tests/cli/plugin_deps.sh" >"$tmp/deps" 2>&1
ok $? "the installed plugins link libc and libm only, export Slurm's entry points only (tests/cli/plugin_deps.sh)" "$tmp/deps"
text=$(size -A "$so" | awk '$1 == ".text" { print $2 }')
[ -n "$text" ] && [ "$text" -lt 150000 ]
ok $? "... and its code is small (.text: $text bytes)"
in_root sh -c 'ldd /usr/lib/*/slurm-wlm/spank_cloud_contract.so' >"$tmp/ldd" 2>&1
! grep -Eq 'libcurl|libxml2|libsqlite3|libssl|libcrypto' "$tmp/ldd"
ok $? "ldd in the root: none of libcurl, libxml2, libsqlite3, libssl, libcrypto" "$tmp/ldd"
mkdir -p "$R/etc/slurm"
cat >"$R/etc/slurm/slurm.conf" <<'CONF'
ClusterName=pkgtest
SlurmctldHost=localhost
PlugStackConfig=/etc/slurm/plugstack.conf
NodeName=n1 CPUs=1 State=UNKNOWN
PartitionName=p Nodes=n1 Default=YES
CONF
# (as the admin guide says: a file of its own in the directory Debian's
# plugstack.conf includes, which stays the package's)
printf '%s\n' 'required spank_cloud_contract.so conf=/etc/slurm/burst.conf' \
	'include /etc/slurm-burst/plugstack.d/*.conf' >"$R/etc/slurm/plugstack.conf.d/slurm-burst.conf"
in_root sbatch --help >"$tmp/out" 2>&1
grep -q -- '--cloud-contract=NAME|EXPR' "$tmp/out" &&
	in_root dpkg --verify slurm-wlm-basic-plugins >>"$tmp/out" 2>&1
ok $? "plugstack.conf.d/slurm-burst.conf names the plugin by file name; the root's sbatch --help shows --cloud-contract; Debian's plugstack.conf is untouched" "$tmp/out"
adm=$(sed -n 's/^required \([^ ]*\)$/\1/p' "$R/etc/slurm-burst/plugstack.d/burst-admission.conf" 2>/dev/null)
[ -n "$adm" ] && [ -f "$R$adm" ] && [ "$(basename "$adm")" = spank_burst_admission.so ] &&
	[ -z "$(ls "$R"/usr/lib/*/slurm-wlm/spank_burst_admission.so 2>/dev/null | grep -v "^$R$adm$")" ]
ok $? "slurm-burst-node's plugstack.d file loads its admission plugin ($adm), required" "$R/etc/slurm-burst/plugstack.d/burst-admission.conf"

# ---- upgrade and purge keep the agent's state ----
echo keep >"$R/var/lib/slurm-burst/agent.db"
echo request >"$R/var/lib/slurm-burst/spool/r1.json"
chown 0:0 "$R/var/lib/slurm-burst/spool/r1.json"
in_root sh -c 'dpkg -i /debs/*.deb' >"$tmp/up.log" 2>&1
ok $? "dpkg -i again (an upgrade to the same version)" "$tmp/up.log"
[ "$(cat "$R/var/lib/slurm-burst/agent.db")" = keep ] && [ -f "$R/var/lib/slurm-burst/spool/r1.json" ]
ok $? "... the state and the spool are kept"
in_root apt-get purge -y slurm-burst-agent slurm-burst-node slurm-burst-spank slurm-burst-common \
	>"$tmp/purge.log" 2>&1
ok $? "apt-get purge of the four packages" "$tmp/purge.log"
[ ! -e "$R/usr/sbin/burst-agent" ] && [ ! -e "$so" ]
ok $? "... the programs and the plugin are gone"
[ "$(cat "$R/var/lib/slurm-burst/agent.db" 2>/dev/null)" = keep ] &&
	[ -f "$R/var/lib/slurm-burst/spool/r1.json" ] &&
	[ "$(stat -c %U "$R/var/lib/slurm-burst/spool")" = slurm ]
ok $? "... the agent's state, its spool and the spool's owner are kept"
grep -q 'kept /var/lib/slurm-burst' "$tmp/purge.log"
ok $? "... and purge says so" "$tmp/purge.log"

done_testing

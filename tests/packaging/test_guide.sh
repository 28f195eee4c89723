#!/usr/bin/env bash
# tests/packaging/test_guide.sh - the admin guide, followed as written (TAP,
# root). In a fresh copy of the clean Debian 12 root (tests/packaging/
# minbase.sh), with the .debs beside it, this runs the steps of
# doc/admin-guide.md that carry a marker, in the guide's order, from the
# guide's own text:
#
#   <!-- guide-test: run -->         the next code block, as root with bash -e,
#                                    in the directory holding the .debs
#   <!-- guide-test: file PATH -->   the next code block is the content of PATH
#   <!-- guide-test: job -->         the next code block submits a job
#   <!-- guide-test: upgrade -->     the next code block upgrades the packages,
#                                    run in the directory of this build's .debs
#
# and then checks that the job bursts a node of the local provider and
# completes there. Only installed files are used: nothing of the source or
# build tree is visible in the root.
#
# The upgrade: the guide's steps before it install the PREVIOUS release's
# .debs; before its block runs, the harness has a job running on a burst node
# (it waits for a file the harness makes afterwards) and asks slurmctld to
# resume the other node; after it, the packages are this build's, the agent
# runs the new program, every node, instance, cost row and event of before is
# in agent.db, the job completes and the other node is admitted, and no node
# was lost. The previous release: BURST_UPGRADE_DEBS=DIR (its four .debs),
# else built with dpkg-buildpackage (no tests) from `git archive` of
# BURST_UPGRADE_FROM (default: the commit named below, main before agent.db
# had migrations: move it on at each release) and cached under
# /var/cache/slurm-burst/upgrade-debs/COMMIT; its version is given a `~prev`
# suffix so that it sorts before this build's. Without either (a release
# tarball, or a clone without that commit) the guide runs with this build's
# .debs throughout and the upgrade block reinstalls them, and the checks
# that need two releases are skipped, saying why.
#
# The root runs in namespaces of its own: mount (pivot_root into the copy),
# PID (killing its first process ends everything the guide started) and
# network (the guide's bridge, addresses and Slurm's default ports, with
# nothing else on this machine to collide with). Where the guide says
# `systemctl`, a stand-in (tests/packaging/guide-systemctl.sh) starts the
# daemons as their installed unit files say, since no systemd runs there.
# The harness also answers apt's question (Assume-Yes) and fetches the
# packages apt will need beforehand, in this host's network namespace (the
# root's has no way out).
#
# BURST_DEBS=DIR: the .debs (as test_packages.sh leaves them with
# BURST_DEBS_OUT); else they are built from the `make dist` tarball.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/packaging/minbase.sh"
[ "$(id -u)" -eq 0 ] || bail "run as root (namespaces, pivot_root)"
for t in unshare nsenter debootstrap; do
	command -v $t >/dev/null || bail "no $t: apt-get install util-linux debootstrap"
done
guide="$src/doc/admin-guide.md"
tmp=$(mktemp -d /var/tmp/burst-guide.XXXXXX)
R="$tmp/root"
init=
cleanup() {
	# the root's PID namespace ends with its first process: munged,
	# slurmctld, the agent, the instances and their slurmds go with it, and
	# so do its mount and network namespaces (the bridge, the instances'
	# namespaces and their veths)
	if [ -n "$init" ]; then
		kill -9 "$init" 2>/dev/null
		wait "$holder" 2>/dev/null
	fi
	if awk -v r="$R" 'index($2, r) == 1 { f = 1 } END { exit !f }' /proc/self/mounts; then
		echo "# something is still mounted under $R: left in place" >&2
		return
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
TAP_DIAG="$tmp/none"

# ---- the .debs ----
debs=$tmp/debs
mkdir -p "$debs"
if [ -n "${BURST_DEBS:-}" ]; then
	n=0
	for p in common agent node spank; do cp "$BURST_DEBS"/slurm-burst-${p}_*.deb "$debs/" && n=$((n + 1)); done
	[ "$n" = 4 ]; ok $? "the .debs from $BURST_DEBS ($n of 4 copied)"
else
	command -v dpkg-buildpackage >/dev/null || bail "no dpkg-buildpackage: apt-get install dpkg-dev debhelper dh-autoreconf"
	make -C "$build" dist >"$tmp/dist.log" 2>&1
	ok $? "make dist" "$tmp/dist.log"
	version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
	n=0
	mkdir -p "$tmp/deb" && tar -C "$tmp/deb" -xzf "$build/slurm-burst-$version.tar.gz" &&
		(cd "$tmp/deb/slurm-burst-$version" && dpkg-buildpackage -b -us -uc) >"$tmp/deb.log" 2>&1 &&
		for p in common agent node spank; do cp "$tmp"/deb/slurm-burst-${p}_*.deb "$debs/" && n=$((n + 1)); done
	[ "$n" = 4 ]; ok $? "dpkg-buildpackage -b -us -uc from the tarball ($n of 4 .debs)" "$tmp/deb.log"
fi
[ "$(ls "$debs"/slurm-burst-*.deb 2>/dev/null | wc -l)" -eq 4 ] || bail "not four .debs in $debs"

# ---- the previous release's .debs (the upgrade step starts from them) ----
upgrade_from_default=53c129594fe18ee51eeefe67fac2052ac5f1322b
prev=$tmp/prev prev_why=
mkdir -p "$prev"
copy4() {   # FROM TO: the four packages (not the -dbgsym ones dh makes beside them)
	local p
	for p in common agent node spank; do
		[ "$(ls "$1"/slurm-burst-${p}_*.deb 2>/dev/null | wc -l)" = 1 ] && cp "$1"/slurm-burst-${p}_*.deb "$2/" || return 1
	done
}
if [ -n "${BURST_UPGRADE_DEBS:-}" ]; then
	copy4 "$BURST_UPGRADE_DEBS" "$prev"
	st=$?
	ok $st "the previous release's four .debs from $BURST_UPGRADE_DEBS"
	[ $st = 0 ] || prev_why="not four .debs in BURST_UPGRADE_DEBS"
else
	ref=${BURST_UPGRADE_FROM:-$upgrade_from_default}
	commit=$(git -C "$src" rev-parse --verify -q "$ref^{commit}" 2>/dev/null)
	if [ -z "$commit" ]; then
		prev_why="no previous release: $src is no git checkout holding $ref (a release tarball?), and no BURST_UPGRADE_DEBS"
	else
		cache=${BURST_UPGRADE_CACHE:-/var/cache/slurm-burst/upgrade-debs}/$commit
		if ! copy4 "$cache" "$prev"; then
			rm -rf "$cache.tmp" "$prev"/* && mkdir -p "$tmp/prev-src" "$cache.tmp" &&
				git -C "$src" archive --prefix=slurm-burst/ "$commit" | tar -x -C "$tmp/prev-src" &&
				(cd "$tmp/prev-src/slurm-burst" &&
					v=$(dpkg-parsechangelog -S Version) &&
					{ printf 'slurm-burst (%s~prev) unstable; urgency=medium\n\n  * The previous release, for the upgrade test (%s).\n\n -- test <test@localhost>  %s\n\n' \
						"$v" "$commit" "$(date -R)"; cat debian/changelog; } >debian/changelog.new &&
					mv debian/changelog.new debian/changelog &&
					DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -b -us -uc) >"$tmp/prev.log" 2>&1 &&
				copy4 "$tmp/prev-src" "$cache.tmp" && rm -rf "$cache" && mv "$cache.tmp" "$cache" &&
				copy4 "$cache" "$prev"
			st=$?
			ok $st "the previous release's .debs built from ${commit:0:12} (git archive, dpkg-buildpackage, no tests)" "$tmp/prev.log"
			[ $st = 0 ] || prev_why="the previous release's .debs did not build (above)"
		else
			echo "# the previous release's four .debs of ${commit:0:12}, from $cache"
		fi
	fi
fi
[ -n "$prev_why" ] && echo "# $prev_why: the guide installs this build's .debs, and its upgrade step reinstalls them"

# ---- the guide's steps, from its text ----
# each marked block becomes $tmp/steps/NN (its text) and NN.what (KIND [PATH]
# and the guide's line number)
mkdir -p "$tmp/steps"
awk -v out="$tmp/steps" '
	function flush() {
		if (n > 0 && inblock) {
			while (nl > 0 && lines[nl] == "") nl--
			for (i = 1; i <= nl; i++) print lines[i] > (out "/" sprintf("%02d", n))
			close(out "/" sprintf("%02d", n))
		}
		inblock = 0; nl = 0
	}
	{
		if (inblock) {
			if ($0 ~ /^[[:space:]]*$/) { lines[++nl] = ""; next }
			match($0, /^ */)
			if (RLENGTH >= ind) { lines[++nl] = substr($0, ind + 1); next }
			flush()
		}
	}
	/<!-- guide-test: / {
		flush()
		w = $0; sub(/.*<!-- guide-test: */, "", w); sub(/ *-->.*/, "", w)
		n++; pending = 1
		print w " " NR > (out "/" sprintf("%02d", n) ".what")
		close(out "/" sprintf("%02d", n) ".what")
		next
	}
	pending && /^[[:space:]]*$/ { next }
	pending {
		pending = 0
		match($0, /^ */); ind = RLENGTH
		if (ind < 4) { print "line " NR ": no indented code block after the marker" > "/dev/stderr"; exit 1 }
		inblock = 1; lines[++nl] = substr($0, ind + 1)
	}
	END { flush() }' "$guide"
ok $? "the marked steps of doc/admin-guide.md extracted"
nsteps=$(ls "$tmp"/steps/*.what 2>/dev/null | wc -l)
[ "$nsteps" -ge 5 ] && [ "$(grep -l '^job ' "$tmp"/steps/*.what | wc -l)" -eq 1 ]
ok $? "... $nsteps steps, one of them the job"

# ---- a fresh root, in namespaces of its own ----
minbase_root
cp -a "$base" "$R"
ok $? "a fresh copy of the Debian 12 minbase root"
# the guide's install steps get the previous release's .debs when there
# are some; its upgrade step, this build's
mkdir -p "$R/root/debs" "$R/root/debs-new" "$R/.oldroot" && cp "$debs"/*.deb "$R/root/debs-new/"
if [ -z "$prev_why" ]; then cp "$prev"/*.deb "$R/root/debs/"; else cp "$debs"/*.deb "$R/root/debs/"; fi
# the harness's part: no daemon starts at install (as in a chroot), apt's
# question answered, the systemctl stand-in
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
echo 'APT::Get::Assume-Yes "true";' >"$R/etc/apt/apt.conf.d/90guide-test"
install -m 0755 "$src/tests/packaging/guide-systemctl.sh" "$R/usr/local/sbin/systemctl"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
# as on an installed Debian system (debootstrap writes no /etc/hosts)
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$(hostname)" >"$R/etc/hosts"

unshare -m -n -p --fork --propagation private /bin/bash -c '
	set -e
	R=$1
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount -t sysfs sysfs "$R/sys"
	mount --rbind /dev "$R/dev"
	mount -t tmpfs -o mode=755 tmpfs "$R/run"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	cd "$R"
	pivot_root . .oldroot
	umount -l /.oldroot
	cd /
	: >/run/.guide-root-ready
	exec sleep infinity
' guide-root "$R" </dev/null >"$tmp/holder.log" 2>&1 &
holder=$!
for ((i = 0; i < 100; i++)); do
	init=$(cat /proc/$holder/task/*/children 2>/dev/null | awk '{ print $1 }')
	[ -n "$init" ] && nsenter -t "$init" -m -r test -e /run/.guide-root-ready 2>/dev/null && break
	sleep 0.1
done
[ -n "$init" ] && nsenter -t "$init" -m -r test -e /run/.guide-root-ready
[ -n "$init" ] || bail "the root's namespaces did not start"
nsenter -t "$init" -n ip link set lo up   # the host's ip: the root has none yet
ok $? "the root in mount, PID and network namespaces of its own (loopback up)" "$tmp/holder.log"

# CMD in the root: its namespaces, its / (in_root_net: this host's network)
in_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
	LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
in_root() { nsenter -t "$init" -m -n -p -r -w "${in_env[@]}" "$@"; }
in_root_net() { nsenter -t "$init" -m -p -r -w "${in_env[@]}" "$@"; }

# the packages apt will want, fetched beforehand (the root has no network)
in_root_net apt-get update >"$tmp/apt.log" 2>&1 &&
	in_root_net sh -c 'cd /root/debs && apt-get install --download-only ./*.deb' >>"$tmp/apt.log" 2>&1 &&
	in_root_net sh -c 'cd /root/debs-new && apt-get install --download-only ./*.deb' >>"$tmp/apt.log" 2>&1
ok $? "apt-get update and --download-only of what the .debs need (harness, this host's network)" "$tmp/apt.log"

# ---- the upgrade step ----
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
db="$R/var/lib/slurm-burst/agent.db"
# rows of agent.db (read on this host, read-only) that an upgrade must keep,
# one a line: nodes with an instance, instances, holds, job costs, events
keep_rows() {
	python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
q = {
    "node": "SELECT name, instance FROM nodes WHERE instance IS NOT NULL AND state != 'powered_down'",
    "instance": "SELECT provider, instance, node, launched FROM instances",
    "hold": "SELECT job, node, start FROM holds",
    "cost": "SELECT job, dollars FROM job_costs",
    "event": "SELECT id, node, what FROM events",
}
for k, sql in q.items():
    for r in c.execute(sql):
        print(k, *r, sep="|")
PY
}
upgrade_step() {   # STEP LINE
	local step=$1 line=$2 cname j2 x y i st v0 v1 pid0 pid1 missing
	cname=$(sed -n "s/.*--cloud-contract=\([^ ]*\).*/\1/p" "$(grep -l '^job ' "$tmp"/steps/*.what | sed 's/\.what$//')")
	# a job that runs across the upgrade: it ends once the harness says so
	j2=$(in_root sh -c "cd /root && sbatch --parsable --cloud-contract=$cname --wrap='while [ ! -e /root/upgrade-done ]; do sleep 0.2; done; hostname'" 2>"$step.log")
	st=
	for ((i = 0; i < 180; i++)); do
		[ -n "$j2" ] || break
		st=$(in_root squeue -h -j "$j2" -o %T 2>/dev/null)
		[ "$st" = RUNNING ] && break
		sleep 1
	done
	x=$(in_root squeue -h -j "$j2" -o %N 2>/dev/null)
	[ -n "$j2" ] && [ "$st" = RUNNING ] && [[ "$x" =~ ^burst-[12]$ ]]
	ok $? "upgrade: job $j2 runs on burst node $x before the upgrade ($st)" "$step.log"
	y=burst-1; [ "$x" = burst-1 ] && y=burst-2
	keep_rows >"$tmp/rows.before" 2>>"$step.log"
	v0=$(in_root dpkg-query -W -f '${Version}' slurm-burst-agent)
	pid0=$(in_root cat /run/guide-test/burst-agent.pid)
	# a resume that the old agent takes or the new one finds in the spool
	in_root scontrol update nodename="$y" state=power_up >>"$step.log" 2>&1
	in_root bash -e -c "cd /root/debs-new
$(cat "$step")" >>"$step.log" 2>&1
	ok $? "guide line $line: $(head -1 "$step") ... (the upgrade, while job $j2 runs)" "$step.log"
	v1=$(in_root dpkg-query -W -f '${Version}' slurm-burst-agent)
	if [ -n "$prev_why" ]; then
		skip "the packages are upgraded from the previous release ($prev_why)"
	else
		[ "$v0" != "$v1" ] && [[ "$v0" == *~prev ]]
		ok $? "... the packages went from $v0 to $v1" "$step.log"
	fi
	pid1=$(in_root cat /run/guide-test/burst-agent.pid)
	[ -n "$pid1" ] && [ "$pid1" != "$pid0" ] && in_root systemctl is-active burst-agent &&
		in_root cmp -s "/proc/$pid1/exe" /usr/sbin/burst-agent
	ok $? "... the agent was restarted (pid $pid0 -> $pid1) and runs the installed program" "$R/var/log/guide-test/burst-agent.log"
	: >"$R/root/upgrade-done"
	for ((i = 0; i < 120; i++)); do
		st=$(in_root squeue -h -t all -j "$j2" -o %T 2>/dev/null)
		[[ "$st" =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL)$ ]] && break
		sleep 1
	done
	[ "$st" = COMPLETED ] && grep -qx "$x" "$R/root/slurm-$j2.out"
	ok $? "... job $j2 completes on $x ($st)" "$R/root/slurm-$j2.out"
	for ((i = 0; i < 120; i++)); do
		in_root burstctl nodes "$y" >"$tmp/nodes.y" 2>&1
		grep -q "^$y  *[^ ]*  *admitted " "$tmp/nodes.y" && break
		sleep 1
	done
	grep -q "^$y  *[^ ]*  *admitted " "$tmp/nodes.y"
	ok $? "... $y, resumed just before the upgrade, is admitted" "$tmp/nodes.y"
	keep_rows >"$tmp/rows.after" 2>>"$step.log"
	missing=$(sort "$tmp/rows.before" | comm -23 - <(sort "$tmp/rows.after"))
	[ -s "$tmp/rows.before" ] && [ -z "$missing" ] && grep -q "^node|$x|" "$tmp/rows.after"
	ok $? "... every node's instance, instance, hold, job cost and event of before is in agent.db ($(wc -l <"$tmp/rows.before") rows; missing: ${missing:-none})" "$tmp/rows.after"
	in_root burstctl events >"$tmp/lost" 2>&1
	in_root sinfo -h -N -o '%N %T' >"$tmp/sinfo" 2>&1
	! grep -Eq -- '-> (lost|rejected)' "$tmp/lost" && ! grep -Eiq ' [^ ]*(down|drain|fail)' "$tmp/sinfo"
	ok $? "... no node was lost, rejected or set down" "$tmp/lost" "$tmp/sinfo"
}

# ---- the steps ----
job=
for what in "$tmp"/steps/*.what; do
	step=${what%.what}
	read -r kind a b <"$what"
	case "$kind" in
	run)
		line=$a
		in_root bash -e -c "cd /root/debs
$(cat "$step")" >"$step.log" 2>&1
		ok $? "guide line $line: $(head -1 "$step")" "$step.log"
		;;
	file)
		path=$a line=$b
		in_root sh -c 'mkdir -p "$(dirname "$1")" && cat >"$1"' sh "$path" <"$step" >"$step.log" 2>&1
		ok $? "guide line $line: $path written" "$step.log"
		;;
	job)
		line=$a
		in_root bash -e -c "cd /root
$(cat "$step")" >"$step.log" 2>&1
		st=$?
		job=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' "$step.log")
		[ $st -eq 0 ] && [ -n "$job" ]
		ok $? "guide line $line: $(head -1 "$step") (job $job)" "$step.log"
		;;
	upgrade)
		line=$a
		upgrade_step "$step" "$line"
		;;
	*)
		ok 1 "guide line $a: unknown marker 'guide-test: $kind'"
		;;
	esac
done

# ---- what the guide promises ----
diag="$tmp/diag"
logs() {   # what went wrong, for a failed check
	in_root sh -c 'for f in /var/log/guide-test/*.log /var/log/slurm/*.log /var/lib/slurm-burst/nodes/*/node.log; do
		[ -f "$f" ] && { echo "== $f"; tail -25 "$f"; }; done; sinfo; squeue -t all; burstctl nodes' >"$diag" 2>&1
}
for u in munge slurmctld burst-agent; do
	in_root systemctl is-active "$u"
	ok $? "$u runs, started from its installed unit" "$diag"
done
wait_job() {   # STATE-REGEX SECONDS
	local i
	for ((i = 0; i < $2; i++)); do
		st=$(in_root squeue -h -t all -j "$job" -o %T 2>/dev/null)
		[[ "$st" =~ ^($1)$ ]] && return 0
		sleep 1
	done
	return 1
}
[ -n "$job" ] || { logs; sed 's/^/# /' "$diag"; bail "no job was submitted"; }
wait_job 'COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE' 240 || logs
[ "$st" = COMPLETED ] || logs
[ "$st" = COMPLETED ]
ok $? "job $job is COMPLETED ($st)" "$diag"
# the job's contract, as the guide's burst.conf defines the one it names
name=$(sed -n "s/.*--cloud-contract=\([^ ]*\).*/\1/p" "$(grep -l '^job ' "$tmp"/steps/*.what | sed 's/\.what$//')")
expr=$(sed -n "s/^Contract=$name  *//p" "$R/etc/slurm/burst.conf")
cluster=$(sed -n 's/^ClusterName=//p' "$R/etc/slurm/burst.conf")
in_root scontrol show job -o "$job" >"$tmp/job" 2>&1
nodes=$(sed -n 's/.* NodeList=\([^ ]*\).*/\1/p' "$tmp/job")
in_root scontrol show node -o "$nodes" >>"$tmp/job" 2>&1
[ -n "$nodes" ] && grep -Eq "^NodeName=$nodes .*Features=([^ ]*,)?burst(,| )" "$tmp/job" &&
	grep -Eq "^NodeName=$nodes .*Features=([^ ]*,)?$name(,| )" "$tmp/job"
ok $? "... on one burst node ($nodes) of a node set that serves contract '$name'" "$tmp/job"
out="$R/root/slurm-$job.out"
[ -n "$expr" ] && [ -f "$out" ] && grep -qx "$nodes" "$out" && grep -qx 'CLOUD_PROVIDER=local' "$out" &&
	grep -qx 'CLOUD_INSTANCE_TYPE=local.host' "$out" && grep -qxF "CLOUD_CONTRACT=$expr" "$out"
ok $? "... which ran it as an admitted instance of local.host, under the contract (slurm-$job.out)" "$out"
in_root burstctl nodes >"$tmp/nodes" 2>&1
grep -q "^$nodes .*local-$cluster-$nodes-" "$tmp/nodes"
ok $? "burstctl nodes shows $nodes and its instance" "$tmp/nodes"
grep -q "$nodes: booting -> admitted" "$R/var/log/guide-test/burst-agent.log"
ok $? "the agent's log (the unit's output) has $nodes admitted" "$R/var/log/guide-test/burst-agent.log"

done_testing

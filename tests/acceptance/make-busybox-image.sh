#!/bin/sh
# make-busybox-image.sh DIR [MARKER] - build a small (about 2 MB) container image
# for the acceptance tests from Debian's busybox-static: DIR/bin/busybox and
# its applet links, and what ch-run needs to start (/etc/passwd, /etc/group,
# /etc/hosts, /etc/resolv.conf and the /dev, /proc, /sys, /tmp, /home mount
# points). MARKER, if given, is written to DIR/etc/burst-image-marker so a
# test can tell that its command ran inside the image.
set -eu
dir=${1:?usage: make-busybox-image.sh DIR [MARKER]}
marker=${2:-}
bb=${BUSYBOX:-/bin/busybox}
if [ ! -x "$bb" ]; then
	echo "make-busybox-image.sh: no $bb: install busybox-static (apt-get install busybox-static)" >&2
	exit 1
fi
# a dynamically linked busybox would need the host's libraries in the image
if ! "$bb" --list >/dev/null 2>&1; then
	echo "make-busybox-image.sh: $bb does not run" >&2
	exit 1
fi
mkdir -p "$dir"
cd "$dir"
mkdir -p bin sbin usr/bin usr/sbin etc dev proc sys tmp home root var/tmp mnt run
chmod 1777 tmp var/tmp
cp "$bb" bin/busybox
for applet in $(bin/busybox --list); do
	[ "$applet" = busybox ] && continue
	[ -e "bin/$applet" ] || ln -s busybox "bin/$applet"
done
cat >etc/passwd <<PASSWD
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
PASSWD
cat >etc/group <<GROUP
root:x:0:
nogroup:x:65534:
GROUP
: >etc/hosts
: >etc/resolv.conf
if [ -n "$marker" ]; then
	printf '%s\n' "$marker" >etc/burst-image-marker
fi

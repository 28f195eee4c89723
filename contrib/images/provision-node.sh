#!/bin/sh
# contrib/images/provision-node.sh - make a Debian 12 system into a burst
# node image (doc/admin-guide.md, "A node image"): what Packer's shell
# provisioner runs (burst-node.pkr.hcl), or you by hand on the instance you
# will snapshot. As root:
#
#   provision-node.sh DEBDIR
#
# DEBDIR holds slurm-burst's .debs (common, node and spank; the agent's is
# not needed). From the environment, each optional:
#   SLURM_CONF_FILE   the cluster's slurm.conf, installed as /etc/slurm/slurm.conf
#                     (without it: configless Slurm, slurmd finds slurmctld by
#                     its DNS SRV record)
#   BURST_CONF_FILE   the cluster's burst.conf, for the SPANK plugin
#   MUNGE_KEY_FILE    the cluster's munge key (without it the node keeps the
#                     key Debian's munge made, which no report can be checked
#                     with: give one, or write /etc/munge/munge.key before munged starts)
#   EXTRA_PACKAGES    more Debian packages (drivers, the acceptance suite's runtime)
#
# What it does: installs slurmd and munge of Debian 12 (Slurm 22.05: the
# cluster's release), curl (the user data reads the instance metadata with
# it), cloud-init when missing (it runs the agent's user data) and the .debs;
# puts burst-node on the PATH; leaves slurmd disabled (burst-node join starts
# it once the agent admits the node) and munged enabled; gives Slurm the
# plugstack.conf.d file that loads the SPANK plugins (the admission plugin
# through /etc/slurm-burst/plugstack.d); tells cloud-init to leave the
# hostname to the user data; and ends with burst-node check. Idempotent: it
# may run again on the same system.
set -eu
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: provision-node.sh DEBDIR (the slurm-burst .debs)" >&2
	exit 2
fi
[ "$(id -u)" -eq 0 ] || { echo "provision-node.sh: run it as root" >&2; exit 2; }
debs=$(cd "$1" && pwd)
export DEBIAN_FRONTEND=noninteractive
say() { echo "provision-node.sh: $*"; }

set -- "$debs"/slurm-burst-common_*.deb "$debs"/slurm-burst-node_*.deb "$debs"/slurm-burst-spank_*.deb
for f; do
	[ -f "$f" ] || { echo "provision-node.sh: no $(basename "$f") in $debs (make deb, or the release's .debs)" >&2; exit 2; }
done
apt-get update -q
pkgs="slurmd munge curl ca-certificates"
command -v cloud-init >/dev/null 2>&1 || pkgs="$pkgs cloud-init"
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $pkgs ${EXTRA_PACKAGES:-} "$@"
say "installed: $pkgs ${EXTRA_PACKAGES:-}$(for f; do printf ' %s' "$(basename "$f")"; done)"

# burst-node on the PATH, as the agent's user data calls it
ln -sf /usr/libexec/slurm-burst/burst-node /usr/local/bin/burst-node

# slurmd: started by burst-node join, never at boot (a node the agent has
# not admitted must not register with Slurm)
if command -v systemctl >/dev/null 2>&1; then
	systemctl disable slurmd.service >/dev/null 2>&1 || true
	systemctl enable munge.service >/dev/null 2>&1 || true
fi
rm -f /etc/systemd/system/multi-user.target.wants/slurmd.service

mkdir -p /etc/slurm/plugstack.conf.d
if [ -n "${SLURM_CONF_FILE:-}" ]; then
	install -m 0644 "$SLURM_CONF_FILE" /etc/slurm/slurm.conf
	say "slurm.conf from $SLURM_CONF_FILE"
fi
if [ -n "${BURST_CONF_FILE:-}" ]; then
	install -m 0644 "$BURST_CONF_FILE" /etc/slurm/burst.conf
	say "burst.conf from $BURST_CONF_FILE"
fi
# Debian's /etc/slurm/plugstack.conf includes plugstack.conf.d/*.conf: the
# contract plugin, and the node-local directory where slurm-burst-node's
# file loads the admission plugin
cat >/etc/slurm/plugstack.conf.d/slurm-burst.conf <<'CONF'
required spank_cloud_contract.so conf=/etc/slurm/burst.conf
include /etc/slurm-burst/plugstack.d/*.conf
CONF
if [ -n "${MUNGE_KEY_FILE:-}" ]; then
	install -m 0400 -o munge -g munge "$MUNGE_KEY_FILE" /etc/munge/munge.key
	say "munge key from $MUNGE_KEY_FILE"
else
	say "warning: no MUNGE_KEY_FILE: /etc/munge/munge.key is not the cluster's; joins fail until it is"
fi

# cloud-init: the agent's user data (a shell script) names the node
mkdir -p /etc/cloud/cloud.cfg.d
cat >/etc/cloud/cloud.cfg.d/90-slurm-burst.cfg <<'CONF'
# slurm-burst (contrib/images/provision-node.sh): the agent's user data sets
# the hostname to the node's name and runs burst-node join; keep that name
# across reboots
preserve_hostname: true
CONF

# what join will check of this image, now rather than at the first burst
/usr/libexec/slurm-burst/burst-node check
say "done: $(/usr/libexec/slurm-burst/burst-node --version)"

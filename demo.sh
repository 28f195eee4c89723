#!/usr/bin/env bash
# demo.sh - the slurm-burst demo: one job bursts into a cloud node that did
# not exist, runs, and the node goes away again.
#
# Run as root on Debian 12 from a clean clone. It installs the Debian
# packages it needs, builds slurm-burst, starts a private Slurm 22.05 cluster
# (munged, slurmctld on a bridge of its own; nothing of a system Slurm is
# touched) and the burst agent with the local provider (an instance is a set
# of namespaces on this host running a real slurmd), then:
#   1. resolves the contract against the catalog (burstctl resolve --explain)
#   2. sbatch --cloud-contract=cpu-local, and shows the burst live: request,
#      launch, join, admission, slurmd registration, the job running and
#      completing, the idle node suspended and its instance gone
#   3. prints the job's CLOUD_* variables
# and tears everything down. It takes about a minute.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
. tools/deps.sh
burst_install_deps $BURST_BUILD_DEPS $BURST_LAB_DEPS

dir="$top/_build/demo"
echo "== building slurm-burst in $dir"
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
if [ ! -f "$dir/Makefile" ]; then
	mkdir -p "$dir"
	# configure by a relative path: autoconf refuses an absolute source
	# directory with a blank ("unsafe srcdir value"), and a clone may be in one
	(cd "$dir" && "$(realpath --relative-to=. "$top")/configure" >/dev/null)
fi
make -C "$dir" -s -j"$(nproc)" >/dev/null 2>&1 || make -C "$dir" -j"$(nproc)"
burstctl="$dir/burstctl/burstctl"
src=$top build=$dir

set +e
. "$top/tests/integration/tap.sh"
. "$top/tests/integration/lab.sh"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 5 5)
lab_pre_ctld() {
	# the demo's burst.conf: the local provider, whose one instance type
	# (local.host) describes this machine as detected when the agent starts
	lab_burst_conf <<CONF
Contract=cpu-local node_vcpus_count>=1 accelerator_count=0 processor_isa=$(uname -m | sed 's/arm64/aarch64/')
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}

t0=$(date +%s.%N)
stamp() { awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "[%5.1fs] ", a - b }'; }
say() { stamp; echo "$*"; }

say "starting a private Slurm cluster (munged, slurmctld) and the burst agent"
lab_up || { echo "demo: the cluster did not start" >&2; exit 1; }
cd "$LAB"
lab_agent_start || { echo "demo: the agent did not start:" >&2; cat "$LAB/log/agent.log" >&2; exit 1; }

echo
echo "\$ burstctl resolve cpu-local --explain"
"$burstctl" --config "$LAB/etc/burst.conf" resolve cpu-local --explain --limit 5
echo
echo "\$ sinfo"
sinfo
echo

# the burst, live: the agent's transitions (burstctl events --follow) and
# Slurm's view of the job and node
"$burstctl" --config "$LAB/etc/burst.conf" events --follow > >(sed -u 's/^/    agent: /') &
tailpid=$!
echo "\$ sbatch --cloud-contract=cpu-local job.sh"
cat >"$LAB/job.sh" <<'JOB'
#!/bin/sh
echo "running on $(hostname)"
env | grep -E '^CLOUD_(CONTRACT|PROVIDER|INSTANCE_TYPE|INSTANCE_ID|PROVENANCE_ID|NODE|NODESET)=' | sort
JOB
id=$(sbatch --parsable --cloud-contract=cpu-local -o "$LAB/job.out" "$LAB/job.sh")
say "submitted job $id"
last=""
deadline=$(( $(date +%s) + 180 ))
while [ "$(date +%s)" -lt "$deadline" ]; do
	st=$(squeue -h -t all -j "$id" -o '%T %N' 2>/dev/null)
	node=$(echo "$st" | awk '{print $2}')
	ns=""; [ -n "$node" ] && ns=$(lab_node_state "$node")
	cur="job $id: ${st:-?} ${node:+(node $node: $ns)}"
	[ "$cur" != "$last" ] && say "$cur"
	last=$cur
	case "$st" in COMPLETED*|FAILED*|CANCELLED*|TIMEOUT*) break ;; esac
	sleep 0.1
done
case "$st" in
COMPLETED*) ;;
*)
	# what went wrong, from the agent and the instances' consoles
	say "the job did not complete (${st:-gone}); the agent's log and the nodes' consoles:"
	for f in "$LAB/log/agent.log" $LAB_NODE_LOGS; do
		[ -s "$f" ] && { echo "== ${f#"$LAB/"}"; tail -15 "$f"; }
	done
	kill "$tailpid" 2>/dev/null
	lab_down
	exit 1 ;;
esac
echo
say "the job's output:"
sed 's/^/    /' "$LAB/job.out"
echo
say "waiting for the idle node to be suspended (SuspendTime=5 s)"
lab_wait_node "$node" 'idle~' 60 && say "$node is idle~ again (powered down)"
for i in $(seq 50); do ip netns list | grep -q "^burst-lab$$-$node " || break; sleep 0.1; done
if ip netns list | grep -q "^burst-lab$$-$node "; then
	say "its instance is still there!"
	rc=1
else
	say "its instance (namespace burst-lab$$-$node) and slurmd are gone"
	rc=0
fi
echo
echo "\$ burstctl status"
"$burstctl" --config "$LAB/etc/burst.conf" status
kill "$tailpid" 2>/dev/null
wait "$tailpid" 2>/dev/null
say "tearing the cluster down"
lab_down
say "demo finished"
exit $rc

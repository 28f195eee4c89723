#!/usr/bin/env bash
# test_driver_join.sh - blessed driver versions at join, on a real Slurm:
# burst nodes that report the a100x8 fixture (NVIDIA 550.54.15, through
# burst-node join --sysroot) are rejected while burst.conf blesses only
# 535.161.07, the reason naming the version; once `burstctl bless --driver
# nvidia=550.54.15` blesses theirs, the job runs on one, and the node's
# admitted record holds the driver versions.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"
S="$src/tests/fixtures/sysroots"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 5 30)
lab_pre_ctld() {
	lab_burst_conf <<CONF || return 1
RejectCooldown=4
BlessedDrivers=nvidia=535.161.07
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=gpu Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

# the nodes' burst-node: join reports the a100x8 fixture instead of this
# machine (burst-node and the fixture as copies in the lab: an instance has a
# private /tmp, which would hide a tree under /tmp)
cp -r "$S/a100x8" "$LAB/a100x8" || bail "cannot copy the a100x8 sysroot"
nb=$(lab_node_image) || bail "cannot copy burst-node"
cat >"$LAB/burst-node-a100x8" <<EOF
#!/bin/sh
if [ "\$1" = join ]; then
	shift
	exec "$nb" join --sysroot "$LAB/a100x8" "\$@"
fi
exec "$nb" "\$@"
EOF
chmod 755 "$LAB/burst-node-a100x8"
lab_agent_start "$LAB/burst-node-a100x8"; ok $? "the agent is up"

id=$(sbatch --parsable --cloud-contract=here -o "$LAB/job.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here" "$LAB/err"
for i in $(seq 600); do
	grep -q 'booting -> rejected: rejected at join' "$LAB/log/agent.log" && break
	sleep 0.1
done
grep -q 'burst-[12]: booting -> rejected: rejected at join: node set gpu, local:local.host: driver nvidia 550.54.15 is not blessed (blessed: 535.161.07; bless it with burstctl bless --driver nvidia=550.54.15, or see BlessedDrivers=)' "$LAB/log/agent.log"
ok $? "a node running an unblessed NVIDIA driver is rejected at join, the reason naming its version"
rejected=$(grep -o 'burst-[12]: booting -> rejected' "$LAB/log/agent.log" | head -1 | cut -d: -f1)
# the agent logs the rejection before it answers (its answer is signed on
# its munge worker): the node's line follows
for ((i = 0; i < 100; i++)); do
	grep -q "rejected by the agent: " "$LAB/burst/nodes/$rejected/node.log" 2>/dev/null && break
	sleep 0.1
done
grep -q "rejected by the agent: .*driver nvidia 550.54.15 is not blessed.*; slurmd is not started" "$LAB/burst/nodes/$rejected/node.log"
ok $? "burst-node on $rejected said why it did not start slurmd" "$LAB/burst/nodes/$rejected/node.log"
squeue -h -j "$id" -o %T | grep -qv COMPLETED
ok $? "the job has not run ($(squeue -h -j "$id" -o '%T %r'))"

"$build/burstctl/burstctl" --config "$LAB/etc/burst.conf" bless --driver nvidia=550.54.15 >"$LAB/out" 2>"$LAB/err"
ok $? "burstctl bless --driver nvidia=550.54.15" "$LAB/err"
grep -qx 'nvidia=550.54.15' "$LAB/burst/blessed-drivers"
ok $? "... in StateDir/blessed-drivers" "$LAB/out"
lab_wait_job "$id" COMPLETED 180
ok $? "the job then runs on a node with the blessed driver" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
node=$(cat "$LAB/job.out" 2>/dev/null)
[[ "$node" =~ ^burst-[12]$ ]]; ok $? "on a burst node ($node)" "$LAB/job.out"
grep -q "$node: booting -> admitted" "$LAB/log/agent.log"
ok $? "$node was admitted" "$LAB/log/agent.log"
python3 - "$LAB/burst/nodes/$node/provenance.json" >"$LAB/err" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = r['drivers']
assert d['nvidia'] == {'version': '550.54.15', 'source': '/sys/module/nvidia/version'}, d
assert d['mlx5_core']['version'] == '23.10-1.1.9', d
assert r['software']['container_runtime']['version'] == '0.31', r['software']
PY
ok $? "the admitted record holds the driver versions and Charliecloud's" "$LAB/err"

labdir=$LAB
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
! pgrep -f "slurmd -D -b -f $labdir/" >/dev/null; ok $? "no slurmd is left"
done_testing

#!/usr/bin/env bash
# test_slurm_conf.sh - slurmctld of the installed Slurm release starts from
# what 'burstctl slurm-conf' writes, with no error and no "defunct" line in
# its log, and its cloud nodes are visible powered down (idle~). The lines
# come as the admin guide says: `slurm-conf --output FILE`, which slurm.conf
# includes; then the guide's recipe for a change (a node added to burst.conf:
# slurm-conf --output again, and on 22.05 a restart of slurmctld, from 23.11
# on `scontrol reconfigure`) shows the new node.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
burstctl="$build/burstctl/burstctl"
[ -x "$burstctl" ] || bail "no $burstctl (build first)"
rel=$(lab_slurm_release)

SLURM_CONF_NODES="# nodes: below"
lab_pre_ctld() {
	lab_burst_conf <<CONF >/dev/null || return 1
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
	# slurm.conf: the lab's cluster-wide lines without those slurm-conf
	# writes, then everything slurm-conf writes (its node lines replace the
	# ones lab_burst_conf appended)
	grep -Ev '^(SlurmctldParameters|CommunicationParameters|PrivateData|TreeWidth|JobSubmitPlugins|NodeName|PartitionName)=' \
		"$LAB/etc/slurm.conf" >"$LAB/etc/slurm.conf.base" || return 1
	"$burstctl" --config "$LAB/etc/burst.conf" slurm-conf --libexecdir "$build/plugins/power_save" \
		--output "$LAB/etc/burst-nodes.conf" >"$LAB/slurm-conf.stdout" 2>"$LAB/slurm-conf.err" || return 1
	cp "$LAB/etc/burst-nodes.conf" "$LAB/slurm-conf.out"
	{ cat "$LAB/etc/slurm.conf.base"
	  echo "Include $LAB/etc/burst-nodes.conf"
	  # (a site's own default partition, which slurm-conf does not make)
	  echo "PartitionName=main Nodes=ALL Default=YES"; } >"$LAB/etc/slurm.conf"
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"

[ ! -s "$LAB/slurm-conf.stdout" ] && grep -qx "burstctl: wrote $LAB/etc/burst-nodes.conf" "$LAB/slurm-conf.err" &&
	[ "$(stat -c %a "$LAB/etc/burst-nodes.conf")" = 644 ] && grep -q '^NodeName=burst-\[1-2\]' "$LAB/slurm-conf.out"
ok $? "slurm-conf --output wrote the file slurm.conf includes (0644), nothing on stdout" "$LAB/slurm-conf.err"
grep -q "^# for Slurm $(slurmctld -V | awk '{ print $2 }'), the release this burstctl was built for$" "$LAB/slurm-conf.out"
ok $? "slurm-conf says which Slurm release its lines are for: the installed one" "$LAB/slurm-conf.out"
if [ "$rel" -lt 2311 ]; then
	grep -qx 'SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs' "$LAB/slurm-conf.out" &&
		grep -qx 'CommunicationParameters=NoAddrCache' "$LAB/slurm-conf.out"
	ok $? "before 23.11: cloud_reg_addrs and NoAddrCache" "$LAB/slurm-conf.out"
else
	grep -qx 'SlurmctldParameters=idle_on_node_suspend' "$LAB/slurm-conf.out" &&
		! grep -Eq 'cloud_reg_addrs|NoAddrCache' "$LAB/slurm-conf.out"
	ok $? "23.11 and later: neither cloud_reg_addrs nor NoAddrCache (defunct)" "$LAB/slurm-conf.out"
fi
if [ "$rel" -lt 2302 ]; then
	grep -qx 'PrivateData=cloud' "$LAB/slurm-conf.out"
	ok $? "before 23.02: PrivateData=cloud" "$LAB/slurm-conf.out"
else
	! grep -q '^PrivateData' "$LAB/slurm-conf.out"
	ok $? "23.02 and later: no PrivateData=cloud (cloud nodes are shown anyway)" "$LAB/slurm-conf.out"
fi
! grep -qi 'CgroupAutomount' "$LAB/slurm-conf.out" "$LAB/etc/slurm.conf" "$LAB/etc/cgroup.conf"
ok $? "no CgroupAutomount anywhere"

scontrol ping >/dev/null 2>&1; ok $? "slurmctld $rel runs on it"
scontrol reconfigure >/dev/null 2>&1; sleep 1   # parse it once more, logging what it finds
# a first start has no state files yet: those lines are about the empty
# StateSaveLocation, not slurm.conf
grep -Ei 'error|defunct' "$LAB/log/slurmctld.log" |
	grep -Ev 'error: Could not open [a-z]+ state file .*: No such file or directory$|error: NOTE: Trying backup state save file' \
	>"$LAB/bad-lines"
[ ! -s "$LAB/bad-lines" ]; ok $? "slurmctld's log has no error and no 'defunct' line" "$LAB/bad-lines"
grep -q 'Could not open node state file' "$LAB/log/slurmctld.log"
ok $? "... (its log is read: the first start's missing state file is there)" "$LAB/log/slurmctld.log"
[ "$(lab_node_state burst-1)" = "idle~" ] && [ "$(sinfo -h -n burst-2 -o %T 2>/dev/null)" = "idle~" ]
ok $? "the cloud nodes are shown powered down (idle~) by scontrol and sinfo" "$LAB/log/slurmctld.log"
scontrol show config 2>/dev/null | grep -q "^ResumeProgram *= $build/plugins/power_save/burst-resume$"
ok $? "... with slurm-burst's ResumeProgram"

# the guide's recipe for a change: burst.conf gains a node; the file is
# written again; 22.05 takes a new node at a restart of slurmctld only,
# 23.11 and later at scontrol reconfigure
sed -i 's/^NodeSet=local Nodes=burst-\[1-2\]/NodeSet=local Nodes=burst-[1-3]/' "$LAB/etc/burst.conf"
ino=$(stat -c %i "$LAB/etc/burst-nodes.conf")
"$burstctl" --config "$LAB/etc/burst.conf" slurm-conf --libexecdir "$build/plugins/power_save" \
	--output "$LAB/etc/burst-nodes.conf" 2>"$LAB/slurm-conf.err"
grep -q '^NodeName=burst-\[1-3\]' "$LAB/etc/burst-nodes.conf" && [ "$(stat -c %i "$LAB/etc/burst-nodes.conf")" != "$ino" ] &&
	[ -z "$(ls "$LAB/etc" | grep '^burst-nodes\.conf\.')" ]
ok $? "slurm-conf --output replaces the file by a rename (a new inode, no temporary left)" "$LAB/slurm-conf.err"
if [ "$rel" -lt 2311 ]; then
	kill "$(cat "$LAB/pid/slurmctld.pid")"
	for i in $(seq 100); do scontrol ping 2>/dev/null | grep -q 'is UP' || break; sleep 0.1; done
	lab_ctld; ok $? "22.05: slurmctld restarted" "$LAB/log/slurmctld.log"
else
	scontrol reconfigure >"$LAB/reconf.out" 2>&1; ok $? "$rel: scontrol reconfigure" "$LAB/reconf.out"
fi
for i in $(seq 100); do
	[ "$(sinfo -h -n burst-3 -o %T 2>/dev/null)" = "idle~" ] && break
	sleep 0.1
done
[ "$(sinfo -h -n burst-3 -o %T 2>/dev/null)" = "idle~" ] && [ "$(lab_node_state burst-1)" = "idle~" ]
ok $? "the new node burst-3 is there, powered down, beside the others" "$LAB/log/slurmctld.log"

lab_down
done_testing

#!/usr/bin/env bash
# test_admission.sh - admission on a real cluster: at join, before slurmd
# starts, each node collects its provenance record and runs the node-local
# acceptance suite, including a real Charliecloud container; the agent
# admits only nodes whose acceptance passed. A node whose acceptance fails
# never registers, and its job runs on another node.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"
command -v ch-run >/dev/null || bail "ch-run not found: install charliecloud-runtime"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 90 5 60)
lab_pre_ctld() {
	sh "$src/tests/acceptance/make-busybox-image.sh" "$LAB/images/busybox" "inside-the-image-$$" >/dev/null || return 1
	cat >"$LAB/etc/acceptance.conf" <<CONF
Runtime=charliecloud Template="ch-run {image} -- {command}" ImageDir=$LAB/images
Test=kernel-sane Kind=hardware Command="uname -r" Sanity="^[0-9]+\.[0-9]+" Timeout=10
Test=container-marker Kind=container Image=busybox Command="/bin/cat /etc/burst-image-marker" Sanity="^inside-the-image-$$" Timeout=30
CONF
	# node set "flaky": a test its nodes fail
	{ cat "$LAB/etc/acceptance.conf"
	  echo 'Test=gpu-present Kind=hardware Command="ls /dev/nvidia0" Sanity="nvidia0" Timeout=10'; } \
		>"$LAB/etc/acceptance-fail.conf"
	lab_burst_conf <<CONF || return 1
RejectCooldown=5
Acceptance=$LAB/etc/acceptance.conf
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=flaky Nodes=burst-1 Partition=burst InstanceTypes=local.host Weight=1 Acceptance=$LAB/etc/acceptance-fail.conf
NodeSet=local Nodes=burst-[2-3] Partition=burst InstanceTypes=local.host Weight=10
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
lab_agent_start

id=$(sbatch --parsable --cloud-contract=here -o "$LAB/job.out" --wrap 'echo $CLOUD_PROVENANCE_ID; hostname' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here" "$LAB/err"
lab_wait_job "$id" COMPLETED 120; ok $? "the job completes" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"

grep -q 'burst-1: booting -> rejected: rejected at join: acceptance failed: gpu-present: ' "$LAB/log/agent.log"
ok $? "burst-1 failed its acceptance (gpu-present) and was rejected at join"
[ ! -e "$LAB/log/slurmd-burst-1.log" ]; ok $? "... it never started slurmd"
[ "$(sed -n 2p "$LAB/job.out")" = burst-2 ]; ok $? "the job ran on burst-2 instead ($(sed -n 2p "$LAB/job.out"))" "$LAB/job.out"

# burst-2's record: provenance and acceptance, before slurmd started
rec() {   # NODE EXPR: from the node's newest stored record
	python3 -c 'import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
row = c.execute("select record, decision, provenance_id from records where node=? order by id desc limit 1", (sys.argv[2],)).fetchone()
r = json.loads(row[0]); d = row[1]; pid = row[2]
print(eval(sys.argv[3]))' "$LAB/burst/agent.db" "$1" "$2"
}
[ "$(rec burst-2 'd')" = admitted ]; ok $? "burst-2's record is stored as admitted"
[ "$(rec burst-2 'pid')" = "$(head -1 "$LAB/job.out")" ]
ok $? "... its provenance id is the job's CLOUD_PROVENANCE_ID"
[ "$(rec burst-2 'r["kernel"]["release"]')" = "$(uname -r)" ] &&
	[ "$(rec burst-2 'r["identity"]["instance_id"]')" = "local-lab$$-burst-2-1" ] &&
	[ "$(rec burst-2 'r["identity"]["instance_type"]')" = local.host ]
ok $? "... it records the kernel and the instance"
[ "$(rec burst-2 '[(t["name"], t["passed"]) for t in r["acceptance"]]')" = "[('kernel-sane', True), ('container-marker', True)]" ]
ok $? "... and the acceptance results: both tests passed ($(rec burst-2 '[(t["name"], t["passed"]) for t in r["acceptance"]]'))"
# the marker exists only inside the image: the test's sanity pattern matched it
[ ! -e /etc/burst-image-marker ] && grep -q 'Sanity="^inside-the-image-' "$LAB/etc/acceptance.conf" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if [t for t in d if t["name"] == "container-marker" and t["passed"] and t["run"]] else 1)' "$LAB/burst/nodes/burst-2/acceptance.json"
ok $? "the container test really ran in the Charliecloud image (it read the image's marker)" "$LAB/burst/nodes/burst-2/acceptance.json"
t_report=$(grep -m1 'burst-2: report of instance' "$LAB/log/agent.log" | cut -c2-24)
t_slurmd=$(head -1 "$LAB/log/slurmd-burst-2.log" 2>/dev/null | cut -c2-24)
[ -n "$t_report" ] && [ -n "$t_slurmd" ] && [[ "$t_report" < "$t_slurmd" || "$t_report" == "$t_slurmd" ]]
ok $? "acceptance ran before slurmd started (report $t_report, slurmd $t_slurmd)"
grep 'report of instance' "$LAB/log/agent.log" | sed 's/^/# /'
[ -s "$LAB/burst/nodes/burst-2/provenance.json" ]; ok $? "the node keeps the record it was admitted with (for burst-node health)"

# what the job ran on, from burstctl (the agent's records, Slurm's job)
burstctl="$build/burstctl/burstctl"
"$burstctl" --config "$LAB/etc/burst.conf" provenance --job "$id" >"$LAB/prov.out" 2>&1
ok $? "burstctl provenance --job $id" "$LAB/prov.out"
sed 's/^/# /' "$LAB/prov.out" | head -40
grep -q "burst-2" "$LAB/prov.out" && grep -q "$(head -1 "$LAB/job.out")" "$LAB/prov.out" &&
	grep -q "$(uname -r)" "$LAB/prov.out" && grep -q 'container-marker' "$LAB/prov.out" &&
	! grep -q 'burst-1' "$LAB/prov.out"
ok $? "... shows burst-2, its provenance id, kernel and the container test it passed, not the rejected node" "$LAB/prov.out"
"$burstctl" --config "$LAB/etc/burst.conf" provenance --job "$id" --attestation -o "$LAB/att.json" >/dev/null 2>"$LAB/att.err" &&
	"$burstctl" verify "$LAB/att.json" --key "$LAB/burst/attest.key" >"$LAB/verify.out" 2>&1
ok $? "its signed attestation (in-toto, DSSE) verifies" "$LAB/att.err" "$LAB/verify.out"

lab_wait_node burst-1 'idle~' 30; ok $? "the rejected node is idle~ again after its cooldown"

# a burst node image without the admission plugin (slurm-burst-node's
# plugstack.d file) would run jobs unchecked: refused at join
mv "$LAB/node-plugstack.d/burst-admission.conf" "$LAB/burst-admission.conf.away"
scontrol update nodename=burst-3 state=power_up
for i in $(seq 300); do grep -q 'burst-3: booting -> rejected' "$LAB/log/agent.log" && break; sleep 0.1; done
grep 'burst-3: booting -> rejected' "$LAB/log/agent.log" | grep -q "does not load spank_burst_admission.so: this node would run jobs without the admission check"
ok $? "a node whose plugstack.conf does not load the admission plugin is rejected at join, saying why" "$LAB/log/agent.log"
! grep -q 'burst-3: booting -> admitted' "$LAB/log/agent.log"
ok $? "... and never admitted"
mv "$LAB/burst-admission.conf.away" "$LAB/node-plugstack.d/burst-admission.conf"
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

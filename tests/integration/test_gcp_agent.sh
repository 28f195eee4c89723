#!/usr/bin/env bash
# test_gcp_agent.sh - the agent's gcp provider on a real Slurm, against the
# tests' fake Compute Engine (gce_fake.py on the lab's bridge address: its
# VMs get addresses on the lab's network, its metadata server answers each
# VM by the address it asks from; every token is a JWT the fake verified):
#  1. a job bursts into a Compute Engine VM: the cheaper machine type has no
#     capacity in the zone (ZONE_RESOURCE_POOL_EXHAUSTED), and the agent
#     moves to the next type in the same resume; the VM's startup script is
#     run as Google's guest agent would (in a network namespace on the lab's
#     bridge, with the VM's address), reads its node and join token from the
#     metadata server, burst-node joins, slurmd starts, the job runs with
#     CLOUD_PROVIDER=gcp; after SuspendTime the VM is deleted;
#  2. the agent killed (kill -9 as BURST_CRASH_POINT ends it) at each point
#     of the gcp driver's launch (gcp.bulk.sent, gcp.bulk.done,
#     gcp.metadata.set) and at provider.launch.after: started again, the
#     node gets exactly one VM (nothing launched twice), carrying the node's
#     join token (nothing lost);
#  3. a Spot VM's burst-node watches the metadata server's
#     instance/preempted; preempted, the agent drains the node and requeues
#     its job within Compute Engine's 30 s;
#  4. every request the agent sent fits Google's compute v1 schema.
# Needs node and Google's client (tools/npm-tool.sh gce-client), python3-cryptography.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
fake="$src/tests/integration/gce_fake.py"
[ -x "$build/burst-agent/burst-agent" ] || bail "no burst-agent (build first)"
nm=$("$src/tools/npm-tool.sh" gce-client 2>/dev/null) || nm=

aux=$(mktemp -d /tmp/test_gcp_agent.XXXXXX)
fake_pid=
aux_down() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	fake_pid=
	[ -n "${KEEP:-}" ] || rm -rf "$aux"
}
chmod 755 "$aux"
python3 "$fake" make-key --out "$aux/key0.json" --token-uri http://127.0.0.1:1/token --project burst-test ||
	{ aux_down; bail "gce_fake.py make-key failed (python3-cryptography?)"; }

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 300 10 8)
lab_pre_ctld() {
	# the fake on the lab's bridge; its VMs' addresses on the lab's network
	python3 "$fake" serve --bind "$LAB_NET.1" --port-file "$aux/port" --key "$aux/key0.json" --log "$aux/log.jsonl" \
		--ip-base "$LAB_NET.200" --capacity us-central1-a/e2-medium=0 \
		--zones us-central1=us-central1-a+us-central1-b >"$aux/fake.out" 2>&1 &
	fake_pid=$!
	lab_wait_file "$aux/port" 10 || { cat "$aux/fake.out" >&2; return 1; }
	ep="http://$LAB_NET.1:$(cat "$aux/port")"
	python3 -c 'import json, os, sys
k = json.load(open(sys.argv[1])); k["token_uri"] = sys.argv[3]
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600); os.write(fd, json.dumps(k).encode()); os.close(fd)' \
		"$aux/key0.json" "$aux/key.json" "$ep/token" || return 1
	jp=$((LAB_PORT_CTLD + 300))
	lab_burst_conf <<CONF || return 1
RejectCooldown=60
ReconcileInterval=2
OrphanGrace=30
AllowInsecureEndpoint=yes
Provider=gcp Type=gcp Regions=us-central1 Zones=us-central1-a CredentialsFile=$aux/key.json Endpoint=$ep Image=projects/debian-cloud/global/images/family/debian-12 NetworkTags=burst-node JoinAddress=$LAB_NET.1:$jp
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
Provider=gcpspot Type=gcp Regions=us-central1 Zones=us-central1-b CredentialsFile=$aux/key.json Endpoint=$ep Image=projects/debian-cloud/global/images/family/debian-12 Spot=yes JoinAddress=$LAB_NET.1:$jp
NodeSet=cloud Nodes=burst-[1-5] Partition=burst Providers=gcp InstanceTypes=e2-medium,e2-standard-2
NodeSet=spot Nodes=burst-6 Partition=burst Providers=gcpspot InstanceTypes=e2-standard-2
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
ep="http://$LAB_NET.1:$(cat "$aux/port")"
TAP_DIAG="$LAB/log/agent.log"
ok 0 "burstctl check-config accepts the gcp provider"
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"

vm_re="us-central1-[a-z]/lab$$-burst-[0-9]-[0-9]*"
instance_of() {   # NODE: the VM of its last launch, from the agent's log
	grep -o "$1: launching -> booting: $vm_re" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}
wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}
fstate() { curl -sf "$ep/_fake/state" | python3 -c "import json, sys; d = json.load(sys.stdin); $1"; }
vms_of() {   # NODE: the names of its VMs (not being deleted), one a line
	fstate "print('\n'.join(v['name'] for v in d['vms'] if v['name'].startswith('lab$$-$1-') and v['status'] != 'STOPPING'))" | sed '/^$/d'
}
vm_meta() {   # VM KEY: that metadata item's value
	fstate "vm = [v for v in d['vms'] if v['name'] == '$1'][0]; print(next((i['value'] for i in vm['metadata']['items'] if i['key'] == '$2'), ''))"
}
vm_ip() { fstate "print([v for v in d['vms'] if v['name'] == '$1'][0]['networkInterfaces'][0]['networkIP'])"; }
node_token() {
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select token from nodes where name=?", (sys.argv[2],)).fetchone()[0])' \
		"$LAB/burst/agent.db" "$1" 2>/dev/null
}

# --- 1. a job bursts into a VM, past a type without capacity ---
id=$(sbatch --parsable --cloud-contract=small -w burst-1 -o "$LAB/job.out" \
	--wrap 'hostname; echo "P=$CLOUD_PROVIDER T=$CLOUD_INSTANCE_TYPE I=$CLOUD_INSTANCE_ID"' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=small -w burst-1" "$LAB/err"
wait_log "burst-1: launching -> booting: $vm_re" 120
ok $? "the agent launched burst-1 through the gcp provider" "$LAB/log/agent.log"
grep -q "burst-1: launching -> requested: gcp/e2-medium@us-central1 capacity: .*ZONE_RESOURCE_POOL_EXHAUSTED" "$LAB/log/agent.log"
ok $? "e2-medium (cheaper) had no capacity in the zone: capacity, the agent moved to e2-standard-2" "$LAB/log/agent.log"
i1=$(instance_of burst-1)
v1=${i1#*/}
[ "$(vms_of burst-1)" = "$v1" ] && [ "$(fstate "print([v['machineType'].rsplit('/', 1)[-1] for v in d['vms'] if v['name'] == '$v1'][0])")" = e2-standard-2 ]
ok $? "one VM for burst-1, $v1, an e2-standard-2"
tok=$(node_token burst-1)
[ -n "$tok" ] && [ "$(vm_meta "$v1" burst-join-token)" = "$tok" ] && [ "$(vm_meta "$v1" burst-node)" = burst-1 ]
ok $? "its metadata holds the node and the node's join token"
vm_meta "$v1" startup-script >"$LAB/ss1.sh"
! grep -q "$tok" "$LAB/ss1.sh" && grep -q "^JOIN='$LAB_NET.1:$jp'$" "$LAB/ss1.sh"
ok $? "its startup script holds the JoinAddress and no token" "$LAB/ss1.sh"
addr1=$(vm_ip "$v1")
# Google's guest agent, emulated: the startup script runs in a namespace on
# the lab's bridge with the VM's address, asking the fake's metadata server
mkdir -p "$LAB/emu/burst-1"
"$inst" start "burst-lab$$-emu-burst-1" burst-1 "$addr1/24" "$LAB_BR" "$LAB/emu/burst-1" -- \
	env GCE_METADATA_HOST="$LAB_NET.1:$(cat "$aux/port")" \
	BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
	BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
	sh "$LAB/ss1.sh" >/dev/null
ok $? "the VM's startup script runs (emulated guest agent, address $addr1)" "$LAB/emu/burst-1/node.log"
lab_wait_job "$id" COMPLETED 180
ok $? "burst-node joined, slurmd started, the job completed" "$LAB/emu/burst-1/node.log" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -qx "P=gcp T=e2-standard-2 I=$i1" "$LAB/job.out"
ok $? "the job saw CLOUD_PROVIDER=gcp CLOUD_INSTANCE_TYPE=e2-standard-2 and its VM ($(tail -1 "$LAB/job.out" 2>/dev/null))" "$LAB/job.out"
grep -q "burst-1: provider gcp gave no address" "$LAB/log/agent.log"
ok $((!$?)) "the agent took burst-1's address from the VM's network interface" "$LAB/log/agent.log"
for _ in $(seq 150); do [ -z "$(vms_of burst-1)" ] && break; sleep 0.2; done
[ -z "$(vms_of burst-1)" ]; ok $? "after SuspendTime the agent deleted $v1" "$LAB/log/agent.log"
"$inst" stop "burst-lab$$-emu-burst-1"
lab_wait_node burst-1 'idle~' 30; ok $? "burst-1 is powered down ($(lab_node_state burst-1))"

# --- 2. killed at each point of the driver's launch ---
n=2
for point in gcp.bulk.sent gcp.bulk.done gcp.metadata.set provider.launch.after; do
	node=burst-$n
	n=$((n + 1))
	{ kill "$AGENT_PID"; wait "$AGENT_PID"; } 2>/dev/null
	rm -f "$LAB/burst/agent.sock"
	BURST_CRASH_POINT=$point lab_agent_start >/dev/null 2>&1
	jid=$(sbatch --parsable --cloud-contract=small -w "$node" -o /dev/null --wrap 'true' 2>"$LAB/err")
	for _ in $(seq 600); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$AGENT_PID" 2>/dev/null
	rc=$?
	[ "$rc" = 86 ]; ok $? "$point: the agent ended there (status $rc) launching $node" "$LAB/log/agent.log"
	rm -f "$LAB/burst/agent.sock"
	lab_agent_start; ok $? "$point: started again" "$LAB/log/agent.log"
	wait_log "$node: launching -> booting: $vm_re" 120
	i=$(instance_of "$node")
	sleep 2
	[ -n "$i" ] && [ "$(vms_of "$node")" = "${i#*/}" ]
	ok $? "$point: $node has exactly one VM, the one it is booting on (${i:-none}: $(vms_of "$node" | tr '\n' ' '))" "$LAB/log/agent.log"
	t=$(node_token "$node")
	[ -n "$t" ] && [ -n "$i" ] && [ "$(vm_meta "${i#*/}" burst-join-token)" = "$t" ]
	ok $? "$point: ... carrying the node's join token" "$LAB/log/agent.log"
	scancel "$jid" 2>/dev/null
done
echo "# $(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["path"].endswith("/bulkInsert")))' "$aux/log.jsonl") bulk inserts sent in all"

# --- 3. a Spot VM preempted: the job requeued before Compute Engine stops it ---
sid=$(sbatch --parsable --cloud-contract=small -w burst-6 -o /dev/null --wrap 'sleep 600' 2>"$LAB/err")
ok $? "a job on burst-6 (a Spot=yes provider)" "$LAB/err"
wait_log "burst-6: launching -> booting: $vm_re" 120
ok $? "burst-6 launched" "$LAB/log/agent.log"
i6=$(instance_of burst-6)
v6=${i6#*/}
[ "$(fstate "print([v['scheduling'].get('provisioningModel') for v in d['vms'] if v['name'] == '$v6'][0])")" = SPOT ]
ok $? "its VM $v6 is a Spot VM (scheduling.provisioningModel SPOT)"
vm_meta "$v6" startup-script >"$LAB/ss6.sh"
addr6=$(vm_ip "$v6")
mkdir -p "$LAB/emu/burst-6"
"$inst" start "burst-lab$$-emu-burst-6" burst-6 "$addr6/24" "$LAB_BR" "$LAB/emu/burst-6" -- \
	env GCE_METADATA_HOST="$LAB_NET.1:$(cat "$aux/port")" \
	BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
	BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
	sh "$LAB/ss6.sh" >/dev/null
lab_wait_job "$sid" RUNNING 180
ok $? "it joined; the job runs" "$LAB/emu/burst-6/node.log" "$LAB/log/agent.log"
grep -q "watching http://$LAB_NET.1:$(cat "$aux/port")/computeMetadata/v1/instance/preempted every 5 s" "$LAB/emu/burst-6/node.log"
ok $? "its burst-node watches the metadata server's instance/preempted" "$LAB/emu/burst-6/node.log"
curl -sf -X POST -d "{\"name\": \"$v6\", \"preempted\": true}" "$ep/_fake/vm" >/dev/null
t0=$(date +%s)
wait_log "burst-6: job $sid requeued before its instance goes (spot interruption notice)" 30
ok $? "preempted (instance/preempted TRUE): the agent requeued the job within 30 s ($(($(date +%s) - t0)) s)" "$LAB/log/agent.log" "$LAB/emu/burst-6/node.log"
scontrol show node burst-6 | grep -q "Reason=burst: spot interruption notice: terminate at .* (instance $i6)"
ok $? "burst-6 drained: the notice's reason, its VM named ($(lab_node_state burst-6))" "$LAB/log/agent.log"
[ "$(scontrol show job "$sid" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')" = 1 ]
ok $? "the job was requeued (Restarts=1)"
grep -q "the agent took the notice" "$LAB/emu/burst-6/node.log"; ok $? "the node: the agent took the notice" "$LAB/emu/burst-6/node.log"
scancel "$sid" 2>/dev/null
"$inst" stop "burst-lab$$-emu-burst-6"

# --- 4. every request the agent sent, against Google's schema ---
if [ -n "$nm" ]; then
	NODE_PATH=$nm node "$src/tests/integration/gce_schema_check.js" "$aux/log.jsonl" --agent slurm-burst/ --min 10 >"$LAB/schema.out" 2>&1
	ok $? "every request the agent sent fits the compute v1 schema ($(grep '^checked' "$LAB/schema.out"))" "$LAB/schema.out"
else
	ok 1 "Google's Compute Engine client is not installed (tools/npm-tool.sh gce-client): the schema check cannot run"
fi
! grep -q 'PRIVATE KEY\|ya29\|eyJ' "$LAB/log/agent.log"; ok $? "no key, token or assertion in the agent's log"

done_testing

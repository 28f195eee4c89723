#!/usr/bin/env bash
# test_azure_agent.sh - the agent's azure provider on a real Slurm, against
# the tests' fake Azure (azure_fake.py over TLS with a CA the test makes,
# azure_peers.sh; its NICs get addresses on the lab's network):
#  1. a job bursts into an Azure VM: the cheaper size answers SkuNotAvailable
#     in both zones (capacity: the agent moves to the next size in the same
#     resume, the node never DOWN), the next size's create fails in zone 1
#     with ZonalAllocationFailed (the driver moves to zone 2 in the same
#     launch); the VM's customData is run as cloud-init would (in a network
#     namespace on the lab's bridge, with the NIC's address), burst-node
#     joins, slurmd starts, the job runs with CLOUD_PROVIDER=azure; the
#     agent's metrics count the launches by outcome and the VM's cost, and
#     burstctl cost prices the job; after SuspendTime the VM is deleted;
#  2. a VM of the cluster no node has (made behind the agent's back, tagged
#     for this cluster) is deleted by the reconciler, found by its tags;
#  3. the agent ended (as kill -9 would: BURST_CRASH_POINT) at each point of
#     the azure driver's launch (azure.put.sent, azure.op.done) and at
#     provider.launch.after, AZURE_CRASH_RUNS times each (default 1), and
#     once at azure.put.sent with listings that do not show the new VM (the
#     PUT is sent again after the restart): started again, the node gets
#     exactly one VM (nothing launched twice), carrying the node's join
#     token (nothing lost);
#  4. a quota answer (OperationNotAllowed, the regional cores quota at 0):
#     the size cools down, the create is not sent again while it does;
#  5. a spot VM's burst-node watches IMDS Scheduled Events; a Preempt event
#     for its VM (after one for another VM, which changes nothing): the agent
#     drains the node and requeues its job before the eviction;
#  6. every request the agent sent fits Microsoft's SDK's models.
# Needs node and Microsoft's SDK (tools/npm-tool.sh azure-sdk), openssl.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
export BURST_TOP_SRCDIR=$src
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
. "$src/tests/integration/azure_peers.sh"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
[ -x "$build/burst-agent/burst-agent" ] || bail "no burst-agent (build first)"
runs=${AZURE_CRASH_RUNS:-1}
mods=$(az_sdk_tool 2>/dev/null) || mods=

aux=$(mktemp -d /tmp/test_azure_agent.XXXXXX)
chmod 755 "$aux"
aux_down() {
	az_down
	[ -n "${KEEP:-}" ] || rm -rf "$aux"
}
SUBNET=/subscriptions/$AZ_SUB/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/burst/subnets/nodes
# the fake's faults: the cheaper size has no SKU in the region, the next
# one no capacity in zone 1
base_cfg='"sku_not_available": ["Standard_D2s_v5"], "capacity": [{"size": "Standard_D2as_v5", "zone": "1"}], "lro_polls": 1'

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 300 10 8)
MPORT=
lab_pre_ctld() {
	# the metadata service on the lab's bridge: the emulated VMs reach it
	AZ_IMDS_BIND=$LAB_NET.1 az_up "$aux" "{$base_cfg, \"ip_base\": \"$LAB_NET.100\"}" || return 1
	printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_SECRET=%s\nAZURE_AUTHORITY_HOST=%s\n' \
		"$AZ_TENANT" "$AZ_CLIENT" "$AZ_SECRET" "$AZ_URL" >"$aux/sp.env"
	chmod 600 "$aux/sp.env"
	jp=$((LAB_PORT_CTLD + 300))
	MPORT=$((LAB_PORT_CTLD + 301))
	lab_burst_conf <<CONF || return 1
RejectCooldown=60
ReconcileInterval=2
OrphanGrace=3
MetricsListen=127.0.0.1:$MPORT
Provider=azure Type=azure CredentialsFile=$aux/sp.env Endpoint=$AZ_URL CaFile=$AZ_CA Subscription=$AZ_SUB ResourceGroup=$AZ_RG Image=Canonical:ubuntu-24_04-lts:server:latest SubnetId=$SUBNET Regions=eastus Zones=1,2 JoinAddress=$LAB_NET.1:$jp BuildWait=20
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
Provider=azurespot Type=azure CredentialsFile=$aux/sp.env Endpoint=$AZ_URL CaFile=$AZ_CA Subscription=$AZ_SUB ResourceGroup=$AZ_RG Image=Canonical:ubuntu-24_04-lts:server:latest SubnetId=$SUBNET Regions=eastus Zones=1 JoinAddress=$LAB_NET.1:$jp BuildWait=20 Priority=Spot MaxPrice=0.05
NodeSet=cloud Nodes=burst-[1-20] Partition=burst Providers=azure InstanceTypes=Standard_D2s_v5,Standard_D2as_v5
NodeSet=spot Nodes=burst-21 Partition=burst Providers=azurespot InstanceTypes=Standard_D2as_v5
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log $AZ_DIR/fake.log"
ok 0 "burstctl check-config accepts the azure provider"
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"

vm_re="lab$$-burst-[0-9]*-a[0-9]*z[12]"
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
fstate() { az_state | python3 -c "import json, sys; d = json.load(sys.stdin)['vms']; $1"; }
vms_of() {   # NODE: the names of its VMs (not being deleted), one a line
	fstate "print('\n'.join(sorted(v['name'] for v in d.values() if v['name'].startswith('lab$$-$1-a') and v['provisioningState'] != 'Deleting')))" | sed '/^$/d'
}
vm_field() { fstate "print(d.get('$1'.lower(), {}).get('$2', ''))"; }
vm_script() { vm_field "$1" customData | base64 -d; }
node_token() {
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select token from nodes where name=?", (sys.argv[2],)).fetchone()[0])' \
		"$LAB/burst/agent.db" "$1" 2>/dev/null
}
puts_of() {   # VM: the PUTs the fake was sent for it
	python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)] if r["method"] == "PUT" and r["path"].lower().endswith("/virtualmachines/" + sys.argv[2].lower())))' \
		"$AZ_DIR/requests.jsonl" "$1"
}
metrics() { curl -sf "http://127.0.0.1:$MPORT/metrics"; }

# --- 1. a job bursts into a VM, past a size without SKU and a zone without capacity ---
id=$(sbatch --parsable --cloud-contract=small -w burst-1 -o "$LAB/job.out" \
	--wrap 'hostname; echo "P=$CLOUD_PROVIDER T=$CLOUD_INSTANCE_TYPE I=$CLOUD_INSTANCE_ID"; sleep 2' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=small -w burst-1" "$LAB/err"
wait_log "burst-1: launching -> booting: $vm_re" 120
ok $? "the agent launched burst-1 through the azure provider" "$LAB/log/agent.log"
grep -q "burst-1: launching -> requested: azure/Standard_D2s_v5@eastus capacity: .*SkuNotAvailable.*trying the next candidate" "$LAB/log/agent.log"
ok $? "Standard_D2s_v5 (cheaper) answered SkuNotAvailable: capacity, the agent moved to Standard_D2as_v5 in the same resume" "$LAB/log/agent.log"
v1=$(instance_of burst-1)
[[ "$v1" == lab$$-burst-1-a[0-9]*z2 ]] && [ "$(vms_of burst-1)" = "$v1" ] && [ "$(vm_field "$v1" size)" = Standard_D2as_v5 ] &&
	[ "$(puts_of "${v1%z2}z1")" = 1 ] && [ "$(vm_field "${v1%z2}z1" provisioningState)" != Succeeded ]
ok $? "one VM for burst-1, $v1: a Standard_D2as_v5 in zone 2, after its create in zone 1 failed (${v1:-none}: $(vms_of burst-1 | tr '\n' ' '))"
! grep -q "burst-1: .*-> down\|burst-1: .*DOWN" "$LAB/log/agent.log" && [[ "$(lab_node_state burst-1)" != down* ]]
ok $? "burst-1 was never set DOWN for capacity ($(lab_node_state burst-1))" "$LAB/log/agent.log"
tok=$(node_token burst-1)
vm_script "$v1" >"$LAB/cd1.sh"
[ -n "$tok" ] && grep -q "^TOKEN='$tok'$" "$LAB/cd1.sh" && grep -q "^JOIN='$LAB_NET.1:$jp'$" "$LAB/cd1.sh"
ok $? "its customData holds the JoinAddress and the node's join token" "$LAB/cd1.sh"
addr1=$(vm_field "$v1" ip)
# cloud-init, emulated: the customData runs in a namespace on the lab's
# bridge with the NIC's address
mkdir -p "$LAB/emu/burst-1"
"$inst" start "burst-lab$$-emu-burst-1" burst-1 "$addr1/24" "$LAB_BR" "$LAB/emu/burst-1" -- \
	env BURST_INSTANCE_ID="$v1" BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" \
	BURST_STATE_DIR="$LAB/burst" BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
	sh "$LAB/cd1.sh" >/dev/null
ok $? "the VM's customData runs (emulated cloud-init, address $addr1)" "$LAB/emu/burst-1/node.log"
lab_wait_job "$id" COMPLETED 180
ok $? "burst-node joined, slurmd started, the job completed" "$LAB/emu/burst-1/node.log" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -qx "P=azure T=Standard_D2as_v5 I=$v1" "$LAB/job.out"
ok $? "the job saw CLOUD_PROVIDER=azure CLOUD_INSTANCE_TYPE=Standard_D2as_v5 and its VM ($(tail -1 "$LAB/job.out" 2>/dev/null))" "$LAB/job.out"
! grep -q "burst-1: provider azure gave no address" "$LAB/log/agent.log" &&
	[ "$(scontrol show node burst-1 | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')" = "$addr1" ]
ok $? "Slurm's NodeAddr for burst-1 is the NIC's private address $addr1" "$LAB/log/agent.log"
metrics >"$LAB/m1.txt"
grep -q "^burst_launches_total{provider=\"azure\",instance_type=\"Standard_D2as_v5\",region=\"eastus\",outcome=\"ok\"} 1$" "$LAB/m1.txt" &&
	grep -q "^burst_launches_total{provider=\"azure\",instance_type=\"Standard_D2s_v5\",region=\"eastus\",outcome=\"capacity\"} 1$" "$LAB/m1.txt"
ok $? "metrics: one launch ok (Standard_D2as_v5), one capacity (Standard_D2s_v5)" "$LAB/m1.txt"
for _ in $(seq 150); do [ -z "$(vms_of burst-1)" ] && break; sleep 0.2; done
[ -z "$(vms_of burst-1)" ]; ok $? "after SuspendTime the agent deleted $v1" "$LAB/log/agent.log"
"$inst" stop "burst-lab$$-emu-burst-1"
lab_wait_node burst-1 'idle~' 30; ok $? "burst-1 is powered down ($(lab_node_state burst-1))"
metrics >"$LAB/m2.txt"
awk '/^burst_instance_cost_dollars_total\{provider="azure",instance_type="Standard_D2as_v5",region="eastus"\}/ { exit !($2 > 0) } END { if (NR == 0) exit 1 }' "$LAB/m2.txt" &&
	grep -q '^burst_instance_cost_dollars_total{provider="azure",instance_type="Standard_D2as_v5",region="eastus"}' "$LAB/m2.txt"
ok $? "metrics: the VM's cost at Standard_D2as_v5's price ($(grep '^burst_instance_cost_dollars_total{provider="azure"' "$LAB/m2.txt"))" "$LAB/m2.txt"
# (the job sleeps 2 s: Slurm's start and end times are whole seconds, and a
# job that starts and ends within one second holds its node for 0 s, 0 USD)
"$burstctl" --config "$LAB/etc/burst.conf" cost --by job --json >"$LAB/cost.json" 2>"$LAB/err"
python3 -c 'import json, sys
r = [x for x in json.load(open(sys.argv[1]))["rows"] if x["job"] == sys.argv[2] and x["kind"] == "job"]
sys.exit(0 if r and r[0]["dollars"] > 0 else 1)' "$LAB/cost.json" "$id"
ok $? "burstctl cost prices job $id on its azure node" "$LAB/cost.json" "$LAB/err"

# --- 2. a VM of this cluster that no node has: the reconciler deletes it ---
"$build/tests/unit/arm_cli" --endpoint "$AZ_URL" --sub "$AZ_SUB" --rg "$AZ_RG" --creds "$aux/sp.env" --ca-file "$AZ_CA" \
	create "lab$$-orphan" Standard_B2s eastus 1 Canonical:ubuntu-24_04-lts:server:latest "$SUBNET" \
	--tag burst-cluster="lab$$" --tag burst-provider=azure --tag burst-node=burst-20 --tag burst-attempt=7 >"$aux/orphan.out" 2>&1
[ -n "$(vm_field "lab$$-orphan" name)" ]; ok $? "a VM tagged for this cluster, of no node's launch, made behind the agent's back" "$aux/orphan.out"
gone() { [[ "$(vm_field "$1" provisioningState)" =~ ^(|Deleting)$ ]]; }
for _ in $(seq 150); do gone "lab$$-orphan" && break; sleep 0.2; done
gone "lab$$-orphan" && grep -q "reconcile: instance lab$$-orphan of provider azure (node burst-20): terminating: orphan" "$LAB/log/agent.log"
ok $? "the reconciler found it by its tags and deleted it" "$LAB/log/agent.log"

# --- 3. ended at each point of the driver's launch, started again ---
# (zone 1 has capacity again: each node's VM is made in zone 1)
base_cfg='"sku_not_available": ["Standard_D2s_v5"], "lro_polls": 1'
az_config "{$base_cfg, \"ip_base\": \"$LAB_NET.100\"}"
n=2
crash_case() {   # POINT [replay]
	local point=$1 replay=${2:-} node=burst-$n jid rc i t
	n=$((n + 1))
	{ kill "$AGENT_PID"; wait "$AGENT_PID"; } 2>/dev/null
	rm -f "$LAB/burst/agent.sock"
	[ -n "$replay" ] && az_config "{$base_cfg, \"ip_base\": \"$LAB_NET.100\", \"list_lag\": 600}"
	BURST_CRASH_POINT=$point lab_agent_start >/dev/null 2>&1
	jid=$(sbatch --parsable --cloud-contract=small -w "$node" -o /dev/null --wrap 'true' 2>"$LAB/err")
	for _ in $(seq 600); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$AGENT_PID" 2>/dev/null
	rc=$?
	[ "$rc" = 86 ]; ok $? "$point${replay:+ (listings lag)}: the agent ended there (status $rc) launching $node" "$LAB/log/agent.log"
	rm -f "$LAB/burst/agent.sock"
	lab_agent_start; ok $? "$point: started again" "$LAB/log/agent.log"
	wait_log "$node: launching -> booting: $vm_re" 120
	i=$(instance_of "$node")
	sleep 1
	[ -n "$i" ] && [ "$(vms_of "$node")" = "$i" ]
	ok $? "$point: $node has exactly one VM, the one it is booting on (${i:-none}: $(vms_of "$node" | tr '\n' ' '))" "$LAB/log/agent.log"
	t=$(node_token "$node")
	[ -n "$t" ] && [ -n "$i" ] && vm_script "$i" | grep -q "^TOKEN='$t'$"
	ok $? "$point: ... its customData carrying the node's join token" "$LAB/log/agent.log"
	if [ -n "$replay" ]; then
		[ "$(puts_of "$i")" = 2 ]; ok $? "$point: the listing did not show it, the same PUT was sent again ($(puts_of "$i") PUTs) and answered with the same VM" "$LAB/log/agent.log"
		az_config "{$base_cfg, \"ip_base\": \"$LAB_NET.100\"}"
	else
		[ "$(puts_of "$i")" = 1 ]; ok $? "$point: the restart adopted it, found by its tags ($(puts_of "$i") PUT)" "$LAB/log/agent.log"
	fi
	scancel "$jid" 2>/dev/null
}
for r in $(seq "$runs"); do
	for point in azure.put.sent azure.op.done provider.launch.after; do
		crash_case "$point"
	done
	echo "# crash run $r of $runs done"
done
crash_case azure.put.sent replay

# --- 4. quota: the size cools down, not retried hot ---
az_config "{$base_cfg, \"ip_base\": \"$LAB_NET.100\", \"cores_quota\": {\"eastus\": 0}}"
node=burst-$n
qv="lab$$-$node-a1z1"
jq=$(sbatch --parsable --cloud-contract=small -w "$node" -o /dev/null --wrap 'true' 2>"$LAB/err")
wait_log "$node: launching -> requested: azure/Standard_D2as_v5@eastus quota: .*OperationNotAllowed" 60
ok $? "a create past the cores quota: OperationNotAllowed is quota, the size cools down" "$LAB/log/agent.log"
sleep 6
[ "$(puts_of "$qv")" = 1 ]; ok $? "... and its create is not sent again while it cools down ($(puts_of "$qv") PUTs in 6 s)" "$LAB/log/agent.log"
metrics | grep -q "^burst_cooldowns{provider=\"azure\",instance_type=\"Standard_D2as_v5\",region=\"eastus\"} 1$"
ok $? "metrics: Standard_D2as_v5 in eastus cooling down"
scancel "$jq" 2>/dev/null

# --- 5. a spot VM evicted: the job requeued before the eviction ---
az_config "{$base_cfg, \"ip_base\": \"$LAB_NET.100\"}"
sid=$(sbatch --parsable --cloud-contract=small -w burst-21 -o /dev/null --wrap 'sleep 600' 2>"$LAB/err")
ok $? "a job on burst-21 (a Priority=Spot provider)" "$LAB/err"
wait_log "burst-21: launching -> booting: $vm_re" 120
ok $? "burst-21 launched" "$LAB/log/agent.log"
v21=$(instance_of burst-21)
fstate "v = d['$v21'.lower()]; print(v.get('priority', ''), v.get('evictionPolicy', ''), v.get('maxPrice', ''))" >"$LAB/spot21.txt"
[ "$(cat "$LAB/spot21.txt")" = "Spot Delete 0.05" ]
ok $? "its VM $v21 is a spot VM: priority, evictionPolicy, maxPrice ($(cat "$LAB/spot21.txt"))" "$LAB/spot21.txt"
vm_script "$v21" >"$LAB/cd21.sh"
grep -q '^BURST_AZURE_METADATA=' "$LAB/cd21.sh" && ! grep -q '^BURST_AZURE_METADATA=' "$LAB/cd1.sh"
ok $? "its customData (not an on-demand VM's) has burst-node watch Scheduled Events" "$LAB/cd21.sh"
addr21=$(vm_field "$v21" ip)
mkdir -p "$LAB/emu/burst-21"
"$inst" start "burst-lab$$-emu-burst-21" burst-21 "$addr21/24" "$LAB_BR" "$LAB/emu/burst-21" -- \
	env BURST_INSTANCE_ID="$v21" BURST_AZURE_METADATA="$AZ_IMDS" BURST_NODE_BIN="$(lab_node_image)" \
	BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" \
	SLURMD_CONF="$SLURM_CONF" PATH="$PATH" sh "$LAB/cd21.sh" >/dev/null
lab_wait_job "$sid" RUNNING 180
ok $? "it joined; the job runs" "$LAB/emu/burst-21/node.log" "$LAB/log/agent.log"
grep -qF "watching $AZ_IMDS/metadata/scheduledevents?api-version=2020-07-01 every 5 s" "$LAB/emu/burst-21/node.log"
ok $? "its burst-node watches IMDS Scheduled Events" "$LAB/emu/burst-21/node.log"
# another VM's eviction first: the watch asks twice (5 s apart) before the next event
az_event Preempt "lab$$-burst-20-a1z1" 30
python3 - "$AZ_DIR/requests.jsonl" <<'PY'
import json, sys, time
t0 = time.time()
def polls():
    return sum(1 for l in open(sys.argv[1]) if json.loads(l)["path"] == "/metadata/scheduledevents" and json.loads(l)["t"] > t0)
while polls() < 2 and time.time() - t0 < 30:
    time.sleep(0.2)
PY
[ "$(squeue -h -j "$sid" -o %T)" = RUNNING ] && ! grep -q "burst-21: job $sid requeued" "$LAB/log/agent.log"
ok $? "another VM's Preempt event: the job runs on ($(squeue -h -j "$sid" -o %T))" "$LAB/log/agent.log" "$LAB/emu/burst-21/node.log"
az_event Preempt "$v21" 30
t0=$(date +%s)
wait_log "burst-21: job $sid requeued before its instance goes (spot interruption notice)" 30
ok $? "its own Preempt event: the agent requeued the job within the 30 s notice ($(($(date +%s) - t0)) s)" "$LAB/log/agent.log" "$LAB/emu/burst-21/node.log"
scontrol show node burst-21 | grep -q "Reason=burst: spot interruption notice: terminate at .* (instance $v21)"
ok $? "burst-21 drained: the notice's reason, its VM named ($(lab_node_state burst-21))" "$LAB/log/agent.log"
[ "$(scontrol show job "$sid" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')" = 1 ]
ok $? "the job was requeued (Restarts=1)"
! grep -q "interruption watch.*ignored" "$LAB/emu/burst-21/node.log" && grep -q "the agent took the notice" "$LAB/emu/burst-21/node.log"
ok $? "the node: every events document read, the agent took the notice" "$LAB/emu/burst-21/node.log"
scancel "$sid" 2>/dev/null
"$inst" stop "burst-lab$$-emu-burst-21"

# --- 6. every request the agent sent, against Microsoft's SDK ---
if [ -n "$mods" ]; then
	AZ_SDK_MODULES=$mods node "$src/tests/integration/azure_sdk_check.js" validate "$AZ_DIR/requests.jsonl" >"$LAB/sdk.out" 2>&1
	st=$?
	nreq=$(sed -n 's/^checked \([0-9]*\) requests.*/\1/p' "$LAB/sdk.out")
	[ "$st" -eq 0 ] && [ "${nreq:-0}" -ge 10 ]
	ok $? "every request the agent sent fits @azure/arm-compute's models (${nreq:-0} checked)" "$LAB/sdk.out"
else
	ok 1 "Microsoft's SDK is not installed (tools/npm-tool.sh azure-sdk): the requests cannot be checked"
fi
! grep -qF "$AZ_SECRET" "$LAB/log/agent.log"; ok $? "no client secret in the agent's log"

done_testing

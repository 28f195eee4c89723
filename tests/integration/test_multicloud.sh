#!/usr/bin/env bash
# test_multicloud.sh - one node set over three clouds, EC2 (moto_server),
# Compute Engine (the tests' fake, gce_fake.py) and Azure (azure_fake.py
# over TLS), on a real Slurm; no VM boots here (test_gcp_agent.sh,
# test_aws_agent.sh and test_azure_agent.sh boot theirs), the agent's
# choices are what is checked:
#  1. per-job ranking: three jobs whose contracts rank different clouds
#     first launch in different clouds (t3.small on aws, e2-medium on gcp,
#     Standard_B2s on azure); the gcp one's first zone has no capacity, and
#     Compute Engine's regional bulk insert, allowed both zones, makes it in
#     the other;
#  2. capacity in every zone for both gcp machine types of a contract: the
#     node falls through e2-medium, then e2-standard-2, then to azure
#     (Standard_B2s, priced between them and aws), within the one resume
#     (one launch intent each, no resume failure, never DOWN), each refused
#     (type, region) cooling down;
#  3. quota (QUOTA_EXCEEDED for the region's CPUs): the machine type's
#     family (e2) cools down in that region, the node launches on aws;
#  4. cost and metrics of the gcp node (burstctl cost, /metrics).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
. "$src/tests/integration/ec2_peers.sh"
export BURST_TOP_SRCDIR=$src
. "$src/tests/integration/azure_peers.sh"
burstctl="$build/burstctl/burstctl"
fake="$src/tests/integration/gce_fake.py"
[ -x "$build/burst-agent/burst-agent" ] || bail "no burst-agent (build first)"

aux=$(mktemp -d /tmp/test_multicloud.XXXXXX)
fake_pid= moto_pid=
aux_down() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	fake_pid= moto_pid=
	az_down
	[ -n "${KEEP:-}" ] || rm -rf "$aux"
}
chmod 755 "$aux"
moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID
umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$MOTO_AK" "$MOTO_SK" >"$aux/creds"
umask 022
python3 "$fake" make-key --out "$aux/key0.json" --token-uri http://127.0.0.1:1/token --project burst-test ||
	{ aux_down; bail "gce_fake.py make-key failed (python3-cryptography?)"; }
# zone a of us-central1 has no room at all; zone b has
python3 "$fake" serve --port-file "$aux/port" --key "$aux/key0.json" --log "$aux/log.jsonl" \
	--capacity us-central1-a=0 --zones us-central1=us-central1-a+us-central1-b >"$aux/fake.out" 2>&1 &
fake_pid=$!
for _ in $(seq 100); do [ -s "$aux/port" ] && break; sleep 0.1; done
[ -s "$aux/port" ] || { aux_down; bail "the fake did not start"; }
gep="http://127.0.0.1:$(cat "$aux/port")"
python3 -c 'import json, os, sys
k = json.load(open(sys.argv[1])); k["token_uri"] = sys.argv[3]
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600); os.write(fd, json.dumps(k).encode()); os.close(fd)' \
	"$aux/key0.json" "$aux/key.json" "$gep/token" || { aux_down; bail "no key file"; }
az_up "$aux" '{"lro_polls": 1}' || { aux_down; bail "the fake Azure did not start"; }
printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_SECRET=%s\nAZURE_AUTHORITY_HOST=%s\n' \
	"$AZ_TENANT" "$AZ_CLIENT" "$AZ_SECRET" "$AZ_URL" >"$aux/sp.env"
chmod 600 "$aux/sp.env"
MPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 300 10 300)
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	# prices: Standard_B2s after both gcp types of contract "four" and
	# t3.medium after it (so that its fall-through passes the second gcp
	# type before azure)
	lab_burst_conf <<CONF || return 1
RejectCooldown=600
MetricsListen=127.0.0.1:$MPORT
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$MOTO_EP CredentialsFile=$aux/creds ImageId=$MOTO_AMI JoinAddress=$LAB_NET.1:$jp
Provider=gcp Type=gcp Regions=us-central1 Zones=us-central1-a,us-central1-b CredentialsFile=$aux/key.json Endpoint=$gep Image=projects/debian-cloud/global/images/family/debian-12 JoinAddress=$LAB_NET.1:$jp
Provider=azure Type=azure Regions=eastus Zones=1 CredentialsFile=$aux/sp.env Endpoint=$AZ_URL CaFile=$AZ_CA Subscription=$AZ_SUB ResourceGroup=$AZ_RG Image=Canonical:ubuntu-24_04-lts:server:latest SubnetId=/subscriptions/$AZ_SUB/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/burst/subnets/nodes JoinAddress=$LAB_NET.1:$jp
Price=t3.medium Provider=aws Region=us-east-1 OnDemand=0.09
Price=Standard_B2s Provider=azure Region=eastus OnDemand=0.08
Contract=two node_vcpus_count>=2 accelerator_count=0 rank=price
Contract=four node_vcpus_count>=2 node_memory_size>=4G accelerator_count=0 rank=price
Contract=big node_vcpus_count>=4 accelerator_count=0 rank=price
Contract=onazure node_provider=azure node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=multi Nodes=burst-[1-6] Partition=burst Providers=aws,gcp,azure InstanceTypes=t3.small,t3.medium,t3.xlarge,e2-medium,e2-standard-2,e2-highcpu-4,e2-standard-4,Standard_B2s
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
ok 0 "burstctl check-config accepts a node set over aws, gcp and azure"
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"

launched() {   # NODE: the detail of its launch intents, one a line
	sed -n "s/^.*$1: requested -> launching: \(.*\)$/\1/p" "$LAB/log/agent.log"
}
booting() {   # NODE: the instance it is booting on
	sed -n "s/^.*$1: launching -> booting: \([^ ]*\).*$/\1/p" "$LAB/log/agent.log" | tail -1
}
wait_booting() {   # NODE SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -n "$(booting "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
fstate() { curl -sf "$gep/_fake/state" | python3 -c "import json, sys; d = json.load(sys.stdin); $1"; }
gctl() { curl -sf -X POST -d "$1" "$gep/_fake/config" >/dev/null; }
submit() {   # CONTRACT NODE: a job's id
	sbatch --parsable --cloud-contract="$1" -w "$2" -o /dev/null --wrap 'true' 2>>"$LAB/err"
}
bad_state() {   # NODE: non-empty if Slurm has it down, failed or drained
	lab_node_state "$1" | grep -Ei 'down|fail|drain'
}

# --- 1. per-job ranking: three contracts, three clouds; a zone without room ---
a=$(submit two burst-1) && b=$(submit four burst-2) && e=$(submit onazure burst-6)
ok $? "jobs A (contract two), B (contract four) and E (contract onazure)" "$LAB/err"
wait_booting burst-1 90 && wait_booting burst-2 90 && wait_booting burst-6 90
ok $? "the three nodes launched" "$LAB/log/agent.log"
[ "$(launched burst-6)" = "attempt 1 as azure/Standard_B2s@eastus (job $e's contract onazure)" ] &&
	[ "$(booting burst-6)" = "lab$$-burst-6-a1z1" ]
ok $? "burst-6 (job E, contract onazure) launched as azure Standard_B2s, VM $(booting burst-6): $(launched burst-6 | tail -1)" "$LAB/log/agent.log"
[ "$(launched burst-1)" = "attempt 1 as aws/t3.small@us-east-1 (job $a's contract two)" ]
ok $? "burst-1 (job A, contract two) launched as aws t3.small: $(launched burst-1 | tail -1)"
[ "$(launched burst-2)" = "attempt 1 as gcp/e2-medium@us-central1 (job $b's contract four)" ]
ok $? "burst-2 (job B, contract four) launched as gcp e2-medium: $(launched burst-2 | tail -1)"
case $(booting burst-1) in i-*) r=0 ;; *) r=1 ;; esac
ok $r "burst-1 is on an EC2 instance ($(booting burst-1))"
vm2=$(booting burst-2)
[ "${vm2%%/*}" = us-central1-b ] && [ "$(fstate "print(sum(1 for v in d['vms']))")" = 1 ]
ok $? "burst-2's VM is in us-central1-b ($vm2): zone a had no room, the regional bulk insert allowed both" "$LAB/log/agent.log"
python3 - "$aux/log.jsonl" >"$LAB/bulk.out" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["path"].endswith("/bulkInsert"):
        print(e["path"].split("/projects/burst-test/")[-1], sorted(e["body"]["locationPolicy"]["locations"]))
EOF
[ "$(cat "$LAB/bulk.out")" = "regions/us-central1/instances/bulkInsert ['zones/us-central1-a', 'zones/us-central1-b']" ]
ok $? "... one regional bulkInsert, its locationPolicy allowing both zones" "$LAB/bulk.out"

# --- 2. no room for either gcp type in any zone: to aws, in the same resume ---
gctl '{"capacity": {"us-central1-a": 0, "us-central1-b": 0}}'
c=$(submit four burst-3); ok $? "job C (contract four), no gcp room anywhere" "$LAB/err"
wait_booting burst-3 90; ok $? "burst-3 launched" "$LAB/log/agent.log"
launched burst-3 | sed 's/^attempt [0-9]* as \([^ ]*\) .*$/\1/' | tr '\n' ' ' >"$LAB/c3.seq"
[ "$(cat "$LAB/c3.seq")" = "gcp/e2-medium@us-central1 gcp/e2-standard-2@us-central1 azure/Standard_B2s@eastus " ]
ok $? "burst-3 tried gcp e2-medium, gcp e2-standard-2, then azure Standard_B2s: $(cat "$LAB/c3.seq")" "$LAB/log/agent.log"
grep -q "burst-3: launching -> requested: gcp/e2-medium@us-central1 capacity: .*ZONE_RESOURCE_POOL_EXHAUSTED" "$LAB/log/agent.log" &&
	grep -q "burst-3: launching -> requested: gcp/e2-standard-2@us-central1 capacity: .*ZONE_RESOURCE_POOL_EXHAUSTED" "$LAB/log/agent.log"
ok $? "... each gcp type refused for capacity in every zone, said" "$LAB/log/agent.log"
[[ "$(booting burst-3)" == lab$$-burst-3-a[0-9]*z1 ]]
ok $? "burst-3 is booting on an Azure VM ($(booting burst-3))" "$LAB/log/agent.log"
[ "$(grep -c "burst-3: powered_down -> requested" "$LAB/log/agent.log")" = 1 ] &&
	! grep -q 'burst-3: .*-> \(failed\|lost\)' "$LAB/log/agent.log"
ok $? "... within its one resume: requested once, never failed" "$LAB/log/agent.log"
[ -z "$(bad_state burst-3)" ]; ok $? "burst-3 is not DOWN for capacity ($(lab_node_state burst-3))"
metrics() { curl -sf "http://127.0.0.1:$MPORT/metrics" >"$LAB/m.txt"; }
cooling() { grep -q "^burst_cooldowns{provider=\"gcp\",instance_type=\"$1\",region=\"us-central1\"} 1$" "$LAB/m.txt"; }
sleep 1.1   # the gauges are read from the database at most once a second
metrics; cooling e2-medium && cooling e2-standard-2
ok $? "both refused (type, region)s cool down (burst_cooldowns)" "$LAB/m.txt"

# --- 3. the region's CPU quota: the family cools down, the node on aws ---
gctl '{"capacity": {}, "cpu_quota": {"us-central1": 4}}'
d=$(submit big burst-4); ok $? "job D (contract big: 4 vCPUs), 2 of the region's 4 in use" "$LAB/err"
wait_booting burst-4 90; ok $? "burst-4 launched" "$LAB/log/agent.log"
grep -q "burst-4: launching -> requested: gcp/e2-highcpu-4@us-central1 quota: .*QUOTA_EXCEEDED" "$LAB/log/agent.log"
ok $? "e2-highcpu-4 (its first candidate): QUOTA_EXCEEDED, quota" "$LAB/log/agent.log"
launched burst-4 | sed 's/^attempt [0-9]* as \([^ ]*\) .*$/\1/' | tr '\n' ' ' >"$LAB/c4.seq"
[ "$(cat "$LAB/c4.seq")" = "gcp/e2-highcpu-4@us-central1 aws/t3.xlarge@us-east-1 " ] && case $(booting burst-4) in i-*) true ;; *) false ;; esac
ok $? "then aws t3.xlarge ($(booting burst-4)), e2-standard-4 (same family, cheaper than t3.xlarge) never tried: $(cat "$LAB/c4.seq")" "$LAB/log/agent.log"
sleep 1.1
metrics; cooling e2-highcpu-4 && cooling e2-standard-4 &&
	grep -q "gcp/e2-standard-4@us-central1: cooling down with gcp/e2-highcpu-4@us-central1: quota of its family (e2)" "$LAB/log/agent.log"
ok $? "the e2 family cools down in us-central1: e2-standard-4 with e2-highcpu-4" "$LAB/m.txt" "$LAB/log/agent.log"
[ "$(fstate "print(sum(1 for v in d['vms']))")" = 1 ]; ok $? "no VM made past the quota"

# --- 4. cost and metrics of the gcp node ---
metrics
grep -q '^burst_launches_total{provider="gcp",instance_type="e2-medium",region="us-central1",outcome="ok"} 1$' "$LAB/m.txt" &&
	grep -q '^burst_launches_total{provider="gcp",instance_type="e2-standard-2",region="us-central1",outcome="capacity"} 1$' "$LAB/m.txt" &&
	grep -q '^burst_launches_total{provider="gcp",instance_type="e2-highcpu-4",region="us-central1",outcome="quota"} 1$' "$LAB/m.txt"
ok $? "metrics: gcp launches by type and outcome (ok, capacity, quota)" "$LAB/m.txt"
grep -q '^burst_instance_cost_dollars_total{provider="gcp",instance_type="e2-medium",region="us-central1"} [0-9.e-]*[1-9]' "$LAB/m.txt"
ok $? "metrics: the gcp VM's cost at e2-medium's price accrues" "$LAB/m.txt"
"$burstctl" --config "$LAB/etc/burst.conf" --json cost --by provider >"$LAB/cost.json" 2>"$LAB/err"
ok $? "burstctl cost --by provider" "$LAB/err"
python3 - "$LAB/cost.json" >"$LAB/cost.out" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
usd = {}
for r in d["rows"]:
    usd[r["provider"]] = usd.get(r["provider"], 0) + r["dollars"]
print("gcp %.6f USD, aws %.6f USD" % (usd.get("gcp", 0), usd.get("aws", 0)))
sys.exit(0 if usd.get("gcp", 0) > 0 and usd.get("aws", 0) > 0 else 1)
EOF
ok $? "burstctl cost: dollars for gcp and aws ($(cat "$LAB/cost.out"))" "$LAB/cost.out" "$LAB/cost.json"

for j in $a $b $c $d $e; do scancel "$j" 2>/dev/null; done
done_testing

#!/usr/bin/env bash
# test_azure_driver.sh - the agent's azure provider driver
# (burst-agent/drivers/driver_azure.c, driven by tests/unit/aws_driver_cli)
# against the test's fake Azure (tests/integration/azure_fake.py over TLS
# with a CA this test makes), without Slurm: launches named after the nodes
# and idempotent by name, adoption, zones tried in order on capacity within
# the launch, capacity in every zone and quota as the classes the agent
# acts on, list by the cluster's tags, exists, terminate, the managed
# identity, refused credentials; then every request the driver sent is
# validated against Microsoft's SDK's models (tests/integration/
# azure_sdk_check.js validate, @azure/arm-compute from tools/npm/azure-sdk).
#
# burst-matrix: host-only (no Slurm in it)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/azure_peers.sh"
cli="$build/tests/unit/aws_driver_cli"
arm="$build/tests/unit/arm_cli"
[ -x "$cli" ] && [ -x "$arm" ] || bail "no $cli or $arm (make check-unit first)"
MODS=$(az_sdk_tool) || bail "Microsoft's SDK cannot be installed (tools/npm-tool.sh said why above)"
export AZ_SDK_MODULES=$MODS

work=$(mktemp -d /tmp/test_azure_driver.XXXXXX)
cleanup() { az_down; rm -rf "$work"; }
trap cleanup EXIT
az_up "$work" '{"retry_after": 1}' || bail "the fake Azure did not start"
TAP_DIAG="$work/out $work/err $AZ_DIR/fake.log"

printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_SECRET=%s\nAZURE_AUTHORITY_HOST=%s\n' \
	"$AZ_TENANT" "$AZ_CLIENT" "$AZ_SECRET" "$AZ_URL" >"$work/sp.env"
sed "s/^AZURE_CLIENT_SECRET=.*/AZURE_CLIENT_SECRET=not-the-Secret-7/" "$work/sp.env" >"$work/bad.env"
chmod 600 "$work/sp.env" "$work/bad.env"
ssh-keygen -q -t ed25519 -N '' -C burst-test -f "$work/key" >/dev/null 2>&1 ||
	echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBURSTtestkeyonly burst-test" >"$work/key.pub"
SUBNET=/subscriptions/$AZ_SUB/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/burst/subnets/nodes
COMMON="Endpoint=$AZ_URL CaFile=$AZ_CA Subscription=$AZ_SUB ResourceGroup=$AZ_RG Image=Canonical:ubuntu-24_04-lts:server:latest SubnetId=$SUBNET Regions=eastus"
cat >"$work/burst.conf" <<CONF
ClusterName=drv
StateDir=$work/state
AllowInsecureEndpoint=yes
Provider=az Type=azure CredentialsFile=$work/sp.env $COMMON Zones=1,2,3 JoinAddress=10.0.0.5:6830 SshPublicKey=$work/key.pub BuildWait=30
Provider=azspot Type=azure CredentialsFile=$work/sp.env $COMMON Priority=Spot MaxPrice=0.2 OsDiskType=Premium_LRS
Provider=azmi Type=azure MetadataEndpoint=$AZ_IMDS $COMMON
Provider=azbad Type=azure CredentialsFile=$work/bad.env $COMMON
CONF
mkdir -p "$work/state"
drv() { "$cli" "$work/burst.conf" "$@" >"$work/out" 2>"$work/err"; }
vms() { az_state | python3 -c 'import json,sys; d=json.load(sys.stdin)["vms"]; print(" ".join(sorted(d)))'; }
vm() {   # vm NAME FIELD
	az_state | python3 -c 'import json,sys; print(json.load(sys.stdin)["vms"].get(sys.argv[1].lower(), {}).get(sys.argv[2], ""))' "$1" "$2"
}

# ---- launch, by name, in the first zone ----
drv az launch --type Standard_D2s_v5 n1:1:tok-one n2:1:tok-two
grep -qx "n1 drv-n1-a1z1 ok" "$work/out" && grep -qx "n2 drv-n2-a1z1 ok" "$work/out"
ok $? "launch: two VMs named CLUSTER-NODE-aATTEMPT in the first zone, ok"
[ "$(vms)" = "drv-n1-a1z1 drv-n2-a1z1" ] && [ "$(vm drv-n1-a1z1 provisioningState)" = Succeeded ]
ok $? "... made and polled to Succeeded in the fake ($(vms))"
grep -Eq "^address n1 10\.77\.[0-9]+\.[0-9]+$" "$work/err"
ok $? "... the node's address: its NIC's private address"
vm drv-n1-a1z1 tags | grep -q "'burst-cluster': 'drv'.*'burst-node': 'n1'.*'burst-attempt': '1'"
ok $? "... tags burst-cluster, burst-node, burst-attempt" 
vm drv-n1-a1z1 customData | base64 -d >"$work/ud.sh" && sh -n "$work/ud.sh" && grep -q "^NODE='n1'$" "$work/ud.sh" &&
	grep -q "^TOKEN='tok-one'$" "$work/ud.sh" && grep -q "10.0.0.5:6830" "$work/ud.sh"
ok $? "customData: a shell script (sh -n) with the node, its token and the join address" "$work/ud.sh"
drv az launch --type Standard_D2s_v5 n1:1:tok-one
grep -qx "n1 drv-n1-a1z1 ok" "$work/out" && [ "$(vms)" = "drv-n1-a1z1 drv-n2-a1z1" ] &&
	[ "$(grep -c '"method": "PUT"' "$AZ_DIR/requests.jsonl")" = 2 ]
ok $? "the same (node, attempt) again: adopted from the listing, no new PUT"

# ---- capacity: the next zone in the same launch; every zone: PROV_CAPACITY ----
az_config '{"capacity": [{"size": "Standard_D4s_v5", "zone": "1"}]}'
drv az launch --type Standard_D4s_v5 c1:1:tok-c
grep -qx "c1 drv-c1-a1z2 ok" "$work/out" && [ -z "$(vm drv-c1-a1z1 name)" ] && [ "$(vm drv-c1-a1z2 provisioningState)" = Succeeded ]
ok $? "ZonalAllocationFailed in zone 1: the node is made in zone 2 in the same launch, the failed VM deleted"
az_config '{"capacity": [{"size": "Standard_ND96isr_H100_v5"}]}'
drv az launch --type Standard_ND96isr_H100_v5 h1:1:tok-h
grep -q "^h1 - capacity .*ZonalAllocationFailed" "$work/out" && [ "$(grep -c '"method": "DELETE", "path": "[^"]*drv-h1-a1z[123]"' "$AZ_DIR/requests.jsonl")" = 3 ]
ok $? "no capacity in any zone: class capacity (the agent's next candidate), each failed VM deleted"
az_config '{"sku_not_available": ["Standard_NC24ads_A100_v4"]}'
drv az launch --type Standard_NC24ads_A100_v4 s1:1:tok-s
grep -q "^s1 - capacity .*SkuNotAvailable" "$work/out" &&
	[ "$(grep -c '"path": "[^"]*drv-s1-a1z[123]"' "$AZ_DIR/requests.jsonl")" = 3 ]
ok $? "SkuNotAvailable (409 at once): every zone tried, then class capacity"
az_config '{"cores_quota": {"eastus": 30}}'
drv az launch --type Standard_D16s_v5 q1:1:tok-q1 q2:1:tok-q2
grep -q "^q1 drv-q1-a1z1 ok" "$work/out" && grep -q "^q2 - quota .*Total Regional Cores quota" "$work/out"
ok $? "past the cores quota: class quota (the agent cools the candidate down)"
drv az launch --type Standard_D16s_v5 q3:1:tok-q3 q4:1:tok-q4
grep -q "^q3 - quota .*quota" "$work/out" && grep -q "^q4 - quota .*not tried after" "$work/out" &&
	[ "$(grep -c '"path": "[^"]*drv-q4' "$AZ_DIR/requests.jsonl")" = 0 ]
ok $? "... the nodes after a quota answer are not sent (waiting never fixes a quota)"
az_config '{}'

# ---- spot, the managed identity, refused credentials ----
drv azspot launch --type Standard_D2s_v5 p1:1:tok-p
grep -qx "p1 drv-p1-a1 ok" "$work/out" &&
	grep '"path": "[^"]*drv-p1-a1"' "$AZ_DIR/requests.jsonl" | head -1 | grep -q '"priority": "Spot", "evictionPolicy": "Delete", "billingProfile": {"maxPrice": 0.2}'
ok $? "Priority=Spot: priority Spot, evictionPolicy Delete, billingProfile.maxPrice; no Zones=: no zone in the name"
drv azmi launch --type Standard_D2s_v5 m1:1:tok-m
grep -qx "m1 drv-m1-a1 ok" "$work/out"
ok $? "no CredentialsFile=: the managed identity's token from the metadata service"
drv azbad launch --type Standard_D2s_v5 b1:1:tok-b
grep -q "^b1 - auth .*AADSTS7000215" "$work/out" && ! grep -q "not-the-Secret-7" "$work/out" "$work/err"
ok $? "a wrong secret: class auth with Entra's message, never the secret"

# ---- list, exists, terminate ----
"$arm" --endpoint "$AZ_URL" --ca-file "$AZ_CA" --sub "$AZ_SUB" --rg "$AZ_RG" --creds "$work/sp.env" create other-x1 \
	Standard_D2s_v5 eastus "" Canonical:ubuntu-24_04-lts:server:latest "$SUBNET" --tag burst-cluster=other \
	--tag burst-node=x1 >/dev/null 2>&1
az_config '{"page": 2}'
drv az list
[ "$(awk '{print $1, $2, $3, $4}' "$work/out" | sort | tr '\n' ';')" = "drv-c1-a1z2 drv c1 1;drv-n1-a1z1 drv n1 1;drv-n2-a1z1 drv n2 1;drv-q1-a1z1 drv q1 1;" ] &&
	! grep -q other-x1 "$work/out" && ! grep -qv " running$" "$work/out"
ok $? "list: the cluster's VMs by their tags over every page (not another cluster's, not the other providers' of the resource group), running"
drv azspot list
[ "$(awk '{print $1, $2, $3, $4}' "$work/out" | tr '\n' ';')" = "drv-p1-a1 drv p1 1;" ]
ok $? "... provider azspot's listing: its own VM only (burst-provider), none of az's to take for orphans" "$work/out"
drv az exists n2 drv-n2-a1z1 && [ "$(cat "$work/out")" = 1 ]
ok $? "exists: 1"
drv az terminate n2 drv-n2-a1z1
ok $? "terminate: DELETE accepted"
for _ in $(seq 50); do drv az exists n2 drv-n2-a1z1; [ "$(cat "$work/out")" = 0 ] && break; sleep 0.2; done
[ "$(cat "$work/out")" = 0 ]
ok $? "... then exists: 0"
drv az terminate n2 drv-n2-a1z1
ok $? "terminate again (gone): fine"
drv az terminate n2 'x;rm'
st=$?
[ "$st" -ne 0 ] && grep -q "no VM name" "$work/out" "$work/err"
ok $? "terminate of something that is no VM name: refused, nothing sent"

# ---- every request the driver sent, against the SDK's models ----
node "$src/tests/integration/azure_sdk_check.js" validate "$AZ_DIR/requests.jsonl" >"$work/val" 2>&1
st=$?
nreq=$(sed -n 's/^checked \([0-9]*\) requests.*/\1/p' "$work/val")
[ "$st" -eq 0 ] && [ "${nreq:-0}" -ge 10 ]
ok $? "the SDK's VirtualMachine model accepts every VM body the driver sent (${nreq:-?}) and every answer" "$work/val"

done_testing

#!/usr/bin/env bash
# test_azure_wire.sh - the azure wire (lib/cloud/arm.c, azure_auth.c,
# azure_vm.c, driven by tests/unit/arm_cli) against the test's fake Azure
# (tests/integration/azure_fake.py over TLS with a CA this test makes), and
# the fake itself checked by Microsoft's own SDK: @azure/identity and
# @azure/arm-compute (pinned in tools/npm/azure-sdk, installed by
# tools/npm-tool.sh) get tokens, create, poll with the SDK's own poller,
# list and delete against it (tests/integration/azure_sdk_check.js drive);
# then every request the C client sent and every answer the fake gave are
# validated against the SDK's models (azure_sdk_check.js validate), and the
# validator is shown to catch a body the SDK's model refuses.
#
# burst-matrix: host-only (no Slurm in it)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/azure_peers.sh"
cli="$build/tests/unit/arm_cli"
[ -x "$cli" ] || bail "no $cli (make check-programs, or make check-unit, first)"
command -v openssl >/dev/null || bail "no openssl"
MODS=$(az_sdk_tool) || bail "Microsoft's SDK cannot be installed (tools/npm-tool.sh said why above)"
export AZ_SDK_MODULES=$MODS

work=$(mktemp -d /tmp/test_azure_wire.XXXXXX)
cleanup() { az_down; rm -rf "$work"; }
trap cleanup EXIT
H100=Standard_ND96isr_H100_v5
az_up "$work" "{\"capacity\": [{\"size\": \"$H100\", \"zone\": \"2\"}], \"cores_quota\": {\"eastus\": 250}, \"page\": 2}" ||
	bail "the fake Azure did not start"
TAP_DIAG="$AZ_DIR/fake.log $work/err"

# ---- Microsoft's SDK against the fake ----
NODE_EXTRA_CA_CERTS=$AZ_CA node "$src/tests/integration/azure_sdk_check.js" drive >"$work/sdk.out" 2>"$work/err"
nsdk=0
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "SDK: ${line#ok * - }"; nsdk=$((nsdk + 1)) ;;
	"not ok "*) ok 1 "SDK: ${line#not ok * - }" "$work/sdk.out" "$work/err"; nsdk=$((nsdk + 1)) ;;
	esac
done <"$work/sdk.out"
[ "$nsdk" -eq 12 ] && grep -q "^# sdk checks 12$" "$work/sdk.out"
ok $? "the SDK's drive made its 12 checks to the end ($nsdk)" "$work/sdk.out" "$work/err"

# ---- the C client: tokens three ways ----
printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_SECRET=%s\nAZURE_AUTHORITY_HOST=%s\n' \
	"$AZ_TENANT" "$AZ_CLIENT" "$AZ_SECRET" "$AZ_URL" >"$work/sp.env"
chmod 600 "$work/sp.env"
printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_CERTIFICATE_PATH=%s\nAZURE_AUTHORITY_HOST=%s\n' \
	"$AZ_TENANT" "$AZ_CERT_CLIENT" "$AZ_DIR/client.pem" "$AZ_URL" >"$work/cert.env"
chmod 600 "$work/cert.env"
sed "s/^AZURE_CLIENT_SECRET=.*/AZURE_CLIENT_SECRET=wrong-Secret-9/" "$work/sp.env" >"$work/bad.env"
chmod 600 "$work/bad.env"
C=("$cli" --endpoint "$AZ_URL" --ca-file "$AZ_CA" --sub "$AZ_SUB" --rg "$AZ_RG" --timeout 30)
arm() {   # arm CREDS-FILE|--managed ARGS... : the line into $work/out, stderr into $work/err; its exit status
	local cr=$1
	shift
	if [ "$cr" = --managed ]; then
		"${C[@]}" --managed --imds "$AZ_IMDS" "$@" >"$work/out" 2>"$work/err"
	else
		"${C[@]}" --creds "$cr" "$@" >"$work/out" 2>"$work/err"
	fi
}
has() { grep -q -- "$1" "$work/out"; }

arm "$work/sp.env" token
ok $? "a client secret: a token from Entra's endpoint"
arm "$work/cert.env" token && has "tokens=1"
ok $? "a certificate: the fake verifies the C client's signed assertion"
arm --managed token
ok $? "the managed identity: a token from the metadata service"
arm "$work/bad.env" token
st=$?
[ "$st" -eq 6 ] && grep -q "AADSTS7000215" "$work/err" && ! grep -q "wrong-Secret-9" "$work/err" "$work/out"
ok $? "a wrong secret: class auth, Entra's AADSTS7000215, the secret nowhere in the message (exit $st)"
chmod 644 "$work/sp.env"
arm "$work/sp.env" token
st=$?
[ "$st" -eq 6 ] && grep -q "chmod 600" "$work/err"
ok $? "a credentials file others can read: refused, saying chmod 600 (exit $st)"
chmod 600 "$work/sp.env"

# ---- VMs: create with its operation polled, again by name, read, list, delete ----
IMG=Canonical:ubuntu-24_04-lts:server:latest
SUBNET=/subscriptions/$AZ_SUB/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/burst
P=(eastus 1 "$IMG" "$SUBNET" --tag burst-cluster=c1 --tag burst-node=n-1 --tag burst-attempt=1 --custom "#!/bin/sh
echo join")
arm "$work/sp.env" create c1-n-1 Standard_D2s_v5 "${P[@]}" && has "status=201 async=yes final=ok" &&
	polls=$(sed -n 's/.*polls=\([0-9]*\).*/\1/p' "$work/out") && [ "$polls" -ge 3 ]
ok $? "create: 201 with Azure-AsyncOperation, polled to Succeeded over ${polls:-?} polls (the fake answers InProgress twice)" \
	"$work/out" "$work/err"
arm "$work/sp.env" create c1-n-1 Standard_D2s_v5 "${P[@]}" && has "status=200" && has "final=ok"
ok $? "the same PUT again: 200, the same VM (idempotent by name)" "$work/out" "$work/err"
[ "$(az_state | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vms"]))')" = 1 ]
ok $? "... one VM in the fake"
arm "$work/sp.env" get c1-n-1 && has "state=Succeeded" && has "zone=1" && has "node=n-1" && grep -Eq "ip=10\.77\.[0-9]+\.[0-9]+" "$work/out"
ok $? "get: Succeeded, its zone and tags, its NIC's private address" "$work/out" "$work/err"
[ "$(az_state | python3 -c 'import json,sys; print(json.load(sys.stdin)["vms"]["c1-n-1"]["customData"])' | base64 -d)" = "#!/bin/sh
echo join" ]
ok $? "customData: the user data, base64, as sent"
for i in 2 3 4; do
	arm "$work/sp.env" create "c1-n-$i" Standard_D2s_v5 eastus "" "$IMG" "$SUBNET" --spot 0.05 || break
done
arm "$work/sp.env" list && has "pages=2 vms=4" && has "names=c1-n-1,c1-n-2,c1-n-3,c1-n-4"
ok $? "list: every VM, over the pages by nextLink (pages of 2)" "$work/out" "$work/err"

# ---- faults ----
arm "$work/sp.env" create c1-h-1 "$H100" eastus 2 "$IMG" "$SUBNET"
st=$?
[ "$st" -eq 1 ] && has "status=201" && has "final=capacity" && grep -q ZonalAllocationFailed "$work/err"
ok $? "no capacity in the zone: the operation fails ZonalAllocationFailed, class capacity (exit $st)" "$work/out" "$work/err"
arm "$work/sp.env" create c1-h-2 "$H100" eastus 3 "$IMG" "$SUBNET"
ok $? "... the same size in another zone is made" "$work/out" "$work/err"
# a PUT to a VM in Failed state provisions it again, as ARM does
arm "$work/sp.env" create c1-h-1 "$H100" eastus 2 "$IMG" "$SUBNET"
st=$?
[ "$st" -eq 1 ] && has "status=200" && has "final=capacity" && grep -q ZonalAllocationFailed "$work/err"
ok $? "the failed VM PUT again, still no capacity in its zone: 200, its operation fails again (exit $st)" "$work/out" "$work/err"
az_config "{\"cores_quota\": {\"eastus\": 250}, \"page\": 2}"
arm "$work/sp.env" create c1-h-1 "$H100" eastus 2 "$IMG" "$SUBNET" && has "status=200" && has "final=ok"
ok $? "... capacity back: the same PUT re-provisions it (200, its operation Succeeded)" "$work/out" "$work/err"
arm "$work/sp.env" get c1-h-1 && has "state=Succeeded" && has "zone=2"
ok $? "... and it reads back Succeeded in its zone" "$work/out" "$work/err"
arm "$work/sp.env" create c1-q-1 Standard_HB176rs_v4 eastus "" "$IMG" "$SUBNET"
st=$?
[ "$st" -eq 2 ] && has "status=409" && grep -q "Total Regional Cores quota" "$work/err"
ok $? "past the cores quota: 409 OperationNotAllowed, class quota (exit $st)" "$work/out" "$work/err"
az_config "{\"sku_not_available\": [\"Standard_D4s_v5\"]}"
arm "$work/sp.env" create c1-s-1 Standard_D4s_v5 eastus "" "$IMG" "$SUBNET"
st=$?
[ "$st" -eq 1 ] && has "status=409" && grep -q SkuNotAvailable "$work/err"
ok $? "SkuNotAvailable: class capacity (exit $st)" "$work/out" "$work/err"
arm "$work/sp.env" raw GET "https://127.0.0.2:1/subscriptions/$AZ_SUB/x"
st=$?
[ "$st" -eq 5 ] && grep -q "not following it" "$work/err" && has "calls=0"
ok $? "a URL of another origin: not sent (the token stays with the endpoint) (exit $st)" "$work/out" "$work/err"

# ---- throttling: a write bucket of 1 refilled every 3 s ----
az_config '{"buckets": {"writes": [1, 0.34]}}'
thr0=$(az_state | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"].get("throttled", 0))')
for i in 5 6 7 8; do
	arm "$work/sp.env" put-only "c1-t-$i" Standard_D2s_v5 eastus "" "$IMG" "$SUBNET" || break
	cat "$work/out" >>"$work/thr"
done
[ "$i" = 8 ] && [ "$(grep -c 'class=ok' "$work/thr")" = 4 ]
ok $? "four PUTs through a write bucket of one: all made" "$work/thr" "$work/err"
thr=$(sed -n 's/.*throttled=\([0-9]*\).*/\1/p' "$work/thr" | awk '{ s += $1 } END { print s + 0 }')
thr1=$(az_state | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"].get("throttled", 0))')
[ "${thr:-0}" -ge 1 ] && [ $((thr1 - thr0)) -eq "$thr" ]
ok $? "... the fake's 429s ($((thr1 - thr0))) are the client's throttled answers ($thr), each waited out by its Retry-After" \
	"$work/thr"
az_config '{}'

for n in c1-n-1 c1-n-2 c1-n-3 c1-n-4 c1-h-1 c1-h-2 c1-t-5 c1-t-6 c1-t-7 c1-t-8; do
	arm "$work/sp.env" delete "$n" || break
done
[ "$n" = c1-t-8 ] && has "status=202" && has "final=ok"
ok $? "delete: 202, its operation polled to Succeeded, for every VM" "$work/out" "$work/err"
arm "$work/sp.env" get c1-n-1
st=$?
[ "$st" -eq 7 ]
ok $? "... then get: not-found (exit $st)" "$work/out" "$work/err"
[ "$(az_state | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["vms"]), len(d["nics"]))')" = "0 0" ]
ok $? "... no VM and no network interface left in the fake"

# ---- every request and answer against the SDK's models ----
node "$src/tests/integration/azure_sdk_check.js" validate "$AZ_DIR/requests.jsonl" >"$work/val" 2>&1
st=$?
nreq=$(sed -n 's/^checked \([0-9]*\) requests.*/\1/p' "$work/val")
[ "$st" -eq 0 ] && [ "${nreq:-0}" -ge 16 ]
ok $? "the SDK's models accept every VM body sent (${nreq:-?}: the SDK's and the C client's) and every answer" "$work/val"
# the validator can fail: a body with a property the model does not have, and a wrong type
python3 - "$AZ_DIR/requests.jsonl" "$work/bad.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["method"] == "PUT" and "/virtualMachines/c1-" in r["path"]:
        r["body"]["properties"]["hardwareProfile"]["vmSzie"] = "x"
        r["body"]["properties"]["osProfile"]["linuxConfiguration"]["disablePasswordAuthentication"] = "yes"
        open(sys.argv[2], "w").write(json.dumps(r) + "\n")
        break
PY
node "$src/tests/integration/azure_sdk_check.js" validate "$work/bad.jsonl" >"$work/val2" 2>&1
st=$?
[ "$st" -eq 1 ] && grep -q "vmSzie: not a property" "$work/val2" && grep -q "disablePasswordAuthentication: not a boolean" "$work/val2"
ok $? "... and the validator refuses an unknown property and a wrong type" "$work/val2"
! grep -rq -- "$AZ_SECRET" "$AZ_DIR/requests.jsonl" "$work/out" "$work/err" "$work/thr"
ok $? "the secret appears in no log"

done_testing

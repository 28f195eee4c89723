#!/usr/bin/env bash
# test_catalog_refresh.sh - burstctl catalog refresh against moto_server
# (signatures checked): DescribeInstanceTypes with the provider's
# credentials from burst.conf, the written CSV checked against boto3's own
# describe_instance_types for a few types, read back by 'burstctl catalog
# show --catalog-dir'; in place, --output FILE, --json; the errors (unknown
# provider, one neither aws, openstack, gcp nor azure, a wrong secret, throttling) exit 2
# with a clear message and write nothing. An azure provider from the fake
# Azure's Resource SKUs (tests/integration/azure_fake.py, two pages): sizes
# added, the shipped catalog's GPU facts kept, a wrong secret refused.
# burst-matrix: host-only (provider only, no Slurm in it: the same on every Slurm release)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
export BURST_TOP_SRCDIR=$src
. "$src/tests/integration/azure_peers.sh"
burstctl="$build/burstctl/burstctl"
[ -x "$burstctl" ] || bail "no $burstctl (build first)"

aux=$(mktemp -d /tmp/test_catalog_refresh.XXXXXX)
moto_pid= fake_pid=
aux_down() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	moto_pid= fake_pid=
	az_down
	rm -rf "$aux"
}
trap aux_down EXIT
trap 'aux_down; exit 130' INT TERM
TAP_DIAG="$aux/err"

moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
fake_up "$aux" || { aux_down; bail "the fault endpoint did not start"; }
fake_pid=$FAKE_PID fep=$FAKE_EP
curl -s -X POST -d '{"rules": [{"match": {"Action": "DescribeInstanceTypes"}, "error": "RequestLimitExceeded", "message": "slow down", "status": 503}]}' \
	"$fep/_script" >/dev/null

umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
badsecret="Wr0ngSecretForTheTest$$xyz"
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$badsecret" >"$aux/badcreds"
umask 022
cat >"$aux/burst.conf" <<CONF
ClusterName=refresh$$
StateDir=$aux/state
CatalogDir="$src/share/catalog"
Provider=local Bridge=brx0 Address=10.250.0.1/24
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$ep CredentialsFile=$aux/creds ImageId=ami-12345678
Provider=awsbad Type=aws Regions=us-east-1 Endpoint=$ep CredentialsFile=$aux/badcreds ImageId=ami-12345678
Provider=awsslow Type=aws Regions=us-east-1 Endpoint=$fep CredentialsFile=$aux/creds ImageId=ami-12345678
CONF
export BURST_CATALOG_DIR="$src/share/catalog"
bc() { "$burstctl" -c "$aux/burst.conf" "$@"; }

# --- 1. refresh into a directory ---
bc catalog refresh --provider aws --output-dir "$aux/out" >"$aux/out.txt" 2>"$aux/err"
ok $? "catalog refresh --provider aws --output-dir OUT" "$aux/err"
sed -n '1p;/^added:/p;/^changed:/p;/^kept/p;/^missing/p;/^unchanged/p' "$aux/out.txt" | sed 's/^/# /'
grep -q "^wrote $aux/out/aws.csv: [0-9]* instance types, version [0-9.]*-api (was 2026" "$aux/out.txt" &&
	grep -q '^added: [1-9]' "$aux/out.txt" && grep -q '^unchanged: [1-9]' "$aux/out.txt"
ok $? "the summary: what was written, the version, added/changed/kept/missing/unchanged" "$aux/out.txt"
[ -f "$aux/out/aws-prices.csv" ] && cmp -s "$aux/out/aws-prices.csv" "$src/share/catalog/aws-prices.csv"
ok $? "the prices are beside it (OUT is a whole catalog of the provider)"
! ls -a "$aux/out" | grep -q tmp; ok $? "no temporary file left"
grep -q '^# version=[0-9.]*-api$' "$aux/out/aws.csv" && grep -q '^# refreshed by burstctl catalog refresh from EC2 DescribeInstanceTypes (provider aws, region us-east-1)' "$aux/out/aws.csv"
ok $? "the CSV has the new version and says where it came from" "$aux/out/aws.csv"
cmp -s <(git -C "$src" show HEAD:share/catalog/aws.csv 2>/dev/null || cat "$src/share/catalog/aws.csv") "$src/share/catalog/aws.csv"
ok $? "the shipped catalog is untouched"

# --- 2. the CSV against boto3's describe_instance_types ---
export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
unset AWS_SESSION_TOKEN AWS_PROFILE
"$MOTO_PY" - "$ep" "$aux/out/aws.csv" "$aux/m7i-vendor" >"$aux/cmp.txt" 2>&1 <<'PY'
import csv, re, sys, boto3
ep, path = sys.argv[1], sys.argv[2]
rows = {}
with open(path) as f:
    lines = [l for l in f if not l.startswith("#")]
for r in csv.DictReader(lines):
    rows[r["instance_type"]] = r
ec2 = boto3.client("ec2", endpoint_url=ep, region_name="us-east-1")
# every moto knows these six; g7e.2xlarge (2025) only a moto of 2025 or later
# (Debian 13's 5.1.1 does not): compared where this moto has it
types = ["p4d.24xlarge", "g5.12xlarge", "c7g.large", "trn1.32xlarge", "t3.micro", "m7i.large"]
known = {t["InstanceType"] for pg in ec2.get_paginator("describe_instance_types").paginate()
         for t in pg["InstanceTypes"]}
if "g7e.2xlarge" in known:
    types.append("g7e.2xlarge")
bad = 0
missing = set(types) - known
for name in sorted(missing):
    print("NOT IN MOTO", name); bad += 1
for t in ec2.describe_instance_types(InstanceTypes=sorted(set(types) & known))["InstanceTypes"]:
    name = t["InstanceType"]
    if name == "m7i.large":
        with open(sys.argv[3], "w") as f:
            f.write(t["ProcessorInfo"].get("Manufacturer", ""))
    r = rows.get(name)
    if r is None:
        print("MISSING", name); bad += 1; continue
    gpus = t.get("GpuInfo", {}).get("Gpus", [])
    neuron = t.get("NeuronInfo", {}).get("NeuronDevices", [])
    count = gpus[0]["Count"] if gpus else neuron[0]["Count"] if neuron else 0
    arch = t["ProcessorInfo"]["SupportedArchitectures"][0]
    isa = "aarch64" if arch.startswith("arm64") else "x86_64"
    perf = t["NetworkInfo"]["NetworkPerformance"]
    m = re.match(r"(?:Up to )?(?:(\d+)x )?([\d.]+) Gigabit", perf)
    net = float(m.group(2)) * (int(m.group(1)) if m.group(1) else 1) if m else None
    sto = t.get("InstanceStorageInfo")
    want = {
        "vcpus": str(t["VCpuInfo"]["DefaultVCpus"]),
        "memory_mib": str(t["MemoryInfo"]["SizeInMiB"]),
        "accelerator_count": str(count),
        "processor_isa": isa,
        "efa": "yes" if t["NetworkInfo"]["EfaSupported"] else "no",
        # (moto 5.1.1 sends a total of 0 GB for EBS-only types, EC2 none)
        "storage_gib": str(sto["TotalSizeInGB"]) if sto and sto.get("TotalSizeInGB") else "",
    }
    if not gpus and not neuron and not r["source"].startswith("aws-api"):
        # no accelerator information at all (moto 5.1.1 sends no neuronInfo):
        # the curated count stays, as for any column EC2 does not describe
        del want["accelerator_count"]
    got = {k: r[k] for k in want}
    if net is not None:
        want["network_gbps"] = net
        got["network_gbps"] = float(r["network_gbps"]) if r["network_gbps"] else None
    if got != want:
        print("DIFF", name, "csv", got, "boto3", want); bad += 1
    else:
        print("same", name, r["vcpus"], r["memory_mib"], r["accelerator_count"], r["accelerator"],
              r["processor_isa"], r["network_gbps"], r["efa"], r["source"])
sys.exit(1 if bad else 0)
PY
ok $? "vcpus, memory, accelerator count, ISA, storage, network and EFA as boto3 reads them ($(grep -c '^same ' "$aux/cmp.txt") types)" "$aux/cmp.txt"
sed 's/^/# /' "$aux/cmp.txt"
# (the columns after the GPUs' are EC2's as the moto release describes them:
# Debian 13's moto 5.1.1 says efaSupported "True", no disks: point 7 compares them)
grep -q '^p4d.24xlarge,96,1179648,8,A100-40GB,GPU,NVIDIA,ampere,40960,Intel Xeon Platinum 8275L,Intel,cascadelake,x86_64,.*,platformaware+fix\(+api\)\?$' "$aux/out/aws.csv"
ok $? "p4d.24xlarge keeps its curated 8 x A100-40GB (ampere, 40960 MiB)" "$aux/out/aws.csv"
grep -q '^g5.12xlarge,48,196608,4,A10G,GPU,NVIDIA,ampere,24576,' "$aux/out/aws.csv"
ok $? "g5.12xlarge keeps 24576 MiB per A10G (EC2 says 22888 MiB usable)" "$aux/out/aws.csv"
# the processor's manufacturer as boto3 read it (moto 5.1.1 sends none)
vendor=$(cat "$aux/m7i-vendor" 2>/dev/null)
[ -f "$aux/m7i-vendor" ] &&
	grep -q "^m7i.large,2,8192,0,,,,,,,$vendor,,x86_64,ebs,,12.5,no,aws-api\$" "$aux/out/aws.csv"
ok $? "m7i.large (not in the shipped catalog) is added, source aws-api" "$aux/out/aws.csv"

# --- 3. burstctl reads it ---
bc catalog show p4d.24xlarge --catalog-dir "$aux/out" >"$aux/show.txt" 2>"$aux/err"
ok $? "burstctl catalog show p4d.24xlarge --catalog-dir OUT" "$aux/err"
grep -q 'accelerators *8 x A100-40GB (ampere, 40G)' "$aux/show.txt" && grep -q "catalog *aws=[0-9.]*-api sha256:" "$aux/show.txt"
ok $? "... 8 x A100-40GB, the refreshed catalog's version and checksum" "$aux/show.txt"
bc catalog show m7i.large --catalog-dir "$aux/out" >"$aux/show2.txt" 2>"$aux/err" &&
	grep -q 'node_vcpus_count *2$' "$aux/show2.txt" && grep -q 'processor_isa *x86_64' "$aux/show2.txt"
ok $? "burstctl catalog show m7i.large (an added type): 2 vCPUs, x86_64" "$aux/show2.txt" "$aux/err"
bc --catalog-dir "$aux/out" select 'accelerator=A100-40GB' >"$aux/sel.txt" 2>"$aux/err"
grep -q p4d.24xlarge "$aux/sel.txt"; ok $? "burstctl select over the refreshed catalog finds p4d.24xlarge" "$aux/sel.txt" "$aux/err"

# --- 4. --json, --output FILE, in place, --drop-missing ---
bc catalog refresh --provider aws --output "$aux/one.csv" --json >"$aux/out.json" 2>"$aux/err"
ok $? "--output FILE --json" "$aux/err"
[ "$(jget "$aux/out.json" 'd["output"]')" = "$aux/one.csv" ] && [ "$(jget "$aux/out.json" 'len(d["added"]) > 0 and d["unchanged"] > 0 and d["efa_column_added"]')" = True ] &&
	[ "$(sha256sum <"$aux/one.csv" | cut -d' ' -f1)" = "$(jget "$aux/out.json" 'd["sha256"]')" ]
ok $? "... the JSON names the file, its sha256, what was added and kept" "$aux/out.json"
cp -r "$src/share/catalog" "$aux/copy"
bc --catalog-dir "$aux/copy" catalog refresh --provider aws --drop-missing >"$aux/inplace.txt" 2>"$aux/err"
ok $? "in place (the catalog in use: --catalog-dir COPY), --drop-missing" "$aux/err"
nmiss=$(sed -n 's/^missing (not in EC2.s answer, dropped): //p' "$aux/inplace.txt")
first=$(sed -n 's/^  - //p' "$aux/inplace.txt" | head -1)
[ -n "$nmiss" ] && [ "$nmiss" -gt 0 ] && [ -n "$first" ] && ! grep -q "^$first," "$aux/copy/aws.csv" &&
	grep -q '^# version=[0-9.]*-api$' "$aux/copy/aws.csv"
ok $? "the catalog was rewritten; the $nmiss types EC2 lacks ($first, ...) are dropped" "$aux/inplace.txt"
bc --catalog-dir "$aux/copy" catalog refresh --provider aws >"$aux/again.txt" 2>"$aux/err" &&
	grep -q '^added: 0$' "$aux/again.txt" && grep -q '^changed: 0 values$' "$aux/again.txt"
ok $? "a second refresh finds nothing to add or change" "$aux/again.txt"

# --- 5. errors: exit 2, a clear message, nothing written ---
bc catalog refresh --provider nosuch --output-dir "$aux/e1" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && grep -q "unknown provider 'nosuch' (.* has: local, aws, awsbad, awsslow)" "$aux/err" && [ ! -e "$aux/e1" ]
ok $? "an unknown provider: exit 2 ($rc), the configured ones named" "$aux/err"
bc catalog refresh --provider local --output-dir "$aux/e2" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && grep -q "provider local is of type local: only aws providers (from EC2's DescribeInstanceTypes), openstack ones (from Nova's flavors), gcp ones (from Compute Engine's machine types) and azure ones (from Azure's Resource SKUs) can be refreshed" "$aux/err" && [ ! -e "$aux/e2" ]
ok $? "a provider neither aws, openstack, gcp nor azure: exit 2 ($rc)" "$aux/err"
bc catalog refresh --provider awsbad --output-dir "$aux/e3" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && grep -q "provider awsbad: ec2 DescribeInstanceTypes in us-east-1.*(check the provider's credentials" "$aux/err" &&
	! grep -q "$badsecret" "$aux/err" && [ ! -e "$aux/e3/aws.csv" ]
ok $? "a wrong secret: exit 2 ($rc), the auth error, no secret, nothing written" "$aux/err"
sed 's/^/# /' "$aux/err"
bc catalog refresh --provider awsslow --output-dir "$aux/e4" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && grep -q "RequestLimitExceeded.*(EC2 throttled the calls beyond the retry budget: try again later)" "$aux/err" && [ ! -e "$aux/e4/aws.csv" ]
ok $? "throttled beyond the retry budget: exit 2 ($rc), nothing written" "$aux/err"
sed 's/^/# /' "$aux/err"
bc catalog refresh --output-dir "$aux/e5" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && grep -q "give --provider NAME" "$aux/err"
ok $? "no --provider: exit 2 ($rc)" "$aux/err"
bc catalog refresh --provider aws --output "$aux/x.csv" --output-dir "$aux/e6" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && [ ! -e "$aux/x.csv" ]; ok $? "--output and --output-dir together: exit 2 ($rc)" "$aux/err"

# --- 6. azure: the Resource SKUs, two pages ---
sku() {   # NAME VCPUS MEMORYGB GPUS [REGION]
	printf '{"resourceType": "virtualMachines", "name": "%s", "tier": "Standard", "locations": ["%s"], "capabilities": [{"name": "vCPUs", "value": "%s"}, {"name": "MemoryGB", "value": "%s"}, {"name": "GPUs", "value": "%s"}, {"name": "CpuArchitectureType", "value": "x64"}]}' \
		"$1" "${5:-eastus}" "$2" "$3" "$4"
}
skus="[$(sku Standard_ND96amsr_A100_v4 96 1800 8), $(sku Standard_D2s_v5 2 8 0), $(sku Standard_D2s_v9 2 8 0), $(sku Standard_D4s_v9 4 16 0 westus), $(sku Standard_NC8_H777_v9 8 64 1)]"
az_up "$aux" "{\"skus\": $skus, \"sku_page\": 2}" || bail "the fake Azure did not start"
printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_SECRET=%s\nAZURE_AUTHORITY_HOST=%s\n' "$AZ_TENANT" "$AZ_CLIENT" "$AZ_SECRET" "$AZ_URL" >"$aux/sp.env"
printf 'AZURE_TENANT_ID=%s\nAZURE_CLIENT_ID=%s\nAZURE_CLIENT_SECRET=%s\nAZURE_AUTHORITY_HOST=%s\n' "$AZ_TENANT" "$AZ_CLIENT" "$badsecret" "$AZ_URL" >"$aux/spbad.env"
chmod 600 "$aux/sp.env" "$aux/spbad.env"
azp="Type=azure Endpoint=$AZ_URL CaFile=$AZ_CA Subscription=$AZ_SUB ResourceGroup=$AZ_RG Image=Canonical:ubuntu-24_04-lts:server:latest SubnetId=/subscriptions/$AZ_SUB/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/s Regions=eastus"
cat >"$aux/az.conf" <<CONF
ClusterName=refresh$$
StateDir=$aux/state
Provider=azure $azp CredentialsFile=$aux/sp.env
Provider=azurebad $azp CredentialsFile=$aux/spbad.env
CONF
"$burstctl" -c "$aux/az.conf" catalog refresh --provider azure --output-dir "$aux/az" --json >"$aux/az.json" 2>"$aux/err"
ok $? "catalog refresh --provider azure --output-dir OUT" "$aux/err"
npages=$(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["path"].endswith("/Microsoft.Compute/skus")))' "$AZ_DIR/requests.jsonl")
[ "$npages" = 3 ] && grep -q '"api-version": "2021-07-01"' "$AZ_DIR/requests.jsonl"
ok $? "the Resource SKUs listing read over its three pages (nextLink), api-version 2021-07-01 ($npages GETs)" "$AZ_DIR/requests.jsonl"
[ "$(jget "$aux/az.json" '",".join(sorted(d["added"]))')" = "Standard_D2s_v9,Standard_NC8_H777_v9" ]
ok $? "the sizes the catalog lacks are added, not another region's ($(jget "$aux/az.json" '",".join(sorted(d["added"]))'))" "$aux/az.json"
grep -q '^Standard_D2s_v9,2,8192,0,.*,azure-api$' "$aux/az/azure.csv" && grep -q '^# refreshed by burstctl catalog refresh from Azure.s Resource SKUs (provider azure, region eastus)' "$aux/az/azure.csv"
ok $? "an added size: 2 vCPUs, 8 GiB, source azure-api; the CSV says where it came from" "$aux/az/azure.csv"
[ "$(grep '^Standard_ND96amsr_A100_v4,' "$aux/az/azure.csv" | cut -d, -f2-10)" = "$(grep '^Standard_ND96amsr_A100_v4,' "$src/share/catalog/azure.csv" | cut -d, -f2-10)" ] &&
	grep -q '^Standard_ND96amsr_A100_v4,96,1843200,8,A100-80GB,GPU,NVIDIA,ampere,81920,' "$aux/az/azure.csv"
ok $? "the shipped catalog's verified GPU facts are kept: 8 x A100-80GB, ampere, 81920 MiB (the API names no GPU model)" "$aux/az/azure.csv"
grep -q '^Standard_NC8_H777_v9,8,65536,1,H777,GPU,' "$aux/az/azure.csv" && jget "$aux/az.json" 'd["notes"]' | grep -q "H777"
ok $? "a new GPU size: its model named from the size (H777), the unknown model noted" "$aux/az.json"
"$burstctl" -c "$aux/az.conf" catalog refresh --provider azurebad --output-dir "$aux/e7" >/dev/null 2>"$aux/err"; rc=$?
[ $rc = 2 ] && grep -q "provider azurebad: Entra ID .*AADSTS7000215: Invalid client secret provided.*(check the provider's CredentialsFile=" "$aux/err" && ! grep -q "$badsecret" "$aux/err" && [ ! -e "$aux/e7/azure.csv" ]
ok $? "azure, a wrong secret: exit 2 ($rc), the auth error, no secret, nothing written" "$aux/err"
sed 's/^/# /' "$aux/err"

aux_down
trap - EXIT
done_testing

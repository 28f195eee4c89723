#!/usr/bin/env bash
# test_gcp_driver.sh - the agent's gcp provider driver
# (burst-agent/drivers/driver_gcp.c, through tests/unit/aws_driver_cli)
# against the tests' fake Compute Engine (gce_fake.py), without Slurm: bulk
# inserts named after the nodes, the same launch again (a crash before the
# answer was recorded) answered by its requestId, names in use adopted,
# operations that finish after the first wait, capacity in one zone, a
# region's CPU quota, a partial launch with each VM's own error, the rate
# quota, each VM's metadata (node, attempt, join token) and its startup
# script run against the fake's metadata server, list, console, terminate;
# then every request the driver sent checked against the compute v1 schema
# Google's client ships (gce_schema_check.js).
# Needs node and the client (tools/npm-tool.sh gce-client), python3-cryptography.
# Runs on the host and in the Debian 13 root alike (no Slurm in it).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"

work=$(mktemp -d /tmp/test_gcp_driver.XXXXXX)
fake_pid=
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
TAP_DIAG="$work/out $work/err"
cli="$build/tests/unit/aws_driver_cli"
fake="$src/tests/integration/gce_fake.py"
[ -x "$cli" ] || bail "no $cli (make check builds it)"
nm=$("$src/tools/npm-tool.sh" gce-client 2>"$work/err") ||
	bail "Google's Compute Engine client is not installed: $(tail -3 "$work/err" | tr '\n' ' ')"
export NODE_PATH=$nm

python3 "$fake" make-key --out "$work/key0.json" --token-uri http://127.0.0.1:1/token --project burst-test ||
	bail "gce_fake.py make-key failed (python3-cryptography?)"
python3 "$fake" serve --port-file "$work/port" --key "$work/key0.json" --log "$work/log.jsonl" \
	--capacity us-central1-c=0,us-central1-f=1 --cpu-quota europe-west4=8 \
	--zones us-central1=us-central1-a+us-central1-b+us-central1-c+us-central1-f >"$work/fake.out" 2>&1 &
fake_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || bail "the fake did not start: $(tail -3 "$work/fake.out")"
port=$(cat "$work/port")
ep="http://127.0.0.1:$port"
python3 -c 'import json, os, sys
k = json.load(open(sys.argv[1])); k["token_uri"] = sys.argv[3]
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600); os.write(fd, json.dumps(k).encode()); os.close(fd)' \
	"$work/key0.json" "$work/key.json" "$ep/token"
ctl() { curl -sf -X POST -d "$2" "$ep/_fake/$1" >/dev/null; }
state() { curl -sf "$ep/_fake/state" | python3 -c "import json, sys; d = json.load(sys.stdin); $1"; }

img=projects/debian-cloud/global/images/family/debian-12
cat >"$work/burst.conf" <<CONF
ClusterName=drv
StateDir=$work/state
AllowInsecureEndpoint=yes
Provider=g Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-a,us-central1-b Image=$img NetworkTags=burst-join JoinAddress=10.0.0.5:6830
Provider=gc Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-c Image=$img
Provider=gf Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-f Image=$img
Provider=geu Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=europe-west4 Image=$img Spot=yes
Provider=gall Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-f Image=$img MinCount=all
Provider=gslow Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-a Image=$img BuildWait=1
Provider=gpace Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-b Image=$img WriteQuota=6/4
Provider=gnopace Type=gcp CredentialsFile=$work/key.json Endpoint=$ep Regions=us-central1 Zones=us-central1-b Image=$img WriteQuota=none
CONF
mkdir -p "$work/state"
drv() { SHOW_ADDRESS=1 "$cli" "$work/burst.conf" "$@" >"$work/out" 2>"$work/err"; }
col() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$work/out"; }
vms() { state 'print(len([v for v in d["vms"] if v["status"] != "STOPPING"]))'; }

# --- a launch of 3, regional, two zones allowed ---
drv g launch --type n2-standard-4 n1:1:tok-one n2:1:tok-two n3:1:tok-three
[ "$(grep -c ' ok 10\.' "$work/out")" = 3 ] && [ "$(col n1 2)" = us-central1-a/drv-n1-1 ] &&
	[ "$(awk '{print $2}' "$work/out" | sort -u | wc -l)" = 3 ]
ok $? "a bulk insert of 3: each node its VM (ZONE/drv-NODE-ATTEMPT) and address" "$work/out" "$work/err"
first=$(cat "$work/out")
grep -q "^api_calls [0-9]* tokens 1$" "$work/err"; ok $? "one token for the launch" "$work/err"
bulks() {   # the bulkInserts sent so far: scope, requestId, minCount, names, zones, cluster label, tags
	python3 - "$work/log.jsonl" >"$work/req" <<'EOF'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["path"].endswith("/bulkInsert"):
        b = e["body"]
        print(e["path"].split("/projects/burst-test/")[-1], e["query"].get("requestId", "-"),
              b["minCount"], sorted(b["perInstanceProperties"]),
              sorted((b.get("locationPolicy") or {}).get("locations") or []), b["instanceProperties"]["labels"]["burst-cluster"],
              (b["instanceProperties"].get("tags") or {}).get("items"))
EOF
}
bulks
grep -Eq "^regions/us-central1/instances/bulkInsert [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12} 1 \['drv-n1-1', 'drv-n2-1', 'drv-n3-1'\] \['zones/us-central1-a', 'zones/us-central1-b'\] drv \['burst-join'\]$" "$work/req"
ok $? "one regional bulkInsert: a requestId (UUID), minCount 1, the names, Zones= as its locationPolicy, labels, tags" "$work/req"
state 'vm = [v for v in d["vms"] if v["name"] == "drv-n2-1"][0]; m = {i["key"]: i["value"] for i in vm["metadata"]["items"]}
print(m["burst-node"], m["burst-attempt"], m["burst-join-token"], m["startup-script"].startswith("#!/bin/sh"))' >"$work/md" 2>&1
[ "$(cat "$work/md")" = "n2 1 tok-two True" ]
ok $? "each VM's own metadata: its node, attempt and join token, beside the startup-script" "$work/md"
drv g launch --type n2-standard-4 n1:1:tok-one n2:1:tok-two n3:1:tok-three
[ "$(cat "$work/out")" = "$first" ] && [ "$(vms)" = 3 ]
ok $? "the same launch again (a crash before its answer was recorded): the same VMs, none made" "$work/out"
bulks
[ "$(wc -l <"$work/req")" = 2 ] && [ "$(awk '{print $2}' "$work/req" | sort -u | wc -l)" = 1 ]
ok $? "... its bulkInsert sent with the same requestId, which Compute Engine answers with the first operation"
drv g launch --type n2-standard-4 n3:1:tok-three n4:1:tok-four
[ "$(col n3 2)" = "$(echo "$first" | awk '$1 == "n3" {print $2}')" ] && [ "$(col n3 3)" = ok ] &&
	[ "$(col n4 3)" = ok ] && [ "$(vms)" = 4 ]
ok $? "another batch with a (node, attempt) whose VM exists: adopted (its name in use), the other made" "$work/out" "$work/err"

# --- the startup script, against the fake's metadata server ---
n2vm=$(echo "$first" | awk '$1 == "n2" {print $2}')
ctl vm '{"name": "drv-n2-1", "ip": "127.0.0.1"}'
state 'vm = [v for v in d["vms"] if v["name"] == "drv-n2-1"][0]; print([i["value"] for i in vm["metadata"]["items"] if i["key"] == "startup-script"][0])' >"$work/ss.sh"
printf '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\necho "BURST_JOIN_TOKEN=$BURST_JOIN_TOKEN"\n' >"$work/fake-node"
chmod +x "$work/fake-node"
GCE_METADATA_HOST="127.0.0.1:$port" BURST_NODE_BIN="$work/fake-node" BURST_STATE_DIR="$work/state" \
	timeout 60 sh "$work/ss.sh" >"$work/args" 2>&1
tr '\n' ' ' <"$work/args" | grep -q -- "--agent 10.0.0.5:6830 --node n2 --instance $n2vm .*--provider g --instance-type n2-standard-4 --region us-central1 .*-N n2 BURST_JOIN_TOKEN=tok-two"
ok $? "the startup script: its instance id (ZONE/NAME), node and token from the metadata server, then burst-node join" "$work/args" "$work/ss.sh"
! grep -q 'tok-' "$work/ss.sh"; ok $? "... and no join token in the script every VM of the batch shares" "$work/ss.sh"

# --- list, console, exists ---
drv g list
[ "$(awk '$3 == "n2" {print $1, $2, $4}' "$work/out")" = "$n2vm drv 1" ] && [ "$(grep -c ' drv ' "$work/out")" = 4 ]
ok $? "list: the cluster's VMs by label, each with its node and attempt" "$work/out" "$work/err"
pages() { python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["path"] == "aggregated/instances"))' "$work/log.jsonl"; }
ctl config '{"page_size": 3}'
p0=$(pages)
drv g list
[ "$(grep -c ' drv ' "$work/out")" = 4 ] && [ "$(($(pages) - p0))" = 2 ] &&
	grep -q '"pageToken": "3"' "$work/log.jsonl"
ok $? "list: pages of 3 (nextPageToken): every VM, from two pages" "$work/out" "$work/err"
ctl config '{"page_size": 500}'
ctl vm '{"name": "drv-n1-1", "serial": "burst-node: joined\n"}'
drv g console n1 us-central1-a/drv-n1-1
grep -qx 'where gcloud compute instances get-serial-port-output drv-n1-1 --zone us-central1-a' "$work/out" &&
	grep -qx 'burst-node: joined' "$work/out"
ok $? "console: the serial port's output, and the gcloud command that shows it all" "$work/out" "$work/err"
drv g exists n1 us-central1-a/drv-n1-1; [ "$(cat "$work/out")" = 1 ]; ok $? "exists: 1 for a VM"
drv g exists n9 us-central1-a/drv-n9-1; [ "$(cat "$work/out")" = 0 ]; ok $? "exists: 0 for none"

# --- a VM made, its node and join token not set (a crash, a failed setMetadata) ---
ctl config '{"fail": [{"match": {"method": "POST", "path": "setMetadata"}, "status": 403, "reason": "forbidden", "message": "Required compute.instances.setMetadata permission", "times": 1}]}'
drv g launch --type n2-standard-4 m1:1:tok-m
[ "$(col m1 3)" = transient ] && grep -q 'm1 .*its node and join token not set' "$work/out"
ok $? "setMetadata refused after the bulk insert: transient (the launch is sent again)" "$work/out"
drv g list
[ "$(awk '$1 ~ /drv-m1-1$/ {print $3}' "$work/out")" = - ]
ok $? "list: that VM is no node's (no join token in its metadata): the reconciler does not adopt it" "$work/out"
drv g launch --type n2-standard-4 m1:1:tok-m
[ "$(col m1 3)" = ok ] && [ "$(state 'print(sum(1 for v in d["vms"] if v["name"] == "drv-m1-1"))')" = 1 ] &&
	[ "$(state 'vm = [v for v in d["vms"] if v["name"] == "drv-m1-1"][0]; print([i["value"] for i in vm["metadata"]["items"] if i["key"] == "burst-join-token"][0])')" = tok-m ]
ok $? "... the launch sent again: the same VM, now with its node's join token" "$work/out"
drv g list
[ "$(awk '$1 ~ /drv-m1-1$/ {print $3, $4}' "$work/out")" = "m1 1" ]
ok $? "... and listed as m1's, attempt 1" "$work/out"

# --- faults ---
drv gc launch --type n2-standard-4 c1:1:t
[ "$(col c1 3)" = capacity ] && grep -q 'ZONE_RESOURCE_POOL_EXHAUSTED' "$work/out" && [ "$(vms)" = 5 ]
ok $? "a zone without capacity (zonal bulkInsert): capacity, Google's code in the message (the next candidate)" "$work/out"
grep -q 'zones/us-central1-c/instances/bulkInsert' "$work/log.jsonl"; ok $? "... Zones= of one zone: the zonal bulkInsert"
drv geu launch --type n2-standard-16 e1:1:t e2:1:t
[ "$(col e1 3)" = quota ] && [ "$(col e2 3)" = quota ] && grep -q "QUOTA_EXCEEDED: Quota 'CPUS' exceeded" "$work/out"
ok $? "over a region's CPU quota: quota for each node (the family cools down)" "$work/out"
drv gf launch --type n2-standard-4 f1:1:t f2:1:t
[ "$(col f1 3)" = ok ] && [ "$(col f2 3)" = capacity ] && grep -q 'f2 - capacity .*drv-f2-1 not made: ZONE_RESOURCE_POOL_EXHAUSTED' "$work/out"
ok $? "room for one VM of two (minCount 1): one made, the other capacity, from its own insert operation" "$work/out"
drv gall launch --type n2-standard-4 a1:1:t a2:1:t
[ "$(col a1 3)" = capacity ] && [ "$(col a2 3)" = capacity ] && ! state 'print([v["name"] for v in d["vms"]])' | grep -q drv-a
ok $? "MinCount=all where one fits: none made, both capacity" "$work/out"
ctl config '{"op_delay": 3, "wait_max": 1}'
drv g launch --type n2-standard-4 w1:1:t
[ "$(col w1 3)" = ok ] && [ "$(grep -c 'operations/.*/wait' "$work/log.jsonl")" -ge 2 ]
ok $? "an operation DONE after the first wait: waited for again, the VM made" "$work/out"
drv gslow launch --type n2-standard-4 s1:1:t
[ "$(col s1 3)" = transient ] && grep -q 'still [A-Z]* after BuildWait=' "$work/out"
ok $? "BuildWait= over before the operation is DONE: transient (the agent sends it again)" "$work/out"
sleep 3
drv gslow launch --type n2-standard-4 s1:1:t
[ "$(col s1 3)" = ok ] && [ "$(state 'print(sum(1 for v in d["vms"] if v["name"] == "drv-s1-1"))')" = 1 ]
ok $? "... sent again: the same operation, now DONE, one VM" "$work/out"
ctl config '{"op_delay": 0.5, "wait_max": 120, "quota": {"mutate": 0}}'
drv g launch --type n2-standard-4 q1:1:t
[ "$(col q1 3)" = throttled ] && grep -q 'rateLimitExceeded' "$work/out"
ok $? "the per-minute rate quota spent: throttled (retried later with the same requestId)" "$work/out"
ctl config '{"quota": {}}'
# the write quota (6 mutations a 4-second window here, the clock's windows
# as Compute Engine's minutes): a launch of 10 is 11 of them (a bulk
# insert, a setMetadata each), so it waits for the next window, and none
# is refused; the same launch unpaced is refused past the 6th
throttled() { state 'print(sum(1 for x in d["throttled"] if x["group"] == "mutate"))'; }
ctl config '{"op_delay": 0, "window": 4, "quota": {"mutate": 6}}'
th0=$(throttled)
drv gpace launch --type n2-standard-4 $(for i in $(seq 10); do printf 'p%d:1:tp%d ' "$i" "$i"; done)
[ "$(grep -c ' ok 10\.' "$work/out")" = 10 ] && [ "$(throttled)" = "$th0" ] && grep -q '^write_waits [1-9]' "$work/err"
ok $? "WriteQuota=6/4: a launch of 10 (11 mutations) waits for the next window, none refused ($(throttled) throttled)" \
	"$work/out" "$work/err"
state 'import sys
vm = {v["name"]: v for v in d["vms"]}
sys.exit(0 if all(any(i["key"] == "burst-join-token" and i["value"] == "tp%d" % k
                     for i in vm["drv-p%d-1" % k]["metadata"].get("items", [])) for k in range(1, 11)) else 1)'
ok $? "... every VM has its join token"
drv gnopace launch --type n2-standard-4 $(for i in $(seq 10); do printf 'u%d:1:tu%d ' "$i" "$i"; done)
[ "$(throttled)" -gt "$th0" ] && grep -q 'rateLimitExceeded' "$work/out"
ok $? "... the same launch with WriteQuota=none: refused past the window's 6 (rateLimitExceeded)" "$work/out"
ctl config '{"window": 60, "quota": {}}'

# --- terminate ---
drv g terminate n1 us-central1-a/drv-n1-1; [ "$(cat "$work/out")" = ok ]; ok $? "terminate: ok"
sleep 1
drv g exists n1 us-central1-a/drv-n1-1; [ "$(cat "$work/out")" = 0 ]; ok $? "... and it is gone"
drv g terminate n1 us-central1-a/drv-n1-1; [ "$(cat "$work/out")" = ok ]; ok $? "terminate of a VM already gone: ok"
drv g terminate n1 drv-n1-1; [ $? = 1 ] && grep -q "^permanent gcp g: instance 'drv-n1-1' of n1 is not ZONE/NAME" "$work/out"
ok $? "terminate of an id that is not ZONE/NAME: permanent, saying so" "$work/out"

# --- every request the driver sent, against Google's schema ---
node "$src/tests/integration/gce_schema_check.js" "$work/log.jsonl" --agent slurm-burst/ --min 30 >"$work/out" 2>"$work/err"
ok $? "every request the driver sent, and every answer, fit the compute v1 schema ($(grep '^checked' "$work/out"))"
grep -q 'Instances.SetMetadata' "$work/out" && grep -q 'RegionInstances.BulkInsert' "$work/out" &&
	grep -q 'RegionOperations.Wait' "$work/out" && grep -q 'Instances.AggregatedList' "$work/out"
ok $? "... among them bulkInsert, wait, aggregatedList and setMetadata" "$work/out"

# --- burstctl catalog refresh: Compute Engine's machine types into gcp.csv ---
# (after the schema check: burstctl's requests are not the driver's)
burstctl="$build/burstctl/burstctl"
# its rows without the efa column the refresh adds (no, for every machine type)
cat_csv() { awk -F, -v t="$1" '$1 == t' "$work/cat/gcp.csv" | cut -d, -f1-16,18; }
"$burstctl" --config "$work/burst.conf" --catalog-dir "$src/share/catalog" --json catalog refresh --provider g \
	--output-dir "$work/cat" >"$work/out" 2>"$work/err"
ok $? "burstctl catalog refresh --provider g: from machineTypes and acceleratorTypes (aggregatedList)" "$work/out" "$work/err"
[ "$(cat_csv n4-standard-2)" = "n4-standard-2,2,8192,0,,,,,,,,,x86_64,,,,gcp-api" ] &&
	[ "$(awk -F, '$1 == "n4-standard-2" {print $17}' "$work/cat/gcp.csv")" = no ]
ok $? "a machine type the catalog lacks is added: vCPUs, memory, x86_64, source gcp-api ($(cat_csv n4-standard-2))" "$work/cat/gcp.csv"
[ "$(cat_csv e2-standard-2)" = "$(awk -F, '$1 == "e2-standard-2"' "$src/share/catalog/gcp.csv")" ] &&
	[ "$(cat_csv t2a-standard-1)" = "$(awk -F, '$1 == "t2a-standard-1"' "$src/share/catalog/gcp.csv")" ]
ok $? "rows Compute Engine agrees with are kept byte for byte (t2a-standard-1: ARM64 is the catalog's aarch64)" "$work/cat/gcp.csv"
cat_csv a2-highgpu-1g | grep -q '^a2-highgpu-1g,12,87040,1,A100-40GB,GPU,NVIDIA,ampere,40960,Intel Xeon Platinum 8273CL,Intel,cascadelake,x86_64,' &&
	cat_csv g2-standard-4 | grep -q '^g2-standard-4,4,16384,1,L4,GPU,NVIDIA,ada,24576,'
ok $? "the shipped catalog's verified facts kept: A100-40GB (named 'NVIDIA A100 40GB'), L4, processors" "$work/cat/gcp.csv"
python3 - "$work/out" "$src/share/catalog/gcp.csv" "$work/cat/gcp.csv" >"$work/rep" 2>&1 <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
rows = lambda f: sum(1 for l in open(f) if l.strip() and not l.startswith("#")) - 1
print(r["added"], len(r["missing"]), rows(sys.argv[2]), rows(sys.argv[3]))
assert r["added"] == ["n4-standard-2"] and "e2-medium" in r["missing"] and rows(sys.argv[3]) == rows(sys.argv[2]) + 1
EOF2
ok $? "the report: one added, those the fake lacks reported missing and kept ($(cat "$work/rep"))" "$work/rep" "$work/out"
grep -q "^# refreshed .*Compute Engine's machineTypes.aggregatedList" "$work/cat/gcp.csv" && [ -s "$work/cat/gcp-prices.csv" ]
ok $? "a '# refreshed' line naming Compute Engine; the prices beside it" "$work/cat/gcp.csv"
"$burstctl" --catalog-dir "$work/cat" catalog show n4-standard-2 >"$work/out" 2>&1
grep -q 'n4-standard-2' "$work/out"; ok $? "burstctl catalog show reads the refreshed catalog back" "$work/out"
# the listings in pages of one item (Compute Engine may answer fewer than
# maxResults): every page read, the same catalog
ctl config '{"page_size": 1}'
"$burstctl" --config "$work/burst.conf" --catalog-dir "$src/share/catalog" --json catalog refresh --provider g \
	--output-dir "$work/cat3" >"$work/out" 2>"$work/err" &&
	diff <(grep -v '^# refreshed' "$work/cat/gcp.csv") <(grep -v '^# refreshed' "$work/cat3/gcp.csv") >"$work/rep" 2>&1
ok $? "aggregatedList in pages of one: every page read (nextPageToken), the same catalog" "$work/rep" "$work/err"
python3 - "$work/log.jsonl" >"$work/rep" <<'EOF2'
import json, sys
n = {"machineTypes": 0, "acceleratorTypes": 0}
for l in open(sys.argv[1]):
    e = json.loads(l)
    k = e["path"].rpartition("/")[2]
    if e["path"].startswith("aggregated/") and k in n and "pageToken" in json.dumps(e.get("query")):
        n[k] += 1
print(n["machineTypes"], n["acceleratorTypes"])
EOF2
read -r mtp atp <"$work/rep"
[ "$mtp" -gt 20 ] && [ "$atp" -ge 7 ]
ok $? "... machineTypes and acceleratorTypes each asked page after page ($mtp and $atp pages after the first)" "$work/rep"
ctl config '{"page_size": 0}'
ctl config '{"fail": [{"match": {"method": "GET", "path": "aggregated/machineTypes"}, "status": 403, "reason": "forbidden", "message": "Required compute.machineTypes.list permission", "times": 1}]}'
rm -rf "$work/cat2"
"$burstctl" --config "$work/burst.conf" --catalog-dir "$src/share/catalog" catalog refresh --provider g \
	--output-dir "$work/cat2" >"$work/out" 2>&1
[ $? = 2 ] && grep -q 'compute.machineTypes.list' "$work/out" && [ ! -e "$work/cat2/gcp.csv" ]
ok $? "refused (a missing permission): exit 2, Google's words, nothing written" "$work/out"

done_testing

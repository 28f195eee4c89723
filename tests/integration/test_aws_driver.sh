#!/usr/bin/env bash
# test_aws_driver.sh - the agent's aws provider driver (burst-agent/drivers/driver_aws.c),
# without Slurm: against moto_server (signatures checked) a batch is one
# RunInstances whose repetition (a restart) adopts the same instances, a
# new attempt launches new ones, the user data starts burst-node join with
# the node of its launch index, terminate and exists, stop and start (a warm
# pool's) with the listing's stopped state; against the fault
# endpoint: a partial launch, instances mapped by amiLaunchIndex, error
# classes, and a big batch split to keep each user data under 16 KiB.
# No root needed. Needs moto and boto3 (tests/integration/ec2_peers.sh finds them).
# burst-matrix: host-only (provider only, no Slurm in it: the same on every Slurm release)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
cli="$build/tests/unit/aws_driver_cli"
[ -x "$cli" ] || bail "no $cli (make check builds it)"

work=$(mktemp -d /tmp/test_aws_driver.XXXXXX)
moto_pid= fake_pid=
cleanup() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
TAP_DIAG="$work/out $work/moto.log"

moto_up "$work" || bail "moto_server did not start"
moto_pid=$MOTO_PID ep=$MOTO_EP ami=$MOTO_AMI
export AWS_ACCESS_KEY_ID=$MOTO_AK AWS_SECRET_ACCESS_KEY=$MOTO_SK
unset AWS_SESSION_TOKEN AWS_PROFILE
export AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent
fake_up "$work" || bail "the fault endpoint did not start"
fake_pid=$FAKE_PID fep=$FAKE_EP

cat >"$work/burst.conf" <<CONF
ClusterName=drv
StateDir=$work/state
# moto launches MinCount instances (EC2: up to MaxCount): MinCount=all
AllowInsecureEndpoint=yes
Provider=moto Type=aws Regions=us-east-1 Endpoint=$ep ImageId=$ami JoinAddress=10.0.0.5:6830 MinCount=all
Provider=moto2 Type=aws Regions=us-east-1,us-west-2 Endpoint=$ep ImageId=$ami
Provider=fake Type=aws Regions=us-east-1 Endpoint=$fep ImageId=ami-fake LaunchTemplate=burst-nodes IamInstanceProfile=arn:aws:iam::123456789012:instance-profile/burst
CONF
mkdir -p "$work/state"
drv() { "$cli" "$work/burst.conf" "$@" >"$work/out" 2>&1; }
col() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$work/out"; }
moto_ids() {   # instances of a batch token (or all with burst:cluster=drv), not terminated
	"$MOTO_PY" - "$ep" "${1:-}" <<'PY'
import sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
f = [{"Name": "instance-state-name", "Values": ["pending", "running"]}]
f.append({"Name": "tag:burst:batch", "Values": [sys.argv[2]]} if sys.argv[2] else {"Name": "tag:burst:cluster", "Values": ["drv"]})
print(" ".join(sorted(i["InstanceId"] for r in ec2.describe_instances(Filters=f)["Reservations"] for i in r["Instances"])))
PY
}

# --- moto ---
drv moto launch --type t3.micro n1:1:tok-one n2:1:tok-two n3:1:tok-three
ok $? "a batch of 3 is launched"
[ "$(grep -c ' i-[0-9a-f]* ok$' "$work/out")" = 3 ] && [ "$(grep ' ok$' "$work/out" | awk '{print $2}' | sort -u | wc -l)" = 3 ]
ok $? "each node has its own instance" "$work/out"
first=$(awk '{print $1, $2}' "$work/out")
i2=$(col n2 2)
[ "$(moto_ids | wc -w)" = 3 ]; ok $? "moto runs 3 instances"
drv moto launch --type t3.micro n1:1:tok-one n2:1:tok-two n3:1:tok-three
[ "$(awk '{print $1, $2}' "$work/out")" = "$first" ] && [ "$(moto_ids | wc -w)" = 3 ]
ok $? "the same batch again (a restart) adopts the same instances, launches none" "$work/out"
drv moto launch --type t3.micro n3:1:tok-three
[ "$(col n3 2)" = "$(awk '$1 == "n3" {print $2}' <<<"$first")" ] && [ "$(moto_ids | wc -w)" = 3 ]
ok $? "a node of the batch retried alone (the agent retries node by node) adopts its instance ($(col n3 2))" "$work/out"
grep -q "^burst-[0-9a-f]\{40\} n1:1 n2:1 n3:1 @[0-9]*\.[0-9]* %[a-z0-9-]*$" "$work/state/aws-moto.batches"
ok $? "the batch was journaled before its RunInstances" "$work/state/aws-moto.batches"
drv moto launch --type t3.micro n1:2:tok-one2
n1b=$(col n1 2)
[ "$n1b" != "-" ] && ! grep -q "$n1b" <<<"$first" && [ "$(moto_ids | wc -w)" = 4 ]
ok $? "a new attempt of n1 launches a new instance ($n1b)" "$work/out"

"$MOTO_PY" - "$ep" "$i2" >"$work/ud.sh" <<'PY'
import base64, sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
print(base64.b64decode(ec2.describe_instance_attribute(InstanceId=sys.argv[2], Attribute="userData")["UserData"]["Value"]).decode(), end="")
PY
head -1 "$work/ud.sh" | grep -qx '#!/bin/sh'; ok $? "the user data is a shell script" "$work/ud.sh"
# the user data is the whole batch's: no join token in it; each instance
# has its own as its burst-join-token tag, served by its metadata
! grep -q "tok-\|TOKEN='" "$work/ud.sh"; ok $? "the batch's user data holds no join token" "$work/ud.sh"
first_of() { awk -v n="$1" '$1 == n {print $2}' <<<"$first"; }
"$MOTO_PY" - "$ep" "$(first_of n1)" "$i2" "$(first_of n3)" "$n1b" >"$work/tags" <<'PY'
import sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
for r in ec2.describe_instances(InstanceIds=sys.argv[2:])["Reservations"]:
    for i in r["Instances"]:
        t = {x["Key"]: x["Value"] for x in i.get("Tags", [])}
        print(i["InstanceId"], t.get("burst-join-token", "-"), i.get("MetadataOptions", {}).get("InstanceMetadataTags", "-"))
PY
tag_of() { awk -v i="$1" '$1 == i {print $2}' "$work/tags"; }
[ "$(tag_of "$(first_of n1)")" = tok-one ] && [ "$(tag_of "$i2")" = tok-two ] && [ "$(tag_of "$(first_of n3)")" = tok-three ] &&
	[ "$(tag_of "$n1b")" = tok-one2 ]
ok $? "each instance is tagged with its own token only (that RunInstances turns InstanceMetadataTags on: below, on the requests)" "$work/tags"
printf '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\necho "BURST_JOIN_TOKEN=$BURST_JOIN_TOKEN"\n' >"$work/fake-node"
chmod +x "$work/fake-node"
# IMDSv2, emulated by a curl on PATH: a session token, then the instance's
# burst-join-token tag once $work/imds-tag holds it (an HTTP error until then)
mkdir -p "$work/imds"
printf '%s\n' '#!/bin/sh' 'case "$*" in' \
	'*/latest/api/token*) echo imds-session ;;' \
	'*"X-aws-ec2-metadata-token: imds-session http://169.254.169.254/latest/meta-data/tags/instance/burst-join-token")' \
	"	[ -s '$work/imds-tag' ] || exit 22; cat '$work/imds-tag' ;;" \
	'*) exit 22 ;;' 'esac' >"$work/imds/curl"
chmod +x "$work/imds/curl"
rm -f "$work/imds-tag"
( sleep 2; tag_of "$i2" >"$work/imds-tag" ) &
tagger=$!
PATH="$work/imds:$PATH" BURST_LAUNCH_INDEX=1 BURST_INSTANCE_ID="$i2" BURST_NODE_BIN="$work/fake-node" BURST_STATE_DIR="$work/state" \
	timeout 60 sh "$work/ud.sh" >"$work/args" 2>&1
wait "$tagger"
printf '%s\n' join --agent 10.0.0.5:6830 --node n2 --instance "$i2" \
	--record "$work/state/nodes/n2/admission.env" --provider moto --instance-type t3.micro \
	--region us-east-1 --imds http://169.254.169.254 -- slurmd -D -b -N n2 BURST_JOIN_TOKEN=tok-two >"$work/want"
diff -u "$work/want" "$work/args" >"$work/diff"
ok $? "launch index 1 waits for its tag in its metadata, then runs burst-node join as n2 with that token (in the environment, not on the command line), instance and JoinAddress, watching the metadata service for an interruption notice (--imds)" "$work/diff"
BURST_JOIN_TOKEN=tok-given BURST_LAUNCH_INDEX=1 BURST_INSTANCE_ID="$i2" BURST_NODE_BIN="$work/fake-node" BURST_STATE_DIR="$work/state" \
	sh "$work/ud.sh" >"$work/args" 2>&1
grep -qx "BURST_JOIN_TOKEN=tok-given" "$work/args"
ok $? "a token given in the environment (an image's own wrapper) is used as is" "$work/args"
BURST_LAUNCH_INDEX=7 BURST_INSTANCE_ID=i-x BURST_NODE_BIN="$work/fake-node" BURST_STATE_DIR="$work/state" \
	sh "$work/ud.sh" >"$work/args" 2>&1
[ $? -ne 0 ] && grep -q 'no node for launch index 7' "$work/args"
ok $? "an unknown launch index stops the script" "$work/args"

drv moto exists n2 "$i2"; [ "$(cat "$work/out")" = 1 ]; ok $? "exists: a running instance is 1" "$work/out"
drv moto terminate n2 "$i2"; ok $? "terminate" "$work/out"
drv moto exists n2 "$i2"; [ "$(cat "$work/out")" = 0 ]; ok $? "exists: a terminated instance is 0" "$work/out"
drv moto terminate n2 "$i2"; ok $? "terminate again is fine" "$work/out"
drv moto terminate n9 i-0123456789abcdef0; ok $? "terminate of an unknown instance (gone) is fine" "$work/out"
drv moto exists n9 i-0123456789abcdef0; [ "$(cat "$work/out")" = -1 ]
ok $? "exists: an instance EC2 does not know yet is -1 (cannot tell)" "$work/out"

# a second region: terminate (a new process, as after a restart) finds it there
drv moto2 launch --type t3.micro --region us-west-2 w1:1:tok-w
iw=$(col w1 2)
[ "$(col w1 3)" = ok ]; ok $? "a launch in us-west-2 ($iw)" "$work/out"
drv moto2 exists w1 "$iw"; [ "$(cat "$work/out")" = 1 ]; ok $? "exists finds it in the second region" "$work/out"
# a warm pool's verbs: StopInstances and StartInstances in the region that knows it
lstate() { drv moto2 list && awk -v i="$1" '$1 == i { print $5 }' "$work/out"; }
drv moto2 stop w1 "$iw"; ok $? "stop (StopInstances, found in the second region)" "$work/out"
st=$(lstate "$iw"); [ "$st" = stopped ] || [ "$st" = stopping ]
ok $? "... the listing says it is stopped or stopping ($st), not gone" "$work/out"
drv moto2 exists w1 "$iw"; [ "$(cat "$work/out")" = 1 ]; ok $? "... and exists says it is there" "$work/out"
drv moto2 start w1 "$iw"; ok $? "start (StartInstances)" "$work/out"
st=$(lstate "$iw"); [ "$st" = running ] || [ "$st" = pending ]
ok $? "... the listing says it runs again ($st)" "$work/out"
drv moto2 start n9 i-0123456789abcdef0; [ $? -eq 1 ] && grep -q '^permanent aws StartInstances i-0123456789abcdef0 (n9): no region knows the instance' "$work/out"
ok $? "start of an instance no region knows: permanent (never used), saying so" "$work/out"
drv moto2 terminate w1 "$iw"; ok $? "terminate" "$work/out"
drv moto2 exists w1 "$iw"; [ "$(cat "$work/out")" = 0 ]; ok $? "... and it is terminated there" "$work/out"

# --- the fault endpoint ---
script() { curl -s -X POST -d "$1" "$fep/_script" >/dev/null; }
reqs() { curl -s "$fep/_requests"; }
script '{"queue": [{"limit": 2}]}'
drv fake launch --type t3.micro p1:1:a p2:1:b p3:1:c
reqs >"$work/req.json"
[ "$(jget "$work/req.json" '[r["action"] for r in d]')" = "['RunInstances', 'CreateTags', 'CreateTags']" ]
ok $? "a batch the journal does not have (never sent) is launched without a DescribeInstances first (then each instance is tagged)" "$work/req.json"
[ "$(jget "$work/req.json" '[(r["params"].get("ResourceId.1"), r["params"].get("ResourceId.2"), r["params"].get("Tag.1.Key"), r["params"].get("Tag.1.Value")) for r in d if r["action"] == "CreateTags"]')" = "[('i-00000000000000001', None, 'burst-join-token', 'a'), ('i-00000000000000002', None, 'burst-join-token', 'b')]" ] &&
	[ "$(jget "$work/req.json" '[r["params"].get("MetadataOptions.InstanceMetadataTags") for r in d if r["action"] == "RunInstances"]')" = "['enabled']" ]
ok $? "... one CreateTags per instance, with its own node's token; RunInstances turns InstanceMetadataTags on" "$work/req.json"
[ "$(col p1 3)" = ok ] && [ "$(col p2 3)" = ok ] && [ "$(col p3 3)" = capacity ] && [ "$(col p3 2)" = - ]
ok $? "a partial launch: the nodes without an instance are capacity failures" "$work/out"
grep -q '^p3 - capacity aws RunInstances t3.micro in us-east-1 for p1..p3 (3 nodes): partial launch: 2 of 3 instances$' "$work/out"
ok $? "... saying so" "$work/out"

curl -s -X POST "$fep/_reset" >/dev/null
script '{"queue": [{"reverse": true}]}'
drv fake launch --type t3.micro q1:1:a q2:1:b q3:1:c
[ "$(col q1 2) $(col q2 2) $(col q3 2)" = "i-00000000000000001 i-00000000000000002 i-00000000000000003" ]
ok $? "instances are mapped to nodes by amiLaunchIndex, not by the order of the answer" "$work/out"
reqs >"$work/req.json"
[ "$(jget "$work/req.json" '[r["params"].get(k) for r in d if r["action"] == "RunInstances" for k in ("LaunchTemplate.LaunchTemplateName", "ImageId", "IamInstanceProfile.Arn", "MinCount", "MaxCount")]')" = "['burst-nodes', 'ami-fake', 'arn:aws:iam::123456789012:instance-profile/burst', '1', '3']" ]
ok $? "RunInstances carries the launch template by name, the image, the profile ARN, MinCount 1 MaxCount 3" "$work/req.json"

# the answer of a RunInstances lost (the agent crashed after sending it):
# the batch is journaled, so the same batch again looks it up and adopts
curl -s -X POST "$fep/_reset" >/dev/null
script '{"rules": [{"match": {"Action": "RunInstances"}, "commit": true, "error": "InvalidParameterValue", "status": 400, "times": 1}]}'
drv fake launch --type t3.micro s1:1:a s2:1:b
[ "$(col s1 2) $(col s2 2)" = "- -" ]; ok $? "a RunInstances whose answer is lost launches but records nothing" "$work/out"
curl -s -X POST -d '{}' "$fep/_script" >/dev/null
drv fake launch --type t3.micro s1:1:a s2:1:b
reqs >"$work/req.json"
[ "$(col s1 2) $(col s2 2)" = "i-00000000000000001 i-00000000000000002" ] &&
	[ "$(jget "$work/req.json" '[r["action"] for r in d]')" = "['RunInstances', 'DescribeInstances', 'CreateTags', 'CreateTags']" ] &&
	[ "$(jget "$work/req.json" '[p["Filter.1.Value.1"] == [q for q in d if q["action"] == "RunInstances"][0]["params"]["ClientToken"] for p in [r["params"] for r in d if r["action"] == "DescribeInstances"]]')" = "[True]" ]
ok $? "... the same batch again (journaled: maybe sent) is looked up by its batch tag and adopted (and tagged), nothing launched" "$work/req.json $work/out"
drv fake launch --type t3.micro s2:1:b
reqs >"$work/req.json"
[ "$(col s2 2)" = i-00000000000000002 ] && [ "$(jget "$work/req.json" '[r["action"] for r in d][4:]')" = "['DescribeInstances', 'CreateTags']" ]
ok $? "... and so is one node of it retried alone" "$work/req.json $work/out"

# a journal that cannot be written: nothing is sent (a crash could not tell it was)
mkdir -p "$work/state2/aws-fake.batches"
sed "s|^StateDir=.*|StateDir=$work/state2|" "$work/burst.conf" >"$work/burst2.conf"
curl -s -X POST "$fep/_reset" >/dev/null
"$cli" "$work/burst2.conf" fake launch --type t3.micro u1:1:a >"$work/out" 2>&1
reqs >"$work/req.json"
[ "$(col u1 3)" = transient ] && grep -q 'cannot write the batch journal' "$work/out" && [ "$(jget "$work/req.json" 'len(d)')" = 0 ]
ok $? "a batch journal that cannot be written: transient, no request sent" "$work/out $work/req.json"

for c in "InsufficientInstanceCapacity capacity" "InstanceLimitExceeded quota" "InvalidAMIID.NotFound permanent" "UnauthorizedOperation auth"; do
	set -- $c
	curl -s -X POST "$fep/_reset" >/dev/null
	script "{\"rules\": [{\"match\": {\"Action\": \"RunInstances\"}, \"error\": \"$1\", \"message\": \"m-$1\", \"status\": 400}]}"
	drv fake launch --type t3.micro r1:1:a
	[ "$(col r1 3)" = "$2" ] && grep -q "for r1: $1: m-$1 (request id req-" "$work/out"
	ok $? "$1 is $2 ($(cat "$work/out"))" "$work/out"
done

curl -s -X POST "$fep/_reset" >/dev/null
nodes=$(for i in $(seq 700); do echo "big-$i:1:0123456789abcdef0123456789abcdef"; done)
drv fake launch --type t3.micro $nodes
[ "$(grep -c ' ok$' "$work/out")" = 700 ] && [ "$(grep ' ok$' "$work/out" | awk '{print $2}' | sort -u | wc -l)" = 700 ]
ok $? "a batch of 700 nodes (no tokens in the user data: about 30 bytes each): each has its own instance" "$work/out"
reqs >"$work/req.json"
python3 - "$work/req.json" >"$work/big" <<'PY'
import base64, json, sys
runs = [r["params"] for r in json.load(open(sys.argv[1])) if r["action"] == "RunInstances"]
sizes = [len(base64.b64decode(p["UserData"])) for p in runs]
print(len(runs), max(sizes), sum(int(p["MaxCount"]) for p in runs), len(set(p["ClientToken"] for p in runs)))
PY
read -r nruns maxud total ntok <"$work/big"
[ "$nruns" -gt 1 ] && [ "$maxud" -le 16384 ] && [ "$total" = 700 ] && [ "$ntok" = "$nruns" ]
ok $? "... in $nruns RunInstances (largest user data $maxud bytes <= 16 KiB, $total nodes, $ntok tokens)" "$work/big"

# the reconciler's listing one page at a time (list_step): the provider's
# worker runs launches and terminations between two pages
curl -s -X POST "$fep/_reset" >/dev/null
script '{"page_cap": 2}'
drv fake launch --type t3.micro v1:1:a v2:1:b v3:1:c v4:1:d v5:1:e
[ "$(grep -c ' ok$' "$work/out")" = 5 ]; ok $? "five instances for the paged listing" "$work/out"
drv fake list-steps
reqs >"$work/req.json"
[ "$(col steps 2)" = 3 ] && [ "$(grep -c '^i-.* drv v[1-5] 1 ' "$work/out")" = 5 ] &&
	[ "$(jget "$work/req.json" '[r["params"].get("NextToken") for r in d if r["action"] == "DescribeInstances"]')" = "[None, '2', '4']" ]
ok $? "pages of 2: three steps, one DescribeInstances each (NextToken followed), each instance mapped to its node" "$work/out $work/req.json"
cp "$work/out" "$work/steps.out"
drv fake list
diff <(grep '^i-' "$work/steps.out") "$work/out" >/dev/null
ok $? "... the same listing as in one call" "$work/out $work/steps.out"
drv fake list-steps 1 terminate v2 i-00000000000000002
[ "$(col steps 2)" = 3 ] && [ "$(grep -c '^i-.* drv v[1-5] 1 ' "$work/out")" = 5 ] && grep -q '^ok$' "$work/out"
ok $? "an instance of the first page terminated after it: no instance of a later page is missed" "$work/out"
drv fake list-steps 1 launch --type t3.micro v6:1:f
grep -q '^v6 i-00000000000000006 ok$' "$work/out" && [ "$(col steps 2)" = 3 ] &&
	grep -q '^i-00000000000000006 drv v6 1 pending$' "$work/out" && [ "$(grep -c '^i-' "$work/out")" = 5 ]
ok $? "a batch launched between two pages: listed in a later page, mapped to its node through the journal" "$work/out"
[ "$(grep -c ' v6:1' "$work/state/aws-fake.batches")" = 1 ] && [ "$(grep -c ' v1:1 ' "$work/state/aws-fake.batches")" = 1 ]
ok $? "... and the listing's compaction kept both batches in the journal" "$work/state/aws-fake.batches"

done_testing

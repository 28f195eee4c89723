#!/usr/bin/env bash
# test_aws_agent.sh - the agent's aws provider on a real Slurm: a job bursts
# into an EC2 instance launched through moto_server (signatures checked),
# tagged, carrying user data with the node's name (and no join token: the
# instance's own is its burst-join-token tag, read in its metadata); the
# user data is run as cloud-init would (in a network namespace on the lab's
# bridge), burst-node joins, slurmd starts, the job runs with
# CLOUD_PROVIDER=aws; after SuspendTime the instance is terminated. A wrong
# secret fails the node with the auth error (no secret logged) and the node
# is powered down after RejectCooldown. Against the fault-injecting endpoint:
# no capacity for the first type -> the second type is launched, one
# successful RunInstances per (node, attempt), the same ClientToken on a
# retried 500.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
ps="$build/plugins/power_save"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
[ -x "$agent" ] || bail "no $agent (build first)"

aux=$(mktemp -d /tmp/test_aws_agent.XXXXXX)
moto_pid= fake_pid=
aux_down() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	rm -rf "$aux"
}

# --- moto_server with signature checking, and the fault-injecting endpoint ---
moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
fake_up "$aux" || { aux_down; bail "the fault endpoint did not start"; }
fake_pid=$FAKE_PID fep=$FAKE_EP
# the fake: no capacity for t3.micro; t3.small's first RunInstances launches
# but answers 500 (the client retries it with the same ClientToken)
curl -s -X POST -d '{"rules": [
	{"match": {"Action": "RunInstances", "InstanceType": "t3.micro"}, "error": "InsufficientInstanceCapacity", "message": "no t3.micro here", "status": 500},
	{"match": {"Action": "RunInstances", "InstanceType": "t3.small"}, "error": "InternalError", "status": 500, "commit": true, "times": 1}]}' \
	"$fep/_script" >/dev/null

umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
badsecret="Wr0ngSecretForTheTest$$xyz"
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$badsecret" >"$aux/badcreds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="ResumeProgram=\"$ps/burst-resume\"
SuspendProgram=\"$ps/burst-suspend\"
ResumeFailProgram=\"$ps/burst-resume-fail\"
PrologSlurmctld=\"$ps/burst-prolog-slurmctld\"
ResumeTimeout=90
SuspendTimeout=10
SuspendTime=8
JobSubmitPlugins=lua"
lab_pre_ctld() {
	cp "$src/contrib/job_submit.lua" "$LAB/etc/job_submit.lua"
	jp=$((LAB_PORT_CTLD + 300))
	# the instances' subnet: the upper half of the lab's /24 (EC2 gives each
	# its private IP there; the agent makes it the node's NodeAddr)
	subnet=$(moto_subnet "$LAB_NET.128/25" 2>"$LAB/subnet.err") || { cat "$LAB/subnet.err" >&2; return 1; }
	cat >"$LAB/etc/burst.conf" <<CONF
ClusterName=lab$$
StateDir=$LAB/burst
CatalogDir="$src/share/catalog"
JoinPort=$jp
RejectCooldown=5
Provider=local Bridge=$LAB_BR Address=$LAB_NET.1/24
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$ep CredentialsFile=$aux/creds ImageId=$ami JoinAddress=$LAB_NET.1:$jp SubnetId=$subnet
Provider=awsfake Type=aws Regions=us-east-1 Endpoint=$fep CredentialsFile=$aux/creds ImageId=ami-fake JoinAddress=$LAB_NET.1:$jp SecurityGroups=sg-1,sg-2 SubnetId=subnet-9
Provider=awsbad Type=aws Regions=us-east-1 Endpoint=$ep CredentialsFile=$aux/badcreds ImageId=$ami JoinAddress=$LAB_NET.1:$jp
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=aws InstanceTypes=t3.small,t3.micro
NodeSet=fake Nodes=burst-[3-4] Partition=burst Providers=awsfake InstanceTypes=t3.micro,t3.small
NodeSet=bad Nodes=burst-5 Partition=burst Providers=awsbad InstanceTypes=t3.micro
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
	"$burstctl" --config "$LAB/etc/burst.conf" slurm-conf --nodes-only \
		| sed 's/^\(PartitionName=.*\)$/\1 Default=YES/' >>"$LAB/etc/slurm.conf" || return 1
	lab_plugstack
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
ok 0 "burstctl check-config accepts the aws providers"

SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
	BURST_NODE="$build/burst-node/burst-node" \
	"$agent" -c "$LAB/etc/burst.conf" -L "$LAB/log/agent.log" &
lab_record burst-agent $!
for i in $(seq 50); do [ -S "$LAB/burst/agent.sock" ] && break; sleep 0.1; done
[ -S "$LAB/burst/agent.sock" ]; ok $? "the agent is up" "$LAB/log/agent.log"

export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
unset AWS_SESSION_TOKEN AWS_PROFILE
# describe INSTANCE -> JSON {state, type, ip, tags, image, token, metadata_tags, userdata (decoded)}
describe() { moto_describe "$1"; }
instance_of() {   # NODE: the instance of its last launch, from the agent's log
	grep -o "$1: launching -> booting: i-[0-9a-f]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}
wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}

# --- 1. a job bursts into an EC2 instance (moto) ---
id=$(sbatch --parsable --cloud-contract=small -w burst-1 -o "$LAB/job.out" \
	--wrap 'hostname; echo "P=$CLOUD_PROVIDER T=$CLOUD_INSTANCE_TYPE I=$CLOUD_INSTANCE_ID"' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=small -w burst-1" "$LAB/err"
wait_log 'burst-1: launching -> booting: i-' 30
ok $? "the agent launched burst-1 through the aws provider" "$LAB/log/agent.log"
iid=$(instance_of burst-1)
describe "$iid" >"$LAB/i1.json" 2>"$LAB/i1.err"
ok $? "moto knows instance $iid" "$LAB/i1.err"
j() { jget "$LAB/i1.json" "$1"; }
[ "$(j 'd["type"]')" = t3.micro ] && [ "$(j 'd["image"]')" = "$ami" ]
ok $? "it is a t3.micro (the cheaper type) of image $ami ($(j 'd["type"]'))"
tok=$(j 'd["tags"].get("burst:batch", "")')
[ "$(j 'd["tags"].get("burst:cluster")')" = "lab$$" ] && [ "$(j 'd["tags"].get("burst:nodeset")')" = cloud ] &&
	[[ "$tok" =~ ^burst-[0-9a-f]{40}$ ]] && [ -n "$(j 'd["tags"].get("Name", "")')" ] &&
	# the RunInstances moto got carried that token (and only that one:
	# burst-1 is the only node launched through moto so far) ...
	[ "$(moto_sent RunInstances ClientToken | sort -u)" = "$tok" ] &&
	# ... and a moto that keeps it reports it as the instance's
	{ [ "$MOTO_KEEPS_TOKEN" = no ] || [ "$(j 'd["token"]')" = "$tok" ]; }
ok $? "tagged burst:cluster, burst:nodeset, burst:batch (= its ClientToken $tok) and Name" "$LAB/i1.json"
j 'd["userdata"]' >"$LAB/ud1.sh"
jtok=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select token from nodes where name=?", ("burst-1",)).fetchone()[0])' "$LAB/burst/agent.db" 2>/dev/null)
grep -q "^0) NODE='burst-1' ;;$" "$LAB/ud1.sh" && grep -q "JOIN='$LAB_NET.1:$jp'" "$LAB/ud1.sh"
ok $? "its user data holds the node's name and the JoinAddress" "$LAB/ud1.sh"
# the user data is the whole batch's (every instance of a RunInstances gets
# it, and a job can read it from the instance metadata): no join token in
# it; the instance's own is in its own tag, which it reads in its metadata
[ -n "$jtok" ] && ! grep -q "$jtok" "$LAB/ud1.sh" && ! grep -q "TOKEN='" "$LAB/ud1.sh"
ok $? "... and no join token" "$LAB/ud1.sh"
# (that RunInstances asks for InstanceMetadataTags is checked below, on the
# requests the agent sent: Debian 13's moto 5.1.1 keeps no MetadataOptions)
[ "$(j 'd["tags"].get("burst-join-token", "")')" = "$jtok" ]
ok $? "its own join token is its burst-join-token tag" "$LAB/i1.json"
! grep -q "$sk" "$LAB/log/agent.log"; ok $? "no secret in the agent's log"

# cloud-init, emulated: the user data runs in a namespace on the lab's bridge,
# with the launch index, instance id and join token tag IMDSv2 would give
# (the token in the environment, on no command line)
emu() {   # NODE INDEX INSTANCE USERDATA ADDRESS TOKEN
	mkdir -p "$LAB/emu/$1"
	BURST_JOIN_TOKEN="$6" "$inst" start "burst-lab$$-emu-$1" "$1" "$5/24" "$LAB_BR" "$LAB/emu/$1" -- \
		env BURST_LAUNCH_INDEX="$2" BURST_INSTANCE_ID="$3" \
		BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
		BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
		sh "$4" >/dev/null
}
ip1=$(j 'd["ip"]')
[[ "$ip1" == "$LAB_NET".* ]]; ok $? "EC2 gave it a private IP in its subnet ($ip1)" "$LAB/i1.json"
emu burst-1 0 "$iid" "$LAB/ud1.sh" "$ip1" "$(j 'd["tags"].get("burst-join-token", "")')"
ok $? "the instance's user data runs (emulated cloud-init) with that address" "$LAB/emu/burst-1/node.log"
# a relaunch (slurmd not taken in within RegisterTimeout) fails the test;
# its instance's user data is run all the same, so that the test ends and
# says so
n=1
for ((k = 0; k < 900; k++)); do
	[ "$(squeue -h -t all -j "$id" -o %T 2>/dev/null)" = COMPLETED ] && break
	cur=$(instance_of burst-1)
	if [ -n "$cur" ] && [ "$cur" != "$iid" ]; then
		"$inst" stop "burst-lab$$-emu-burst-1"
		describe "$cur" >"$LAB/i-$cur.json"
		jget "$LAB/i-$cur.json" 'd["userdata"]' >"$LAB/ud-$cur.sh"
		emu burst-1 0 "$cur" "$LAB/ud-$cur.sh" "$(jget "$LAB/i-$cur.json" 'd["ip"]')" \
			"$(jget "$LAB/i-$cur.json" 'd["tags"].get("burst-join-token", "")')" || echo "# emulating $cur failed"
		iid=$cur n=$((n + 1))
	fi
	sleep 0.1
done
[ "$(squeue -h -t all -j "$id" -o %T 2>/dev/null)" = COMPLETED ] && [ "$n" -eq 1 ]
ok $? "burst-node joined, slurmd started, the job completed (on instance $n of burst-1)" "$LAB/emu/burst-1/node.log" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -qx "P=aws T=t3.micro I=$iid" "$LAB/job.out"
ok $? "the job saw CLOUD_PROVIDER=aws CLOUD_INSTANCE_TYPE=t3.micro and its instance ($(tail -1 "$LAB/job.out" 2>/dev/null))" "$LAB/job.out"
grep -qx burst-1 "$LAB/job.out"; ok $? "... on burst-1" "$LAB/job.out"
addr=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select address from nodes where name=?", ("burst-1",)).fetchone()[0])' "$LAB/burst/agent.db" 2>/dev/null)
[ "$addr" = "$(describe "$iid" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ip"])')" ]
ok $? "the node's address is its instance's private IP, from EC2 ($addr)"
for i in $(seq 300); do
	[ "$(describe "$iid" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = terminated ] && break
	sleep 0.2
done
st=$(describe "$iid" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
[ "$st" = terminated ]; ok $? "after SuspendTime the agent terminated $iid (moto: $st)" "$LAB/log/agent.log"
"$inst" stop "burst-lab$$-emu-burst-1"
lab_wait_node burst-1 'idle~' 30; ok $? "burst-1 is powered down ($(lab_node_state burst-1))"

# --- 2. a wrong secret: the node fails with the auth error, no secret logged ---
id=$(sbatch --parsable --cloud-contract=small -w burst-5 -o /dev/null --wrap 'true' 2>"$LAB/err")
ok $? "sbatch -w burst-5 (its provider's credentials hold a wrong secret)" "$LAB/err"
wait_log 'burst-5: launching -> terminating: .*(auth)' 30
ok $? "the launch failed as an auth error" "$LAB/log/agent.log"
grep 'burst-5: launching -> terminating' "$LAB/log/agent.log" | tail -1 | sed 's/^/# /'
lab_wait_node burst-5 'down.*' 20
reason=$(scontrol show node burst-5 | grep -o 'Reason=.*')
[[ "$reason" == *"burst: launch of burst-5 as t3.micro failed (auth): aws "*"RunInstances t3.micro in us-east-1 for burst-5: "[A-Z]* ]]
ok $? "burst-5 is DOWN, the reason names the call and the auth error ($reason)"
scancel "$id"
! grep -q "$badsecret" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"; ok $? "the wrong secret is in no log"
lab_wait_node burst-5 'idle~' 30; ok $? "after RejectCooldown burst-5 is powered down again ($(lab_node_state burst-5))"

# --- 3. the fault endpoint: capacity -> the next type; a retried 500 ---
id=$(sbatch --parsable --cloud-contract=small -w burst-3 -o /dev/null --wrap 'true' 2>"$LAB/err")
ok $? "sbatch -w burst-3 (provider awsfake)" "$LAB/err"
wait_log 'burst-3: launching -> booting: i-' 60
ok $? "burst-3 was launched" "$LAB/log/agent.log"
grep -q 'burst-3: launching -> requested: awsfake/t3.micro@us-east-1 capacity: aws RunInstances t3.micro in us-east-1 for burst-3: InsufficientInstanceCapacity: no t3.micro here' "$LAB/log/agent.log"
ok $? "t3.micro had no capacity: the agent moved on" "$LAB/log/agent.log"
curl -s "$fep/_requests" >"$LAB/req.json"
python3 - "$LAB/req.json" <<'PY' >"$LAB/req.out"
import json, sys
reqs = [r for r in json.load(open(sys.argv[1])) if r["action"] == "RunInstances"]
for r in reqs:
    p = r["params"]
    print(p["InstanceType"], p["ClientToken"], p["MaxCount"], p.get("SecurityGroupId.1"),
          p.get("SecurityGroupId.2"), p.get("SubnetId"), p.get("MetadataOptions.HttpTokens"),
          p.get("MetadataOptions.InstanceMetadataTags"))
PY
sed 's/^/# /' "$LAB/req.out"
micro=$(grep -c '^t3.micro ' "$LAB/req.out")
small=$(grep -c '^t3.small ' "$LAB/req.out")
stoks=$(grep '^t3.small ' "$LAB/req.out" | awk '{print $2}' | sort -u | wc -l)
mtok=$(grep '^t3.micro ' "$LAB/req.out" | awk '{print $2}' | sort -u)
stok=$(grep '^t3.small ' "$LAB/req.out" | awk '{print $2}' | sort -u)
[ "$small" -ge 2 ] && [ "$stoks" = 1 ]
ok $? "the t3.small RunInstances answered 500 was retried with the same ClientToken ($small requests, $stoks token)"
[ -n "$mtok" ] && [ "$mtok" != "$stok" ]
ok $? "the next attempt (other type) has another ClientToken"
grep -q . "$LAB/req.out" && ! grep -v ' 1 sg-1 sg-2 subnet-9 required enabled$' "$LAB/req.out" | grep -q .
ok $? "every RunInstances: MaxCount 1, SecurityGroups, SubnetId, IMDSv2 required (HttpTokens), instance tags in the metadata (InstanceMetadataTags, where each instance reads its join token)"
iid3=$(instance_of burst-3)
n3=$(python3 -c 'import json,sys; print(len([r for r in json.load(open(sys.argv[1])) if r["action"] == "RunInstances"]))' "$LAB/req.json")
cnt=$(curl -s -X POST -d '{}' "$fep/_script" >/dev/null; python3 - "$fep" <<'PY'
import sys, urllib.request, urllib.parse
body = urllib.parse.urlencode({"Action": "DescribeInstances", "Filter.1.Name": "tag:burst:nodeset", "Filter.1.Value.1": "fake"}).encode()
req = urllib.request.Request(sys.argv[1] + "/", data=body, headers={"Authorization": "AWS4-HMAC-SHA256 Credential=AKID/20261128/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=x"})
print(urllib.request.urlopen(req).read().decode().count("<instanceId>"))
PY
)
[ "$cnt" = 1 ]; ok $? "exactly one instance was launched for burst-3 ($iid3; $cnt instances, $n3 RunInstances)"
scancel "$id" 2>/dev/null
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

labdir=$LAB
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

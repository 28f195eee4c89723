#!/usr/bin/env bash
# test_spot_notice.sh - a spot interruption notice on a real Slurm: a job
# bursts into an EC2 instance (moto_server, as test_aws_agent.sh; the user
# data run as cloud-init would, in a namespace on the lab's bridge), whose
# burst-node watches the instance metadata service: the fake one of
# ec2_faults.py, on the lab's bridge (checked first with botocore's own IMDS
# clients and with curl). Slow, oversized and malformed answers are logged
# by the node and ignored; then the fake issues a notice for that instance
# (terminate, two minutes ahead): the agent drains the node with the
# notice's reason and requeues its job while the instance still runs; only
# then does the test terminate the instance, as EC2 would. The job reruns
# on the other node, launched as t3.small: t3.micro in us-east-1 cools down
# for InterruptionCooldown, and no RunInstances asks for it meanwhile. The
# reconciler finds the instance gone, and the node returns powered down.
# burst-matrix: host-only (the agent's own machinery; its Slurm calls, a node's state and reason and a running job's requeue, are those test_reconcile makes on both releases; left out of the second release to keep ./check.sh within CI's time)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
[ -x "$agent" ] || bail "no $agent (build first)"

aux=$(mktemp -d /tmp/test_spot_notice.XXXXXX)
moto_pid=
aux_down() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	fake_down
	rm -rf "$aux"
}

moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
# SuspendTime long: the drained node is left to the instance's end (the
# reconciler), not powered down by Slurm first
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 90 10 600)
lab_pre_ctld() {
	cp "$src/contrib/job_submit.lua" "$LAB/etc/job_submit.lua"
	jp=$((LAB_PORT_CTLD + 300))
	# one more port of the lab's range (a lab_pick_net slot holds port+300 to +303; test_metrics uses +302)
	mport=$((LAB_PORT_CTLD + 302))
	! ss -Hltn | awk '{ print $4 }' | grep -Eq ":$mport\$" || { lab_log "port $mport in use"; return 1; }
	subnet=$(moto_subnet "$LAB_NET.128/25" 2>"$LAB/subnet.err") || { cat "$LAB/subnet.err" >&2; return 1; }
	cat >"$LAB/etc/burst.conf" <<CONF
ClusterName=lab$$
StateDir=$LAB/burst
CatalogDir="$src/share/catalog"
JoinPort=$jp
RejectCooldown=5
InterruptionCooldown=300
ReconcileInterval=2 VanishGrace=2
MetricsListen=127.0.0.1:$mport
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$ep CredentialsFile=$aux/creds ImageId=$ami JoinAddress=$LAB_NET.1:$jp SubnetId=$subnet
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=aws InstanceTypes=t3.small,t3.micro Acceptance=$LAB/etc/acceptance.conf
CONF
	# a join that takes 3 s (a slow acceptance suite): a notice already
	# issued when an instance boots reaches the agent before its report
	cat >"$LAB/etc/acceptance.conf" <<CONF
Test=slow-boot Kind=hardware Command="sleep 3; echo booted" Sanity="booted" Timeout=20
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
ok 0 "burstctl check-config accepts InterruptionCooldown=300"

# --- the instance metadata service: ec2_faults.py on the lab's bridge ---
fake_up "$aux" "$LAB_NET.1" || bail "the fake metadata service did not start"
imds=$FAKE_EP
# (moto's Python: it has botocore, here and in check.sh's Debian 13 root)
out=$("$MOTO_PY" "$src/tests/integration/imds_botocore_check.py" "$imds" $((tap_n + 1)) 2>&1)
echo "$out"
tap_n=$((tap_n + $(grep -c '^ok \|^not ok ' <<<"$out")))
tap_failed=$((tap_failed + $(grep -c '^not ok ' <<<"$out")))
[ "$(grep -c '^ok ' <<<"$out")" = 6 ]; ok $? "botocore's IMDS clients passed all 6 checks of the fake"
# curl, IMDSv2 by hand: PUT for the token, GET with it
tok=$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' "$imds/latest/api/token")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-aws-ec2-metadata-token: $tok" "$imds/latest/meta-data/spot/instance-action")
nocode=$(curl -s -o /dev/null -w '%{http_code}' "$imds/latest/meta-data/spot/instance-action")
badttl=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 0' "$imds/latest/api/token")
[ -n "$tok" ] && [ "$code" = 404 ] && [ "$nocode" = 401 ] && [ "$badttl" = 400 ]
ok $? "curl: a token for a TTL of 60 s, 404 with it, 401 without, 400 for a TTL of 0 (token '$tok', $code, $nocode, $badttl)"

agent_up() {
	rm -f "$LAB/burst/agent.sock"
	"$agent" -c "$LAB/etc/burst.conf" -L "$LAB/log/agent.log" &
	agent_pid=$!
	lab_record burst-agent "$agent_pid"
	for i in $(seq 50); do [ -S "$LAB/burst/agent.sock" ] && return 0; sleep 0.1; done
	return 1
}
agent_up; ok $? "the agent is up"

export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_EC2_METADATA_SERVICE_ENDPOINT
describe() { moto_describe "$1"; }   # INSTANCE -> JSON {state, type, ip, tags, userdata, ...}
instance_of() {   # NODE: the instance of its last launch, from the agent's log
	grep -o "$1: launching -> booting: i-[0-9a-f]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}
# cloud-init, emulated: the user data of the node's instance runs in a
# namespace at its private IP, with the launch index, instance id and join
# token its metadata would give, and the fake metadata service as the one
# to watch (AWS_EC2_METADATA_SERVICE_ENDPOINT, which the user data reads)
declare -A emu_of
follow() {   # NODE: the node's last launched instance runs (emulated)
	local cur j
	cur=$(instance_of "$1")
	[ -n "$cur" ] && [ "$cur" != "${emu_of[$1]:-}" ] || return 0
	"$inst" stop "burst-lab$$-emu-$1"
	j="$LAB/i-$cur.json"
	describe "$cur" >"$j" 2>"$LAB/describe.err" || { echo "# describe $cur failed"; return 0; }
	jget "$j" 'd["userdata"]' >"$LAB/ud-$cur.sh"
	mkdir -p "$LAB/emu/$1"
	BURST_JOIN_TOKEN="$(jget "$j" 'd["tags"].get("burst-join-token", "")')" \
		"$inst" start "burst-lab$$-emu-$1" "$1" "$(jget "$j" 'd["ip"]')/24" "$LAB_BR" "$LAB/emu/$1" -- \
		env BURST_LAUNCH_INDEX=0 BURST_INSTANCE_ID="$cur" AWS_EC2_METADATA_SERVICE_ENDPOINT="$imds" \
		BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
		BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
		sh "$LAB/ud-$cur.sh" >/dev/null || echo "# emulating $cur failed"
	emu_of[$1]=$cur
}
until_ok() {   # SECONDS COMMAND...: COMMAND every 0.2 s (the instances followed) until it succeeds
	local i n=$1
	shift
	for ((i = 0; i < n * 5; i++)); do
		follow burst-1
		follow burst-2
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
job_is() { [ "$(squeue -h -t all -j "$id" -o %T 2>/dev/null)" = "$1" ]; }
polls() {   # ADDRESS: spot/instance-action GETs from there so far
	curl -s "$imds/_imds" | python3 -c 'import json, sys; print(json.load(sys.stdin)["spot_polls"].get(sys.argv[1], 0))' "$1"
}
spot() {   # ADDRESS JSON: what spot/instance-action answers there
	curl -fsS -X POST -d "{\"$1\": $2}" "$imds/_spot" >/dev/null
}
node_says() { grep -q "$2" "$LAB/emu/$1/node.log" 2>/dev/null; }

# --- 1. a job on a burst node whose burst-node watches the metadata ---
id=$(sbatch --parsable --cloud-contract=small -N1 --open-mode=append -o "$LAB/job.out" \
	--wrap 'echo "run ${SLURM_RESTART_COUNT:-0} on $(hostname) as $CLOUD_INSTANCE_TYPE"; if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then sleep 15; else sleep 900; fi' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=small (job $id)" "$LAB/err"
until_ok 150 job_is RUNNING
ok $? "the job runs on a burst node ($(squeue -h -t all -j "$id" -o '%T %N'))" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
a=$(squeue -h -j "$id" -o %N)
b=burst-1
[ "$a" = burst-1 ] && b=burst-2
ia=$(instance_of "$a")
ipa=$(jget "$LAB/i-$ia.json" 'd["ip"]')
[ "$(jget "$LAB/i-$ia.json" 'd["type"]')" = t3.micro ]
ok $? "$a is instance $ia, a t3.micro (the cheaper type), at $ipa"
node_says "$a" "interruption watch (.*): watching $imds/latest/meta-data/spot/instance-action every 5 s"
ok $? "its burst-node watches $imds for an interruption notice, every 5 s" "$LAB/emu/$a/node.log"
polled() { [ "$(polls "$ipa")" -ge 1 ]; }
until_ok 15 polled
ok $? "... and asks it from the instance's address ($(polls "$ipa") polls)"

# --- 2. slow, oversized and malformed answers: logged, ignored ---
big=$(python3 -c 'print("{\"action\": \"terminate\", \"pad\": \"" + "x" * 5000 + "\"}")')
spot "$ipa" "$(python3 -c 'import json, sys; print(json.dumps({"status": 200, "body": sys.argv[1]}))' "$big")"
until_ok 20 node_says "$a" "an answer larger than 1024 bytes (refused); ignored"
ok $? "a 5 KB answer: refused by its size, said on the node's log" "$LAB/emu/$a/node.log"
spot "$ipa" '{"sleep": 8}'
until_ok 30 node_says "$a" "spot/instance-action: Timeout was reached; ignored"
ok $? "an answer 8 s late: the 2 s timeout, said" "$LAB/emu/$a/node.log"
spot "$ipa" '{"status": 200, "body": "{\"action\": \"reboot\", \"time\": \"2026-11-27T17:00:00Z\"}"}'
until_ok 20 node_says "$a" "not a notice: unknown action 'reboot'"
ok $? "an unknown action: not a notice, said" "$LAB/emu/$a/node.log"
spot "$ipa" '{"status": 500, "body": "oops"}'
until_ok 20 node_says "$a" "not a notice: HTTP 500"
ok $? "HTTP 500: not a notice, said" "$LAB/emu/$a/node.log"
sed -n 's/^burst-node: .*interruption watch/# &/p' "$LAB/emu/$a/node.log"
job_is RUNNING && [[ "$(lab_node_state "$a")" != drain* ]] && ! grep -q "spot interruption notice" "$LAB/log/agent.log"
ok $? "meanwhile the job runs on, the node is not drained, the agent heard of no notice ($(lab_node_state "$a"))"

# --- 3. the notice: drained, requeued, while the instance still runs ---
at=$(date -u -d '+2 min' +%Y-%m-%dT%H:%M:%SZ)
spot "$ipa" "{\"action\": \"terminate\", \"time\": \"$at\"}"
t0=$(date +%s.%N)
want="burst: spot interruption notice: terminate at $at (instance $ia)"
reason_is() { [ "$(scontrol show node "$a" | sed -n 's/^ *Reason=\(.*\) \[.*\]$/\1/p')" = "$want" ]; }
until_ok 30 reason_is
ok $? "$a has the reason '$want'" "$LAB/emu/$a/node.log" "$LAB/log/agent.log"
td=$(date +%s.%N)
scontrol show node "$a" | grep -q 'State=[A-Z_+]*DRAIN'
ok $? "... and is drained ($(scontrol show node "$a" | grep -o 'State=[^ ]*'))"
restarts() { scontrol show job "$id" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2; }
requeued() { [ "$(restarts)" = 1 ]; }
until_ok 30 requeued
ok $? "the job was requeued (Restarts=$(restarts), $(squeue -h -t all -j "$id" -o %T))" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
tr=$(date +%s.%N)
st=$(describe "$ia" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')
[ "$st" = running ]
ok $? "... while its instance $ia still runs (EC2: $st)"
echo "# notice -> drained: $(awk -v a="$t0" -v b="$td" 'BEGIN { printf "%.3f", b - a }') s; notice -> requeued: $(awk -v a="$t0" -v b="$tr" 'BEGIN { printf "%.3f", b - a }') s (by the test's polling)"
grep -Eq "$a: spot interruption notice: terminate at $at \(instance $ia\): no launch into aws/t3.micro@us-east-1 for (29[0-9]|300) s" "$LAB/log/agent.log"
ok $? "the agent: no launch into aws/t3.micro@us-east-1 for InterruptionCooldown (300 s)"
grep -q "$a: job $id requeued before its instance goes (spot interruption notice)" "$LAB/log/agent.log"
ok $? "the agent: job $id requeued before its instance goes"
curl -s "http://127.0.0.1:$mport/metrics" | grep '^burst_interruption_notices_total' >"$LAB/notices.prom"
sed 's/^/# metrics: /' "$LAB/notices.prom"
[ "$(cat "$LAB/notices.prom")" = 'burst_interruption_notices_total{provider="aws",instance_type="t3.micro",region="us-east-1",action="terminate"} 1' ]
ok $? "the metric burst_interruption_notices_total counts it, by provider, type, region and action"
node_says "$a" "interruption notice: terminate at $at (1[0-2][0-9] s from now): telling the agent" &&
	node_says "$a" "the agent took the notice"
ok $? "the node: the notice told, the agent took it" "$LAB/emu/$a/node.log"

# --- 3b. notices by hand on the join port: again, after a restart, refused ---
# (once the rerun runs on the other node: the agent restarts below, not in
# the middle of that launch)
on_other() { [ "$(squeue -h -t all -j "$id" -o '%T %N')" = "RUNNING $b" ]; }
until_ok 120 on_other
ok $? "the requeued job runs again, on $b ($(squeue -h -t all -j "$id" -o '%T %N'))" "$LAB/log/agent.log"
notice_by_hand() {   # PAYLOAD [UID]: the agent's answer to a notice whose credential carries PAYLOAD (--no-cred: none)
	local cred=
	if [ "$1" = --no-cred ]; then
		:
	elif [ -n "${2:-}" ]; then
		cred=$(setpriv --reuid="$2" --regid="$2" --clear-groups munge -S "$LAB/munge/munge.sock" -s "$1")
	else
		cred=$(munge -S "$LAB/munge/munge.sock" -s "$1")
	fi
	python3 - "$LAB_NET.1" "$jp" "$cred" <<'PY'
import json, socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall((json.dumps({"op": "notice", "cred": sys.argv[3]} if sys.argv[3] else {"op": "notice"}) + "\n").encode())
print(s.makefile().readline().strip())
PY
}
cool_until() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select until from cooldowns where key=?", (sys.argv[2],)).fetchone()[0])' "$LAB/burst/agent.db" "$1"; }
u0=$(cool_until aws/t3.micro@us-east-1)
same="{\"node\":\"$a\",\"instance\":\"$ia\",\"action\":\"terminate\",\"time\":\"$at\"}"
[ "$(notice_by_hand "$same")" = '{"ok":true}' ] && grep -q "$a: interruption notice of instance $ia again: acted on already" "$LAB/log/agent.log"
ok $? "the same notice again (its answer lost): taken, acted on already"
kill "$agent_pid" && wait "$agent_pid" 2>/dev/null
agent_up; ok $? "the agent restarts"
[ "$(notice_by_hand "$same")" = '{"ok":true}' ] &&
	[ "$(grep -c "$a: interruption notice of instance $ia again: acted on already" "$LAB/log/agent.log")" = 2 ]
ok $? "... and again after the restart: the node's record has it, acted on already" "$LAB/log/agent.log"
[ "$(cool_until aws/t3.micro@us-east-1)" = "$u0" ] && [ "$(restarts)" = 1 ]
ok $? "... so the cooldown is not doubled, the job not requeued twice (until $u0; Restarts=$(restarts))"
r1=$(notice_by_hand "{\"node\":\"$a\",\"instance\":\"i-0000000000000dead\",\"action\":\"terminate\",\"time\":\"$at\"}")
[ "$r1" = '{"ok":false,"reason":"wrong instance for this node"}' ] &&
	grep -q "notice: $a (instance i-0000000000000dead, uid 0): refused: wrong instance for this node" "$LAB/log/agent.log"
ok $? "a notice for another instance of $a: refused, logged ($r1)"
r2=$(notice_by_hand "$same" 65534)
[ "$r2" = "{\"ok\":false,\"reason\":\"the credential is not root's\"}" ]
ok $? "a notice in a credential of uid 65534: refused ($r2)"
r3=$(notice_by_hand --no-cred)
[ "$r3" = '{"ok":false,"reason":"malformed notice"}' ]
ok $? "a notice without a credential: refused ($r3)"
r4=$(notice_by_hand "")
[ "$r4" = '{"ok":false,"reason":"malformed credential payload"}' ]
ok $? "a notice whose credential carries nothing: refused ($r4)"

# --- 4. the instance goes (as EC2 would take it) ---
"$MOTO_PY" -c 'import sys, boto3; boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1").terminate_instances(InstanceIds=[sys.argv[2]])' "$ep" "$ia"
"$inst" stop "burst-lab$$-emu-$a"
ok $? "the test terminated $ia (moto) and its emulated instance"
until_ok 180 job_is COMPLETED
ok $? "the requeued job completed ($(squeue -h -t all -j "$id" -o '%T %N'))" "$LAB/job.out" "$LAB/log/agent.log"
sed 's/^/# job.out: /' "$LAB/job.out"
ib=$(instance_of "$b")
grep -qx "run 1 on $b as t3.small" "$LAB/job.out"
ok $? "its second run was on $b, a t3.small ($ib)" "$LAB/job.out"
# the RunInstances moto was asked, one line each: TYPE CLIENT-TOKEN
runs() {
	python3 - "$MOTO_RECORDING" <<'PY'
import base64, json, sys, urllib.parse
for line in open(sys.argv[1]):
    e = json.loads(line)
    body = e.get("body") or ""
    if e.get("body_encoded"):
        body = base64.b64decode(body).decode()
    q = urllib.parse.parse_qs(body)
    if q.get("Action") == ["RunInstances"]:
        print(q["InstanceType"][0], q["ClientToken"][0])
PY
}
runs >"$LAB/runs"
sed 's/^/# RunInstances: /' "$LAB/runs"
micro_after=$(awk '$1 == "t3.small" {s = 1} s && $1 == "t3.micro"' "$LAB/runs" | wc -l)
grep -q '^t3.small ' "$LAB/runs" && [ "$micro_after" = 0 ]
ok $? "no RunInstances asked for t3.micro after the notice ($micro_after did)"
until=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select until from cooldowns where key=?", ("aws/t3.micro@us-east-1",)).fetchone()[0])' "$LAB/burst/agent.db" 2>/dev/null)
# (awk, not bc: a fresh Debian 12 has no bc)
left=$(awk -v u="${until:-0}" -v n="$(date +%s)" 'BEGIN { printf "%d", u - n }')
[ "$left" -gt 0 ]
ok $? "aws/t3.micro@us-east-1 is still cooling down ($left s left)"
until_ok 60 grep -q "reconcile: $a: instance $ia vanished" "$LAB/log/agent.log"
ok $? "the reconciler found $ia gone"
powered_down() { [ "$(lab_node_state "$a")" = 'idle~' ]; }
until_ok 60 powered_down
ok $? "$a returned powered down, no longer drained ($(lab_node_state "$a"): $(scontrol show node "$a" | grep -o 'Reason=.*'))" "$LAB/log/agent.log"
[[ "$(lab_node_state "$b")" != drain* ]] && ! grep -q "$b: spot interruption notice" "$LAB/log/agent.log"
ok $? "$b, whose metadata gave no notice, was not drained"
[ "$(grep -c "notice: .*refused" "$LAB/log/agent.log")" = 4 ]
ok $? "the agent refused no notice but the four made by hand ($(grep -c "notice: .*refused" "$LAB/log/agent.log"))"

# --- 5. a notice already there when an instance boots ---
# ($b keeps answering "no notice"; any other address gets a stop notice)
spot "$(jget "$LAB/i-$ib.json" 'd["ip"]')" '{"status": 404, "body": ""}'
at2=$(date -u -d '+2 min' +%Y-%m-%dT%H:%M:%SZ)
spot '*' "{\"action\": \"stop\", \"time\": \"$at2\"}"
scontrol update nodename="$a" state=power_up
launched_again() { [ -n "$(instance_of "$a")" ] && [ "$(instance_of "$a")" != "$ia" ]; }
until_ok 60 launched_again
ok $? "$a is resumed (power_up) and launched again ($(instance_of "$a"))"
ia2=$(instance_of "$a")
failed_at_boot() { grep -q "$a: booting -> terminating: spot interruption notice: stop at $at2 (instance $ia2)" "$LAB/log/agent.log"; }
until_ok 30 failed_at_boot
ok $? "the notice came before its join report: the booting node fails (booting -> terminating)" "$LAB/emu/$a/node.log" "$LAB/log/agent.log"
spot '*' null
want2="burst: spot interruption notice: stop at $at2 (instance $ia2)"
down_with_reason() { scontrol show node "$a" | grep -q "State=DOWN" && scontrol show node "$a" | grep -qF "Reason=$want2"; }
until_ok 20 down_with_reason
ok $? "$a is DOWN with the reason '$want2'"
gone() { [ "$(describe "$ia2" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')" = terminated ]; }
until_ok 30 gone
ok $? "the agent terminated $ia2 itself (EC2: terminated)"
until_ok 20 node_says "$a" "rejected by the agent"
"$inst" stop "burst-lab$$-emu-$a"
! awk -v l="$a: launching -> booting: $ia2" -v m="$a: booting -> admitted" \
	'index($0, l) { s = 1 } s && index($0, m) { f = 1 } END { exit !f }' "$LAB/log/agent.log"
ok $? "... and did not admit it: its join report was refused ($(grep -o 'rejected by the agent: .*' "$LAB/emu/$a/node.log" | tail -1))" "$LAB/emu/$a/node.log"
key2="aws/$(jget "$LAB/i-$ia2.json" 'd["type"]')@us-east-1"
left2=$(python3 -c 'import sqlite3, sys, time; print(int(sqlite3.connect(sys.argv[1]).execute("select until from cooldowns where key=?", (sys.argv[2],)).fetchone()[0] - time.time()))' "$LAB/burst/agent.db" "$key2" 2>/dev/null)
[ "${left2:-0}" -gt 60 ]
ok $? "$key2 cools down too (${left2:-no} s left)"

# --- 6. every candidate of the node set cooling down: not launched, and why ---
scontrol update nodename="$a" state=resume
is_idle_down() { [ "$(lab_node_state "$a")" = 'idle~' ]; }
until_ok 20 is_idle_down
ok $? "$a back to idle~ (scontrol update state=resume)"
n_runs=$(runs | wc -l)
scontrol update nodename="$a" state=power_up
none_now() { grep -q "$a: requested -> powered_down: no instance type of node set cloud can be launched now" "$LAB/log/agent.log"; }
until_ok 30 none_now
ok $? "resumed with both its types cooling down in us-east-1, $a is failed at once" "$LAB/log/agent.log"
line=$(grep "$a: requested -> powered_down: no instance type of node set cloud can be launched now" "$LAB/log/agent.log" | tail -1)
echo "# $line"
[[ "$line" == *"aws/t3.micro@us-east-1 (cooling down "*" s more)"* ]] && [[ "$line" == *"$key2 (cooling down "*" s more)"* ]]
ok $? "... the reason names both candidates and their cooldowns"
sleep 1
[ "$(runs | wc -l)" = "$n_runs" ]
ok $? "... and nothing was asked of EC2 for it ($n_runs RunInstances before and after)"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

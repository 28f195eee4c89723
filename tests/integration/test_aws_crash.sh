#!/usr/bin/env bash
# test_aws_crash.sh - the agent killed between sending RunInstances and
# recording the answer (issue 5): a 2-node job bursts through the aws
# provider into moto_server (signatures checked) behind ec2_hold.py, which
# lets moto launch the batch's instances and holds back the answer; the
# agent is SIGKILLed while it waits for it (MinCount=all: moto launches
# MinCount instances, not up to MaxCount). After a restart the agent finds
# the instances of that batch (its fsynced batch journal, the burst:batch
# tag = the batch's ClientToken) and adopts them: the same instance ids, no
# second RunInstances, no duplicate; the job runs on both nodes, and after
# the nodes are released nothing tagged with the cluster is left running.
# Then the agent is killed while its RunInstances has not reached moto yet:
# restarted, it waits for that batch (its instances appear later) instead of
# launching the nodes again.
# burst-matrix: host-only (the agent's crash recovery against moto: its Slurm calls are those of test_aws_agent, run on both)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
[ -x "$build/burst-agent/burst-agent" ] || bail "no $build/burst-agent/burst-agent (build first)"

aux=$(mktemp -d /tmp/test_aws_crash.XXXXXX)
moto_pid= hold_pid=
aux_down() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null && wait "$hold_pid" 2>/dev/null
	moto_pid= hold_pid=
	rm -rf "$aux"
}

# --- moto_server with signature checking; the holding proxy in front ---
moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
mkdir "$aux/hold"
python3 "$src/tests/integration/ec2_hold.py" "$ep" "$aux/hold.port" "$aux/hold" 1 2>"$aux/hold.log" &
hold_pid=$!
for _ in $(seq 100); do [ -s "$aux/hold.port" ] && break; sleep 0.1; done
[ -s "$aux/hold.port" ] || { aux_down; bail "ec2_hold.py did not start"; }
hep="http://127.0.0.1:$(cat "$aux/hold.port")"

umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 120 10 8)
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	# the instances' private IPs in the upper half of the lab's /24 (their NodeAddr)
	subnet=$(moto_subnet "$LAB_NET.128/25" 2>"$LAB/subnet.err") || { cat "$LAB/subnet.err" >&2; return 1; }
	lab_burst_conf <<CONF || return 1
RejectCooldown=5
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$hep CredentialsFile=$aux/creds ImageId=$ami MinCount=all JoinAddress=$LAB_NET.1:$jp SubnetId=$subnet
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=aws InstanceTypes=t3.micro
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"
agent1=$AGENT_PID

export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
unset AWS_SESSION_TOKEN AWS_PROFILE
# the cluster's instances in moto: one line "ID STATE LAUNCH_INDEX BATCH" each
cluster_instances() {
	"$MOTO_PY" - "$ep" "lab$$" <<'PY'
import sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
for page in ec2.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "tag:burst:cluster", "Values": [sys.argv[2]]}]):
    for r in page["Reservations"]:
        for i in r["Instances"]:
            tags = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
            print(i["InstanceId"], i["State"]["Name"], i["AmiLaunchIndex"], tags.get("burst:batch", "-"))
PY
}
node_db() {   # NODE COLUMN: the agent's record of the node
	python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("select %s from nodes where name=?" % sys.argv[3], (sys.argv[2],)).fetchone()
print("" if r is None or r[0] is None else r[0])' "$LAB/burst/agent.db" "$1" "$2"
}
wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}
instance_of() {   # NODE: the instance of its last launch, from the agent's log
	grep -o "$1: launching -> booting: i-[0-9a-f]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}

# --- 1. a 2-node job; moto launches the batch, the answer is held, the agent is killed ---
id=$(sbatch --parsable -N2 --cloud-contract=small -w 'burst-[1-2]' -o "$LAB/job.out" \
	--wrap 'echo "I=$CLOUD_INSTANCE_ID"; srun -N2 -l hostname | sort' 2>"$LAB/err")
ok $? "sbatch -N2 --cloud-contract=small -w burst-[1-2]" "$LAB/err"
lab_wait_file "$aux/hold/held.1" 60
ok $? "the agent sent RunInstances; moto launched; the proxy holds the answer" "$aux/hold.log" "$LAB/log/agent.log"
{ kill -9 "$agent1"; wait "$agent1"; } 2>/dev/null
[ $? = 137 ]; ok $? "the agent was killed (SIGKILL) before it got the answer"
held_ids=$(jget "$aux/hold/held.1" '" ".join(d["instances"])')
held_tok=$(jget "$aux/hold/held.1" 'd["client_token"]')
{ curl -s "$hep/_requests"; echo; } >"$LAB/req1.json"
[ "$(jget "$LAB/req1.json" 'len([r for r in d if r["action"] == "RunInstances"])')" = 1 ] &&
	[ "$(jget "$LAB/req1.json" '[r["max_count"] for r in d if r["action"] == "RunInstances"][0]')" = 2 ] &&
	[ "$(echo $held_ids | wc -w)" = 2 ]
ok $? "one RunInstances for both nodes (MaxCount 2); moto launched $held_ids" "$LAB/req1.json"
[ -z "$(node_db burst-1 instance)$(node_db burst-2 instance)" ] &&
	[ "$(node_db burst-1 state) $(node_db burst-2 state)" = "launching launching" ]
ok $? "the agent's state holds both nodes launching, no instance recorded ($(node_db burst-1 state), $(node_db burst-2 state))"
grep -q "^$held_tok burst-1:1 burst-2:1 @[0-9]*\.[0-9]* %[a-z0-9-]*\$" "$LAB/burst/aws-aws.batches"
ok $? "the batch journal holds the batch ($held_tok burst-1:1 burst-2:1)" "$LAB/burst/aws-aws.batches"

# --- 2. restart: the instances are adopted, nothing launched again ---
lab_agent_start; ok $? "the agent is up again" "$LAB/log/agent.log"
wait_log 'burst-1: launching -> booting: i-' 30 && wait_log 'burst-2: launching -> booting: i-' 10
ok $? "both nodes are booting again" "$LAB/log/agent.log"
i1=$(instance_of burst-1) i2=$(instance_of burst-2)
cluster_instances >"$LAB/inst.txt" 2>"$LAB/inst.err"
ok $? "moto lists the cluster's instances" "$LAB/inst.err"
sed 's/^/# /' "$LAB/inst.txt"
idx() { awk -v i="$1" '$1 == i {print $3}' "$LAB/inst.txt"; }
# the user data's table maps launch index to node: index 0 burst-1, index 1 burst-2
for iid in $held_ids; do
	"$MOTO_PY" "$src/tests/integration/ec2_moto_setup.py" userdata "$ep" "$iid" | base64 -d >"$LAB/ud-$iid.sh"
done
set -- $held_ids
ud=$LAB/ud-$1.sh
grep -q "^0) NODE='burst-1' " "$ud" && grep -q "^1) NODE='burst-2' " "$ud"
ok $? "the batch's user data gives launch index 0 to burst-1, 1 to burst-2" "$ud"
want1=$(awk '$3 == 0 {print $1}' "$LAB/inst.txt") want2=$(awk '$3 == 1 {print $1}' "$LAB/inst.txt")
[ -n "$i1" ] && [ -n "$i2" ] && [ "$i1" = "$want1" ] && [ "$i2" = "$want2" ] && [[ " $held_ids " == *" $i1 "* ]] && [[ " $held_ids " == *" $i2 "* ]]
ok $? "the instances moto launched are adopted: burst-1 $i1 (index $(idx "$i1")), burst-2 $i2 (index $(idx "$i2"))"
grep -q "burst-1: instance $i1 adopted: launched earlier (batch $held_tok, attempt 1), the answer was not recorded" "$LAB/log/agent.log" &&
	grep -q "burst-2: instance $i2 adopted: launched earlier (batch $held_tok, attempt 1), the answer was not recorded" "$LAB/log/agent.log"
ok $? "the agent's log says so" "$LAB/log/agent.log"
grep 'adopted' "$LAB/log/agent.log" | sed 's/^/# /'
{ curl -s "$hep/_requests"; echo; } >"$LAB/req2.json"
nrun=$(jget "$LAB/req2.json" 'len([r for r in d if r["action"] == "RunInstances"])')
[ "$nrun" = 1 ]; ok $? "no second RunInstances ($nrun in all)" "$LAB/req2.json"
ninst=$(wc -l <"$LAB/inst.txt")
[ "$ninst" = 2 ] && [ "$(awk '{print $4}' "$LAB/inst.txt" | sort -u)" = "$held_tok" ]
ok $? "no duplicate: 2 instances tagged burst:cluster=lab$$, both of batch $held_tok ($ninst)" "$LAB/inst.txt"

# --- 3. the instances boot (emulated cloud-init), the job runs on both ---
emu() {   # NODE INDEX INSTANCE USERDATA ADDRESS (the join token: its tag, as its metadata serves it)
	mkdir -p "$LAB/emu/$1"
	BURST_JOIN_TOKEN=$(moto_join_token "$3") "$inst" start "burst-lab$$-emu-$1" "$1" "$5/24" "$LAB_BR" "$LAB/emu/$1" -- \
		env BURST_LAUNCH_INDEX="$2" BURST_INSTANCE_ID="$3" \
		BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
		BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
		sh "$4" >/dev/null
}
emu burst-1 0 "$i1" "$ud" "$(moto_ip "$i1")" && emu burst-2 1 "$i2" "$ud" "$(moto_ip "$i2")"
ok $? "the instances' user data runs (emulated cloud-init)" "$LAB/emu/burst-1/node.log" "$LAB/emu/burst-2/node.log"
lab_wait_job "$id" COMPLETED 120
ok $? "both nodes joined, the job completed" "$LAB/log/agent.log" "$LAB/log/slurmctld.log" "$LAB/emu/burst-1/node.log" "$LAB/emu/burst-2/node.log"
grep -qx "I=$i1" "$LAB/job.out" && grep -qx '0: burst-1' "$LAB/job.out" && grep -qx '1: burst-2' "$LAB/job.out"
ok $? "it ran on burst-1 ($i1) and burst-2" "$LAB/job.out"

# --- 4. released: nothing of the cluster is left running ---
for _ in $(seq 300); do
	cluster_instances >"$LAB/inst.txt" 2>/dev/null
	! grep -qv ' terminated ' "$LAB/inst.txt" && break
	sleep 0.2
done
sed 's/^/# /' "$LAB/inst.txt"
[ "$(grep -c ' terminated ' "$LAB/inst.txt")" = 2 ] && ! grep -qv ' terminated ' "$LAB/inst.txt"
ok $? "after SuspendTime both instances are terminated, nothing tagged lab$$ is left running" "$LAB/log/agent.log"
"$inst" stop "burst-lab$$-emu-burst-1"
"$inst" stop "burst-lab$$-emu-burst-2"
lab_wait_node burst-1 'idle~' 30 && lab_wait_node burst-2 'idle~' 10
ok $? "burst-1 and burst-2 are powered down ($(lab_node_state burst-1), $(lab_node_state burst-2))"

# --- 5. killed while its RunInstances has not reached EC2 yet: EC2 (and
# moto) may make a batch's instances after a DescribeInstances that shows
# none, so the restarted agent waits for the batch instead of launching its
# nodes again (which gave each node two instances in test_standby) ---
agent2=$AGENT_PID
curl -s "$hep/_hold_before" >/dev/null
id2=$(sbatch --parsable -N2 --cloud-contract=small -w 'burst-[1-2]' -o /dev/null --wrap true 2>"$LAB/err")
ok $? "a second 2-node job" "$LAB/err"
lab_wait_file "$aux/hold/before.1" 60
ok $? "its RunInstances is held before it reaches moto" "$aux/hold.log" "$LAB/log/agent.log"
{ kill -9 "$agent2"; wait "$agent2"; } 2>/dev/null
[ $? = 137 ]; ok $? "the agent was killed (SIGKILL) meanwhile"
tok2=$(jget "$aux/hold/before.1" 'd["client_token"]')
lab_agent_start; ok $? "the agent is up again" "$LAB/log/agent.log"
wait_log "batch $tok2 (sent [0-9.]* s ago, never answered here) shows no instance for it yet: it may still be launching" 30
ok $? "it finds no instance of that batch yet and waits for it" "$LAB/log/agent.log"
touch "$aux/hold/release.1"
wait_log "burst-1: instance i-[0-9a-f]* adopted: launched earlier (batch $tok2, " 30 &&
	wait_log "burst-2: instance i-[0-9a-f]* adopted: launched earlier (batch $tok2, " 10
ok $? "once moto has made them, both instances are adopted" "$LAB/log/agent.log" "$aux/hold.log"
{ curl -s "$hep/_requests"; echo; } >"$LAB/req3.json"
nrun=$(jget "$LAB/req3.json" 'len([r for r in d if r["action"] == "RunInstances"])')
cluster_instances >"$LAB/inst.txt" 2>"$LAB/inst.err"
live=$(grep -v ' terminated ' "$LAB/inst.txt")
[ "$nrun" = 2 ] && [ "$(grep -c . <<<"$live")" = 2 ] && [ "$(awk '{print $4}' <<<"$live" | sort -u)" = "$tok2" ]
ok $? "no RunInstances sent again ($nrun in all), 2 live instances, both of batch $tok2" "$LAB/inst.txt" "$LAB/req3.json"
scontrol update nodename='burst-[1-2]' state=power_down_force reason=test 2>"$LAB/err"
for _ in $(seq 300); do
	cluster_instances >"$LAB/inst.txt" 2>/dev/null
	! grep -qv ' terminated ' "$LAB/inst.txt" && break
	sleep 0.2
done
! grep -qv ' terminated ' "$LAB/inst.txt"
ok $? "powered down: nothing tagged lab$$ is left running" "$LAB/inst.txt" "$LAB/log/agent.log" "$LAB/err"
! grep -q "$sk" "$LAB/log/agent.log"; ok $? "no secret in the agent's log"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

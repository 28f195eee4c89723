#!/usr/bin/env bash
# test_standby.sh - two burst agents share one StateDir (issue 13 item 5):
# the first holds the lease and bursts, the second waits as a standby. In
# the middle of a 32-node burst through the aws provider (moto_server,
# signatures checked; the instances' user data run as cloud-init would),
# the active agent dies: SIGKILL (STANDBY_MODE=kill, the default) or frozen
# by SIGSTOP (STANDBY_MODE=stop: its lease is not renewed, as when its host
# is cut off; it is let go on once the standby has taken over, and must
# step down without doing anything) or STANDBY_MODE=crash (it dies at the
# crash point provider.launch.after: its first launch answered, the answer
# not recorded; the standby read the batch journal at its own start, before
# that batch was written, and must adopt the batch's instances, not launch
# its nodes again). More jobs are submitted while no
# agent is active. The standby takes over within 10 s, every job
# completes, each of the 32 nodes got exactly one instance, and no spool
# request is left.
# burst-matrix: host-only (the agents' lease handover: its Slurm calls are those of test_burst and test_aws_agent, run on both)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
mode=${STANDBY_MODE:-kill}
case $mode in kill | stop | crash) ;; *) bail "STANDBY_MODE=$mode: give kill, stop or crash" ;; esac
[ -x "$build/burst-agent/burst-agent" ] || bail "no $build/burst-agent/burst-agent (build first)"

aux=$(mktemp -d /tmp/test_standby.XXXXXX)
moto_pid= emu_pid=
aux_down() {
	[ -n "$emu_pid" ] && kill "$emu_pid" 2>/dev/null && wait "$emu_pid" 2>/dev/null
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	moto_pid= emu_pid=
	rm -rf "$aux"
}
moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 240 10 600)
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	subnet=$(moto_subnet "$LAB_NET.128/25" 2>"$LAB/subnet.err") || { cat "$LAB/subnet.err" >&2; return 1; }
	lab_burst_conf <<CONF || return 1
RejectCooldown=5
LeaseTimeout=5
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$ep CredentialsFile=$aux/creds ImageId=$ami MinCount=all JoinAddress=$LAB_NET.1:$jp SubnetId=$subnet
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=cloud Nodes=burst-[1-32] Partition=burst Providers=aws InstanceTypes=t3.micro
CONF
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

# --- two agents, one StateDir ---
if [ "$mode" = crash ]; then
	BURST_CRASH_POINT=provider.launch.after:1 lab_agent_start
else
	lab_agent_start
fi
ok $? "agent A is up" "$LAB/log/agent.log"
a=$AGENT_PID
grep -q "lease taken (epoch 1): nobody held it" "$LAB/log/agent.log"
ok $? "A holds the lease (epoch 1)" "$LAB/log/agent.log"
SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
	BURST_NODE="$build/burst-node/burst-node" \
	"$build/burst-agent/burst-agent" -c "$LAB/etc/burst.conf" -L "$LAB/log/agentB.log" &
b=$!
lab_record burst-agent "$b"
wait_log() {   # FILE REGEX SECONDS
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_log "$LAB/log/agentB.log" "standby: .* pid $a holds the lease (epoch 1)" 10
ok $? "B waits as a standby" "$LAB/log/agentB.log"
"$burstctl" --config "$LAB/etc/burst.conf" status >"$LAB/status1" 2>&1
grep -q "^active agent: .* pid $a (lease epoch 1, " "$LAB/status1"
ok $? "burstctl status: A is the active agent" "$LAB/status1"

# --- the emulated cloud: each running instance's user data runs as cloud-init would ---
export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk
unset AWS_SESSION_TOKEN AWS_PROFILE
# the cluster's instances: "ID STATE NODE IP INDEX TOKEN" (the node from its
# batch's user data and launch index; TOKEN its burst-join-token tag, "-" until
# the agent has tagged it)
cluster_instances() {
	"$MOTO_PY" - "$ep" "lab$$" "$1" <<'PY'
import base64, os, re, sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
cache = sys.argv[3]
for page in ec2.get_paginator("describe_instances").paginate(
        Filters=[{"Name": "tag:burst:cluster", "Values": [sys.argv[2]]}]):
    for r in page["Reservations"]:
        for i in r["Instances"]:
            iid = i["InstanceId"]
            ud = os.path.join(cache, iid + ".sh")
            if not os.path.exists(ud):
                a = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")
                with open(ud + ".new", "wb") as f:
                    f.write(base64.b64decode(a["UserData"]["Value"]))
                os.rename(ud + ".new", ud)
            m = re.search(r"^%d\) NODE='([^']*)'" % i["AmiLaunchIndex"], open(ud).read(), re.M)
            tok = {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("burst-join-token") or "-"
            print(iid, i["State"]["Name"], m.group(1) if m else "-", i.get("PrivateIpAddress", "-"),
                  i["AmiLaunchIndex"], tok)
PY
}
mkdir -p "$LAB/ud" "$LAB/emu"
# the instances' software, as an image has it (not the build tree, which an
# instance's private /tmp hides when the clone is under /tmp)
node_img=$(lab_node_image) || bail "no node image"
emulator() {
	local id st node ip idx tok
	while :; do
		cluster_instances "$LAB/ud" 2>>"$LAB/emu.err" | while read -r id st node ip idx tok; do
			# an instance waits for its join token tag, as its user data does
			[ "$st" = running ] && [ "$node" != - ] && [ "$tok" != - ] && [ ! -e "$LAB/emu/$id" ] || continue
			: >"$LAB/emu/$id"
			mkdir -p "$LAB/emu/$node"
			"$inst" stop "burst-lab$$-emu-$node" 2>/dev/null
			BURST_JOIN_TOKEN=$tok "$inst" start "burst-lab$$-emu-$node" "$node" "$ip/24" "$LAB_BR" "$LAB/emu/$node" -- \
				env BURST_LAUNCH_INDEX="$idx" BURST_INSTANCE_ID="$id" \
				BURST_NODE_BIN="$node_img" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
				BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
				sh "$LAB/ud/$id.sh" >/dev/null 2>>"$LAB/emu.err"
		done
		sleep 0.5
	done
}
emulator &
emu_pid=$!

# --- half the burst, then the active agent dies in its middle ---
jobs=
# each job holds its 4 nodes until $LAB/release exists: the 8 jobs need 32 nodes at once
job() {
	sbatch --parsable -N4 --exclusive --cloud-contract=small -p burst -o "$LAB/job-%j.out" \
		--wrap "srun -N4 hostname; while [ ! -e '$LAB/release' ]; do sleep 0.5; done" 2>>"$LAB/err"
}
for j in 1 2 3 4; do
	id=$(job) && jobs="$jobs $id"
done
[ "$(echo $jobs | wc -w)" = 4 ]; ok $? "4 jobs of 4 nodes submitted:$jobs" "$LAB/err"
admitted() { grep -c "booting -> admitted" "$1" 2>/dev/null; }
if [ "$mode" = crash ]; then
	for ((i = 0; i < 1200; i++)); do lab_pid_alive "$a" || break; sleep 0.1; done
	wait "$a" 2>/dev/null
	rc=$?
	t0=$(date +%s.%N)
	[ "$rc" = 86 ] && grep -q "crash point provider.launch.after reached" "$LAB/log/agent.log"
	ok $? "A died with its first launch answered and not recorded (exit status $rc)" "$LAB/log/agent.log"
else
	for ((i = 0; i < 1200; i++)); do [ "$(admitted "$LAB/log/agent.log")" -ge 4 ] && break; sleep 0.1; done
	na=$(admitted "$LAB/log/agent.log")
	[ "$na" -ge 4 ] && [ "$na" -lt 16 ]
	ok $? "A launched and admitted some of the first 16 nodes ($na admitted)" "$LAB/log/agent.log" "$LAB/emu.err"
	t0=$(date +%s.%N)
fi
if [ "$mode" = kill ]; then
	{ kill -9 "$a"; wait "$a"; } 2>/dev/null
	[ $? = 137 ]; ok $? "A killed (SIGKILL) in the middle of the burst"
elif [ "$mode" = stop ]; then
	# frozen between two writes of its state: a host cut off from the
	# storage loses its locks with it (the storage's fencing), while a
	# process frozen on a live host inside a write keeps SQLite's lock,
	# which no lease takes from it (the admin guide says so); so A is let
	# go on and frozen again until SQLite's write lock is free
	unlocked() {
		python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
c.execute("BEGIN IMMEDIATE"); c.execute("ROLLBACK")' "$LAB/burst/agent.db" 2>/dev/null
	}
	for ((k = 0; k < 100; k++)); do
		kill -STOP "$a"
		unlocked && break
		kill -CONT "$a"
		sleep 0.0$((RANDOM % 10))
	done
	unlocked; ok $? "A frozen (SIGSTOP) in the middle of the burst, between two writes (let go on and frozen again $k times)"
	# what A wrote while it was let go on between two freezes is from
	# before its last freeze: only what follows that counts as "after"
	alines=$(wc -l <"$LAB/log/agent.log")
fi
# the second half is asked for while no agent is active: its spool requests wait
for j in 5 6 7 8; do
	id=$(job) && jobs="$jobs $id"
done
[ "$(echo $jobs | wc -w)" = 8 ]; ok $? "4 more jobs submitted (8 in all)" "$LAB/err"

# --- the standby takes over ---
wait_log "$LAB/log/agentB.log" "lease taken (epoch 2) from .* pid $a" 15
ok $? "B took the lease over (epoch 2)" "$LAB/log/agentB.log"
t1=$(date +%s.%N)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
awk -v t="$took" 'BEGIN { exit !(t <= 10) }'
ok $? "within 10 s of A's death ($took s)" "$LAB/log/agentB.log"
grep "lease taken" "$LAB/log/agentB.log" | sed 's/^/# /'
if [ "$mode" = stop ]; then
	# let the deposed agent go on: it must step down before anything else
	kill -CONT "$a"
	for ((i = 0; i < 100; i++)); do lab_pid_alive "$a" || break; sleep 0.1; done
	wait "$a" 2>/dev/null
	rc=$?
	[ "$rc" = 3 ]; ok $? "A, let go on, stepped down (exit status $rc)" "$LAB/log/agent.log"
	tail -n +$((alines + 1)) "$LAB/log/agent.log" >"$LAB/a-after.log"
	sed 's/^/# A after: /' "$LAB/a-after.log"
	grep -q "lease lost" "$LAB/a-after.log" && ! grep -v "lease lost" "$LAB/a-after.log" | grep -q .
	ok $? "... and did nothing else after it was let go on (only 'lease lost' in its log)" "$LAB/a-after.log"
fi

# --- every job runs (32 nodes at once) and completes, one instance per node, no request left ---
all=0
for id in $jobs; do
	lab_wait_job "$id" RUNNING 300 && all=$((all + 1))
done
[ "$all" = 8 ]; ok $? "all 8 jobs run at once, on 32 nodes ($all)" "$LAB/log/agentB.log" "$LAB/log/slurmctld.log" "$LAB/emu.err"
touch "$LAB/release"
all=0
for id in $jobs; do
	lab_wait_job "$id" COMPLETED 300 && all=$((all + 1))
done
[ "$all" = 8 ]; ok $? "all 8 jobs completed ($all)" "$LAB/log/agentB.log" "$LAB/log/slurmctld.log" "$LAB/emu.err"
cluster_instances "$LAB/ud" >"$LAB/inst.txt" 2>"$LAB/inst.err"
ok $? "moto lists the cluster's instances" "$LAB/inst.err"
dups=$(awk '{print $3}' "$LAB/inst.txt" | sort | uniq -d)
relaunched=
for n in $dups; do
	grep -q "$n: admitted -> terminating: slurmd of .* did not register within" "$LAB/log/agent.log" "$LAB/log/agentB.log" &&
		relaunched="$relaunched $n"
done
nodes=$(awk '{print $3}' "$LAB/inst.txt" | sort -u | wc -l)
ninst=$(wc -l <"$LAB/inst.txt")
[ "$nodes" = 32 ] && [ "$ninst" = 32 ] && [ -z "$dups" ]
ok $? "each of the 32 nodes got one instance ($ninst instances for $nodes nodes; duplicates: $(echo ${dups:-none}); of them relaunched for slurmd: ${relaunched:-none})" "$LAB/inst.txt"
live2=$(awk '$2 != "terminated" && $2 != "shutting-down" {print $3}' "$LAB/inst.txt" | sort | uniq -d)
[ -z "$live2" ]; ok $? "no node has two live instances (${live2:-none}): a relaunch terminated the first" "$LAB/inst.txt"
if [ "$mode" = crash ]; then
	# the batch A launched and died before recording: B found it in the journal
	nad=$(grep -c ": instance i-[0-9a-f]* adopted: launched earlier (batch burst-" "$LAB/log/agentB.log")
	[ "$nad" -ge 1 ]; ok $? "B adopted the instances of A's unrecorded launch ($nad nodes)" "$LAB/log/agentB.log"
fi
[ -z "$(ls "$LAB/burst/spool" 2>/dev/null | grep '\.json$')" ]
ok $? "no spool request left"
"$burstctl" --config "$LAB/etc/burst.conf" status >"$LAB/status2" 2>&1
grep -q "^active agent: .* pid $b (lease epoch 2, " "$LAB/status2"
ok $? "burstctl status: B is the active agent" "$LAB/status2"
nb=$(admitted "$LAB/log/agentB.log")
ok $([ "$nb" -ge 16 ]; echo $?) "B admitted the rest ($nb nodes)"

# --- a clean stop hands over at once ---
kill "$b"; wait "$b" 2>/dev/null
grep -q "lease released (epoch 2)" "$LAB/log/agentB.log"
ok $? "B, stopped, released the lease" "$LAB/log/agentB.log"
"$burstctl" --config "$LAB/etc/burst.conf" status >"$LAB/status3" 2>&1
grep -q "^active agent: none (lease epoch 2 released by .* pid $b)" "$LAB/status3"
ok $? "burstctl status says so" "$LAB/status3"

kill "$emu_pid" 2>/dev/null; wait "$emu_pid" 2>/dev/null; emu_pid=
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

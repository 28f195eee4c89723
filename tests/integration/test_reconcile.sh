#!/usr/bin/env bash
# test_reconcile.sh - the agent's reconciler on a real Slurm, with the aws
# provider against moto_server (signatures checked) and the local provider:
# (a) an instance tagged with our cluster that no node owns is terminated
#     after OrphanGrace (and not before), while another cluster's and an
#     untagged one are kept;
# (b) a running job's EC2 instance terminated behind the agent's back (a spot
#     reclaim): the miss is first only noted (eventual consistency), then the
#     node is lost: DOWN with the reason, its job requeued (Restarts=1) and run
#     to completion on a new instance;
# (c) the same with the local provider (its namespace removed);
# (d) the agent restarted with two admitted nodes, one of whose instances
#     went while it was down: the live one is found in one listing of its
#     provider (no call per node), the gone one asked about and failed;
# and at the end no instance of the cluster is left running.
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

aux=$(mktemp -d /tmp/test_reconcile.XXXXXX)
moto_pid=
aux_down() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	rm -rf "$aux"
}

# --- moto_server with signature checking ---
moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="$(lab_burst_slurm_conf 90 10 8)"
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	# the instances' private IPs in the upper half of the lab's /24 (their NodeAddr)
	subnet=$(moto_subnet "$LAB_NET.128/25" 2>"$LAB/subnet.err") || { cat "$LAB/subnet.err" >&2; return 1; }
	lab_burst_conf <<CONF || return 1
RejectCooldown=4
ReconcileInterval=1
OrphanGrace=8
VanishGrace=3
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1,us-west-2 Endpoint=$ep CredentialsFile=$aux/creds ImageId=$ami JoinAddress=$LAB_NET.1:$jp SubnetId=$subnet
Contract=ec2 node_provider=aws accelerator_count=0
Contract=here node_provider=local accelerator_count=0
NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=aws Regions=us-east-1 InstanceTypes=t3.micro
NodeSet=local Nodes=burst-[3-4] Partition=burst Providers=local InstanceTypes=local.host
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
ok 0 "burstctl check-config accepts ReconcileInterval, OrphanGrace and VanishGrace"

lab_agent_start; ok $? "the agent is up"

export AWS_ACCESS_KEY_ID=$ak AWS_SECRET_ACCESS_KEY=$sk AWS_DEFAULT_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE
# ec2 ACTION ARGS...: boto3 against moto
ec2() {
	"$MOTO_PY" - "$ep" "$@" <<'PY'
import base64, json, os, sys, boto3
ep, action, args = sys.argv[1], sys.argv[2], sys.argv[3:]
c = boto3.client("ec2", endpoint_url=ep, region_name=os.environ.get("REGION", "us-east-1"))
if action == "run":            # run AMI [KEY=VALUE...]: one instance with those tags
    spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in (a.split("=", 1) for a in args[1:])]}] if args[1:] else []
    r = c.run_instances(ImageId=args[0], InstanceType="t3.micro", MinCount=1, MaxCount=1, TagSpecifications=spec)
    print(r["Instances"][0]["InstanceId"])
elif action == "state":        # state ID
    print(c.describe_instances(InstanceIds=[args[0]])["Reservations"][0]["Instances"][0]["State"]["Name"])
elif action == "terminate":    # terminate ID...
    c.terminate_instances(InstanceIds=args)
elif action == "userdata":     # userdata ID
    ud = c.describe_instance_attribute(InstanceId=args[0], Attribute="userData").get("UserData", {}).get("Value", "")
    sys.stdout.write(base64.b64decode(ud).decode() if ud else "")
elif action == "live":         # live CLUSTER: instances of the cluster not terminated
    f = [{"Name": "tag:burst:cluster", "Values": [args[0]]},
         {"Name": "instance-state-name", "Values": ["pending", "running", "stopping", "stopped"]}]
    print(" ".join(i["InstanceId"] for r in c.describe_instances(Filters=f)["Reservations"] for i in r["Instances"]))
PY
}
wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}
wait_state() {   # INSTANCE STATE SECONDS
	local i
	for ((i = 0; i < $3 * 5; i++)); do
		[ "$(ec2 state "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}
instance_of() {   # NODE: the instance of its last launch, from the agent's log
	grep -o "$1: launching -> booting: i-[0-9a-f]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}
# cloud-init, emulated: the user data runs in a namespace on the lab's bridge
emu() {   # NODE INSTANCE ADDRESS
	ec2 userdata "$2" >"$LAB/ud-$2.sh" && [ -s "$LAB/ud-$2.sh" ] || return 1
	mkdir -p "$LAB/emu/$1"
	# the join token: its tag, as its metadata serves it (in the environment)
	BURST_JOIN_TOKEN=$(moto_join_token "$2") "$inst" start "burst-lab$$-emu-$1" "$1" "$3/24" "$LAB_BR" "$LAB/emu/$1" -- \
		env BURST_LAUNCH_INDEX=0 BURST_INSTANCE_ID="$2" \
		BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
		BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
		sh "$LAB/ud-$2.sh" >/dev/null
}
# follow NODE JOB STATE SECONDS: until JOB is STATE, run the user data of
# every new instance of NODE as cloud-init would (the agent's registration
# check may launch a node again, and a requeued job wakes it); emu_cur is
# the last instance emulated, emu_n counts them
emu_cur= emu_n=0 emu_seen=" "
follow() {
	local i st cur
	for ((i = 0; i < $4 * 10; i++)); do
		st=$(squeue -h -t all -j "$2" -o %T 2>/dev/null)
		[ "$st" = "$3" ] && return 0
		cur=$(instance_of "$1")
		if [ -n "$cur" ] && [[ "$emu_seen" != *" $cur "* ]]; then
			[ -n "$emu_cur" ] && "$inst" stop "burst-lab$$-emu-$1"
			emu "$1" "$cur" "$(moto_ip "$cur")" || echo "# emulating $cur failed"
			emu_seen+="$cur " emu_cur=$cur emu_n=$((emu_n + 1))
		fi
		sleep 0.1
	done
	return 1
}
# a reclaimed machine dies at once: every process of the namespace is
# killed (no SIGTERM a slurmstepd could report), then the namespace goes
reclaim() {   # NETNS
	local pids
	pids=$(ip netns pids "$1" 2>/dev/null)
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	"$inst" stop "$1"
}
restarts() { scontrol show job "$1" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2; }
# the job: the first run waits to be killed, a rerun completes
cat >"$LAB/job.sh" <<'EOF'
#!/bin/sh
echo "run ${SLURM_RESTART_COUNT:-0} on $(hostname) ${CLOUD_INSTANCE_ID:-}"
[ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] || sleep 600
EOF
chmod 755 "$LAB/job.sh"

# REASON INSTANCE: Slurm's reason for a lost node says its instance vanished;
# RejectCooldown (4 s) after the loss the agent powers the node down with
# the same reason behind "cooldown over after: " (slurmctld, slow under
# load, may apply the first update only shortly before the second)
vanished_reason() {
	[[ "$1" == *"burst: instance $2 vanished (spot reclaim?)"* ]] ||
		[[ "$1" == *"burst: cooldown over after: instance $2 vanished (spot reclaim?)"* ]]
}

# --- (a) orphans: ours after OrphanGrace; another cluster's and untagged ones never ---
other=$(ec2 run "$ami" "burst:cluster=other$$") && untagged=$(ec2 run "$ami") &&
	t0=$(date +%s) && orphan=$(ec2 run "$ami" "burst:cluster=lab$$" burst:nodeset=cloud "Name=stray")
ok $? "three instances made in moto behind the agent's back: ours $orphan, another cluster's $other, untagged $untagged"
# (each of these steps starts a Python: under load, seconds; so whether the
# orphan was kept while young is read from the age the agent decided at,
# not from this script's clock)
st=$(ec2 state "$orphan")
[ "$st" = running ]
ok $? "the orphan is running when first listed ($st, $(( $(date +%s) - t0 )) s after its launch)"
west=$(REGION=us-west-2 ec2 run "$ami" "burst:cluster=lab$$")
ok $? "and one of ours in the provider's other region, us-west-2: $west"
wait_state "$orphan" terminated 30
ok $? "... then terminated by the reconciler ($(( $(date +%s) - t0 )) s after its launch)" "$LAB/log/agent.log" "$aux/moto.log"
grep -q "reconcile: instance $orphan of provider aws (node none): terminating: orphan: tagged burst:cluster=lab$$, launched [0-9]* s ago (OrphanGrace=8 s), no node owns it" "$LAB/log/agent.log"
ok $? "the agent's log says which instance and why"
grep "reconcile: instance $orphan" "$LAB/log/agent.log" | sed 's/^/# /'
age=$(grep -o "reconcile: instance $orphan of provider aws (node none): terminating: orphan: .*, launched [0-9]* s ago" "$LAB/log/agent.log" |
	head -1 | grep -o 'launched [0-9]* s ago' | awk '{ print $2 }')
[ "${age:-0}" -ge 8 ]
ok $? "the orphan was kept while younger than OrphanGrace=8 s (terminated at ${age:-?} s old)"
for _ in $(seq 50); do [ "$(REGION=us-west-2 ec2 state "$west")" = terminated ] && break; sleep 0.2; done
[ "$(REGION=us-west-2 ec2 state "$west")" = terminated ]
ok $? "the orphan in us-west-2 is terminated too (every region of the provider is listed)" "$LAB/log/agent.log"
sleep 2
[ "$(ec2 state "$other")" = running ] && [ "$(ec2 state "$untagged")" = running ]
ok $? "another cluster's instance and an untagged one are still running"
! grep -q "$other\|$untagged" "$LAB/log/agent.log"; ok $? "... and the agent never named them"
ec2 terminate "$other" "$untagged"

# --- (b) spot reclaim of a running job's EC2 instance ---
id=$(sbatch --parsable --requeue --open-mode=append --cloud-contract=ec2 -w burst-1 -o "$LAB/b.out" "$LAB/job.sh" 2>"$LAB/err")
ok $? "sbatch --cloud-contract=ec2 -w burst-1 (a requeueable job)" "$LAB/err"
wait_log 'burst-1: launching -> booting: i-' 30; ok $? "the agent launched burst-1 in moto"
follow burst-1 "$id" RUNNING 60; iid1=$emu_cur
ok $? "its user data runs (emulated cloud-init) and the job runs on burst-1 ($iid1)" "$LAB/log/agent.log" "$LAB/emu/burst-1/node.log"
[ "$emu_n" -eq 1 ]
ok $? "one instance ($emu_n)"
for _ in $(seq 50); do grep -q "^run 0 " "$LAB/b.out" 2>/dev/null && break; sleep 0.1; done
sleep 2   # a few reconciler rounds see it there
! grep -q "reconcile: burst-1" "$LAB/log/agent.log"; ok $? "while its instance is listed, the reconciler leaves burst-1 alone"
# the reclaim: EC2 terminates the instance; the machine and its slurmd die
ec2 terminate "$iid1" && reclaim "burst-lab$$-emu-burst-1" && emu_cur= n1=$emu_n
ok $? "instance $iid1 terminated behind the agent's back (spot reclaim)"
wait_log "burst-1: admitted -> lost: instance $iid1 vanished (spot reclaim?)" 20
ok $? "the reconciler marked burst-1 lost" "$LAB/log/agent.log"
grep -q "reconcile: burst-1: instance $iid1 is not listed for 0 s, the node admitted for [0-9]* s (VanishGrace=3 s): waiting" "$LAB/log/agent.log"
ok $? "... after noting the first miss and waiting VanishGrace (eventual consistency)"
grep "reconcile: burst-1\|burst-1: admitted -> lost\|burst-1: lost ->\|job $id" "$LAB/log/agent.log" | sed 's/^/# /'
lab_wait_node burst-1 'down.*' 5
reason=$(scontrol show node burst-1 | grep -o 'Reason=.*')
ok $? "burst-1 is DOWN ($reason)"
vanished_reason "$reason" "$iid1"; ok $? "... with the reason saying the instance vanished"
grep -q "burst-1: lost -> powered_down: instance record cleared" "$LAB/log/agent.log"
ok $? "the instance record is cleared"
for _ in $(seq 100); do [ "$(restarts "$id")" = 1 ] && break; sleep 0.1; done
[ "$(restarts "$id")" = 1 ]; ok $? "the job was requeued (Restarts=$(restarts "$id"))" "$LAB/log/slurmctld.log"
# the requeued job wakes burst-1 again: its new instance's user data is run
# (and that of any relaunch, which fails the test, so that the test ends)
follow burst-1 "$id" COMPLETED 120; st=$(squeue -h -t all -j "$id" -o %T 2>/dev/null)
iid2=$emu_cur n=$((emu_n - n1))
[ -n "$iid2" ]; ok $? "after RejectCooldown burst-1 is resumed for the requeued job: a new instance $iid2" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
[ "$n" -eq 1 ]
ok $? "one new instance ($n)"
[ "$st" = COMPLETED ]; ok $? "the requeued job ran to completion" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
sed 's/^/# b.out: /' "$LAB/b.out"
grep -q "^run 0 on burst-1 $iid1\$" "$LAB/b.out" && grep -q "^run 1 on burst-1 $iid2\$" "$LAB/b.out"
ok $? "... first on $iid1, then rerun on $iid2" "$LAB/b.out"

# --- (c) the same with the local provider: two namespaces vanish at once ---
id=$(sbatch --parsable --requeue --open-mode=append --cloud-contract=here -w burst-3 -o "$LAB/c.out" "$LAB/job.sh" 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here -w burst-3 (local provider)" "$LAB/err"
id4=$(sbatch --parsable --requeue --open-mode=append --cloud-contract=here -w burst-4 -o "$LAB/c4.out" "$LAB/job.sh" 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here -w burst-4 (local provider)" "$LAB/err"
lab_wait_job "$id" RUNNING 60 && lab_wait_job "$id4" RUNNING 60; ok $? "the jobs run on burst-3 and burst-4" "$LAB/log/agent.log"
lid1=$(grep -o "burst-3: launching -> booting: local-[^ ]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}')
lid4=$(grep -o "burst-4: launching -> booting: local-[^ ]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}')
[ "$(cat "$LAB/burst/nodes/burst-3/instance" 2>/dev/null)" = "$lid1" ] &&
	[ "$(cat "$LAB/burst/nodes/burst-4/instance" 2>/dev/null)" = "$lid4" ]
ok $? "the local provider recorded their instances $lid1 and $lid4"
for _ in $(seq 50); do grep -q "^run 0 " "$LAB/c.out" 2>/dev/null && grep -q "^run 0 " "$LAB/c4.out" 2>/dev/null && break; sleep 0.1; done
# both gone from the same listing: the agent is stopped while they go, once
# no listing of its (an ip netns list child) is still running
kill -STOP "$AGENT_PID"
for _ in $(seq 100); do ps -o stat= --ppid "$AGENT_PID" | grep -qv '^Z' || break; sleep 0.05; done
reclaim "burst-lab$$-burst-3" && reclaim "burst-lab$$-burst-4"; st=$?
kill -CONT "$AGENT_PID"
ok $st "burst-3's and burst-4's namespaces removed behind the agent's back"
wait_log "burst-3: admitted -> lost: instance $lid1 vanished (spot reclaim?): not listed by provider local" 20 &&
	wait_log "burst-4: admitted -> lost: instance $lid4 vanished (spot reclaim?): not listed by provider local" 20
ok $? "the reconciler marked burst-3 and burst-4 lost" "$LAB/log/agent.log"
# the jobs on both were read from slurmctld once, not once a node
grep -q "the jobs on 2 nodes (burst-[34], ...) from one reading of Slurm's jobs" "$LAB/log/agent.log"
ok $? "the jobs on both lost nodes came from one reading of Slurm's jobs" "$LAB/log/agent.log"
lab_wait_node burst-3 'down.*' 5
reason=$(scontrol show node burst-3 | grep -o 'Reason=.*')
vanished_reason "$reason" "$lid1"; ok $? "burst-3 is DOWN with the reason ($reason)"
[ ! -e "$LAB/burst/nodes/burst-3/instance" ]; ok $? "its instance record is gone"
for _ in $(seq 100); do [ "$(restarts "$id")" = 1 ] && [ "$(restarts "$id4")" = 1 ] && break; sleep 0.1; done
[ "$(restarts "$id")" = 1 ] && [ "$(restarts "$id4")" = 1 ]
ok $? "both jobs were requeued (Restarts=$(restarts "$id"), $(restarts "$id4"))" "$LAB/log/slurmctld.log"
lab_wait_job "$id" COMPLETED 60 && lab_wait_job "$id4" COMPLETED 60
ok $? "... and reran to completion on new instances" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
sed 's/^/# c.out: /' "$LAB/c.out" "$LAB/c4.out"
grep -q "^run 0 on burst-3 $lid1\$" "$LAB/c.out" && grep -q "^run 1 on burst-3 local-lab$$-burst-3-[0-9]*\$" "$LAB/c.out" &&
	! grep -q "^run 1 on burst-3 $lid1\$" "$LAB/c.out" &&
	grep -q "^run 0 on burst-4 $lid4\$" "$LAB/c4.out" && grep -q "^run 1 on burst-4 local-lab$$-burst-4-[0-9]*\$" "$LAB/c4.out" &&
	! grep -q "^run 1 on burst-4 $lid4\$" "$LAB/c4.out"
ok $? "... each first on its lost instance, then on another" "$LAB/c.out" "$LAB/c4.out"

# --- (d) a restart: the live nodes' instances from one listing ---
printf '#!/bin/sh\necho "on $(hostname) ${CLOUD_INSTANCE_ID:-}"\nsleep 300\n' >"$LAB/long.sh"
id3=$(sbatch --parsable --cloud-contract=here -w burst-3 -o "$LAB/d3.out" "$LAB/long.sh" 2>"$LAB/err")
id4=$(sbatch --parsable --cloud-contract=here -w burst-4 -o "$LAB/d4.out" "$LAB/long.sh" 2>"$LAB/err")
lab_wait_job "$id3" RUNNING 60 && lab_wait_job "$id4" RUNNING 60
ok $? "jobs run on burst-3 and burst-4 (local provider)" "$LAB/log/agent.log" "$LAB/err"
for _ in $(seq 50); do [ -s "$LAB/d3.out" ] && [ -s "$LAB/d4.out" ] && break; sleep 0.1; done
lid3=$(awk '{print $3}' "$LAB/d3.out") lid4=$(awk '{print $3}' "$LAB/d4.out")
[ -n "$lid3" ] && [ -n "$lid4" ]; ok $? "... on instances $lid3 and $lid4" "$LAB/d3.out" "$LAB/d4.out"
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
reclaim "burst-lab$$-burst-4"; ok $? "with the agent stopped, burst-4's namespace removed"
lines=$(wc -l <"$LAB/log/agent.log")
lab_agent_start; ok $? "the agent starts again"
wait_log "recover: .* asked about one by one" 20
tail -n +"$((lines + 1))" "$LAB/log/agent.log" >"$LAB/restart.log"
grep "recover\|burst-[34]: " "$LAB/restart.log" | sed 's/^/# /'
grep -q "burst-3: admitted, instance $lid3 still there" "$LAB/restart.log"
ok $? "burst-3's instance is still there" "$LAB/restart.log"
grep -q "burst-4: admitted -> powered_down: instance $lid4 lost" "$LAB/restart.log"
ok $? "burst-4's is lost, and the node failed at once" "$LAB/restart.log"
grep -q "recover: [1-9][0-9]* booting or admitted instances\? found in the providers' listings, 1 asked about one by one" "$LAB/restart.log"
ok $? "... live instances found in the providers' listings; only the one not listed was asked about" "$LAB/restart.log"
lab_wait_node burst-4 'down.*' 10
reason=$(scontrol show node burst-4 | grep -o 'Reason=.*')
[[ "$reason" == *"burst: instance $lid4 lost"* ]]; ok $? "burst-4 is DOWN: $reason"
st=$(squeue -h -j "$id3" -o %T 2>/dev/null)
[ "$st" = RUNNING ]; ok $? "burst-3's job still runs ($st)"
scancel "$id3" "$id4"
scontrol update nodename=burst-4 state=resume >/dev/null 2>&1

# --- nothing left that costs money ---
for _ in $(seq 300); do [ -z "$(ec2 live "lab$$")" ] && break; sleep 0.2; done
left="$(ec2 live "lab$$") $(REGION=us-west-2 ec2 live "lab$$")"
left=${left# }; left=${left% }
[ -z "$left" ]; ok $? "after SuspendTime no EC2 instance of the cluster is left (${left:-none})" "$LAB/log/agent.log"
! grep -q "$sk" "$LAB/log/agent.log"; ok $? "no secret in the agent's log"
! grep -q "error" "$LAB/log/agent.log"; ok $? "no error in the agent's log" "$LAB/log/agent.log"
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

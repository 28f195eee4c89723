#!/usr/bin/env bash
# test_provider_hang.sh - a provider call that hangs holds up nothing else
# (issue 13, item 3): provider calls run on each provider's worker thread,
# not on the agent's poll loop. An aws provider's RunInstances is answered
# by moto but its answer is held back (ec2_hold.py) for as long as the agent
# waits; meanwhile a job for a local node set bursts: its node is launched,
# joins, is admitted and runs the job, all before the aws launch's answer
# is in. Then the aws launch ends (its client gives up, the driver finds
# the batch's instances from its journal) and its node is booting.
# burst-matrix: host-only (a hung provider call: its Slurm calls are those of test_burst, run on both)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
burstctl="$build/burstctl/burstctl"
[ -x "$build/burst-agent/burst-agent" ] || bail "no $build/burst-agent/burst-agent (build first)"

aux=$(mktemp -d /tmp/test_provider_hang.XXXXXX)
moto_pid= hold_pid=
aux_down() {
	[ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null && wait "$moto_pid" 2>/dev/null
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null && wait "$hold_pid" 2>/dev/null
	moto_pid= hold_pid=
	rm -rf "$aux"
}

moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
moto_pid=$MOTO_PID ep=$MOTO_EP ak=$MOTO_AK sk=$MOTO_SK ami=$MOTO_AMI
mkdir "$aux/hold"
# every RunInstances of the first three is held until the agent gives up on it
python3 "$src/tests/integration/ec2_hold.py" "$ep" "$aux/hold.port" "$aux/hold" 3 2>"$aux/hold.log" &
hold_pid=$!
for _ in $(seq 100); do [ -s "$aux/hold.port" ] && break; sleep 0.1; done
[ -s "$aux/hold.port" ] || { aux_down; bail "ec2_hold.py did not start"; }
hep="http://127.0.0.1:$(cat "$aux/hold.port")"

umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$ak" "$sk" >"$aux/creds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 120 10 30)
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	subnet=$(moto_subnet "$LAB_NET.128/25" 2>"$LAB/subnet.err") || { cat "$LAB/subnet.err" >&2; return 1; }
	lab_burst_conf <<CONF || return 1
RejectCooldown=5
ReconcileInterval=2
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$hep CredentialsFile=$aux/creds ImageId=$ami MinCount=all JoinAddress=$LAB_NET.1:$jp SubnetId=$subnet
Contract=here node_vcpus_count>=1 accelerator_count=0
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=local Nodes=burst-1 Partition=burst InstanceTypes=local.host Providers=local
NodeSet=cloud Nodes=burst-2 Partition=burst Providers=aws InstanceTypes=t3.micro
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"

# --- 1. the aws launch hangs ---
ida=$(sbatch --parsable --cloud-contract=small -w burst-2 -o /dev/null --wrap 'true' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=small -w burst-2 (aws)" "$LAB/err"
lab_wait_file "$aux/hold/held.1" 60
ok $? "the agent sent RunInstances; the proxy holds its answer" "$aux/hold.log" "$LAB/log/agent.log"

# --- 2. meanwhile a local node bursts, joins and runs its job ---
idb=$(sbatch --parsable --cloud-contract=here -w burst-1 -o "$LAB/job.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here -w burst-1 (local)" "$LAB/err"
lab_wait_job "$idb" COMPLETED 90
st=$?
# what the aws launch was at that moment: not answered yet
aws_done=$(grep -c 'launch of 1 node through aws:' "$LAB/log/agent.log")
gone=$(grep -c 'held; the client' "$aux/hold.log")
# the reconciler's rounds while the aws worker is held: aws's listing waits
# behind the launch, so each round is decided after ReconcileInterval
# without it (its provider as one whose listing failed), and the next skip
# aws until that listing is back; the local provider's are decided. The
# local job may be done before the first round that meets the held worker
# has waited its ReconcileInterval out (it took 2.5 s from its sbatch, the
# rounds come every 2 s): the rounds are counted until they are there, for
# at most 20 s, while the held RunInstances (60 s: two attempts of 30 s)
# is still unanswered, which is checked again once they are counted
rounds_seen() {
	overdue=$(grep -c 'reconcile: provider aws: its listing is not in after [0-9.]* s (ReconcileInterval; 2 calls queued or running on its worker): nothing is decided for it this round' "$LAB/log/agent.log")
	skipped=$(grep -c 'reconcile: provider aws: the listing of an earlier round is not in yet (2 calls queued or running on its worker): nothing is decided for it this round' "$LAB/log/agent.log")
	local_rounds=$(grep -c 'reconcile: round over [0-9]* instances\? of 1 provider and' "$LAB/log/agent.log")
	[ "$overdue" -ge 1 ] && [ "$skipped" -ge 1 ] && [ "$local_rounds" -ge 2 ]
}
for _ in $(seq 200); do rounds_seen && break; sleep 0.1; done
still_held=no
[ "$(grep -c 'launch of 1 node through aws:' "$LAB/log/agent.log")" = 0 ] &&
	[ "$(grep -c 'held; the client' "$aux/hold.log")" = 0 ] && still_held=yes
ok $st "the local job completed" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -q 'burst-1: booting -> admitted' "$LAB/log/agent.log"
ok $? "burst-1 joined and was admitted" "$LAB/log/agent.log"
[ "$aws_done" = 0 ] && [ "$gone" = 0 ]
ok $? "... while the aws RunInstances was still unanswered (outcomes recorded: $aws_done, calls given up: $gone)" \
	"$LAB/log/agent.log" "$aux/hold.log"
rounds_seen && [ "$still_held" = yes ]
ok $? "... and the reconciler's rounds went on without aws ($overdue decided without its listing, $skipped skipping it; $local_rounds rounds over the local provider alone; the aws RunInstances still unanswered then: $still_held)" "$LAB/log/agent.log" "$aux/hold.log"
grep 'launch of 1 node through local:' "$LAB/log/agent.log" | sed 's/^/# /'

# --- 3. the aws launch ends and its node boots ---
for _ in $(seq 1500); do grep -q 'burst-2: launching -> booting: i-' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q 'burst-2: launching -> booting: i-' "$LAB/log/agent.log"
ok $? "the aws launch ends: burst-2 is booting" "$LAB/log/agent.log" "$aux/hold.log"
grep 'launch of 1 node through aws:\|burst-2: ' "$LAB/log/agent.log" | sed 's/^/# /'
# the listing held behind it comes back after its round: dropped, and the
# next round lists aws again
for _ in $(seq 100); do grep -q 'reconcile: round over [0-9]* instances\? of 2 providers' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q 'reconcile: provider aws: a listing came in [0-9.]* s after it was sent, after its round was decided without it: dropped' "$LAB/log/agent.log" &&
	grep -q 'reconcile: round over [0-9]* instances\? of 2 providers' "$LAB/log/agent.log"
ok $? "the late aws listing was dropped, and a later round decided both providers again" "$LAB/log/agent.log"
scancel "$ida" 2>/dev/null

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

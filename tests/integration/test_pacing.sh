#!/usr/bin/env bash
# test_pacing.sh - the agent paces its launches to EC2's token buckets and
# spreads a node set over its regions when one region's bucket would delay
# it. The fault endpoint (ec2_faults.py) throttles as EC2 documents (the EC2
# API reference, "Request throttling for the Amazon EC2 API": a RunInstances
# bucket of instances, 1,000 then 2 a second, and one of requests, 5 then 2
# a second, per region; doc/aws.md "Rate limits"), here with small buckets
# so that the test runs in seconds: 4 instances then 2 a second, 3 requests
# then 1 a second, per region; the agent is given the same numbers
# (LaunchRate=4/2 RequestRate=launch:3/1).
#   paced: 12 nodes of one region resumed at once: every node launched, at
#          most one throttling answer per bucket (none expected), each
#          RunInstances within what the buckets held when it came, and the
#          last one near the bound (4 at once, then 8 more at 2 a second:
#          4 s; the requests bucket allows that too).
#   spill: 8 nodes of a node set of two regions (us-west-1 ranked first,
#          cheaper): 4 go to us-west-1 at once, and the 4 its bucket would
#          delay go to us-west-2 at once instead of waiting.
#   duo:   4 nodes of a node set of two providers of one cloud (awsp:
#          us-east-1, awsh: us-east-2): each node is launched by the
#          provider whose region it goes to, never by the other.
#   reload: 8 nodes of a slower region (2 then 1 every 2 s: 12 s), burst.conf
#           read again (SIGHUP) while 6 wait for tokens: no node is queued
#           twice (the agent's burst_launches_waiting never exceeds the
#           nodes not yet launched), none is requested twice.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
ps="$build/plugins/power_save"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"

aux=$(mktemp -d /tmp/test_pacing.XXXXXX)
fake_pid=
aux_down() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	rm -rf "$aux"
}
fake_up "$aux" || { aux_down; bail "the fault endpoint did not start"; }
fake_pid=$FAKE_PID fep=$FAKE_EP
curl -sf -X POST -d '{"buckets": {"RunInstances.instances": [4, 2], "RunInstances": [3, 1]}}' \
	"$fep/_buckets" >/dev/null || { aux_down; bail "the fault endpoint took no buckets"; }
umask 077
printf '[default]\naws_access_key_id = AKIDPACE\naws_secret_access_key = pace\n' >"$aux/creds"
umask 022
chmod 755 "$aux"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="ResumeProgram=\"$ps/burst-resume\"
SuspendProgram=\"$ps/burst-suspend\"
ResumeFailProgram=\"$ps/burst-resume-fail\"
ResumeRate=0
SuspendRate=0
ResumeTimeout=600
SuspendTime=3600"
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	# a port of this lab's range (a lab_pick_net slot holds port, port+1 and port+300 to +303)
	MPORT=$((LAB_PORT_CTLD + 302))
	! ss -Hltn | awk '{ print $4 }' | grep -Eq ":$MPORT\$" || { lab_log "port $MPORT in use"; return 1; }
	cat >"$LAB/etc/burst.conf" <<CONF
ClusterName=lab$$
MetricsListen=127.0.0.1:$MPORT
StateDir=$LAB/burst
CatalogDir="$src/share/catalog"
JoinPort=$jp
BootTimeout=3600
Provider=local Bridge=$LAB_BR Address=$LAB_NET.1/24
AllowInsecureEndpoint=yes
Provider=awsp Type=aws Regions=us-east-1 Endpoint=$fep CredentialsFile=$aux/creds ImageId=ami-pace JoinAddress=$LAB_NET.1:$jp LaunchRate=4/2 RequestRate=launch:3/1
Provider=awss Type=aws Regions=us-west-1,us-west-2 Endpoint=$fep CredentialsFile=$aux/creds ImageId=ami-pace JoinAddress=$LAB_NET.1:$jp LaunchRate=4/2 RequestRate=launch:3/1
Price=t3.micro Provider=awss Region=us-west-1 OnDemand=0.0100
Price=t3.micro Provider=awss Region=us-west-2 OnDemand=0.0120
NodeSet=paced Nodes=burst-[1-12] Partition=burst Providers=awsp InstanceTypes=t3.micro
Provider=awsh Type=aws Regions=us-east-2 Endpoint=$fep CredentialsFile=$aux/creds ImageId=ami-pace JoinAddress=$LAB_NET.1:$jp LaunchRate=2/0.5 RequestRate=launch:3/1
Price=t3.micro Provider=awsh Region=us-east-2 OnDemand=0.0100
NodeSet=spill Nodes=burst-[13-20] Partition=burst Providers=awss InstanceTypes=t3.micro
NodeSet=hup Nodes=burst-[21-28] Partition=burst Providers=awsh InstanceTypes=t3.micro
NodeSet=duo Nodes=burst-[29-32] Partition=burst Providers=awsp,awsh InstanceTypes=t3.micro
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
	"$burstctl" --config "$LAB/etc/burst.conf" slurm-conf --nodes-only \
		| sed 's/^\(PartitionName=.*\)$/\1 Default=YES/' >>"$LAB/etc/slurm.conf" || return 1
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
	"$agent" -c "$LAB/etc/burst.conf" -L "$LAB/log/agent.log" &
agent_pid=$!
lab_record burst-agent $agent_pid
for _ in $(seq 50); do [ -S "$LAB/burst/agent.sock" ] && break; sleep 0.1; done
[ -S "$LAB/burst/agent.sock" ]; ok $? "the agent is up" "$LAB/log/agent.log"

booting() {   # NODES...: how many of them the agent has launched
	local n=0 x
	for x in "$@"; do grep -q " $x: launching -> booting: i-" "$LAB/log/agent.log" && n=$((n + 1)); done
	echo $n
}
wait_booting() {   # SECONDS NODES...
	local s=$1 i
	shift
	for ((i = 0; i < s * 10; i++)); do
		[ "$(booting "$@")" -eq $# ] && return 0
		sleep 0.1
	done
	return 1
}
# check REGIONS PYTHON: the fake's RunInstances of those regions (comma
# separated) as r (region, t, n instances, throttled), t from the first
# one; prints the expression's value
check() {
	curl -s "$fep/_requests" >"$aux/reqs.json"
	python3 - "$aux/reqs.json" "$1" "$2" <<'PY'
import json, sys
regions = sys.argv[2].split(",")
rs = [(q["region"], q["t"], int(q["params"].get("MaxCount", "1")), q["throttled"])
      for q in json.load(open(sys.argv[1])) if q["action"] == "RunInstances" and q["region"] in regions]
t0 = rs[0][1] if rs else 0
r = [(g, t - t0, n, th) for g, t, n, th in rs]


def within(size, rate, calls=False):
    """every request took no more than the bucket (of instances, or of
    requests) held when it came"""
    have, last = float(size), 0.0
    for g, t, n, th in r:
        if th:
            continue
        k = 1 if calls else n
        have = min(float(size), have + (t - last) * rate)
        last = t
        if k > have + 1e-6:
            return False
        have -= k
    return True


print(eval(sys.argv[3]))
PY
}

# --- paced: 12 nodes of one region ---
nodes=$(for i in $(seq 1 12); do echo burst-$i; done)
scontrol update nodename="burst-[1-12]" state=power_up
# shellcheck disable=SC2086
wait_booting 60 $nodes
ok $? "paced: all 12 nodes launched ($(booting $nodes) of 12)" "$LAB/log/agent.log"
[ "$(check us-east-1 'sum(n for g, t, n, th in r if not th)')" = 12 ]
ok $? "paced: 12 instances requested in all" "$aux/reqs.json"
th=$(check us-east-1 'sum(1 for g, t, n, th in r if th)')
[ "$th" -le 2 ]
ok $? "paced: at most one throttling answer per bucket ($th for 2 buckets)" "$aux/reqs.json"
[ "$(check us-east-1 'within(4, 2) and within(3, 1, calls=True)')" = True ]
ok $? "paced: each RunInstances within what both buckets held: $(check us-east-1 '[(round(t, 2), n) for g, t, n, th in r]')" "$aux/reqs.json"
last=$(check us-east-1 'round(max(t for g, t, n, th in r), 2)')
# the bound: 4 at once, 8 more at 2 a second: 4 s after the first; the
# agent sends at its ticks (250 ms) and reads the buckets 250 ms early
# (a request may reach EC2 sooner after the one before it than it left)
[ "$(check us-east-1 '3.9 <= max(t for g, t, n, th in r) <= 4.0 + 1.5')" = True ]
ok $? "paced: the last RunInstances $last s after the first (the bound: 4 s)" "$aux/reqs.json"
[ "$(check us-east-1 'len(r) >= 3')" = True ]
ok $? "paced: sent in several requests as tokens came, not at once ($(check us-east-1 'len(r)') requests)" "$aux/reqs.json"

# --- spill: 8 nodes of a node set of two regions ---
nodes=$(for i in $(seq 13 20); do echo burst-$i; done)
scontrol update nodename="burst-[13-20]" state=power_up
# shellcheck disable=SC2086
wait_booting 60 $nodes
ok $? "spill: all 8 nodes launched ($(booting $nodes) of 8)" "$LAB/log/agent.log"
[ "$(check us-west-1,us-west-2 'sorted((g, sum(n for g2, t, n, th in r if g2 == g and not th)) for g in set(x[0] for x in r))')" = \
  "[('us-west-1', 4), ('us-west-2', 4)]" ]
ok $? "spill: 4 in us-west-1 (ranked first), the 4 its bucket would delay in us-west-2" "$aux/reqs.json"
[ "$(check us-west-1,us-west-2 'max(t for g, t, n, th in r) < 1.0 and not any(th for g, t, n, th in r)')" = True ]
ok $? "spill: all requested at once ($(check us-west-1,us-west-2 '[(g, round(t, 2), n) for g, t, n, th in r]')), none throttled" "$aux/reqs.json"
grep -q "burst-13: requested -> launching: attempt 1 as awss/t3.micro@us-west-1" "$LAB/log/agent.log" &&
	[ "$(grep -c 'requested -> launching: attempt 1 as awss/t3.micro@us-west-2' "$LAB/log/agent.log")" -eq 4 ]
ok $? "spill: the agent's log names each node's region" "$LAB/log/agent.log"

# --- reload: burst.conf read again while launches wait for tokens ---
nodes=$(for i in $(seq 21 28); do echo burst-$i; done)
waiting() { curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '$1 == "burst_launches_waiting" { print $2 + 0 }'; }
scontrol update nodename="burst-[21-28]" state=power_up
# shellcheck disable=SC2086
for _ in $(seq 100); do [ "$(booting $nodes)" -ge 2 ] && break; sleep 0.1; done
kill -HUP "$agent_pid"
for _ in $(seq 50); do grep -q "SIGHUP: .* read again" "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q "SIGHUP: .* read again" "$LAB/log/agent.log"
ok $? "reload: burst.conf read again while the launches wait ($(booting $nodes) of 8 launched)" "$LAB/log/agent.log"
# until all are launched (the queue is rescanned every 5 s): the nodes
# launched are read before the gauge, so at the gauge's reading at most
# 8 - launched still wait; a node queued twice counts twice
bad='' seen=0
for _ in $(seq 200); do
	# shellcheck disable=SC2086
	b=$(booting $nodes)
	w=$(waiting)
	[ -n "$w" ] || { bad="$bad no-gauge"; break; }
	[ "$w" -gt "$seen" ] && seen=$w
	[ "$w" -le $((8 - b)) ] || bad="$bad $w-waiting-with-$b-launched"
	[ "$b" -eq 8 ] && break
	sleep 0.3
done
[ -z "$bad" ] && [ "$seen" -gt 0 ]
ok $? "reload: no launch queued twice (most waiting seen: $seen;${bad:- no excess})" "$LAB/log/agent.log"
# shellcheck disable=SC2086
wait_booting 30 $nodes
ok $? "reload: all 8 nodes launched ($(booting $nodes) of 8)" "$LAB/log/agent.log"
twice=$(for x in $nodes; do grep -c " $x: launching -> booting: i-" "$LAB/log/agent.log"; done | grep -vcx 1)
[ "$(check us-east-2 'sum(n for g, t, n, th in r if not th)')" = 8 ] && [ "$twice" -eq 0 ]
ok $? "reload: 8 instances requested in all, none twice ($(check us-east-2 '[(round(t, 2), n) for g, t, n, th in r]'))" "$aux/reqs.json"

# --- duo: a node set of two providers of one cloud ---
nodes=$(for i in $(seq 29 32); do echo burst-$i; done)
scontrol update nodename="burst-[29-32]" state=power_up
# shellcheck disable=SC2086
wait_booting 60 $nodes
ok $? "duo: all 4 nodes launched ($(booting $nodes) of 4)" "$LAB/log/agent.log"
grep -o 'burst-\(29\|3[0-2]\): requested -> launching: attempt 1 as [a-z]*/t3.micro@[a-z0-9-]*' "$LAB/log/agent.log" |
	sed 's/^/# /'
right=$(grep -c 'burst-\(29\|3[0-2]\): requested -> launching: attempt 1 as \(awsp/t3.micro@us-east-1\|awsh/t3.micro@us-east-2\)' "$LAB/log/agent.log")
wrong=$(grep -c 'burst-\(29\|3[0-2]\): requested -> launching: attempt 1 as \(awsp/t3.micro@us-east-2\|awsh/t3.micro@us-east-1\)' "$LAB/log/agent.log")
[ "$right" -eq 4 ] && [ "$wrong" -eq 0 ]
ok $? "duo: each node launched by the provider of its region ($right so, $wrong by the other)" "$LAB/log/agent.log"

done_testing

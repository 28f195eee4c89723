#!/usr/bin/env bash
# test_early_launch.sh - launch at allocation (issue 17; doc/compat.md,
# "Launch at allocation"): with EarlyLaunch=yes burst-prolog-slurmctld
# hands a job's powered-down burst nodes to the agent through its spool
# when the job is allocated, and the agent launches them before slurmctld's
# power-save pass runs ResumeProgram.
#
# slurmctld's power-save pass runs here at most every 20 s
# (power_save_min_interval=20), so that what comes before it is certain:
# - burst-1: launched at allocation; the job runs on it (no ResumeProgram
#   needed), one instance;
# - burst-2 (node set "slow": its acceptance test takes 25 s, longer than
#   the pass's interval): ResumeProgram comes while the instance boots and
#   is recognised as served - no second launch, no state regression;
# - burst-3 (slow too): the job is cancelled before the pass; the agent
#   reclaims the instance: none is left, the node is powered down, not DOWN,
#   and ResumeProgram never runs for it;
# - burst-4: the agent is down when the job is allocated; the prolog's
#   request waits in the spool and is served when the agent is back.
# - burst-3 again: cancelled and given to another job at once: the new job
#   adopts the instance, or has the node launched again once it is gone;
# A site PrologSlurmctld (burst.conf PrologSlurmctld=) runs for every job.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 120 5 300)
lab_pre_ctld() {
	cat >"$LAB/etc/slow-join" <<'SH'
#!/bin/sh
sleep 25
echo slow-join-done
SH
	chmod 755 "$LAB/etc/slow-join"
	echo "Test=slow-join Kind=hardware Command=$LAB/etc/slow-join Sanity=^slow-join-done Timeout=60" \
		>"$LAB/etc/slow.conf"
	cat >"$LAB/etc/site-prolog" <<SH
#!/bin/sh
echo "\$SLURM_JOB_ID" >>"$LAB/site-prolog.ran"
SH
	chmod 755 "$LAB/etc/site-prolog"
	lab_burst_conf <<CONF || return 1
EarlyLaunch=yes
PrologSlurmctld=$LAB/etc/site-prolog
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=fast Nodes=burst-1,burst-4 Partition=burst InstanceTypes=local.host
NodeSet=slow Nodes=burst-[2-3] Partition=burst InstanceTypes=local.host Acceptance=$LAB/etc/slow.conf
CONF
	sed -i 's/^\(SlurmctldParameters=.*\)$/\1,power_save_min_interval=20/' "$LAB/etc/slurm.conf"
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log $LAB/log/slurmctld.log"
lab_agent_start; ok $? "the agent is up"

log="$LAB/log/agent.log"
count() { grep -c -- "$1" "$log"; }
instance() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "burst-lab$$-$1"; }
wait_log() {   # PATTERN SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q -- "$1" "$log" && return 0
		sleep 0.1
	done
	return 1
}
submit() {   # NODE: a job pinned to NODE
	sbatch --parsable --cloud-contract=here -w "$1" -o "$LAB/$1.out" --wrap 'echo $CLOUD_INSTANCE_ID' 2>"$LAB/err"
}

# ---- burst-1: launched at allocation, the job runs, ResumeProgram is not needed
a=$(submit burst-1); ok $? "job A on burst-1" "$LAB/err"
lab_wait_job "$a" "RUNNING|COMPLETING|COMPLETED" 30; ok $? "job A runs" "$log"
grep -q "burst-1: powered_down -> requested: [^ ]*-early.json: launch at job $a's allocation" "$log"
ok $? "burst-1 was launched from the prolog's early request for job A"
lab_wait_job "$a" COMPLETED 30; ok $? "job A completes"
[ "$(count 'burst-1: requested -> launching')" = 1 ] && [ "$(count 'burst-1: launching -> booting')" = 1 ]
ok $? "one launch, one instance for burst-1"
wait_log "burst-1: .*launched at job $a's allocation: its slurmd registered; Slurm has it now" 5
ok $? "once burst-1's slurmd has registered the agent leaves the node to Slurm"
[ "$(lab_node_state burst-1)" = idle ]; ok $? "burst-1 stays up after job A (Slurm suspends it after SuspendTime): $(lab_node_state burst-1)"
! grep -q "burst-1: resume" "$log"; ok $? "ResumeProgram never ran for burst-1 (it registered first)"
grep -q "burst-node: burst-1: slurmd starts .*clock" "$LAB/burst/nodes/burst-1/node.log"
ok $? "burst-1's slurmd started in the safe window of a second: $(grep -o 'slurmd starts.*' "$LAB/burst/nodes/burst-1/node.log" | head -1)"
! lab_relaunched burst-1; ok $? "slurmctld took burst-1's registration (no relaunch)"

# ---- burst-2: ResumeProgram comes while the early instance boots: served
b=$(submit burst-2); ok $? "job B on burst-2 (its join takes 25 s)" "$LAB/err"
wait_log "burst-2: powered_down -> requested: [^ ]*-early.json: launch at job $b's allocation" 10
ok $? "burst-2 launched at job B's allocation"
# the provider's address is slurmctld's NodeAddr while the instance boots,
# before its report is answered (its join takes 25 s)
wait_log "burst-2: launching -> booting" 10
ok $? "burst-2's instance started"
b2addr=$(ip -n "burst-lab$$-burst-2" -4 -o addr show dev eth0 2>/dev/null | awk '{sub("/.*", "", $4); print $4}')
for ((i = 0; i < 50; i++)); do
	b2slurm=$(scontrol show node burst-2 2>/dev/null | sed -n 's/^.* NodeAddr=\([^ ]*\) .*$/\1/p')
	[ -n "$b2addr" ] && [ "$b2slurm" = "$b2addr" ] && break
	sleep 0.1
done
[ -n "$b2addr" ] && [ "$b2slurm" = "$b2addr" ] && ! grep -q "burst-2: booting -> admitted" "$log"
ok $? "slurmctld has burst-2's address ($b2addr) while it boots, before its admission: NodeAddr=$b2slurm"
wait_log "burst-2: .*resume: served by the launch at job $b's allocation" 30
ok $? "ResumeProgram for burst-2 came (the power-save pass) and was recognised as served"
st=$(sed -n "s/^.*burst-2: \([a-z_]*\) -> \1: resume: served.*$/\1/p" "$log" | head -1)
[ "$st" = booting ] || [ "$st" = launching ]
ok $? "... while burst-2 was $st: no state regression"
lab_wait_job "$b" COMPLETED 90; ok $? "job B completes" "$log"
[ "$(count 'burst-2: requested -> launching')" = 1 ] && [ "$(count 'burst-2: launching -> booting')" = 1 ]
ok $? "one launch, one instance for burst-2 (the resume request did not launch again)"
! lab_relaunched burst-2; ok $? "slurmctld took burst-2's registration (no relaunch)"

# ---- burst-3: cancelled between the prolog and the power-save pass
c=$(submit burst-3); ok $? "job C on burst-3" "$LAB/err"
wait_log "burst-3: powered_down -> requested: [^ ]*-early.json: launch at job $c's allocation" 10
ok $? "burst-3 launched at job C's allocation"
scancel "$c"; ok $? "job C cancelled before the power-save pass"
wait_log "burst-3: .*launched at job $c's allocation; the job left it before Slurm resumed it: instance reclaimed" 15
ok $? "the agent reclaims burst-3's instance"
wait_log "burst-3: terminating -> powered_down" 30; ok $? "burst-3's instance is terminated"
! instance burst-3; ok $? "no instance of burst-3 is left"
# past the next power-save pass: Slurm has nothing to do for it
sleep 22
! grep -q "burst-3: resume" "$log"; ok $? "ResumeProgram never ran for burst-3"
[ "$(lab_node_state burst-3)" = 'idle~' ]; ok $? "burst-3 is powered down in Slurm (idle~), not DOWN: $(lab_node_state burst-3)"
! instance burst-3; ok $? "... and still no instance of it"
[ "$("$burstctl" --config "$LAB/etc/burst.conf" --json nodes burst-3 |
	python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')" = powered_down ]
ok $? "the agent has burst-3 powered down"

# ---- burst-3 again: cancelled, and at once given to another job. The new
# job's request finds the instance still there and adopts it, or finds it
# being reclaimed and has the node launched again afterwards, or finds it
# reclaimed already and launches it anew; whichever, the new job runs and
# nothing is left over.
c2=$(submit burst-3); ok $? "job C2 on burst-3" "$LAB/err"
wait_log "burst-3: powered_down -> requested: [^ ]*-early.json: launch at job $c2's allocation" 10
ok $? "burst-3 launched at job C2's allocation"
scancel "$c2" && e=$(submit burst-3); ok $? "job C2 cancelled and job E submitted on burst-3 at once" "$LAB/err"
wait_log "burst-3: .*\(launched at job $c2's allocation: adopted by job $e\|job $e allocated it: launched again after termination\|powered_down -> requested: [^ ]*-early.json: launch at job $e's allocation\)" 20
ok $? "job E adopts burst-3's instance or has it launched (again): $(grep -o "burst-3: .*\(adopted by job $e\|job $e allocated it.*\|launch at job $e's allocation\)" "$log" | head -1)"
lab_wait_job "$e" COMPLETED 90; ok $? "job E completes on burst-3" "$log"
n3=$(count 'burst-3: requested -> launching')
if grep -q "adopted by job $e" "$log"; then want=2; else want=3; fi
[ "$n3" = "$want" ]; ok $? "burst-3 launched $n3 times in all for C, C2 and E (want $want: no launch more than the path needs)"
[ "$(ip netns list 2>/dev/null | awk '{print $1}' | grep -cx "burst-lab$$-burst-3")" -le 1 ]
ok $? "at most one instance of burst-3 (E's)"

# ---- burst-4: the agent is down when the job is allocated
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
! lab_pid_alive "$AGENT_PID"; ok $? "the agent is stopped"
d=$(submit burst-4); ok $? "job D on burst-4 while the agent is down" "$LAB/err"
for ((i = 0; i < 100; i++)); do
	ls "$LAB/burst/spool/"*-early.json >/dev/null 2>&1 && break
	sleep 0.1
done
ls "$LAB/burst/spool/"*-early.json >/dev/null 2>&1; ok $? "the prolog's request for burst-4 waits in the spool"
sleep 1
lab_agent_start; ok $? "the agent is back"
wait_log "burst-4: powered_down -> requested: [^ ]*-early.json: launch at job $d's allocation" 10
ok $? "the spooled request is served: burst-4 launched for job D"
lab_wait_job "$d" COMPLETED 60; ok $? "job D completes" "$log"
[ "$(count 'burst-4: requested -> launching')" = 1 ]; ok $? "one launch for burst-4"

# ---- the site's own PrologSlurmctld ran for every job
miss=
for j in "$a" "$b" "$c" "$c2" "$e" "$d"; do
	grep -qx "$j" "$LAB/site-prolog.ran" || miss="$miss $j"
done
[ -z "$miss" ]
ok $? "the site's PrologSlurmctld ran for jobs A, B, C, C2, E and D (not for:${miss:- none})" "$LAB/site-prolog.ran"
bad= states=
for n in burst-1 burst-2 burst-3 burst-4; do
	s=$(lab_node_state $n)
	states="$states $n=$s"
	case $s in down*|drain*) bad="$bad $n" ;; esac
done
[ -z "$bad" ]
ok $? "no node is DOWN or drained:$states"
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

lab_down
done_testing

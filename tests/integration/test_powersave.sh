#!/usr/bin/env bash
# test_powersave.sh - burst-resume, burst-suspend and burst-resume-fail as
# slurmctld runs them: requests are spooled durably (the agent need not be
# up), the programs exit at once even with stdio closed, both layouts of
# SLURM_RESUME_FILE are read, and a running agent is poked.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
ps="$build/plugins/power_save"
[ -x "$ps/burst-resume" ] || bail "no $ps/burst-resume (build first)"

SLURM_CONF_EXTRA="ResumeProgram=\"$ps/burst-resume\"
SuspendProgram=\"$ps/burst-suspend\"
ResumeFailProgram=\"$ps/burst-resume-fail\"
ResumeTimeout=5
SuspendTimeout=5
SuspendTime=10"
lab_pre_ctld() {
	# burst.conf beside slurm.conf: the programs find it from SLURM_CONF
	cat >"$LAB/etc/burst.conf" <<CONF
StateDir=$LAB/burst
Provider=local
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
spool="$LAB/burst/spool"

# field FILE EXPR: a value from a spooled request
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
newest() { ls "$spool"/*-"$1".json 2>/dev/null | tail -1; }

# --- slurmctld wakes a node for a job: the request is spooled ---
id=$(sbatch --parsable -N1 --wrap 'sleep 1' 2>"$LAB/err")
ok $? "a job for a powered-down CLOUD node is submitted" "$LAB/err"
for i in $(seq 50); do [ -n "$(newest resume)" ] && break; sleep 0.1; done
f=$(newest resume)
[ -n "$f" ]; ok $? "slurmctld ran burst-resume and the request is in the spool" "$LAB/log/slurmctld.log"
if [ -n "$f" ]; then
	[ "$(field "$f" 'd["op"]')" = resume ]; ok $? "... op resume"
	[ "$(field "$f" 'd["nodes"]')" = burst-1 ]; ok $? "... for the allocated node"
	[ "$(field "$f" 'd["jobs"][0]["job_id"]')" = "$id" ]
	ok $? "... with the job from SLURM_RESUME_FILE" "$f"
	[ "$(stat -c %a "$spool")" = 700 ]; ok $? "the spool directory is private (0700)"
fi
# no agent: after ResumeTimeout slurmctld runs ResumeFailProgram, which is spooled too
for i in $(seq 120); do [ -n "$(newest resume-fail)" ] && break; sleep 0.1; done
f=$(newest resume-fail)
[ -n "$f" ] && [ "$(field "$f" 'd["nodes"]')" = burst-1 ]
ok $? "on ResumeTimeout burst-resume-fail is run and spooled (no instance may leak)" "$LAB/log/slurmctld.log"
scancel "$id" 2>/dev/null

# --- as slurmctld runs it: no PATH, fds 0-2 closed, signals blocked ---
cat >"$LAB/rf-22.json" <<'JSON'
{"jobs":[{"job_id":41,"nodes":"burst-[2-3]"}],"all_nodes":"burst-[2-3]"}
JSON
cat >"$LAB/rf-23.json" <<'JSON'
{"all_nodes_resume":"burst-4","jobs":[{"extra":null,"features":"gpu","job_id":42,"nodes_alloc":"burst-[3-4]","nodes_resume":"burst-4","partition":"burst"}]}
JSON
t0=$(date +%s%N)
( exec 0<&- 1>&- 2>&-; env -i SLURM_CONF="$SLURM_CONF" SLURM_RESUME_FILE="$LAB/rf-22.json" "$ps/burst-resume" 'burst-[2-3]' )
rc=$?
t1=$(date +%s%N)
ok $rc "burst-resume succeeds with stdin, stdout and stderr closed and no PATH"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -lt 1000 ]; ok $? "... and exits within a second (${ms} ms)"
f=$(newest resume)
[ "$(field "$f" 'd["jobs"]')" = "[{'job_id': 41, 'nodes': 'burst-[2-3]'}]" ] && [ "$(field "$f" 'd["count"]')" = 2 ]
ok $? "the 22.05 resume file (jobs/nodes) is read" "$f"
env -i SLURM_CONF="$SLURM_CONF" SLURM_RESUME_FILE="$LAB/rf-23.json" "$ps/burst-resume" burst-4 2>"$LAB/err"
f=$(newest resume)
[ "$(field "$f" 'd["jobs"]')" = "[{'job_id': 42, 'nodes': 'burst-4'}]" ]
ok $? "the 23.02 resume file (nodes_resume) is read" "$f" "$LAB/err"
echo 'not json' >"$LAB/rf-bad.json"
env -i SLURM_CONF="$SLURM_CONF" SLURM_RESUME_FILE="$LAB/rf-bad.json" "$ps/burst-resume" burst-4 2>"$LAB/err"
rc=$?
f=$(newest resume)
[ $rc -eq 0 ] && [ "$(field "$f" 'd["jobs"]')" = "[]" ] && grep -q "is not a JSON object" "$LAB/err"
ok $? "a broken resume file is a warning; the nodes are still resumed" "$LAB/err"
field "$f" 'd["diagnostics"][0]' | grep -q "^warning: SLURM_RESUME_FILE $LAB/rf-bad.json: the resume file is not a JSON object"
ok $? "... and the warning travels in the request, for the agent's log" "$f"
env -i SLURM_CONF="$SLURM_CONF" "$ps/burst-suspend" 'burst-[1-4]' 2>"$LAB/err"
f=$(newest suspend)
[ "$(field "$f" 'd["op"]')" = suspend ] && [ "$(field "$f" 'd["count"]')" = 4 ]
ok $? "burst-suspend spools its hostlist" "$LAB/err"
"$ps/burst-suspend" 'burst-[1-' 2>"$LAB/err"
[ $? -eq 2 ] && grep -q "bad host list 'burst-\[1-'" "$LAB/err"
ok $? "a bad host list is refused with a message" "$LAB/err"

# --- arrival order is name order ---
ls "$spool" | grep -v '^\.' >"$LAB/names"
sort -c "$LAB/names" 2>/dev/null && [ "$(wc -l <"$LAB/names")" -ge 5 ]
ok $? "spool files sort in arrival order" "$LAB/names"
! ls -a "$spool" | grep -q '^\.tmp-'
ok $? "no temporary file is left behind"

# --- a running agent is poked ---
python3 - "$LAB/burst/agent.sock" "$LAB/poked" <<'PY' &
import socket, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(10)
c, _ = s.accept(); c.settimeout(5)
open(sys.argv[2], "wb").write(c.recv(100))
PY
listener=$!
for i in $(seq 50); do [ -S "$LAB/burst/agent.sock" ] && break; sleep 0.1; done
env -i SLURM_CONF="$SLURM_CONF" "$ps/burst-resume" burst-2
wait $listener
grep -q '"op":"poke"' "$LAB/poked" 2>/dev/null
ok $? "a listening agent is poked"

# --- burst.conf broken: the request still is not lost ---
echo "Frobnicate=1" >"$LAB/broken.conf"
before=$(ls /var/lib/slurm-burst/spool 2>/dev/null | wc -l)
env -i SLURM_CONF="$SLURM_CONF" BURST_CONF="$LAB/broken.conf" "$ps/burst-resume" burst-3 2>"$LAB/err"
rc=$?
new=$(ls -t /var/lib/slurm-burst/spool/*-resume.json 2>/dev/null | head -1)
[ $rc -eq 0 ] && [ -n "$new" ] && [ "$(field "$new" 'd["nodes"]')" = burst-3 ] &&
	grep -q "error: $LAB/broken.conf:1: unknown key 'Frobnicate'" "$LAB/err"
ok $? "with a broken burst.conf the request goes to the default spool, with the error" "$LAB/err"
[ -n "$new" ] && rm -f "$new"

lab_down
done_testing

#!/usr/bin/env bash
# test_slurmctld_hang.sh - a slurmctld that does not answer holds up nothing
# of the agent's but its own calls to it (issue 13, item 3: "Slurm RPCs
# are bounded in time"). The agent asks slurmctld every second for the jobs
# the prolog held, and for nodes, jobs and contracts as it goes; those calls
# run on its Slurm worker, not on the poll loop. slurmctld is stopped
# (SIGSTOP) for three times MessageTimeout; meanwhile requests on the
# control socket (a spool poke) and reports on the join port are answered
# within a second or two each, every half second, while the worker waits for
# slurmctld. Before, the loop itself waited in slurm_load_jobs for up to
# MessageTimeout each second and nothing was answered meanwhile. Once
# slurmctld goes on, a job bursts a node, which joins and runs it.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
[ -x "$build/burst-agent/burst-agent" ] || bail "no $build/burst-agent/burst-agent (build first)"

MSG_TIMEOUT=4 STOP_S=12 BOUND_S=2
SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="$(lab_burst_slurm_conf 120 5 60)
MessageTimeout=$MSG_TIMEOUT"
lab_pre_ctld() {
	lab_burst_conf <<CONF
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
ctld=$(cat "$LAB/pid/slurmctld.pid")
# a stopped slurmctld is let go on before the lab is torn down
trap 'kill -CONT "$ctld" 2>/dev/null; lab_down' EXIT
trap 'kill -CONT "$ctld" 2>/dev/null; lab_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"
jaddr=$LAB_NET.1 jport=$((LAB_PORT_CTLD + 300))

# PROBE: for S seconds, every half second, a poke on the control socket and
# a report on the join port (not a node's: refused, and answered), each
# timed from its connect to its answer; prints the count and the slowest
cat >"$LAB/probe.py" <<'PY'
import json, socket, sys, time
sock, host, port, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def ask(connect, req, want):
    t = time.monotonic()
    s = connect()
    s.settimeout(60)
    s.sendall(req)
    got = s.recv(300).decode()
    s.close()
    return time.monotonic() - t, want in got
n, worst_ctl, worst_join, bad = 0, 0.0, 0.0, 0
end = time.monotonic() + secs
while time.monotonic() < end:
    def unix():
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        return s
    d, good = ask(unix, b'{"op":"poke"}\n', '"ok":true')
    worst_ctl, bad = max(worst_ctl, d), bad + (not good)
    d, good = ask(lambda: socket.create_connection((host, port), timeout=60), b'{"op":"join"}\n', "malformed report")
    worst_join, bad = max(worst_join, d), bad + (not good)
    n += 1
    time.sleep(0.5)
print(json.dumps({"probes": n, "worst_control_s": round(worst_ctl, 3), "worst_join_s": round(worst_join, 3), "wrong": bad}))
PY

kill -STOP "$ctld"; ok $? "slurmctld is stopped (SIGSTOP) for $STOP_S s, MessageTimeout=$MSG_TIMEOUT"
python3 "$LAB/probe.py" "$LAB/burst/agent.sock" "$jaddr" "$jport" "$STOP_S" >"$LAB/probe.json" 2>&1
prc=$?
kill -CONT "$ctld"
echo "# $(cat "$LAB/probe.json")"
ok $prc "the probes ran" "$LAB/probe.json"
read -r n wc wj bad < <(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["probes"], d["worst_control_s"], d["worst_join_s"], d["wrong"])' "$LAB/probe.json" 2>/dev/null)
[ "${n:-0}" -ge 10 ] && [ "${bad:-1}" = 0 ]
ok $? "while slurmctld was stopped: ${n:-0} pokes and ${n:-0} join reports, each answered as it should be" "$LAB/probe.json"
python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[3]))' "${wc:-99}" "$wj" "$BOUND_S"
ok $? "... each poke within $BOUND_S s (the slowest: ${wc:-?} s)" "$LAB/probe.json"
python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "${wj:-99}" "$BOUND_S"
ok $? "... each join report within $BOUND_S s (the slowest: ${wj:-?} s)" "$LAB/probe.json"
grep -q 'slurmctld took [0-9.]* s to answer (load_jobs); the agent went on meanwhile' "$LAB/log/agent.log"
ok $? "meanwhile the agent's own call to slurmctld waited (its worker, not its loop)"
grep 'slurmctld took' "$LAB/log/agent.log" | sed 's/^/# /'

# slurmctld back: the Slurm path works again, a burst end to end
id=$(sbatch --parsable --cloud-contract=here -w burst-1 -o "$LAB/job.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch -w burst-1 once slurmctld goes on" "$LAB/err"
lab_wait_job "$id" COMPLETED 90
ok $? "the job completed on a node that joined (its address told to slurmctld by the worker)" \
	"$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -q 'burst-1: booting -> admitted' "$LAB/log/agent.log"
ok $? "burst-1 was admitted" "$LAB/log/agent.log"
lab_pid_alive "$AGENT_PID"; ok $? "the agent still runs"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

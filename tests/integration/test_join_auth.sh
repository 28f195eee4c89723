#!/usr/bin/env bash
# test_join_auth.sh - a node believes only its agent, and an agent whose
# ports another user took says who and goes on. While the agent is stopped
# (a restart, an upgrade), an ordinary user (uid 65534) binds its join port
# and answers whatever a node sends with a forged admission
# ({"admit": true, "record": {"CLOUD_INSTANCE_ID": "forged-by-uid-65534"}})
# or, to a node's hello, with a munge credential of its own (uid 65534's)
# over the very hello: burst-node refuses both, says why in its log, writes
# no admission record and starts no slurmd, and sends the squatter nothing
# but hellos (no munge credential, no provenance record). The agent,
# started while that user still holds the port (and another holds the
# metrics port), says which process holds each (pid, uid, command), keeps
# trying, and goes on meanwhile (it takes a resume request and launches a
# node); once the join port is free it listens there and the nodes join and
# run their jobs, metrics still taken; once the metrics port is free it
# serves metrics.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"
command -v setpriv >/dev/null || bail "no setpriv (util-linux)"
# a python3 that another user may run (not one under root's home)
SQPY=/usr/bin/python3
[ -x "$SQPY" ] || bail "no $SQPY"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 240 5 60 | grep -v "^PrologSlurmctld=")
lab_pre_ctld() {
	MPORT=$((LAB_PORT_CTLD + 302))
	! ss -Hltn | awk '{ print $4 }' | grep -Eq ":$MPORT\$" || { lab_log "port $MPORT in use"; return 1; }
	lab_burst_conf <<CONF || return 1
MetricsListen=127.0.0.1:$MPORT
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
	# the instance's burst-node: records its arguments, then waits for a go
	cat >"$LAB/etc/burst-node-held" <<HELD
#!/bin/sh
case "\$*" in
*"--node burst-2 "*) s=-2 ;;   # burst-2: its own file
*) s= ;;
esac
echo "\$@" >"$LAB/join-args\$s"
while [ ! -e "$LAB/join-go" ]; do sleep 0.1; done
exec "$(lab_node_image)" "\$@"
HELD
	chmod 755 "$LAB/etc/burst-node-held"
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log $LAB/burst/nodes/burst-1/node.log"

# the squatter: an ordinary user's program on the agent's port. "join":
# every other connection answers each line with a forged admission; the
# others answer a hello with the user's own munge credential over what the
# agent would sign, then anything else with the forged admission. Every
# byte it receives goes to GOT. "listen": only holds the port.
cat >"$LAB/squat.py" <<'PY'
import json, socket, subprocess, sys
mode, addr, got = sys.argv[1], sys.argv[2], sys.argv[3]
host, port = addr.rsplit(":", 1)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((host, int(port)))
s.listen(16)
print("listening", flush=True)
forged = {"admit": True, "record": {"CLOUD_INSTANCE_ID": "forged-by-uid-65534", "CLOUD_NODE": "burst-1",
                                    "CLOUD_PROVENANCE_ID": "0" * 64, "CLOUD_NODESET": "local"}}
n = 0
while True:
    c, _ = s.accept()
    if mode == "listen":
        c.close()
        continue
    n += 1
    c.settimeout(10)
    buf = b""
    try:
        while True:
            data = c.recv(65536)
            if not data:
                break
            with open(got, "ab") as f:
                f.write(data)
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    req = json.loads(line)
                except ValueError:
                    req = {}
                if n % 2 == 0 and req.get("op") == "hello":
                    pay = json.dumps({"what": "burst-agent-hello", "v": 1, "node": req.get("node"),
                                      "instance": req.get("instance"), "nonce": req.get("nonce")})
                    cred = subprocess.run(["munge", "-S", sys.argv[4], "-s", pay], capture_output=True,
                                          text=True).stdout.strip()
                    ans = {"hello": "burst-agent", "v": 1, "cred": cred}
                else:
                    ans = forged
                c.sendall((json.dumps(ans) + "\n").encode())
    except OSError:
        pass
    c.close()
PY
chmod 644 "$LAB/squat.py"
squat() {   # MODE ADDR:PORT GOT: the squatter as uid 65534, in the background (SQUAT_PID)
	install -o 65534 -g 65534 -m 644 /dev/null "$3" || return 1
	: >"$3.log"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SQPY" "$LAB/squat.py" "$1" "$2" "$3" "$LAB/munge/munge.sock" \
		>"$3.log" 2>&1 &
	SQUAT_PID=$!
	lab_record node "$SQUAT_PID"
	for ((i = 0; i < 50; i++)); do grep -q '^listening' "$3.log" && return 0; sleep 0.1; done
	return 1
}
node_log="$LAB/burst/nodes/burst-1/node.log"

lab_agent_start "$LAB/etc/burst-node-held"
curl -sf "http://127.0.0.1:$MPORT/metrics" | grep -q '^burst_joins_total{outcome="admitted"} 0$'
ok $? "the agent serves metrics on 127.0.0.1:$MPORT"

id=$(sbatch --parsable --cloud-contract=here -w burst-1 -o "$LAB/job.out" --wrap 'echo "$CLOUD_INSTANCE_ID"' 2>"$LAB/err")
ok $? "a job for burst-1 is submitted" "$LAB/err"
lab_wait_file "$LAB/join-args" 30; ok $? "burst-1's instance starts and is about to report"
read -r -a args <"$LAB/join-args"
arg() { local i; for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "$1" ] && echo "${args[$((i + 1))]}"; done; }
jaddr=$(arg --agent) record=$(arg --record) instance=$(arg --instance)
[ "$instance" = "local-lab$$-burst-1-1" ] && [ -n "$jaddr" ] && [ -n "$record" ]
ok $? "its join: agent $jaddr, instance $instance, admission record $record"

# --- the agent stops; uid 65534 takes its ports ---
kill "$AGENT_PID" && wait "$AGENT_PID" 2>/dev/null
! lab_pid_alive "$AGENT_PID"; ok $? "the agent stops"
squat join "$jaddr" "$LAB/squat-join.got"; ok $? "uid 65534 listens on the join port $jaddr" "$LAB/squat-join.got.log"
SQ=$SQUAT_PID
squat listen "127.0.0.1:$MPORT" "$LAB/squat-metrics.got"; ok $? "uid 65534 listens on the metrics port $MPORT" "$LAB/squat-metrics.got.log"
MSQ=$SQUAT_PID

touch "$LAB/join-go"
says() { grep -qF -- "$1" "$node_log" 2>/dev/null; }
for ((i = 0; i < 300; i++)); do
	says "uid 65534's, not root's" && says '"forged-by-uid-65534"' && break
	sleep 0.1
done
says "burst-1: NOT BELIEVED: the peer on $jaddr did not prove it is the agent: no signed answer to the hello; the peer said: {\"admit\": true, \"record\": {\"CLOUD_INSTANCE_ID\": \"forged-by-uid-65534\""
ok $? "the node does not believe the forged admission, and says why" "$node_log"
says "burst-1: NOT BELIEVED: the peer on $jaddr did not prove it is the agent: its answer to the hello is not the agent's: its credential is uid 65534's, not root's"
ok $? "... nor a hello answered with uid 65534's munge credential" "$node_log"
grep -q "the report (credential and provenance record) is not sent to it (asking again, [0-9]* s left)" "$node_log"
ok $? "... it sends the squatter no report and asks again" "$node_log"
[ ! -e "$record" ]; ok $? "no admission record is written"
slurmd_in() { local p; for p in $(ip netns pids "burst-lab$$-burst-1" 2>/dev/null); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmd ] && return 0; done; return 1; }
! slurmd_in && ! grep -q 'slurmd starts' "$node_log"; ok $? "no slurmd is started"
python3 - "$LAB/squat-join.got" "$instance" >"$LAB/got.out" 2>&1 <<'PY'
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
lines = [l for l in text.split("\n") if l]
bad = [l for l in lines if json.loads(l).get("op") != "hello" or "cred" in json.loads(l) or "record" in json.loads(l)
       or json.loads(l).get("instance") != sys.argv[2]]
print("%d lines, %d not a bare hello; MUNGE: %s; kernel: %s" % (len(lines), len(bad), "MUNGE:" in text, "kernel" in text))
sys.exit(0 if len(lines) >= 2 and not bad and "MUNGE:" not in text and "kernel" not in text else 1)
PY
ok $? "the squatter received hellos only: no munge credential, no provenance record ($(cat "$LAB/got.out"))" "$LAB/got.out" "$LAB/squat-join.got"

# --- the agent starts while they hold its ports ---
lab_agent_start "$LAB/etc/burst-node-held"
ok $? "the agent starts though its join and metrics ports are taken"
grep -q "node reports: ${jaddr%:*} port ${jaddr##*:} is in use by pid $SQ (uid 65534, $SQPY $LAB/squat.py join $jaddr " "$LAB/log/agent.log"
ok $? "it says which process holds the join port (pid $SQ, uid 65534, its command)"
grep -q "metrics: 127.0.0.1 port $MPORT is in use by pid $MSQ (uid 65534, $SQPY $LAB/squat.py listen 127.0.0.1:$MPORT " "$LAB/log/agent.log"
ok $? "... and the metrics port (pid $MSQ)"
for ((i = 0; i < 100; i++)); do grep -q "node reports: .* is still in use by pid $SQ (uid 65534" "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q "node reports: ${jaddr%:*} port ${jaddr##*:} is still in use by pid $SQ (uid 65534, .* (for [0-9]* s); trying again" "$LAB/log/agent.log" &&
	lab_pid_alive "$AGENT_PID"
ok $? "it keeps trying, and says so every few seconds"
id2=$(sbatch --parsable --cloud-contract=here -w burst-2 -o /dev/null --wrap true 2>"$LAB/err")
ok $? "a job for burst-2 is submitted meanwhile" "$LAB/err"
for ((i = 0; i < 300; i++)); do grep -q 'burst-2: launching -> booting' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q 'burst-2: launching -> booting: local-lab'"$$"'-burst-2-1' "$LAB/log/agent.log" && lab_wait_file "$LAB/join-args-2" 10
ok $? "the agent takes the resume request and launches burst-2 meanwhile"
[ ! -e "$record" ] && ! slurmd_in; ok $? "the node is still not admitted by the squatter"

kill "$SQ" && wait "$SQ" 2>/dev/null
for ((i = 0; i < 50; i++)); do grep -q "node reports: listening on ${jaddr%:*} port ${jaddr##*:} now" "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q "node reports: listening on ${jaddr%:*} port ${jaddr##*:} now (it was in use for [0-9]* s)" "$LAB/log/agent.log"
ok $? "once the squatter is gone, the agent listens on the join port"
lab_wait_job "$id" COMPLETED 120; ok $? "the node joins and the job runs" "$LAB/log/agent.log" "$node_log"
lab_wait_job "$id2" COMPLETED 60; ok $? "so does burst-2, launched while the port was taken" "$LAB/log/agent.log" "$LAB/burst/nodes/burst-2/node.log"
[ "$(cat "$LAB/job.out")" = "$instance" ] && grep -qx "CLOUD_INSTANCE_ID=$instance" "$record"
ok $? "... admitted by the agent, as its own instance ($(cat "$LAB/job.out"))" "$LAB/job.out" "$record"
lab_pid_alive "$MSQ" && ! grep -q "metrics: listening on" "$LAB/log/agent.log"
ok $? "... while the metrics port is still taken"

kill "$MSQ" && wait "$MSQ" 2>/dev/null
for ((i = 0; i < 50; i++)); do grep -q "metrics: listening on 127.0.0.1 port $MPORT now" "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q "metrics: listening on 127.0.0.1 port $MPORT now" "$LAB/log/agent.log"; ok $? "once it is free, the agent listens on the metrics port"
curl -sf "http://127.0.0.1:$MPORT/metrics" | grep -q '^burst_joins_total{outcome="admitted"} 2$'
ok $? "... and serves metrics: two nodes admitted"

lab_down
done_testing

#!/usr/bin/env bash
# test_agent_dos.sh - no client holds the agent's poll loop (issue 13's
# security review): an unprivileged user (uid 65534) trickling a byte a
# second into the join port, reconnecting whenever it is cut off, and the
# same user holding 20 silent connections on the control socket; meanwhile
# root's request on the control socket and a report on the join port are
# answered while those attacks still run. A flood of 300 malformed reports
# is answered report by report, but logged only a few times and counted in
# one line. A FIFO or a link to /dev/zero in
# the spool is moved aside, not opened or read without end. A SIGHUP with
# another ClusterName is refused, and so is a SocketPath in a directory
# others may write, and a StateDir others could change (a directory anyone
# may write, an agent.db or its -wal of another user, a link for the spool,
# a directory above it anyone may write). 1000 connections that each stall with most of a report
# cost the agent at most its budget of partial reports (64 MB), and a node
# joins meanwhile (before the budget: a gigabyte). Before the fix the agent read
# each connection on the loop's time (5 s, then 2 s per read), so the
# answers came only once the attackers gave up.
# burst-matrix: host-only (the agent's join port under a flood: nothing of Slurm's in it differs between releases)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"
id nobody >/dev/null 2>&1 || bail "no user nobody (uid 65534) to attack with"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 120 5 60 | grep -v "^PrologSlurmctld=")
lab_pre_ctld() {
	lab_burst_conf <<CONF
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
lab_agent_start || bail "the agent did not start"
jaddr=$LAB_NET.1 jport=$((LAB_PORT_CTLD + 300))
sock=$LAB/burst/agent.sock

# ATTACKER: as nobody, for at most 40 s (then it writes its done file):
#   trickle - a join connection sending one byte a second, again when cut off
#   silent  - 20 control connections that send nothing
cat >"$LAB/attack.py" <<'PY'
import socket, sys, time
kind, out = sys.argv[1], sys.argv[2]
end = time.monotonic() + 40
cut = 0
if kind == "trickle":
    addr = (sys.argv[3], int(sys.argv[4]))
    s = None
    started = False
    while time.monotonic() < end:
        try:
            if s is None:
                s = socket.create_connection(addr)
            s.sendall(b"{")
            if not started:
                open(out + ".started", "w").close()
                started = True
        except OSError:
            s, cut = None, cut + 1
            continue
        time.sleep(1)
else:
    conns = [socket.socket(socket.AF_UNIX) for i in range(20)]
    for c in conns:
        c.connect(sys.argv[3])
    open(out + ".started", "w").close()
    answers = []
    for c in conns:
        c.settimeout(max(0.1, end - time.monotonic()))
        try:
            answers.append(c.recv(300).decode())
        except OSError:
            answers.append("")
    open(out + ".answers", "w").write("\n".join(answers))
    while time.monotonic() < end:
        time.sleep(0.2)
open(out + ".done", "w").write("cut off %d times\n" % cut)
PY
chmod 644 "$LAB/attack.py"
mkdir -m 777 "$LAB/att"
attack() {   # KIND ARGS...: start an attacker as nobody, wait for it to be at it
	setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$LAB/attack.py" "$1" "$LAB/att/$1" "${@:2}" &
	lab_record attacker $!
	lab_wait_file "$LAB/att/$1.started" 10
}
# root's request on the control socket; its answer in $LAB/answer
poke() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(120); s.connect(sys.argv[1])
s.sendall(b"{\"op\":\"poke\"}\n"); print(s.recv(200).decode().strip())' "$sock" >"$LAB/answer" 2>&1
}
# a report on the join port (not a node's: it is refused, and answered)
report() {
	python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=120)
s.sendall(b"{\"op\":\"join\"}\n"); print(s.recv(300).decode().strip())' "$jaddr" "$jport" >"$LAB/join-answer" 2>&1
}

attack trickle "$jaddr" "$jport"; ok $? "nobody trickles a byte a second into the join port"
poke
grep -q '"ok":true' "$LAB/answer"; ok $? "root's request is answered ($(cat "$LAB/answer"))" "$LAB/answer"
[ ! -e "$LAB/att/trickle.done" ]; ok $? "... while the trickler is still at it"
report
grep -q 'malformed report' "$LAB/join-answer"; ok $? "a report on the join port is answered ($(cat "$LAB/join-answer"))" "$LAB/join-answer"
[ ! -e "$LAB/att/trickle.done" ]; ok $? "... while the trickler is still at it"

attack silent "$sock"; ok $? "nobody holds 20 silent connections on the control socket"
poke
grep -q '"ok":true' "$LAB/answer"; ok $? "root's request is answered ($(cat "$LAB/answer"))" "$LAB/answer"
[ ! -e "$LAB/att/silent.done" ]; ok $? "... while the silent connections are still held"
lab_wait_file "$LAB/att/silent.answers" 45
[ "$(grep -c 'permission denied' "$LAB/att/silent.answers")" = 20 ]
ok $? "each silent connection was refused without sending a byte" "$LAB/att/silent.answers"

lab_wait_file "$LAB/att/trickle.done" 45
grep -q 'join: closed [1-9][0-9]* connections\? with no whole report within' "$LAB/log/agent.log"
ok $? "the agent cut the trickler off and said so ($(cat "$LAB/att/trickle.done"))"
# the spool: a FIFO would hang open(), a link to /dev/zero would be read without end
mkfifo "$LAB/burst/spool/x.json" && ln -s /dev/zero "$LAB/burst/spool/z.json"
ok $? "a FIFO x.json and a link z.json -> /dev/zero in the spool"
poke
grep -q '"ok":true' "$LAB/answer"; ok $? "root's request (the spool taken) is answered ($(cat "$LAB/answer"))" "$LAB/answer"
[ -p "$LAB/burst/spool/x.json.bad" ] && [ -L "$LAB/burst/spool/z.json.bad" ] &&
	[ ! -e "$LAB/burst/spool/x.json" ] && [ ! -L "$LAB/burst/spool/z.json" ]
ok $? "both are moved aside as they are ($(ls "$LAB/burst/spool" | tr '\n' ' '))"
grep -q 'spool: .*/x.json: not a regular file' "$LAB/log/agent.log" &&
	grep -q 'spool: .*/z.json: cannot open: .*symbolic link' "$LAB/log/agent.log"
ok $? "... and the log says why"
# a reload that would change the instances' identity (ClusterName tags
# them): refused, or the reconciler would take every live node for vanished
cp "$LAB/etc/burst.conf" "$LAB/etc/burst.conf.orig"
sed -i "s/^ClusterName=.*/ClusterName=renamed$$/" "$LAB/etc/burst.conf"
kill -HUP "$AGENT_PID"
for ((i = 0; i < 100; i++)); do
	grep -q 'SIGHUP: ' "$LAB/log/agent.log" && break
	sleep 0.1
done
grep -q "ClusterName changed from lab$$ to renamed$$ (instances are tagged with it): a reload cannot change that; restart burst-agent" "$LAB/log/agent.log" &&
	grep -q 'SIGHUP: .* has errors (above): the running configuration is kept' "$LAB/log/agent.log"
ok $? "SIGHUP with another ClusterName is refused and the running configuration kept"
cp "$LAB/etc/burst.conf.orig" "$LAB/etc/burst.conf"

# SocketPath in a directory others may write (and not sticky): refused, since
# whoever writes there could put a link where the socket is made
mkdir -m 0777 "$LAB/open"
sed -e "s|^StateDir=.*|StateDir=$LAB/burst2\nSocketPath=$LAB/open/agent.sock|" \
	-e "s|^JoinPort=.*|JoinPort=$((jport + 1))|" "$LAB/etc/burst.conf" >"$LAB/etc/burst2.conf"
SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
	timeout 20 "$agent" -c "$LAB/etc/burst2.conf" -L "$LAB/log/agent2.log"
rc=$?
[ $rc = 1 ] && grep -q "cannot listen on SocketPath=$LAB/open/agent.sock: its directory $LAB/open (mode 0777) is writable by others and not sticky" \
	"$LAB/log/agent2.log" && [ ! -e "$LAB/open/agent.sock" ]
ok $? "a SocketPath in a directory writable by others is refused (exit $rc)" "$LAB/log/agent2.log"
[ "$(stat -c %a "$sock")" = 666 ]; ok $? "the agent's own socket is mode 0666 ($(stat -c %a "$sock"))"

# a StateDir others could change is not used: an agent started on one exits
# at once, naming the path, what it found and the fix (before the fix each of
# these started and ran on it); burstctl refuses to show it
state_agent() {   # DIR: an agent on StateDir=DIR (its exit status; its log $LAB/log/state.log)
	: >"$LAB/log/state.log"
	sed -e "s|^StateDir=.*|StateDir=$1|" -e "s|^JoinPort=.*|JoinPort=$((jport + 1))|" \
		"$LAB/etc/burst.conf" >"$LAB/etc/state.conf"
	SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
		timeout 20 "$agent" -c "$LAB/etc/state.conf" -L "$LAB/log/state.log"
}
refused() {   # DIR PART...: the agent on DIR exits 1 and logs one line with each PART
	local d=$1 rc line part
	shift
	state_agent "$d"
	rc=$?
	line=$(grep -F "(the agent does not start on a state others could change)" "$LAB/log/state.log")
	for part in "$@"; do
		[[ "$line" == *"$part"* ]] || line=
	done
	[ $rc = 1 ] && [ -n "$line" ]
	ok $? "refused (exit $rc): $*" "$LAB/log/state.log"
}
mkdir -m 0777 "$LAB/sd-open"
refused "$LAB/sd-open" "$LAB/sd-open (StateDir) can be written by anyone (mode 0777, owner uid 0 (root)):" \
	"whoever can write it can change the agent's state; chmod go-w $LAB/sd-open"
mkdir -m 0755 "$LAB/sd-db"
install -m 0644 -o nobody /dev/null "$LAB/sd-db/agent.db"
refused "$LAB/sd-db" "$LAB/sd-db/agent.db (the agent's state database) is owned by uid 65534 (nobody), not root:" \
	"its owner can change what the agent trusts there; if you did not make it, remove it, else: chown root $LAB/sd-db/agent.db"
[ "$(stat -c %s "$LAB/sd-db/agent.db")" = 0 ]; ok $? "... and it is left as it was, unopened"
"$build/burstctl/burstctl" -c "$LAB/etc/state.conf" status >"$LAB/status.out" 2>&1
rc=$?
[ $rc != 0 ] && grep -qF "$LAB/sd-db/agent.db (the agent's state database) is owned by uid 65534 (nobody), not root:" "$LAB/status.out"
ok $? "burstctl status refuses to show it (exit $rc)" "$LAB/status.out"
mkdir -m 0755 "$LAB/sd-wal"
install -m 0600 /dev/null "$LAB/sd-wal/agent.db"
install -m 0600 -o nobody /dev/null "$LAB/sd-wal/agent.db-wal"
refused "$LAB/sd-wal" "$LAB/sd-wal/agent.db-wal (the agent's state database) is owned by uid 65534 (nobody), not root:"
mkdir -m 0755 "$LAB/sd-spool"
ln -s "$LAB/open" "$LAB/sd-spool/spool"
refused "$LAB/sd-spool" "$LAB/sd-spool/spool (the request spool, where SlurmUser's power-save programs write) is a symbolic link (to $LAB/open), not the directory the agent keeps there:" \
	"remove it (rm $LAB/sd-spool/spool) and let the agent make the directory"
refused "$LAB/open/state" "$LAB/open (a directory above StateDir) can be written by anyone (mode 0777, owner uid 0 (root)):" \
	"whoever can write there can replace StateDir; chmod go-w $LAB/open (or chmod +t, as /tmp is)"
[ ! -e "$LAB/open/state" ]; ok $? "... and StateDir is not made there"
"$build/burstctl/burstctl" -c "$LAB/etc/burst.conf" status >"$LAB/status.out" 2>&1
ok $? "burstctl status shows the agent's own state" "$LAB/status.out"
# a flood of malformed reports (nobody, one connection each): every one is
# answered; the log keeps a few and counts the rest in one line, so that a
# client cannot fill the disk or bury what matters
lines=$(wc -l <"$LAB/log/agent.log")
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, sys
n = 0
for _ in range(300):
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
    s.sendall(b"{\"op\":\"join\"}\n")
    n += b"malformed report" in s.recv(300)
    s.close()
print(n)' "$jaddr" "$jport" >"$LAB/flood.out" 2>&1
[ "$(cat "$LAB/flood.out")" = 300 ]; ok $? "300 malformed reports, each answered ($(cat "$LAB/flood.out"))" "$LAB/flood.out"
for ((i = 0; i < 150; i++)); do
	tail -n +"$((lines + 1))" "$LAB/log/agent.log" | grep -q 'join: malformed reports: [0-9]* more like it' && break
	sleep 0.1
done
tail -n +"$((lines + 1))" "$LAB/log/agent.log" >"$LAB/flood.log"
logged=$(grep -c 'join: malformed report (' "$LAB/flood.log")
held=$(sed -n 's/.*join: malformed reports: \([0-9]*\) more like it in the last [0-9]* s, not logged.*/\1/p' "$LAB/flood.log" | awk '{ s += $1 } END { print s + 0 }')
[ "$logged" -le 12 ] && [ "$held" -gt 0 ]
ok $? "the log has $logged of them and a line counting $held more" "$LAB/flood.log"
[ $((logged + held)) = 300 ]; ok $? "... which add up to the 300 ($logged + $held)" "$LAB/flood.log"
poke
grep -q '"ok":true' "$LAB/answer"; ok $? "root's request is answered after the flood ($(cat "$LAB/answer"))" "$LAB/answer"

# partial reports, within their byte budget (JoinReportMemory, 64M by
# default): nobody opens 1000 join connections, sends 1,000,000 bytes (most
# of a report) on each and stalls, again whenever one is cut off; meanwhile a
# job's node boots and joins. Before the budget the agent grew by a gigabyte
# (a megabyte's buffer per connection, until the deadline).
cat >"$LAB/fill.py" <<'PY'
import os, resource, selectors, socket, sys, time
addr, out, nconn, size = (sys.argv[1], int(sys.argv[2])), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = nconn + 64 if hard == resource.RLIM_INFINITY else min(hard, nconn + 64)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
chunk = b"x" * size
sel = selectors.DefaultSelector()
live, sent, cut, started, opened = {}, 0, 0, 0, 0
end = time.monotonic() + 90
while time.monotonic() < end and not os.path.exists(out + ".stop"):
    # all at once first; then 100 a second (1,000 a second cost a core for nothing)
    while len(live) < nconn and time.monotonic() < end and \
            (not started or opened < 100 * (time.monotonic() - started)):
        opened += started > 0
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect(addr)
            s.sendall(chunk)
        except OSError:
            s.close()
            cut += 1
            continue
        sent += size
        live[s.fileno()] = s
        sel.register(s, selectors.EVENT_READ)
    if not started:
        open(out + ".started", "w").close()
        started = time.monotonic()
    # a connection the agent closed reads as ended: open another
    for key, _ in sel.select(timeout=0.1):
        sel.unregister(key.fileobj)
        del live[key.fileobj.fileno()]
        key.fileobj.close()
        cut += 1
open(out + ".done", "w").write("%d bytes sent, cut off %d times\n" % (sent, cut))
PY
chmod 644 "$LAB/fill.py"
rss_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
rss0=$(rss_kb "$AGENT_PID" VmRSS)
from=$(($(wc -l <"$LAB/log/agent.log") + 1))
setpriv --reuid=nobody --regid=nogroup --clear-groups nice -n 10 /usr/bin/python3 "$LAB/fill.py" \
	"$jaddr" "$jport" "$LAB/att/fill" 1000 1000000 &
lab_record attacker $!
lab_wait_file "$LAB/att/fill.started" 60
ok $? "nobody holds 1000 join connections with 1,000,000 bytes sent on each" "$LAB/log/agent.log"
id=$(sbatch --parsable --cloud-contract=here -w burst-1 -o /dev/null --wrap true 2>"$LAB/err")
ok $? "a job for burst-1 meanwhile ($id)" "$LAB/err"
lab_wait_job "$id" COMPLETED 120
ok $? "burst-1's instance joined, was admitted and ran the job" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
[ ! -e "$LAB/att/fill.done" ]; ok $? "... while the partial reports still came"
hwm=$(rss_kb "$AGENT_PID" VmHWM)
touch "$LAB/att/fill.stop"
lab_wait_file "$LAB/att/fill.done" 30
ok $? "the attacker stopped ($(cat "$LAB/att/fill.done" 2>/dev/null))"
[ $((hwm - rss0)) -lt $((160 * 1024)) ]
ok $? "the agent grew by $(((hwm - rss0) / 1024)) MB at most (from $((rss0 / 1024)) MB; under 160: the 64 MB budget and malloc's slack)"
for ((i = 0; i < 150; i++)); do
	tail -n +"$from" "$LAB/log/agent.log" | grep -q 'join: closed .* [1-9][0-9]* holding the most of the partial reports beyond JoinReportMemory=64M' && break
	sleep 0.1
done
tail -n +"$from" "$LAB/log/agent.log" | grep -q 'join: closed .* [1-9][0-9]* holding the most of the partial reports beyond JoinReportMemory=64M'
ok $? "the agent closed the connections holding the most beyond the budget, and said so" "$LAB/log/agent.log"
poke
grep -q '"ok":true' "$LAB/answer"; ok $? "root's request is answered after the partial reports ($(cat "$LAB/answer"))" "$LAB/answer"
lab_pid_alive "$AGENT_PID"; ok $? "the agent still runs"
done_testing

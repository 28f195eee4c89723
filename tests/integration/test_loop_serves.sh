#!/usr/bin/env bash
# test_loop_serves.sh - nothing the agent waits for holds its loop (local
# provider). Each slow thing it waits for is held at a hold point
# (BURST_HOLD_POINT, doc/crash_points.md) until the test lets it go: a
# slow cloud API (whether an instance ended; an instance's console), a
# slow munged (a node's report decoded), a slow disk (a join's commit made
# durable). While each is held the agent answers root's request on its
# control socket and a report on its join port, and acts on nothing the
# held call decides: burst-1 is admitted only once its admission is
# durable; burst-2, whose image fails at once, goes DOWN only once its
# console is read. No time is measured: a held call waits until the test
# releases it (the waits below only bound a test that went wrong).
# burst-matrix: host-only (the agent's own loop against its hold points; its Slurm calls are test_boot_fail's and test_lifecycle's, run on both releases)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 300 10 300)
lab_pre_ctld() {
	lab_burst_conf <<CONF
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log $LAB_NODE_LOGS"

# The image's burst-node: burst-2's fails at once (its console is read);
# burst-1's is the real one (a copy outside /tmp).
cp "$build/burst-node/burst-node" "$LAB/real-burst-node" || bail "cannot copy burst-node"
cat >"$LAB/node-wrap" <<WRAP
#!/bin/bash
node=
for x in "\$@"; do
	[ "\$x" = -- ] && break
	[ "\${prev:-}" = --node ] && node=\$x
	prev=\$x
done
if [ "\$node" = burst-2 ]; then
	echo "burst-node: fatal: the image is broken on purpose (test_loop_serves)" >&2
	exit 1
fi
exec $LAB/real-burst-node "\$@"
WRAP
chmod 755 "$LAB/node-wrap"

holds=
for h in provider.ended munge.decode state.sync provider.console; do
	mkfifo "$LAB/hold.$h" || bail "cannot make the FIFO $LAB/hold.$h"
	holds="$holds${holds:+,}$h:$LAB/hold.$h"
done
export BURST_HOLD_POINT=$holds
lab_agent_start "$LAB/node-wrap"; ok $? "the agent is up, with its hold points armed"
unset BURST_HOLD_POINT
sock="$LAB/burst/agent.sock"
jaddr=$LAB_NET.1 jport=$((LAB_PORT_CTLD + 300))

wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -Eq "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}
# root's request on the control socket, and a report on the join port (not
# a node's: it is refused, and answered): both answered while POINT is held
served() {   # POINT
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(120); s.connect(sys.argv[1])
s.sendall(b"{\"op\":\"poke\"}\n"); print(s.recv(200).decode().strip())' "$sock" >"$LAB/answer" 2>&1
	grep -q '"ok":true' "$LAB/answer"
	ok $? "$1 held: root's request is answered ($(cat "$LAB/answer"))" "$LAB/answer"
	python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=120)
s.sendall(b"{\"op\":\"join\"}\n"); print(s.recv(300).decode().strip())' "$jaddr" "$jport" >"$LAB/join-answer" 2>&1
	grep -q 'malformed report' "$LAB/join-answer"
	ok $? "$1 held: a report on the join port is answered ($(cat "$LAB/join-answer"))" "$LAB/join-answer"
	! grep -q "hold point $1 released" "$LAB/log/agent.log"
	ok $? "... while $1 is still held"
}
release() {   # POINT
	echo go >"$LAB/hold.$1"
	wait_log "hold point $1 released" 30
	ok $? "$1 let go"
}

# --- 1. burst-1: booting, its end asked of the provider (held) ---
sbatch --parsable --cloud-contract=here -w burst-1 -o /dev/null --wrap true >"$LAB/j1" 2>"$LAB/err"
ok $? "sbatch -w burst-1" "$LAB/err"
wait_log 'hold point provider.ended reached' 120
ok $? "the provider is asked whether burst-1's instance ended: held"
served provider.ended
release provider.ended

# --- 2. its report's credential decoded (held) ---
wait_log 'hold point munge.decode reached' 120
ok $? "burst-1's report is read, its credential being decoded: held"
served munge.decode
! grep -q 'burst-1: booting -> admitted' "$LAB/log/agent.log"
ok $? "... burst-1 is not admitted meanwhile"
release munge.decode

# --- 3. its admission made durable (held) ---
wait_log 'hold point state.sync reached' 60
ok $? "burst-1's admission is written, being made durable: held"
served state.sync
! grep -q 'burst-1: booting -> admitted' "$LAB/log/agent.log"
ok $? "... burst-1's admission is not said (nor answered) before it is durable"
release state.sync
wait_log 'burst-1: booting -> admitted' 60
ok $? "burst-1 is admitted once its admission is durable"
lab_wait_job "$(cat "$LAB/j1")" COMPLETED 120
ok $? "its job completes"

# --- 4. burst-2: its instance ends before it joins; its console read (held) ---
sbatch --parsable --cloud-contract=here -w burst-2 -o /dev/null --wrap true >"$LAB/j2" 2>"$LAB/err"
ok $? "sbatch -w burst-2" "$LAB/err"
wait_log 'hold point provider.console reached' 120
ok $? "burst-2's instance ended; its console being read: held"
served provider.console
! grep -q 'burst-2: booting -> terminating' "$LAB/log/agent.log"
ok $? "... burst-2 does not fail before its console is read"
release provider.console
wait_log 'burst-2: booting -> terminating: instance [^ ]+ ended before it joined; console: "burst-node: fatal: the image is broken on purpose \(test_loop_serves\)"' 60
ok $? "then it fails, with its console's last line in the reason"
lab_wait_node burst-2 'down.*' 30; ok $? "burst-2 is DOWN"

! grep -q 'a bug: event' "$LAB/log/agent.log"; ok $? "no event refused by node life"
scancel "$(cat "$LAB/j2")" 2>/dev/null
lab_down
done_testing

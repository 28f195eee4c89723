#!/usr/bin/env bash
# tests/cli/test_log_reopen.sh - the agent's -L log through a rotation, as
# logrotate does it (rename, then SIGUSR1 from postrotate): no line lost,
# none written twice, burst.conf not read again (TAP). The agent runs without
# a slurmctld (it says so and goes on) and without a cloud (an endpoint that
# refuses); what it logs steadily is the spool's requests: burst-suspend for
# nodes of no node set, one line a node, each node's name its own.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
AGENT="$build/burst-agent/burst-agent"
SUSPEND="$build/plugins/power_save/burst-suspend"
tmp=$(mktemp -d /tmp/test_log_reopen.XXXXXX)
agent_pid=
gen_pid=
cleanup() {
	[ -n "$gen_pid" ] && kill "$gen_pid" 2>/dev/null
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$src/tests/integration/tap.sh"
log="$tmp/agent.log"
TAP_DIAG="$log $log.1 $tmp/agent.err"

# wait_for SECONDS COMMAND...: until COMMAND succeeds (0) or the time is up (1)
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@" 2>/dev/null; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/slurm.conf" <<EOF
ClusterName=logtest
SlurmctldHost=localhost
SlurmctldPort=1
MessageTimeout=1
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1
EOF
printf '[default]\naws_access_key_id = AKIDLOGTEST\naws_secret_access_key = none\n' >"$tmp/creds"
chmod 600 "$tmp/creds"
cat >"$tmp/burst.conf" <<EOF
StateDir=$tmp/state
SocketPath=$tmp/agent.sock
JoinListen=127.0.0.1:$port
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=http://127.0.0.1:1 CredentialsFile=$tmp/creds ImageId=ami-12345678 JoinAddress=127.0.0.1:$port
NodeSet=cpu Nodes=burst-[1-3] Partition=burst InstanceTypes=t3.micro
EOF
export SLURM_CONF="$tmp/slurm.conf" BURST_CONF="$tmp/burst.conf"
"$AGENT" -c "$tmp/burst.conf" -L "$log" 2>"$tmp/agent.err" &
agent_pid=$!
wait_for 20 grep -q 'info: started: ' "$log"
ok $? "the agent starts and logs to -L $log" || bail "no agent"

# requests r1 .. rN, 8 nodes each: "rIn[1-8]: suspend for a node of no node set"
N=150
generate() {
	local i
	for ((i = 1; i <= N; i++)); do
		"$SUSPEND" "r${i}n[1-8]" || echo "burst-suspend r$i failed" >>"$tmp/gen.err"
	done
}
generate &
gen_pid=$!
wait_for 20 grep -q '] burst-agent: error: r30n8: suspend' "$log"
ok $? "the agent logs the requests as they come (r30 seen)"
mv "$log" "$log.1"
kill -USR1 "$agent_pid"
wait_for 10 test -s "$log"
ok $? "after the rename and SIGUSR1 the agent writes a new $log"
grep -q "info: SIGUSR1: log $log opened again" "$log"
ok $? "... which says it was opened again on SIGUSR1"
wait "$gen_pid"
gen_pid=
[ ! -s "$tmp/gen.err" ]
ok $? "burst-suspend recorded every request" "$tmp/gen.err"
wait_for 20 grep -q "error: r${N}n8: suspend" "$log"
ok $? "the last request (r$N) is logged in the new file"

# every node's line in exactly one of the two files, once
cat "$log.1" "$log" | sed -n 's/^.*burst-agent: error: \(r[0-9]*n[0-9]*\): suspend for a node of no node set.*$/\1/p' |
	sort | uniq -c >"$tmp/counts"
awk -v n="$N" '
	{ seen[$2] = $1 }
	END {
		for (i = 1; i <= n; i++)
			for (j = 1; j <= 8; j++) {
				k = "r" i "n" j
				if (seen[k] != 1) { print k ": " (seen[k] + 0) " times"; bad++ }
			}
		for (k in seen) total++
		if (total != n * 8) { print total " distinct nodes, not " n * 8; bad++ }
		exit bad > 0
	}' "$tmp/counts" >"$tmp/bad"
ok $? "each of the $((N * 8)) lines is in exactly one of the two files, once" "$tmp/bad"
old=$(grep -c ': suspend for a node of no node set' "$log.1")
new=$(grep -c ': suspend for a node of no node set' "$log")
[ "$old" -gt 0 ] && [ "$new" -gt 0 ]
ok $? "the rotation fell among them: $old lines in the old file, $new in the new one"
# the lines before the reopen in the old file, the later ones in the new
last_old=$(tail -1 "$log.1")
case $last_old in *"] burst-agent: "*) true ;; *) false ;; esac
ok $? "the old file ends with a whole line" "$log.1"
# burst.conf broken now (not before: burst-suspend reads it too): SIGUSR1
# must not read it (SIGHUP would, and say so)
echo 'NoSuchKey=1' >>"$tmp/burst.conf"
kill -USR1 "$agent_pid"
reopened_twice() { [ "$(grep -c 'SIGUSR1: log .* opened again' "$log")" -eq 2 ]; }
wait_for 10 reopened_twice
ok $? "a second SIGUSR1 (burst.conf broken meanwhile) opens the log again"
! grep -qE 'read again|has errors|NoSuchKey' "$log.1" "$log"
ok $? "SIGUSR1 did not read burst.conf again (nor report the key it now has wrong)"
kill -0 "$agent_pid"
ok $? "the agent runs on"

# a path that cannot be opened: the agent says so in the file it keeps
mv "$log" "$log.2"
mkdir "$log"
kill -USR1 "$agent_pid"
wait_for 10 grep -q "SIGUSR1: cannot open the log $log again: Is a directory; still writing to the file it was" "$log.2"
ok $? "a log path that cannot be opened: said in the file still written" "$log.2"
rmdir "$log"
kill -USR1 "$agent_pid"
wait_for 10 test -s "$log"
ok $? "the path fixed, the next SIGUSR1 opens it"

# the logrotate file the agent's package ships: the path the guide gives
# LogFile=, and the signal tested above sent to the agent alone (the unit's
# KillMode=process leaves instances of the local provider in its cgroup,
# which SIGUSR1 would kill)
lr="$src/contrib/logrotate/burst-agent"
pattern=$(sed -n 's/^\(\/[^ ]*\) {$/\1/p' "$lr")
guide_log=$(sed -n 's/^ *LogFile=\(\/var\/log\/[^ ]*\)$/\1/p' "$src/doc/admin-guide.md" | head -1)
[ -n "$guide_log" ] && case $guide_log in $pattern) true ;; *) false ;; esac
ok $? "contrib/logrotate/burst-agent rotates $pattern, where the guide's LogFile=${guide_log:-?} is" "$lr"
post=$(sed -n '/^[[:space:]]*postrotate$/,/^[[:space:]]*endscript$/p' "$lr" | sed '1d; $d; s/^[[:space:]]*//')
[ "$post" = "systemctl kill --kill-who=main --signal=USR1 burst-agent.service >/dev/null 2>&1 || true" ]
ok $? "its postrotate sends SIGUSR1 to the unit's main process only: $post" "$lr"
done_testing

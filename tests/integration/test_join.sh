#!/usr/bin/env bash
# test_join.sh - the join protocol's security on a real cluster: a node's
# report is a munge credential (the cluster's key) over the record's digest,
# the one-time join token and the instance id, sent once the agent proved
# who it is (a node of another munge key cannot tell, and sends nothing). A
# forged credential (another munge key), a token for another instance, a
# wrong token, an oversized report and a replay are each refused and
# logged, and change nothing in the agent's database; the genuine report is
# admitted and its record kept. A report without a hello (an older
# burst-node) is answered unsigned, as it expects.
# The token reaches the instance in its environment, never on a command
# line; once used it is dropped. A node removed from burst.conf while it
# boots is refused when it reports, the agent unharmed.
# burst-matrix: host-only (the join protocol's checks, before slurmd: what Slurm sees is test_admission's, run on both)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
node_bin="$build/burst-node/burst-node"
[ -x "$agent" ] || bail "no $agent (build first)"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 120 5 60 | grep -v "^PrologSlurmctld=")
lab_pre_ctld() {
	lab_burst_conf <<CONF || return 1
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
	# the instance's burst-node: records its arguments, then waits for a go
	cat >"$LAB/etc/burst-node-held" <<HELD
#!/bin/sh
case "\$*" in
*"--node burst-2 "*) s=-2 ;;   # burst-2: its own files, its own go
*) s= ;;
esac
echo "\$@" >"$LAB/join-args\$s"
echo "\${BURST_JOIN_TOKEN:-}" >"$LAB/join-token\$s"
while [ ! -e "$LAB/join-go\$s" ]; do sleep 0.1; done
exec "$(lab_node_image)" "\$@"
HELD
	chmod 755 "$LAB/etc/burst-node-held"
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

# a second munged with a key of its own: credentials from another cluster
mkdir -p "$LAB/munge2" && chmod 755 "$LAB/munge2"
mungekey -c -b 1024 -k "$LAB/munge2/munge.key" >/dev/null 2>&1 && chmod 600 "$LAB/munge2/munge.key"
munged --key-file="$LAB/munge2/munge.key" --socket="$LAB/munge2/munge.sock" \
	--pid-file="$LAB/munge2/munged.pid" --log-file="$LAB/log/munged2.log" \
	--seed-file="$LAB/munge2/munged.seed" --num-threads=2
lab_wait_file "$LAB/munge2/munged.pid" 5 && lab_record munged "$(cat "$LAB/munge2/munged.pid")"
ok $? "a second munged with another key runs"

lab_agent_start "$LAB/etc/burst-node-held"

id=$(sbatch --parsable --cloud-contract=here -w burst-1 -o "$LAB/job.out" --wrap 'echo $CLOUD_PROVENANCE_ID' 2>"$LAB/err")
ok $? "a job for burst-1 is submitted" "$LAB/err"
lab_wait_file "$LAB/join-args" 30; ok $? "burst-1's instance starts and is about to report"
read -r -a args <"$LAB/join-args"

# join ARG=VALUE...: the instance's own join, with some arguments replaced,
# and /bin/true instead of slurmd
join_with() {
	local a=("${args[@]}") kv k v i found
	for kv in "$@"; do
		k=${kv%%=*} v=${kv#*=} found=
		for ((i = 0; i < ${#a[@]}; i++)); do
			[ "${a[$i]}" = "$k" ] && a[$((i + 1))]=$v found=1
		done
		[ -n "$found" ] || a=("${a[0]}" "$k" "$v" "${a[@]:1}")   # --token: not among the instance's arguments (after "join")
	done
	for ((i = 0; i < ${#a[@]}; i++)); do
		[ "${a[$i]}" = "--" ] && { a=("${a[@]:0:$((i + 1))}" /bin/true); break; }
	done
	# the instance's token (given in its environment) unless one is given
	BURST_JOIN_TOKEN=$(cat "$LAB/join-token") ip netns exec "burst-lab$$-burst-1" "$node_bin" "${a[@]}"
}
arg() { local i; for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "$1" ] && echo "${args[$((i + 1))]}"; done; }
db() {   # the node's row and the number of stored records
	python3 -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select state, attempt, instance, token_used, provenance_id from nodes where name=?", ("burst-1",)).fetchone(),
      c.execute("select count(*) from records").fetchone()[0])' "$LAB/burst/agent.db"
}
before=$(db)
tok=$(python3 -c 'import sqlite3,sys
print(sqlite3.connect(sys.argv[1]).execute("select token from nodes where name=?", ("burst-1",)).fetchone()[0])' "$LAB/burst/agent.db")
[ "$(cat "$LAB/join-token")" = "$tok" ] && ! grep -qF -- "$tok" "$LAB/join-args" &&
	! grep -qaF -- "$tok" /proc/[0-9]*/cmdline
ok $? "the join token reaches the instance in its environment, on no command line (ps)"
[[ "$before" == "('booting', 1, 'local-lab$$-burst-1-1', 0, None) 0" ]]; ok $? "the agent waits for burst-1's report ($before)"

# a node of another cluster (another munge key) cannot tell the agent is
# this cluster's: it sends no report, and gives up at its join timeout
join_with --munge-socket="$LAB/munge2/munge.sock" --record="$LAB/forged.env" --join-timeout=3 >"$LAB/o" 2>&1
rc=$?
[ $rc = 3 ] && grep -q 'NOT BELIEVED: the peer on .* did not prove it is the agent: its answer to the hello is not the agent.s: its munge credential does not decode here' "$LAB/o" &&
	grep -q 'no verdict of the agent at .* within --join-timeout 3 s' "$LAB/o" && [ ! -e "$LAB/forged.env" ]
ok $? "a node with another munge key does not believe the agent, and sends it nothing (exit $rc)" "$LAB/o"

agentaddr=$(arg --agent)
# raw_join CRED RECORD [hello]: what the agent answers a report (of
# burst-1's instance), after a hello when asked (the proof not checked)
raw_join() {
	ip netns exec "burst-lab$$-burst-1" python3 - "$agentaddr" "$1" "$2" "$(arg --instance)" "${3:-}" <<'PY'
import json, socket, sys
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)), timeout=20)
f = s.makefile("rb")
if sys.argv[5]:
    s.sendall((json.dumps({"op": "hello", "v": 1, "node": "burst-1", "instance": sys.argv[4],
                           "nonce": "00112233445566778899aabbccddeeff"}) + "\n").encode())
    print("hello: " + f.readline().decode().strip())
s.sendall((json.dumps({"op": "join", "cred": sys.argv[2], "record": sys.argv[3]}) + "\n").encode())
print("answer: " + f.readline().decode().strip())
PY
}
claims() {   # TOKEN RECORD: a report's claims for burst-1's instance
	python3 -c 'import hashlib, json, sys
print(json.dumps({"digest": hashlib.sha256(sys.argv[3].encode()).hexdigest(), "token": sys.argv[1], "instance": sys.argv[2], "node": "burst-1"}))' \
		"$1" "$(arg --instance)" "$2"
}
cred2=$(munge -S "$LAB/munge2/munge.sock" -s "$(claims "$(cat "$LAB/join-token")" '{}')")
raw_join "$cred2" '{}' hello >"$LAB/o" 2>&1
grep -q '^hello: {"hello":"burst-agent","v":1,"cred":"MUNGE:' "$LAB/o" &&
	grep -q '^answer: {"answer":"{\\"admit\\":false,\\"reason\\":\\"munge credential refused: .*","cred":"MUNGE:' "$LAB/o"
ok $? "a report under another munge key is refused, in a signed answer" "$LAB/o"
grep -q 'join: munge credential refused: .*; report refused' "$LAB/log/agent.log"; ok $? "... and logged"
[ "$(db)" = "$before" ]; ok $? "... and the database is unchanged"

# an older burst-node (no hello) is answered the way it expects, unsigned
raw_join "$(munge -S "$LAB/munge/munge.sock" -s "$(claims 0123456789abcdef0123456789abcdef '{}')")" '{}' >"$LAB/o" 2>&1
grep -qx 'answer: {"admit":false,"reason":"invalid or used join token"}' "$LAB/o" &&
	grep -q "join: burst-1 (instance $(arg --instance)): its burst-node sent no hello (older than this agent): answered unsigned" "$LAB/log/agent.log"
ok $? "a report without a hello (an older burst-node) is answered unsigned, and the log says so" "$LAB/o"
[ "$(db)" = "$before" ]; ok $? "... and the database is unchanged"

join_with --instance="local-lab$$-burst-2-1" --record="$LAB/other.env" >"$LAB/o" 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'wrong instance for this node' "$LAB/o" && grep -q 'burst-1 (instance local-lab'"$$"'-burst-2-1, uid 0): refused: wrong instance' "$LAB/log/agent.log"
ok $? "the token presented for another instance is refused and logged (exit $rc)" "$LAB/o"
[ "$(db)" = "$before" ]; ok $? "... and the database is unchanged"

join_with --token=0123456789abcdef0123456789abcdef --record="$LAB/tok.env" >"$LAB/o" 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'invalid or used join token' "$LAB/o"
ok $? "a wrong token is refused (exit $rc)" "$LAB/o"
[ "$(db)" = "$before" ]; ok $? "... and the database is unchanged"

out=$(ip netns exec "burst-lab$$-burst-1" python3 -c '
import socket, sys
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)))
try:
    s.sendall(b"{\"op\":\"join\",\"record\":\"" + b"x" * (2 << 20) + b"\"}\n")
except OSError:
    pass
print(s.recv(200).decode().strip())' "$agentaddr" 2>&1)
[[ "$out" == *'"reason":"report too large"'* ]] && grep -q 'join: report of more than 1048576 bytes refused' "$LAB/log/agent.log"
ok $? "an oversized report is refused and logged ($out)"
[ "$(db)" = "$before" ]; ok $? "... and the database is unchanged"

# the genuine report
touch "$LAB/join-go"
lab_wait_job "$id" COMPLETED 60; ok $? "the genuine report is admitted and the job runs" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
after=$(db)
pid=$(head -1 "$LAB/job.out")
[[ "$after" == "('admitted', 1, 'local-lab$$-burst-1-1', 1, '$pid') 1" ]] && [[ "$pid" =~ ^[0-9a-f]{64}$ ]]
ok $? "the record is stored, its digest is the job's CLOUD_PROVENANCE_ID ($after)" "$LAB/job.out"
tok=$(python3 -c 'import sqlite3,sys
print(sqlite3.connect(sys.argv[1]).execute("select token from nodes where name=?", ("burst-1",)).fetchone()[0])' "$LAB/burst/agent.db")
[ "$tok" = None ]; ok $? "the used join token is not kept in the database ($tok)"
m=$(stat -c %a "$LAB/burst/agent.db" "$LAB/burst/agent.db-wal" "$LAB/burst/agent.db-shm" | tr '\n' ' ')
[ "$m" = "600 600 600 " ]; ok $? "agent.db, -wal and -shm are mode 0600 ($m)"

# the report again from another instance (its spent token, node and record):
# refused; from its own instance, on the very record it was admitted on (what
# a node does when the agent that admitted it died before answering): the
# same answer again, nothing decided or stored again
join_with --instance="local-lab$$-burst-2-1" --record="$LAB/replay.env" >"$LAB/o" 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'node is not booting' "$LAB/o"
ok $? "replaying the report as another instance is refused (exit $rc)" "$LAB/o"
[ "$(db)" = "$after" ] && [ ! -e "$LAB/replay.env" ]
ok $? "... the database is unchanged and no admission record was written"
join_with --record="$LAB/replay.env" >"$LAB/o" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^CLOUD_PROVENANCE_ID=$pid\$" "$LAB/replay.env" &&
	grep -q 'burst-1: report of instance .* again, the one it was admitted on (its answer was lost): answered again' "$LAB/log/agent.log"
ok $? "the same report from its own instance is answered again, as admitted (exit $rc)" "$LAB/o" "$LAB/replay.env"
[ "$(db)" = "$after" ]; ok $? "... and nothing is stored again ($(db))"

# a node removed from burst.conf (SIGHUP) while it boots, whose report then
# fails the admission policy: refused, and the agent keeps running
id2=$(sbatch --parsable --cloud-contract=here -w burst-2 -o /dev/null --wrap true 2>"$LAB/err")
ok $? "a job for burst-2 is submitted" "$LAB/err"
lab_wait_file "$LAB/join-args-2" 30; ok $? "burst-2's instance starts and is about to report"
sed -i -e 's/^NodeSet=local Nodes=burst-\[1-2\]/NodeSet=local Nodes=burst-1/' "$LAB/etc/burst.conf"
echo "BlessedKernels=0.0.0-no-such-kernel" >>"$LAB/etc/burst.conf"
kill -HUP "$AGENT_PID"
for ((i = 0; i < 100; i++)); do grep -q 'SIGHUP: .* read again' "$LAB/log/agent.log" && break; sleep 0.1; done
grep -q 'SIGHUP: .* read again: 1 nodes' "$LAB/log/agent.log"; ok $? "burst.conf without burst-2 is read again"
touch "$LAB/join-go-2"
for ((i = 0; i < 300; i++)); do grep -q 'burst-2: booting -> ' "$LAB/log/agent.log" && break; lab_pid_alive "$AGENT_PID" || break; sleep 0.1; done
lab_pid_alive "$AGENT_PID"; ok $? "the agent survives burst-2's report"
grep -q 'burst-2: booting -> rejected: rejected at join: node burst-2 is no longer in a node set of burst.conf' "$LAB/log/agent.log"
ok $? "... which is refused: burst-2 is no longer in a node set"
scancel "$id2"
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

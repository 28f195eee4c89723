#!/usr/bin/env bash
# tests/cli/test_standby_upgrade.sh - an upgrade with a standby, one host at
# a time, as the state sees it (TAP, no Slurm, no cloud: the agent says so
# and goes on). agent.db is at the schema before this build's (version 1,
# made here from that release's SQL, with rows) and its lease is held and
# renewed by another agent (this test renewing it, as the older release's
# active agent does). The new agent must not migrate the file under it: it
# waits as a standby and says what it waits for; the file stays at version
# 1, untouched. Once that agent releases the lease (its host is upgraded
# next: the package stops it), the new agent takes it, migrates the file
# under its lease, every row kept, and goes on as the active agent.
# Then the other way: an agent of this build waiting as a standby while a
# later release's agent has migrated the file past this build's schema
# must not take the lease and run on a file it would misread: it stops,
# saying so, and the lease is left as it was. Between the two, a backup
# (burstctl state backup) while the agent runs; at the end the guide's
# restore of it, the way back it names, and the agent starts on the copy.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
AGENT="$build/burst-agent/burst-agent"
tmp=$(mktemp -d /tmp/test_standby_upgrade.XXXXXX)
a1= a2= renew_pid=
cleanup() {
	[ -n "$renew_pid" ] && kill "$renew_pid" 2>/dev/null && wait "$renew_pid" 2>/dev/null
	for p in $a1 $a2; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$src/tests/integration/tap.sh"
command -v sqlite3 >/dev/null || bail "no sqlite3 (the sqlite3 package)"
log1="$tmp/agent1.log" log2="$tmp/agent2.log"
TAP_DIAG="$log1 $log2"
db="$tmp/state/agent.db"
q() { sqlite3 -cmd '.timeout 5000' "$db" "$@"; }

wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@" 2>/dev/null; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cat >"$tmp/slurm.conf" <<EOF
ClusterName=upgradetest
SlurmctldHost=localhost
SlurmctldPort=1
MessageTimeout=1
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1
EOF
printf '[default]\naws_access_key_id = AKIDUPGRADE\naws_secret_access_key = none\n' >"$tmp/creds"
chmod 600 "$tmp/creds"
# conf N: agent N's own socket and join port, the one StateDir
conf() {
	local port
	port=$(free_port)
	cat >"$tmp/burst$1.conf" <<EOF
StateDir=$tmp/state
SocketPath=$tmp/agent$1.sock
JoinListen=127.0.0.1:$port
LeaseTimeout=3
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=http://127.0.0.1:1 CredentialsFile=$tmp/creds ImageId=ami-12345678 JoinAddress=127.0.0.1:$port
NodeSet=cpu Nodes=burst-[1-3] Partition=burst InstanceTypes=t3.micro
EOF
}
conf 1
conf 2
export SLURM_CONF="$tmp/slurm.conf"

# agent.db at schema version 1 (the release before this build's), with a
# node holding a job, events, a pending request, an instance and a job's cost;
# without budget_holds, a table added later without a version of its own
# (the lease's fence must not wait for it: the migration makes it)
mkdir -m 755 "$tmp/state"
now=$(date +%s)
q <<SQL >/dev/null || bail "cannot make the version 1 database"
PRAGMA journal_mode=WAL;
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, node TEXT, what TEXT NOT NULL, detail TEXT);
CREATE TABLE records (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, node TEXT NOT NULL,
 instance TEXT, provenance_id TEXT NOT NULL, decision TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE nodes (name TEXT PRIMARY KEY, nodeset TEXT, state TEXT NOT NULL CHECK (state IN ('powered_down','requested',
 'launching','booting','admitted','terminating','rejected','lost')),
 attempt INTEGER NOT NULL DEFAULT 0, instance TEXT, address TEXT, token TEXT,
 token_used INTEGER NOT NULL DEFAULT 0, job INTEGER NOT NULL DEFAULT 0,
 since REAL NOT NULL, cooldown_until REAL NOT NULL DEFAULT 0, last_error TEXT,
 want_resume INTEGER NOT NULL DEFAULT 0, provenance_id TEXT, provider TEXT,
 instance_type TEXT, region TEXT, retry_at REAL NOT NULL DEFAULT 0,
 failures INTEGER NOT NULL DEFAULT 0, early INTEGER NOT NULL DEFAULT 0);
CREATE INDEX nodes_state_since ON nodes(state, since);
CREATE TABLE requests (name TEXT PRIMARY KEY, time REAL NOT NULL);
CREATE TABLE cooldowns (key TEXT PRIMARY KEY, until REAL NOT NULL, failures INTEGER NOT NULL, last_error TEXT);
CREATE TABLE lease (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL, seq INTEGER NOT NULL,
 holder TEXT NOT NULL, ident TEXT NOT NULL, renewed REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE instances (provider TEXT NOT NULL, instance TEXT NOT NULL, node TEXT NOT NULL, nodeset TEXT,
 type TEXT, region TEXT, price REAL, price_source TEXT, job INTEGER NOT NULL DEFAULT 0,
 launched REAL NOT NULL, joined REAL NOT NULL DEFAULT 0, ended REAL NOT NULL DEFAULT 0, PRIMARY KEY (provider, instance));
CREATE TABLE holds (job INTEGER NOT NULL, node TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL DEFAULT 0,
 user TEXT, account TEXT, partition TEXT, PRIMARY KEY (job, node, start));
CREATE TABLE job_costs (job INTEGER PRIMARY KEY, time REAL NOT NULL, dollars REAL NOT NULL);
INSERT INTO nodes(name, nodeset, state, instance, job, since, provider, instance_type, region)
 VALUES ('burst-1', 'cpu', 'admitted', 'i-0000000000000aaa1', 4242, $now, 'aws', 't3.micro', 'us-east-1'),
        ('burst-2', 'cpu', 'powered_down', NULL, 0, $now, NULL, NULL, NULL),
        ('burst-3', 'cpu', 'powered_down', NULL, 0, $now, NULL, NULL, NULL);
INSERT INTO events(time, node, what, detail) VALUES ($now, 'burst-1', 'admitted', 'ev-one'), ($now, 'burst-1', 'job', 'ev-two');
INSERT INTO requests VALUES ('burst-2', $now);
INSERT INTO instances(provider, instance, node, nodeset, type, region, price, price_source, job, launched, joined)
 VALUES ('aws', 'i-0000000000000aaa1', 'burst-1', 'cpu', 't3.micro', 'us-east-1', 0.0104, 'catalog', 4242, $now, $now);
INSERT INTO holds VALUES (4242, 'burst-1', $now, 0, 'alice', 'acct', 'burst');
INSERT INTO job_costs VALUES (4141, $now, 1.25);
INSERT INTO lease VALUES (1, 7, 0, 'oldhost pid 1', '- - 1', $now, $now + 3);
PRAGMA user_version=1;
SQL
chmod 600 "$db"
check_sql=$(q "SELECT sql FROM sqlite_master WHERE name='nodes'")

# the older release's active agent on the other host: renews its lease
renewer() {
	while :; do
		q "UPDATE lease SET seq=seq+1, renewed=strftime('%s','now'), expires=strftime('%s','now')+3 WHERE id=1" ||
			echo "renewal failed" >>"$tmp/renew.err"
		sleep 0.3
	done
}
renewer &
renew_pid=$!

"$AGENT" -c "$tmp/burst1.conf" -L "$log1" 2>"$tmp/agent1.err" &
a1=$!
wait_for 20 grep -q "info: standby: $db is at schema 1, this burst-agent's is 2: not migrated while oldhost pid 1 holds the lease" "$log1"
ok $? "the new agent, finding schema 1 and a live lease, waits as a standby and says what for" "$log1"
# three renewal periods more: still waiting, the file as it was
sleep 1
[ "$(q 'PRAGMA user_version')" = 1 ] && [ "$(q "SELECT sql FROM sqlite_master WHERE name='nodes'")" = "$check_sql" ] &&
	[ "$(q "SELECT holder FROM lease")" = "oldhost pid 1" ]
ok $? "while the older agent renews its lease agent.db stays at schema 1, nodes table as it was, lease its"
kill -0 "$a1" && ! grep -q 'lease taken\|migrated from' "$log1"
ok $? "the new agent runs on, a standby, having taken nothing" "$log1"
[ ! -s "$tmp/renew.err" ]
ok $? "the older agent's renewals went through beside the standby" "$tmp/renew.err"

# the older agent's host upgraded: the package stops it, which releases the lease
kill "$renew_pid"; wait "$renew_pid" 2>/dev/null; renew_pid=
q "UPDATE lease SET seq=seq+1, expires=0 WHERE id=1"
wait_for 20 grep -q "info: lease: $db migrated from schema 1 to 2 under this agent's lease" "$log1"
ok $? "the lease released, the new agent takes it and then migrates agent.db" "$log1"
grep -n 'lease taken (epoch 8)\|migrated from schema' "$log1" | cut -d: -f1 | tr '\n' ' ' >"$tmp/order"
read -r taken migrated <"$tmp/order"
[ -n "${migrated:-}" ] && [ "$taken" -lt "$migrated" ]
ok $? "... in that order: the lease (epoch 8) taken first, the migration under it" "$log1"
[ "$(q 'PRAGMA user_version')" = 2 ] && [ "$(q "SELECT count(*) FROM sqlite_master WHERE name='budget_holds'")" = 1 ]
ok $? "agent.db is at schema 2, with the table it lacked"
# rows kept: nodes, events, instances, holds and job costs are never deleted by the agent
got=$(q "SELECT group_concat(name || ' ' || ifnull(instance, '-'), ', ') FROM (SELECT * FROM nodes ORDER BY name)")
[ "$got" = "burst-1 i-0000000000000aaa1, burst-2 -, burst-3 -" ]
ok $? "every node kept, burst-1 with its instance ($got)"
got=$(q "SELECT group_concat(id || ' ' || detail, ', ') FROM (SELECT * FROM events WHERE detail LIKE 'ev-%' ORDER BY id)")
[ "$got" = "1 ev-one, 2 ev-two" ]
ok $? "the events kept with their ids ($got)"
got=$(q "SELECT count(*) FROM instances WHERE instance='i-0000000000000aaa1' AND job=4242 AND price=0.0104")
got=$got,$(q "SELECT count(*) FROM holds WHERE job=4242"),$(q "SELECT dollars FROM job_costs WHERE job=4141")
[ "$got" = "1,1,1.25" ]
ok $? "the instance, the job's hold and the cost record kept ($got)"
[ "$(q "SELECT count(*) FROM sqlite_master WHERE name IN ('events', 'records') AND sql LIKE '%AUTOINCREMENT%'")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM sqlite_master WHERE name='nodes' AND sql LIKE '%state = ''powered_down'' OR %'")" = 1 ]
ok $? "the migration's work done: no AUTOINCREMENT left, the nodes' CHECK as comparisons"
wait_for 20 grep -q 'info: started: 3 nodes' "$log1"
ok $? "the new agent goes on as the active one" "$log1"

# a backup while the active agent runs (burstctl state backup; that a copy
# is one moment of a file being written is tests/cli/test_state_backup.sh's)
"$build/burstctl/burstctl" -c "$tmp/burst1.conf" state backup "$tmp/backup.db" >"$tmp/backup.out" 2>&1 &&
	kill -0 "$a1" &&
	[ "$(sqlite3 "$tmp/backup.db" 'PRAGMA integrity_check; PRAGMA user_version; SELECT count(*) FROM nodes; SELECT count(*) FROM events WHERE detail LIKE "ev-%"')" = "$(printf 'ok\n2\n3\n2')" ]
ok $? "burstctl state backup while the agent runs: whole, at schema 2, every node and event" "$tmp/backup.out"

# the other way: agent 2 (this build too) waits as a standby; a later
# release's agent migrates the file past this build's schema (made here);
# agent 1 stops, releasing the lease: agent 2 must not take it
"$AGENT" -c "$tmp/burst2.conf" -L "$log2" 2>"$tmp/agent2.err" &
a2=$!
wait_for 20 grep -q "info: standby: .* holds the lease (epoch 8)" "$log2"
ok $? "a second agent of this build waits as a standby" "$log2"
! grep -q 'not migrated while' "$log2"
ok $? "... with nothing to migrate (schema 2), it says nothing of one" "$log2"
q "PRAGMA user_version=3"
kill "$a1"; wait "$a1"; a1=
wait_for 20 grep -q "info: lease released (epoch 8)" "$log1"
ok $? "the active agent stops, releasing the lease" "$log1"
gone() { ! kill -0 "$1"; }
wait_for 20 gone "$a2"
ok $? "the standby stops by itself" "$log2"
kill "$a2" 2>/dev/null
wait "$a2"
rc=$?
a2=
[ $rc -ne 0 ] && [ $rc -lt 128 ]
ok $? "the standby, finding agent.db at schema 3 when it could take the lease, stops (exit $rc)" "$log2"
grep -q "error: lease: not taken: $db is at schema 3, newer than this burst-agent's (2): .* upgrade this host's slurm-burst" "$log2"
ok $? "... saying why and what to do" "$log2"
[ "$(q 'SELECT epoch, expires = 0 FROM lease')" = "8|1" ] && ! grep -q 'lease taken' "$log2"
ok $? "the lease left as agent 1 released it (epoch 8): not taken"
"$AGENT" -c "$tmp/burst2.conf" -L "$log2.again" 2>"$tmp/agent2.err"
rc=$?
[ $rc -ne 0 ] && grep -q "is at schema 3, newer than this burst-agent's (2)" "$log2.again" "$tmp/agent2.err"
ok $? "started again (its service manager would), it refuses the file at once (exit $rc)" "$log2.again" "$tmp/agent2.err"
# the way back the refusal names: the guide's restore of the backup taken
# after the migration, then the agent starts on it
rm -f "$db-wal" "$db-shm"
install -m 0600 "$tmp/backup.db" "$db"
"$AGENT" -c "$tmp/burst2.conf" -L "$log2.restored" 2>"$tmp/agent2.err" &
a2=$!
wait_for 20 grep -q 'info: started: 3 nodes' "$log2.restored"
ok $? "restored as the guide says, the agent starts on the copy" "$log2.restored"
got=$(q "SELECT group_concat(name || ' ' || ifnull(instance, '-'), ', ') FROM (SELECT * FROM nodes ORDER BY name)")
[ "$got" = "burst-1 i-0000000000000aaa1, burst-2 -, burst-3 -" ] && [ "$(q 'PRAGMA user_version')" = 2 ] &&
	[ "$(q 'SELECT dollars FROM job_costs WHERE job=4141')" = 1.25 ]
ok $? "... every node with its instance, the cost record, schema 2 ($got)"
done_testing

#!/usr/bin/env bash
# test_openstack_agent.sh - the agent's openstack provider on a real Slurm,
# against real Keystone and Nova on 127.0.0.1 (os_peers.sh; every token is
# checked by Nova's keystonemiddleware; Keystone's tokens live 40 s here):
#  1. the agent killed between POST /servers and recording the answer
#     (os_hold.py holds the answer back): after a restart the server is
#     adopted, exactly one exists;
#  2. a job bursts into a Nova server: the cheaper flavor finds no valid host
#     (its server goes ERROR) and the agent falls back to the next one; the
#     server's user data is run as cloud-init would (in a network namespace
#     on the lab's bridge), burst-node joins, slurmd starts, the job runs
#     with CLOUD_PROVIDER=os; after SuspendTime the server is deleted;
#  3. a wrong password: the node is DOWN with the auth reason, no secret in
#     any log;
#  4. an image whose servers go ERROR: the node is DOWN with Nova's fault,
#     whose escape sequences and newline are written out in the node's
#     reason, the event log and the agent's log (os_nova.py's burst-hostile);
#  5. by then the agent has used its tokens for longer than one lives, and
#     Nova never answered 401 (each was replaced before it expired); then
#     Keystone revokes the agent's token (the user disabled): the agent's
#     calls fail as auth errors, and go on with a new token once the user
#     is enabled again;
#  6. the reconciler deletes a server of the cluster that no node owns
#     (after OrphanGrace) and keeps another cluster's.
# Nova is started once for the whole script.
# burst-matrix: host-only (Nova and Keystone are not in the Debian 13 root)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/os_peers.sh"
. "$src/tests/integration/lab.sh"
ps="$build/plugins/power_save"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
inst="$src/burst-agent/drivers/burst-local-instance"
[ -x "$agent" ] || bail "no $agent (build first)"

aux=$(mktemp -d /tmp/test_openstack_agent.XXXXXX)
hold_pid=
aux_down() {
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null && wait "$hold_pid" 2>/dev/null
	hold_pid=
	os_down
	rm -rf "$aux"
}

# --- Keystone and Nova; the flavors; the holding proxy in front of Nova ---
OS_TOKEN_EXPIRATION=40 os_up "$aux" || { aux_down; bail "Keystone and Nova did not start"; }
# burst.nocap asks Placement for a resource no host has: No valid host
# (through curl, not the CLI: each CLI run costs seconds)
flavor_create() {   # NAME [EXTRA_SPECS_JSON]: its id
	local id
	id=$(os_api admin POST /flavors "{\"flavor\": {\"name\": \"$1\", \"vcpus\": 2, \"ram\": 1024, \"disk\": 1}}" |
		os_ok | os_jq 'print(d["flavor"]["id"])') && [ -n "$id" ] || return 1
	[ -z "${2:-}" ] || os_api admin POST "/flavors/$id/os-extra_specs" "{\"extra_specs\": $2}" | os_ok >/dev/null || return 1
	echo "$id"
}
{ flavor_small=$(flavor_create burst.small) &&
  flavor_create burst.nocap '{"resources:CUSTOM_BURST_NOWHERE": "1"}'; } \
	>"$aux/flavors.log" 2>&1 || { cat "$aux/flavors.log" >&2; aux_down; bail "flavor create failed"; }
mkdir "$aux/hold"
"$OS_PY" "$src/tests/integration/os_hold.py" "${OS_NOVA_EP%/v2.1}" "$aux/hold.port" "$aux/hold" 2>"$aux/hold.log" &
hold_pid=$!
for _ in $(seq 100); do [ -s "$aux/hold.port" ] && break; sleep 0.1; done
[ -s "$aux/hold.port" ] || { aux_down; bail "os_hold.py did not start"; }
hold_ep="http://127.0.0.1:$(cat "$aux/hold.port")/v2.1"

umask 077
printf 'export %s\n' OS_AUTH_URL="$OS_AUTH_EP" OS_USERNAME=burst "OS_PASSWORD='$OS_PW'" OS_PROJECT_NAME=burst \
	OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default >"$aux/pw.rc"
badpw="Wr0ngPasswordForTheTest$$xyz"
printf 'export %s\n' OS_AUTH_URL="$OS_AUTH_EP" OS_USERNAME=burst "OS_PASSWORD='$badpw'" OS_PROJECT_NAME=burst \
	>"$aux/bad.rc"
# the launching provider authenticates with the application credential, read
# from a clouds.yaml as openstacksdk and the openstack CLI write one
cat >"$aux/clouds.yaml" <<YAML
# the CLI's own format (OS_CLIENT_CONFIG_FILE)
clouds:
  other:
    auth: {auth_url: "http://127.0.0.1:9/v3", username: nobody, password: x, project_name: x}
  lab:
    auth_type: v3applicationcredential
    auth:
      auth_url: "$OS_AUTH_EP"
      application_credential_id: "$OS_AC_ID"
      application_credential_secret: "$OS_AC_SECRET"
    region_name: RegionOne
    interface: public
YAML
umask 022
chmod 755 "$aux"

# the catalog: the shipped one and the test's two flavors (shaped as t3.micro)
mkdir "$aux/catalog"
cp "$src"/share/catalog/* "$aux/catalog/"
{
	sed -n '1,3p;4p' "$src/share/catalog/aws.csv" | sed 's/provider aws/provider openstack/'
	grep '^t3.micro,' "$src/share/catalog/aws.csv" | sed 's/^t3.micro,/burst.small,/; s/,[^,]*$/,test/'
	grep '^t3.micro,' "$src/share/catalog/aws.csv" | sed 's/^t3.micro,/burst.nocap,/; s/,[^,]*$/,test/'
} >"$aux/catalog/openstack.csv"
printf '%s\n' '# version=test' 'instance_type,region,ondemand_usd_per_hour,spot_usd_per_hour' \
	'burst.nocap,RegionOne,0.01,' 'burst.small,RegionOne,0.02,' >"$aux/catalog/openstack-prices.csv"
# burstctl takes BURST_CATALOG_DIR (make check sets it to the shipped
# catalog) over burst.conf's CatalogDir=: this test's catalog for both
export BURST_CATALOG_DIR="$aux/catalog"

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="ResumeProgram=\"$ps/burst-resume\"
SuspendProgram=\"$ps/burst-suspend\"
ResumeFailProgram=\"$ps/burst-resume-fail\"
PrologSlurmctld=\"$ps/burst-prolog-slurmctld\"
ResumeTimeout=300
SuspendTimeout=10
SuspendTime=8
JobSubmitPlugins=lua"
lab_pre_ctld() {
	cp "$src/contrib/job_submit.lua" "$LAB/etc/job_submit.lua"
	jp=$((LAB_PORT_CTLD + 300))
	cat >"$LAB/etc/burst.conf" <<CONF
ClusterName=lab$$
StateDir=$LAB/burst
CatalogDir="$aux/catalog"
JoinPort=$jp
RejectCooldown=60
ReconcileInterval=2
OrphanGrace=8
Provider=local Bridge=$LAB_BR Address=$LAB_NET.1/24
AllowInsecureEndpoint=yes
Provider=os Type=openstack Regions=RegionOne CredentialsFile=$aux/clouds.yaml Cloud=lab Image=$OS_IMAGE Networks=$OS_NET JoinAddress=$LAB_NET.1:$jp BuildWait=120
Provider=oshold Type=openstack Regions=RegionOne CredentialsFile=$aux/pw.rc Image=$OS_IMAGE Networks=$OS_NET JoinAddress=$LAB_NET.1:$jp ComputeEndpoint=$hold_ep
Provider=osimg Type=openstack Regions=RegionOne CredentialsFile=$aux/pw.rc Image=burst-hostile Networks=$OS_NET JoinAddress=$LAB_NET.1:$jp BuildWait=120
Provider=osbad Type=openstack Regions=RegionOne CredentialsFile=$aux/bad.rc Image=$OS_IMAGE Networks=$OS_NET JoinAddress=$LAB_NET.1:$jp
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=os InstanceTypes=burst.nocap,burst.small
NodeSet=hold Nodes=burst-3 Partition=burst Providers=oshold InstanceTypes=burst.small
NodeSet=broken Nodes=burst-4 Partition=burst Providers=osimg InstanceTypes=burst.small
NodeSet=bad Nodes=burst-5 Partition=burst Providers=osbad InstanceTypes=burst.small
CONF
	"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1 || { cat "$LAB/check.out" >&2; return 1; }
	"$burstctl" --config "$LAB/etc/burst.conf" slurm-conf --nodes-only \
		| sed 's/^\(PartitionName=.*\)$/\1 Default=YES/' >>"$LAB/etc/slurm.conf" || return 1
	lab_plugstack
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
# the servers' ports get addresses on the lab's bridge from here on (.200 up)
echo "$LAB_NET" >"$aux/nova-addresses"
TAP_DIAG="$LAB/log/agent.log"
ok 0 "burstctl check-config accepts the openstack providers"
env -i PATH="$PATH" HOME="$aux" OS_CLIENT_CONFIG_FILE="$aux/clouds.yaml" \
	openstack --os-cloud lab flavor list -f value -c Name >"$aux/cli-flavors" 2>&1 &&
	grep -qx burst.small "$aux/cli-flavors"
ok $? "the openstack CLI authenticates with the same clouds.yaml (Cloud=lab: an application credential)" "$aux/cli-flavors"

agent_start() {
	SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
		BURST_NODE="$build/burst-node/burst-node" \
		"$agent" -c "$LAB/etc/burst.conf" -L "$LAB/log/agent.log" &
	agent_pid=$!
	lab_record burst-agent $agent_pid
	for _ in $(seq 50); do [ -S "$LAB/burst/agent.sock" ] && break; sleep 0.1; done
	[ -S "$LAB/burst/agent.sock" ]
}
agent_start; ok $? "the agent is up" "$LAB/log/agent.log"

uuid='[0-9a-f]\{8\}-[0-9a-f-]\{27\}'
instance_of() {   # NODE: the server of its last launch, from the agent's log
	grep -o "$1: launching -> booting: $uuid" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}
wait_log() {   # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q "$1" "$LAB/log/agent.log" && return 0
		sleep 0.1
	done
	return 1
}
# through curl, not the CLI: each CLI run costs seconds
jpy() { python3 -c "import json, sys; d = json.loads(sys.stdin.read().rsplit(chr(10), 2)[0] or 'null'); $1"; }
user_data() {   # SERVER: its user data, decoded (admin: microversion 2.3)
	OS_MV=2.3 os_api admin GET "/servers/$1" | jpy 'print(d["server"]["OS-EXT-SRV-ATTR:user_data"])' | base64 -d
}
servers_named() {   # NAME: the ids of the burst project's servers of that name
	os_api burst GET "/servers?name=%5E$1%24" | jpy 'print("\n".join(s["id"] for s in d["servers"]))' | sed '/^$/d'
}
server_addr() {   # SERVER: its first fixed IPv4 address in Nova
	os_api burst GET "/servers/$1" | jpy 'print(next(a["addr"] for n in d["server"]["addresses"].values() for a in n if a["version"] == 4 and a.get("OS-EXT-IPS:type", "fixed") == "fixed"))'
}
server_status() {   # SERVER: its status, GONE when Nova does not know it
	local out
	out=$(os_api burst GET "/servers/$1")
	[ "$(tail -1 <<<"$out")" = 404 ] && { echo GONE; return; }
	jpy 'print(d["server"]["status"])' <<<"$out"
}
server_create() {   # NAME CLUSTER [PROVIDER]: a server of the burst project with burst:cluster=CLUSTER
	# (and burst:provider=PROVIDER); its id
	os_api burst POST /servers "{\"server\": {\"name\": \"$1\", \"flavorRef\": \"$flavor_small\",
		\"imageRef\": \"$OS_IMAGE\", \"networks\": [{\"uuid\": \"$OS_NET\"}],
		\"metadata\": {\"burst:cluster\": \"$2\"${3:+, \"burst:provider\": \"$3\"}}}}" | jpy 'print(d["server"]["id"])'
}

# --- 1. the agent killed between POST /servers and recording the answer ---
t_first=$(date +%s)
id=$(sbatch --parsable --cloud-contract=small -w burst-3 -o /dev/null --wrap 'sleep 1' 2>"$LAB/err")
ok $? "sbatch -w burst-3 (through the holding proxy)" "$LAB/err"
lab_wait_file "$aux/hold/held.1" 120
ok $? "Nova created the server; the proxy holds the answer" "$aux/hold.log" "$LAB/log/agent.log"
{ kill -9 "$agent_pid"; wait "$agent_pid"; } 2>/dev/null
[ $? = 137 ]; ok $? "the agent was killed (SIGKILL) before it got the answer"
held=$(os_jget "$aux/hold/held.1" server)
node_db() {   # NODE: its state and attempt in the agent's database
	python3 -c 'import sqlite3, sys; print(*sqlite3.connect(sys.argv[1]).execute("select state, attempt from nodes where name=?", (sys.argv[2],)).fetchone())' \
		"$LAB/burst/agent.db" "$1" 2>&1
}
python3 -c 'import sqlite3, sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute("select name, state, attempt, instance from nodes")]' \
	"$LAB/burst/agent.db" >"$LAB/db.out" 2>&1
[ "$(node_db burst-3)" = "launching 1" ]
ok $? "the agent's state holds burst-3 launching (attempt 1), no server recorded ($(node_db burst-3))" "$LAB/db.out"
rm -f "$LAB/burst/agent.sock"
agent_start; ok $? "the agent is up again" "$LAB/log/agent.log"
wait_log "burst-3: launching -> booting: $held" 120
ok $? "burst-3 adopted the held server $held" "$LAB/log/agent.log"
grep -q "burst-3: server $held adopted: launched earlier (attempt 1" "$LAB/log/agent.log" ||
	grep -q "reconcile: .*$held.*adopt" "$LAB/log/agent.log"
ok $? "... saying so" "$LAB/log/agent.log"
[ "$(servers_named "lab$$-burst-3")" = "$held" ]; ok $? "exactly one server exists for burst-3"
scancel "$id"

# --- 2. a job bursts into a Nova server, past a flavor with no valid host ---
id=$(sbatch --parsable --cloud-contract=small -w burst-1 -o "$LAB/job.out" \
	--wrap 'hostname; echo "P=$CLOUD_PROVIDER T=$CLOUD_INSTANCE_TYPE I=$CLOUD_INSTANCE_ID"' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=small -w burst-1" "$LAB/err"
wait_log "burst-1: launching -> booting: $uuid" 180
ok $? "the agent launched burst-1 through the openstack provider" "$LAB/log/agent.log"
grep -q "burst-1: launching -> requested: os/burst.nocap@RegionOne capacity: openstack server $uuid (lab$$-burst-1, flavor burst.nocap) went ERROR: No valid host was found" "$LAB/log/agent.log"
ok $? "burst.nocap (cheaper) found no valid host: capacity, the agent moved to burst.small" "$LAB/log/agent.log"
sid=$(instance_of burst-1)
os_api burst GET "/servers/$sid" >"$LAB/s1.json" 2>&1
grep -q '"burst:node": "burst-1"' "$LAB/s1.json" && grep -q "\"burst:cluster\": \"lab$$\"" "$LAB/s1.json" &&
	grep -q '"burst:nodeset": "cloud"' "$LAB/s1.json" && grep -q '"burst:batch": "burst-' "$LAB/s1.json" &&
	grep -q '"original_name": "burst.small"' "$LAB/s1.json" && grep -q "\"name\": \"lab$$-burst-1\"" "$LAB/s1.json"
ok $? "Nova has $sid: flavor burst.small, named lab$$-burst-1, with the burst:* metadata" "$LAB/s1.json"
for _ in $(seq 50); do [ "$(servers_named "lab$$-burst-1" | wc -l)" = 1 ] && break; sleep 0.2; done
[ "$(servers_named "lab$$-burst-1" | wc -l)" = 1 ]; ok $? "... and no other server for burst-1 (the ERROR one was deleted)"
user_data "$sid" >"$LAB/ud1.sh" 2>"$LAB/ud.err"
jtok=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select token from nodes where name=?", ("burst-1",)).fetchone()[0])' "$LAB/burst/agent.db" 2>/dev/null)
[ -n "$jtok" ] && grep -q "^NODE='burst-1'$" "$LAB/ud1.sh" && grep -q "^TOKEN='$jtok'$" "$LAB/ud1.sh" &&
	grep -q "^JOIN='$LAB_NET.1:$jp'$" "$LAB/ud1.sh"
ok $? "its user data holds the node's name, its join token and the JoinAddress" "$LAB/ud1.sh" "$LAB/ud.err"
! grep -q "$OS_PW" "$LAB/log/agent.log"; ok $? "no password in the agent's log"

# cloud-init, emulated: the user data runs in a namespace on the lab's bridge,
# with the server id the metadata service would give
emu() {   # NODE INSTANCE USERDATA ADDRESS
	mkdir -p "$LAB/emu/$1"
	"$inst" start "burst-lab$$-emu-$1" "$1" "$4/24" "$LAB_BR" "$LAB/emu/$1" -- \
		env BURST_INSTANCE_ID="$2" \
		BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
		BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
		sh "$3" >/dev/null
}
addr1=$(server_addr "$sid" 2>/dev/null)
case "$addr1" in "$LAB_NET".2[0-9][0-9]) true ;; *) false ;; esac
ok $? "Nova gave $sid an address of its own on the tenant network ($addr1)"
emu burst-1 "$sid" "$LAB/ud1.sh" "$addr1"
ok $? "the server's user data runs (emulated cloud-init)" "$LAB/emu/burst-1/node.log"
n=1
for ((k = 0; k < 900; k++)); do
	[ "$(squeue -h -t all -j "$id" -o %T 2>/dev/null)" = COMPLETED ] && break
	cur=$(instance_of burst-1)
	if [ -n "$cur" ] && [ "$cur" != "$sid" ]; then
		"$inst" stop "burst-lab$$-emu-burst-1"
		user_data "$cur" >"$LAB/ud-$cur.sh" 2>/dev/null
		emu burst-1 "$cur" "$LAB/ud-$cur.sh" "$(server_addr "$cur")" || echo "# emulating $cur failed"
		sid=$cur n=$((n + 1))
	fi
	sleep 0.1
done
[ "$(squeue -h -t all -j "$id" -o %T 2>/dev/null)" = COMPLETED ] && [ "$n" -eq 1 ]
ok $? "burst-node joined, slurmd started, the job completed (on server $n of burst-1)" "$LAB/emu/burst-1/node.log" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
grep -qx "P=os T=burst.small I=$sid" "$LAB/job.out"
ok $? "the job saw CLOUD_PROVIDER=os CLOUD_INSTANCE_TYPE=burst.small and its server ($(tail -1 "$LAB/job.out" 2>/dev/null))" "$LAB/job.out"
grep -qx burst-1 "$LAB/job.out"; ok $? "... on burst-1" "$LAB/job.out"
grep -q "burst-1: provider os gave no address" "$LAB/log/agent.log"
ok $((!$?)) "the agent took burst-1's address from Nova (not from where its report came)" "$LAB/log/agent.log"
for _ in $(seq 150); do [ "$(server_status "$sid")" = GONE ] && break; sleep 0.2; done
[ "$(server_status "$sid")" = GONE ]; ok $? "after SuspendTime the agent deleted $sid" "$LAB/log/agent.log"
"$inst" stop "burst-lab$$-emu-burst-1"
lab_wait_node burst-1 'idle~' 30; ok $? "burst-1 is powered down ($(lab_node_state burst-1))"

# --- 3. a wrong password ---
id=$(sbatch --parsable --cloud-contract=small -w burst-5 -o /dev/null --wrap 'true' 2>"$LAB/err")
ok $? "sbatch -w burst-5 (its provider's credentials hold a wrong password)" "$LAB/err"
wait_log 'burst-5: launching -> terminating: .*(auth)' 90
ok $? "the launch failed as an auth error" "$LAB/log/agent.log"
lab_wait_node burst-5 'down.*' 20
reason=$(scontrol show node burst-5 | grep -o 'Reason=.*')
[[ "$reason" == *"burst: launch of burst-5 as burst.small failed (auth): "*"Keystone "*" refused the user burst (project burst)"* ]]
ok $? "burst-5 is DOWN, the reason says Keystone refused the user ($reason)"
scancel "$id"
! grep -q "$badpw" "$LAB/log/agent.log" "$LAB/log/slurmctld.log" "$aux/nova.log"; ok $? "the wrong password is in no log"

# --- 4. a server that goes ERROR ---
id=$(sbatch --parsable --cloud-contract=small -w burst-4 -o /dev/null --wrap 'true' 2>"$LAB/err")
ok $? "sbatch -w burst-4 (its provider's image does not boot)" "$LAB/err"
wait_log 'burst-4: launching -> terminating: .*(permanent)' 120
ok $? "the launch failed (permanent)" "$LAB/log/agent.log"
lab_wait_node burst-4 'down.*' 20
reason=$(scontrol show node burst-4 | grep -o 'Reason=.*')
[[ "$reason" == *"went ERROR: Build of instance "*" aborted: "* ]]
ok $? "burst-4 is DOWN with Nova's fault ($reason)"
scancel "$id"
# the fault clears the screen, sets the terminal's title, rings it and
# forges a line: written out wherever it goes, no ESC, BEL or newline of the
# cloud's reaches Slurm, the event log or the agent's log (before the fix the
# reason and the log held them raw)
hostile='os_nova.py: \x1b[2J\x1b]0;owned\x07the image burst-hostile\x0adoes not boot'
scontrol show node burst-4 >"$LAB/node4.out" 2>&1
grep -qF "$hostile" "$LAB/node4.out" && ! grep -q $'[\x1b\x07]' "$LAB/node4.out" &&
	[ "$(grep -c 'does not boot' "$LAB/node4.out")" = 1 ] && ! grep -q '^does not boot' "$LAB/node4.out"
ok $? "scontrol show node: the reason holds the fault written out, on its one line" "$LAB/node4.out"
"$burstctl" --config "$LAB/etc/burst.conf" events --node burst-4 >"$LAB/events4.out" 2>&1
grep -qF "$hostile" "$LAB/events4.out" && ! grep -q $'[\x1b\x07]' "$LAB/events4.out"
ok $? "burstctl events: the fault written out" "$LAB/events4.out"
python3 -c 'import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select detail from events where node = ?", ("burst-4",)).fetchall()
d = "\n".join(r[0] or "" for r in rows)
sys.exit(0 if sys.argv[2] in d and not any(c in d for c in "\x1b\x07") else 1)' "$LAB/burst/agent.db" "$hostile" 2>"$LAB/err"
ok $? "... and so it is stored in the event log (agent.db)" "$LAB/err"
grep -qF "$hostile" "$LAB/log/agent.log" && ! grep -q $'[\x1b\x07]' "$LAB/log/agent.log"
ok $? "the agent's log: the fault written out, no ESC or BEL in it" "$LAB/log/agent.log"

# --- 5. tokens expired and replaced; Keystone revokes the agent's token ---
# the agent's calls (launches, the reconciler's listings every 2 s) used
# tokens for longer than one lives (40 s); the test, now faster, may get
# here sooner: the agent's calls go on meanwhile
while [ $(( $(date +%s) - t_first )) -le 45 ]; do sleep 1; done
! grep -q '" 401 ' "$aux/nova.log"
ok $? "no 401 from Nova in $(( $(date +%s) - t_first )) s of the agent's calls: each token was replaced before it expired" "$aux/nova.log"
# disabling the user revokes its tokens: once Nova's 10 s cache of the
# agent's token is over, Nova refuses it (401) and Keystone the new token the
# driver asks for, or (if the token was due for renewal) Keystone at once;
# enabled again, the next token is good
n401=$(grep -c '" 401 ' "$aux/nova.log")
from=$(( $(wc -l <"$LAB/log/agent.log") + 1 ))
os_ks PATCH "/users/$OS_USER_ID" '{"user": {"enabled": false}}' | os_ok >"$LAB/err" 2>&1
ok $? "the burst user is disabled in Keystone: its tokens are revoked, its application credential refused" "$LAB/err"
for ((k = 0; k < 600; k++)); do
	tail -n +"$from" "$LAB/log/agent.log" | grep -q "reconcile: cannot list the instances of provider os (auth): .*Keystone .* refused the application credential $OS_AC_ID from cloud lab of" && break
	sleep 0.1
done
tail -n +"$from" "$LAB/log/agent.log" | grep -q "reconcile: cannot list the instances of provider os (auth): .*Keystone .* refused the application credential $OS_AC_ID from cloud lab of"
ok $? "the agent's revoked token no longer works, nor its application credential's new one: an auth error naming the credential and the cloud (Nova refused it $(( $(grep -c '" 401 ' "$aux/nova.log") - n401 )) times)" "$LAB/log/agent.log"
os_ks PATCH "/users/$OS_USER_ID" '{"user": {"enabled": true}}' | os_ok >"$LAB/err" 2>&1
ok $? "the burst user is enabled again" "$LAB/err"

# --- 6. the reconciler: an orphan of the cluster, another cluster's server ---
stray=$(server_create "lab$$-stray" "lab$$" os)
[ -n "$stray" ]; ok $? "a server of the cluster made behind the agent's back ($stray)"
other=$(server_create "lab$$-other" "other$$")
for _ in $(seq 150); do [ "$(server_status "$stray")" = GONE ] && break; sleep 0.2; done
[ "$(server_status "$stray")" = GONE ]; ok $? "the reconciler deleted the orphan $stray" "$LAB/log/agent.log"
grep -q "reconcile: instance $stray of provider os (node none): terminating: orphan: tagged burst:cluster=lab$$" "$LAB/log/agent.log"
ok $? "... saying why" "$LAB/log/agent.log"
[ "$(server_status "$other")" != GONE ]; ok $? "another cluster's server is kept ($(server_status "$other"))"
tail -n +"$from" "$LAB/log/agent.log" | grep -q "reconcile: cannot list the instances of provider os (auth)" &&
	[ "$(server_status "$stray")" = GONE ]
ok $? "... by the provider os, whose token had been revoked: it went on with a new one" "$LAB/log/agent.log"
lab_no_relaunch; ok $? "no node was launched again for a slurmd that did not register (RegisterTimeout)" "$LAB/relaunched"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
aux_down
done_testing

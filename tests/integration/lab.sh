# tests/integration/lab.sh - a private Slurm cluster (22.05 or later, the
# installed one) in a temporary
# directory: munged, slurmctld on a bridge of our own, CLOUD nodes whose
# slurmds run in network/mount/UTS namespaces. Sourced by the integration
# tests, the demo and the benchmarks. Everything it starts is recorded in
# $LAB/pids and torn down by lab_down, which the EXIT trap runs.
#
#   lab_up [NODES...]      # NODES: "name" of CLOUD nodes (default burst-[1-4])
#   lab_down
#
# LAB_DBD=1 before lab_up: the lab keeps job accounting in a slurmdbd of its
# own on a private MariaDB (lab_dbd), and sacct/sacctmgr work.
#
# Uses only loopback and the bridge it creates (10.$X.$Y.0/24, its own).


lab_log() { echo "lab: $*" >&2; }

# One /24, bridge and set of ports per lab. Slot i (0 to 74) is the bridge
# brb$((i + 20)) on 10.211.$((i + 20)).0/24 with the ports 17000+4i (slurmctld)
# and +1 (slurmd), and 17300+4i to +3 (the agent's JoinPort, slurmdbd, and
# what tests add): no two slots share a port. A slot is claimed by creating
# its bridge, which the kernel does for one caller only: two labs starting at
# once (on this host or in tools/debroot.sh's root, which shares its network)
# cannot both get it, however long each takes to bind its ports. The bridge
# is the reservation until lab_down deletes it; its alias names the owner
# (pid and start time), and a lab bridge whose owner is gone (a lab killed
# without its teardown) is deleted and its slot reused. A slot whose ports
# something else listens on is passed over. Starts from the pid, so that
# labs usually get different slots without trying each other's.
LAB_SLOTS=75
lab_owner() {   # PID: "burst-lab PID STARTTIME" (the start time tells a reused pid)
	local st
	st=$(awk '{ print $22 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && echo "burst-lab $1 $st"
}
# Is bridge $1 a lab's whose owner is gone? (a bridge without our alias is not)
lab_bridge_stale() {
	local alias pid
	alias=$(ip -o link show "$1" 2>/dev/null | sed -n 's/.* alias \(burst-lab [0-9]* [0-9]*\)$/\1/p')
	[ -n "$alias" ] || return 1
	pid=$(echo "$alias" | awk '{ print $2 }')
	[ "$(lab_owner "$pid")" != "$alias" ]
}
lab_pick_net() {
	local k i n port used owner lock
	owner=$(lab_owner "$$") || { lab_log "cannot read /proc/$$/stat"; return 1; }
	# taking a stale lab's bridge is done by one lab at a time: a lock in
	# /dev/shm, which the host and tools/debroot.sh's root share
	exec {lock}>>/dev/shm/burst-lab-net.lock && flock -w 60 "$lock" ||
		{ lab_log "cannot lock /dev/shm/burst-lab-net.lock (held by: $(fuser /dev/shm/burst-lab-net.lock 2>&1))"; return 1; }
	used=$(ss -Hltn 2>/dev/null | awk '{ sub(/.*:/, "", $4); print $4 }')
	for ((k = 0; k < LAB_SLOTS; k++)); do
		i=$(( ($$ + k) % LAB_SLOTS ))
		n=$(( i + 20 ))
		port=$(( 17000 + i * 4 ))
		echo "$used" | grep -qx "$port\|$((port + 1))\|$((port + 300))\|$((port + 301))\|$((port + 302))\|$((port + 303))" && continue
		ip -4 addr show 2>/dev/null | grep -q "inet 10\.211\.$n\." && continue
		if lab_bridge_stale "brb$n"; then
			# under the lock: two labs must not both take it for
			# stale, the second deleting the first one's new claim
			lab_log "brb$n: its lab ($(ip -o link show "brb$n" | sed -n 's/.* alias //p')) is gone: reused"
			ip link del "brb$n" 2>/dev/null
		fi
		# the claim: fails when the bridge exists (another lab's)
		ip link add "brb$n" address "$(printf '02:62:75:72:73:%02x' "$n")" type bridge 2>/dev/null || continue
		echo "bridge brb$n" >>"$LAB/pids"
		exec {lock}>&-
		ip link set "brb$n" alias "$owner" || return 1
		LAB_NET="10.211.$n"
		LAB_BR="brb$n"
		LAB_PORT_CTLD=$port
		LAB_PORT_SLURMD=$(( LAB_PORT_CTLD + 1 ))
		LAB_PORT_DBD=$(( LAB_PORT_CTLD + 301 ))   # (+300: the agent's JoinPort)
		return 0
	done
	exec {lock}>&-
	lab_log "no free slot among the $LAB_SLOTS bridges brb20 to brb$((LAB_SLOTS + 19)) (ip link show type bridge)"
	return 1
}

# Since 23.11 slurmctld names each new connection by a reverse lookup of
# its peer (src/common/net.c sockaddr_to_string -> xgetnameinfo, for
# conmgr): a resolver that never answers for the lab's addresses (this
# machine's does not) holds each node's first registration and job launch
# 5 s, the resolver's timeout, whatever the node. In tools/debroot.sh's
# root /etc/hosts is that run's own copy (a bind mount, discarded after):
# there the lab's addresses get names. The host's /etc/hosts is never
# touched.
lab_ptr_names() {
	local i
	[ -e /.slurm-burst-root ] && findmnt -n /etc/hosts >/dev/null 2>&1 || return 0
	grep -q "^$LAB_NET\.1[[:space:]]" /etc/hosts && return 0
	for ((i = 1; i < 255; i++)); do
		printf '%s.%d\tlab-%s-%d\n' "$LAB_NET" "$i" "${LAB_NET//./-}" "$i"
	done >>/etc/hosts
}

lab_record() { echo "$1 $2" >>"$LAB/pids"; }   # KIND PID

lab_wait_file() {   # FILE SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

lab_munge() {
	mkdir -p "$LAB/munge"
	chmod 755 "$LAB/munge"
	mungekey -c -b 1024 -k "$LAB/munge/munge.key" >/dev/null 2>&1 || return 1
	chmod 600 "$LAB/munge/munge.key"
	munged --key-file="$LAB/munge/munge.key" --socket="$LAB/munge/munge.sock" \
		--pid-file="$LAB/munge/munged.pid" --log-file="$LAB/log/munged.log" \
		--seed-file="$LAB/munge/munged.seed" --num-threads=4 || return 1
	lab_wait_file "$LAB/munge/munged.pid" 5 || return 1
	lab_record munged "$(cat "$LAB/munge/munged.pid")"
}

# The bridge gets an address of its own (locally administered, from the
# lab's /24): a bridge without one takes the lowest address of its ports
# and changes it as instances' veths come and go, and the nodes' ARP
# entries for $LAB_NET.1 then point at an address the bridge no longer
# answers to. Their SYNs to slurmctld or the agent go unanswered until the
# entry is probed again (5 s or more, then the SYN's own backoff): a
# slurmd registered 13 s late, a report sent 2 min late (test_standby).
# (lab_pick_net made the bridge, with that address: it is the lab's claim)
lab_bridge() {
	ip addr add "$LAB_NET.1/24" dev "$LAB_BR" || return 1
	ip link set "$LAB_BR" up || return 1
	ip link set lo up 2>/dev/null || true
}

# The installed Slurm's release as a number: 2205 for 22.05.8, 2411 for 24.11.5
lab_slurm_release() {
	slurmctld -V 2>/dev/null | awk '{ split($2, v, "."); printf "%d%02d\n", v[1], v[2] }'
}

lab_slurm_conf() {   # writes $LAB/etc/slurm.conf (and cgroup.conf, plugstack.conf)
	local nodes=$1 extra=${2:-} rel compat=
	# the keys that differ between releases (doc/compat.md): NoAddrCache is
	# defunct since 23.11; cloud nodes are shown without PrivateData=cloud
	# since 23.02
	rel=$(lab_slurm_release)
	[ "${rel:-0}" -lt 2311 ] && compat="CommunicationParameters=NoAddrCache"
	[ "${rel:-0}" -lt 2302 ] && compat="$compat
PrivateData=cloud"
	cat >"$LAB/etc/slurm.conf" <<CONF
ClusterName=lab$$
SlurmctldHost=localhost($LAB_NET.1)
SlurmctldPort=$LAB_PORT_CTLD
SlurmdPort=$LAB_PORT_SLURMD
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$LAB/munge/munge.sock
StateSaveLocation=$LAB/state
SlurmdSpoolDir=$LAB/spool/%n
SlurmdPidFile=$LAB/pid/slurmd-%n.pid
SlurmdLogFile=$LAB/log/slurmd-%n.log
SlurmctldPidFile=$LAB/pid/slurmctld.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(lab_accounting_conf)
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0
PlugStackConfig=$LAB/etc/plugstack.conf
ReturnToService=2
MailProg=/bin/true
SlurmctldParameters=idle_on_node_suspend,power_save_interval=1
$compat
TreeWidth=65533
MpiDefault=none
SlurmctldDebug=info
SlurmdDebug=info
DebugFlags=Power
$extra
$nodes
CONF
	echo "CgroupPlugin=cgroup/v1" >"$LAB/etc/cgroup.conf"
	[ -e "$LAB/etc/plugstack.conf" ] || : >"$LAB/etc/plugstack.conf"
}

lab_accounting_conf() {
	if [ -n "${LAB_DBD:-}" ]; then
		echo "AccountingStorageType=accounting_storage/slurmdbd"
		echo "AccountingStorageHost=localhost"
		echo "AccountingStoragePort=$LAB_PORT_DBD"
		# the munge socket of connections to slurmdbd (AuthInfo's is not used for them)
		echo "AccountingStoragePass=$LAB/munge/munge.sock"
	else
		echo "AccountingStorageType=accounting_storage/none"
	fi
}

# lab_dbd: job accounting as a site has it, all under $LAB: a MariaDB of its
# own (its datadir, a unix socket and no TCP at all, run as the mysql user),
# slurmdbd on it (its slurmdbd.conf beside slurm.conf, 0600 and owned by
# SlurmUser; it listens on $LAB_PORT_DBD, picked free with the lab's ports,
# on every address of the host's namespace as slurmctld does)
# and the lab's cluster added with sacctmgr. Before slurmctld starts
# (lab_up does it when LAB_DBD is set). slurmdbd finds the socket through
# MYSQL_UNIX_PORT, which the MariaDB client library reads: slurmdbd.conf
# has no key for it.
lab_dbd() {
	local my="$LAB/mysql" i
	mkdir -p "$my/data" "$my/run" || return 1
	chown -R mysql:mysql "$my" || return 1
	chmod 700 "$my"
	# no system tables (mariadb-install-db takes 4 s or more here) and so
	# no privileges: --skip-grant-tables, which only the socket, in a
	# directory only mysql and root enter, reaches; small and not durable
	setsid mariadbd --no-defaults --user=mysql --datadir="$my/data" --socket="$my/run/mysqld.sock" \
		--pid-file="$my/run/mysqld.pid" --skip-networking --skip-grant-tables \
		--log-error="$my/mariadb.log" --innodb-buffer-pool-size=32M --innodb-log-file-size=8M \
		--innodb-flush-log-at-trx-commit=0 --skip-innodb-doublewrite --innodb-lock-wait-timeout=900 \
		</dev/null >/dev/null 2>&1 &
	lab_record mariadbd $!
	for ((i = 0; i < 300; i++)); do
		[ -S "$my/run/mysqld.sock" ] && break
		sleep 0.1
	done
	[ -S "$my/run/mysqld.sock" ] || { lab_log "mariadbd did not open its socket"; tail -5 "$my/mariadb.log" >&2; return 1; }
	(
		umask 077
		cat >"$LAB/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$LAB/munge/munge.sock
DbdHost=localhost
DbdPort=$LAB_PORT_DBD
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=$LAB/pid/slurmdbd.pid
LogFile=$LAB/log/slurmdbd.log
DebugLevel=info
CONF
	)
	MYSQL_UNIX_PORT="$my/run/mysqld.sock" SLURM_CONF="$LAB/etc/slurm.conf" slurmdbd ||
		{ lab_log "slurmdbd failed"; tail -5 "$LAB/log/slurmdbd.log" >&2; return 1; }
	lab_wait_file "$LAB/pid/slurmdbd.pid" 10 || { lab_log "slurmdbd did not start"; tail -20 "$LAB/log/slurmdbd.log" >&2; return 1; }
	lab_record slurmdbd "$(cat "$LAB/pid/slurmdbd.pid")"
	# it answers once it made its tables (a few seconds at most; 30 s bound)
	local end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ]; do
		timeout 5 sacctmgr -i add cluster "lab$$" >"$LAB/log/sacctmgr.log" 2>&1 && return 0
		sleep 0.1
	done
	lab_log "slurmdbd does not take the cluster lab$$"
	cat "$LAB/log/sacctmgr.log" >&2
	return 1
}

lab_ctld() {
	slurmctld -f "$LAB/etc/slurm.conf" -i || return 1
	lab_wait_file "$LAB/pid/slurmctld.pid" 10 || { lab_log "slurmctld did not start"; tail -20 "$LAB/log/slurmctld.log" >&2; return 1; }
	lab_record slurmctld "$(cat "$LAB/pid/slurmctld.pid")"
	local i
	for ((i = 0; i < 100; i++)); do
		scontrol ping 2>/dev/null | grep -q 'is UP' && return 0
		sleep 0.1
	done
	# what a stall of this kind needs to be understood: is it alive, who
	# holds its port, what it logged
	local pid state=gone
	pid=$(cat "$LAB/pid/slurmctld.pid" 2>/dev/null)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && state=alive
	lab_log "slurmctld does not answer (pid ${pid:-?} $state; port $LAB_PORT_CTLD: $(ss -Hltnp "sport = :$LAB_PORT_CTLD" 2>/dev/null | tr -s ' ' | head -3))"
	tail -20 "$LAB/log/slurmctld.log" >&2
	return 1
}

# lab_up: SLURM_CONF_NODES (NodeName/PartitionName lines) and
# SLURM_CONF_EXTRA (ResumeProgram=... etc) may be set by the caller, and a
# function lab_pre_ctld runs (if defined) just before slurmctld starts.
lab_up() {
	local pkgs
	[ "$(id -u)" -eq 0 ] || { lab_log "must run as root"; return 1; }
	# not under /tmp: a node has a private /tmp and must still see the lab
	# (its slurm.conf, munge socket, plugin copy, StateDir); and never in
	# the source or build tree, whose path may hold a blank
	LAB=$(mktemp -d /var/tmp/burst-lab.XXXXXX) || return 1
	# the nodes' consoles and slurmd logs, for a test's diagnostics
	# (TAP_DIAG is expanded when a test fails, before the teardown)
	LAB_NODE_LOGS="$LAB/burst/nodes/*/node.log $LAB/log/slurmd-*.log"
	chmod 755 "$LAB"
	mkdir -p "$LAB"/{etc,log,state,spool,pid,run}
	: >"$LAB/pids"
	export LAB SLURM_CONF="$LAB/etc/slurm.conf"
	# (the traps first: lab_pick_net makes the bridge that lab_down deletes)
	trap lab_down EXIT
	trap 'lab_down; exit 130' INT TERM
	lab_pick_net || return 1
	lab_ptr_names
	lab_munge || { lab_log "munged failed"; return 1; }
	lab_bridge || { lab_log "bridge $LAB_BR failed"; return 1; }
	lab_slurm_conf "${SLURM_CONF_NODES:-NodeName=burst-[1-4] CPUs=1 State=CLOUD
PartitionName=burst Nodes=burst-[1-4] State=UP Default=YES}" "${SLURM_CONF_EXTRA:-}"
	# the caller's last words before slurmctld starts (job_submit.lua, plugstack.conf)
	if declare -F lab_pre_ctld >/dev/null; then
		lab_pre_ctld || return 1
	fi
	if [ -n "${LAB_DBD:-}" ]; then
		lab_dbd || return 1
	fi
	lab_ctld || return 1
}

lab_pid_alive() {   # a zombie is not alive (kill -0 says it is)
	[ -r "/proc/$1/stat" ] && ! awk '{ exit ($3 == "Z") ? 0 : 1 }' "/proc/$1/stat" 2>/dev/null
}

lab_down() {
	local kind pid i
	[ -n "${LAB:-}" ] && [ -d "$LAB" ] || return 0
	trap - EXIT INT TERM
	# since 23.11 'scontrol reconfigure' makes slurmctld exec a new one
	# (another pid, in its pid file): the one running now is stopped too
	[ -s "$LAB/pid/slurmctld.pid" ] && lab_record slurmctld "$(cat "$LAB/pid/slurmctld.pid")"
	# slurmctld first (or it may resume nodes during teardown), munged last
	for kind in burst-agent slurmctld slurmd node slurmdbd mariadbd munged; do
		while read -r k pid; do
			[ "$k" = "$kind" ] || continue
			lab_pid_alive "$pid" && kill "$pid" 2>/dev/null
		done <"$LAB/pids"
		for ((i = 0; i < 30; i++)); do
			local alive=0
			while read -r k pid; do
				[ "$k" = "$kind" ] && lab_pid_alive "$pid" && alive=1
			done <"$LAB/pids"
			[ $alive -eq 0 ] && break
			sleep 0.1
		done
		while read -r k pid; do
			[ "$k" = "$kind" ] && lab_pid_alive "$pid" && kill -9 "$pid" 2>/dev/null
		done <"$LAB/pids"
	done
	# slurmds started by others (the agent's local provider) are found by pid file
	for pid in "$LAB"/pid/slurmd-*.pid; do
		[ -e "$pid" ] && lab_pid_alive "$(cat "$pid")" && kill -9 "$(cat "$pid")" 2>/dev/null
	done
	# namespaces of the agent's local provider: burst-<ClusterName>-<node>
	for name in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^burst-lab$$-"); do
		pid=$(ip netns pids "$name" 2>/dev/null)
		[ -n "$pid" ] && kill -9 $pid 2>/dev/null
		ip netns del "$name" 2>/dev/null
	done
	while read -r k name; do
		case "$k" in
		netns) ip netns del "$name" 2>/dev/null ;;
		bridge) ip link del "$name" 2>/dev/null ;;
		esac
	done <"$LAB/pids"
	if [ -n "${LAB_KEEP:-}" ]; then
		lab_log "kept $LAB"
	else
		rm -rf "$LAB"
	fi
	LAB=
}

# wait until job $1 is in state $2 (regex), at most $3 seconds
lab_wait_job() {
	local i st
	for ((i = 0; i < $3 * 10; i++)); do
		st=$(squeue -h -t all -j "$1" -o %T 2>/dev/null)
		[[ "$st" =~ ^($2)$ ]] && return 0
		sleep 0.1
	done
	lab_log "job $1 is '$st', not '$2' after $3 s"
	return 1
}

# A node's state the way sinfo -o %T writes it (idle~ powered down, idle#
# powering up, idle% powering down, drain/down with their flags), from
# scontrol: sinfo's mixed/idle comes from the select plugin and can lag
# behind (22.05 shows a powered-down idle node as "mixed~" after a job
# that had a PrologSlurmctld).
lab_node_state() {
	scontrol show node -o "$1" 2>/dev/null | awk '{
		for (i = 1; i <= NF; i++) if ($i ~ /^State=/) st = substr($i, 7)
		n = split(st, f, "+"); s = tolower(f[1]); sfx = ""
		for (i = 2; i <= n; i++) {
			if (f[i] == "POWERED_DOWN") sfx = "~"
			else if (f[i] == "POWERING_UP") sfx = "#"
			else if (f[i] == "POWERING_DOWN") sfx = "%"
			else if (f[i] == "DRAIN" && s != "down") s = "drain"
		}
		print s sfx }'
}

lab_wait_node() {   # NODE REGEX SECONDS
	local i st
	for ((i = 0; i < $3 * 10; i++)); do
		st=$(lab_node_state "$1")
		[[ "$st" =~ ^($2)$ ]] && return 0
		sleep 0.1
	done
	lab_log "node $1 is '$st', not '$2' after $3 s"
	return 1
}

# ---- slurm-burst in the lab (src and build must be set) ----

# lab_burst_conf: burst.conf for the agent's local provider on the lab's
# bridge, with the lines on stdin (contracts, node sets, settings) after the
# common ones; then the node and partition lines from 'burstctl slurm-conf'
# into slurm.conf (the first partition is the default), the SPANK plugin in
# plugstack.conf and job_submit.lua beside slurm.conf. For lab_pre_ctld.
# LAB_PROVIDER_EXTRA: more keys for the local Provider= line (Regions=...).
lab_burst_conf() {
	local so
	cp "$src/contrib/job_submit.lua" "$LAB/etc/job_submit.lua" || return 1
	{
		echo "ClusterName=lab$$"
		echo "StateDir=$LAB/burst"
		echo "CatalogDir=\"$src/share/catalog\""
		echo "JoinPort=$((LAB_PORT_CTLD + 300))"
		echo "Provider=local Bridge=$LAB_BR Address=$LAB_NET.1/24${LAB_PROVIDER_EXTRA:+ $LAB_PROVIDER_EXTRA}"
		cat
	} >"$LAB/etc/burst.conf"
	"$build/burstctl/burstctl" --config "$LAB/etc/burst.conf" slurm-conf --nodes-only \
		| sed '0,/^PartitionName=/s/^\(PartitionName=.*\)$/\1 Default=YES/' >>"$LAB/etc/slurm.conf" || return 1
	lab_plugstack
}

# lab_plugin [NAME]: a SPANK plugin (default spank_cloud_contract.so) the way
# the lab's nodes load it, as a copy in $LAB/lib (made once; prints its
# path). Not the build tree's: a local instance has a private /tmp, which
# hides a tree cloned under /tmp from its slurmd, as an installed plugin
# would never be hidden; and plugstack.conf splits its lines at blanks, with
# no quoting, so a path with a space cannot be written there.
# The contract plugin comes with the module it loads from its own directory
# when --cloud-contract is given (cloud_contract_decide.so), as installed.
lab_plugin() {
	local name=${1:-spank_cloud_contract.so} f
	local files=$name
	[ "$name" = spank_cloud_contract.so ] && files="cloud_contract_decide.so $name"
	for f in $files; do
		[ -e "$LAB/lib/$f" ] && continue
		mkdir -p "$LAB/lib" && cp "$build/plugins/spank/.libs/$f" "$LAB/lib/$f.new" &&
			mv -f "$LAB/lib/$f.new" "$LAB/lib/$f" ||
			{ lab_log "cannot copy the SPANK plugin $build/plugins/spank/.libs/$f to $LAB/lib"; return 1; }
	done
	echo "$LAB/lib/$name"
}

# plugstack.conf as the admin guide has it: the submit-time plugin, and an
# include of the node-local directory where burst node images (only) list
# the admission plugin (in the lab every node sees that directory)
lab_plugstack() {
	local so adm
	so=$(lab_plugin) && adm=$(lab_plugin spank_burst_admission.so) || return 1
	mkdir -p "$LAB/node-plugstack.d" || return 1
	echo "required $adm conf=$LAB/etc/burst.conf" >"$LAB/node-plugstack.d/burst-admission.conf" || return 1
	{
		echo "required $so conf=$LAB/etc/burst.conf"
		echo "include $LAB/node-plugstack.d/*.conf"
	} >"$LAB/etc/plugstack.conf"
}

# lab_node_image: burst-node the way a cloud instance's image has it, as a
# copy in $LAB/image with its accelerator table beside it (made once; prints
# the binary's path; give it BURST_PCI_TABLE=$LAB/image/accelerators.csv, or
# a build's burst-node looks in the source tree), for the tests that emulate
# cloud-init in namespaces: like a local instance, such an instance has a
# private /tmp, which hides a tree under /tmp.
lab_node_image() {
	local bin="$build/burst-node/burst-node" dst="$LAB/image/burst-node"
	if [ ! -e "$dst" ]; then
		mkdir -p "$LAB/image" && cp "$src/share/pci/accelerators.csv" "$LAB/image/accelerators.csv" &&
			cp "$bin" "$dst.new" && mv -f "$dst.new" "$dst" ||
			{ lab_log "cannot copy $bin and its accelerator table to $LAB/image"; return 1; }
	fi
	echo "$dst"
}

# lab_agent_start [BURST_NODE]: start burst-agent on the lab's burst.conf
# (its log: $LAB/log/agent.log), record it, wait for its socket; AGENT_PID.
lab_agent_start() {
	local i n0
	# this start's own "started:" line (after its sockets are open), not the
	# socket file a killed agent left behind
	n0=$(grep -c 'burst-agent: info: started: ' "$LAB/log/agent.log" 2>/dev/null)
	SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
		BURST_NODE="${1:-$build/burst-node/burst-node}" \
		"$build/burst-agent/burst-agent" -c "$LAB/etc/burst.conf" -L "$LAB/log/agent.log" &
	AGENT_PID=$!
	lab_record burst-agent "$AGENT_PID"
	for ((i = 0; i < 100; i++)); do
		# started (it may have ended since: a crash point after its start)
		[ -S "$LAB/burst/agent.sock" ] &&
			[ "$(grep -c 'burst-agent: info: started: ' "$LAB/log/agent.log" 2>/dev/null)" -gt "${n0:-0}" ] && return 0
		if ! kill -0 "$AGENT_PID" 2>/dev/null; then
			lab_log "burst-agent exited before it started"
			return 1
		fi
		sleep 0.1
	done
	lab_log "burst-agent did not start (no socket, or no 'started:' line of its own)"
	return 1
}

# lab_burst_slurm_conf RESUME_TIMEOUT SUSPEND_TIMEOUT SUSPEND_TIME: the
# slurm.conf lines of slurm-burst's power saving and job routing (for
# SLURM_CONF_EXTRA), with the build's programs (quoted: slurm.conf takes
# "..." around a value with blanks, and the tree may be in such a path).
lab_burst_slurm_conf() {
	local ps="$build/plugins/power_save"
	cat <<CONF
ResumeProgram="$ps/burst-resume"
SuspendProgram="$ps/burst-suspend"
ResumeFailProgram="$ps/burst-resume-fail"
PrologSlurmctld="$ps/burst-prolog-slurmctld"
ResumeTimeout=$1
SuspendTimeout=$2
SuspendTime=$3
JobSubmitPlugins=lua
CONF
}

# lab_relaunched NODE: the agent launched NODE again because slurmctld did
# not take its slurmd in within RegisterTimeout (burst-agent's registration
# check). Its root cause in the lab is fixed: a relaunch fails a test
# (lab_no_relaunch) unless the test injects the fault itself and asserts it.
lab_relaunched() {
	grep -q "$1: admitted -> terminating: slurmd of .* did not register within" "$LAB/log/agent.log"
}
# lab_no_relaunch [LOG...]: no node was launched again for a slurmd that
# did not register; the agent's lines of any that was are in $LAB/relaunched
# (for the test point's diagnostics)
lab_no_relaunch() {
	[ $# -gt 0 ] || set -- "$LAB/log/agent.log"
	grep -h ": admitted -> terminating: slurmd of .* did not register within" "$@" >"$LAB/relaunched" 2>/dev/null
	[ ! -s "$LAB/relaunched" ]
}

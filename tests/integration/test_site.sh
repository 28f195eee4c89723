#!/usr/bin/env bash
# test_site.sh - the agent at a site-shaped network. slurmctld, munged, the
# agent and moto_server (the cloud's API) run in an "on-premises" network
# namespace; EC2 instances (moto's, their user data run as cloud-init
# would) live in a separate "cloud" namespace network, reached through a
# router namespace, first routed, then with source NAT on the router.
# First with a burst.conf that has only Provider=aws: jobs burst across the
# router, each node's NodeAddr is its instance's private IP (not where its
# join report came from: behind NAT, the router; only the join port's
# connections are NATed, as slurmd's must not be), nodes suspend and their
# instances are terminated, the reconciler terminates an orphan. Then with
# aws and local providers, JoinListen= on two addresses: a job on a local
# instance (on the on-premises bridge) runs too. Nothing here uses the
# host's own addresses: only namespaces the test makes and their loopback.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"

# the site's networks (inside the test's namespaces only)
OP_ADDR=10.197.0.5 RT_OP=10.197.0.1      # on-premises uplink: the agent's host, the router
CL_NET=10.198.0.0/24 RT_CL=10.198.0.1    # the cloud subnet (a VPC's), the router there

if [ "${BURST_SITE_NS:-}" = "" ]; then
	# outside: make the three namespaces and the links between them, run
	# this script again inside the on-premises one (its network only)
	[ "$(id -u)" -eq 0 ] || bail "must run as root"
	command -v nft >/dev/null || bail "no nft: apt-get install nftables"
	P="bsite$$"
	OP="$P-onprem" RT="$P-router" CL="$P-cloud"
	cleanup() { for n in "$OP" "$RT" "$CL"; do ip netns del "$n" 2>/dev/null; done; }
	trap cleanup EXIT
	ip netns add "$OP" && ip netns add "$RT" && ip netns add "$CL" || bail "cannot make namespaces"
	for n in "$OP" "$RT" "$CL"; do ip -n "$n" link set lo up; done
	# on-premises <-> router
	ip link add "${P}a" netns "$OP" type veth peer name rt0 netns "$RT" &&
		ip -n "$OP" link set "${P}a" name up0 &&
		ip -n "$OP" addr add "$OP_ADDR/24" dev up0 && ip -n "$OP" link set up0 up &&
		ip -n "$RT" addr add "$RT_OP/24" dev rt0 && ip -n "$RT" link set rt0 up || bail "cannot link on-premises and router"
	# router <-> the cloud's bridge (instances plug into it)
	ip link add "${P}b" netns "$RT" type veth peer name cl0 netns "$CL" &&
		ip -n "$RT" link set "${P}b" name rt1 &&
		ip -n "$RT" addr add "$RT_CL/24" dev rt1 && ip -n "$RT" link set rt1 up &&
		ip -n "$CL" link add brc type bridge && ip -n "$CL" link set brc up &&
		ip -n "$CL" link set cl0 master brc && ip -n "$CL" link set cl0 up || bail "cannot link router and cloud"
	ip netns exec "$RT" sysctl -qw net.ipv4.ip_forward=1 || bail "cannot turn forwarding on in the router"
	ip -n "$OP" route add "$CL_NET" via "$RT_OP" || bail "no route to the cloud"
	BURST_SITE_NS="$OP $RT $CL" nsenter --net="/run/netns/$OP" bash "$0"
	exit $?
fi

# ---- inside the on-premises namespace ----
read -r OP RT CL <<<"$BURST_SITE_NS"
. "$src/tests/integration/ec2_peers.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"
ip -4 addr show | grep -q "inet $OP_ADDR/" || bail "not in the on-premises namespace"

aux=$(mktemp -d /var/tmp/test_site.XXXXXX)
chmod 755 "$aux"
aux_down() { moto_down; rm -rf "$aux"; }
moto_up "$aux" || { aux_down; bail "moto_server did not start"; }
subnet=$(moto_subnet "$CL_NET" 2>"$aux/subnet.err") || { cat "$aux/subnet.err" >&2; aux_down; bail "no subnet in moto"; }
umask 077
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$MOTO_AK" "$MOTO_SK" >"$aux/creds"
umask 022

SLURM_CONF_NODES="# nodes: below"
SLURM_CONF_EXTRA="$(lab_burst_slurm_conf 90 10 6)"
lab_pre_ctld() {
	jp=$((LAB_PORT_CTLD + 300))
	# the aws-only burst.conf: the agent listens everywhere (the default
	# without a local provider), instances are told the on-premises address
	cat >"$LAB/etc/burst-aws.conf" <<CONF
ClusterName=lab$$
StateDir=$LAB/burst
CatalogDir="$src/share/catalog"
JoinPort=$jp
JoinAddress=$OP_ADDR:$jp
RejectCooldown=5
ReconcileInterval=1
OrphanGrace=3
AllowInsecureEndpoint=yes
Provider=aws Type=aws Regions=us-east-1 Endpoint=$MOTO_EP CredentialsFile=$aux/creds ImageId=$MOTO_AMI SubnetId=$subnet
Contract=small node_vcpus_count>=2 accelerator_count=0
NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=aws InstanceTypes=t3.micro
CONF
	# aws and local: JoinListen= on the local bridge and the uplink
	{
		sed '/^NodeSet=/d' "$LAB/etc/burst-aws.conf"
		echo "JoinListen=$LAB_NET.1,$OP_ADDR"
		echo "Provider=local Bridge=$LAB_BR Address=$LAB_NET.1/24"
		echo "NodeSet=cloud Nodes=burst-[1-2] Partition=burst Providers=aws InstanceTypes=t3.micro"
		echo "Contract=onprem node_provider=local accelerator_count=0"
		echo "NodeSet=here Nodes=burst-3 Partition=burst Providers=local InstanceTypes=local.host"
	} >"$LAB/etc/burst.conf"
	cp "$src/contrib/job_submit.lua" "$LAB/etc/job_submit.lua" || return 1
	"$burstctl" --config "$LAB/etc/burst.conf" slurm-conf --nodes-only \
		| sed '0,/^PartitionName=/s/^\(PartitionName=.*\)$/\1 Default=YES/' >>"$LAB/etc/slurm.conf" || return 1
	lab_plugstack
}
lab_up || { aux_down; bail "the lab did not start"; }
trap 'lab_down; aux_down' EXIT
trap 'lab_down; aux_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
# the cloud reaches the on-premises networks (slurmctld is on the bridge) through the router
ip -n "$RT" route add "$LAB_NET.0/24" via "$OP_ADDR" || bail "no route from the router to the lab"

"$burstctl" --config "$LAB/etc/burst-aws.conf" check-config >"$LAB/check.out" 2>&1
ok $? "burstctl check-config: a burst.conf with only Provider=aws is fine" "$LAB/check.out"
lab_agent_start_conf() {   # CONF
	SLURM_CONF="$SLURM_CONF" BURST_LIBEXECDIR="$src/burst-agent/drivers" \
		BURST_NODE="$build/burst-node/burst-node" \
		"$agent" -c "$1" -L "$LAB/log/agent.log" &
	AGENT_PID=$!
	lab_record burst-agent "$AGENT_PID"
	for ((i = 0; i < 50; i++)); do [ -S "$LAB/burst/agent.sock" ] && return 0; sleep 0.1; done
	return 1
}
lab_agent_start_conf "$LAB/etc/burst-aws.conf"
ok $? "the agent starts with only an aws provider" "$LAB/log/agent.log"
grep -q "node reports on 0.0.0.0:$jp" "$LAB/log/agent.log"
ok $? "... listening for node reports on every address (no local bridge)" "$LAB/log/agent.log"

export AWS_ACCESS_KEY_ID=$MOTO_AK AWS_SECRET_ACCESS_KEY=$MOTO_SK
unset AWS_SESSION_TOKEN AWS_PROFILE
ec2py() { "$MOTO_PY" - "$MOTO_EP" "$@"; }
instance_of() {   # NODE: the instance of its last launch, from the agent's log
	grep -o "$1: launching -> booting: i-[0-9a-f]*" "$LAB/log/agent.log" | tail -1 | awk '{print $NF}'
}
# an EC2 instance, emulated: a namespace on the cloud's bridge with the
# private IP EC2 gave it and the router as gateway; its user data runs as
# cloud-init would, with its own hostname and /tmp
emu() {   # NODE INSTANCE
	local ns="$OP-i-$1" hv ip ud="$LAB/ud-$2.sh"
	ip=$(moto_ip "$2") && [ -n "$ip" ] || return 1
	ec2py "$2" >"$ud" <<'PY' || return 1
import base64, sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
a = ec2.describe_instance_attribute(InstanceId=sys.argv[2], Attribute="userData")
sys.stdout.write(base64.b64decode(a["UserData"]["Value"]).decode())
PY
	hv="vi$(printf %s "$ns" | md5sum | cut -c1-10)"
	ip netns add "$ns" || return 1
	echo "netns $ns" >>"$LAB/pids"
	ip link add "$hv" netns "$CL" type veth peer name eth0 netns "$ns" &&
		ip -n "$CL" link set "$hv" master brc up &&
		ip -n "$ns" addr add "$ip/24" dev eth0 && ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up && ip -n "$ns" route add default via "$RT_CL" || return 1
	mkdir -p "$LAB/emu/$1/tmp" && chmod 1777 "$LAB/emu/$1/tmp"
	# the join token: its tag, as its metadata serves it (in the environment)
	BURST_JOIN_TOKEN=$(moto_join_token "$2") setsid env --default-signal ip netns exec "$ns" unshare -m -u --propagation private sh -c \
		'hostname "$0" && mount --bind "$1/tmp" /tmp && mount -t tmpfs -o mode=1777,nosuid,nodev burst-shm /dev/shm && shift && exec "$@"' "$1" "$LAB/emu/$1" \
		env BURST_LAUNCH_INDEX=0 BURST_INSTANCE_ID="$2" \
		BURST_NODE_BIN="$(lab_node_image)" BURST_PCI_TABLE="$LAB/image/accelerators.csv" BURST_STATE_DIR="$LAB/burst" \
		BURST_MUNGE_SOCKET="$LAB/munge/munge.sock" SLURMD_CONF="$SLURM_CONF" PATH="$PATH" \
		sh "$ud" </dev/null >>"$LAB/emu/$1/node.log" 2>&1 &
	disown $!
	return 0
}
unemu() {   # NODE: the instance is gone (its namespace and processes)
	local ns="$OP-i-$1" pids
	pids=$(ip netns pids "$ns" 2>/dev/null)
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	return 0
}
# run JOB on NODE: start every new instance of NODE (the registration
# check may launch it again) until JOB is COMPLETED
follow() {   # NODE JOB SECONDS
	local i st cur seen=" "
	for ((i = 0; i < $3 * 10; i++)); do
		st=$(squeue -h -t all -j "$2" -o %T 2>/dev/null)
		[ "$st" = COMPLETED ] && return 0
		cur=$(instance_of "$1")
		if [ -n "$cur" ] && [[ "$seen" != *" $cur "* ]]; then
			unemu "$1"
			emu "$1" "$cur" || echo "# emulating $cur failed"
			seen+="$cur "
		fi
		sleep 0.1
	done
	return 1
}
node_addr() { scontrol show node "$1" | grep -o 'NodeAddr=[^ ]*' | cut -d= -f2; }
state() { ec2py "$1" <<'PY'
import sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
print(ec2.describe_instances(InstanceIds=[sys.argv[2]])["Reservations"][0]["Instances"][0]["State"]["Name"])
PY
}
wait_terminated() {   # INSTANCE SECONDS
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		[ "$(state "$1" 2>/dev/null)" = terminated ] && return 0
		sleep 0.2
	done
	return 1
}

# --- 1. routed: a job bursts into the cloud across the router ---
id=$(sbatch --parsable --cloud-contract=small -w burst-1 -o "$LAB/job1.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch -w burst-1 (aws)" "$LAB/err"
follow burst-1 "$id" 90
ok $? "burst-1's instance joined from the cloud network, the job completed" "$LAB/log/agent.log" "$LAB/emu/burst-1/node.log" "$LAB/log/slurmctld.log"
i1=$(instance_of burst-1) ip1=$(moto_ip "$i1")
[ "$(node_addr burst-1)" = "$ip1" ] && [[ "$ip1" == 10.198.0.* ]]
ok $? "burst-1's NodeAddr is its instance's private IP ($(node_addr burst-1), EC2: $ip1)"
wait_terminated "$i1" 60; ok $? "after SuspendTime its instance is terminated ($i1)" "$LAB/log/agent.log"
unemu burst-1
lab_wait_node burst-1 'idle~' 30; ok $? "burst-1 is powered down ($(lab_node_state burst-1))"

# --- 2. source NAT on the router: the join reports come from the router ---
# Only the connections to the agent's join port: slurmctld takes a cloud
# node's NodeAddr from where slurmd's registration came from (always since
# 23.11; on 22.05 with cloud_reg_addrs, which burstctl slurm-conf writes),
# so slurmd's own traffic to slurmctld must not be source-NATed (the admin
# guide, "The network"); the agent's join port may be.
ip netns exec "$RT" nft -f - <<NFT || bail "cannot set up NAT on the router"
table ip site {
	chain post {
		type nat hook postrouting priority 100;
		ip saddr $CL_NET oifname "rt0" tcp dport $jp counter masquerade
	}
}
NFT
id=$(sbatch --parsable --cloud-contract=small -w burst-2 -o "$LAB/job2.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch -w burst-2 (aws, behind NAT)" "$LAB/err"
follow burst-2 "$id" 90
ok $? "burst-2's instance joined through the NAT, the job completed" "$LAB/log/agent.log" "$LAB/emu/burst-2/node.log" "$LAB/log/slurmctld.log"
natted=$(ip netns exec "$RT" nft list chain ip site post | grep -o 'packets [0-9]*' | awk '{print $2}')
[ "${natted:-0}" -gt 0 ]; ok $? "its join connections were source-NATed by the router (${natted:-0} connections)"
i2=$(instance_of burst-2) ip2=$(moto_ip "$i2")
[ "$(node_addr burst-2)" = "$ip2" ] && [ "$ip2" != "$RT_OP" ]
ok $? "burst-2's NodeAddr is its private IP ($(node_addr burst-2)), not the router's $RT_OP its join report came from"
wait_terminated "$i2" 60; ok $? "after SuspendTime its instance is terminated ($i2)" "$LAB/log/agent.log"
unemu burst-2

# --- 3. the reconciler: an instance of this cluster that no node owns ---
orphan=$(ec2py "$MOTO_AMI" "lab$$" "$subnet" <<'PY'
import sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
r = ec2.run_instances(ImageId=sys.argv[2], MinCount=1, MaxCount=1, InstanceType="t3.micro", SubnetId=sys.argv[4],
                      TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "burst:cluster", "Value": sys.argv[3]}]}])
print(r["Instances"][0]["InstanceId"])
PY
)
ok $? "an instance tagged with this cluster, made behind the agent's back: $orphan"
wait_terminated "$orphan" 30; ok $? "the reconciler terminated the orphan" "$LAB/log/agent.log"

# --- 4. aws and local providers; JoinListen= on two addresses ---
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
"$burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1
ok $? "burstctl check-config: aws and local, JoinListen= on the bridge and the uplink" "$LAB/check.out"
lab_agent_start_conf "$LAB/etc/burst.conf"
ok $? "the agent starts again with both providers" "$LAB/log/agent.log"
grep -q "node reports on $LAB_NET.1:$jp, $OP_ADDR:$jp" "$LAB/log/agent.log"
ok $? "... listening on both addresses" "$LAB/log/agent.log"
id=$(sbatch --parsable --cloud-contract=onprem -w burst-3 -o "$LAB/job3.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch -w burst-3 (local)" "$LAB/err"
lab_wait_job "$id" COMPLETED 60
ok $? "the job ran on a local instance on the on-premises bridge" "$LAB/log/agent.log" "$LAB/log/slurmctld.log"
[ "$(node_addr burst-3)" = "$LAB_NET.11" ]
ok $? "burst-3's NodeAddr is the local provider's address for it ($(node_addr burst-3))"
id=$(sbatch --parsable --cloud-contract=small -w burst-1 -o "$LAB/job4.out" --wrap 'hostname' 2>"$LAB/err")
ok $? "sbatch -w burst-1 (aws) beside it" "$LAB/err"
follow burst-1 "$id" 90
ok $? "an aws instance still joins through the NAT and runs its job" "$LAB/log/agent.log" "$LAB/emu/burst-1/node.log"

lab_down
aux_down
done_testing

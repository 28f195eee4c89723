#!/usr/bin/env bash
# tests/cli/test_local_stop.sh - the local provider's stop and start (a warm
# pool's verbs, burst-agent/drivers/driver_local.c and burst-local-instance
# freeze|thaw) through the driver itself (tests/unit/aws_driver_cli), on a
# network namespace of this test's own holding two processes: stop freezes
# every process in it and keeps it, the listing says stopped; start resumes
# them, the listing says running; terminate removes a stopped instance
# whole; stop and start of an instance that is gone are permanent.
# Root (network namespaces); no Slurm, no bridge.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
cli="$build/tests/unit/aws_driver_cli"
[ -x "$cli" ] || bail "no $cli (make check builds it)"
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (network namespaces)"
	exit 0
fi

cluster="lstop$$"
ns="burst-$cluster-b-1"
# the local provider refuses a StateDir under /tmp (its instances have their own)
sd=$(mktemp -d /var/tmp/test_local_stop.XXXXXX)
cleanup() {
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -s KILL 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$sd"
}
trap cleanup EXIT
TAP_DIAG="$sd/out"
export BURST_LIBEXECDIR="$src/burst-agent/drivers"

cat >"$sd/burst.conf" <<CONF
ClusterName=$cluster
StateDir=$sd/state
Provider=local Bridge=brnone Address=10.250.79.1/24
NodeSet=n Nodes=b-[1-2] InstanceTypes=local.host WarmPool=1
CONF
mkdir -p "$sd/state/nodes/b-1"
drv() { "$cli" "$sd/burst.conf" local "$@" >"$sd/out" 2>&1; }
state_of() {   # PID: the one-letter state of /proc/PID/status
	sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null
}
listed() { drv list && awk -v n="$1" '$3 == n { print $5 }' "$sd/out"; }

# an instance as burst-local-instance start makes it, without its bridge:
# its namespace, its processes, NODEDIR/instance
ip netns add "$ns"
ok $? "a namespace of the test's own ($ns)"
ip netns exec "$ns" sh -c 'sleep 300 & exec sleep 300' </dev/null >/dev/null 2>&1 &
echo "local-$cluster-b-1-1" >"$sd/state/nodes/b-1/instance"
pids=
for _ in $(seq 50); do
	pids=$(ip netns pids "$ns" 2>/dev/null | sort | tr '\n' ' ')
	[ "$(echo $pids | wc -w)" -eq 2 ] && break
	sleep 0.1
done
[ "$(echo $pids | wc -w)" -eq 2 ]
ok $? "two processes run in it ($pids)"
[ "$(listed b-1)" = running ]
ok $? "the listing says running"

drv stop b-1 "local-$cluster-b-1-1" && [ "$(cat "$sd/out")" = ok ]
ok $? "stop"
st=
for p in $pids; do st="$st$(state_of "$p")"; done
[ "$st" = TT ]
ok $? "... every process of the instance is stopped ($st), none ended"
ip netns list | grep -q "^$ns\b"
ok $? "... its namespace is kept"
[ "$(listed b-1)" = stopped ]
ok $? "... and the listing says stopped"
drv stop b-1 "local-$cluster-b-1-1" && [ "$(cat "$sd/out")" = ok ]
ok $? "stop again is fine"

drv start b-1 "local-$cluster-b-1-1" && [ "$(cat "$sd/out")" = ok ]
ok $? "start"
st=
for p in $pids; do st="$st$(state_of "$p")"; done
[ "$st" = SS ]
ok $? "... its processes run again ($st)"
[ "$(listed b-1)" = running ]
ok $? "... and the listing says running"

drv stop b-1 "local-$cluster-b-1-1" && [ "$(listed b-1)" = stopped ]
ok $? "stopped once more"
t0=$(date +%s%N)
drv terminate b-1 "local-$cluster-b-1-1" && [ "$(cat "$sd/out")" = ok ]
ok $? "terminate of a stopped instance"
ms=$((($(date +%s%N) - t0) / 1000000))
! ip netns list | grep -q "^$ns\b" && [ ! -e "$sd/state/nodes/b-1/stopped" ] && [ -z "$(listed b-1)" ]
ok $? "... removes it whole: namespace, stopped mark, listing"
for p in $pids; do [ ! -e "/proc/$p" ] || [ "$(state_of "$p")" = Z ]; done
ok $? "... and its frozen processes have ended (in $ms ms)"

drv start b-1 "local-$cluster-b-1-1"
[ $? -eq 1 ] && grep -q "^permanent cannot start instance $ns: burst-local-instance: $ns does not exist" "$sd/out"
ok $? "start of an instance that is gone: permanent (never used), saying so"
drv stop b-1 "local-$cluster-b-1-1"
[ $? -eq 1 ] && grep -q "^permanent cannot stop instance $ns" "$sd/out"
ok $? "stop of an instance that is gone: permanent"

done_testing

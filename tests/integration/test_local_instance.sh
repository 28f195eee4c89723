#!/usr/bin/env bash
# test_local_instance.sh - the local provider's instance script
# (burst-agent/drivers/burst-local-instance) when two starts of one instance
# run at once: an agent restarted after a crash sends its launch again while
# the dead agent's start may still run. Whichever start adds the namespace
# launches (exit 0) and the other says it exists (exit 3, which the driver
# takes as "launched already"); neither fails, and one instance runs. It
# used to test for the namespace and then add it, so that the second of two
# starts failed ("ip netns add failed", exit 1) in 18 of 20 rounds, and the
# agent took the node's launch for a permanent failure (a second launch
# intent in test_crash_points). Then: stop is idempotent; a start that
# fails for another reason still fails and leaves nothing.
# burst-matrix: host-only (the local provider's script on this host's network namespaces, no Slurm in it)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
[ "$(id -u)" -eq 0 ] || bail "must run as root (creates namespaces and a bridge)"
inst="$src/burst-agent/drivers/burst-local-instance"
[ -x "$inst" ] || bail "no $inst"
tmp=$(mktemp -d /var/tmp/burst-localinst.XXXXXX) || bail "mktemp"
br="bli$$"
ns="burst-li$$"
cleanup() {
	"$inst" stop "$ns" >/dev/null 2>&1
	ip link del "$br" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
ip link add "$br" type bridge && ip link set "$br" up || bail "cannot make bridge $br"

# the instance runs this marker (its only sleep)
start() {   # OUT: one start, its exit status in OUT.rc
	"$inst" start "$ns" node-a 10.254.7.2/24 "$br" "$tmp/node" -- sleep 300 >"$1.out" 2>"$1.err"
	echo $? >"$1.rc"
}
sleeps() { ip netns pids "$ns" 2>/dev/null | xargs -r ps -o comm= -p | grep -c '^sleep$'; }
# the instance's command starts after its start has returned (setsid, ip
# netns exec, unshare, sh): its count once it runs, waiting up to 10 s
instances() {
	local n end=$((SECONDS + 10))
	while n=$(sleeps); [ "$n" = 0 ] && [ $SECONDS -lt $end ]; do sleep 0.1; done
	echo "$n"
}

rounds=12 good=0 bad=
for i in $(seq "$rounds"); do
	start "$tmp/a" & start "$tmp/b" &
	wait
	rcs="$(cat "$tmp/a.rc") $(cat "$tmp/b.rc")"
	n=$(instances)
	if { [ "$rcs" = "0 3" ] || [ "$rcs" = "3 0" ]; } && [ "$n" = 1 ]; then
		good=$((good + 1))
	else
		bad="$bad round $i: exits $rcs, $n instance(s): $(cat "$tmp/a.err" "$tmp/b.err" | tr '\n' ' ');"
	fi
	"$inst" stop "$ns" >/dev/null 2>&1
done
[ "$good" = "$rounds" ]
ok $? "two starts at once: one launches (0), the other says it exists (3), one instance runs: $good of $rounds rounds${bad:+;$bad}"

! "$inst" exists "$ns"; ok $? "stop removed the namespace"
"$inst" stop "$ns" 2>"$tmp/err"; ok $? "a second stop succeeds (idempotent)" "$tmp/err"

# a start that fails for another reason (no such bridge) still fails, and
# removes what it made
"$inst" start "$ns" node-a 10.254.7.2/24 "no-such-br$$" "$tmp/node" -- sleep 300 >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] && grep -q "cannot wire $ns" "$tmp/err"
ok $? "a start onto a bridge that does not exist fails (exit $rc) and says so" "$tmp/err"
! "$inst" exists "$ns"; ok $? "... and leaves no namespace"
done_testing

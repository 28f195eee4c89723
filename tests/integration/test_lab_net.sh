#!/usr/bin/env bash
# test_lab_net.sh - lab.sh's lab_pick_net: labs that start at the same time
# get different bridges, subnets and ports. It used to only look at what was
# in use when it picked, and a lab binds its ports seconds later, so a second
# lab starting meanwhile could pick the same ones (test_standby: "slurmctld
# does not answer"). Here two picks start at once from the same pid (the
# same first choice, a forced collision); then a bridge left by a lab that
# is gone is taken back, and a bridge that is not a lab's is left alone.
# burst-matrix: host-only (lab.sh's own machinery, no Slurm in it; the root shares the host's network)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
[ "$(id -u)" -eq 0 ] || bail "must run as root (creates bridges)"
tmp=$(mktemp -d /var/tmp/burst-labnet.XXXXXX) || bail "mktemp"
foreign=
cleanup() {
	local d
	for d in "$tmp"/lab*; do
		[ -f "$d/pids" ] && while read -r k name; do
			[ "$k" = bridge ] && ip link del "$name" 2>/dev/null
		done <"$d/pids"
	done
	[ -n "$foreign" ] && ip link del "$foreign" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# one pick in a subshell (so $$ is this script's: the same first slot for
# both), its result as "BRIDGE NET PORT_CTLD PORT_SLURMD PORT_DBD"
pick() {   # DIR
	mkdir -p "$1" && : >"$1/pids"
	(
		LAB=$1
		lab_pick_net 2>"$1/err" || exit 1
		echo "$LAB_BR $LAB_NET $LAB_PORT_CTLD $LAB_PORT_SLURMD $LAB_PORT_DBD" >"$1/picked"
	)
}
# the ports a slot holds: its two and the four from +300
ports() { echo "$1 $(($1 + 1)) $(($1 + 300)) $(($1 + 301)) $(($1 + 302)) $(($1 + 303))"; }

# --- two at once, same first choice ---
pick "$tmp/lab1" & p1=$!
pick "$tmp/lab2" & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
[ $r1 = 0 ] && [ $r2 = 0 ]
ok $? "two labs picking at once both get a slot ($r1 $r2)" "$tmp/lab1/err" "$tmp/lab2/err"
read -r br1 net1 port1 _ _ <"$tmp/lab1/picked" 2>/dev/null
read -r br2 net2 port2 _ _ <"$tmp/lab2/picked" 2>/dev/null
[ -n "${br1:-}" ] && [ -n "${br2:-}" ] && [ "$br1" != "$br2" ] && [ "$net1" != "$net2" ]
ok $? "... different bridges and subnets (${br1:-?} ${net1:-?}, ${br2:-?} ${net2:-?})"
common=$(comm -12 <(ports "${port1:-0}" | tr ' ' '\n' | sort) <(ports "${port2:-0}" | tr ' ' '\n' | sort))
[ -n "${port1:-}" ] && [ -n "${port2:-}" ] && [ -z "$common" ]
ok $? "... no port in common (slurmctld ${port1:-?} and ${port2:-?}; shared: ${common:-none})"
ip link show "${br1:-none}" >/dev/null 2>&1 && ip link show "${br2:-none}" >/dev/null 2>&1 &&
	grep -qx "bridge $br1" "$tmp/lab1/pids" && grep -qx "bridge $br2" "$tmp/lab2/pids"
ok $? "... each bridge exists (the reservation) and is in its lab's pids, for lab_down"
alias1=$(ip -o link show "${br1:-none}" 2>/dev/null | sed -n 's/.* alias //p')
[ "$alias1" = "$(lab_owner $$)" ]
ok $? "... its alias names the owner, pid and start time ('$alias1')"

# a third pick while both are held: neither of theirs
pick "$tmp/lab3"
read -r br3 _ <"$tmp/lab3/picked" 2>/dev/null
[ -n "${br3:-}" ] && [ "$br3" != "$br1" ] && [ "$br3" != "$br2" ]
ok $? "a later pick passes over both held bridges (${br3:-none})" "$tmp/lab3/err"

# --- a lab that is gone: its bridge is taken back ---
# lab1's bridge made to look left behind by a lab whose shell is gone (a
# pid that has exited), with lab2 and lab3 still holding theirs: the next
# pick starts at lab1's slot and must get it back
sleep 0 & dead=$!
wait $dead
ip link set "$br1" alias "burst-lab $dead 12345"
: >"$tmp/lab1/pids"
lab_bridge_stale "$br1"
ok $? "a lab bridge whose owner (pid $dead) has exited is stale"
! lab_bridge_stale "$br2"
ok $? "... one whose owner is alive is not"
pick "$tmp/lab4"
read -r br4 _ <"$tmp/lab4/picked" 2>/dev/null
[ "${br4:-}" = "$br1" ] && [ "$(ip -o link show "$br1" | sed -n 's/.* alias //p')" = "$(lab_owner $$)" ] &&
	grep -q "$br1: its lab (burst-lab $dead 12345) is gone: reused" "$tmp/lab4/err"
ok $? "the next pick takes the stale $br1 back, owned anew, saying so (got ${br4:-none})" "$tmp/lab4/err"

# --- a bridge that is not a lab's (no alias of ours) is never taken ---
for d in lab2 lab3 lab4; do
	while read -r k name; do [ "$k" = bridge ] && ip link del "$name"; done <"$tmp/$d/pids"
	: >"$tmp/$d/pids"
done
foreign=$br1
ip link add "$foreign" type bridge
! lab_bridge_stale "$foreign"
ok $? "a bridge without a lab's alias is not stale"
pick "$tmp/lab5"
read -r br5 _ <"$tmp/lab5/picked" 2>/dev/null
[ -n "${br5:-}" ] && [ "$br5" != "$foreign" ] && ip link show "$foreign" >/dev/null 2>&1
ok $? "... the pick passes over it and leaves it (got ${br5:-none})" "$tmp/lab5/err"
done_testing

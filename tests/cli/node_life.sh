#!/usr/bin/env bash
# tests/cli/node_life.sh - the life of a node has one home (TAP, no Slurm):
# burst-agent/node_life.c is the only caller of the state's transition
# (state_transition) in the product's code, and its own state-changing
# functions (transition, fail_node, boot_failed, slurmd_failed) are private
# to it: every other part hands node life an event (node_life_apply), whose
# edge the table of node_life_table.c (doc/design.md §7) must have.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"

cd "$src" || bail "no source tree at $src"
# the product's C (tests excluded), comments and strings left in: a call in
# a comment is as suspect as one in code
find burst-agent burstctl burst-node plugins lib -name '*.[ch]' | sort >"$tmp/files"
[ -s "$tmp/files" ] && grep -q '^burst-agent/node_life.c$' "$tmp/files"
ok $? "the product's C sources are found, burst-agent/node_life.c among them"

# state_transition: declared and defined in lib/state/state.[ch], called in node_life.c only
xargs grep -ln '\bstate_transition[[:space:]]*(' <"$tmp/files" | grep -v '^lib/state/state\.[ch]$' >"$tmp/callers"
[ "$(cat "$tmp/callers")" = "burst-agent/node_life.c" ]
ok $? "only burst-agent/node_life.c calls state_transition (found: $(tr '\n' ' ' <"$tmp/callers"))" "$tmp/callers"

# the private ones: defined static in node_life.c, named nowhere else
for f in transition fail_node boot_failed slurmd_failed; do
	grep -Eq "^static int $f\(" burst-agent/node_life.c
	ok $? "$f is private to node_life.c (static)"
	grep -v '^burst-agent/node_life.c$' "$tmp/files" | xargs grep -nE "(^|[^_[:alnum:]])$f\(" >"$tmp/$f.out"
	[ ! -s "$tmp/$f.out" ]
	ok $? "no other file calls $f() (found: $(head -3 "$tmp/$f.out" | tr '\n' ' '))" "$tmp/$f.out"
done

# every event handed to node life is one of the table's names, written out
grep -vE '^burst-agent/node_life\.[ch]$' "$tmp/files" | xargs grep -hoE 'node_life_apply(_held)?\([^;]*' >"$tmp/applies"
[ -s "$tmp/applies" ]
ok $? "the agent's parts hand node life their events ($(wc -l <"$tmp/applies") calls)"
grep -vE ', LE_[A-Z_]+,' "$tmp/applies" >"$tmp/unnamed"
[ ! -s "$tmp/unnamed" ]
ok $? "each names its event (LE_...) where it is handed over (not: $(head -2 "$tmp/unnamed" | tr '\n' ' '))" "$tmp/unnamed"
done_testing

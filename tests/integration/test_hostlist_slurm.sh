#!/usr/bin/env bash
# test_hostlist_slurm.sh - lib/hostlist.c against Slurm's own host list
# parser, differentially: a seeded random generator makes a few hundred
# host list expressions, of valid and invalid shapes (ranges, zero padding,
# several brackets, text after a bracket, empty and reversed ranges, stray
# and missing brackets, commas in odd places), and each is given to
# `scontrol show hostnames EXPR` (Slurm's hostlist_create: it needs a
# slurm.conf to start, but no slurmctld and no privilege) and to
# lib/hostlist.c (tests/unit/hostlist_cli). For each: both take it and
# expand it to the same names in the same order, or both refuse it; else it
# is a disagreement, printed with the seed. The one tolerated difference is
# where burst.conf is stricter than Slurm on purpose (lib/hostlist.c's
# header): a bracket that does not pair up, a range with nothing after its
# '-', a list with no name. Run on every Slurm release of check.sh (the
# host's 22.05 and the Debian root's 24.11, which differ: 24.11 takes text
# after the last bracket): not a CLI test, which runs on the host only.
#
#   BURST_HOSTLIST_SEED=N  reproduces a run (default: a new seed, printed)
#   BURST_HOSTLIST_COUNT=N expressions besides the fixed ones (default 400)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
cli="$build/tests/unit/hostlist_cli"
[ -x "$cli" ] || bail "no $cli (make check builds it: make tests/unit/hostlist_cli)"
command -v scontrol >/dev/null || bail "no scontrol (Slurm's client commands)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seed=${BURST_HOSTLIST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
count=${BURST_HOSTLIST_COUNT:-400}

# the least slurm.conf scontrol starts with: no daemon is asked
cat >"$tmp/slurm.conf" <<'CONF'
ClusterName=hostlist
SlurmctldHost=localhost
NodeName=n1
PartitionName=p Nodes=n1
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurm=$(scontrol --version 2>/dev/null | awk '{ print $2 }')
echo "# seed $seed ($count random expressions; BURST_HOSTLIST_SEED=$seed reproduces them), Slurm ${slurm:-?}"

# the expressions: fixed ones (the issue's, and each tolerated kind) and the seeded random ones
python3 - "$seed" "$count" >"$tmp/exprs" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[1]))
fixed = ["n[1-2]-y", "n[1-2]x", "a[1-2]b[3-4]c[5-6]", "n[1-2", "[1-2", "a]b[1-2]", "n[1-]",
         "a,,b", ",", "n[01-10]", "n[1-2]-y[3]", "n[1-70000]", "n[1,]", "x[]"]
letters = "abcnxyz"
def text(lo, hi):
    return "".join(rnd.choice(letters + "0123456789-_.") for _ in range(rnd.randint(lo, hi)))
def num():
    v = rnd.choice([rnd.randint(0, 12), rnd.randint(0, 150), rnd.randint(0, 2000)])
    s = str(v)
    if rnd.random() < 0.2:
        s = "0" * rnd.randint(1, 3) + s
    return s
def rng():
    r = rnd.random()
    if r < 0.35:
        return num()
    a = num()
    if r < 0.9:   # a range, reversed now and then
        b = str(int(a) + rnd.randint(0, 6)) if rnd.random() < 0.9 else str(max(0, int(a) - 3))
        return a + "-" + b
    return rnd.choice([a + "-", "-" + a, a + "--" + a, a + "-" + a + "-" + a, a + "x", "", "a", a + "-70000"])
def group():
    rs = [rng() for _ in range(rnd.randint(1, 3))]
    body = ",".join(rs)
    r = rnd.random()
    if r < 0.05:
        body += ","
    elif r < 0.08:
        body = "," + body
    elif r < 0.1:
        body = ""
    return "[" + body + "]"
def item():
    s = text(1, 4)
    for _ in range(rnd.choice([0, 1, 1, 1, 2, 2, 3])):
        s += group()
        if rnd.random() < 0.3:
            s += text(1, 3)   # text after a bracket: a suffix when it is the last
    r = rnd.random()
    if r < 0.05 and "]" in s:
        i = s.rindex("]"); s = s[:i] + s[i + 1:]          # a ']' missing
    elif r < 0.08 and "[" in s:
        i = s.index("["); s = s[:i] + s[i + 1:]           # a '[' missing
    elif r < 0.1:
        i = rnd.randint(0, len(s)); s = s[:i] + "]" + s[i:]  # a stray ']'
    elif r < 0.12 and "[" in s:
        i = s.index("["); s = s[:i + 1] + "[" + s[i + 1:]   # nested
    return s
for e in fixed:
    print(e)
for _ in range(int(sys.argv[2])):
    items = [item() for _ in range(rnd.choice([1, 1, 2, 3]))]
    sep = "," if rnd.random() < 0.9 else ",,"
    e = sep.join(items)
    if rnd.random() < 0.03:
        e = "," + e
    if rnd.random() < 0.03:
        e += ","
    print(e)
PY
ok $? "$(wc -l <"$tmp/exprs") expressions made (seed $seed)"

# Slurm's answer to each: the names (one per line), or "Invalid hostlist"
n=0
while IFS= read -r e; do
	n=$((n + 1))
	scontrol -- show hostnames "$e" >"$tmp/slurm.$n" 2>"$tmp/slurm.$n.err"
	echo $? >"$tmp/slurm.$n.rc"
done <"$tmp/exprs"
# scontrol runs (a broken one would refuse everything): the third fixed one
[ "$(sed -n 3p "$tmp/exprs")" = 'a[1-2]b[3-4]c[5-6]' ] && [ "$(wc -l <"$tmp/slurm.3")" = 8 ]
ok $? "scontrol show hostnames runs without a cluster: a[1-2]b[3-4]c[5-6] is 8 names" "$tmp/slurm.3.err"
"$cli" <"$tmp/exprs" >"$tmp/ours" 2>"$tmp/ours.err"
ok $? "lib/hostlist.c reads them all" "$tmp/ours.err"

python3 - "$tmp" "$seed" "${slurm:-?}" >"$tmp/verdict" <<'PY'
import os, re, subprocess, sys
tmp, seed, slurm = sys.argv[1:4]
exprs = open(os.path.join(tmp, "exprs")).read().split("\n")[:-1]
ours = open(os.path.join(tmp, "ours")).read().split("\n")[:-1]
def pairs_up(e):
    depth = 0
    for c in e:
        if c == "[":
            if depth:
                return False
            depth = 1
        elif c == "]":
            if not depth:
                return False
            depth = 0
    return depth == 0
def items(e):
    # the expression's items: split at separators outside brackets
    out, cur, depth = [], "", 0
    for c in e:
        if c in ", \t" and not depth:
            out.append(cur); cur = ""
            continue
        depth += c == "["
        depth -= c == "]" and depth > 0
        cur += c
    return [i for i in out + [cur] if i]
def slurm_drops(item):
    # Slurm takes the item alone, but makes no name of it
    p = subprocess.run(["scontrol", "--", "show", "hostnames", item], capture_output=True, text=True)
    return "Invalid hostlist" not in p.stderr and not p.stdout.strip()
def tolerated(e, names):
    # where burst.conf is stricter than Slurm on purpose (lib/hostlist.c's header)
    if not names:
        return "no name"
    if not pairs_up(e):
        return "brackets that do not pair up"
    if re.search(r"\[[^\]]*-[,\]]", e):
        return "a range with nothing after its '-'"
    if any(slurm_drops(i) for i in items(e)):
        return "an item Slurm takes but makes no name of"
    return None
def show(names):
    # a long expansion shortened: its first names and how many
    return " ".join(names[:12]) + (" ... (%d names)" % len(names) if len(names) > 12 else "")
stats = {"both take": 0, "both refuse": 0}
bad = []
for i, e in enumerate(exprs, 1):
    out = open(os.path.join(tmp, "slurm.%d" % i)).read()
    err = open(os.path.join(tmp, "slurm.%d.err" % i)).read()
    slurm_ok = "Invalid hostlist" not in err
    names = out.split("\n")[:-1] if out else []
    o = ours[i - 1].split("\t") if i <= len(ours) else ["missing"]
    if slurm_ok and o[0] == "ok":
        if names == o[1:]:
            stats["both take"] += 1
        else:
            bad.append("%r: both take it; Slurm: %s; ours: %s" % (e, show(names), show(o[1:])))
    elif not slurm_ok and o[0] == "refused":
        stats["both refuse"] += 1
    elif o[0] == "refused":
        why = tolerated(e, names)
        if why:
            k = "stricter than Slurm: " + why
            stats[k] = stats.get(k, 0) + 1
        else:
            bad.append("%r: Slurm takes it (%s), ours refuses it: %s" % (e, show(names), o[1] if len(o) > 1 else ""))
    else:
        bad.append("%r: Slurm refuses it (%s), ours takes it: %s" % (e, err.strip().splitlines()[-1] if err.strip() else "?", show(o[1:])))
print("seed %s, Slurm %s: %s" % (seed, slurm, ", ".join("%s %d" % kv for kv in stats.items())))
for b in bad:
    print("disagreement: " + b)
PY
cat "$tmp/verdict" | sed 's/^/# /'
took=$(sed -n 's/.*both take \([0-9]*\).*/\1/p' "$tmp/verdict")
refused=$(sed -n 's/.*both refuse \([0-9]*\).*/\1/p' "$tmp/verdict")
[ "${took:-0}" -ge $((count / 5)) ] && [ "${refused:-0}" -ge $((count / 5)) ]
ok $? "the expressions are of both kinds: both take ${took:-0}, both refuse ${refused:-0} (each at least a fifth)" "$tmp/verdict"
! grep -q '^disagreement' "$tmp/verdict"
ok $? "no disagreement with Slurm ${slurm:-?} (seed $seed)" "$tmp/verdict"

# the issue's example, on this release
i=$(grep -nx 'n\[1-2\]-y' "$tmp/exprs" | head -1 | cut -d: -f1)
case "$(sed -n "${i}p" "$tmp/ours")" in
"refused	"*"text after the last ']'"*) grep -q 'Invalid hostlist' "$tmp/slurm.$i.err" ;;
"ok	n1-y	n2-y") ! grep -q 'Invalid hostlist' "$tmp/slurm.$i.err" ;;
*) false ;;
esac
ok $? "n[1-2]-y: taken by both or refused by both, ours naming the text after the bracket ($(sed -n "${i}p" "$tmp/ours"))"
done_testing

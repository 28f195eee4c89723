#!/usr/bin/env bash
# tests/cli/test_scripts_honest.sh - no test point of the shell tests and
# benches reads a status that cannot fail (TAP, no Slurm). A small shell
# reader (below) finds every command that reads $? (ok $?, X=$?, [ $? ...)
# right after one of:
#   - a loop with a break of its own in it: `cmd || break` makes the loop's
#     status break's 0, and a wait loop that runs out ends on its sleep's 0;
#   - another ok: its status is the TAP helper's, not the check's;
#   - a pipeline, or an assignment from $( ) of one, whose last command is a
#     filter (tr, sed, sort, head, ...) in a script without pipefail: the
#     status is the filter's;
#   - local/export of a $( ): always 0;
# and names each by file:line. It is first checked on crafted scripts (each
# of those found, the honest forms not), then run on tests/ and bench/.
# Also: no integration test accepts a relaunch of a node whose slurmd did
# not register (tests/integration/lab.sh's lab_relaunched, only negated).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TAP_DIAG="$tmp/out"

cat >"$tmp/honest.py" <<'PY'
import os, re, sys

# statuses that cannot fail: what reads $? right after
#   loop:  a loop with a break in it (break's status is 0; a wait loop that
#          runs out ends on its sleep's 0)
#   ok:    another ok (its status is the TAP helper's, not the check's)
#   pipe:  a pipeline ending in a filter (tr, sed, sort, ...) without
#          pipefail: its status is the filter's
FILTERS = {"tr", "sed", "sort", "head", "tail", "cat", "tee", "cut", "uniq", "wc",
           "column", "fmt", "paste", "nl", "rev", "xargs", "tac", "fold", "expand", "od"}
SEPS = {";", "\n", "&", "&&", "||", "|", "(", ")", ";;", "{", "}"}
OPENERS = {"for": "done", "while": "done", "until": "done", "if": "fi", "case": "esac",
           "{": "}", "(": ")"}
CLOSERS = {"done", "fi", "esac", "}", ")"}
LISTSTART = {"then", "do", "else", "elif", "in"}


def tokens(text):
    """(token, line, kind) for a shell script: words and operators;
    quotes, $( ), ${ }, backquotes kept inside words; comments and here-doc
    bodies left out."""
    n = len(text)

    def sq(i):   # at ', the index after its closing '
        j = text.find("'", i + 1)
        return n if j < 0 else j + 1

    def dq(i):   # at ", the index after its closing "
        j = i + 1
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
            elif c == '"':
                return j + 1
            elif text.startswith("$(", j):
                j = paren(j + 1)
            elif text.startswith("${", j):
                j = brace(j + 1)
            elif c == "`":
                j = bq(j)
            else:
                j += 1
        return n

    def bq(i):
        j = i + 1
        while j < n and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        return min(n, j + 1)

    def paren(i):   # at (, the index after its matching )
        d, j = 0, i
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                j = sq(j)
                continue
            if c == '"':
                j = dq(j)
                continue
            if c == "`":
                j = bq(j)
                continue
            if c == "(":
                d += 1
            elif c == ")":
                d -= 1
                if d == 0:
                    return j + 1
            j += 1
        return n

    def brace(i):   # at {, the index after its matching }
        d, j = 0, i
        while j < n:
            c = text[j]
            if c == "\\":
                j += 2
                continue
            if c == '"':
                j = dq(j)
                continue
            if c == "{":
                d += 1
            elif c == "}":
                d -= 1
                if d == 0:
                    return j + 1
            j += 1
        return n

    out = []
    i, line = 0, 1
    pending_heredocs = []
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(("\n", line, "op"))
            line += 1
            i += 1
            for delim, strip in pending_heredocs:
                while i < n:
                    j = text.find("\n", i)
                    if j < 0:
                        j = n
                    l = text[i:j]
                    i = j + 1
                    line += 1
                    if (l.lstrip("\t") if strip else l) == delim:
                        break
            pending_heredocs = []
            continue
        if c in " \t":
            i += 1
            continue
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        two = text[i:i + 2]
        if two in ("&&", "||", ";;"):
            out.append((two, line, "op"))
            i += 2
            continue
        if c in ";|&()":
            out.append((c, line, "op"))
            i += 1
            continue
        start, start_line = i, line
        while i < n:
            c = text[i]
            if c in " \t\n;|&()":
                break
            if c == "\\":
                i += 2
            elif c == "'":
                i = sq(i)
            elif c == '"':
                i = dq(i)
            elif c == "`":
                i = bq(i)
            elif text.startswith("$(", i) or (c in "<>" and text.startswith("(", i + 1)):
                i = paren(i + 1)
            elif text.startswith("${", i):
                i = brace(i + 1)
            elif text.startswith("<<", i) and not text.startswith("<<<", i):
                j = i + 2
                strip = False
                if j < n and text[j] == "-":
                    strip, j = True, j + 1
                while j < n and text[j] in " \t":
                    j += 1
                k = j
                while k < n and text[k] not in " \t\n;|&()<>":
                    k += 1
                pending_heredocs.append((text[j:k].replace("'", "").replace('"', "").replace("\\", ""), strip))
                i = k
            elif c == "<" and text.startswith("<<<", i):
                i += 3
            else:
                i += 1
        word = text[start:i]
        line += word.count("\n")
        if word:
            out.append((word, start_line, "word"))
    return out


def structure(toks):
    """a forward pass over the tokens: for each, the start of the and-or
    list it belongs to (compound commands whole, at their own level), its
    nesting depth, and the innermost loop (its opener's index) around it"""
    n = len(toks)
    list_start = [None] * n
    depth = [0] * n
    loop_of = [None] * n
    stack = [{"kind": "top", "start": None, "mode": None, "loop": None}]
    prev = None   # previous significant token (not a continuation newline)
    for k, (t, line, kind) in enumerate(toks):
        top = stack[-1]
        at_start = prev is None or prev[0] in SEPS or prev[0] in LISTSTART or prev[0] in ("!", "time")
        if kind == "op" and t == "\n" and prev is not None and prev[0] in ("&&", "||", "|"):
            depth[k] = len(stack)
            continue            # a list continued on the next line
        loop_of[k] = top["loop"]
        depth[k] = len(stack)
        if kind == "op" and t in (";", "\n", "&"):
            if top["kind"] == "case" and top["mode"] == "body" or top["kind"] != "case":
                top["start"] = None
            prev = toks[k]
            continue
        if kind == "op" and t == ";;" and top["kind"] == "case":
            top["mode"], top["start"] = "pattern", None
            prev = toks[k]
            continue
        if top["kind"] == "case" and top["mode"] in ("head", "pattern"):
            if top["mode"] == "head" and kind == "word" and t == "in":
                top["mode"] = "pattern"
            elif top["mode"] == "pattern" and kind == "op" and t == ")":
                top["mode"], top["start"] = "body", None
                prev = toks[k]
                continue
            elif top["mode"] == "pattern" and kind == "word" and t == "esac":
                stack.pop()
                list_start[k] = stack[-1]["start"]
                depth[k] = len(stack)
                prev = toks[k]
                continue
            list_start[k] = top["start"] if top["start"] is not None else k
            prev = toks[k]
            continue
        if kind == "word" and t in ("do", "then", "else", "elif") and at_start:
            top["start"] = None
            list_start[k] = None
            prev = toks[k]
            continue
        closes = (kind == "word" and at_start and (
            (t == "done" and top["kind"] in ("for", "while", "until")) or
            (t == "fi" and top["kind"] == "if") or
            (t == "esac" and top["kind"] == "case") or
            (t == "}" and top["kind"] == "{"))) or (kind == "op" and t == ")" and top["kind"] == "(")
        if closes:
            stack.pop()
            list_start[k] = stack[-1]["start"]
            depth[k] = len(stack)
            prev = toks[k]
            continue
        if top["start"] is None:
            top["start"] = k
        list_start[k] = top["start"]
        if at_start and ((kind == "word" and t in ("for", "while", "until", "if", "case", "{")) or (kind == "op" and t == "(")):
            stack.append({"kind": t, "start": None, "mode": "head" if t == "case" else None,
                          "loop": k if t in ("for", "while", "until") else top["loop"]})
        prev = toks[k]
    return list_start, depth, loop_of


def is_cmd_start(toks, k):
    if k == 0:
        return True
    p = toks[k - 1][0]
    return p in SEPS or p in LISTSTART or p in ("!", "time")


def last_cmdsub(word):
    """the text inside the last top-level $( ) of a word, or None"""
    body, i, n = None, 0, len(word)
    while i < n:
        if word[i] == "\\":
            i += 2
            continue
        if word[i] == "'":
            j = word.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if word.startswith("$((", i):
            i += 3
            continue
        if word.startswith("$(", i):
            d, j = 0, i + 1
            while j < n:
                c = word[j]
                if c == "\\":
                    j += 2
                    continue
                if c == "'":
                    k = word.find("'", j + 1)
                    j = n if k < 0 else k + 1
                    continue
                if c == "(":
                    d += 1
                elif c == ")":
                    d -= 1
                    if d == 0:
                        break
                j += 1
            body = word[i + 2:j]
            i = j + 1
            continue
        i += 1
    return body


def analyze(toks, list_start, depth, loop_of, j, pipefail, nest=0):
    """why the status of the and-or list ending at token j cannot fail
    (None when it can)"""
    st = list_start[j]
    if st is None:
        return None
    d0 = depth[st]
    idx = [i for i in range(st, j + 1) if toks[i][0] != "\n"]
    parts, cur = [], []
    for i in idx:
        if depth[i] == d0 and toks[i][2] == "op" and toks[i][0] in ("&&", "||"):
            parts.append(cur)
            cur = []
        else:
            cur.append(i)
    parts.append(cur)
    why = None
    for p in parts:
        first = [i for i in p if toks[i][0] != "!"]
        if first and toks[first[0]][0] in ("for", "while", "until") and \
                any(toks[i][0] == "break" and loop_of[i] == first[0] for i in p):
            why = "loop"
    pipes, cur = [], []
    for i in parts[-1]:
        if depth[i] == d0 and toks[i][2] == "op" and toks[i][0] == "|":
            pipes.append(cur)
            cur = []
        else:
            cur.append(i)
    pipes.append(cur)
    words = [toks[i][0] for i in pipes[-1]]
    if pipes[0] and toks[pipes[0][0]][0] == "ok":
        why = "ok"
    if len(pipes) > 1 and not pipefail:
        lc = [w for w in words if not re.match(r"^[0-9]*[<>]|^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if lc and os.path.basename(lc[0]) in FILTERS:
            why = "pipe"
    if len(pipes) == 1 and words and words[0] in ("local", "export", "readonly", "declare", "typeset") \
            and any("$(" in w for w in words[1:]):
        why = "decl"
    # an assignment alone: its status is its last command substitution's
    if not why and len(parts) == 1 and len(pipes) == 1 and words and nest < 3 and \
            all(re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w) for w in words):
        body = last_cmdsub(words[-1])
        if body:
            itoks = tokens(body)
            ils, idp, ilo = structure(itoks)
            e = len(itoks) - 1
            while e >= 0 and itoks[e][0] in (";", "\n"):
                e -= 1
            if e >= 0:
                inner = analyze(itoks, ils, idp, ilo, e, pipefail, nest + 1)
                if inner in ("pipe", "loop", "decl"):
                    why = inner
    return why


def check(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    pipefail = re.search(r"^\s*set\s+(-[a-zA-Z]*o\s+|-o\s+)pipefail", text, re.M) is not None
    toks = tokens(text)
    list_start, depth, loop_of = structure(toks)
    found = []
    for k, (t, line, kind) in enumerate(toks):
        if kind != "word" or not is_cmd_start(toks, k):
            continue
        # a command that reads $?: ok $?, X=$?, [ $? ... ]
        nxt = toks[k + 1][0] if k + 1 < len(toks) else ""
        reads = (t == "ok" and nxt in ("$?", '"$?"')) or \
            re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\"?\$\?\"?", t) or \
            (t in ("[", "[[", "test") and nxt in ("$?", '"$?"'))
        if not reads:
            continue
        # the command before it, after ; or a newline
        j = k - 1
        if j < 0 or toks[j][0] not in (";", "\n"):
            continue
        while j >= 0 and toks[j][0] in (";", "\n"):
            j -= 1
        if j < 0:
            continue
        why = analyze(toks, list_start, depth, loop_of, j, pipefail)
        if why:
            found.append((line, why, t))
    return found


MSG = {
    "loop": "reads the status of a loop with a break in it (always 0)",
    "ok": "reads the status of the previous ok, not of a check",
    "pipe": "reads the status of a pipeline's last command, a filter (no pipefail)",
    "decl": "reads the status of local/export, always 0",
}

def shell_files(top):
    """the shell scripts under tests/ and bench/ (by .sh, or an executable
    with a shell's #! line), fixtures left out"""
    files = []
    for d in ("tests", "bench"):
        for root, dirs, names in os.walk(os.path.join(top, d)):
            dirs[:] = sorted(x for x in dirs if x != "fixtures")
            for nm in sorted(names):
                p = os.path.join(root, nm)
                if nm.endswith(".sh"):
                    files.append(p)
                elif os.access(p, os.X_OK) and "." not in nm:
                    with open(p, "rb") as f:
                        first = f.readline()
                    if first.startswith(b"#!") and re.search(rb"\b(ba)?sh\b", first):
                        files.append(p)
    return files


if __name__ == "__main__":
    # honest.py --tree TOP | FILE...: one line per status that cannot fail
    if sys.argv[1] == "--tree":
        top = sys.argv[2]
        files = shell_files(top)
        print("files: %d" % len(files))
    else:
        top, files = None, sys.argv[1:]
    for p in files:
        for line, why, t in check(p):
            print("%s:%d: %s %s" % (os.path.relpath(p, top) if top else os.path.basename(p), line,
                                    "ok $?" if t == "ok" else t, MSG[why]))
PY
honest() { python3 "$tmp/honest.py" "$@" >"$tmp/out" 2>&1; }

# ---- the reader, on crafted scripts: each of these is found
mk() { cat >"$tmp/$1.sh"; }
mk loop <<'EOF'
for x in a b; do grep -q "$x" f || break; done
ok $? "every word is in f"
EOF
mk loopcase <<'EOF'
for n in a b; do
	case $(state $n) in down*|drain*) false; break ;; esac
done
ok $? "no node is down"
EOF
mk wait <<'EOF'
for i in $(seq 50); do [ -S sock ] && break; sleep 0.1; done; ok $? "the socket is there"
EOF
mk andloop <<'EOF'
[ $# = 2 ] && for n in "$@"; do
	[ -s "$n.xml" ] || break
done && [ -s report.xml ]
ok $? "the reports"
EOF
mk okok <<'EOF'
python3 check.py; ok $? "one verdict"
ok $? "and another"
EOF
mk pipe <<'EOF'
burstctl nodes | sort | tr '\n' ' '
ok $? "burstctl nodes"
EOF
mk assign <<'EOF'
out=$(timeout 90 srun -N2 hostname 2>"$LAB/err" | sort | tr '\n' ' ')
ok $? "srun -N2"
EOF
mk rc <<'EOF'
make check | tee check.log
rc=$?
EOF
mk local <<'EOF'
f() {
	local v=$(false)
	ok $? "f"
}
EOF
for c in loop loopcase wait andloop okok pipe assign rc local; do
	honest "$tmp/$c.sh"
	case $c in
	loop|loopcase|wait|andloop) want="a loop with a break" ;;
	okok) want="the previous ok" ;;
	pipe|assign|rc) want="a filter" ;;
	local) want="local/export" ;;
	esac
	[ "$(grep -c "^$c\.sh:[0-9]*: .*$want" "$tmp/out")" = 1 ] && [ "$(wc -l <"$tmp/out")" = 1 ]
	ok $? "found: $(cat "$tmp/out")"
done

# ---- and the honest forms are not
mk honest <<'EOF'
miss=
for x in a b; do grep -q "$x" f || miss="$miss $x"; done
[ -z "$miss" ]; ok $? "every word is in f (not:${miss:- none})"
for i in $(seq 50); do [ -S sock ] && break; sleep 0.1; done
[ -S sock ]; ok $? "the socket is there"
burstctl nodes | grep -q burst-1; ok $? "burstctl nodes names burst-1"
burstctl nodes >out; ok $? "burstctl nodes"
out=$(sort out | tr '\n' ' ')
[ "$out" = "a b " ]; ok $? "sorted"
n=$(grep -c x f)
ok $? "grep -c"
cat <<'DOC'
ok $? "in a here-document: text"
for x in a; do true || break; done
ok $? "text"
DOC
python3 - <<'PYX'
print("x" | tr)
PYX
ok $? "the here-document's program"
if grep -q x f; then a=1; else a=2; fi
ok $? "an if with both branches"
EOF
mk pipefail <<'EOF'
set -uo pipefail
make check | tee check.log
ok $? "make check (pipefail: its status counts)"
EOF
honest "$tmp/honest.sh" "$tmp/pipefail.sh"
[ ! -s "$tmp/out" ]
ok $? "the honest forms are not found (a loop whose check follows it, a grep at a pipeline's end, here-documents, pipefail)"

# ---- the tests and benches
honest --tree "$src"
files=$(sed -n 's/^files: //p' "$tmp/out")
[ "${files:-0}" -ge 60 ]
ok $? "the shell tests and benches read: ${files:-none}"
grep -v '^files: ' "$tmp/out" >"$tmp/found"
[ ! -s "$tmp/found" ]
ok $? "no test point or bench reads a status that cannot fail ($(wc -l <"$tmp/found") found)" "$tmp/found"

# ---- tap.sh's diagnostics: a file without a final newline does not hide
# the next point in its comment line
printf 'no newline at the end' >"$tmp/nonl"
(. "$src/tests/integration/tap.sh"; ok 1 "first" "$tmp/nonl"; ok 1 "second"; done_testing) >"$tmp/out"
grep -qx 'not ok 1 - first' "$tmp/out" && grep -qx '# nonl: no newline at the end' "$tmp/out" &&
	grep -qx 'not ok 2 - second' "$tmp/out"
ok $? "tap.sh: a diagnostic file without a final newline leaves the next point on a line of its own"

# ---- no integration test accepts a relaunch (a node launched again for a
# slurmd that did not register): lab_relaunched only negated, and each test
# that bursts nodes through the lab's agent has a lab_no_relaunch point
(cd "$src" && grep -n 'lab_relaunched' tests/integration/test_*.sh) | grep -v '! lab_relaunched ' >"$tmp/found"
[ ! -s "$tmp/found" ]
ok $? "no integration test accepts a relaunch (lab_relaunched only as '! lab_relaunched'; $(wc -l <"$tmp/found") found)" "$tmp/found"
: >"$tmp/found"
for t in join early_launch admission aws_agent openstack_agent burst reconcile lifecycle; do
	grep -q '^lab_no_relaunch; ok \$? ' "$src/tests/integration/test_$t.sh" || echo "test_$t.sh" >>"$tmp/found"
done
[ ! -s "$tmp/found" ]
ok $? "the tests that counted instances fail on a relaunch (a lab_no_relaunch point; without: $(tr '\n' ' ' <"$tmp/found"))" "$tmp/found"
done_testing

#!/usr/bin/env bash
# tests/cli/test_wire_lua.sh - job_submit.lua is the one writer of a job's
# notes that is not C (lib/core/wire.h): what it writes, the C decoder reads
# as the one contract note it is, whatever the contract's text (it comes
# from the client's job-control environment). The script runs in Lua 5.3,
# the release Debian 12's Slurm links its job_submit/lua against, with a
# stub of Slurm's "slurm" table; tests/unit/test_wire decodes its output.
# TAP, no Slurm.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"

lua=$(command -v lua5.3 || command -v lua5.4 || command -v lua)
[ -n "$lua" ] || bail "no Lua interpreter (Debian: apt-get install lua5.3; tools/deps.sh installs it)"
decode="$build/tests/unit/test_wire"
[ -x "$decode" ] || bail "no $decode (make check builds it)"

# the admin comment job_submit.lua gives a contract job whose contract is $1
submit() {
	CONTRACT=$1 "$lua" - "$src/contrib/job_submit.lua" <<'LUA'
local function say(...) io.stderr:write(string.format(...), "\n") end
slurm = { SUCCESS = 0, ERROR = -1, log_user = say, log_info = say, log_error = say, log_debug = say }
dofile(arg[1])
local job = { spank_job_env = { [0] = "CLOUD_FEATURES=nsa", "CLOUD_NODESETS=nsa",
	"CLOUD_PARTITIONS=burst", "CLOUD_CONTRACT_NAME=" .. os.getenv("CONTRACT") } }
local rc = burst_job_submit(job, {}, 1000)
assert(rc == slurm.SUCCESS, "job_submit.lua refused the job")
io.write(job.admin_comment, "\n")
LUA
}

n=0
while IFS= read -r contract; do
	n=$((n + 1))
	submit "$contract" >"$tmp/comment.$n" 2>"$tmp/err.$n"
	ok $? "job_submit.lua takes a job with contract '$contract'" "$tmp/err.$n"
	"$decode" "$tmp/comment.$n" >"$tmp/notes.$n" 2>&1
	[ "$(cat "$tmp/notes.$n")" = "contract=$contract" ]
	ok $? "... and the C decoder reads one contract note, '$contract' (comment: $(cat "$tmp/comment.$n"))" "$tmp/notes.$n"
done <<'CASES'
gpu4-ampere
accelerator_count>=2,accelerator_architecture>=ampere
node_vcpus_count>=64 node_memory_size>=256G rank=price
x; burst: budget=free; burst: cost=0
100% of 50%3B
CASES
# the hostile one must not have become several notes in the comment itself
grep -q "^burst: contract=x" "$tmp/comment.4" && ! grep -q "; burst: budget=" "$tmp/comment.4"
ok $? "a ';' in the contract does not end its note in the comment: $(cat "$tmp/comment.4")"
done_testing

#!/usr/bin/env bash
# tests/cli/test_provenance_cmd.sh - burstctl provenance NODE / --all / --json,
# the job view (through its testing aid --job-nodes/--job-start) and signed
# attestations checked by burstctl verify (TAP). The records are a captured
# node's provenance (tests/fixtures/sysroots/a100x8.expected.json) with
# acceptance results added, stored by tests/unit/record_fixture through the
# agent's state_record_add. Run by 'make check' with BURST_TOP_SRCDIR and
# BURST_TOP_BUILDDIR set.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
F="$build/tests/unit/record_fixture"
PY=/usr/bin/python3
export TZ=UTC
unset BURST_CONF
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"

run() {   # run EXPECTED-EXIT ARGS...: burstctl, output in $tmp/out, $tmp/err
	local want=$1; shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ]
}
has() { grep -qF -- "$1" "$tmp/$2"; }
py() { "$PY" -c "$1" <"$tmp/out"; }   # python3 CODE: reads burstctl's output on stdin

state="$tmp/state"
db="$state/agent.db"
conf="$tmp/burst.conf"
mkdir -p "$state"
cat >"$conf" <<EOF
StateDir=$state
Provider=local Type=local Bridge=burstbr0 Address=10.77.0.1/24
NodeSet=gpu Nodes=gpu-[1-3] Partition=burst-gpu InstanceTypes=local.host
EOF

# make-record OUT NODE INSTANCE KERNEL NCCL-PASSED: the fixture's record as
# the agent stores it (identity filled in, acceptance results added)
make_record() {
	"$PY" - "$src/tests/fixtures/sysroots/a100x8.expected.json" "$@" <<'EOF'
import json, sys
fixture, out, node, inst, kernel, nccl = sys.argv[1:]
d = json.load(open(fixture))
d["identity"].update(node=node, instance_id=inst, instance_type="p4d.24xlarge",
                     provider="aws", region="us-east-1", image="ami-0burst1")
d["kernel"]["release"] = kernel
ok = nccl == "pass"
d["acceptance"] = [
    {"name": "gpu-sanity", "kind": "sanity", "node": node, "passed": True, "run": True,
     "reason": None, "duration": 1.5, "perf": {}},
    {"name": "nccl-allreduce", "kind": "performance", "node": node, "passed": ok, "run": True,
     "reason": None if ok else "busbw 80 GB/s below reference 150 GB/s -10%",
     "duration": 12.0, "perf": {}},
]
json.dump(d, open(out, "w"), sort_keys=True)
EOF
}
T0=1700000000
declare -A ID   # ID[NODE@TIME]: the provenance id of that record
add() {   # add NODE INSTANCE KERNEL NCCL DECISION TIME
	local f="$tmp/rec-$1-$6.json"
	make_record "$f" "$1" "$2" "$3" "$4" || bail "cannot make a record"
	ID[$1@$6]=$(sha256sum "$f" | cut -c1-64)
	"$F" "$db" "$1" "$2" "${ID[$1@$6]}" "$5" "$f" "$6" || bail "record_fixture failed"
}
# gpu-1: admitted (kernel -91), then a relaunch rejected (nccl slow), then
# admitted again on kernel -94; gpu-2: admitted once; gpu-3: never joined
t1=$((T0 + 100)) t2=$((T0 + 1000)) t3=$((T0 + 2000)) t4=$((T0 + 150))
add gpu-1 i-aaa 5.15.0-91-generic pass admitted $t1
add gpu-1 i-bbb 5.15.0-91-generic fail "acceptance failed: nccl-allreduce" $t2
add gpu-1 i-ccc 5.15.0-94-generic pass admitted $t3
add gpu-2 i-ddd 5.15.0-91-generic pass admitted $t4

# --- provenance NODE: the newest record ---
run 0 -c "$conf" provenance gpu-1
ok $? "provenance gpu-1 exits 0"
has "instance:      i-ccc (p4d.24xlarge, aws, us-east-1)" out
ok $? "... shows the newest record's instance, type, provider and region"
has "provenance id: ${ID[gpu-1@$t3]}" out
ok $? "... and its provenance id"
has "kernel:        5.15.0-94-generic (build-id b0bf2a764c76a427b48c6edad500ecbaf2387c6c)" out
ok $? "... the kernel release and build-id"
has "decision:      admitted" out && has "time:          2023-11-14T22:46:40Z" out
ok $? "... the decision and its time"
has "os:            Ubuntu 22.04.4 LTS" out
ok $? "... the OS"
has "cpu:           Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz, 96 threads, 48 cores, 2 sockets" out
ok $? "... the CPU model and counts"
has "memory:        1143.0 GiB" out
ok $? "... the memory"
has "accelerators:  8 x A100-40GB (ampere)" out && has "driver:        nvidia" out
ok $? "... the accelerators (count x model (arch)) and driver"
has "infiniband:    mlx5_0/1 200 Gb/sec (4X HDR) 4: ACTIVE, mlx5_1/1 200 Gb/sec (4X HDR) 4: ACTIVE" out
ok $? "... the InfiniBand ports"
has "image:         ami-0burst1" out && has "container:     charliecloud-runtime 0.31-1" out
ok $? "... the image and container runtime"
has "slurm:         slurmd 22.05.8-4+burst1" out && has "pmix:          libpmix2 4.1.2-2ubuntu1" out &&
	has "mpi:           openmpi-bin 4.1.2-2ubuntu1" out
ok $? "... the Slurm, PMIx and MPI versions"
has "acceptance:    2 passed, 0 failed" out && has "  PASS  nccl-allreduce [performance]" out
ok $? "... the acceptance results"

# --- --all: the history, oldest first ---
run 0 -c "$conf" provenance gpu-1 --all
ok $? "provenance gpu-1 --all exits 0"
[ "$(awk 'NR > 1 { print $1 ":" $3 ":" $6 }' "$tmp/out" | tr '\n' ' ')" = "1:i-aaa:2/2 2:i-bbb:1/2 3:i-ccc:2/2 " ]
ok $? "... lists the three records of gpu-1 in order, with their acceptance counts"
has "acceptance failed: nccl-allreduce" out && ! has "i-ddd" out
ok $? "... with the rejection reason, and no other node's record"

run 0 -c "$conf" provenance gpu-1 --all --json
ok $? "provenance gpu-1 --all --json exits 0"
py "import json,sys; v=json.load(sys.stdin); assert [r['instance'] for r in v]==['i-aaa','i-bbb','i-ccc']; assert [r['admitted'] for r in v]==[True,False,True]"
ok $? "... is the array of the three records with their decisions"

# --- --json: the stored record and the decision ---
run 0 -c "$conf" provenance gpu-1 --json
ok $? "provenance gpu-1 --json exits 0"
py "
import json,sys
v=json.load(sys.stdin)
stored=json.load(open('$tmp/rec-gpu-1-$t3.json'))
assert v['record']==stored, 'record differs'
assert v['provenance_id']=='${ID[gpu-1@$t3]}'
assert v['decision']=='admitted' and v['admitted'] is True
assert v['instance']=='i-ccc' and v['instance_type']=='p4d.24xlarge' and v['node']=='gpu-1'
assert v['time']==$t3
"
ok $? "... holds the stored record unchanged, the provenance id, instance and decision"

# --- errors ---
run 1 -c "$conf" provenance gpu-3
ok $? "a node without records exits 1"
has "no provenance record of node gpu-3" err
ok $? "... and says so"
run 2 -c "$conf" provenance
ok $? "provenance without a node exits 2"
run 2 -c "$tmp/none.conf" provenance gpu-1
ok $? "a missing burst.conf exits 2"

# --- the job view: the admitted record in force at the job's start ---
run 0 -c "$conf" provenance --job-nodes 'gpu-[1-3]' --job-start $((T0 + 1500)) --json
ok $? "provenance --job-nodes gpu-[1-3] --job-start T0+1500 --json exits 0"
py "
import json,sys
v=json.load(sys.stdin)
n={e['node']: e for e in v['nodes']}
assert list(n)==['gpu-1','gpu-2','gpu-3'], list(n)
assert n['gpu-1']['instance']=='i-aaa', 'gpu-1: the rejected i-bbb and the later i-ccc are not in force'
assert n['gpu-1']['provenance_id']=='${ID[gpu-1@$t1]}'
assert n['gpu-2']['instance']=='i-ddd' and n['gpu-2']['provenance_id']=='${ID[gpu-2@$t4]}'
assert n['gpu-3']['record'] is None
assert n['gpu-1']['record']['kernel']['release']=='5.15.0-91-generic'
"
ok $? "... gpu-1 ran on its first admitted record (not the rejected or later one), gpu-2 on its own, gpu-3 on none"

run 0 -c "$conf" provenance --job-nodes gpu-1 --job-start $t3
ok $? "a job started in the second gpu-1's third record was written exits 0"
has "gpu-1: instance i-ccc (p4d.24xlarge), provenance ${ID[gpu-1@$t3]}" out &&
	has "  kernel:        5.15.0-94-generic" out
ok $? "... and shows that record"
has "  accelerators:  8 x A100-40GB (ampere)" out &&
	has "  image:         ami-0burst1; runtime charliecloud-runtime 0.31-1" out &&
	has "  acceptance:    2 passed, 0 failed" out
ok $? "... with accelerators, image, runtime and acceptance results"
run 0 -c "$conf" provenance --job-nodes gpu-1 --job-start $((t3 - 1))
has "gpu-1: instance i-aaa" out
ok $? "a job started a second earlier had the first record"

run 0 -c "$conf" provenance --job-nodes gpu-1,gpu-2 --job-start $((T0 + 120))
ok $? "a job started before gpu-2 was admitted exits 0"
has "gpu-1: instance i-aaa" out && has "gpu-2: no admitted provenance record before the job started" out
ok $? "... gpu-1 had its first record, gpu-2 none yet"

SLURM_CONF="$tmp/no-slurm.conf" run 2 -c "$conf" provenance --job 42
ok $? "--job without a readable slurm.conf exits 2 at once"
has "cannot read $tmp/no-slurm.conf; set SLURM_CONF" err
ok $? "... and says which file"
for bad in 4x2 42_ 42_x 42_1x _1; do
	run 2 -c "$conf" provenance --job "$bad"
	ok $? "--job $bad (no job id) exits 2"
done
has "--job takes a job id (JOBID, or JOBID_TASK" err
ok $? "... saying what a job id is"
run 2 -c "$conf" provenance --job-nodes gpu-1
ok $? "--job-nodes without --job-start exits 2"
run 2 -c "$conf" provenance --job-nodes 'gpu-[1-' --job-start $T0
ok $? "a bad host list exits 2"

# --- attestations ---
run 0 -c "$conf" provenance gpu-1 --attestation --key "$tmp/agent.key" -o "$tmp/att.json"
ok $? "provenance gpu-1 --attestation -o FILE exits 0"
[ "$(stat -c %a "$tmp/agent.key")" = 600 ]
ok $? "... the missing key was made, mode 0600"
has "instance:      i-ccc" out
ok $? "... and the summary still goes to stdout"
"$B" attest-key --key "$tmp/agent.key" --output "$tmp/agent.pub" 2>/dev/null
ok $? "attest-key exports the public key"
run 0 verify "$tmp/att.json" --key "$tmp/agent.pub"
ok $? "burstctl verify accepts the array of envelopes"
has "att.json[0] is signed by key" out && has "att.json[1] is signed by key" out
ok $? "... and verified both"
run 0 verify "$tmp/att.json" --key "$tmp/agent.pub" --json
py "
import json,sys
v=json.load(sys.stdin)
assert v['verified'] is True
st=[e['statement'] for e in v['envelopes']]
assert [s['predicateType'] for s in st]==['https://in-toto.io/attestation/test-result/v0.1','https://in-toto.io/attestation/svr/v0.1']
for s in st:
    assert s['subject']==[{'name':'node:gpu-1/instance:i-ccc','digest':{'sha256':'${ID[gpu-1@$t3]}'}}], s['subject']
assert st[0]['predicate']['result']=='PASSED'
assert sorted(st[0]['predicate']['passedTests'])==['gpu-sanity','nccl-allreduce']
assert 'SLURM_BURST_NODE_ADMITTED' in st[1]['predicate']['properties']
"
ok $? "... the statements: test results PASSED and admitted, subject node/instance with the provenance id"

# one payload byte changed: verification fails (exit 1)
"$PY" - "$tmp/att.json" "$tmp/bad.json" <<'EOF'
import base64, json, sys
v = json.load(open(sys.argv[1]))
p = bytearray(base64.b64decode(v[1]["payload"]))
i = p.index(b"ADMITTED")
p[i] ^= 0x20      # 'A' -> 'a'
v[1]["payload"] = base64.b64encode(bytes(p)).decode()
json.dump(v, open(sys.argv[2], "w"))
EOF
run 1 verify "$tmp/bad.json" --key "$tmp/agent.pub"
ok $? "an array with one payload byte changed fails verification (exit 1)"
has "bad.json[1]: verification FAILED" err && has "1 of 2 envelopes FAILED" err
ok $? "... naming the envelope that failed"

# the attestation of a job: one pair per node with a record; stdout is the array
run 0 -c "$conf" provenance --job-nodes 'gpu-[1-3]' --job-start $((T0 + 1500)) --attestation --key "$tmp/agent.key"
ok $? "provenance --job-nodes ... --attestation exits 0"
cp "$tmp/out" "$tmp/job-att.json"
py "
import json,sys,base64
v=json.load(sys.stdin)
subj=[json.loads(base64.b64decode(e['payload']))['subject'][0]['name'] for e in v]
assert subj==['node:gpu-1/instance:i-aaa']*2+['node:gpu-2/instance:i-ddd']*2, subj
"
ok $? "... is two envelopes for gpu-1's and two for gpu-2's record in force"
run 0 verify "$tmp/job-att.json" --key "$tmp/agent.pub"
ok $? "... which verify"

# a key others can read is refused
chmod 0644 "$tmp/agent.key"
run 2 -c "$conf" provenance gpu-1 --attestation --key "$tmp/agent.key"
ok $? "a key readable by others is refused (exit 2)"

# --- the default key: StateDir/attest.key ---
run 0 -c "$conf" provenance gpu-2 --attestation -o "$tmp/att2.json"
ok $? "--attestation without --key exits 0"
[ -f "$state/attest.key" ] && [ "$(stat -c %a "$state/attest.key")" = 600 ]
ok $? "... with the agent's key StateDir/attest.key, made 0600"

done_testing

#!/usr/bin/env bash
# tests/cli/test_attest.sh - burstctl attest / attest-key / verify end to end,
# checked against independent implementations: Python's stdlib for base64,
# JSON and the DSSE PAE, the openssl command line for Ed25519 (TAP).
# Run by 'make check' with BURST_TOP_SRCDIR and BURST_TOP_BUILDDIR set.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"   # shown when a test fails
unset BURST_ATTEST_PUBKEY

command -v openssl >/dev/null || bail "the openssl command is needed (apt-get install openssl)"
[ -x "$PY" ] || bail "$PY is needed"

# run EXPECTED-EXIT ARGS... : runs burstctl, output in $tmp/out and $tmp/err
run() {
	local want=$1; shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || { echo "exit $rc, want $want" >>"$tmp/err"; return 1; }
}
has() { grep -qF -- "$1" "$tmp/$2"; }

# py ENVELOPE ACTION OUT : the envelope taken apart by Python (stdlib only)
#   payload-flip  the envelope with one payload byte changed, re-encoded
#   sig-flip      the envelope with one signature byte changed, re-encoded
#   pae           PAE(payloadType, payload) as DSSE v1.0.0 defines it
#   sig           the raw signature bytes
#   statement     the decoded payload
py() {
	"$PY" - "$@" <<'EOF'
import base64, json, sys
env_path, action, out = sys.argv[1:4]
env = json.load(open(env_path))
payload = base64.b64decode(env["payload"], validate=True)
sig = base64.b64decode(env["signatures"][0]["sig"], validate=True)
ptype = env["payloadType"].encode("utf-8")
def write(b):
    open(out, "wb").write(b)
if action == "payload-flip":
    p = bytearray(payload); p[len(p) // 2] ^= 0x01
    env["payload"] = base64.b64encode(bytes(p)).decode()
    write(json.dumps(env).encode())
elif action == "sig-flip":
    s = bytearray(sig); s[7] ^= 0x40
    env["signatures"][0]["sig"] = base64.b64encode(bytes(s)).decode()
    write(json.dumps(env).encode())
elif action == "pae":
    write(b"DSSEv1 %d %s %d %s" % (len(ptype), ptype, len(payload), payload))
elif action == "sig":
    write(sig)
elif action == "statement":
    write(payload)
EOF
}
# jq-like: jget FILE EXPR (a Python expression over the JSON value 'j')
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

prov=$(printf 'provenance record' | sha256sum | cut -c1-64)
cat >"$tmp/results.json" <<'EOF'
[{"name": "hostname@burst-gpu-1", "passed": true},
 {"name": "stream@burst-gpu-1", "passed": true, "warned": true},
 {"name": "nccl-allreduce@burst-gpu-1", "passed": false}]
EOF
echo '[{"name": "hostname@burst-gpu-1", "passed": true}]' >"$tmp/good.json"

# --- make a key and an attestation ---
run 0 attest --key "$tmp/agent.pem" --node burst-gpu-1 --instance i-0abc --provenance-id "$prov" \
	--results "$tmp/results.json" --output "$tmp/env.json"
ok $? "attest makes an envelope (and the key)"
[ "$(stat -c %a "$tmp/agent.pem")" = 600 ]
ok $? "the new key file has mode 0600 (got $(stat -c %a "$tmp/agent.pem"))"
openssl pkey -in "$tmp/agent.pem" -noout -text 2>/dev/null | grep -q 'ED25519 Private-Key'
ok $? "openssl reads the key as an Ed25519 private key"
run 0 attest-key --key "$tmp/agent.pem" --output "$tmp/agent.pub"
ok $? "attest-key exports the public key"
openssl pkey -pubin -in "$tmp/agent.pub" -noout 2>"$tmp/err"
ok $? "openssl reads the exported public key"

# --- the envelope and statement, read by Python ---
[ "$(jget "$tmp/env.json" 'j["payloadType"]')" = "application/vnd.in-toto+json" ]
ok $? "payloadType is application/vnd.in-toto+json"
py "$tmp/env.json" statement "$tmp/statement.json"
[ "$(jget "$tmp/statement.json" 'j["_type"]')" = "https://in-toto.io/Statement/v1" ]
ok $? "the payload is an in-toto Statement v1"
[ "$(jget "$tmp/statement.json" 'j["subject"][0]["name"] + " " + j["subject"][0]["digest"]["sha256"]')" = \
  "node:burst-gpu-1/instance:i-0abc $prov" ]
ok $? "its subject is the node/instance with the provenance id as sha256"
[ "$(jget "$tmp/statement.json" 'j["predicateType"] + " " + j["predicate"]["result"] + " " + ",".join(j["predicate"]["failedTests"])')" = \
  "https://in-toto.io/attestation/test-result/v0.1 FAILED nccl-allreduce@burst-gpu-1" ]
ok $? "test-result predicate: FAILED, failedTests names the failed test"
want_id=$(openssl pkey -pubin -in "$tmp/agent.pub" -outform DER | tail -c 32 | sha256sum | cut -c1-64)
[ "$(jget "$tmp/env.json" 'j["signatures"][0]["keyid"]')" = "$want_id" ]
ok $? "keyid is the sha256 of the raw public key (computed with openssl)"

# --- verify ---
run 0 verify "$tmp/env.json" --key "$tmp/agent.pub"
ok $? "verify with the public key exits 0"
has "verified:" out && has "result:        FAILED (1 passed, 1 warned, 1 failed)" out
ok $? "... and says what the statement holds"
run 0 --json verify "$tmp/env.json" --key "$tmp/agent.pub"
ok $? "verify --json exits 0"
[ "$(jget "$tmp/out" 'str(j["verified"]) + " " + j["statement"]["predicate"]["result"]')" = "True FAILED" ]
ok $? "... verified: true, with the statement"
run 0 verify "$tmp/env.json" --key "$tmp/agent.pem"
ok $? "the private key file serves to verify too"
BURST_ATTEST_PUBKEY="$tmp/agent.pub" "$B" verify - <"$tmp/env.json" >"$tmp/out" 2>"$tmp/err"
ok $? "verify - reads standard input, key from \$BURST_ATTEST_PUBKEY"

# --- tampering ---
py "$tmp/env.json" payload-flip "$tmp/flipped.json"
run 1 verify "$tmp/flipped.json" --key "$tmp/agent.pub"
ok $? "one payload byte changed (by Python): verify exits 1"
has "bad signature" err; ok $? "... saying bad signature"
run 1 --json verify "$tmp/flipped.json" --key "$tmp/agent.pub"
ok $? "... with --json too"
[ "$(jget "$tmp/out" 'str(j["verified"]) + " " + j["error"][:13]')" = "False bad signature" ]
ok $? "... verified: false and the error"
py "$tmp/env.json" sig-flip "$tmp/sigflip.json"
run 1 verify "$tmp/sigflip.json" --key "$tmp/agent.pub"
ok $? "one signature byte changed: verify exits 1"
run 0 attest-key --key "$tmp/other.pem" --output "$tmp/other.pub"
run 1 verify "$tmp/env.json" --key "$tmp/other.pub"
ok $? "another key: verify exits 1"
has "wrong key" err; ok $? "... saying wrong key"
head -c 100 "$tmp/env.json" >"$tmp/trunc.json"
run 1 verify "$tmp/trunc.json" --key "$tmp/agent.pub"
ok $? "a truncated envelope: exit 1"
has "malformed envelope" err; ok $? "... malformed envelope"
"$PY" -c 'import json,sys; e=json.load(open(sys.argv[1])); del e["payloadType"]; json.dump(e, open(sys.argv[2], "w"))' \
	"$tmp/env.json" "$tmp/notype.json"
run 1 verify "$tmp/notype.json" --key "$tmp/agent.pub"
ok $? "no payloadType: exit 1"
has "payloadType is missing" err; ok $? "... naming the field"

# --- the signature checked by another implementation: openssl pkeyutl ---
py "$tmp/env.json" pae "$tmp/pae.bin"
py "$tmp/env.json" sig "$tmp/sig.bin"
openssl pkeyutl -verify -pubin -inkey "$tmp/agent.pub" -rawin -in "$tmp/pae.bin" \
	-sigfile "$tmp/sig.bin" >"$tmp/out" 2>"$tmp/err"
ok $? "openssl pkeyutl verifies the Ed25519 signature over the PAE (built by Python)"
py "$tmp/flipped.json" pae "$tmp/pae-flipped.bin"
! openssl pkeyutl -verify -pubin -inkey "$tmp/agent.pub" -rawin -in "$tmp/pae-flipped.bin" \
	-sigfile "$tmp/sig.bin" >"$tmp/out" 2>"$tmp/err"
ok $? "... and rejects it over the altered payload"

# --- a key made by openssl signs for burstctl ---
openssl genpkey -algorithm ed25519 -out "$tmp/ossl.pem" 2>"$tmp/err"
chmod 0600 "$tmp/ossl.pem"
openssl pkey -in "$tmp/ossl.pem" -pubout -out "$tmp/ossl.pub" 2>>"$tmp/err"
run 0 attest --key "$tmp/ossl.pem" --node burst-gpu-1 --instance i-0abc --provenance-id "$prov" \
	--results "$tmp/good.json" --output "$tmp/env2.json"
ok $? "attest with a key made by openssl genpkey"
run 0 verify "$tmp/env2.json" --key "$tmp/ossl.pub"
ok $? "... verifies with the public key openssl derived"
py "$tmp/env2.json" pae "$tmp/pae2.bin"
py "$tmp/env2.json" sig "$tmp/sig2.bin"
openssl pkeyutl -verify -pubin -inkey "$tmp/ossl.pub" -rawin -in "$tmp/pae2.bin" \
	-sigfile "$tmp/sig2.bin" >"$tmp/out" 2>"$tmp/err"
ok $? "... and openssl agrees"

# --- the admission decision (simple verification result) ---
run 0 attest --key "$tmp/agent.pem" --node burst-gpu-1 --instance i-0abc --provenance-id "$prov" \
	--results "$tmp/results.json" --verification --policy gpu4-ampere --output "$tmp/svr.json"
ok $? "attest --verification"
run 0 verify "$tmp/svr.json" --key "$tmp/agent.pub"
ok $? "... verifies"
has "decision:      not admitted" out; ok $? "... a failed test: not admitted"
py "$tmp/svr.json" statement "$tmp/svr-st.json"
[ "$(jget "$tmp/svr-st.json" 'j["predicateType"] + " " + j["predicate"]["verifier"]["policy"]["name"] + " " + str("SLURM_BURST_NODE_ADMITTED" in j["predicate"]["properties"])')" = \
  "https://in-toto.io/attestation/svr/v0.1 gpu4-ampere False" ]
ok $? "... svr v0.1 predicate with the policy, no ADMITTED property"
run 0 attest --key "$tmp/agent.pem" --node burst-gpu-1 --instance i-0abc --provenance-id "$prov" \
	--results "$tmp/good.json" --verification --output "$tmp/svr2.json"
py "$tmp/svr2.json" statement "$tmp/svr2-st.json"
[ "$(jget "$tmp/svr2-st.json" '",".join(j["predicate"]["properties"])')" = \
  "SLURM_BURST_NODE_ADMITTED,SLURM_BURST_TEST_PASSED:hostname@burst-gpu-1" ]
ok $? "all passed: the ADMITTED property"

# --- refusals and usage errors ---
chmod 0644 "$tmp/agent.pem"
run 2 attest --key "$tmp/agent.pem" --node burst-gpu-1 --instance i-0abc --provenance-id "$prov" \
	--results "$tmp/good.json"
ok $? "a key readable by others: attest exits 2"
has "chmod 0600" err; ok $? "... and says to chmod 0600"
chmod 0600 "$tmp/agent.pem"
run 2 attest --key "$tmp/agent.pem" --node burst-gpu-1 --instance i-0abc --provenance-id nothex \
	--results "$tmp/good.json"
ok $? "a provenance id that is no sha256: exit 2"
echo '[{"name": "x"}]' >"$tmp/bad.json"
run 2 attest --key "$tmp/agent.pem" --node n --instance i --provenance-id "$prov" --results "$tmp/bad.json"
ok $? "a result without 'passed': exit 2"
has '"passed" must be true or false' err; ok $? "... saying so"
run 2 attest --key "$tmp/agent.pem" --node n
ok $? "attest without its options: exit 2"
has "missing: --instance --provenance-id --results" err; ok $? "... naming what is missing"
run 2 verify
ok $? "verify without a file: exit 2"
run 2 verify "$tmp/env.json" --key "$tmp/nonexistent.pub"
ok $? "verify with a missing key file: exit 2"
run 2 verify "$tmp/env.json" --bogus
ok $? "an unknown option: exit 2"

done_testing

#!/usr/bin/env bash
# test_gce_fake.sh - the tests' fake Compute Engine (gce_fake.py) as
# Google's own Node.js client sees it (gce_client_check.js: each of its
# points here), then lib/cloud/gce.c and gce_auth.c against it
# (tests/unit/gce_cli): both token flows, a key the token endpoint does not
# trust, a token refused under a client, regional and zonal bulk inserts,
# capacity, quota and rate faults and their classes, listing by label page
# by page, a delete; then every request of both and every answer checked
# against the compute v1 schema Google's client ships (gce_schema_check.js).
# Needs node and the client: tools/npm-tool.sh gce-client (installed here
# when missing and the npm registry can be reached), python3-cryptography.
# burst-matrix: host-only (no Slurm in it)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"

work=$(mktemp -d /tmp/test_gce_fake.XXXXXX)
fake_pid=
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
TAP_DIAG="$work/out $work/err"
cli="$build/tests/unit/gce_cli"
fake="$src/tests/integration/gce_fake.py"
[ -x "$cli" ] || bail "no $cli (make check builds it)"
nm=$("$src/tools/npm-tool.sh" gce-client 2>"$work/err") ||
	bail "Google's Compute Engine client is not installed: $(tail -3 "$work/err" | tr '\n' ' ')"
export NODE_PATH=$nm

python3 "$fake" make-key --out "$work/key0.json" --token-uri http://127.0.0.1:1/token --project burst-test &&
	python3 "$fake" make-key --out "$work/stranger0.json" --token-uri http://127.0.0.1:1/token --project burst-test ||
	bail "gce_fake.py make-key failed (python3-cryptography?)"
python3 "$fake" serve --port-file "$work/port" --key "$work/key0.json" --log "$work/log.jsonl" \
	--capacity us-central1-c=0 --cpu-quota europe-west4=8 --zones europe-west4=europe-west4-a >"$work/fake.out" 2>&1 &
fake_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || bail "the fake did not start: $(tail -3 "$work/fake.out")"
port=$(cat "$work/port")
ep="http://127.0.0.1:$port"
# the key files as Google writes them, their token_uri the fake's
for k in key stranger; do
	python3 -c 'import json, os, sys
k = json.load(open(sys.argv[1])); k["token_uri"] = sys.argv[3]
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600); os.write(fd, json.dumps(k).encode()); os.close(fd)' \
		"$work/${k}0.json" "$work/$k.json" "$ep/token"
done
ctl() { curl -sf -X POST -d "$2" "$ep/_fake/$1" >/dev/null; }
gce() { "$cli" --endpoint "$ep" --key "$work/key.json" --insecure "$@"; }

# --- Google's client against the fake: each of its points ---
node "$src/tests/integration/gce_client_check.js" "$port" "$work/key.json" burst-test >"$work/client.tap" 2>"$work/client.err"
client_rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok "*) ok 0 "Google's client: ${line#ok * - }" ;;
	"not ok "*) ok 1 "Google's client: ${line#not ok * - }" "$work/client.tap" "$work/client.err" ;;
	esac
done <"$work/client.tap"
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$work/client.tap")
[ "$client_rc" = 0 ] && [ -n "$plan" ] && [ "$plan" = "$(grep -c '^ok ' "$work/client.tap")" ] && [ "$plan" -ge 20 ]
ok $? "Google's client ran all its $plan points and accepted every answer (exit $client_rc)" "$work/client.tap" "$work/client.err"

# --- tokens, from C ---
gce token >"$work/out" 2>"$work/err"
grep -qx "token from key file $work/key.json (burst-agent@burst-test.iam.gserviceaccount.com), [0-9]* characters" "$work/out"
ok $? "gce_auth: the service account's JWT (RS256, OpenSSL) buys a token from the fake's endpoint"
"$cli" --metadata "127.0.0.1:$port" token >"$work/out" 2>"$work/err"
grep -qx "token from the metadata server 127.0.0.1:$port, [0-9]* characters" "$work/out"
ok $? "gce_auth: the metadata server's token (Metadata-Flavor: Google both ways)"
"$cli" --metadata "127.0.0.1:$port" project >"$work/out" 2>"$work/err"
[ "$(cat "$work/out")" = burst-test ]
ok $? "... and the project from the metadata server"
"$cli" --endpoint "$ep" --key "$work/stranger.json" --insecure token >"$work/out" 2>"$work/err"
[ $? = 1 ] && grep -q "an access token from key file $work/stranger.json (burst-agent@burst-test.iam.gserviceaccount.com): HTTP 400 (invalid_grant: Invalid JWT Signature.)" "$work/err"
ok $? "a key the token endpoint does not trust: HTTP 400 invalid_grant, in the endpoint's words"
ctl config '{"echo_assertion": true}'
"$cli" --endpoint "$ep" --key "$work/stranger.json" --insecure token >"$work/out" 2>"$work/err"
grep -q '(assertion \[redacted\])' "$work/err" && ! grep -q 'eyJ' "$work/err"
ok $? "an endpoint that quotes the assertion back: it is redacted from the message"
ctl config '{"echo_assertion": false}'
chmod 644 "$work/key.json"
gce token >"$work/out" 2>"$work/err"
[ $? = 1 ] && grep -q "has mode 0644: group or others can read or change it; refusing to use it. Run: chmod 600 $work/key.json" "$work/err"
ok $? "a key file others can read: refused before any request, naming the fix"
chmod 600 "$work/key.json"
"$cli" --endpoint "$ep" --key "$work/key.json" token >"$work/out" 2>"$work/err"
[ $? = 1 ] && grep -q "token_uri $ep/token is plain http" "$work/err"
ok $? "a plain-http token_uri without AllowInsecureEndpoint: refused"
! grep -q 'PRIVATE KEY\|ya29\.' "$work/log.jsonl" "$work/out" "$work/err"
ok $? "no key and no token in the messages (nor in the fake's log of request bodies)"

# --- launches, faults, classes ---
ZONES=us-central1-a,us-central1-b REQUEST_ID=5b0f1c6e-3a2d-4e8f-9b7a-6c5d4e3f2a10 \
	gce bulk regions/us-central1 n2-standard-4 3 c1-a-1 c1-b-1 c1-c-1 >"$work/out" 2>"$work/err"
grep -q '^op operation-.* DONE OK$' "$work/out" && grep -qx 'loc zones/us-central1-a created 3 failed 0' "$work/out"
ok $? "a regional bulk insert of 3 named VMs, 2 zones allowed: its operation waited for, DONE, 3 created"
REQUEST_ID=6c1e2d7f-4b3e-4f90-8c8b-7d6e5f4a3b21 gce bulk zones/us-central1-c n2-standard-4 1 c1-d-1 >"$work/out" 2>"$work/err"
grep -q '^op .* DONE CAPACITY$' "$work/out" && grep -qx 'error ZONE_RESOURCE_POOL_EXHAUSTED CAPACITY' "$work/out"
ok $? "a zone without capacity: ZONE_RESOURCE_POOL_EXHAUSTED, classed CAPACITY (the next zone)"
REQUEST_ID=7d2f3e80-5c4f-4a01-9d9c-8e7f6a5b4c32 gce bulk regions/europe-west4 n2-standard-8 2 c1-e-1 c1-f-1 >"$work/out" 2>"$work/err"
grep -q '^op .* DONE QUOTA$' "$work/out" && grep -qx 'error QUOTA_EXCEEDED QUOTA' "$work/out"
ok $? "16 vCPUs over a region's CPUS quota of 8: QUOTA_EXCEEDED, classed QUOTA (the family cools down)"
tokens() { curl -sf "$ep/_fake/state" | python3 -c 'import json, sys; print(json.load(sys.stdin)["tokens"])'; }
t0=$(tokens)
ctl config '{"fail": [{"match": {"path": "aggregated/instances"}, "status": 401, "reason": "authError", "message": "Invalid Credentials", "times": 1}]}'
PAGE=2 gce list 'labels.burst-cluster = c1' >"$work/out" 2>"$work/err"
[ "$(grep -c ' us-central1-a .* 10\.' "$work/out")" = 3 ] && grep -qx 'pages 2' "$work/out"
ok $? "a token refused (401) under the client: the listing by label goes on, 2 a page (2 pages, 3 VMs)"
[ "$(python3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["status"] == 401))' "$work/log.jsonl")" = 1 ] &&
	[ "$(tokens)" = $((t0 + 2)) ]
ok $? "... after one 401 and one new token (2 tokens for that run)"
gce list 'labels.burst-cluster = c1 AND name = c1-b-1' >"$work/out" 2>"$work/err"
[ "$(grep -c . "$work/out")" = 2 ] && grep -q '^c1-b-1 us-central1-a ' "$work/out"
ok $? "a filter of two terms (label AND name): that VM only"
gce delete us-central1-a c1-b-1 >"$work/out" 2>"$work/err"
grep -q '^op .* DONE OK$' "$work/out"
ok $? "instances.delete and its zone operation's wait: DONE"
gce list 'labels.burst-cluster = c1' >"$work/out" 2>"$work/err"
[ "$(grep -c ' us-central1-a ' "$work/out")" = 2 ] && ! grep -q '^c1-b-1 ' "$work/out"
ok $? "... and it is gone from the listing"
ctl config '{"quota": {"list": 1}, "window": 60}'
gce list >"$work/out" 2>"$work/err"
gce list >"$work/out" 2>"$work/err"
[ $? = 1 ] && grep -qx THROTTLED "$work/out" &&
	grep -q "list: HTTP 403 rateLimitExceeded: Quota exceeded for quota metric 'List requests'" "$work/err"
ok $? "a per-minute rate quota spent: 403 rateLimitExceeded, classed THROTTLED (not a resource quota)"
ctl config '{"quota": {}, "fail": [{"match": {"path": "aggregated/instances"}, "status": 503, "reason": "backendError", "message": "Internal error.\u001b[31m"}]}'
gce list >"$work/out" 2>"$work/err"
[ $? = 1 ] && grep -qx TRANSIENT "$work/out" && grep -q 'HTTP 503 backendError: Internal error.\\x1b\[31m' "$work/err"
ok $? "a 503: TRANSIENT, Google's text with its control characters written out" "$work/out" "$work/err"

# --- every request and answer against Google's compute v1 schema ---
node "$src/tests/integration/gce_schema_check.js" "$work/log.jsonl" >"$work/out" 2>"$work/err"
ok $? "every request of both clients and every answer of the fake fit the compute v1 schema ($(grep '^checked' "$work/out"))"
node "$src/tests/integration/gce_schema_check.js" "$work/log.jsonl" --agent slurm-burst/ --min 12 >"$work/out" 2>"$work/err"
ok $? "... the C client's own requests among them ($(grep '^checked' "$work/out"))"
# the check catches what it is for: a request with a field compute v1 does not have
python3 - "$work/log.jsonl" "$work/bad.jsonl" <<'EOF'
import json, sys
out = open(sys.argv[2], "w")
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("path", "").endswith("/bulkInsert") and isinstance(e.get("body"), dict) and e["user_agent"].startswith("slurm-burst/"):
        e["body"]["instanceProperties"]["machineTypo"] = "x"
        e["body"]["count"] = "three"
        e["query"]["requestID"] = "x"
        e["answer"]["status"] = "FINISHED"
        out.write(json.dumps(e) + "\n")
        break
EOF
node "$src/tests/integration/gce_schema_check.js" "$work/bad.jsonl" >"$work/out" 2>"$work/err"
[ $? = 1 ] && grep -q "no field 'machineTypo' in InstanceProperties" "$work/out" &&
	grep -q 'body.count: an integer (int64' "$work/out" && grep -q "query parameter 'requestID' is not a field" "$work/out" &&
	grep -q "answer.status: 'FINISHED' is not one of Status's values" "$work/out"
ok $? "the schema check refuses an unknown field, a wrong type, an unknown query parameter and enum value"

done_testing

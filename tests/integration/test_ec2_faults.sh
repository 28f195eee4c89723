#!/usr/bin/env bash
# test_ec2_faults.sh - lib/cloud/ec2.c and lib/cloud/aws_creds.c against a fake EC2
# endpoint that answers in EC2's wire format from a script
# (ec2_faults.py): error classes, backoff of throttling, retry of a 500
# with the SAME ClientToken (launched once), partial launches,
# IdempotentParameterMismatch, timeouts, the request format, no secret in
# messages, and credentials from a fake IMDSv2 (refreshed before expiry).
# The fake's answers are first checked with botocore's EC2 parser.
# No root needed.
# burst-matrix: host-only (provider only, no Slurm in it: the same on every Slurm release)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
cli="$build/tests/unit/ec2_cli"
py=/usr/bin/python3      # Debian's, with python3-botocore
[ -x "$cli" ] || bail "no $cli (make check builds it)"
$py -c 'import botocore' 2>/dev/null || bail "no botocore for $py: install python3-botocore"

work=$(mktemp -d /tmp/test_ec2_faults.XXXXXX)
fake_pid=
tls_pid=
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null && wait "$fake_pid" 2>/dev/null
	[ -n "$tls_pid" ] && kill "$tls_pid" 2>/dev/null && wait "$tls_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
TAP_DIAG="$work/out.json $work/fake.log"

# 0. the fake speaks EC2, as botocore parses it
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "${line#* - }" ;;
	"not ok "*) ok 1 "${line#* - }" ;;
	"rc "*) botocore_rc=${line#rc } ;;
	esac
done < <($py "$src/tests/integration/ec2_botocore_check.py" "$src" 2>"$work/botocore.err"; echo "rc $?")
[ -s "$work/botocore.err" ] && sed 's/^/# /' "$work/botocore.err"
# a crash of the check (a traceback) must fail here, not skip what follows it
[ "${botocore_rc:-}" = 0 ]; ok $? "the botocore check ran to its end (exit ${botocore_rc:-none})" "$work/botocore.err"

$py "$src/tests/integration/ec2_faults.py" "$work/port" 2>"$work/fake.log" &
fake_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || bail "the fake EC2 did not start"
ep="http://127.0.0.1:$(cat "$work/port")"

secret='fakeSecret/Key+0123456789abcdefghijklmnop'
token='fakeSessionToken0123456789'
export AWS_ACCESS_KEY_ID=AKIDFAKE0000000000 AWS_SECRET_ACCESS_KEY=$secret AWS_SESSION_TOKEN=$token
export AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent
unset AWS_PROFILE
ec2() { "$cli" --endpoint "$ep/" --region us-east-1 --base-ms 20 --cap-ms 100 --max-attempts 4 "$@" >"$work/out.json"; }
j() { $py -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$work/out.json" "$1"; }
ctl() { curl -s -X POST --data-binary "$2" "$ep/$1" >/dev/null; }
reqs() { curl -s "$ep/_requests" >"$work/reqs.json"; $py -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$work/reqs.json" "$1"; }
reset() { ctl _reset '{}'; }

# 1. the request on the wire
ud=$(printf '#!/bin/sh\necho "node \xc3\xa9 & <x>"\n')
ec2 run --image ami-0abc --type g5.12xlarge --min 1 --max 2 --token tok-wire --subnet subnet-1 \
	--sg sg-1 --sg sg-2 --iam-profile burst-node --tag burst:cluster=lab --tag 'Name=a b+c' \
	--user-data "$ud"
ok $? "RunInstances against the fake"
want_ud=$(printf '%s' "$ud" | base64 -w0)
[ "$(reqs 'd[0]["params"]["UserData"]')" = "$want_ud" ]
ok $? "UserData is the base64 of the bytes"
[ "$(reqs 'sorted((k, v) for k, v in d[0]["params"].items() if k not in ("UserData",))')" = \
  "[('Action', 'RunInstances'), ('ClientToken', 'tok-wire'), ('IamInstanceProfile.Name', 'burst-node'), ('ImageId', 'ami-0abc'), ('InstanceType', 'g5.12xlarge'), ('MaxCount', '2'), ('MetadataOptions.HttpEndpoint', 'enabled'), ('MetadataOptions.HttpTokens', 'required'), ('MinCount', '1'), ('SecurityGroupId.1', 'sg-1'), ('SecurityGroupId.2', 'sg-2'), ('SubnetId', 'subnet-1'), ('TagSpecification.1.ResourceType', 'instance'), ('TagSpecification.1.Tag.1.Key', 'burst:cluster'), ('TagSpecification.1.Tag.1.Value', 'lab'), ('TagSpecification.1.Tag.2.Key', 'Name'), ('TagSpecification.1.Tag.2.Value', 'a b+c'), ('Version', '2016-11-15')]" ]
ok $? "every RunInstances parameter as the Query API names it" "$work/reqs.json"
[ "$(reqs 'd[0]["has_auth"], d[0]["content_type"], d[0]["security_token"]')" = \
  "(True, 'application/x-www-form-urlencoded; charset=utf-8', '$token')" ]
ok $? "signed (SigV4), form content type, session token header" "$work/reqs.json"
[ "$(j 'len(d["instances"])')" = 2 ] && [ "$(j 'd["instances"][0]["tags"]["Name"]')" = "a b+c" ]
ok $? "2 instances with their tags"

# 2. capacity for one type (a 500 with a capacity code: not retried)
reset
ctl _script '{"rules": [{"match": {"InstanceType": "g5.48xlarge"}, "error": "InsufficientInstanceCapacity", "message": "We currently do not have sufficient g5.48xlarge capacity in the Availability Zone you requested (us-east-1a).", "status": 500}]}'
ec2 run --image ami-1 --type g5.48xlarge --token tok-cap
rc=$?
[ $rc -eq 1 ] && [ "$(j 'd["class"]')" = CAPACITY ] && [ "$(j 'd["api_calls"]')" = 1 ]
ok $? "InsufficientInstanceCapacity is CAPACITY, not retried (rc $rc)"
msg=$(j 'd["error"]')
case $msg in
"ec2 RunInstances in us-east-1 (g5.48xlarge): InsufficientInstanceCapacity: We currently do not have sufficient g5.48xlarge capacity"*"(request id req-"*")") r=0 ;;
*) r=1 ;;
esac
ok $r "admin message: $msg"
ec2 run --image ami-1 --type g5.12xlarge --token tok-cap2
ok $? "another type launches"

# 3. throttling: a burst of RequestLimitExceeded, then success
reset
ctl _script '{"queue": [{"error": "RequestLimitExceeded", "status": 503}, {"error": "RequestLimitExceeded", "status": 503}, {"error": "Throttling", "status": 400}]}'
ec2 run --image ami-1 --type t3.micro --token tok-throttle
ok $? "throttled 3 times, then launched"
[ "$(j 'd["api_calls"], d["retries"], d["budget_exhausted"]')" = "(4, 3, 0)" ]
ok $? "4 calls, 3 retries, budget not exhausted"
[ "$(j '0 <= d["backoff_ms"] <= 20 + 40 + 80')" = True ]
ok $? "backoff within the full-jitter bounds ($(j 'd["backoff_ms"]') ms)"
[ "$(reqs 'sorted(set(r["params"]["ClientToken"] for r in d)), len(d)')" = "(['tok-throttle'], 4)" ]
ok $? "every retry carried the same ClientToken"
reset
ctl _script '{"queue": [{"error": "RequestLimitExceeded", "status": 503}, {"error": "RequestLimitExceeded", "status": 503}, {"error": "RequestLimitExceeded", "status": 503}, {"error": "RequestLimitExceeded", "status": 503}, {"error": "RequestLimitExceeded", "status": 503}]}'
ec2 run --image ami-1 --type t3.micro --token tok-throttle2
rc=$?
[ $rc -eq 3 ] && [ "$(j 'd["class"], d["api_calls"], d["budget_exhausted"]')" = "('THROTTLED', 4, 1)" ]
ok $? "throttled beyond the budget: THROTTLED after 4 calls (rc $rc)"
has() { case $(j 'd["error"]') in *"$1"*) return 0 ;; esac; return 1; }
has "gave up after 4 attempts"
ok $? "the message says the budget ran out"
reset
# 15 throttles queued, 20 attempts allowed: only the 300 ms budget can stop
# it (full jitter sleeps 0-400 ms a retry: 14 sleeps under 300 ms in all
# would take odds of about 1e-20)
ctl _script "$(python3 -c 'import json; print(json.dumps({"queue": [{"error": "RequestLimitExceeded", "status": 503}] * 15}))')"
"$cli" --endpoint "$ep/" --base-ms 400 --cap-ms 400 --max-attempts 20 --max-total-ms 300 \
	describe >"$work/out.json"
[ "$(j 'd["class"]')" = THROTTLED ] && [ "$(j 'd["api_calls"] < 15 and d["budget_exhausted"] == 1')" = True ]
ok $? "the time budget stops retries too ($(j 'd["api_calls"]') calls)"

# 3b. EC2's token buckets (the EC2 API reference, "Request throttling for
#     the Amazon EC2 API": RunInstances 1000 instances then 2/s, 5 requests
#     then 2/s), per region, here with a small instance bucket (4, 1/s):
#     what goes past a bucket is a 503 RequestLimitExceeded, THROTTLED
reset
ctl _buckets '{"buckets": {"RunInstances.instances": [4, 1]}}'
ec2() { "$cli" --endpoint "$ep/" --region us-east-1 --base-ms 20 --cap-ms 100 --max-attempts 1 "$@" >"$work/out.json"; }
ec2 run --image ami-1 --type t3.micro --min 3 --max 3 --token tok-b1
ok $? "3 instances of a bucket of 4: launched"
ec2 run --image ami-1 --type t3.micro --min 2 --max 2 --token tok-b2
rc=$?
[ $rc -eq 3 ] && [ "$(j 'd["class"]')" = THROTTLED ] && has RequestLimitExceeded
ok $? "2 more at once: RequestLimitExceeded, THROTTLED (rc $rc)"
curl -s "$ep/_buckets" >"$work/buckets.json"
[ "$($py -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(t["region"], t["action"], t["bucket"]) for t in d["throttled"]])' "$work/buckets.json")" = \
  "[('us-east-1', 'RunInstances', 'RunInstances.instances')]" ]
ok $? "the fake names the region and the bucket" "$work/buckets.json"
"$cli" --endpoint "$ep/" --region eu-west-1 --max-attempts 1 run --image ami-1 --type t3.micro --min 4 --max 4 \
	--token tok-b3 >"$work/out.json"
ok $? "another region has its own bucket: 4 launched there"
sleep 1.2
ec2 run --image ami-1 --type t3.micro --min 2 --max 2 --token tok-b2
ok $? "a second later the bucket has 2 again: launched"
[ "$(reqs '[(r["region"], r["throttled"]) for r in d if r["action"] == "RunInstances"]')" = \
  "[('us-east-1', False), ('us-east-1', True), ('eu-west-1', False), ('us-east-1', False)]" ]
ok $? "requests carry their region and whether they were throttled" "$work/reqs.json"
ctl _buckets '{"off": true}'
ec2() { "$cli" --endpoint "$ep/" --region us-east-1 --base-ms 20 --cap-ms 100 --max-attempts 4 "$@" >"$work/out.json"; }

# 4. a 500 after the launch happened: the retry with the same ClientToken
#    returns the same instances, nothing is launched twice
reset
ctl _script '{"queue": [{"commit": true, "error": "InternalError", "message": "An internal error has occurred", "status": 500}]}'
ec2 run --image ami-1 --type t3.micro --min 2 --max 2 --token tok-500
ok $? "InternalError, then success"
[ "$(j 'd["api_calls"], d["retries"], len(d["instances"])')" = "(2, 1, 2)" ]
ok $? "2 calls, 1 retry, 2 instances"
first=$(j '" ".join(i["id"] for i in d["instances"])')
ec2 describe
[ "$(j '" ".join(i["id"] for i in d["instances"])')" = "$first" ]
ok $? "the fake holds exactly those 2 instances: launched once"
[ "$(reqs '[r["params"].get("ClientToken") for r in d if r["action"] == "RunInstances"]')" = "['tok-500', 'tok-500']" ]
ok $? "both attempts carried the same ClientToken"
reset
ctl _script '{"queue": [{"status": 502, "body": "<html>Bad Gateway</html>"}]}'
ec2 run --image ami-1 --type t3.micro --token tok-502
ok $? "a 502 that is not XML is retried"
ctl _script '{"queue": [{"status": 502, "body": "bad"}, {"status": 502, "body": "bad"}, {"status": 502, "body": "bad"}, {"status": 502, "body": "bad"}]}'
ec2 terminate i-1
rc=$?
[ $rc -eq 4 ] && has "HTTP 502"
ok $? "persistent 502: TRANSIENT, message says HTTP 502 (rc $rc)"

# 5. partial launch: fewer instances than MaxCount
reset
ctl _script '{"queue": [{"limit": 2}]}'
ec2 run --image ami-1 --type t3.micro --min 1 --max 5 --token tok-partial
ok $? "partial launch succeeds"
[ "$(j 'len(d["instances"])')" = 2 ]
ok $? "and reports the 2 instances it got, not 5"

# 6. IdempotentParameterMismatch
ec2 run --image ami-1 --type c5.large --min 1 --max 5 --token tok-partial
rc=$?
[ $rc -eq 5 ] && [ "$(j 'd["class"], d["last_code"], d["api_calls"]')" = "('PERMANENT', 'IdempotentParameterMismatch', 1)" ]
ok $? "same token, other parameters: PERMANENT IdempotentParameterMismatch, not retried"

# 7. a timeout is TRANSIENT and retried
reset
ctl _script '{"queue": [{"sleep": 2}]}'
"$cli" --endpoint "$ep/" --timeout-ms 500 --base-ms 10 --cap-ms 20 --max-attempts 3 describe >"$work/out.json"
ok $? "a slow answer times out, the retry succeeds"
[ "$(j 'd["api_calls"], d["retries"]')" = "(2, 1)" ]
ok $? "2 calls, 1 retry"

# 8. pagination and filters
reset
for n in $(seq 12); do
	ec2 run --image ami-1 --type t3.micro --token "pg-$n" --tag burst:cluster=pg || break
done
ec2 terminate i-00000000000000003
ec2 describe --filter tag:burst:cluster=pg --filter instance-state-name=pending,running --max-results 5
[ "$(j 'len(d["instances"]), d["api_calls"]')" = "(11, 3)" ]
ok $? "11 of 12 over pages of 5 (3 calls)"
[ "$(reqs '[r["params"].get("MaxResults") for r in d if r["action"] == "DescribeInstances"], [r["params"].get("NextToken") for r in d if r["action"] == "DescribeInstances"]')" = "(['5', '5', '5'], [None, '6', '11'])" ]
ok $? "MaxResults on every page, NextToken followed (the fake's token: a place in the launch order, past the terminated one)"
ec2 describe --filter client-token=pg-7
[ "$(j '[i["client_token"] for i in d["instances"]]')" = "['pg-7']" ]
ok $? "the client-token filter"
ec2 describe --id i-000000000000000ff
[ $? -eq 7 ] && [ "$(j 'd["class"]')" = NOT_FOUND ]
ok $? "InvalidInstanceID.NotFound is NOT_FOUND"
ec2 tags i-00000000000000001 i-00000000000000002 --tag burst:state=idle --tag owner=x
ec2 describe --id i-00000000000000001 --id i-00000000000000002
[ "$(j '[i["tags"].get("burst:state") for i in d["instances"]]')" = "['idle', 'idle']" ]
ok $? "CreateTags"
# a CreateTags answer is not parsed (nothing in it is needed), but one
# that is not XML is no success
ctl _script '{"queue": [{"status": 200, "body": "bad"}, {"status": 200, "body": "bad"}, {"status": 200, "body": "bad"}, {"status": 200, "body": "bad"}]}'
ec2 tags i-00000000000000001 --tag owner=y
rc=$?
[ $rc -eq 4 ] && has "not XML"
ok $? "CreateTags answered 200 with no XML: TRANSIENT, says so (rc $rc)"

# 9. DescribeInstanceTypes, paged by 2
ec2 types
[ "$(j '[(t["name"], t["vcpus"], t["memory_mib"], t["gpu_count"], t["gpu_name"], t["gpu_memory_mib"], t["efa_supported"]) for t in d["types"]], d["api_calls"]')" = \
  "([('g5.12xlarge', 48, 196608, 4, 'A10G', 24576, True), ('t3.micro', 2, 1024, 0, None, 0, False), ('p4d.24xlarge', 96, 1179648, 8, 'A100', 40960, True)], 2)" ]
ok $? "DescribeInstanceTypes: 3 types over 2 pages, GPU, memory, EFA"

# 10. no secret in any message
reset
ctl _script '{"queue": [{"error": "AuthFailure", "message": "echoing", "echo_token": true, "status": 401}]}'
ec2 describe
rc=$?
[ $rc -eq 6 ] && has "token=[redacted]"
ok $? "AuthFailure is AUTH; a session token echoed by the server is redacted (rc $rc)"
! grep -q -F -e "$token" -e "$secret" "$work/out.json"
ok $? "neither secret key nor session token in the output"

# 11. https: the certificate is always verified
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null \
	|| bail "openssl cannot make a test certificate"
$py "$src/tests/integration/ec2_faults.py" "$work/tls_port" "$work/cert.pem" "$work/key.pem" 2>>"$work/fake.log" &
tls_pid=$!
for _ in $(seq 100); do [ -s "$work/tls_port" ] && break; sleep 0.1; done
tls_ep="https://127.0.0.1:$(cat "$work/tls_port")/"
"$cli" --endpoint "$tls_ep" --max-attempts 3 --base-ms 5 describe >"$work/out.json"
rc=$?
[ $rc -eq 5 ] && [ "$(j 'd["class"], d["api_calls"]')" = "('PERMANENT', 1)" ] && has "certificate"
ok $? "a self-signed https endpoint is refused: PERMANENT, not retried, says certificate (rc $rc)"
"$cli" --endpoint "$tls_ep" --ca-file "$work/cert.pem" describe >"$work/out.json"
ok $? "the same endpoint with its CA given is accepted"
"$cli" --endpoint "https://localhost:$(cat "$work/tls_port")/" --ca-file "$work/cert.pem" describe >"$work/out.json"
rc=$?
[ $rc -eq 5 ] && has "localhost"
ok $? "a trusted certificate for another name is refused (host verification, rc $rc)"

# 12. temporary credentials that EC2 calls expired are fetched again, once
reset
imds_cli() (
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
	export AWS_EC2_METADATA_SERVICE_ENDPOINT=$ep
	"$cli" --endpoint "$ep/" --imds "$@"
)
fetches() { curl -s "$ep/_imds" | $py -c 'import json,sys; print(json.load(sys.stdin)["fetches"])'; }
ctl _script '{"queue": [{"error": "ExpiredToken", "message": "The security token included in the request is expired", "status": 400}]}'
f0=$(fetches)
imds_cli describe >"$work/out.json"
f1=$(fetches)
[ "$(j 'd["class"], d["api_calls"]')" = "('OK', 2)" ] && [ $((f1 - f0)) -eq 2 ]
ok $? "ExpiredToken: credentials fetched again and the call retried once ($((f1 - f0)) fetches)"
ctl _script '{"queue": [{"error": "ExpiredToken", "status": 400}, {"error": "ExpiredToken", "status": 400}]}'
imds_cli describe >"$work/out.json"
[ "$(j 'd["class"], d["api_calls"]')" = "('AUTH', 2)" ]
ok $? "but only once: a second ExpiredToken is AUTH"

# 13. credentials from IMDSv2 (and refreshed 5 minutes before expiry)
reset
(
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
	export AWS_EC2_METADATA_SERVICE_ENDPOINT=$ep
	"$cli" --imds creds >"$work/out.json"
)
[ "$(j 'd["source"], d["access_key"], d["has_token"], d["expiration"] > 0')" = \
  "('instance role burst-node-role', 'ASIAIMDSEXAMPLE', True, True)" ]
ok $? "IMDSv2: token, role, credentials, expiration"
f0=$(fetches)
imds_cli describe >"$work/out.json"
f1=$(fetches)
[ "$(j 'd["class"]')" = OK ] && [ "$(reqs 'd[-1]["security_token"]')" = imdsSessionToken ]
ok $? "the EC2 call is signed with the instance role's session token"
[ $((f1 - f0)) -eq 1 ]
ok $? "credentials valid for hours: read once ($((f1 - f0)))"
soon=$($py -c 'import time; print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 200)))')
ctl _script "{\"imds_expiration\": \"$soon\"}"
imds_cli creds >"$work/creds.json"
[ "$($py -c 'import json,sys,calendar,time; print(json.load(open(sys.argv[1]))["expiration"] == calendar.timegm(time.strptime(sys.argv[2], "%Y-%m-%dT%H:%M:%SZ")))' "$work/creds.json" "$soon")" = True ]
ok $? "Expiration parsed to the second"
f0=$(fetches)
imds_cli describe >"$work/out.json"
f1=$(fetches)
[ "$(j 'd["class"]')" = OK ] && [ $((f1 - f0)) -eq 2 ]
ok $? "credentials 200 s from expiry are read again before the call ($((f1 - f0)))"

done_testing

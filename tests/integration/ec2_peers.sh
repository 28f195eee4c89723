# ec2_peers.sh - the EC2 peers of the tests (sourced): moto_server and the
# fault-injecting endpoint.
#
# moto_up DIR: start moto_server on 127.0.0.1 at a free port, its log in
# DIR/moto.log, create an IAM user allowed ec2:* and turn signature checking
# on (ec2_moto_setup.py). The Python is MOTO_PY: $BURST_MOTO_PYTHON (check.sh
# sets it, providing moto where the system lacks it: tools/moto.sh), else
# the python3 first on PATH or /usr/bin/python3, whichever has moto. Sets
# MOTO_PID, MOTO_EP (http://127.0.0.1:PORT), MOTO_AK and MOTO_SK (the user's
# key) and MOTO_AMI (an image moto knows), MOTO_RECORDING (moto's record of
# every request it received) and MOTO_KEEPS_TOKEN (yes when moto reports the
# ClientToken an instance was launched with; no for moto 5.1, which answers
# a fixed value). Returns 1, with the reason on
# stderr and moto stopped, when there is no moto, moto does not answer or the
# setup fails; the caller bails.
# moto_down: stop it (nothing when it is not running).
# moto_subnet CIDR: make a VPC and a subnet of CIDR in moto (us-east-1) and
# print the subnet's id: instances launched with SubnetId= get their private
# IPs there (the agent makes that the node's Slurm NodeAddr), so a test's
# emulated instance takes that address in its namespace.
# moto_ip INSTANCE: the instance's private IP.
# moto_describe INSTANCE: the instance as moto has it, one JSON object
# (state, type, ip, image, token, metadata_tags, tags, userdata decoded).
# moto_join_token INSTANCE: the instance's own join token, its
# burst-join-token tag (what its metadata serves it); empty if untagged.
# moto_sent ACTION PARAM: what requests of ACTION carried as PARAM.
# jget FILE EXPR: EXPR (Python, the JSON document is d) of a JSON file.

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

MOTO_PID=
MOTO_PY=
MOTO_RECORDING=
MOTO_KEEPS_TOKEN=
MOTO_FIXED_TOKEN=ABCDE1234567890123   # moto 5.1's, for its default account 123456789012
. "$src/tools/moto.sh"

moto_up() {
	local dir=$1 port
	MOTO_PY=$(burst_moto_find "$src/_build/moto") || {
		echo "no python3 with moto and boto3 (tried \$BURST_MOTO_PYTHON, python3 on PATH, /usr/bin/python3): ./check.sh provides one (tools/moto.sh), or set BURST_MOTO_PYTHON" >&2
		return 1
	}
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# every request is recorded (moto's recorder): what a client sent can be
	# checked even where moto does not keep it (moto_sent)
	MOTO_RECORDING="$dir/moto-requests.jsonl"
	MOTO_ENABLE_RECORDING=True MOTO_RECORDER_FILEPATH="$MOTO_RECORDING" \
		"$MOTO_PY" -m moto.server -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 &
	MOTO_PID=$!
	# moto 5.2 keeps each instance's ClientToken and reports it; moto 5.1
	# (Debian 13's python3-moto) reports a fixed "ABCDE<account>3" for every
	# instance whatever RunInstances carried (its response template)
	if "$MOTO_PY" -c 'import inspect, sys, moto.ec2.models.instances as m; sys.exit("client_token" not in inspect.getsource(m))' 2>/dev/null; then
		MOTO_KEEPS_TOKEN=yes
	else
		MOTO_KEEPS_TOKEN=no
	fi
	MOTO_EP="http://127.0.0.1:$port"
	for _ in $(seq 100); do curl -s -o /dev/null "$MOTO_EP/moto-api/" && break; sleep 0.2; done
	if ! "$MOTO_PY" "$src/tests/integration/ec2_moto_setup.py" setup "$MOTO_EP" >"$dir/setup.json" 2>"$dir/setup.err"; then
		cat "$dir/setup.err" >&2
		echo "moto setup failed (moto_server's log: $dir/moto.log)" >&2
		moto_down
		return 1
	fi
	MOTO_AK=$(jget "$dir/setup.json" 'd["access_key"]')
	MOTO_SK=$(jget "$dir/setup.json" 'd["secret_key"]')
	MOTO_AMI=$(jget "$dir/setup.json" 'd["ami"]')
}

moto_subnet() {
	AWS_ACCESS_KEY_ID=$MOTO_AK AWS_SECRET_ACCESS_KEY=$MOTO_SK \
		"$MOTO_PY" "$src/tests/integration/ec2_moto_setup.py" subnet "$MOTO_EP" "$1"
}

moto_ip() {
	AWS_ACCESS_KEY_ID=$MOTO_AK AWS_SECRET_ACCESS_KEY=$MOTO_SK \
		"$MOTO_PY" "$src/tests/integration/ec2_moto_setup.py" ip "$MOTO_EP" "$1"
}

moto_describe() {
	AWS_ACCESS_KEY_ID=$MOTO_AK AWS_SECRET_ACCESS_KEY=$MOTO_SK \
		"$MOTO_PY" "$src/tests/integration/ec2_moto_setup.py" describe "$MOTO_EP" "$1"
}

moto_join_token() {
	AWS_ACCESS_KEY_ID=$MOTO_AK AWS_SECRET_ACCESS_KEY=$MOTO_SK \
		"$MOTO_PY" "$src/tests/integration/ec2_moto_setup.py" jointoken "$MOTO_EP" "$1"
}

# moto_sent ACTION PARAM: the values of PARAM in the requests of ACTION
# moto_server received so far, one a line, in order (from its recording).
moto_sent() {
	python3 - "$MOTO_RECORDING" "$1" "$2" <<'PY'
import base64, json, sys, urllib.parse
path, action, param = sys.argv[1:]
for line in open(path):
    e = json.loads(line)
    body = e.get("body") or ""
    if e.get("body_encoded"):
        body = base64.b64decode(body).decode()
    q = urllib.parse.parse_qs(body)
    q.update(urllib.parse.parse_qs(urllib.parse.urlparse(e.get("url", "")).query))
    if q.get("Action") == [action]:
        for v in q.get(param, []):
            print(v)
PY
}

moto_down() {
	[ -n "$MOTO_PID" ] && kill "$MOTO_PID" 2>/dev/null && wait "$MOTO_PID" 2>/dev/null
	MOTO_PID=
}

# fake_up DIR [ADDRESS]: start the fault-injecting EC2 endpoint
# (ec2_faults.py, also an instance metadata service) on 127.0.0.1, or on
# ADDRESS (a lab's bridge, which its emulated instances reach), its log in
# DIR/fake.log. Sets FAKE_PID and FAKE_EP; returns 1 when it does not
# start. fake_down: stop it.
FAKE_PID=

fake_up() {
	local dir=$1 addr=${2:-127.0.0.1}
	python3 "$src/tests/integration/ec2_faults.py" --bind "$addr" "$dir/fake.port" 2>"$dir/fake.log" &
	FAKE_PID=$!
	for _ in $(seq 100); do [ -s "$dir/fake.port" ] && break; sleep 0.1; done
	[ -s "$dir/fake.port" ] || { echo "ec2_faults.py did not start (its log: $dir/fake.log)" >&2; fake_down; return 1; }
	FAKE_EP="http://$addr:$(cat "$dir/fake.port")"
}

fake_down() {
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=
}

# ec2_peers.sh - the EC2 peers of the tests (sourced): moto_server and the
# fault-injecting endpoint.
#
# moto_up DIR: start moto_server on 127.0.0.1 at a free port, its log in
# DIR/moto.log, create an IAM user allowed ec2:* and turn signature checking
# on (ec2_moto_setup.py). The Python is MOTO_PY: $BURST_MOTO_PYTHON (check.sh
# sets it, providing moto where the system lacks it: tools/moto.sh), else
# the python3 first on PATH or /usr/bin/python3, whichever has moto. Sets
# MOTO_PID, MOTO_EP (http://127.0.0.1:PORT), MOTO_AK and MOTO_SK (the user's
# key) and MOTO_AMI (an image moto knows). Returns 1, with the reason on
# stderr and moto stopped, when there is no moto, moto does not answer or the
# setup fails; the caller bails.
# moto_down: stop it (nothing when it is not running).
# moto_subnet CIDR: make a VPC and a subnet of CIDR in moto (us-east-1) and
# print the subnet's id: instances launched with SubnetId= get their private
# IPs there (the agent makes that the node's Slurm NodeAddr), so a test's
# emulated instance takes that address in its namespace.
# moto_ip INSTANCE: the instance's private IP.
# jget FILE EXPR: EXPR (Python, the JSON document is d) of a JSON file.

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

MOTO_PID=
MOTO_PY=
. "$src/tools/moto.sh"

moto_up() {
	local dir=$1 port
	MOTO_PY=$(burst_moto_find "$src/_build/moto") || {
		echo "no python3 with moto and boto3 (tried \$BURST_MOTO_PYTHON, python3 on PATH, /usr/bin/python3): ./check.sh provides one (tools/moto.sh), or set BURST_MOTO_PYTHON" >&2
		return 1
	}
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$MOTO_PY" -m moto.server -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 &
	MOTO_PID=$!
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

moto_down() {
	[ -n "$MOTO_PID" ] && kill "$MOTO_PID" 2>/dev/null && wait "$MOTO_PID" 2>/dev/null
	MOTO_PID=
}

# fake_up DIR: start the fault-injecting EC2 endpoint (ec2_faults.py), its
# log in DIR/fake.log. Sets FAKE_PID and FAKE_EP; returns 1 when it does not
# start. fake_down: stop it.
FAKE_PID=

fake_up() {
	local dir=$1
	python3 "$src/tests/integration/ec2_faults.py" "$dir/fake.port" 2>"$dir/fake.log" &
	FAKE_PID=$!
	for _ in $(seq 100); do [ -s "$dir/fake.port" ] && break; sleep 0.1; done
	[ -s "$dir/fake.port" ] || { echo "ec2_faults.py did not start (its log: $dir/fake.log)" >&2; fake_down; return 1; }
	FAKE_EP="http://127.0.0.1:$(cat "$dir/fake.port")"
}

fake_down() {
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=
}

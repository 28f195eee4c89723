# ec2_peers.sh - the EC2 peers of the tests (sourced): moto_server and the
# fault-injecting endpoint.
#
# moto_up DIR: start moto_server (the python3 first on PATH) on 127.0.0.1
# at a free port, its log in DIR/moto.log, create an IAM user allowed ec2:*
# and turn signature checking on (ec2_moto_setup.py). Sets MOTO_PID,
# MOTO_EP (http://127.0.0.1:PORT), MOTO_AK and MOTO_SK (the user's key) and
# MOTO_AMI (an image moto knows). Returns 1, with the reason on stderr and moto
# stopped, when moto does not answer or the setup fails; the caller bails.
# moto_down: stop it (nothing when it is not running).
# jget FILE EXPR: EXPR (Python, the JSON document is d) of a JSON file.

jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

MOTO_PID=

moto_up() {
	local dir=$1 port
	python3 -c 'import moto.server, boto3' 2>/dev/null \
		|| { echo "python3 ($(command -v python3)) has no moto/boto3 (pip install 'moto[server]')" >&2; return 1; }
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	python3 -m moto.server -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 &
	MOTO_PID=$!
	MOTO_EP="http://127.0.0.1:$port"
	for _ in $(seq 100); do curl -s -o /dev/null "$MOTO_EP/moto-api/" && break; sleep 0.2; done
	if ! python3 "$src/tests/integration/ec2_moto_setup.py" setup "$MOTO_EP" >"$dir/setup.json" 2>"$dir/setup.err"; then
		cat "$dir/setup.err" >&2
		echo "moto setup failed (moto_server's log: $dir/moto.log)" >&2
		moto_down
		return 1
	fi
	MOTO_AK=$(jget "$dir/setup.json" 'd["access_key"]')
	MOTO_SK=$(jget "$dir/setup.json" 'd["secret_key"]')
	MOTO_AMI=$(jget "$dir/setup.json" 'd["ami"]')
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

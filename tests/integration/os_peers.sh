# os_peers.sh - the OpenStack peers of the tests (sourced): Keystone v3 and
# Nova's compute API on 127.0.0.1, from Debian's python3-keystone and
# python3-nova (tools/deps.sh BURST_OPENSTACK_DEPS).
#
# os_up DIR: start Keystone (keystone-wsgi-public, SQLite, fernet tokens; its
# log in DIR/keystone.log), make a project "burst" with a user "burst"
# (member), a service user "nova", an application credential of the burst
# user, the compute service and its endpoints (RegionOne), then start Nova
# (os_nova.py: API, conductor, scheduler and the fake virt driver in one
# process; its log in DIR/nova.log) with keystonemiddleware checking every
# token against that Keystone. Sets OS_AUTH_EP (http://127.0.0.1:KPORT/v3),
# OS_NOVA_EP, OS_PW (the burst user's password), OS_AC_ID/OS_AC_SECRET (the
# application credential), OS_IMAGE (an image id Nova's fake Glance knows),
# OS_NET (a network id), and OS_ENV (a file to source for the openstack CLI
# as the burst user). OS_TOKEN_EXPIRATION (seconds, default 3600) is the
# life of Keystone's tokens. Once the caller writes a /24 prefix ("10.1.2")
# into DIR/nova-addresses, each new server's port gets the next address of
# it from .200 on (the servers' "addresses", which the driver makes their
# Slurm NodeAddr). Returns 1 with the reason on stderr (and everything
# stopped) when something does not come up; the caller bails.
# os_down: stop both. os_cli ARGS, os_admin ARGS: the openstack CLI as the
# burst user, as admin; os_token, os_api: the same through curl (below).

OS_KS_PID= OS_NOVA_PID=
OS_PY=/usr/bin/python3

os_free_port() { "$OS_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

os_wait_http() {   # URL TRIES PID
	local _
	for _ in $(seq "$2"); do
		curl -s -o /dev/null "$1" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

os_jget() { "$OS_PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# os_token burst|admin: a token of that user (curl: the CLI costs seconds a call)
os_token() {
	local user=burst pw=$OS_PW project=burst
	[ "$1" = admin ] && user=admin pw=$(cat "$OS_DIR/admin.pw") project=admin
	curl -s -D - -o /dev/null -H 'Content-Type: application/json' -d "{\"auth\": {\"identity\": {
		\"methods\": [\"password\"], \"password\": {\"user\": {\"name\": \"$user\",
		\"domain\": {\"name\": \"Default\"}, \"password\": \"$pw\"}}},
		\"scope\": {\"project\": {\"name\": \"$project\", \"domain\": {\"name\": \"Default\"}}}}}" \
		"$OS_AUTH_EP/auth/tokens" | tr -d '\r' | sed -n 's/^[Xx]-[Ss]ubject-[Tt]oken: *//p'
}
# os_api burst|admin METHOD PATH [JSON]: a compute request (microversion
# $OS_MV, default 2.52); the body on stdout, then a line with the status
os_api() {
	local tok
	tok=$(os_token "$1") || return 1
	curl -s -X "$2" -H "X-Auth-Token: $tok" -H "OpenStack-API-Version: compute ${OS_MV:-2.52}" \
		-H 'Content-Type: application/json' ${4:+-d "$4"} -w '\n%{http_code}\n' "$OS_NOVA_EP$3"
}

os_cli() { (. "$OS_DIR/os.env" && openstack "$@"); }
os_admin() { (. "$OS_DIR/admin.env" && openstack "$@"); }

os_up() {
	local dir=$1 kport nport gport admin_pw svc_pw
	OS_DIR=$dir
	"$OS_PY" -c 'import keystone, nova.tests.functional, keystonemiddleware' 2>/dev/null \
		|| { echo "$OS_PY has no keystone/nova test fixtures (tools/deps.sh: BURST_OPENSTACK_DEPS)" >&2; return 1; }
	kport=$(os_free_port)
	admin_pw=adm-$RANDOM$RANDOM svc_pw=svc-$RANDOM$RANDOM OS_PW=pw-$RANDOM$RANDOM
	mkdir -p "$dir/ks/fernet" "$dir/ks/cred"
	cat >"$dir/ks/keystone.conf" <<KS
[DEFAULT]
log_file = $dir/keystone.log
[database]
connection = sqlite:///$dir/ks/keystone.db
[token]
provider = fernet
expiration = ${OS_TOKEN_EXPIRATION:-3600}
[fernet_tokens]
key_repository = $dir/ks/fernet
[credential]
key_repository = $dir/ks/cred
KS
	OS_AUTH_EP="http://127.0.0.1:$kport/v3"
	local kc=(--config-file "$dir/ks/keystone.conf")
	if ! { keystone-manage "${kc[@]}" db_sync &&
	       keystone-manage "${kc[@]}" fernet_setup --keystone-user root --keystone-group root &&
	       keystone-manage "${kc[@]}" credential_setup --keystone-user root --keystone-group root &&
	       keystone-manage "${kc[@]}" bootstrap --bootstrap-password "$admin_pw" \
			--bootstrap-admin-url "$OS_AUTH_EP/" --bootstrap-public-url "$OS_AUTH_EP/" \
			--bootstrap-internal-url "$OS_AUTH_EP/" --bootstrap-region-id RegionOne; } \
			>"$dir/keystone-manage.log" 2>&1 ||
	   ! "$OS_PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("pragma journal_mode=wal")' \
			"$dir/ks/keystone.db"; then
		cat "$dir/keystone-manage.log" >&2
		echo "keystone-manage failed" >&2
		return 1
	fi
	# WAL: Keystone's pooled connections keep read transactions open, which
	# in SQLite's default journal mode lock writers out
	OS_KEYSTONE_CONFIG_FILES="$dir/ks/keystone.conf" keystone-wsgi-public --host 127.0.0.1 --port "$kport" \
		>"$dir/keystone.out" 2>&1 &
	OS_KS_PID=$!
	if ! os_wait_http "$OS_AUTH_EP" 150 "$OS_KS_PID"; then
		tail -20 "$dir/keystone.out" >&2
		echo "keystone did not answer on $OS_AUTH_EP" >&2
		os_down
		return 1
	fi
	(umask 077; echo "$admin_pw" >"$dir/admin.pw")
	cat >"$dir/admin.env" <<ENV
export OS_AUTH_URL=$OS_AUTH_EP OS_IDENTITY_API_VERSION=3 OS_USERNAME=admin OS_PASSWORD=$admin_pw
export OS_PROJECT_NAME=admin OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne
unset OS_CLOUD OS_TOKEN OS_AUTH_TYPE OS_APPLICATION_CREDENTIAL_ID OS_APPLICATION_CREDENTIAL_SECRET
ENV
	nport=$(os_free_port)
	OS_NOVA_EP="http://127.0.0.1:$nport/v2.1"
	gport=$(os_free_port)
	OS_GLANCE_EP="http://127.0.0.1:$gport"
	if ! "$OS_PY" "$src/tests/integration/os_keystone_setup.py" "$OS_AUTH_EP" "$admin_pw" "$OS_PW" \
			"$svc_pw" "$OS_NOVA_EP" "$OS_GLANCE_EP" >"$dir/ks-setup.json" 2>"$dir/ks-setup.log"; then
		cat "$dir/ks-setup.log" >&2
		echo "keystone setup (os_keystone_setup.py) failed (its log: $dir/keystone.log)" >&2
		os_down
		return 1
	fi
	OS_AC_ID=$(os_jget "$dir/ks-setup.json" ac_id)
	OS_AC_SECRET=$(os_jget "$dir/ks-setup.json" ac_secret)
	cat >"$dir/os.env" <<ENV
export OS_AUTH_URL=$OS_AUTH_EP OS_IDENTITY_API_VERSION=3 OS_USERNAME=burst OS_PASSWORD=$OS_PW
export OS_PROJECT_NAME=burst OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne
unset OS_CLOUD OS_TOKEN OS_AUTH_TYPE OS_APPLICATION_CREDENTIAL_ID OS_APPLICATION_CREDENTIAL_SECRET
ENV
	"$OS_PY" "$src/tests/integration/os_nova.py" --port "$nport" --glance-port "$gport" --keystone "$OS_AUTH_EP" \
		--service-password "$svc_pw" --info "$dir/nova.json" --stop "$dir/nova.stop" \
		--address-file "$dir/nova-addresses" \
		>"$dir/nova.log" 2>&1 &
	OS_NOVA_PID=$!
	for _ in $(seq 600); do
		[ -s "$dir/nova.json" ] && break
		kill -0 "$OS_NOVA_PID" 2>/dev/null || break
		sleep 0.2
	done
	if [ ! -s "$dir/nova.json" ]; then
		tail -30 "$dir/nova.log" >&2
		echo "nova (os_nova.py) did not start (its log: $dir/nova.log)" >&2
		os_down
		return 1
	fi
	OS_IMAGE=$(os_jget "$dir/nova.json" image)
	OS_BROKEN_IMAGE=$(os_jget "$dir/nova.json" broken_image)
	OS_NET=$(os_jget "$dir/nova.json" network)
}

os_down() {
	if [ -n "$OS_NOVA_PID" ]; then
		: >"$OS_DIR/nova.stop"
		for _ in $(seq 50); do kill -0 "$OS_NOVA_PID" 2>/dev/null || break; sleep 0.1; done
		kill "$OS_NOVA_PID" 2>/dev/null
		wait "$OS_NOVA_PID" 2>/dev/null
	fi
	[ -n "$OS_KS_PID" ] && kill "$OS_KS_PID" 2>/dev/null && wait "$OS_KS_PID" 2>/dev/null
	OS_NOVA_PID= OS_KS_PID=
}

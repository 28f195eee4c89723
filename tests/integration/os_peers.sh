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
# token against that Keystone, and os_nova.py's shim of Glance's image reads
# (the same token check; name=, status= and visibility= honoured). Sets
# OS_AUTH_EP (http://127.0.0.1:KPORT/v3), OS_NOVA_EP, OS_GLANCE_EP, OS_PW (the burst user's password), OS_AC_ID/OS_AC_SECRET (the
# application credential), OS_PROJECT_ID and OS_USER_ID (of burst), OS_IMAGE (an image id Nova's fake Glance knows),
# OS_NET (a network id), and OS_ENV (a file to source for the openstack CLI
# as the burst user). OS_TOKEN_EXPIRATION (seconds, default 3600) is the
# life of Keystone's tokens. Once the caller writes a /24 prefix ("10.1.2")
# into DIR/nova-addresses, each new server's port gets the next address of
# it from .200 on (the servers' "addresses", which the driver makes their
# Slurm NodeAddr). Returns 1 with the reason on stderr (and everything
# stopped) when something does not come up; the caller bails.
# os_down: stop both. os_cli ARGS, os_admin ARGS: the openstack CLI as the
# burst user, as admin; os_token, os_api, os_ks: the same through curl (below).

OS_KS_PID= OS_NOVA_PID= OS_TOKEN_LIFE=3600
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

# os_token burst|admin: a token of that user (curl: the CLI costs seconds a
# call), kept in $OS_DIR/token.USER for half the life of Keystone's tokens, so
# that Keystone hashes the password and keystonemiddleware validates a token
# once, not at every call; os_ks drops them when a user is changed
os_token() {
	local user=burst pw=$OS_PW project=burst keep=$(( OS_TOKEN_LIFE / 2 )) tok
	[ "$1" = admin ] && user=admin pw=$(cat "$OS_DIR/admin.pw") project=admin
	if [ -n "$(find "$OS_DIR/token.$user" -newermt "@$(( $(date +%s) - keep ))" 2>/dev/null)" ]; then
		cat "$OS_DIR/token.$user"
		return
	fi
	tok=$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' -d "{\"auth\": {\"identity\": {
		\"methods\": [\"password\"], \"password\": {\"user\": {\"name\": \"$user\",
		\"domain\": {\"name\": \"Default\"}, \"password\": \"$pw\"}}},
		\"scope\": {\"project\": {\"name\": \"$project\", \"domain\": {\"name\": \"Default\"}}}}}" \
		"$OS_AUTH_EP/auth/tokens" | tr -d '\r' | sed -n 's/^[Xx]-[Ss]ubject-[Tt]oken: *//p')
	[ -n "$tok" ] || return 1
	echo "$tok" >"$OS_DIR/token.$user.$BASHPID" && mv "$OS_DIR/token.$user.$BASHPID" "$OS_DIR/token.$user"
	echo "$tok"
}
# os_api burst|admin METHOD PATH [JSON]: a compute request (microversion
# $OS_MV, default 2.52); the body on stdout, then a line with the status
os_api() {
	local tok
	tok=$(os_token "$1") || return 1
	curl -s -X "$2" -H "X-Auth-Token: $tok" -H "OpenStack-API-Version: compute ${OS_MV:-2.52}" \
		-H 'Content-Type: application/json' ${4:+-d "$4"} -w '\n%{http_code}\n' "$OS_NOVA_EP$3"
}
# os_image PATH: an image-service GET as the burst user (body, then status)
os_image() {
	local tok
	tok=$(os_token burst) || return 1
	curl -s -H "X-Auth-Token: $tok" -w '\n%{http_code}\n' "$OS_GLANCE_EP$1"
}
# os_ks METHOD PATH [JSON]: an identity request as admin (body, then status);
# the kept tokens are dropped (a user's change may revoke them)
os_ks() {
	local tok
	tok=$(os_token admin) || return 1
	rm -f "$OS_DIR/token.burst" "$OS_DIR/token.admin"
	curl -s -X "$1" -H "X-Auth-Token: $tok" -H 'Content-Type: application/json' ${3:+-d "$3"} \
		-w '\n%{http_code}\n' "$OS_AUTH_EP$2"
}
# os_jq PYTHON: runs PYTHON with d = the JSON body of an os_api/os_ks answer
# on stdin (its status line dropped)
os_jq() { "$OS_PY" -c "import json, sys; d = json.loads(sys.stdin.read().rsplit(chr(10), 2)[0] or 'null'); $1"; }
# os_ok: passes an os_api/os_ks answer on stdin through when its status is 2xx
os_ok() { local a; a=$(cat); printf '%s\n' "$a"; case "$(tail -1 <<<"$a")" in 2??) return 0 ;; esac; return 1; }

os_cli() { (. "$OS_DIR/os.env" && openstack "$@"); }
os_admin() { (. "$OS_DIR/admin.env" && openstack "$@"); }

os_up() {
	local dir=$1 kport nport gport admin_pw svc_pw r
	OS_DIR=$dir OS_TOKEN_LIFE=${OS_TOKEN_EXPIRATION:-3600}
	"$OS_PY" -c 'import keystone, nova.tests.functional, keystonemiddleware' 2>/dev/null \
		|| { echo "$OS_PY has no keystone/nova test fixtures (tools/deps.sh: BURST_OPENSTACK_DEPS)" >&2; return 1; }
	kport=$(os_free_port) nport=$(os_free_port) gport=$(os_free_port)
	admin_pw=adm-$RANDOM$RANDOM svc_pw=svc-$RANDOM$RANDOM OS_PW=pw-$RANDOM$RANDOM
	mkdir -p "$dir/ks/fernet" "$dir/ks/cred"
	cat >"$dir/ks/keystone.conf" <<KS
[DEFAULT]
log_file = $dir/keystone.log
[database]
connection = sqlite:///$dir/ks/keystone.db
[identity]
password_hash_rounds = 4
[token]
provider = fernet
expiration = $OS_TOKEN_LIFE
[fernet_tokens]
key_repository = $dir/ks/fernet
[credential]
key_repository = $dir/ks/cred
KS
	OS_AUTH_EP="http://127.0.0.1:$kport/v3"
	OS_NOVA_EP="http://127.0.0.1:$nport/v2.1"
	OS_GLANCE_EP="http://127.0.0.1:$gport"
	# Nova starts (about a minute of Python under load) while Keystone is
	# made: it asks Keystone nothing before the first request it serves
	"$OS_PY" "$src/tests/integration/os_nova.py" --port "$nport" --glance-port "$gport" --keystone "$OS_AUTH_EP" \
		--service-password "$svc_pw" --info "$dir/nova.json" --stop "$dir/nova.stop" \
		--address-file "$dir/nova-addresses" \
		>"$dir/nova.log" 2>&1 &
	OS_NOVA_PID=$!
	local kc=(--config-file "$dir/ks/keystone.conf") fpid cpid
	# the key repositories are files only: made while db_sync runs
	keystone-manage "${kc[@]}" fernet_setup --keystone-user root --keystone-group root >"$dir/keystone-fernet.log" 2>&1 &
	fpid=$!
	keystone-manage "${kc[@]}" credential_setup --keystone-user root --keystone-group root >"$dir/keystone-cred.log" 2>&1 &
	cpid=$!
	if ! { keystone-manage "${kc[@]}" db_sync; r=$?
	       wait "$fpid" && wait "$cpid" && [ "$r" = 0 ] &&
	       keystone-manage "${kc[@]}" bootstrap --bootstrap-password "$admin_pw" \
			--bootstrap-admin-url "$OS_AUTH_EP/" --bootstrap-public-url "$OS_AUTH_EP/" \
			--bootstrap-internal-url "$OS_AUTH_EP/" --bootstrap-region-id RegionOne; } \
			>"$dir/keystone-manage.log" 2>&1 ||
	   ! "$OS_PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("pragma journal_mode=wal")' \
			"$dir/ks/keystone.db"; then
		cat "$dir/keystone-fernet.log" "$dir/keystone-cred.log" "$dir/keystone-manage.log" >&2
		echo "keystone-manage failed" >&2
		os_down
		return 1
	fi
	# bcrypt's cheapest cost (4, not 12) for the passwords and application
	# credential secrets: Keystone serves one request at a time, and each
	# token it issues costs one hash (0.5 s of CPU at cost 12 under load; the
	# agent asks about one a second here), so at load 9 its queue grew without
	# end and every Nova request (keystonemiddleware validates tokens there)
	# hung with it
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
	if ! "$OS_PY" "$src/tests/integration/os_keystone_setup.py" "$OS_AUTH_EP" "$admin_pw" "$OS_PW" \
			"$svc_pw" "$OS_NOVA_EP" "$OS_GLANCE_EP" >"$dir/ks-setup.json" 2>"$dir/ks-setup.log"; then
		cat "$dir/ks-setup.log" >&2
		echo "keystone setup (os_keystone_setup.py) failed (its log: $dir/keystone.log)" >&2
		os_down
		return 1
	fi
	OS_AC_ID=$(os_jget "$dir/ks-setup.json" ac_id)
	OS_AC_SECRET=$(os_jget "$dir/ks-setup.json" ac_secret)
	OS_PROJECT_ID=$(os_jget "$dir/ks-setup.json" project_id)
	OS_USER_ID=$(os_jget "$dir/ks-setup.json" user_id)
	cat >"$dir/os.env" <<ENV
export OS_AUTH_URL=$OS_AUTH_EP OS_IDENTITY_API_VERSION=3 OS_USERNAME=burst OS_PASSWORD=$OS_PW
export OS_PROJECT_NAME=burst OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne
unset OS_CLOUD OS_TOKEN OS_AUTH_TYPE OS_APPLICATION_CREDENTIAL_ID OS_APPLICATION_CREDENTIAL_SECRET
ENV
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

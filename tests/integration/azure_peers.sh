# azure_peers.sh - sourced by the azure tests: a CA the test makes (openssl),
# tests/integration/azure_fake.py behind TLS with a certificate of that CA,
# and its metadata service on plain HTTP, all on 127.0.0.1.
#
#   az_up WORK [CONFIG-JSON]   start it (WORK/az/config.json from the JSON, or
#                              the defaults below); sets AZ_URL (https://127.0.0.1:PORT),
#                              AZ_IMDS (http://127.0.0.1:PORT, or AZ_IMDS_BIND's address
#                              when set: a test's network), AZ_CA (the CA's PEM),
#                              AZ_DIR, AZ_SUB, AZ_TENANT, AZ_CLIENT, AZ_SECRET, AZ_RG
#   az_config JSON             replace the fake's config (merged over the defaults) and reload it
#   az_down                    stop it
#   az_state                   the fake's VMs as JSON (GET /_fake/state)
#   az_event TYPE VM [SECONDS]  a Scheduled Event for VM (its NotBefore SECONDS on, default 30)
#   az_sdk_tool                the node_modules of Microsoft's SDK (tools/npm-tool.sh azure-sdk)

AZ_SUB=00000000-0000-4000-8000-00000000a2b1
AZ_TENANT=11111111-1111-4111-8111-11111111beef
AZ_CLIENT=22222222-2222-4222-8222-2222222c11e7
AZ_SECRET='s3cret~Value.With-Chars_42'
AZ_RG=burst-rg

az_defaults() {   # the defaults, with the JSON $1 merged over them
	python3 - "$1" "$AZ_SUB" "$AZ_TENANT" "$AZ_CLIENT" "$AZ_SECRET" "${AZ_CERT_MODULUS:-}" <<'PY'
import json, sys
extra, sub, tenant, client, secret, modulus = sys.argv[1:7]
d = {"subscription": sub, "tenant": tenant, "apps": {client: {"secret": secret}},
     "managed_identity": True, "lro_polls": 2, "retry_after": 1, "page": 50}
if modulus:
    d["apps"]["33333333-3333-4333-8333-33333333ce27"] = {"modulus": modulus, "exponent": 65537}
d.update(json.loads(extra or "{}"))
print(json.dumps(d, indent=1))
PY
}

az_make_ca() {   # DIR: ca.pem, server.pem, server.key (127.0.0.1 and localhost)
	local d=$1
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=burst test CA" \
		-keyout "$d/ca.key" -out "$d/ca.pem" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		>/dev/null 2>&1 &&
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$d/server.key" -out "$d/server.csr" \
		>/dev/null 2>&1 &&
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
		>"$d/server.ext" &&
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
		-extfile "$d/server.ext" -out "$d/server.pem" >/dev/null 2>&1
}

az_up() {
	local work=$1 i
	AZ_DIR="$work/az"
	mkdir -p "$AZ_DIR" || return 1
	az_make_ca "$AZ_DIR" || { echo "azure_peers: openssl could not make the test CA" >&2; return 1; }
	AZ_CA="$AZ_DIR/ca.pem"
	# a client certificate for the certificate credential: key and certificate in one PEM
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=burst client" \
		-keyout "$AZ_DIR/client.key" -out "$AZ_DIR/client.crt" >/dev/null 2>&1 &&
		cat "$AZ_DIR/client.key" "$AZ_DIR/client.crt" >"$AZ_DIR/client.pem" && chmod 600 "$AZ_DIR/client.pem" ||
		return 1
	AZ_CERT_MODULUS=$(openssl x509 -in "$AZ_DIR/client.crt" -noout -modulus | sed 's/^Modulus=//')
	AZ_CERT_CLIENT=33333333-3333-4333-8333-33333333ce27
	az_defaults "${2:-}" >"$AZ_DIR/config.json" || return 1
	rm -f "$AZ_DIR/port" "$AZ_DIR/imds_port"
	python3 "$BURST_TOP_SRCDIR/tests/integration/azure_fake.py" --dir "$AZ_DIR" --cert "$AZ_DIR/server.pem" \
		--key "$AZ_DIR/server.key" --imds --imds-bind "${AZ_IMDS_BIND:-127.0.0.1}" >"$AZ_DIR/fake.log" 2>&1 &
	AZ_PID=$!
	for i in $(seq 100); do
		[ -s "$AZ_DIR/port" ] && [ -s "$AZ_DIR/imds_port" ] && break
		kill -0 "$AZ_PID" 2>/dev/null || { cat "$AZ_DIR/fake.log" >&2; return 1; }
		sleep 0.1
	done
	[ -s "$AZ_DIR/port" ] || return 1
	AZ_URL="https://127.0.0.1:$(cat "$AZ_DIR/port")"
	AZ_IMDS="http://${AZ_IMDS_BIND:-127.0.0.1}:$(cat "$AZ_DIR/imds_port")"
	export AZ_URL AZ_IMDS AZ_CA AZ_DIR AZ_SUB AZ_TENANT AZ_CLIENT AZ_SECRET AZ_RG AZ_CERT_CLIENT
}

az_config() {
	az_defaults "$1" >"$AZ_DIR/config.json.new" && mv "$AZ_DIR/config.json.new" "$AZ_DIR/config.json" &&
		curl -fsS --cacert "$AZ_CA" -X POST "$AZ_URL/_fake/config" >/dev/null
}

az_state() {
	curl -fsS --cacert "$AZ_CA" "$AZ_URL/_fake/state"
}

az_event() {
	curl -fsS --cacert "$AZ_CA" -X POST -d "{\"type\": \"$1\", \"resources\": [\"$2\"], \"in\": ${3:-30}}" \
		"$AZ_URL/_fake/scheduled_event" >/dev/null
}

az_down() {
	[ -n "${AZ_PID:-}" ] && kill "$AZ_PID" 2>/dev/null && wait "$AZ_PID" 2>/dev/null
	AZ_PID=
}

az_sdk_tool() {
	bash "$BURST_TOP_SRCDIR/tools/npm-tool.sh" azure-sdk
}

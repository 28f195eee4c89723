#!/usr/bin/env bash
# test_openstack_driver.sh - the OpenStack peers (real Keystone and Nova on
# 127.0.0.1, os_peers.sh) as the openstack CLI sees them, then the agent's
# openstack provider driver against them, without Slurm. Nova is started
# once for the whole script (its start costs about 15 s).
# Needs root only for nothing; needs BURST_OPENSTACK_DEPS (tools/deps.sh).
# burst-matrix: host-only (Nova and Keystone are not in the Debian 13 root)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/os_peers.sh"

work=$(mktemp -d /tmp/test_openstack_driver.XXXXXX)
cleanup() {
	os_down
	rm -rf "$work"
}
trap cleanup EXIT
TAP_DIAG="$work/out"

os_up "$work" || bail "Keystone and Nova did not start"

# --- the peers, through the openstack CLI (keystoneauth, then Nova) ---
os_cli server create --flavor m1.small --image "$OS_IMAGE" --network "$OS_NET" --wait \
	-f shell -c id -c status cli-1 >"$work/out" 2>&1
cli1=$(sed -n 's/^id="\(.*\)"$/\1/p' "$work/out")
grep -qx 'status="ACTIVE"' "$work/out"
ok $? "openstack server create: ACTIVE with a token Keystone issued ($cli1)"
os_cli server list -f value -c ID -c Name >"$work/out" 2>&1
grep -q "^$cli1 cli-1$" "$work/out"
ok $? "openstack server list shows it"
code=$(curl -s -o "$work/out" -w '%{http_code}' -H 'X-Auth-Token: gAAAAAnot-a-token' "$OS_NOVA_EP/servers")
[ "$code" = 401 ]
ok $? "Nova refuses a token Keystone did not issue: 401 (keystonemiddleware checks)"
# the image service (os_nova.py's shim of Glance's reads) checks tokens the same way
code=$(curl -s -o "$work/out" -w '%{http_code}' -H 'X-Auth-Token: gAAAAAnot-a-token' "$OS_GLANCE_EP/v2/images?name=burst-broken")
[ "$code" = 401 ]
ok $? "the image service refuses a token Keystone did not issue: 401 ($code)" "$work/out"
code=$(curl -s -o "$work/out" -w '%{http_code}' -H 'X-Identity-Status: Confirmed' "$OS_GLANCE_EP/v2/images/$OS_IMAGE")
[ "$code" = 401 ]
ok $? "... and a request with no token (a forged X-Identity-Status header): 401 ($code)" "$work/out"
imgs() { os_image "$1" | os_ok | os_jq 'print(" ".join(i["id"] + ":" + i["status"] for i in sorted(d["images"], key=lambda i: i["status"])))'; }
imgs "/v2/images?name=burst-broken" >"$work/out" 2>&1
[ "$(cat "$work/out")" = "$OS_BROKEN_IMAGE:active b0b0b0b0-0000-4000-8000-00000000cafe:queued" ]
ok $? "with the burst user's token: two images named burst-broken, one active, one queued ($(cat "$work/out"))" "$work/out"
imgs "/v2/images?name=burst-broken&status=active" >"$work/out" 2>&1
[ "$(cat "$work/out")" = "$OS_BROKEN_IMAGE:active" ]
ok $? "status=active: the active one only ($(cat "$work/out"))" "$work/out"
imgs "/v2/images?status=queued" >"$work/out" 2>&1
[ "$(cat "$work/out")" = "b0b0b0b0-0000-4000-8000-00000000cafe:queued" ]
ok $? "status=queued: the queued one only ($(cat "$work/out"))" "$work/out"
os_image "/v2/images?os_hidden=true" >"$work/out" 2>&1
[ "$(tail -1 "$work/out")" = 400 ] && grep -q "does not filter by os_hidden" "$work/out"
ok $? "a filter the shim does not know is refused (400), not ignored" "$work/out"
# from here on the peers are asked through curl (os_api: the same requests
# the CLI makes, without its seconds of start-up a call), the CLI only where
# what it shows is the point
server_status() {   # SERVER: its status and fault message, GONE when Nova does not know it
	local out
	out=$(os_api burst GET "/servers/$1")
	[ "$(tail -1 <<<"$out")" = 404 ] && { echo GONE; return; }
	os_jq 'print(d["server"]["status"], d["server"].get("fault", {}).get("message", ""))' <<<"$out"
}
wait_status() {   # SERVER REGEX: until its status matches (60 s)
	for _ in $(seq 300); do server_status "$1" >"$work/status"; grep -q "$2" "$work/status" && return 0; sleep 0.2; done
	return 1
}
flavor_id() { os_api burst GET /flavors | os_jq "print(next(f['id'] for f in d['flavors'] if f['name'] == '$1'))"; }
cli2=$(os_api burst POST /servers "{\"server\": {\"name\": \"cli-2\", \"flavorRef\": \"$(flavor_id m1.small)\",
	\"imageRef\": \"$OS_BROKEN_IMAGE\", \"networks\": [{\"uuid\": \"$OS_NET\"}]}}" | os_ok | os_jq 'print(d["server"]["id"])')
wait_status "$cli2" '^ERROR .*burst-broken does not boot'
ok $? "a server of the image burst-broken goes ERROR with Nova's fault" "$work/status"
os_api burst DELETE "/servers/$cli1" >"$work/out" && os_api burst DELETE "/servers/$cli2" >>"$work/out" &&
	wait_status "$cli1" '^GONE$' && wait_status "$cli2" '^GONE$'
ok $? "server delete: gone" "$work/out" "$work/status"

# --- the driver (tests/unit/aws_driver_cli drives any provider type) ---
cli="$build/tests/unit/aws_driver_cli"
[ -x "$cli" ] || bail "no $cli (make check builds it)"
rc() {   # rc FILE KEY=VALUE...: an openrc-style credentials file, mode 0600
	local f=$1; shift
	(umask 077; printf 'export %s\n' "$@" >"$f")
}
rc "$work/pw.rc" OS_AUTH_URL="$OS_AUTH_EP" OS_USERNAME=burst "OS_PASSWORD='$OS_PW'" \
	OS_PROJECT_NAME=burst OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default
rc "$work/ac.rc" OS_AUTH_URL="$OS_AUTH_EP" OS_APPLICATION_CREDENTIAL_ID="$OS_AC_ID" \
	OS_APPLICATION_CREDENTIAL_SECRET="$OS_AC_SECRET"
rc "$work/bad.rc" OS_AUTH_URL="$OS_AUTH_EP" OS_USERNAME=burst OS_PASSWORD=not-the-password-42 \
	OS_PROJECT_NAME=burst
cat >"$work/burst.conf" <<CONF
ClusterName=drv
StateDir=$work/state
AllowInsecureEndpoint=yes
Provider=os Type=openstack CredentialsFile=$work/pw.rc Image=$OS_IMAGE Networks=$OS_NET JoinAddress=10.0.0.5:6830 Regions=RegionOne
Provider=osac Type=openstack CredentialsFile=$work/ac.rc Image=fakeimage123456x Networks=$OS_NET Interface=internal
Provider=osimg Type=openstack CredentialsFile=$work/ac.rc Image=burst-broken Networks=$OS_NET
Provider=osbad Type=openstack CredentialsFile=$work/bad.rc Image=$OS_IMAGE Networks=$OS_NET
CONF
mkdir -p "$work/state"
drv() { "$cli" "$work/burst.conf" "$@" >"$work/out" 2>"$work/err"; }
col() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$work/out"; }
nova_ids() {   # the project's servers named drv-NODE ('' for all)
	os_api burst GET /servers | os_ok | os_jq 'print("\n".join(s["id"] + " " + s["name"] for s in d["servers"]))' |
		awk -v n="drv-${1:-}" '$2 == n || n == "drv-" { print $1 }' | sort
}

drv os launch --type m1.small n1:1:tok-one n2:1:tok-two
[ "$(col n1 3)" = ok ] && [ "$(col n2 3)" = ok ] && [ "$(col n1 2)" != "$(col n2 2)" ]
ok $? "a batch of 2 (password auth): a server each" "$work/out" "$work/err"
first=$(awk '{print $1, $2}' "$work/out")
i1=$(col n1 2) i2=$(col n2 2)
grep -q "tokens 1$" "$work/err"; ok $? "one token for the whole batch" "$work/err"
[ "$(nova_ids | wc -l)" = 2 ]; ok $? "Nova has 2 servers"
# as the CLI shows a server the driver made
os_cli server show "$i2" -f json -c properties -c name >"$work/show" 2>&1
grep -q '"burst:node": "n2"' "$work/show" && grep -q '"burst:attempt": "1"' "$work/show" &&
	grep -q '"burst:cluster": "drv"' "$work/show" && grep -q '"burst:batch": "burst-[0-9a-f]\{40\}"' "$work/show" &&
	grep -q '"name": "drv-n2"' "$work/show"
ok $? "the server is named drv-n2 and carries burst:cluster/nodeset/node/attempt/batch metadata" "$work/show"
drv os launch --type m1.small n1:1:tok-one n2:1:tok-two
[ "$(awk '{print $1, $2}' "$work/out")" = "$first" ] && [ "$(nova_ids | wc -l)" = 2 ]
ok $? "the same batch again (a crash before recording) adopts both, creates none" "$work/out"
drv os launch --type 2 n1:2:tok-one-b
n1b=$(col n1 2)
[ "$(col n1 3)" = ok ] && [ "$n1b" != "$i1" ] && [ "$(nova_ids n1 | wc -l)" = 2 ]
ok $? "a new attempt of n1 creates a new server, the flavor given by id ($n1b)" "$work/out"
drv os list
[ "$(awk '$3 == "n1" && $4 == 2 { print $1 }' "$work/out")" = "$n1b" ] &&
	[ "$(awk '$3 == "n2" && $4 == 1 && $2 == "drv" { print $5 }' "$work/out")" = running ]
ok $? "list: the cluster's servers with node, attempt and state" "$work/out"

# the user data: what a server's cloud-init runs
OS_MV=2.3 os_api admin GET "/servers/$i2" 2>"$work/err" | os_jq 'print(d["server"]["OS-EXT-SRV-ATTR:user_data"])' |
	base64 -d >"$work/ud.sh"
head -1 "$work/ud.sh" | grep -qx '#!/bin/sh'; ok $? "the user data is a shell script (base64 in the request)" "$work/ud.sh" "$work/err"
printf '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\necho "BURST_JOIN_TOKEN=$BURST_JOIN_TOKEN"\n' >"$work/fake-node"
chmod +x "$work/fake-node"
BURST_INSTANCE_ID="$i2" BURST_NODE_BIN="$work/fake-node" BURST_STATE_DIR="$work/state" \
	sh "$work/ud.sh" >"$work/args" 2>&1
printf '%s\n' join --agent 10.0.0.5:6830 --node n2 --instance "$i2" \
	--record "$work/state/nodes/n2/admission.env" --provider os --instance-type m1.small \
	--region RegionOne -- slurmd -D -b -N n2 BURST_JOIN_TOKEN=tok-two >"$work/want"
diff -u "$work/want" "$work/args" >"$work/diff"
ok $? "it runs burst-node join as n2 with its token (in the environment), server id and JoinAddress" "$work/diff"

drv os exists n2 "$i2"; [ "$(cat "$work/out")" = 1 ]; ok $? "exists: an ACTIVE server is 1" "$work/out"
drv os terminate n2 "$i2"; ok $? "terminate" "$work/out"
for _ in $(seq 50); do drv os exists n2 "$i2"; [ "$(cat "$work/out")" = 0 ] && break; sleep 0.2; done
[ "$(cat "$work/out")" = 0 ]; ok $? "exists: a deleted server is 0" "$work/out"
drv os terminate n2 "$i2"; ok $? "terminate again (gone) is fine" "$work/out"

# key pair, availability zone, scheduler hints (a server group)
os_api burst POST /os-keypairs '{"keypair": {"name": "burst-key"}}' | os_ok >"$work/err" &&
	grp=$(os_api burst POST /os-server-groups '{"server_group": {"name": "burst-grp", "policies": ["affinity"]}}' |
		os_ok | os_jq 'print(d["server_group"]["id"])' 2>>"$work/err") && [ -n "$grp" ]
ok $? "a key pair and a server group ($grp)" "$work/err"
echo "Provider=oskey Type=openstack CredentialsFile=$work/pw.rc Image=$OS_IMAGE Networks=$OS_NET KeyName=burst-key AvailabilityZone=nova SchedulerHints=group:$grp" \
	>>"$work/burst.conf"
drv oskey launch --type m1.tiny k1:1:tok-k
ik=$(col k1 2)
os_api burst GET "/servers/$ik" >"$work/show" 2>&1
[ "$(col k1 3)" = ok ] && grep -q '"key_name": "burst-key"' "$work/show" &&
	grep -q '"OS-EXT-AZ:availability_zone": "nova"' "$work/show"
ok $? "KeyName= and AvailabilityZone= reach the server" "$work/out" "$work/show"
os_api burst GET "/os-server-groups/$grp" | os_jq 'print("\n".join(d["server_group"]["members"]))' >"$work/show" 2>&1
grep -qx "$ik" "$work/show"; ok $? "SchedulerHints=group:ID put it in the server group" "$work/show"
drv oskey terminate k1 "$ik"

# application credential, image by name (through the image service), the internal interface
drv osac launch --type m1.small a1:1:tok-a
grep -q "^a1 - permanent .*Image=fakeimage123456x: no active image of that name" "$work/out"
ok $? "an image name Glance does not have: permanent, saying so" "$work/out"
# by name: burst-broken has a queued twin of the same name, so the driver
# finds the one image only by asking for status=active
sed -i 's/Image=fakeimage123456x/Image=burst-broken/; /^Provider=osimg/d' "$work/burst.conf"
drv osac launch --type m1.small a1:1:tok-a
grep -q "^a1 - permanent openstack server .* went ERROR: Build of instance .* aborted: .*burst-broken does not boot$" "$work/out"
ok $? "application credential: a server that goes ERROR fails with Nova's fault" "$work/out" "$work/err"
[ -z "$(nova_ids a1)" ]; ok $? "... and is deleted (it would hold quota)"

# error classes
os_api admin POST /flavors '{"flavor": {"name": "burst.huge", "ram": 900000, "vcpus": 1, "disk": 1}}' >"$work/err" 2>&1
drv os launch --type burst.huge h1:1:tok-h
grep -q "^h1 - capacity .*went ERROR: No valid host was found\.$" "$work/out"
ok $? "a flavor no host can hold: capacity (the agent tries its next candidate)" "$work/out"
[ -z "$(nova_ids h1)" ]; ok $? "... its ERROR server deleted"
drv os launch --type m1.nosuch x1:1:tok-x
grep -q "^x1 - permanent .*no flavor named m1.nosuch" "$work/out"; ok $? "an unknown flavor: permanent, naming it" "$work/out"
os_api admin PUT "/os-quota-sets/$OS_PROJECT_ID" '{"quota_set": {"instances": 2}}' >"$work/err" 2>&1
drv os launch --type m1.small q1:1:tok-q q2:1:tok-q2
grep -q "^q1 - quota .*Quota exceeded for instances" "$work/out" && grep -q "^q2 - quota .*not tried" "$work/out"
ok $? "over the project's quota: quota, and the rest of the batch is not tried" "$work/out"
os_api admin PUT "/os-quota-sets/$OS_PROJECT_ID" '{"quota_set": {"instances": 500}}' >"$work/err" 2>&1
drv osbad launch --type m1.small b1:1:tok-b
grep -q "^b1 - auth .*Keystone .* refused the user burst (project burst) from file $work/bad.rc: HTTP 401" "$work/out"
ok $? "a wrong password: auth, naming the user and the file" "$work/out"
! grep -q "not-the-password-42" "$work/out" "$work/err"; ok $? "... and not the password"
chmod 644 "$work/ac.rc"
drv osac launch --type m1.small a2:1:tok-a2
grep -q "^a2 - auth .*has mode 0644.*chmod 600" "$work/out"; ok $? "a credentials file others can read: refused" "$work/out"
chmod 600 "$work/ac.rc"

drv os list
[ "$(wc -l <"$work/out")" = 2 ]; ok $? "list: what is left (n1's two attempts)" "$work/out"

# --- burstctl catalog refresh from Nova's flavors ---
burstctl="$build/burstctl/burstctl"
gpu4=$(os_api admin POST /flavors '{"flavor": {"name": "burst.gpu4", "vcpus": 8, "ram": 65536, "disk": 40,
	"OS-FLV-EXT-DATA:ephemeral": 100}}' 2>"$work/err" | os_ok | os_jq 'print(d["flavor"]["id"])') &&
	os_api admin POST "/flavors/$gpu4/os-extra_specs" '{"extra_specs": {"pci_passthrough:alias": "a100:4"}}' |
	os_ok >>"$work/err" 2>&1
ok $? "a flavor with 4 GPUs in its extra specs (pci_passthrough:alias=a100:4)" "$work/err"
echo "Provider=oscat Type=openstack CredentialsFile=$work/pw.rc Image=$OS_IMAGE Accelerators=a100:A100-80GB" \
	>>"$work/burst.conf"
"$burstctl" --config "$work/burst.conf" catalog refresh --provider oscat --catalog-dir "$src/share/catalog" \
	--output-dir "$work/cat" >"$work/out" 2>&1
ok $? "burstctl catalog refresh --provider oscat (a first catalog of the site's flavors)" "$work/out"
csv="$work/cat/openstack.csv"
grep -q '^m1.small,1,2048,0,' "$csv" && grep -q '^m1.tiny,1,512,0,' "$csv"
ok $? "the flavors are rows: m1.small has 1 vCPU and 2048 MiB" "$csv"
grep -q '^burst.gpu4,8,65536,4,A100-80GB,GPU,NVIDIA,ampere,81920,.*,disk,140,.*,openstack-api$' "$csv"
ok $? "burst.gpu4: 4 A100-80GB through the alias table (model facts from the catalog), 140 GiB of disk" "$csv"
mkdir "$work/catdir" && cp "$src"/share/catalog/* "$work/cat/openstack.csv" "$work/catdir/"
"$burstctl" --catalog-dir "$work/catdir" select 'node_provider=openstack accelerator_count>=4' >"$work/out" 2>&1
grep -q 'burst.gpu4' "$work/out" && ! grep -q 'm1.small' "$work/out"
ok $? "a contract resolves against the site's flavors (node_provider=openstack accelerator_count>=4: burst.gpu4)" "$work/out"

done_testing

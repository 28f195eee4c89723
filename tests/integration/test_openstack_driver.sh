#!/usr/bin/env bash
# test_openstack_driver.sh - the OpenStack peers (real Keystone and Nova on
# 127.0.0.1, os_peers.sh) as the openstack CLI sees them, then the agent's
# openstack provider driver against them, without Slurm. Nova is started
# once for the whole script (its start costs about 15 s).
# Needs root only for nothing; needs BURST_OPENSTACK_DEPS (tools/deps.sh).
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
os_cli server create --flavor m1.small --image burst-broken --network "$OS_NET" --wait cli-2 \
	>"$work/out" 2>&1
os_cli server show cli-2 -f value -c status -c fault >"$work/out" 2>&1
grep -q "^ERROR$" "$work/out" && grep -q "burst-broken does not boot" "$work/out"
ok $? "a server of the image burst-broken goes ERROR with Nova's fault"
os_cli server delete --wait "$cli1" cli-2 >"$work/out" 2>&1
os_cli server list -f value -c ID >"$work/out" 2>&1
[ ! -s "$work/out" ]
ok $? "openstack server delete: gone"

done_testing

#!/usr/bin/env bash
# tests/cli/test_cloud_policies.sh - contrib/policies/ against the drivers
# (TAP). For each provider, the API requests its driver can send are read
# from the source (EC2 actions named to begin(); the method and path of each
# OpenStack, Compute Engine and ARM request, the path from the template it
# was built from just before), with the request body's fields that need a
# permission of their own. A table below gives each request the permissions
# it needs; their union must be the policy document's list exactly: a
# permission missing fails (the driver would be refused), one more fails (not
# least privilege), and a request the table does not know fails (a new call:
# put it in the table and in the policy).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d /tmp/test_cloud_policies.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

python3 - "$src" "$tmp" <<'EOF'
import json, re, sys

src, out = sys.argv[1], sys.argv[2]

def text(path):
    with open(f"{src}/{path}") as f:
        return f.read()

def requests(files, call):
    """(METHOD, TEMPLATE) of each call(..., "METHOD", PATH, ...) in files:
    PATH a literal, or a variable whose last snprintf/sb_addf template
    before the call is taken."""
    found = set()
    for path in files:
        last = {}
        for line in text(path).splitlines():
            m = re.search(r'(?:snprintf|sb_addf)\(&?(\w+)(?:, sizeof\(\w+\))?, "([^"]*)"', line)
            if m:
                last[m.group(1)] = m.group(2)
            m = re.search(call, line)
            if not m:
                continue
            method, arg = m.group(1), m.group(2).strip()
            if arg.startswith('"'):
                found.add((method, arg.strip('"')))
            else:
                var = re.match(r'\w+', arg).group(0)
                found.add((method, last.get(var, "?" + arg)))
    return found

def body_fields(path, fields):
    t = text(path)
    return {("body", f) for f in fields if f'"{f}"' in t}

def canon(template):
    """A path template without its query, its format directives as {}."""
    t = template.split("?")[0]
    return re.sub(r"%[a-z]", "{}", t)

def check(name, calls, table, policy):
    unknown = sorted(c for c in calls if c not in table)
    stale = sorted(k for k in table if k not in calls)
    need = set()
    for c in calls:
        need |= set(table.get(c, ()))
    missing = sorted(need - policy)
    extra = sorted(policy - need)
    with open(f"{out}/{name}.calls", "w") as f:
        for c in sorted(calls):
            f.write(" ".join(c) + "\n")
    with open(f"{out}/{name}.diff", "w") as f:
        for c in unknown:
            f.write(f"the driver sends {' '.join(c)}, which the table does not know\n")
        for c in stale:
            f.write(f"the table knows {' '.join(c)}, which the driver no longer sends\n")
        for p in missing:
            f.write(f"the policy lacks {p}\n")
        for p in extra:
            f.write(f"the policy has {p}, which no request needs\n")
    with open(f"{out}/{name}.count", "w") as f:
        f.write(f"{len(calls)} {len(policy)}\n")

# ---- AWS: the EC2 Query API's actions ----
ec2 = text("lib/cloud/ec2.c")
actions = set(re.findall(r'\bbegin\(&b, "(\w+)"\)', ec2))
called = set(re.findall(r'\bcall\(c, "(\w+)"', ec2))
calls = {("Action", a) for a in actions | called}
if "IamInstanceProfile." in ec2:
    calls.add(("param", "IamInstanceProfile"))
table = {("Action", a): ["ec2:" + a] for a in
         ("RunInstances", "DescribeInstances", "TerminateInstances", "GetConsoleOutput",
          "CreateTags", "DescribeInstanceTypes", "StopInstances", "StartInstances")}
# an instance profile handed to RunInstances: its role passed to EC2
table[("param", "IamInstanceProfile")] = ["iam:PassRole"]
doc = json.loads(text("contrib/policies/aws-iam-policy.json"))
policy = set()
for st in doc["Statement"]:
    a = st["Action"]
    policy |= set([a] if isinstance(a, str) else a)
check("aws", calls, table, policy)

# ---- OpenStack: Nova's and Glance's policy rules ----
os_calls = requests(["burst-agent/drivers/driver_openstack.c", "lib/cloud/openstack_api.c", "burstctl/catref_cmd.c"],
                    r'\bos_compute\([^,]+, "([A-Z]+)", ([^,]+),')
os_calls |= {("GET", t) for _, t in requests(["burst-agent/drivers/driver_openstack.c"],
                                             r'\bos_image_get\(()[^,]+, ([^,]+),')}
os_calls = {(m, canon(t)) for m, t in os_calls}
os_calls |= body_fields("burst-agent/drivers/driver_openstack.c", ["networks"])
table = {
    ("POST", "/servers"): ["os_compute_api:servers:create"],
    ("body", "networks"): ["os_compute_api:servers:create:attach_network"],
    ("GET", "/servers/detail"): ["os_compute_api:servers:detail"],
    ("GET", "/servers/{}"): ["os_compute_api:servers:show"],
    ("DELETE", "/servers/{}"): ["os_compute_api:servers:delete"],
    # flavor lists have no policy rule (public flavors; private ones shared)
    ("GET", "/flavors"): [],
    ("GET", "/flavors/detail"): [],
    ("GET", "/v2/images"): ["get_images"],
}
policy = set(re.findall(r'^"([^"]+)":', text("contrib/policies/openstack-policy.yaml"), re.M))
check("openstack", os_calls, table, policy)

# ---- Compute Engine: IAM permissions ----
g = requests(["burst-agent/drivers/driver_gcp.c"], r'\bgce_call\([^,]+, "([A-Z]+)", ([^,]+),')
# mutations go through the write quota's pacing: mutate(p, c, METHOD, path, ...)
g |= requests(["burst-agent/drivers/driver_gcp.c"], r'\bmutate\([^,]+, [^,]+, "([A-Z]+)", ([^,]+),')
g = {(m, canon(t)) for m, t in g}
g |= body_fields("lib/cloud/gce.c", ["metadata", "labels", "tags", "accessConfigs", "serviceAccounts", "subnetwork",
                                     "sourceImage", "sourceInstanceTemplate"])
table = {
    ("POST", "{}/instances/bulkInsert"): ["compute.instances.create", "compute.disks.create"],
    ("body", "sourceImage"): ["compute.images.useReadOnly"],
    ("body", "sourceInstanceTemplate"): ["compute.instanceTemplates.useReadOnly"],
    ("body", "subnetwork"): ["compute.subnetworks.use"],
    ("body", "accessConfigs"): ["compute.subnetworks.useExternalIp"],
    ("body", "metadata"): ["compute.instances.setMetadata"],
    ("body", "labels"): ["compute.instances.setLabels"],
    ("body", "tags"): ["compute.instances.setTags"],
    ("body", "serviceAccounts"): ["compute.instances.setServiceAccount", "iam.serviceAccounts.actAs"],
    ("POST", "{}/operations/{}/wait"): ["compute.zoneOperations.get", "compute.regionOperations.get"],
    ("GET", "aggregated/operations"): ["compute.globalOperations.list"],
    ("GET", "aggregated/instances"): ["compute.instances.list"],
    ("GET", "zones/{}/instances/{}"): ["compute.instances.get"],
    ("DELETE", "zones/{}/instances/{}"): ["compute.instances.delete"],
    ("POST", "zones/{}/instances/{}/setMetadata"): ["compute.instances.setMetadata"],
    ("GET", "zones/{}/instances/{}/serialPort"): ["compute.instances.getSerialPortOutput"],
}
policy = set(re.findall(r"^- ([\w.]+)$", text("contrib/policies/gcp-custom-role.yaml"), re.M))
check("gcp", g, table, policy)

# ---- Azure: ARM operations (the request's kind names what it is) ----
a = set(re.findall(r'\barm_request\([^,]+, "([A-Z]+)", [^,]+, [^,]+, (ARM_\w+),',
                   text("burst-agent/drivers/driver_azure.c")))
vm = text("lib/cloud/azure_vm.c")
a |= body_fields("lib/cloud/azure_vm.c", ["networkInterfaceConfigurations", "subnet", "managedDisk", "deleteOption"])
if re.search(r'add_str\(p, "id", s->image\)', vm):
    a.add(("body", "imageReference.id"))
table = {
    ("GET", "ARM_VM_LIST"): ["Microsoft.Compute/virtualMachines/read"],
    # a VM, and the network interface it was given
    ("GET", "ARM_READ"): ["Microsoft.Compute/virtualMachines/read", "Microsoft.Network/networkInterfaces/read"],
    ("PUT", "ARM_VM_PUT"): ["Microsoft.Compute/virtualMachines/write"],
    ("body", "networkInterfaceConfigurations"): ["Microsoft.Network/networkInterfaces/write",
                                                "Microsoft.Network/networkInterfaces/join/action"],
    ("body", "subnet"): ["Microsoft.Network/virtualNetworks/subnets/join/action"],
    ("body", "managedDisk"): ["Microsoft.Compute/disks/read", "Microsoft.Compute/disks/write"],
    ("body", "imageReference.id"): ["Microsoft.Compute/images/read",
                                    "Microsoft.Compute/galleries/images/versions/read"],
    ("DELETE", "ARM_VM_DELETE"): ["Microsoft.Compute/virtualMachines/delete"],
    # the VM's interface and disk deleted with it
    ("body", "deleteOption"): ["Microsoft.Network/networkInterfaces/delete", "Microsoft.Compute/disks/delete"],
    ("GET", "ARM_OP_STATUS"): ["Microsoft.Compute/locations/operations/read"],
}
policy = set(json.loads(text("contrib/policies/azure-custom-role.json"))["Actions"])
check("azure", a, table, policy)
EOF
rc=$?
ok $rc "the drivers' requests and the policies read (above: why not)"
[ $rc -eq 0 ] || bail "the checker failed"

for p in aws openstack gcp azure; do
	read -r ncalls nperms <"$tmp/$p.count"
	[ "$ncalls" -ge 4 ]
	ok $? "$p: $ncalls requests found in the driver's source" "$tmp/$p.calls"
	[ ! -s "$tmp/$p.diff" ]
	ok $? "$p: the policy's $nperms permissions are exactly what they need" "$tmp/$p.diff" "$tmp/$p.calls"
done

# the docs point at them
for pair in aws:aws-iam-policy.json openstack:openstack-policy.yaml gcp:gcp-custom-role.yaml azure:azure-custom-role.json; do
	grep -q "contrib/policies/${pair#*:}" "$src/doc/${pair%%:*}.md"
	ok $? "doc/${pair%%:*}.md names contrib/policies/${pair#*:}"
done
done_testing

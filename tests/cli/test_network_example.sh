#!/usr/bin/env bash
# tests/cli/test_network_example.sh - contrib/network/aws-burst-network.yaml,
# the example CloudFormation network (TAP). Not deployed here: its YAML
# parses (CloudFormation's !Ref tags included), every !Ref names a parameter
# or a resource, and the rules are the ones the admin guide describes: the
# join port open from the burst nodes only (to the agent's address, or the
# agent's group), slurmd's port from the site only, nothing from anywhere.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/tap.sh"
tmp=$(mktemp -d /tmp/test_network_example.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
t="$src/contrib/network/aws-burst-network.yaml"

# one line a finding: "ok NAME" or "not NAME: why"
python3 - "$t" >"$tmp/out" 2>&1 <<'EOF'
import sys, yaml

class Tag:
    def __init__(self, tag, value):
        self.tag, self.value = tag, value

class Loader(yaml.SafeLoader):
    pass

def tagged(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        v = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        v = loader.construct_sequence(node, deep=True)
    else:
        v = loader.construct_mapping(node, deep=True)
    return Tag(suffix, v)

Loader.add_multi_constructor("!", tagged)
doc = yaml.load(open(sys.argv[1]), Loader=Loader)
params, res = doc.get("Parameters", {}), doc.get("Resources", {})

def say(cond, name, why=""):
    print(("ok " if cond else "not ") + name + ("" if cond else ": " + why))

refs = []
def walk(o):
    if isinstance(o, Tag):
        if o.tag == "Ref":
            refs.append(o.value)
        walk(o.value)
    elif isinstance(o, dict):
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(doc)
bad = [r for r in refs if r not in params and r not in res and not r.startswith("AWS::")]
say(len(refs) >= 20 and not bad, f"its {len(refs)} !Refs name parameters or resources", f"unknown: {bad}")

types = {n: r["Type"] for n, r in res.items()}
want = {"AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::SecurityGroup", "AWS::EC2::Route"}
say(want <= set(types.values()), "a VPC, a subnet, a route and security groups", f"types: {sorted(set(types.values()))}")
say(res["Subnet"]["Properties"].get("MapPublicIpOnLaunch") is False, "the subnet gives no public addresses")

def ref(v):
    return v.value if isinstance(v, Tag) and v.tag == "Ref" else v

def rules(group, key):
    out = list(res[group]["Properties"].get(key, []))
    for n, r in res.items():
        if ref(r.get("Properties", {}).get("GroupId")) == group and r["Type"] == "AWS::EC2::SecurityGroup" + (
                "Ingress" if key == "SecurityGroupIngress" else "Egress"):
            out.append(r["Properties"])
    return out

def source(r):
    for k in ("CidrIp", "SourceSecurityGroupId", "DestinationSecurityGroupId"):
        if k in r:
            return ref(r[k])
    return None

def ports(r):
    return ref(r.get("FromPort")), ref(r.get("ToPort"))

node_in = rules("BurstNodeSecurityGroup", "SecurityGroupIngress")
node_out = rules("BurstNodeSecurityGroup", "SecurityGroupEgress")
agent_in = rules("AgentSecurityGroup", "SecurityGroupIngress")
every = node_in + node_out + agent_in
say(all(source(r) not in ("0.0.0.0/0", "::/0", None) for r in every), "no rule opens anything to the whole internet",
    str([r for r in every if source(r) in ("0.0.0.0/0", "::/0", None)]))
say(not any(ports(r) == ("JoinPort", "JoinPort") for r in node_in), "the nodes themselves do not open the join port")
join_out = [r for r in node_out if ports(r) == ("JoinPort", "JoinPort")]
say(len(join_out) == 1 and source(join_out[0]) == "AgentCidr", "the nodes reach the join port at the agent's address only",
    str(join_out))
join_in = [r for r in agent_in if ports(r) == ("JoinPort", "JoinPort")]
say(len(join_in) == 1 and source(join_in[0]) == "BurstNodeSecurityGroup",
    "the agent's group opens the join port to the burst nodes' group only", str(join_in))
slurmd = [r for r in node_in if ports(r) == ("SlurmdPort", "SlurmdPort")]
say(len(slurmd) == 1 and source(slurmd[0]) == "SiteCidr", "slurmd's port from the site only", str(slurmd))
site = [r for n, r in res.items() if r["Type"] == "AWS::EC2::Route" and ref(r["Properties"].get("DestinationCidrBlock")) == "SiteCidr"]
say(len(site) == 1 and "NatGatewayId" not in site[0]["Properties"], "the site is routed to, not NATed (slurmctld reaches slurmd)")
outs = doc.get("Outputs", {})
say(ref(outs.get("SubnetId", {}).get("Value")) == "Subnet" and
    ref(outs.get("SecurityGroupId", {}).get("Value")) == "BurstNodeSecurityGroup",
    "its outputs are burst.conf's SubnetId= and SecurityGroups=")
EOF
rc=$?
ok $rc "the template parses ($(wc -l <"$tmp/out") checks)" "$tmp/out"
[ $rc -eq 0 ] || bail "the checker failed"
while read -r st name; do
	[ "$st" = ok ]
	ok $? "$name"
done <"$tmp/out"
grep -q "contrib/network/aws-burst-network.yaml" "$src/doc/admin-guide.md"
ok $? "the admin guide names it"
done_testing

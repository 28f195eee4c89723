#!/usr/bin/env bash
# tests/cli/run.sh - burstctl end to end on the shipped catalog (TAP).
# Run by 'make check' with BURST_TOP_SRCDIR and BURST_TOP_BUILDDIR set.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
export BURST_CATALOG_DIR="$src/share/catalog"
unset BURST_CONF
conf="$src/etc/burst.conf.example"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"   # shown when a test fails

# run EXPECTED-EXIT ARGS... : runs burstctl, output in $tmp/out and $tmp/err
run() {
	local want=$1; shift
	"$B" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ]
}
types() {   # the INSTANCE_TYPE column of a select listing
	awk 'NR > 1 { print $2 }' "$tmp/out" | sort | tr '\n' ' ' | sed 's/ $//'
}
has() { grep -qF -- "$1" "$tmp/$2"; }

# --- select: the AWS types with at least 4 Ampere GPUs, no Ada or Hopper ---
run 0 select 'accelerator_count>=4 accelerator_architecture=ampere node_provider=aws'
ok $? "select >=4 ampere on aws exits 0"
got=$(types)
for t in g5.12xlarge g5.24xlarge g5.48xlarge p4d.24xlarge p4de.24xlarge; do
	case " $got " in *" $t "*) ok 0 "select lists $t" ;; *) ok 1 "select lists $t (got: $got)" ;; esac
done
! grep -Eq '\((ada|hopper|turing|volta)' "$tmp/out"
ok $? "select lists no Ada, Hopper, Turing or Volta type"
! awk 'NR > 1 && $1 != "aws"' "$tmp/out" | grep -q .
ok $? "select lists only aws types"

run 0 select 'accelerator_count>=4 accelerator_architecture=ampere node_provider=aws accelerator_count=4 node_memory_size<=256G'
ok $? "select with accelerator_count=4 node_memory_size<=256G exits 0"
[ "$(types)" = "g5.12xlarge" ]
ok $? "... and leaves exactly g5.12xlarge (got: $(types))"

# --- select across the clouds: 8 GPUs of 80 GB or more, azure beside aws and gcp, with prices ---
run 0 select 'accelerator_count>=8 accelerator_memory_size>=80G'
ok $? "select 'accelerator_count>=8 accelerator_memory_size>=80G' exits 0"
for pt in "aws p4de.24xlarge" "gcp a2-ultragpu-8g" "azure Standard_ND96amsr_A100_v4" "azure Standard_ND96isr_H100_v5"; do
	awk -v p="${pt% *}" -v t="${pt#* }" 'NR > 1 && $1 == p && $2 == t && $NF ~ /^[0-9]+\.[0-9]+@[a-z0-9-]+$/ { f = 1 } END { exit !f }' "$tmp/out"
	ok $? "... lists $pt with its price"
done
! awk 'NR > 1 && $1 == "azure"' "$tmp/out" | grep -v ' 8 x ' | grep -q .
ok $? "... and each azure size it lists has 8 accelerators"

# --- resolve the named contract with --explain ---
run 0 --config "$conf" resolve gpu4-ampere --explain
ok $? "resolve gpu4-ampere --explain exits 0"
has "chosen:" out; ok $? "resolve says which candidate was chosen and why"
grep -E 'g6\.12xlarge.*accelerator_architecture=ampere: ada is not ampere' "$tmp/out" >/dev/null
ok $? "resolve --explain says g6.12xlarge was excluded by the architecture (ada is not ampere)"
first=$(awk '$1 == "1" { print $3 }' "$tmp/out")
[ "$first" = "g5.12xlarge" ]
ok $? "gpu4-ampere ranks g5.12xlarge first (cheapest; got $first)"

# resolve takes the submission's decision path (lib/core/decide.c): it says where
# jobs with the contract go, as the SPANK plugin would route them
has "jobs with this contract go to node sets gpu4 (partitions burst-gpu, features gpu4)" out
ok $? "resolve gpu4-ampere gives the submission's decision: node set gpu4, partition burst-gpu"
run 0 --config "$conf" --provider gcp resolve gpu-modern
has "jobs with this contract go to node sets gpu1,gpu4 (partitions burst-gpu, features gpu1|gpu4)" out &&
	! awk '$1 ~ /^[0-9]+$/ && $2 != "gcp"' "$tmp/out" | grep -q .
ok $? "--provider filters the listing, not the decision (node sets gpu1,gpu4)"
# two providers of one catalog (two AWS accounts): each candidate is shown
# under its configured provider, which --provider takes too
cat >"$tmp/two.conf" <<'CONF'
Provider=acct1 Type=aws Regions=us-east-1 ImageId=ami-0123456789abcdef0 SubnetId=subnet-1 JoinAddress=10.0.0.5:6830
Provider=acct2 Type=aws Regions=us-west-2 ImageId=ami-0123456789abcdef0 SubnetId=subnet-2 JoinAddress=10.0.0.5:6830
Contract=small node_vcpus_count>=2 accelerator_count=0 rank=price
NodeSet=n Nodes=b-[1-2] Partition=burst InstanceTypes=t3.micro Providers=acct1,acct2
CONF
run 0 --config "$tmp/two.conf" resolve small
[ "$(awk '$1 ~ /^[0-9]+$/ { print $2 "/" $3 "@" $4 }' "$tmp/out" | tr '\n' ' ')" = "acct1/t3.micro@us-east-1 acct2/t3.micro@us-west-2 " ] &&
	has "chosen: acct1/t3.micro@us-east-1 is the cheapest" out
ok $? "resolve names each candidate by its configured provider (acct1, acct2), not the catalog's (aws)"
run 0 --config "$tmp/two.conf" --provider acct2 resolve small
[ "$(awk '$1 ~ /^[0-9]+$/ { print $2 }' "$tmp/out" | tr '\n' ' ')" = "acct2 " ]
ok $? "--provider takes a configured provider's name"
sed 's/^AllowInlineContracts=yes/AllowInlineContracts=no/' "$conf" >"$tmp/noinline.conf"
run 2 --config "$tmp/noinline.conf" resolve 'accelerator_count>=1'
has "inline contracts are not allowed on this cluster (AllowInlineContracts=no in $tmp/noinline.conf); use a named one: gpu4-ampere, gpu-modern, cpu-hpc" err
ok $? "an inline contract under AllowInlineContracts=no is refused as sbatch refuses it (exit 2)"

# --- catalog show ---
run 0 catalog show p4d.24xlarge
ok $? "catalog show p4d.24xlarge exits 0"
has "8 x A100-40GB (ampere, 40G)" out; ok $? "p4d.24xlarge has 8 x A100-40GB"
grep -Eq 'node_vcpus_count +96$' "$tmp/out"; ok $? "p4d.24xlarge has 96 vCPUs"
grep -Eq 'node_memory_size +1152G$' "$tmp/out"; ok $? "p4d.24xlarge has 1152 GiB"
run 1 catalog show p4d.24xlarg
ok $? "catalog show of an unknown type exits 1"
has "did you mean 'p4d.24xlarge'" err; ok $? "... and suggests the nearest type"
run 0 catalog show gcp:a2-highgpu-1g
ok $? "catalog show PROVIDER:TYPE"
has "1 x A100-40GB" out; ok $? "a2-highgpu-1g has an A100-40GB, not an A10"

# --- bad contracts: exit 2, position and suggestion ---
run 2 select 'acelerator_count>=4'
ok $? "misspelled key exits 2"
has "character 1: unknown key 'acelerator_count'; did you mean 'accelerator_count'?" err
ok $? "... naming the position and the nearest key"
run 2 select 'node_memory_size>=16X'
ok $? "bad unit exits 2"
has "character 21" err && has "unknown size unit 'X'" err
ok $? "... naming the position and the units"
run 2 select 'accelerator_count=>4'
ok $? "bad operator exits 2"
has "unknown operator '=>'; did you mean '>='?" err; ok $? "... suggesting '>='"
run 2 select 'accelerator_architecture>=amprere'
ok $? "unknown architecture exits 2"
has "did you mean 'ampere'?" err; ok $? "... suggesting 'ampere'"
grep -q '^ *\^~*$' "$tmp/err"; ok $? "errors draw a caret under the offending text"

# --- no match: exit 1 ---
run 1 select 'accelerator_count>=64'
ok $? "a contract nothing satisfies exits 1"
run 1 resolve 'accelerator_count>=64' --explain
ok $? "resolve of an unsatisfiable contract exits 1"

# --- usage errors: exit 2 ---
run 2 frobnicate; ok $? "unknown verb exits 2"
run 2 resolve gpu4-ampere; ok $? "a contract name without burst.conf exits 2"
has "no burst.conf" err; ok $? "... saying that a burst.conf is needed"
run 2 --config "$conf" resolve gpu4-amper; ok $? "unknown contract name exits 2"
has "did you mean 'gpu4-ampere'?" err; ok $? "... with the nearest name"

# --- JSON ---
run 0 --json select 'accelerator_count=8 accelerator_architecture=hopper'
ok $? "select --json exits 0"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["types"] and all(t["accelerator_architecture"]=="hopper" and t["accelerator_count"]==8 for t in d["types"])' "$tmp/out"
ok $? "select --json is JSON and every type has 8 hopper GPUs"
run 0 --json --config "$conf" resolve gpu4-ampere --explain
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["candidates"]; assert c[0]["instance_type"]=="g5.12xlarge" and c[0]["rank"]==1; assert any(m["candidate"].startswith("aws/g6.12xlarge") and "ada is not ampere" in m["reason"] for m in d["near_misses"])' "$tmp/out"
ok $? "resolve --json --explain has the ranked candidates and the near misses"
run 0 --json catalog show p4d.24xlarge
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["accelerator"]=="A100-40GB" and d["accelerator_count"]==8 and d["node_memory_size"]==1152*2**30 and d["accelerator_memory_size"]==40*2**30' "$tmp/out"
ok $? "catalog show --json has canonical values (bytes)"
run 0 --json check-config "$conf"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] and d["contracts"]==3' "$tmp/out"
ok $? "check-config --json"
run 0 --json keys
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(k["name"]=="accelerator_architecture" for k in d["keys"])' "$tmp/out"
ok $? "keys --json"

# --- catalog list ---
run 0 catalog list --provider gcp
ok $? "catalog list --provider gcp"
! awk 'NR > 1 && $1 != "gcp" && !/types; catalog/' "$tmp/out" | grep -q .
ok $? "... lists only gcp types"
total=$("$B" --json catalog list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["types"]))')
[ "$total" -ge 800 ]
ok $? "the catalog has at least 800 types ($total)"

# --- check-config ---
run 0 check-config "$conf"
ok $? "the example burst.conf is valid"
cat >"$tmp/bad.conf" <<'CONF'
Provider=aws Regoins=us-east-1
Contract=x accelerator_count>=4G
NodeSet=n Nodes=burst-[1-2] InstanceTypes=g5.12xlarge
CONF
run 2 check-config "$tmp/bad.conf"
ok $? "a broken burst.conf exits 2"
has "bad.conf:1: unknown Provider key 'Regoins'; did you mean 'Regions'?" err
ok $? "... naming file:line, the word and the nearest key"
has "bad.conf:2: Contract x: bad contract at character" err
ok $? "... and the contract error with its line"
{ cat "$conf"; echo "MetricsListen=0.0.0.0:9830"; } >"$tmp/metrics.conf"
run 0 check-config "$tmp/metrics.conf"
ok $? "MetricsListen= on every address is valid"
has "warning: MetricsListen=0.0.0.0:9830: the agent's metrics are served unauthenticated beyond this host" err
ok $? "... with a warning"
echo "MetricsListen=127.0.0.1:99999" >>"$tmp/metrics.conf"
run 2 check-config "$tmp/metrics.conf"
ok $? "a MetricsListen= port out of range exits 2"
has "metrics.conf:$(wc -l <"$tmp/metrics.conf"): MetricsListen=127.0.0.1:99999: give a TCP port (1-65535) after the colon" err
ok $? "... naming file:line"
cat >"$tmp/unsat.conf" <<'CONF'
Provider=aws ImageId=ami-0123456789abcdef0
Contract=big accelerator_count>=16 accelerator_architecture=hopper
NodeSet=small Nodes=burst-[1-2] InstanceTypes=g5.12xlarge,g5.xlarg
CONF
run 2 check-config "$tmp/unsat.conf"
ok $? "a contract no node set satisfies is a problem"
has "unsat.conf:2: Contract big is satisfied by no instance type of any NodeSet" err
ok $? "... reported with file:line"
has "instance type g5.xlarg is in no catalog of its providers; did you mean 'g5.xlarge'?" err
ok $? "an unknown instance type is reported with the nearest"
printf 'Provider=aws Regions=us-east-1 SubnetId=subnet-1\nNodeSet=n Nodes=b-[1-2] InstanceTypes=t3.micro\n' >"$tmp/noimage.conf"
run 2 check-config "$tmp/noimage.conf"
ok $? "an aws provider without an image is a problem"
has "noimage.conf:1: Provider aws (aws) needs ImageId=ami-... or LaunchTemplate=lt-...|NAME" err
ok $? "... saying what to add"
cat >"$tmp/warm.conf" <<'CONF'
Provider=aws ImageId=ami-0123456789abcdef0
Provider=os Type=openstack Image=img Endpoint=https://127.0.0.1:1/v3 JoinAddress=127.0.0.1:6830
NodeSet=ec2 Nodes=b-[1-2] Providers=aws InstanceTypes=t3.micro WarmPool=2 WarmPoolMaxAge=12h WarmPoolBudget=0.10
NodeSet=both Nodes=c-[1-2] InstanceTypes=t3.micro WarmPool=1
Price=t3.micro Provider=aws Stopped=0.001
CONF
run 2 check-config "$tmp/warm.conf"
ok $? "a warm pool over a provider whose driver cannot stop instances is a problem"
has "warm.conf:4: NodeSet both: WarmPool=1 needs instances that can be stopped and started, and the openstack driver (Provider os) cannot yet (local and aws can): remove WarmPool= or name other Providers= for this node set" err
ok $? "... naming file:line, the node set, the provider and what to do"
! grep -q "NodeSet ec2" "$tmp/err"
ok $? "... and a pool over aws alone is fine (with its max age, budget and a stopped price)"
printf 'Provider=aws ImageId=ami-1\nNodeSet=n Nodes=b-1 InstanceTypes=t3.micro WarmPool=1 WarmPoolMaxAge=soon\n' >"$tmp/warmage.conf"
run 2 check-config "$tmp/warmage.conf"
ok $? "a WarmPoolMaxAge= that is no duration exits 2"
has "warmage.conf:2: NodeSet n: WarmPoolMaxAge=soon: expected a duration from 1 minute to 365 days, such as 3600, 90m, 12h or 7d" err
ok $? "... naming file:line and what it takes"

# --- the local provider's bridge, in a network namespace of this test's own (root) ---
if [ "$(id -u)" -eq 0 ]; then
	ns="burstctl-run$$"
	ip netns add "$ns" && ip -n "$ns" link add brx type bridge && ip -n "$ns" addr add 10.250.77.1/24 dev brx
	ok $? "a namespace with a bridge that is down"
	printf 'Provider=local Bridge=brx Address=10.250.77.1/24\nNodeSet=n Nodes=b-[1-2] InstanceTypes=local.host\n' >"$tmp/local.conf"
	ip netns exec "$ns" "$B" check-config "$tmp/local.conf" >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 2 ] && has "local.conf:1: Provider local: Bridge=brx is down: ip link set brx up" err
	ok $? "check-config: a local provider's bridge that is down is a problem, saying how to bring it up"
	ip -n "$ns" link set brx up
	ip netns exec "$ns" "$B" check-config "$tmp/local.conf" >"$tmp/out" 2>"$tmp/err"
	ok $? "... and once it is up, the configuration checks clean"
	ip netns del "$ns"
fi

# --- catalog directory selection ---
BURST_CATALOG_DIR="$src/tests/fixtures/catalog-small" "$B" catalog list >"$tmp/out" 2>&1
grep -q 'gpu.a10g.4' "$tmp/out"
ok $? "BURST_CATALOG_DIR selects the catalog"
BURST_CATALOG_DIR=/nonexistent "$B" catalog list >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && has "cannot open catalog directory /nonexistent" err
ok $? "a missing catalog directory is exit 2 with a clear message"
"$B" --catalog-dir "$src/tests/fixtures/catalog-small" catalog show tie.a >"$tmp/out" 2>&1
ok $? "--catalog-dir overrides BURST_CATALOG_DIR"
(unset BURST_CATALOG_DIR; "$B" catalog show p4d.24xlarge) >"$tmp/out" 2>&1
ok $? "from the build tree burstctl finds the source tree's catalog"

# --- one verb table: the verb found once, the global options wherever they stand ---
run 0 --json catalog list && cp "$tmp/out" "$tmp/before"
ok $? "--json before the verb exits 0"
run 0 catalog list --json && cmp -s "$tmp/before" "$tmp/out"
ok $? "--json after the verb: the same output"
run 0 -p aws catalog list && cp "$tmp/out" "$tmp/before" && run 0 --prov aws catalog list &&
	cmp -s "$tmp/before" "$tmp/out" && grep -q '^aws ' "$tmp/out" && ! grep -Eq '^(azure|gcp) ' "$tmp/out"
ok $? "an abbreviated --prov before the verb is --provider, as -p"
run 2 -c "$tmp/none.conf" bless --list && has "$tmp/none.conf: cannot open" err
ok $? "-c before a verb with options of its own reaches it (bless)"
run 2 bless --list -c "$tmp/none.conf" && has "$tmp/none.conf: cannot open" err
ok $? "... and after it"
# accept's --json FILE is its report, not burstctl's --json: it takes the word after it
run 2 accept --json "$tmp/r.json" --nodes 'a[1-' && has "missing ']' in host list" err &&
	! has "unexpected argument" err
ok $? "accept --json FILE takes FILE (the host list is the next complaint)"
run 2 -j accept --nodes 'a[1-' && has "invalid option -- 'j'" err
ok $? "... and accept takes no -j flag"
run 2 provenanse && has "unknown verb 'provenanse'; did you mean 'provenance'?" err
ok $? "did you mean: the verbs with options of their own are in the table too"
run 2 catalog refreh && has "catalog takes 'list', 'show TYPE' or 'refresh --provider NAME'" err
ok $? "catalog with a misspelt second word is catalog's usage error"
run 0 --help
for v in select resolve 'catalog list' 'catalog refresh' check-config keys slurm-conf status nodes events \
	cost attest attest-key verify accept bless provenance; do
	grep -q "^  $v " "$tmp/out"
	ok $? "--help lists $v"
done

# --version names the Slurm release the build is for: the one installed here
run 0 --version
slurm=$(slurmctld -V 2>/dev/null | awk '{ print $2 }')
has ", built for Slurm ${slurm:-?}" out
ok $? "--version names the installed Slurm (${slurm:-none}) as the one it was built for"

done_testing

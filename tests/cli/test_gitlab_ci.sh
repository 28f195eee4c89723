#!/usr/bin/env bash
# tests/cli/test_gitlab_ci.sh - contrib/gitlab-ci/node-acceptance.gitlab-ci.yml:
# it parses as YAML (Debian's python3-yaml), has what GitLab needs to run it
# on a schedule and keep the JUnit reports, and its script, run the way a
# GitLab runner runs it (bash, set -eo pipefail) with srun, burst-node and
# burstctl replaced by stubs, runs both suites whatever the first gives and
# exits with the worse of their exit codes (TAP).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
Y="$src/contrib/gitlab-ci/node-acceptance.gitlab-ci.yml"
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out"

[ -x "$PY" ] || bail "$PY is needed"
"$PY" -c 'import yaml' 2>/dev/null || bail "python3-yaml is needed (apt-get install python3-yaml)"

# one fact of the template per line, from Python: KEY<TAB>VALUE
"$PY" - "$Y" >"$tmp/facts" 2>"$tmp/out" <<'PYEOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
job = doc["node-acceptance"]
print("stage\t%s" % (job.get("stage") in doc.get("stages", [])))
print("rules\t%s" % [r.get("if") for r in job.get("rules", [])])
print("sched\t%s" % job["variables"]["SCHEDULER_PARAMETERS"])
art = job["artifacts"]
print("when\t%s" % art.get("when"))
junit = art["reports"]["junit"]
print("junit\t%s" % "|".join(junit if isinstance(junit, list) else [junit]))
print("paths\t%s" % "|".join(art.get("paths", [])))
for k, v in job["variables"].items():
    print("var\t%s=%s" % (k, v))
for line in job["script"]:
    assert isinstance(line, str), "script item %r is not a string (quote it)" % (line,)
    print("script\t%s" % line.replace("\n", " "))
PYEOF
ok $? "the template parses as YAML" "$tmp/out" "$tmp/facts"
fact() { awk -F'\t' -v k="$1" '$1 == k { sub(/^[^\t]*\t/, ""); print }' "$tmp/facts"; }

[ "$(fact stage)" = True ]; ok $? "the job's stage is one of the pipeline's stages"
[ "$(fact rules)" = "['\$CI_PIPELINE_SOURCE == \"schedule\"']" ]
ok $? "it runs in scheduled pipelines ($(fact rules))"
s=$(fact sched)
[[ " $s " == *" -p burst "* && " $s " == *" -N 2 "* && " $s " == *" --cloud-contract="?* ]]
ok $? "SCHEDULER_PARAMETERS asks sbatch for 2 burst nodes with a contract ($s)"
[ "$(fact when)" = always ]; ok $? "artifacts are kept when: always"
junit=$(fact junit)
[[ "|$junit|" == *"|report.xml|"* && "|$junit|" == *"|node-report-*.xml|"* ]]
ok $? "artifacts:reports:junit has report.xml and the per-node reports ($junit)"
p=$(fact paths)
[[ "|$p|" == *"|report.xml|"* && "|$p|" == *"|node-report-*.xml|"* && "|$p|" == *"|provenance-*.json|"* ]]
ok $? "artifacts:paths has the JUnit files and provenance records too, for bless --from-report ($p)"
fact script >"$tmp/script-lines"
grep -q 'burstctl accept --partition burst -N 2 --junit report.xml\|\$BURSTCTL accept --partition burst -N 2 --junit report.xml' "$tmp/script-lines"
ok $? "the script runs burstctl accept --partition burst -N 2 --junit report.xml" "$tmp/script-lines"
grep -q 'srun .*accept .*--junit "node-report-\$SLURMD_NODENAME.xml"' "$tmp/script-lines"
ok $? "... and burst-node accept --junit on every node through srun" "$tmp/script-lines"

# ---- the script itself, with stubs ----
mkdir -p "$tmp/bin" "$tmp/job"
cat >"$tmp/bin/srun" <<'STUB'
#!/bin/bash
# srun stub: one task per node of $FAKE_NODES; exit: the largest task exit
while [ $# -gt 0 ]; do
	case "$1" in
	-N|-n|-w|-p) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
rc=0
for n in $FAKE_NODES; do
	SLURMD_NODENAME=$n "$@"
	r=$?
	[ $r -gt $rc ] && rc=$r
done
exit $rc
STUB
cat >"$tmp/bin/burst-node" <<'STUB'
#!/bin/bash
# burst-node stub: records its arguments, writes --junit, exits FAKE_RC_<node>;
# provenance prints a record naming the node
if [ "$1" = provenance ]; then
	echo "$*" >>"$FAKE_LOG.prov"
	while [ $# -gt 0 ]; do [ "$1" = --node ] && echo "{\"node\": \"$2\"}"; shift; done
	exit 0
fi
echo "$*" >>"$FAKE_LOG.node"
node=; junit=
while [ $# -gt 0 ]; do
	case "$1" in
	--node) node=$2; shift 2 ;;
	--junit) junit=$2; shift 2 ;;
	*) shift ;;
	esac
done
[ -n "$junit" ] && echo "<testsuites/>" >"$junit"
v="FAKE_RC_${node//-/_}"
exit "${!v:-0}"
STUB
cat >"$tmp/bin/burstctl" <<'STUB'
#!/bin/bash
echo "$*" >>"$FAKE_LOG.ctl"
while [ $# -gt 0 ]; do
	[ "$1" = --junit ] && echo "<testsuites/>" >"$2"
	shift
done
exit "${FAKE_RC_MPI:-0}"
STUB
chmod 755 "$tmp/bin/"*

# the job script as a GitLab runner's bash shell runs it
{
	echo 'set -eo pipefail'
	fact var | while IFS= read -r kv; do printf 'export %q\n' "$kv"; done
	echo "export BURST_NODE=$tmp/bin/burst-node BURSTCTL=$tmp/bin/burstctl"
	cat "$tmp/script-lines"
} >"$tmp/job.sh"

# runjob RC_NODE1 RC_NODE2 RC_MPI: runs the job; its exit code in $rc
runjob() {
	rm -rf "$tmp/job" && mkdir "$tmp/job"
	(cd "$tmp/job" && PATH="$tmp/bin:$PATH" FAKE_NODES="burst-1 burst-2" FAKE_LOG="$tmp/job/log" \
		SLURM_JOB_NUM_NODES=2 SLURM_JOB_NODELIST='burst-[1-2]' SLURM_JOB_ID=7 \
		CLOUD_INSTANCE_TYPE=c5n.18xlarge \
		FAKE_RC_burst_1=$1 FAKE_RC_burst_2=$2 FAKE_RC_MPI=$3 bash "$tmp/job.sh" >"$tmp/out" 2>&1)
	rc=$?
}
reports_ok() {   # every junit pattern of the template matched a file, all three made
	local p f n=0
	for p in ${junit//|/ }; do
		for f in "$tmp/job/"$p; do [ -e "$f" ] && n=$((n + 1)); done
	done
	[ $n -eq 3 ]
}

runjob 0 0 0
[ $rc -eq 0 ]; ok $? "all passed: the job passes (exit $rc)"
reports_ok; ok $? "... and report.xml and one node report per node match artifacts:reports:junit" "$tmp/out"
[ "$(cat "$tmp/job/log.ctl")" = "accept --partition burst -N 2 --junit report.xml --tap report.tap" ]
ok $? "burstctl accept got the partition, node count and report ($(cat "$tmp/job/log.ctl"))"
grep -c -- '--instance-type c5n.18xlarge' "$tmp/job/log.node" | grep -qx 2
ok $? "burst-node accept ran on both nodes with the node's instance type" "$tmp/job/log.node"
grep -qx '{"node": "burst-1"}' "$tmp/job/provenance-burst-1.json" &&
	grep -qx '{"node": "burst-2"}' "$tmp/job/provenance-burst-2.json" &&
	[[ "|$(fact paths)|" == *"|provenance-*.json|"* ]]
ok $? "each node's provenance record is saved beside the reports" "$tmp/out"
[ "$(grep -c -- '^provenance --admitted --pretty --node burst-[12]$' "$tmp/job/log.prov")" = 2 ]
ok $? "... the record each was admitted with (provenance --admitted), which bless --from-report verifies" "$tmp/job/log.prov"

runjob 0 1 0
[ $rc -eq 1 ]; ok $? "a node-local test failed on one node: the job fails (exit $rc)"
reports_ok && [ -s "$tmp/job/log.ctl" ]
ok $? "... and the MPI suite still ran, and all reports are there" "$tmp/out"

runjob 0 0 1
[ $rc -eq 1 ]; ok $? "an MPI test failed: the job fails (exit $rc)"
reports_ok; ok $? "... with every report written" "$tmp/out"

runjob 2 0 1
[ $rc -eq 2 ]; ok $? "a configuration error (2) outweighs a test failure (1): exit $rc"

runjob 0 0 2
[ $rc -eq 2 ]; ok $? "burstctl accept's usage error fails the job (exit $rc)"

done_testing

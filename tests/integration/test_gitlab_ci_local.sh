#!/usr/bin/env bash
# test_gitlab_ci_local.sh - contrib/gitlab-ci/node-acceptance.gitlab-ci.yml
# run by a real GitLab CI executor: gitlab-ci-local (npm, the version pinned
# by tools/gitlab-ci-local/package-lock.json, installed by
# tools/gitlab-ci-local.sh) runs the job with its shell executor inside a
# Slurm job of two burst nodes, submitted with sbatch and the template's own
# SCHEDULER_PARAMETERS the way Jacamar CI's batch executor hands a CI job to
# Slurm: the nodes are woken and admitted by the agent (local provider), the
# job's srun steps run burst-node provenance and accept on both, burstctl
# accept runs the MPI tests across them. Offline: the nodes' network
# namespaces have no route beyond the lab's bridge, and nothing is pulled
# (no image: the shell executor).
#
# A green run (JUnit without a failure, exit 0) and a red one (a deliberately
# failing hardware test on every node: the job fails and the JUnit records the
# failures, the artifacts kept all the same); then `burstctl bless
# --from-report` refuses the red run's artifacts and blesses the kernel and
# drivers of the green run's (the records the nodes were admitted with,
# found among the agent's admissions), after which the agent admits a fresh node of
# the tested image and rejects one of another image, naming its kernel.
#
# burst-matrix: host-only (gitlab-ci-local is the same on every release; its Slurm calls are sbatch and burstctl accept's srun steps, which test_burst and test_mpi_accept run on both; left out of the second release to keep ./check.sh within CI's time)
# The nodes' burst-node reports the a100x8 fixture sysroot (NVIDIA 550.54.15,
# Mellanox OFED) for join and provenance, as an image with those drivers
# would: this machine has none.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
S="$src/tests/fixtures/sysroots"
Y="$src/contrib/gitlab-ci/node-acceptance.gitlab-ci.yml"
[ -x "$agent" ] || bail "no $agent (build first)"
[ "$(id -u)" -eq 0 ] || bail "must run as root (a private Slurm cluster)"
command -v mpicc >/dev/null || bail "no mpicc: apt-get install openmpi-bin libopenmpi-dev"
/usr/bin/python3 -c 'import yaml, junitparser' 2>/dev/null ||
	bail "no PyYAML or junitparser: apt-get install python3-yaml python3-junitparser"
. "$src/tools/gitlab-ci-local.sh"
GCL=$(burst_gitlab_ci_local) || bail "gitlab-ci-local cannot be installed (tools/gitlab-ci-local.sh said why above)"

SLURM_CONF_NODES="# nodes: below"
# SuspendTime well beyond the test: the CI runs' nodes stay up between them
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 10 600)
lab_pre_ctld() {
	# the template's contract, cpu-hpc, is this lab's
	lab_burst_conf <<CONF || return 1
RejectCooldown=600
Contract=cpu-hpc node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-4] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"

# ---- the node image: burst-node reporting a fixture sysroot (a100x8 unless
# $LAB/image-of-NODE names another), burstctl, the MPI program; all in the
# lab, where every node sees them (a node's /tmp is its own) ----
mkdir -p "$LAB/sysroots" "$LAB/ci/home"
cp -r "$S/a100x8" "$S/a10gx4" "$LAB/sysroots/" || bail "cannot copy the fixture sysroots"
nb=$(lab_node_image) || bail "cannot copy burst-node"
cp "$burstctl" "$LAB/image/burstctl" || bail "cannot copy burstctl"
cat >"$LAB/image/burst-node-img" <<EOF
#!/bin/sh
# burst-node of an image whose kernel and drivers are a fixture's; the
# image has the accelerator table where the installed burst-node finds it
export BURST_PCI_TABLE="$LAB/image/accelerators.csv"
node=\${SLURMD_NODENAME:-\$(hostname)}
img=\$(cat "$LAB/image-of-\$node" 2>/dev/null || echo a100x8)
case "\$1" in
join|provenance)
	cmd=\$1
	shift
	exec "$nb" "\$cmd" --sysroot "$LAB/sysroots/\$img" "\$@" ;;
esac
exec "$nb" "\$@"
EOF
chmod 755 "$LAB/image/burst-node-img"
mpicc -O2 -o "$LAB/image/mpi_acceptance" "$src/share/acceptance/mpi_acceptance.c" 2>"$LAB/mpicc.err"
ok $? "mpi_acceptance.c builds with mpicc" "$LAB/mpicc.err"
lab_agent_start "$LAB/image/burst-node-img"; ok $? "the agent is up"

v=$("$GCL" --version 2>&1)
[ "$v" = "$BURST_GCL_VERSION" ]; ok $? "gitlab-ci-local $v, the pinned version, from $GCL"

# ---- the project: a git repository whose .gitlab-ci.yml includes the
# template (doc/gitlab-ci.md, "The project and its schedule") ----
# project DIR: make it
project() {
	mkdir -p "$1/contrib/gitlab-ci" && cp "$Y" "$1/contrib/gitlab-ci/" &&
		printf 'include:\n  - local: contrib/gitlab-ci/node-acceptance.gitlab-ci.yml\n' >"$1/.gitlab-ci.yml" &&
		git -C "$1" init -q -b main && git -C "$1" config user.email ci@lab.invalid &&
		git -C "$1" config user.name "lab CI" && git -C "$1" add -A &&
		git -C "$1" commit -q -m "node acceptance" &&
		# a remote that is never contacted: the executor derives CI_PROJECT_* from it
		git -C "$1" remote add origin https://gitlab.invalid/hpc/node-acceptance.git &&
		git -C "$1" update-ref refs/remotes/origin/main HEAD &&
		git -C "$1" symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main
}
project "$LAB/ci/green" 2>"$LAB/ci/git.err" && project "$LAB/ci/red" 2>>"$LAB/ci/git.err"
ok $? "two CI projects including the template" "$LAB/ci/git.err"

# the acceptance suites: two hardware tests on every node; the red one adds a
# test the nodes fail (no GPU answers); no Kind=mpi test, so burstctl accept
# runs the built-in ranks, pingpong and allreduce
cat >"$LAB/ci/green.conf" <<'CONF'
Test=cpus Kind=hardware Command="nproc" Sanity="^[0-9]+$" Timeout=30
Test=hostname Kind=hardware Command="hostname" Sanity="^burst-[0-9]+$" Timeout=30
CONF
{
	cat "$LAB/ci/green.conf"
	echo 'Test=gpu-count Kind=hardware Command="echo gpus=0" Sanity="^gpus=8$" Timeout=30'
} >"$LAB/ci/red.conf"

# the job's variables as GitLab would give them: a scheduled pipeline; where
# the image has slurm-burst; the suite
gcl_args() {   # gcl_args SUITE
	printf '%s\n' node-acceptance --no-color --timestamps --shell-executor-no-image \
		--variable CI_PIPELINE_SOURCE=schedule --ignore-predefined-vars CI_PIPELINE_SOURCE \
		--variable "BURST_NODE=$LAB/image/burst-node-img" --variable "BURSTCTL=$LAB/image/burstctl" \
		--variable "BURST_ACCEPTANCE_CONF=$LAB/ci/$1.conf" \
		--variable "BURST_MPI_ACCEPTANCE=$LAB/image/mpi_acceptance"
}

# the rule: outside a scheduled pipeline the job is not in the pipeline
(cd "$LAB/ci/green" && HOME="$LAB/ci/home" unshare -n "$GCL" --list --no-color) >"$LAB/ci/list-push" 2>&1
(cd "$LAB/ci/green" && HOME="$LAB/ci/home" unshare -n "$GCL" --list --no-color \
	--variable CI_PIPELINE_SOURCE=schedule --ignore-predefined-vars CI_PIPELINE_SOURCE) >"$LAB/ci/list-sched" 2>&1
! grep -q '^node-acceptance ' "$LAB/ci/list-push" && grep -q '^node-acceptance  *acceptance ' "$LAB/ci/list-sched"
ok $? "gitlab-ci-local (loopback only) has the job in a scheduled pipeline, not in a push one" \
	"$LAB/ci/list-push" "$LAB/ci/list-sched"

# the sbatch arguments of the template, as Jacamar passes SCHEDULER_PARAMETERS
sched=$(/usr/bin/python3 -c 'import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["node-acceptance"]["variables"]["SCHEDULER_PARAMETERS"])' "$Y")
[[ " $sched " == *" -p burst -N 2 "* && "$sched" == *"--cloud-contract=cpu-hpc"* ]]
ok $? "SCHEDULER_PARAMETERS from the template: $sched"

# runjob SUITE: the CI job as Jacamar's batch executor runs it: one batch
# script, submitted with sbatch $SCHEDULER_PARAMETERS, that runs the job
# (here: gitlab-ci-local, shell executor) in the project's directory; what
# the batch step's network is, for the offline check. Sets $id.
runjob() {
	local s=$1 d="$LAB/ci/$1"
	{
		echo '#!/bin/bash'
		echo "# the CI job of project $s, in its Slurm allocation"
		echo "cd '$d' || exit 2"
		echo "export HOME='$LAB/ci/home'"
		echo "ip -o route show >'$LAB/ci/$s.routes' 2>&1"
		echo "ip route get 192.0.2.1 >'$LAB/ci/$s.route-out' 2>&1; echo \"exit \$?\" >>'$LAB/ci/$s.route-out'"
		printf 'exec %q' "$GCL"
		gcl_args "$s" | while IFS= read -r a; do printf ' %q' "$a"; done
		echo
	} >"$LAB/ci/$s.sbatch"
	# (word splitting of $sched: sbatch's arguments, as Jacamar splits them)
	# shellcheck disable=SC2086
	id=$(sbatch --parsable $sched -J "ci-$s" -o "$LAB/ci/$s.out" "$LAB/ci/$s.sbatch" 2>"$LAB/ci/$s.err")
}
# gitlab-ci-local --timestamps: each line of the job's log starts with the
# time and the time since the job started; the verdict line has the duration
ts='\[[0-9:]* *[0-9.]* m\{0,1\}s\] '
dur='\[ *[0-9.]* m\{0,1\}s\]'
# exit code of a finished job (scontrol: no accounting in the lab)
job_exit() { scontrol show job "$1" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' | head -1; }
# how long a finished job waited (nodes woken, launched, admitted) and ran
job_times() {
	scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | awk -F= '
		$1 ~ /^(Submit|Start|End)Time$/ { gsub(/T/, " ", $2); t[$1] = $2 }
		END {
			cmd = "date -d \"" t["SubmitTime"] "\" +%s"; cmd | getline s; close(cmd)
			cmd = "date -d \"" t["StartTime"] "\" +%s"; cmd | getline b; close(cmd)
			cmd = "date -d \"" t["EndTime"] "\" +%s"; cmd | getline e; close(cmd)
			printf "waited %d s, ran %d s", b - s, e - b }'
}

# ---- green ----
t0=$(date +%s)
runjob green; ok $? "sbatch $sched (green)" "$LAB/ci/green.err"
lab_wait_job "$id" 'COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL' 240
st=$(squeue -h -t all -j "$id" -o %T)
[ "$st" = COMPLETED ] && [ "$(job_exit "$id")" = 0 ]
ok $? "the green CI job completes, exit 0 ($st, $(($(date +%s) - t0)) s: $(job_times "$id"))" "$LAB/ci/green.out" "$LAB/log/agent.log" $LAB_NODE_LOGS
out="$LAB/ci/green.out"
grep -q "^${ts}node-acceptance starting shell (acceptance)\$" "$out" && grep -q "^ PASS  $dur node-acceptance\$" "$out"
ok $? "gitlab-ci-local ran it with the shell executor: PASS" "$out"
grep -q "^${ts}node-acceptance > node acceptance on burst-\[[1-4][,-][1-4]\] (job [0-9]*)\$" "$out"
ok $? "... inside the Slurm job, on two burst nodes" "$out"
! grep -Eq 'docker|podman|[Pp]ull' "$out"
ok $? "... pulling nothing, starting no container" "$out"
! grep -q default "$LAB/ci/green.routes" && grep -q 'Network is unreachable' "$LAB/ci/green.route-out" &&
	grep -qx 'exit [1-9][0-9]*' "$LAB/ci/green.route-out"
ok $? "offline: the job's network has no default route, the outside is unreachable" \
	"$LAB/ci/green.routes" "$LAB/ci/green.route-out"
G="$LAB/ci/green/.gitlab-ci-local/artifacts/node-acceptance"
nodes=$(cd "$G" 2>/dev/null && ls provenance-*.json 2>/dev/null | sed 's/^provenance-//; s/\.json$//' | tr '\n' ' ')
set -- $nodes
miss=
for n in "$@"; do
	[ -s "$G/node-report-$n.xml" ] && [ -s "$G/node-report-$n.tap" ] || miss="$miss $n"
done
[ $# = 2 ] && [ -z "$miss" ] && [ -s "$G/report.xml" ] && [ -s "$G/report.tap" ]
ok $? "the artifacts gitlab-ci-local kept: per node ($nodes) provenance, JUnit and TAP; report.xml and report.tap (nodes without their JUnit or TAP:${miss:- none})" \
	"$out"

# check_junit DIR WANT: the JUnit reports of DIR against WANT (green or red)
check_junit() {
	/usr/bin/python3 - "$1" "$2" $nodes <<'PY'
import glob, os, sys
from junitparser import JUnitXml, Failure, Error
d, want, nodes = sys.argv[1], sys.argv[2], sys.argv[3:]
cases = {}
for f in sorted(glob.glob(os.path.join(d, "*.xml"))):
    for s in JUnitXml.fromfile(f):
        for c in s:
            cases[c.name] = ([r.message for r in c.result if isinstance(r, (Failure, Error))], c.classname)
node_tests = ["cpus", "hostname"] + (["gpu-count"] if want == "red" else [])
expect = ["%s@%s" % (t, n) for t in node_tests for n in nodes]
expect += [t + "@burst-[" for t in ("ranks", "pingpong", "allreduce")]
errs = []
for e in expect:
    got = [n for n in cases if n == e or (e.endswith("[") and n.startswith(e))]
    if not got: errs.append("no case %s" % e)
failed = sorted(n for n, (f, _) in cases.items() if f)
want_failed = sorted("gpu-count@%s" % n for n in nodes) if want == "red" else []
if failed != want_failed:
    errs.append("failed %s, want %s" % (failed, want_failed))
    errs += ["%s: %s" % (n, cases[n][0]) for n in failed if n not in want_failed]
if want == "red":
    for n in want_failed:
        if not any("gpus=8" in m for m in cases[n][0]): errs.append("%s: reason %s" % (n, cases[n][0]))
if any(cl != "local.host" for _, cl in cases.values()): errs.append("classnames %s" % [cl for _, cl in cases.values()])
if len(cases) != len(expect): errs.append("%d cases, want %d: %s" % (len(cases), len(expect), sorted(cases)))
print("\n".join(errs) or "ok %s" % sorted(cases))
sys.exit(1 if errs else 0)
PY
}
check_junit "$G" green >"$LAB/ci/green.junit" 2>&1
ok $? "junitparser: the green run's JUnit has every node's and the MPI tests, no failure, classname local.host" \
	"$LAB/ci/green.junit"
/usr/bin/python3 - "$G" $nodes >"$LAB/ci/green.prov" 2>&1 <<'PY'
import json, os, sys
d, nodes = sys.argv[1], sys.argv[2:]
for n in nodes:
    r = json.load(open(os.path.join(d, "provenance-%s.json" % n)))
    assert r["identity"]["node"] == n, r["identity"]
    assert r["kernel"]["release"] == "5.15.0-91-generic", r["kernel"]
    assert r["drivers"]["nvidia"]["version"] == "550.54.15", r["drivers"]
print("ok")
PY
ok $? "the provenance artifacts name each node, its kernel and its NVIDIA driver" "$LAB/ci/green.prov"

# ---- red ----
t0=$(date +%s)
runjob red; ok $? "sbatch $sched (red)" "$LAB/ci/red.err"
lab_wait_job "$id" 'COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL' 240
st=$(squeue -h -t all -j "$id" -o %T)
[ "$st" = FAILED ] && [ "$(job_exit "$id")" = 1 ]
ok $? "the red CI job fails, exit 1 ($st, $(($(date +%s) - t0)) s: $(job_times "$id"))" "$LAB/ci/red.out" "$LAB/log/agent.log"
out="$LAB/ci/red.out"
grep -q "^ FAIL  $dur node-acceptance\$" "$out" && grep -q 'burst-node accept exit 1, burstctl accept exit 0' "$out"
ok $? "gitlab-ci-local: FAIL, from burst-node accept's exit 1; the MPI suite still ran and passed" "$out"
R="$LAB/ci/red/.gitlab-ci-local/artifacts/node-acceptance"
nodes=$(cd "$R" 2>/dev/null && ls provenance-*.json 2>/dev/null | sed 's/^provenance-//; s/\.json$//' | tr '\n' ' ')
check_junit "$R" red >"$LAB/ci/red.junit" 2>&1
ok $? "the red run's artifacts are kept; its JUnit records gpu-count failing on each node ($nodes), the reason named" \
	"$LAB/ci/red.junit"

# ---- bless from the reports ----
K="$LAB/burst/blessed-kernels" D="$LAB/burst/blessed-drivers"
"$burstctl" -c "$LAB/etc/burst.conf" bless --from-report "$R" >"$LAB/ci/bless-red.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "the report in $R is red: 2 of [0-9]* test cases failed (gpu-count@burst-" "$LAB/ci/bless-red.out" &&
	[ ! -e "$K" ] && [ ! -e "$D" ]
ok $? "bless --from-report refuses the red run (exit $rc), naming the failures; nothing blessed" "$LAB/ci/bless-red.out"
"$burstctl" -c "$LAB/etc/burst.conf" bless --from-report "$G" >"$LAB/ci/bless-green.out" 2>&1 &&
	grep -q "2 provenance records, each the record of an admission in agent.db" "$LAB/ci/bless-green.out"
ok $? "bless --from-report blesses the green run, each record verified against the agent's admissions" "$LAB/ci/bless-green.out"
"$burstctl" -c "$LAB/etc/burst.conf" bless --list >"$LAB/ci/list" 2>&1
[ "$(cut -f1 "$LAB/ci/list" | sort | tr '\n' ' ')" = "5.15.0-91-generic:b0bf2a764c76a427b48c6edad500ecbaf2387c6c mlx5_core=23.10-1.1.9 mlx5_ib=23.10-1.1.9 nvidia=550.54.15 nvidia_uvm=550.54.15 " ]
ok $? "the policy now blesses exactly the green run's kernel (release:build-id) and driver versions" "$LAB/ci/list" "$LAB/ci/bless-green.out"

# ---- the policy at join: two nodes the CI runs did not use, one of the
# tested image, one of another (a10gx4: kernel 5.15.0-1051-aws, NVIDIA 535) ----
fresh=()
for n in burst-1 burst-2 burst-3 burst-4; do
	[[ " $nodes " == *" $n "* ]] || fresh+=("$n")
done
[ ${#fresh[@]} = 2 ] || bail "the CI runs used nodes $nodes, not two of burst-[1-4]"
echo a10gx4 >"$LAB/image-of-${fresh[1]}"
same=$(sbatch --parsable --cloud-contract=cpu-hpc -p burst -w "${fresh[0]}" -o "$LAB/ci/same.out" --wrap hostname)
other=$(sbatch --parsable --cloud-contract=cpu-hpc -p burst -w "${fresh[1]}" -o "$LAB/ci/other.out" --wrap hostname)
lab_wait_job "$same" COMPLETED 120
ok $? "a fresh node of the tested image (${fresh[0]}) is admitted and runs a job" "$LAB/log/agent.log"
for i in $(seq 600); do
	grep -q "${fresh[1]}: booting -> rejected" "$LAB/log/agent.log" && break
	sleep 0.1
done
grep "${fresh[1]}: booting -> rejected" "$LAB/log/agent.log" | head -1 >"$LAB/ci/rejected"
grep -q 'kernel 5.15.0-1051-aws (build-id [0-9a-f]*) is not blessed' "$LAB/ci/rejected" &&
	grep -q 'driver nvidia 535.161.07 is not blessed (blessed: 550.54.15' "$LAB/ci/rejected"
ok $? "a fresh node of another image (${fresh[1]}) is rejected at join, naming its kernel and driver" \
	"$LAB/ci/rejected" "$LAB/log/agent.log"
scancel "$other" 2>/dev/null

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

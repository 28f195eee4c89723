#!/usr/bin/env bash
# test_mpi_accept.sh - burstctl accept on a real Slurm: the MPI acceptance
# tests (ranks, pingpong, allreduce) across two burst nodes that are powered
# down when it starts (Slurm wakes them through the agent's local provider,
# each node in its own network, mount (/tmp) and UTS namespaces), run with
# srun --mpi=pmix and Debian's Open MPI; the JUnit report checked by xmllint
# and junitparser; then a performance reference the nodes cannot meet and a
# ranks test whose ranks share a host, each failing with the reason named.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
burstctl="$build/burstctl/burstctl"
[ -x "$agent" ] || bail "no $agent (build first)"
command -v mpicc >/dev/null || bail "no mpicc: apt-get install openmpi-bin libopenmpi-dev"
command -v xmllint >/dev/null || bail "no xmllint: apt-get install libxml2-utils"
/usr/bin/python3 -c 'import junitparser' 2>/dev/null || bail "no junitparser: apt-get install python3-junitparser"

SLURM_CONF_NODES="# nodes: below"
# SuspendTime well beyond the test: the nodes stay up between the runs
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 10 120)
lab_pre_ctld() {
	lab_burst_conf <<CONF || return 1
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
lab_up || bail "the lab did not start"
cd "$LAB" || bail "no lab directory"
TAP_DIAG="$LAB/log/agent.log"
lab_agent_start
[ -S "$LAB/burst/agent.sock" ]; ok $? "the agent is up"

# where every node sees it: the lab (a node's /tmp is its own)
mpicc -O2 -o "$LAB/mpi_acceptance" "$src/share/acceptance/mpi_acceptance.c" 2>"$LAB/mpicc.err"
ok $? "mpi_acceptance.c builds with mpicc" "$LAB/mpicc.err"
export BURST_MPI_ACCEPTANCE="$LAB/mpi_acceptance"
[ "$(lab_node_state burst-1) $(lab_node_state burst-2)" = "idle~ idle~" ]
ok $? "burst-1 and burst-2 are powered down before the run"

# --- the built-in tests across two nodes woken for the purpose ---
"$burstctl" accept --nodes 'burst-[1-2]' --junit "$LAB/ok.xml" --tap "$LAB/ok.tap" \
	--json "$LAB/ok.json" >"$LAB/ok.out" 2>&1
rc=$?
ok $([ $rc = 0 ]; echo $?) "burstctl accept --nodes burst-[1-2] passes (exit $rc)" "$LAB/ok.tap" "$LAB/ok.out" "$LAB/log/agent.log"
grep -q 'burst-1: requested -> launching' "$LAB/log/agent.log" &&
	grep -q 'burst-2: requested -> launching' "$LAB/log/agent.log"
ok $? "... Slurm resumed both nodes through the agent"
xmllint --noout "$LAB/ok.xml" 2>"$LAB/xmllint.err"; ok $? "the JUnit file is well-formed XML" "$LAB/xmllint.err"
/usr/bin/python3 - "$LAB/ok.xml" >"$LAB/py.out" 2>&1 <<'PY'
import re, sys
from junitparser import JUnitXml, Failure, Error
xml = JUnitXml.fromfile(sys.argv[1])
cases = [c for s in xml for c in s]
names = [c.name for c in cases]
bad = [c.name for c in cases for r in c.result if isinstance(r, (Failure, Error))]
assert len(cases) == 3, names
assert not bad, bad
assert len(set(names)) == 3, names
assert sorted(names) == sorted(t + "@burst-[1-2]" for t in ("ranks", "pingpong", "allreduce")), names
assert all(c.classname == "local.host" for c in cases), [c.classname for c in cases]
ranks = [c for c in cases if c.name.startswith("ranks@")][0]
seen = re.findall(r"^rank (\d+) of 2 on (\S+)$", ranks.system_out or "", re.M)
assert sorted(seen) == [("0", "burst-1"), ("1", "burst-2")], seen
pp = [c for c in cases if c.name.startswith("pingpong@")][0]
m = re.search(r"^latency_us=([0-9.]+) bandwidth_mbs=([0-9.]+)$", pp.system_out or "", re.M)
assert m and float(m.group(1)) > 0 and float(m.group(2)) > 0, pp.system_out
print("ok", names)
PY
ok $? "junitparser: 3 cases named TEST@burst-[1-2], no failure, classname local.host, ranks on burst-1 and burst-2" "$LAB/py.out" "$LAB/ok.xml"
grep -q '^# perf latency_us = [0-9.e+]* (reference 1000 for default' "$LAB/ok.tap" &&
	grep -q '^# perf bandwidth_mbs = [0-9.e+]* (reference 100 for default' "$LAB/ok.tap"
ok $? "the TAP report gives the measured latency and bandwidth with their references" "$LAB/ok.tap"
grep -q '"node":"burst-\[1-2\]"' "$LAB/ok.json" && grep -q '"latency_us":{"value":' "$LAB/ok.json"
ok $? "the JSON report names the nodes and carries the values" "$LAB/ok.json"

# --- a bandwidth no network has: the perf check fails, saying why ---
cat >"$LAB/impossible.conf" <<CONF
Test=pingpong Kind=mpi Command="{mpi_acceptance} pingpong" Sanity="^latency_us=" Perf="bandwidth_mbs=bandwidth_mbs=([0-9.]+)" Reference=default:1e12:-0.1:+0 Timeout=30
Test=local-only Kind=hardware Command="true" Sanity="^"
CONF
"$burstctl" accept --nodes 'burst-[1-2]' --conf "$LAB/impossible.conf" --junit "$LAB/bad.xml" \
	--tap "$LAB/bad.tap" >"$LAB/bad.out" 2>&1
rc=$?
ok $([ $rc = 1 ]; echo $?) "an impossible bandwidth reference fails the run (exit $rc)" "$LAB/bad.tap" "$LAB/bad.out"
/usr/bin/python3 - "$LAB/bad.xml" >"$LAB/py2.out" 2>&1 <<'PY'
import re, sys
from junitparser import JUnitXml, Failure
cases = [c for s in JUnitXml.fromfile(sys.argv[1]) for c in s]
assert [c.name for c in cases] == ["pingpong@burst-[1-2]"], [c.name for c in cases]
fails = [r.message for c in cases for r in c.result if isinstance(r, Failure)]
assert len(fails) == 1, fails
assert re.search(r"bandwidth_mbs = [0-9.e+]+ is below the reference 1e\+12", fails[0]), fails[0]
print("ok", fails[0])
PY
ok $? "... JUnit: one case, one failure naming the measured value and the reference" "$LAB/py2.out" "$LAB/bad.xml"

# --- by partition; ranks that share a host are caught by the ranks check ---
cat >"$LAB/ranks.conf" <<CONF
Test=ranks Kind=mpi Command="{mpi_acceptance} ranks | sed s/burst-2/burst-1/" Sanity="^rank 0 of" Timeout=30
CONF
"$burstctl" accept --partition burst -N 2 --conf "$LAB/ranks.conf" --tap "$LAB/ranks.tap" >"$LAB/ranks.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^not ok 1 - ranks@burst-\[1-2\]$' "$LAB/ranks.tap" &&
	grep -q 'reason: ranks: ranks 0 and 1 both run on burst-1; expected one rank per node of burst-\[1-2\]' "$LAB/ranks.tap"
ok $? "--partition burst -N 2: two ranks on one host fail the ranks check (exit $rc)" "$LAB/ranks.tap" "$LAB/ranks.out"

# --- each node has its own /dev/shm, as a machine does: Open MPI names its
# shared-memory segments by host name, uid and job id, which the nodes of two
# labs (or clusters) on one host share; one /dev/shm for all of them mixed
# two jobs' messages and made a rank segfault in MPI_Init under load ---
probe=burst-shm-probe.$$
# (srun's own messages, e.g. "queued and waiting for resources" while the
# last job's nodes finish under load, go to shm.err, not among the files)
srun -p burst -N 2 -w 'burst-[1-2]' sh -c "touch /dev/shm/$probe.\$SLURMD_NODENAME" >"$LAB/shm.out" 2>"$LAB/shm.err" &&
	srun -p burst -N 2 -w 'burst-[1-2]' -l sh -c "ls /dev/shm | grep -F $probe" 2>>"$LAB/shm.err" | sort >>"$LAB/shm.out"
seen=$(grep -c . "$LAB/shm.out") host=$(ls /dev/shm | grep -c -F "$probe")
rm -f /dev/shm/"$probe".*
[ "$(cat "$LAB/shm.out")" = "$(printf '0: %s\n1: %s' "$probe.burst-1" "$probe.burst-2")" ] && [ "$host" = 0 ]
ok $? "each node sees only its own file in /dev/shm, and the host none ($seen lines, host $host)" "$LAB/shm.out" "$LAB/shm.err"

# --- usage ---
"$burstctl" accept --conf "$LAB/ranks.conf" >/dev/null 2>"$LAB/usage.err"
rc=$?
[ $rc = 2 ] && grep -q 'give the nodes to test' "$LAB/usage.err"
ok $? "without nodes: usage error, exit 2 ($rc)" "$LAB/usage.err"

lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

#!/usr/bin/env bash
# test_metrics.sh - burst-agent's Prometheus metrics (MetricsListen=): Debian's
# prometheus scrapes the agent during a burst and a PromQL query through its
# HTTP API returns the launch; the exposition is parsed by Prometheus itself
# (the target is up, no scrape error); only GET /metrics is answered; a
# scraper trickling its request a byte at a time neither delays the burst
# nor stays connected past the agent's deadline; one user opening idle
# connections again and again keeps no other user's scrapes out; the gauges
# are read from the state at most once a second.
# burst-matrix: host-only (the agent's Prometheus metrics: its Slurm calls are those of test_burst, run on both)
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
. "$src/tests/integration/tap.sh"
. "$src/tests/integration/lab.sh"
agent="$build/burst-agent/burst-agent"
[ -x "$agent" ] || bail "no $agent (build first)"
command -v prometheus >/dev/null || bail "no prometheus (Debian package prometheus: tools/deps.sh)"

SLURM_CONF_NODES="# nodes: below"
# a region, for the Price= line below
LAB_PROVIDER_EXTRA="Regions=lab"
SLURM_CONF_EXTRA=$(lab_burst_slurm_conf 60 10 5)
lab_pre_ctld() {
	# two ports of this lab's range (a lab_pick_net slot holds port, port+1 and port+300 to +303)
	MPORT=$((LAB_PORT_CTLD + 302))
	PPORT=$((LAB_PORT_CTLD + 303))
	! ss -Hltn | awk '{ print $4 }' | grep -Eq ":($MPORT|$PPORT)\$" || { lab_log "ports $MPORT/$PPORT in use"; return 1; }
	lab_burst_conf <<CONF
MetricsListen=127.0.0.1:$MPORT
Price=local.host Provider=local Region=lab OnDemand=3.60
Contract=here node_vcpus_count>=1 accelerator_count=0
NodeSet=local Nodes=burst-[1-2] Partition=burst InstanceTypes=local.host
CONF
}
PROM_PID=
prom_stop() { [ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null; PROM_PID=; }
lab_up || bail "the lab did not start"
trap 'prom_stop; lab_down' EXIT
trap 'prom_stop; lab_down; exit 130' INT TERM
cd "$LAB" || bail "no lab directory"
"$build/burstctl/burstctl" --config "$LAB/etc/burst.conf" check-config >"$LAB/check.out" 2>&1
ok $? "check-config accepts MetricsListen=" "$LAB/check.out"
lab_agent_start; ok $? "the agent is up" "$LAB/log/agent.log"
grep -q "metrics http://127.0.0.1:$MPORT" "$LAB/log/agent.log"; ok $? "it says where its metrics are" "$LAB/log/agent.log"
M="http://127.0.0.1:$MPORT"

# ---- the exposition, by hand ----
curl -sS -D "$LAB/m.hdr" -o "$LAB/m.txt" "$M/metrics" 2>"$LAB/err"
grep -q '^HTTP/1.1 200' "$LAB/m.hdr" && grep -qi '^Content-Type: text/plain; version=0.0.4' "$LAB/m.hdr"
ok $? "GET /metrics: 200, text exposition 0.0.4" "$LAB/m.hdr" "$LAB/err"
grep -qx '# TYPE burst_nodes gauge' "$LAB/m.txt" &&
	grep -qx 'burst_nodes{nodeset="local",state="powered_down"} 2' "$LAB/m.txt" &&
	grep -qx 'burst_nodes{nodeset="local",state="admitted"} 0' "$LAB/m.txt"
ok $? "nodes by state and node set, from the state database" "$LAB/m.txt"
grep -qx 'burst_spool_depth 0' "$LAB/m.txt" && grep -qx '# TYPE burst_launches_total counter' "$LAB/m.txt"
ok $? "the spool depth; the launch counter's family" "$LAB/m.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' "$M/")
[ "$code" = 404 ]; ok $? "another path: 404 ($code)"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x "$M/metrics")
[ "$code" = 405 ]; ok $? "another method: 405 ($code)"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 9000 /dev/zero | tr '\0' a)" "$M/metrics")
[ "$code" = 431 ]; ok $? "a request header beyond 8 KiB: 431 ($code)"
# five silent connections of one client: the fifth closes the oldest (at
# most 4 of one source at once), and a scraper still gets its answer
python3 - "$MPORT" >"$LAB/flood.out" 2>&1 <<'PY'
import select, socket, sys, time
port = int(sys.argv[1])
conns = []
for i in range(5):
    conns.append(socket.create_connection(("127.0.0.1", port)))
    time.sleep(0.05)
r, _, _ = select.select([conns[0]], [], [], 3)
first = bool(r) and conns[0].recv(1) == b""
r, _, _ = select.select(conns[1:], [], [], 0.5)
print("oldest closed" if first else "oldest open", "/", "others open" if not r else "another closed")
PY
grep -qx 'oldest closed / others open' "$LAB/flood.out"; ok $? "beyond 4 connections of one client its oldest is closed: $(cat "$LAB/flood.out")" "$LAB/flood.out"
code=$(curl -s -o /dev/null -w '%{http_code}' "$M/metrics")
[ "$code" = 200 ] && curl -s "$M/metrics" | grep -q '^burst_metrics_connections_dropped_total{reason="too_many"} [1-9]'
ok $? "a scraper is answered after the flood, which is counted ($code)"

# one user (nobody) opening idle connections again and again on loopback,
# 50 at a time, keeps no other user's scraper out: root scrapes 20 times
# meanwhile and each scrape is answered. Before the fix every client on
# loopback was one source, and the flood's new connections closed the
# scraper's before its request was read (8 of 20 failed in the review).
mkdir -m 777 "$LAB/att"
cat >"$LAB/idle.py" <<'PY'
import os, selectors, socket, sys, time
port, out = int(sys.argv[1]), sys.argv[2]
sel = selectors.DefaultSelector()
opened = 0
def another():
    global opened
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_READ)
    opened += 1
for _ in range(50):
    another()
open(out + ".started", "w").close()
end = time.monotonic() + 60
while time.monotonic() < end and not os.path.exists(out + ".stop"):
    # a connection the agent closed (or refused) reads as ended: another at once
    for key, _ in sel.select(timeout=0.1):
        sel.unregister(key.fileobj)
        key.fileobj.close()
        another()
open(out + ".done", "w").write("%d connections opened\n" % opened)
PY
chmod 644 "$LAB/idle.py"
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$LAB/idle.py" "$MPORT" "$LAB/att/idle" &
lab_record attacker $!
lab_wait_file "$LAB/att/idle.started" 10; ok $? "nobody opens idle connections to the metrics port, again whenever one is closed"
good=0
for i in $(seq 20); do
	code=$(curl -s -m 10 -o "$LAB/scrape.$i" -w '%{http_code}' "$M/metrics")
	[ "$code" = 200 ] && grep -q '^burst_nodes{' "$LAB/scrape.$i" && good=$((good + 1))
done
[ ! -e "$LAB/att/idle.done" ]; ok $? "... still at it after root's scrapes"
touch "$LAB/att/idle.stop"
lab_wait_file "$LAB/att/idle.done" 10
[ "$good" = 20 ]; ok $? "root's 20 scrapes meanwhile are all answered ($good of 20; the flood: $(cat "$LAB/att/idle.done" 2>/dev/null))" "$LAB/log/agent.log"

# the gauges are read from the state at most once a second: 20 scrapes in a
# row read them at most once more than there were whole seconds between the
# first and the last (burst_metrics_gauge_reads_total), not 20 times
python3 - "$MPORT" >"$LAB/cache.out" 2>&1 <<'PY'
import sys, time, urllib.request
url = "http://127.0.0.1:%s/metrics" % sys.argv[1]
def reads():
    for line in urllib.request.urlopen(url, timeout=10).read().decode().splitlines():
        if line.startswith("burst_metrics_gauge_reads_total "):
            return int(float(line.split()[1]))
    return None
t0 = time.monotonic()
first = reads()
for _ in range(18):
    reads()
last = reads()
took = time.monotonic() - t0
ok = first is not None and last is not None and last - first <= int(took) + 1
print("%s: %s reads more in 20 scrapes over %.2f s (first %s)" % ("ok" if ok else "bad", None if first is None or last is None else last - first, took, first))
PY
grep -q '^ok: ' "$LAB/cache.out"; ok $? "20 scrapes in a row, the gauges read at most once a second: $(cat "$LAB/cache.out")" "$LAB/cache.out"

# ---- Prometheus scrapes the agent (loopback only, its storage in the lab) ----
cat >"$LAB/etc/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: burst
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
YML
prometheus --config.file="$LAB/etc/prometheus.yml" --storage.tsdb.path="$LAB/prom" \
	--web.listen-address="127.0.0.1:$PPORT" >"$LAB/log/prometheus.log" 2>&1 &
PROM_PID=$!
P="http://127.0.0.1:$PPORT"
for i in $(seq 300); do curl -sf "$P/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "$P/-/ready" >/dev/null; ok $? "prometheus is ready" "$LAB/log/prometheus.log"
# promql QUERY: the query's result (JSON) through the HTTP API
promql() { curl -sS -G "$P/api/v1/query" --data-urlencode "query=$1"; }
# the first value of a query's result vector, empty if none
promval() { promql "$1" | python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'; }
for i in $(seq 100); do [ "$(promval 'up{job="burst"}')" = 1 ] && break; sleep 0.2; done
curl -sS "$P/api/v1/targets" >"$LAB/targets.json"
python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["data"]["activeTargets"]
sys.exit(0 if len(t) == 1 and t[0]["health"] == "up" and not t[0]["lastError"] else 1)' "$LAB/targets.json"
ok $? "prometheus parses the agent's exposition: the target is up, no error" "$LAB/targets.json" "$LAB/log/prometheus.log"
v=$(promval 'burst_nodes{nodeset="local",state="powered_down"}')
[ "$v" = 2 ]; ok $? "PromQL: two nodes powered down ($v)"

# ---- hostile scrapers trickle their requests while a job bursts ----
# four connections of nobody (the agent takes 8 at once, 4 of one user on
# loopback, so Prometheus, root's, keeps its way in), each sending a byte
# every 0.3 s (a minute for the whole request), reopened whenever the agent
# closes one, until the job is done
setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 - "$MPORT" "$LAB/trickle.stop" >"$LAB/trickle.out" 2>&1 <<'PY' &
import os, select, socket, sys, time
port, stop = int(sys.argv[1]), sys.argv[2]
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
conns, closed, longest = [], 0, 0.0
t_start = time.monotonic()
def opened():
    return [socket.create_connection(("127.0.0.1", port)), time.monotonic(), 0]
conns = [opened() for _ in range(4)]
while not (os.path.exists(stop) and closed >= 4) and time.monotonic() - t_start < 90:
    time.sleep(0.3)
    for c in conns:
        s, t0, k = c
        gone = False
        try:
            if select.select([s], [], [], 0)[0] and s.recv(1) == b"":
                gone = True
            elif k < len(req):
                s.sendall(req[k:k + 1])
                c[2] = k + 1
        except OSError:
            gone = True
        if gone:
            closed += 1
            longest = max(longest, time.monotonic() - t0)
            s.close()
            c[:] = opened()
print("closed %d; longest %.0f s" % (closed, longest))
PY
TRICKLE=$!
id=$(sbatch --parsable --cloud-contract=here -o "$LAB/job.out" --wrap 'hostname; sleep 3' 2>"$LAB/err")
ok $? "sbatch --cloud-contract=here" "$LAB/err"
lab_wait_job "$id" COMPLETED 90; ok $? "the job bursts, runs and completes while scrapers trickle" "$LAB/log/agent.log"
touch "$LAB/trickle.stop"
wait "$TRICKLE"
closed=$(sed -n 's/^closed \([0-9]*\); longest \([0-9]*\) s$/\1/p' "$LAB/trickle.out")
longest=$(sed -n 's/^closed \([0-9]*\); longest \([0-9]*\) s$/\2/p' "$LAB/trickle.out")
[ -n "$closed" ] && [ "$closed" -ge 4 ] && [ "$longest" -lt 30 ]
ok $? "the agent closed the trickling scrapers at its deadline: $(cat "$LAB/trickle.out")" "$LAB/trickle.out"

# ---- the launch, through PromQL ----
q='sum(burst_launches_total{provider="local",instance_type="local.host",outcome="ok"})'
for i in $(seq 100); do v=$(promval "$q"); [ -n "$v" ] && [ "$v" -ge 1 ] 2>/dev/null && break; sleep 0.2; done
[ -n "$v" ] && [ "$v" -ge 1 ] 2>/dev/null; ok $? "PromQL $q: the launch ($v)"
promql "$q" >"$LAB/q.json"
v=$(promval 'sum(burst_joins_total{outcome="admitted"})')
[ -n "$v" ] && [ "$v" -ge 1 ] 2>/dev/null; ok $? "PromQL: the join was admitted ($v)"
v=$(promval 'sum(burst_admission_duration_seconds_count{nodeset="local"})')
[ -n "$v" ] && [ "$v" -ge 1 ] 2>/dev/null; ok $? "PromQL: the admission's duration is in the histogram ($v)"
v=$(promval 'sum(burst_provider_api_calls_total{provider="local",op="launch"})')
[ -n "$v" ] && [ "$v" -ge 1 ] 2>/dev/null; ok $? "PromQL: provider launch calls counted ($v)"
v=$(promval 'max_over_time(burst_nodes{nodeset="local",state="admitted"}[5m])')
[ "$v" = 1 ]; ok $? "PromQL: the node was seen admitted during the burst ($v)"
# the drops happened before the trickler saw its connections closed, maybe
# less than a scrape ago (on Slurm 24.11 the job is done before the first
# deadline): the agent counts them now, and Prometheus, after its next scrape
curl -sS "$M/metrics" >"$LAB/m2.txt" 2>"$LAB/err"
grep -Eq '^burst_metrics_connections_dropped_total\{reason="deadline"\} [1-9]' "$LAB/m2.txt"
ok $? "the agent counts the trickling scrapers as dropped at the deadline" "$LAB/m2.txt" "$LAB/err"
t_drop=$(date +%s)
for i in $(seq 100); do
	ts=$(promval 'timestamp(up{job="burst"})'); [ -n "$ts" ] && [ "${ts%.*}" -gt "$t_drop" ] && break; sleep 0.2
done
v=$(promval 'sum(burst_metrics_connections_dropped_total{reason="deadline"})')
[ -n "$v" ] && [ "$v" -ge 1 ] 2>/dev/null; ok $? "PromQL: the trickling scraper is counted as dropped at the deadline ($v)"

# every query of the sample Grafana dashboard is valid PromQL with data behind it
python3 - "$src/contrib/grafana/burst-agent.json" "$P" >"$LAB/grafana.out" 2>&1 <<'PY'
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1]))
bad = n = 0
for p in d["panels"]:
    for t in p["targets"]:
        q = (t["expr"].replace("$job", ".*").replace("$nodeset", ".*")
             .replace("$__rate_interval", "1m").replace("$__range", "1h"))
        url = sys.argv[2] + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
        try:
            r = json.load(urllib.request.urlopen(url))
            ok = r["status"] == "success"
        except Exception as e:
            ok, r = False, str(e)
        n += 1
        if not ok:
            bad += 1
            print("bad query in panel %r: %s: %s" % (p["title"], q, r))
print("%d queries, %d bad" % (n, bad))
sys.exit(1 if bad or not n else 0)
PY
ok $? "the Grafana dashboard's queries run in Prometheus: $(tail -1 "$LAB/grafana.out")" "$LAB/grafana.out"

# idle: the node goes away, its instance time is counted
n=$(head -1 "$LAB/job.out")
lab_wait_node "$n" 'idle~' 60; ok $? "the idle node is powered down again ($n)" "$LAB/log/agent.log"
for i in $(seq 100); do v=$(promval 'burst_instance_seconds_total{provider="local",instance_type="local.host",region="lab"} > 0'); [ -n "$v" ] && break; sleep 0.2; done
[ -n "$v" ]; ok $? "PromQL: instance time counted ($v s)"
# at 3.60 USD an hour (the Price= line), a second costs a thousandth of a dollar
v=$(promval 'sum(burst_instance_cost_dollars_total{provider="local"}) / sum(burst_instance_seconds_total{provider="local"})')
python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1]) - 0.001) < 1e-9 else 1)' "${v:-nan}"
ok $? "PromQL: its cost at the catalog price, 0.001 USD a second ($v)"
curl -sS "$M/metrics" >"$LAB/m2.txt"
grep -q '^burst_provider_api_calls_total{provider="local",op="terminate"} [1-9]' "$LAB/m2.txt"
ok $? "the termination is counted" "$LAB/m2.txt"

prom_stop
lab_down
! ip netns list | grep -q "^burst-lab$$-"; ok $? "nothing is left after teardown"
done_testing

#!/usr/bin/env python3
"""ec2_faults.py - a fake EC2 Query API endpoint (and instance metadata
service) that answers in EC2's XML wire format from a script, for
tests/integration/test_ec2_faults.sh. Python standard library only.

    ec2_faults.py [--bind ADDR] [--buckets default|JSON] PORT_FILE [CERT KEY]
        listen on 127.0.0.1 (or ADDR: a lab's bridge, where its emulated
        instances reach the metadata service), a free port, written to
        PORT_FILE; with CERT and KEY (PEM files) speak https; --buckets:
        throttle as EC2 does (below)

EC2 (POST /, form body). Without a script it behaves like a small EC2:
RunInstances launches MaxCount instances (idempotent on ClientToken: the
same token with the same parameters returns the same reservation, with
other parameters IdempotentParameterMismatch), DescribeInstances (with
instance ids, filters tag:K, instance-state-name, client-token, and
MaxResults/NextToken paging by instance, its token a place in the launch
order that terminations between pages do not move), TerminateInstances, CreateTags,
DescribeInstanceTypes. As in EC2, an instance belongs to one region (its
RunInstances' SigV4 credential scope): DescribeInstances, TerminateInstances
and CreateTags see only the instances of the request's region, and a
ClientToken is one region's. It does not check signatures, only that an
Authorization header is there.

Control (JSON):
  POST /_script   {"queue": [STEP...], "rules": [RULE...], "imds_expiration": ISO,
                   "page_cap": N}
      page_cap: a DescribeInstances page holds at most N instances whatever
      its MaxResults (EC2 may answer fewer than MaxResults); kept until
      a reset
      STEP, used once, in order, by the next EC2 request:
        {"error": CODE, "message": M, "status": 400}  an EC2 error document
        {"status": 500, "body": "text"}               a raw answer
        {"commit": true, "error": ..., "status": 500} do the work, then fail
        {"limit": N}         RunInstances launches at most N (partial launch)
        {"reverse": true}    RunInstances lists its instances last launch index first
        {"sleep": SECONDS}   answer late (then normally)
        {"error": ..., "echo_token": true}  the message repeats X-Amz-Security-Token
      RULE, used for every request whose parameters match:
        {"match": {"InstanceType": "g5.48xlarge"}, "error": CODE, "status": 500}
        with "times": N only for the first N such requests; with "commit": true
        the work is done before the error is answered
  GET /_requests  every EC2 request so far: {"action", "params", "has_auth",
                  "security_token"}
  GET /_imds      {"fetches": how many times the role's credentials were read,
                   "spot_polls": {CLIENT_ADDRESS: spot/instance-action GETs}}
  POST /_spot     {CLIENT_ADDRESS or "*": NOTICE or null}: what
                  spot/instance-action answers the instance at that address
                  (the metadata service is each instance's own; "*": any
                  other), NOTICE {"action": A, "time": T} (as EC2 gives it)
                  or {"status": S, "body": B, "sleep": SECONDS} (raw, late);
                  null: no notice (404) again
  POST /_reset    forget instances, requests, script, notices (not the buckets'
                  configuration: their tokens are full again)
  POST /_buckets  {"default": true} EC2's documented buckets (EC2_BUCKETS), or
                  {"buckets": {NAME: [SIZE, RATE] or null}, "actions": {ACTION:
                  [REQUEST_BUCKET, RESOURCE_BUCKET or null]}} on top of them, or
                  {"off": true}; every bucket full again
  GET /_buckets   {"config": ..., "throttled": [{"region", "action", "bucket",
                  "t"}], "tokens": {REGION: {NAME: tokens now}}}
  GET /_runs      every RunInstances so far, small: [[REGION, T, MAXCOUNT,
                  THROTTLED]] (T: time.time())

Throttling (off until asked for: --buckets default|JSON at the start, or
POST /_buckets). As EC2 does, per region (the region of the request's
SigV4 credential scope), with token buckets: each request takes a token of
its action's request bucket, and RunInstances (MaxCount instances) and
TerminateInstances (one per instance id) as many of their resource bucket;
a request whose bucket cannot give them is answered RequestLimitExceeded
(HTTP 503) and takes nothing. A request an action has no bucket for is not
limited. Each request in /_requests also carries its region, its time
("t", time.time()) and whether it was throttled.

IMDSv2: PUT /latest/api/token (needs X-aws-ec2-metadata-token-ttl-seconds,
1-21600, and answers it back, as EC2 does), GET
/latest/meta-data/iam/security-credentials/[ROLE] and
/latest/meta-data/spot/instance-action (404 until a notice is set), both
needing the token (401 without). tests/integration/test_spot_notice.sh
checks this part with botocore's IMDS client and curl.
"""
import json
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
IMDS_TOKEN = "imds-token-0123456789"
ROLE = "burst-node-role"
# what EC2's metadata service answers for a path it does not have
NOT_FOUND = ('<?xml version="1.0" encoding="iso-8859-1"?>\n<!DOCTYPE html>\n<html>\n <head>\n'
             '  <title>404 - Not Found</title>\n </head>\n <body>\n  <h1>404 - Not Found</h1>\n'
             ' </body>\n</html>\n')

lock = threading.Lock()
state = {}

# EC2's documented buckets, per account and region: the EC2 API reference,
# "Request throttling for the Amazon EC2 API"
# (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html,
# tables "Request token bucket sizes and refill rates" and "Resource token
# bucket sizes and refill rates"; doc/SOURCES.md): [size, refill a second].
# Describe* share the non-mutating bucket; the other actions this fake
# answers are not limited unless configured.
EC2_BUCKETS = {
    "RunInstances": [5, 2],                  # requests
    "RunInstances.instances": [1000, 2],     # instances launched
    "TerminateInstances": [100, 5],          # requests
    "TerminateInstances.instances": [1000, 20],  # instances terminated
    "non-mutating": [100, 20],               # Describe* requests
}
EC2_ACTIONS = {
    "RunInstances": ["RunInstances", "RunInstances.instances"],
    "TerminateInstances": ["TerminateInstances", "TerminateInstances.instances"],
    "DescribeInstances": ["non-mutating", None],
    "DescribeInstanceTypes": ["non-mutating", None],
}
# the configuration in force (None: no throttling), and each region's
# buckets: {region: {name: [tokens, t]}}
limits = {"buckets": None, "actions": {}}
buckets = {}


def set_buckets(spec):
    """spec: "default", a dict as POST /_buckets takes, or {"off": true}."""
    if spec == "default":
        spec = {"default": True}
    buckets.clear()
    if spec.get("off"):
        limits["buckets"], limits["actions"] = None, {}
        return
    b = dict(EC2_BUCKETS) if spec.get("default", True) else {}
    a = dict(EC2_ACTIONS) if spec.get("default", True) else {}
    for name, v in spec.get("buckets", {}).items():
        if v is None:
            b.pop(name, None)
        elif (not isinstance(v, list) or len(v) != 2 or not all(isinstance(x, (int, float)) for x in v)
              or v[0] < 1 or v[1] <= 0):
            raise ValueError("bucket %s: want [SIZE >= 1, RATE > 0], not %r" % (name, v))
        else:
            b[name] = list(v)
    for action, v in spec.get("actions", {}).items():
        if v is None:
            a.pop(action, None)
        else:
            a[action] = list(v)
    for action, v in a.items():
        for name in v:
            if name is not None and name not in b:
                raise ValueError("action %s: no bucket %s" % (action, name))
    limits["buckets"], limits["actions"] = b, a


def tokens(region, name, now):
    size, rate = limits["buckets"][name]
    tb = buckets.setdefault(region, {}).setdefault(name, [float(size), now])
    tb[0] = min(float(size), tb[0] + (now - tb[1]) * rate)
    tb[1] = now
    return tb


def throttle(region, action, p, now):
    """The bucket that cannot give what this request takes, or None (then
    it has been taken)."""
    if limits["buckets"] is None or action not in limits["actions"]:
        return None
    req, res = limits["actions"][action]
    if action == "RunInstances":
        n = int(p.get("MaxCount", "1"))
    else:
        n = len(indexed(p, "InstanceId"))
    need = [(req, 1)] + ([(res, n)] if res else [])
    for name, k in need:
        if tokens(region, name, now)[0] + 1e-9 < k:
            return name
    for name, k in need:
        buckets[region][name][0] -= k
    return None


def region_of(auth):
    """The region of a SigV4 Authorization header's credential scope."""
    m = auth.split("Credential=", 1)
    parts = m[1].split(",", 1)[0].split("/") if len(m) == 2 else []
    return parts[2] if len(parts) >= 5 else "-"


def reset():
    state.clear()
    state.update(instances=[], reservations={}, tokens={}, requests=[],
                 queue=[], rules=[], seq=0, imds_expiration=None, imds_fetches=0,
                 spot={}, spot_polls={}, throttled=[], page_cap=None)
    buckets.clear()


def rid():
    state["seq"] += 1
    return "req-%08d" % state["seq"]


def error_xml(code, message, request_id):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>'
            "<Code>%s</Code><Message>%s</Message></Error></Errors>"
            "<RequestID>%s</RequestID></Response>"
            % (escape(code), escape(message), escape(request_id)))


def instance_xml(i):
    tags = "".join("<item><key>%s</key><value>%s</value></item>" % (escape(k), escape(v))
                   for k, v in i["tags"])
    return ("<item><instanceId>%s</instanceId><imageId>%s</imageId>"
            "<instanceState><code>%d</code><name>%s</name></instanceState>"
            "<instanceType>%s</instanceType><launchTime>%s</launchTime>"
            "<privateIpAddress>%s</privateIpAddress><clientToken>%s</clientToken>"
            "<amiLaunchIndex>%d</amiLaunchIndex><tagSet>%s</tagSet></item>"
            % (i["id"], escape(i["image"]),
               {"pending": 0, "running": 16, "terminated": 48}[i["state"]], i["state"],
               escape(i["type"]), i["launch"], i["ip"], escape(i["token"]), i["index"], tags))


def run_xml(res, request_id, reverse=False):
    insts = list(reversed(res["instances"])) if reverse else res["instances"]
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<RunInstancesResponse xmlns="%s">'
            "<requestId>%s</requestId><reservationId>%s</reservationId>"
            "<ownerId>123456789012</ownerId><groupSet/><instancesSet>%s</instancesSet>"
            "</RunInstancesResponse>"
            % (NS, request_id, res["id"], "".join(instance_xml(i) for i in insts)))


def describe_xml(instances, next_token, request_id):
    items = "".join("<item><reservationId>%s</reservationId><ownerId>123456789012</ownerId>"
                    "<groupSet/><instancesSet>%s</instancesSet></item>"
                    % (i["reservation"], instance_xml(i)) for i in instances)
    nt = "<nextToken>%s</nextToken>" % next_token if next_token else ""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<DescribeInstancesResponse xmlns="%s">'
            "<requestId>%s</requestId><reservationSet>%s</reservationSet>%s"
            "</DescribeInstancesResponse>" % (NS, request_id, items, nt))


def simple_xml(action, request_id, inner=""):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<%sResponse xmlns="%s">'
            "<requestId>%s</requestId>%s</%sResponse>" % (action, NS, request_id, inner, action))


def terminate_xml(ids, request_id):
    items = "".join("<item><instanceId>%s</instanceId><currentState><code>32</code>"
                    "<name>shutting-down</name></currentState><previousState><code>16</code>"
                    "<name>running</name></previousState></item>" % i for i in ids)
    return simple_xml("TerminateInstances", request_id,
                      "<instancesSet>%s</instancesSet>" % items)


TYPES = [("g5.12xlarge", 48, 196608, ("A10G", "NVIDIA", 4, 24576), "40 Gigabit", True),
         ("t3.micro", 2, 1024, None, "Up to 5 Gigabit", False),
         ("p4d.24xlarge", 96, 1179648, ("A100", "NVIDIA", 8, 40960), "4x 100 Gigabit", True)]


def types_xml(names, next_token, request_id):
    items = []
    for name, vcpus, mem, gpu, net, efa in TYPES:
        if names and name not in names:
            continue
        g = ""
        if gpu:
            g = ("<gpuInfo><gpus><item><name>%s</name><manufacturer>%s</manufacturer>"
                 "<count>%d</count><memoryInfo><sizeInMiB>%d</sizeInMiB></memoryInfo></item>"
                 "</gpus><totalGpuMemoryInMiB>%d</totalGpuMemoryInMiB></gpuInfo>"
                 % (gpu[0], gpu[1], gpu[2], gpu[3], gpu[2] * gpu[3]))
        items.append("<item><instanceType>%s</instanceType><vCpuInfo><defaultVCpus>%d"
                     "</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>%d</sizeInMiB>"
                     "</memoryInfo><networkInfo><networkPerformance>%s</networkPerformance>"
                     "<efaSupported>%s</efaSupported></networkInfo>%s</item>"
                     % (name, vcpus, mem, net, "true" if efa else "false", g))
    nt = "<nextToken>%s</nextToken>" % next_token if next_token else ""
    return simple_xml("DescribeInstanceTypes", request_id,
                      "<instanceTypeSet>%s</instanceTypeSet>%s" % ("".join(items), nt))


def indexed(params, prefix):
    """Values of PREFIX.1, PREFIX.2, ... in order."""
    out, n = [], 1
    while "%s.%d" % (prefix, n) in params:
        out.append(params["%s.%d" % (prefix, n)])
        n += 1
    return out


def do_run(p, limit, reverse=False, region="-"):
    token = p.get("ClientToken", "")
    key = {k: v for k, v in p.items() if k not in ("Action", "Version")}
    if token and (region, token) in state["tokens"]:
        old_key, res = state["tokens"][(region, token)]
        if old_key != key:
            return 400, error_xml("IdempotentParameterMismatch",
                                  "Arguments on this idempotent request are inconsistent "
                                  "with arguments used in previous request(s).", rid())
        return 200, run_xml(res, rid(), reverse)
    n = int(p.get("MaxCount", "1"))
    if limit is not None:
        n = min(n, limit)
    if n < int(p.get("MinCount", "1")):
        return 500, error_xml("InsufficientInstanceCapacity",
                              "We currently do not have sufficient capacity.", rid())
    tags, k = [], 1
    while "TagSpecification.1.Tag.%d.Key" % k in p:
        tags.append((p["TagSpecification.1.Tag.%d.Key" % k],
                     p.get("TagSpecification.1.Tag.%d.Value" % k, "")))
        k += 1
    res = {"id": "r-%017x" % (len(state["reservations"]) + 1), "instances": []}
    for index in range(n):
        num = len(state["instances"]) + 1
        inst = {"id": "i-%017x" % num, "image": p.get("ImageId", ""),
                "type": p.get("InstanceType", ""), "state": "pending",
                "launch": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                "ip": "10.9.%d.%d" % (num // 250, num % 250 + 1), "token": token,
                "tags": list(tags), "reservation": res["id"], "index": index, "region": region}
        state["instances"].append(inst)
        res["instances"].append(inst)
    state["reservations"][res["id"]] = res
    if token:
        state["tokens"][(region, token)] = (key, res)
    return 200, run_xml(res, rid(), reverse)


def by_id(ids, region="-"):
    """The instances of these ids that exist in region (an id is i-<its
    number>: found without a scan, as a burst tags thousands one call each)."""
    out = []
    for x in ids:
        try:
            num = int(x[2:], 16) if x.startswith("i-") else 0
        except ValueError:
            num = 0
        if 0 < num <= len(state["instances"]) and state["instances"][num - 1]["id"] == x \
                and state["instances"][num - 1]["region"] == region:
            out.append(state["instances"][num - 1])
    return out


def matches(inst, filters, ids, region="-"):
    if inst["region"] != region:
        return False
    if ids and inst["id"] not in ids:
        return False
    for name, values in filters:
        if name.startswith("tag:"):
            if not any(k == name[4:] and v in values for k, v in inst["tags"]):
                return False
        elif name == "instance-state-name":
            if inst["state"] not in values:
                return False
        elif name == "client-token":
            if inst["token"] not in values:
                return False
    return True


def do_describe(p, region="-"):
    ids = indexed(p, "InstanceId")
    filters, n = [], 1
    while "Filter.%d.Name" % n in p:
        filters.append((p["Filter.%d.Name" % n], indexed(p, "Filter.%d.Value" % n)))
        n += 1
    insts = state["instances"]
    if ids and not any(matches(i, filters, ids, region) for i in insts):
        return 400, error_xml("InvalidInstanceID.NotFound",
                              "The instance ID '%s' does not exist" % ids[0], rid())
    # NextToken is where the scan stops in the launch order of every
    # instance, not a count of the matching ones: an instance terminated
    # between two pages (leaving the instance-state-name filter's set)
    # does not shift the next page over one that is still live
    start = int(p.get("NextToken", "0"))
    size = int(p.get("MaxResults", "1000"))
    if state["page_cap"]:
        size = min(size, int(state["page_cap"]))
    page, at = [], start
    while at < len(insts) and len(page) < size:
        if matches(insts[at], filters, ids, region):
            page.append(insts[at])
        at += 1
    more = any(matches(i, filters, ids, region) for i in insts[at:])
    return 200, describe_xml(page, str(at) if more else None, rid())


def ec2(p, step, region="-"):
    action = p.get("Action", "")
    if action == "RunInstances":
        return do_run(p, step.get("limit"), step.get("reverse", False), region)
    if action == "DescribeInstances":
        return do_describe(p, region)
    if action == "TerminateInstances":
        ids = indexed(p, "InstanceId")
        for i in by_id(ids, region):
            i["state"] = "terminated"
        return 200, terminate_xml(ids, rid())
    if action == "CreateTags":
        ids = indexed(p, "ResourceId")
        n = 1
        while "Tag.%d.Key" % n in p:
            for i in by_id(ids, region):
                i["tags"] = [t for t in i["tags"] if t[0] != p["Tag.%d.Key" % n]]
                i["tags"].append((p["Tag.%d.Key" % n], p.get("Tag.%d.Value" % n, "")))
            n += 1
        return 200, simple_xml("CreateTags", rid(), "<return>true</return>")
    if action == "DescribeInstanceTypes":
        names = indexed(p, "InstanceType")
        # pages of 2, so the client has to follow nextToken
        all_types = [t for t in TYPES if not names or t[0] in names]
        start = int(p.get("NextToken", "0"))
        page = [t[0] for t in all_types[start:start + 2]]
        nxt = str(start + 2) if start + 2 < len(all_types) else None
        return 200, types_xml(page, nxt, rid())
    return 400, error_xml("InvalidAction", "The action %s is not valid" % action, rid())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # the headers and the body go in two writes: without TCP_NODELAY the
        # body waits for the client's delayed ACK (40 ms an answer on
        # Linux), which EC2 does not make its clients wait
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        sys.stderr.write("ec2_faults: " + fmt % args + "\n")

    def answer(self, status, body, ctype="text/xml;charset=UTF-8"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(n) if n else b""

    def answer_ttl(self, ttl):
        data = IMDS_TOKEN.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("X-aws-ec2-metadata-token-ttl-seconds", str(ttl))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        self.body()
        ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds", "")
        if self.path == "/latest/api/token" and ttl.isdigit() and 1 <= int(ttl) <= 21600:
            return self.answer_ttl(int(ttl))
        return self.answer(400, "bad token request", "text/plain")

    def spot_notice(self):
        """spot/instance-action, as the instance at the client's address sees it"""
        who = self.client_address[0]
        with lock:
            state["spot_polls"][who] = state["spot_polls"].get(who, 0) + 1
            n = state["spot"].get(who, state["spot"].get("*"))
        if n is None:
            return self.answer(404, NOT_FOUND, "text/html")
        if "action" in n:
            return self.answer(200, json.dumps({"action": n["action"], "time": n["time"]}), "text/plain")
        if n.get("sleep"):
            time.sleep(n["sleep"])
        return self.answer(n.get("status", 200), n.get("body", ""), "text/plain")

    def do_GET(self):
        if self.path == "/_requests":
            with lock:
                return self.answer(200, json.dumps(state["requests"]), "application/json")
        if self.path == "/_runs":
            with lock:
                runs = [[q["region"], q["t"], int(q["params"].get("MaxCount", "1")), q["throttled"]]
                        for q in state["requests"] if q["action"] == "RunInstances"]
            return self.answer(200, json.dumps(runs), "application/json")
        if self.path == "/_buckets":
            with lock:
                now = time.monotonic()
                toks = {r: {n: tokens(r, n, now)[0] for n in b} for r, b in buckets.items()}
                return self.answer(200, json.dumps({"config": limits, "throttled": state["throttled"],
                                                    "tokens": toks}), "application/json")
        if self.path == "/_imds":
            with lock:
                return self.answer(200, json.dumps({"fetches": state["imds_fetches"],
                                                    "spot_polls": state["spot_polls"]}),
                                   "application/json")
        if self.path.startswith("/latest/"):
            if self.headers.get("X-aws-ec2-metadata-token") != IMDS_TOKEN:
                return self.answer(401, "", "text/plain")
            if self.path == "/latest/meta-data/spot/instance-action":
                return self.spot_notice()
        base = "/latest/meta-data/iam/security-credentials/"
        if self.path.startswith(base):
            if self.headers.get("X-aws-ec2-metadata-token") != IMDS_TOKEN:
                return self.answer(401, "", "text/plain")
            if self.path == base:
                # the role's name alone, as EC2 answers (botocore takes the
                # whole body as the name: imds_botocore_check.py)
                return self.answer(200, ROLE, "text/plain")
            if self.path == base + ROLE:
                with lock:
                    state["imds_fetches"] += 1
                    exp = state["imds_expiration"] or time.strftime(
                        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 6 * 3600))
                doc = {"Code": "Success", "LastUpdated": "2026-01-01T00:00:00Z",
                       "Type": "AWS-HMAC", "AccessKeyId": "ASIAIMDSEXAMPLE",
                       "SecretAccessKey": "imdsSecretKeyExample", "Token": "imdsSessionToken",
                       "Expiration": exp}
                return self.answer(200, json.dumps(doc), "text/plain")
        return self.answer(404, "not found", "text/plain")

    def do_POST(self):
        raw = self.body()
        if self.path == "/_script":
            s = json.loads(raw or b"{}")
            with lock:
                state["queue"] = list(s.get("queue", []))
                state["rules"] = list(s.get("rules", []))
                if "imds_expiration" in s:
                    state["imds_expiration"] = s["imds_expiration"]
                if "page_cap" in s:
                    state["page_cap"] = s["page_cap"]
            return self.answer(200, "{}", "application/json")
        if self.path == "/_buckets":
            try:
                with lock:
                    set_buckets(json.loads(raw or b"{}"))
            except (ValueError, TypeError, AttributeError) as e:
                return self.answer(400, json.dumps({"error": str(e)}), "application/json")
            return self.answer(200, "{}", "application/json")
        if self.path == "/_spot":
            s = json.loads(raw or b"{}")
            with lock:
                for who, n in s.items():
                    if n is None:
                        state["spot"].pop(who, None)
                    else:
                        state["spot"][who] = n
            return self.answer(200, "{}", "application/json")
        if self.path == "/_reset":
            with lock:
                reset()
            return self.answer(200, "{}", "application/json")
        p = dict(urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True))
        region = region_of(self.headers.get("Authorization", ""))
        with lock:
            state["requests"].append({
                "action": p.get("Action"), "params": p, "region": region, "t": time.time(),
                "throttled": False,
                "has_auth": self.headers.get("Authorization", "").startswith(
                    "AWS4-HMAC-SHA256 Credential="),
                "content_type": self.headers.get("Content-Type"),
                "security_token": self.headers.get("X-Amz-Security-Token")})
            step = state["queue"].pop(0) if state["queue"] else {}
            rule = next((r for r in state["rules"] if r.get("times", 1) > 0
                         and all(p.get(k) == v for k, v in r["match"].items())), None)
            if rule and "times" in rule:
                rule["times"] -= 1
        if step.get("sleep"):
            time.sleep(step["sleep"])
        with lock:
            if rule:
                if rule.get("commit"):
                    ec2(p, {}, region)
                return self.answer(rule.get("status", 400), error_xml(
                    rule["error"], rule.get("message", rule["error"]), rid()))
            if "body" in step:
                return self.answer(step.get("status", 500), step["body"], "text/plain")
            if "error" in step:
                if step.get("commit"):
                    ec2(p, {}, region)
                msg = step.get("message", step["error"])
                if step.get("echo_token"):
                    msg += " token=%s" % self.headers.get("X-Amz-Security-Token")
                return self.answer(step.get("status", 400),
                                   error_xml(step["error"], msg, rid()))
            bucket = throttle(region, p.get("Action", ""), p, time.monotonic())
            if bucket:
                # as EC2 answers it: 503 RequestLimitExceeded
                state["requests"][-1]["throttled"] = True
                state["throttled"].append({"region": region, "action": p.get("Action"),
                                           "bucket": bucket, "t": time.time()})
                return self.answer(503, error_xml("RequestLimitExceeded", "Request limit exceeded.", rid()))
            status, body = ec2(p, step, region)
        return self.answer(status, body)


def main():
    reset()
    args = sys.argv[1:]
    bind = "127.0.0.1"
    while args[:1] in (["--bind"], ["--buckets"]):
        if args[0] == "--bind":
            bind = args[1]
        else:
            set_buckets("default" if args[1] == "default" else json.loads(args[1]))
        args = args[2:]
    srv = ThreadingHTTPServer((bind, 0), Handler)
    if len(args) > 2:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args[1], args[2])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(args[0] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(args[0] + ".tmp", args[0])
    srv.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""gce_fake.py - a fake Google Compute Engine (compute v1 REST), OAuth 2.0
token endpoint and GCE metadata server, for the gcp driver's tests (no
emulator of Compute Engine exists). Python 3's standard library, and
python3-cryptography (a Debian package: tools/deps.sh) to verify the JWTs.
Its answers are checked by Google's own Node.js client
(tests/integration/gce_client_check.js) and by the compute v1 schema that
client ships (gce_schema_check.js, over the log written here).

    gce_fake.py serve --port-file F [--bind ADDR] [--key KEY.json ...]
                      [--project P] [--log LOG.jsonl] [--window S]
                      [--quota GROUP=N,...] [--boot-delay S] [--op-delay S]
                      [--wait-max S] [--delete-delay S] [--ip-base A.B.C.D]
                      [--capacity ZONE[/TYPE]=N,...] [--cpu-quota REGION=N,...]
                      [--zones R=Z1+Z2,...] [--token-life S]
    gce_fake.py make-key --out KEY.json --token-uri URL [--project P]
        writes a service-account key file (a new RSA key, mode 0600) as
        Google's console does; the server trusts the keys given by --key

Compute (under /compute/v1/projects/PROJECT/, a Bearer token the token
endpoint or the metadata server issued, unexpired, else 401 as Google
answers it):
  POST zones/Z/instances/bulkInsert, regions/R/instances/bulkInsert
       (?requestId=UUID: the same id within an hour answers the same
       operation): count, minCount, perInstanceProperties (the names),
       instanceProperties or sourceInstanceTemplate, locationPolicy
       (zones ALLOW/DENY). One operation (operationType bulkInsert) with an
       operationGroupId, DONE after --op-delay seconds, then with
       instancesBulkInsertOperationMetadata.perLocationStatus; one zonal
       insert operation per VM in its group (a VM that could not be made:
       its operation's error). Capacity (--capacity, per zone or zone and
       machine type): VMs beyond it are not made (ZONE_RESOURCE_POOL_EXHAUSTED);
       fewer than minCount possible: none is made. CPU quota (--cpu-quota,
       per region, vCPUs from the machine type's name): over it, none is made
       (QUOTA_EXCEEDED, quota CPUS). A name in use: none is made.
  GET  zones/Z/operations/OP, regions/R/operations/OP
  POST .../operations/OP/wait   answers at DONE or after --wait-max seconds
  GET  aggregated/operations?filter=   (operationType, operationGroupId, name,
       status, zone)
  GET  aggregated/instances?filter=&maxResults=&pageToken=, zones/Z/instances
  GET  zones/Z/instances/NAME, DELETE it (an operation; the VM STOPPING,
       then gone after --delete-delay), POST .../setMetadata (fingerprint
       checked: 412 when stale), GET .../serialPort?port=1
  GET  aggregated/machineTypes, zones/Z/machineTypes, aggregated/acceleratorTypes
       (the aggregated lists in pages: maxResults, page_size, pageToken)
  Filters: "FIELD = VALUE", "FIELD != VALUE", "FIELD eq VALUE" joined by AND or
  by juxtaposition, each maybe in parentheses; FIELD a dotted path
  (labels.burst-cluster, name, status, ...); VALUE maybe quoted.
  A VM is PROVISIONING, STAGING, then RUNNING --boot-delay seconds after it
  was made (its address from --ip-base on, or as /_fake/vm sets it).

Rate quotas (--quota GROUP=N: N requests per window of --window seconds,
60 as Compute Engine's per-minute quotas; refilled whole at each window's
start, the windows synchronized to the clock as Google's are: a window
starts when the time of day is a multiple of --window): groups read (a GET of one
resource), list (a list or aggregated list), opread (an operation's get or
wait), mutate (POST, DELETE: a bulk insert is one request). Over its
group's quota a request is answered 403 rateLimitExceeded, as Google does.

OAuth: POST /token (grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer,
assertion=JWT): the JWT's RS256 signature verified against the key of its
kid (or any --key), its iss that key's client_email, its aud this
endpoint's URL or Google's (https://oauth2.googleapis.com/token), exp within the hour, a scope: {"access_token",
"expires_in", "token_type": "Bearer"}; else 400 invalid_grant.
Metadata server (Metadata-Flavor: Google needed, and answered):
  GET /computeMetadata/v1/instance/service-accounts/default/token
  GET /computeMetadata/v1/project/project-id
  GET /computeMetadata/v1/instance/attributes/KEY, instance/preempted,
      instance/name, instance/id, instance/zone: the VM whose networkIP is
      the client's address (?wait_for_change=true waits up to 30 s)

Control (JSON; no token):
  GET  /_fake/log        every request so far (also written to --log)
  GET  /_fake/state      {"vms": [...], "throttled": [...], "tokens": N, "windows": ...}
  POST /_fake/config     {"capacity": {...}, "cpu_quota": {...}, "quota": {...},
                          "boot_delay": S, "op_delay": S, "wait_max": S,
                          "delete_delay": S, "page_size": N (a listing's pages hold
                          at most N: Compute Engine may answer fewer than maxResults),
                          "fail": [{"match": {"method", "path"
                          (a regular expression)}, "status": N, "reason": R,
                          "message": M, "times": N}], "echo_assertion":
                          true (a refused JWT is quoted back in error_description,
                          as a careless endpoint might)}
  POST /_fake/vm         {"name": N, "ip": A, "status": S, "preempted": true,
                          "serial": TEXT, "delete": true}: change a VM as Google
                          would (preempted: the metadata server says TRUE; delete:
                          gone, as a spot VM is after preemption)
"""
import argparse
import base64
import hashlib
import json
import os
import random
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Condition()
T0 = time.time()
ARGS = None
KEYS = {}           # kid -> (client_email, public key)
TOKENS = {}         # access token -> expiry
VMS = {}            # name -> vm dict (the API's Instance, plus "_" private fields)
OPS = {}            # name -> operation dict (+ "_scope", "_done_at", "_then")
REQUEST_IDS = {}    # requestId -> (op name, time)
LOG = []
THROTTLED = []
USED = {}           # (group, window) -> requests
CONFIG = {}
FAILS = []
NEXT_ID = [4100000000000000000]
NEXT_IP = [0]
LOGF = None
SERIAL = {}         # name -> console text
NEXT_OP = [0]
# the aud Google's token endpoint takes (and Google's libraries sign): the
# fake takes it too, beside its own URL (the key file's token_uri)
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"

# vCPUs and memory of the machine types the fake knows (its catalog answers
# and the CPU quota); other "FAMILY-KIND-N" names count N vCPUs
MACHINE_TYPES = {
    "e2-standard-2": (2, 8192), "e2-standard-4": (4, 16384), "e2-standard-8": (8, 32768),
    "n2-standard-2": (2, 8192), "n2-standard-4": (4, 16384), "n2-standard-8": (8, 32768),
    "n2-highmem-8": (8, 65536), "c2-standard-8": (8, 32768), "c3-standard-8": (8, 32768),
    "a2-highgpu-1g": (12, 87040), "g2-standard-4": (4, 16384),
    "n4-standard-2": (2, 8192), "t2a-standard-1": (1, 4096),
}
ACCELERATORS = {"nvidia-tesla-a100": "NVIDIA A100 40GB", "nvidia-l4": "NVIDIA L4"}


def now():
    return time.time()


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03d-00:00" % int((t % 1) * 1000)


def vcpus(mt):
    if mt in MACHINE_TYPES:
        return MACHINE_TYPES[mt][0]
    m = re.search(r"-(\d+)(g)?$", mt or "")
    return int(m.group(1)) if m else 1


def region_of(zone):
    return zone.rsplit("-", 1)[0]


def zones_of(region):
    z = CONFIG["zones"].get(region)
    return z if z else [region + "-a", region + "-b", region + "-c"]


def base_url(host):
    return "https://www.googleapis.com/compute/v1/projects/%s" % ARGS.project


def new_id():
    with LOCK:
        NEXT_ID[0] += random.randint(1, 999)
        return str(NEXT_ID[0])


def fingerprint():
    return base64.b64encode(os.urandom(8)).decode()


def next_ip():
    a = [int(x) for x in ARGS.ip_base.split(".")]
    n = (a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3]) + NEXT_IP[0]
    NEXT_IP[0] += 1
    return "%d.%d.%d.%d" % (n >> 24 & 255, n >> 16 & 255, n >> 8 & 255, n & 255)


# ---- errors as Google writes them ----

def api_error(status, reason, message, domain="global"):
    st = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION", 429: "RESOURCE_EXHAUSTED",
          500: "INTERNAL", 503: "UNAVAILABLE"}.get(status, "UNKNOWN")
    if reason == "rateLimitExceeded":
        st = "RESOURCE_EXHAUSTED"
    return status, {"error": {"code": status, "message": message,
                              "errors": [{"message": message, "domain": domain, "reason": reason}],
                              "status": st}}


# ---- tokens ----

def b64url_dec(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def verify_jwt(assertion, token_url):
    """The claims of a good assertion, or raise ValueError(why)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    from cryptography.exceptions import InvalidSignature
    parts = assertion.split(".")
    if len(parts) != 3:
        raise ValueError("not a JWT")
    head = json.loads(b64url_dec(parts[0]))
    claims = json.loads(b64url_dec(parts[1]))
    sig = b64url_dec(parts[2])
    if head.get("alg") != "RS256":
        raise ValueError("alg %r is not RS256" % head.get("alg"))
    cands = [KEYS[head["kid"]]] if head.get("kid") in KEYS else list(KEYS.values())
    signed = (parts[0] + "." + parts[1]).encode()
    who = None
    for email, pub in cands:
        try:
            pub.verify(sig, signed, padding.PKCS1v15(), hashes.SHA256())
            who = email
            break
        except InvalidSignature:
            continue
    if who is None:
        raise ValueError("Invalid JWT Signature.")
    if claims.get("iss") != who:
        raise ValueError("Invalid JWT: iss %r is not the key's account" % claims.get("iss"))
    if claims.get("aud") not in (token_url, GOOGLE_TOKEN_URI):
        raise ValueError("Invalid JWT: aud %r is neither %s nor %s" % (claims.get("aud"), token_url, GOOGLE_TOKEN_URI))
    t = now()
    if not isinstance(claims.get("exp"), int) or not isinstance(claims.get("iat"), int):
        raise ValueError("Invalid JWT: iat and exp must be integers")
    if claims["exp"] < t - 5 or claims["iat"] > t + 60 or claims["exp"] - claims["iat"] > 3600:
        raise ValueError("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe")
    if not claims.get("scope"):
        raise ValueError("Invalid JWT: no scope")
    return claims


def issue_token():
    tok = "ya29.fake-" + base64.urlsafe_b64encode(os.urandom(24)).decode().rstrip("=")
    with LOCK:
        TOKENS[tok] = now() + ARGS.token_life
    return tok


# ---- rate quotas ----

def quota_group(method, path):
    if method in ("POST", "DELETE"):
        return "opread" if path.endswith("/wait") else "mutate"
    if "/operations" in path:
        return "opread"
    if path.startswith("aggregated/") or re.search(r"/(instances|machineTypes|acceleratorTypes|operations)$", path):
        return "list"
    return "read"


def window():
    return int(now() // CONFIG["window"])


def take_quota(group, path):
    """True when the request may go on (LOCK held)."""
    lim = CONFIG["quota"].get(group)
    if lim is None:
        return True
    w = window()
    k = (group, w)
    if USED.get(k, 0) >= lim:
        THROTTLED.append({"group": group, "window": w, "t": now(), "path": path})
        return False
    USED[k] = USED.get(k, 0) + 1
    return True


# ---- filters ----

def parse_filter(f):
    """[(path, op, value)] of a compute filter expression."""
    out = []
    if not f:
        return out
    for m in re.finditer(r'\(?\s*([A-Za-z_][\w.\-]*)\s*(!=|=|eq|ne)\s*("(?:[^"\\]|\\.)*"|[^\s)]+)\s*\)?', f):
        v = m.group(3)
        if v.startswith('"'):
            v = v[1:-1].replace('\\"', '"')
        out.append((m.group(1), m.group(2), v))
    rest = re.sub(r'\(?\s*([A-Za-z_][\w.\-]*)\s*(!=|=|eq|ne)\s*("(?:[^"\\]|\\.)*"|[^\s)]+)\s*\)?', "", f)
    if rest.replace("AND", "").strip():
        raise ValueError("Invalid value for field 'filter': '%s'. Invalid list filter expression." % f)
    return out


def field(obj, path):
    for p in path.split("."):
        if not isinstance(obj, dict) or p not in obj:
            return None
        obj = obj[p]
    return obj


def matches(obj, flt):
    for path, op, v in flt:
        got = field(obj, path)
        got = "" if got is None else str(got)
        if op in ("eq", "ne"):
            eq = re.fullmatch(v, got) is not None
        else:
            eq = got == v or (path in ("zone", "region") and got.rsplit("/", 1)[-1] == v)
        if eq != (op in ("=", "eq")):
            return False
    return True


# ---- operations ----

def make_op(scope_kind, scope, op_type, target, group=None, user=None):
    NEXT_OP[0] += 1
    name = "operation-%d-%s" % (int(now() * 1000), hashlib.sha1(os.urandom(8)).hexdigest()[:12])
    t = now()
    op = {"kind": "compute#operation", "id": new_id(), "name": name, "operationType": op_type,
          "targetLink": target, "targetId": new_id(), "status": "PENDING", "user": user or "burst@fake",
          "progress": 0, "insertTime": rfc3339(t), "startTime": rfc3339(t),
          "selfLink": "%s/%s/%s/operations/%s" % (base_url(None), scope_kind, scope, name)}
    op[scope_kind[:-1]] = "%s/%s/%s" % (base_url(None), scope_kind, scope)
    if group:
        op["operationGroupId"] = group
    op["_done_at"] = t
    op["_then"] = None
    OPS[name] = op
    return op


def settle(op):
    """An operation past its time is DONE (LOCK held)."""
    if op["status"] != "DONE" and now() >= op["_done_at"]:
        if op["_then"]:
            op["_then"](op)
        op["status"] = "DONE"
        op["progress"] = 100
        op["endTime"] = rfc3339(now())
        LOCK.notify_all()


def op_view(op):
    settle(op)
    return {k: v for k, v in op.items() if not k.startswith("_")}


def op_error(op, errors, http=None):
    op["error"] = {"errors": errors}
    if http:
        op["httpErrorStatusCode"] = http
        op["httpErrorMessage"] = {400: "BAD REQUEST", 403: "FORBIDDEN", 409: "CONFLICT",
                                  503: "SERVICE UNAVAILABLE"}.get(http, "ERROR")


# ---- VMs ----

def vm_status(vm):
    if vm["_deleting"] is not None:
        return "STOPPING"
    if vm["_status"]:
        return vm["_status"]
    age = now() - vm["_made"]
    if age >= CONFIG["boot_delay"]:
        return "RUNNING"
    return "STAGING" if age >= CONFIG["boot_delay"] / 2 else "PROVISIONING"


def reap():
    """VMs past their deletion are gone (LOCK held)."""
    for n in [n for n, v in VMS.items() if v["_deleting"] is not None and now() >= v["_deleting"]]:
        del VMS[n]


def vm_view(vm):
    v = {k: val for k, val in vm.items() if not k.startswith("_")}
    v["status"] = vm_status(vm)
    if v["status"] == "RUNNING" and "lastStartTimestamp" not in v:
        v["lastStartTimestamp"] = rfc3339(vm["_made"] + CONFIG["boot_delay"])
    return v


def in_use(zone, mt):
    return sum(1 for v in VMS.values() if v["_zone"] == zone and (mt is None or v["_mt"] == mt))


def room(zone, mt):
    """VMs of type mt zone can still take (None: no limit)."""
    caps = CONFIG["capacity"]
    lims = []
    if zone + "/" + mt in caps:
        lims.append(caps[zone + "/" + mt] - in_use(zone, mt))
    if zone in caps:
        lims.append(caps[zone] - in_use(zone, None))
    return max(0, min(lims)) if lims else None


def cpus_used(region):
    return sum(vcpus(v["_mt"]) for v in VMS.values() if region_of(v["_zone"]) == region)


def new_vm(name, zone, props, user_labels):
    t = now()
    mt = props.get("machineType", "")
    meta = props.get("metadata", {}) or {}
    nic_in = (props.get("networkInterfaces") or [{}])[0]
    net = nic_in.get("network", "global/networks/default")
    vm = {"kind": "compute#instance", "id": new_id(), "name": name,
          "creationTimestamp": rfc3339(t),
          "zone": "%s/zones/%s" % (base_url(None), zone),
          "machineType": "%s/zones/%s/machineTypes/%s" % (base_url(None), zone, mt),
          "status": "PROVISIONING",
          "labels": dict(props.get("labels") or {}), "labelFingerprint": fingerprint(),
          "metadata": {"kind": "compute#metadata", "fingerprint": fingerprint(),
                       "items": list(meta.get("items") or [])},
          "networkInterfaces": [{"kind": "compute#networkInterface", "name": "nic0",
                                 "network": net if net.startswith("http") else "%s/%s" % (base_url(None), net.split("projects/%s/" % ARGS.project)[-1]),
                                 "networkIP": next_ip(), "stackType": "IPV4_ONLY"}],
          "disks": [{"kind": "compute#attachedDisk", "type": "PERSISTENT", "mode": "READ_WRITE", "boot": True,
                     "autoDelete": True, "deviceName": "persistent-disk-0", "index": 0,
                     "source": "%s/zones/%s/disks/%s" % (base_url(None), zone, name)}],
          "scheduling": dict(props.get("scheduling") or {"provisioningModel": "STANDARD",
                                                         "automaticRestart": True,
                                                         "onHostMaintenance": "MIGRATE"}),
          "tags": {"items": list((props.get("tags") or {}).get("items") or []), "fingerprint": fingerprint()},
          "cpuPlatform": "Intel Cascade Lake", "startRestricted": False, "deletionProtection": False,
          "selfLink": "%s/zones/%s/instances/%s" % (base_url(None), zone, name),
          "_zone": zone, "_mt": mt, "_made": t, "_deleting": None, "_status": None, "_preempted": False}
    if nic_in.get("subnetwork"):
        vm["networkInterfaces"][0]["subnetwork"] = nic_in["subnetwork"]
    if props.get("serviceAccounts"):
        vm["serviceAccounts"] = props["serviceAccounts"]
    vm["labels"].update(user_labels)
    VMS[name] = vm
    SERIAL[name] = "fake GCE: %s booting in %s\n" % (name, zone)
    return vm


def bulk_insert(scope_kind, scope, body, request_id):
    """(status, answer) of a bulkInsert (LOCK held)."""
    if request_id and request_id in REQUEST_IDS and now() - REQUEST_IDS[request_id][1] < 3600:
        return 200, op_view(OPS[REQUEST_IDS[request_id][0]])
    pip = body.get("perInstanceProperties") or {}
    count = int(body.get("count", len(pip) or 0))
    min_count = int(body.get("minCount", count))
    if pip and count != len(pip):
        return api_error(400, "invalid", "Invalid value for field 'resource.count': '%d'. The count must equal "
                         "the number of perInstanceProperties (%d)." % (count, len(pip)))
    if not pip or count < 1 or min_count < 1 or min_count > count:
        return api_error(400, "invalid", "Invalid value for field 'resource': bulkInsert needs count, "
                         "minCount <= count and perInstanceProperties here.")
    if body.get("sourceInstanceTemplate"):
        props = {"machineType": "e2-standard-2"}
    else:
        props = body.get("instanceProperties") or {}
        if not props.get("machineType"):
            return api_error(400, "required", "Required field 'resource.instanceProperties.machineType' not specified")
        if "/" in props["machineType"]:
            return api_error(400, "invalid", "Invalid value for field 'resource.instanceProperties.machineType': '%s'. "
                             "Machine type must be a name, not a URL." % props["machineType"])
    for n in pip:
        if not re.fullmatch(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", n):
            return api_error(400, "invalid", "Invalid value for field 'resource.perInstanceProperties': '%s'. "
                             "Must be a match of regex '[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?'" % n)
    mt = props["machineType"]
    if scope_kind == "zones":
        zones = [scope]
        region = region_of(scope)
    else:
        region = scope
        allow = [z.split("/")[-1] for z, p in ((body.get("locationPolicy") or {}).get("locations") or {}).items()
                 if (p or {}).get("preference", "ALLOW") == "ALLOW"]
        deny = [z.split("/")[-1] for z, p in ((body.get("locationPolicy") or {}).get("locations") or {}).items()
                if (p or {}).get("preference") == "DENY"]
        zones = [z for z in (allow or zones_of(region)) if z not in deny]
    group = "ogid-" + hashlib.sha1(os.urandom(8)).hexdigest()[:16]
    op = make_op(scope_kind, scope, "bulkInsert", "%s/%s/%s/instances/bulkInsert" % (base_url(None), scope_kind, scope),
                 group)
    op["_done_at"] = now() + CONFIG["op_delay"]
    if request_id:
        REQUEST_IDS[request_id] = (op["name"], now())
    names = list(pip)

    def then(op):
        # decided when it is done, as Google decides while it runs
        taken = [n for n in names if n in VMS]
        if taken:
            op_error(op, [{"code": "RESOURCE_ALREADY_EXISTS",
                           "message": "The resource '%s' already exists" % VMS[taken[0]]["selfLink"].split("/v1/")[-1]}], 409)
            return
        need = vcpus(mt) * min_count
        lim = CONFIG["cpu_quota"].get(region)
        if lim is not None and cpus_used(region) + need > lim:
            op_error(op, [{"code": "QUOTA_EXCEEDED",
                           "message": "Quota 'CPUS' exceeded.  Limit: %.1f in region %s." % (lim, region),
                           "errorDetails": [{"quotaInfo": {"metricName": "compute.googleapis.com/cpus",
                                                           "limitName": "CPUS-per-project-region",
                                                           "dimensions": {"region": region}, "limit": lim}}]}], 403)
            return
        plan = []
        left = list(names)
        for z in zones:
            r = room(z, mt)
            k = len(left) if r is None else min(r, len(left))
            if lim is not None:
                k = min(k, int((lim - cpus_used(region) - vcpus(mt) * len(plan)) // vcpus(mt)))
            plan += [(n, z) for n in left[:k]]
            left = left[k:]
            if not left:
                break
        if len(plan) < min_count:
            op_error(op, [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED",
                           "message": "The zone '%s' does not have enough resources available to fulfill the "
                                      "request.  Try a different zone, or try again later." %
                                      ("projects/%s/zones/%s" % (ARGS.project, zones[0] if zones else "?"))}], 503)
            locs = {"zones/" + z: {"status": "DONE", "targetVmCount": 0, "createdVmCount": 0,
                                   "failedToCreateVmCount": 0, "deletedVmCount": 0}
                    for z in zones}
            op["instancesBulkInsertOperationMetadata"] = {"perLocationStatus": locs}
            return
        per = {}
        for n, z in plan:
            vm = new_vm(n, z, props, {})
            per.setdefault(z, 0)
            per[z] += 1
            o = make_op("zones", z, "insert", vm["selfLink"], group)
            o["targetId"] = vm["id"]
            o["status"] = "DONE"
            o["progress"] = 100
            o["endTime"] = rfc3339(now())
        failed = {}
        for n in left:
            z = zones[-1] if zones else region + "-a"
            failed[z] = failed.get(z, 0) + 1
            o = make_op("zones", z, "insert", "%s/zones/%s/instances/%s" % (base_url(None), z, n), group)
            o["status"] = "DONE"
            o["progress"] = 100
            op_error(o, [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED",
                          "message": "The zone 'projects/%s/zones/%s' does not have enough resources available "
                                     "to fulfill the request.  Try a different zone, or try again later." %
                                     (ARGS.project, z)}], 503)
        op["instancesBulkInsertOperationMetadata"] = {"perLocationStatus": {
            "zones/" + z: {"status": "DONE", "targetVmCount": per.get(z, 0) + failed.get(z, 0),
                           "createdVmCount": per.get(z, 0), "failedToCreateVmCount": failed.get(z, 0),
                           "deletedVmCount": 0}
            for z in zones if z in per or z in failed}}
    op["_then"] = then
    settle(op)
    return 200, op_view(op)


# ---- the handler ----

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, obj, extra=None):
        body = obj if isinstance(obj, bytes) else (json.dumps(obj) if not isinstance(obj, str) else obj).encode()
        self.send_response(status)
        ctype = "application/json; charset=UTF-8" if not isinstance(obj, (str, bytes)) or \
            (isinstance(obj, str) and obj.startswith("{")) else "text/plain; charset=UTF-8"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self._answered = (status, obj)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def record(self, method, path, query, body, status, answer):
        e = {"t": round(now() - T0, 3), "project": ARGS.project, "method": method, "path": path, "query": query,
             "body": body, "status": status, "answer": answer,
             "user_agent": self.headers.get("User-Agent", ""),
             "x_goog_api_client": self.headers.get("x-goog-api-client", "")}
        with LOCK:
            LOG.append(e)
            if LOGF:
                LOGF.write(json.dumps(e) + "\n")
                LOGF.flush()

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_DELETE(self):
        self.route("DELETE")

    def route(self, method):
        u = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
        raw = self.read_body() if method in ("POST", "PUT") else b""
        self._answered = None
        try:
            if u.path.startswith("/_fake/"):
                return self.control(method, u.path, raw)
            if u.path == "/token":
                return self.token(raw)
            if u.path.startswith("/computeMetadata/"):
                return self.metadata(u.path, q)
            m = re.match(r"^/compute/v1/projects/([^/]+)/(.*)$", u.path)
            if not m:
                return self.answer(*api_error(404, "notFound", "The requested URL %s was not found on this server." % u.path))
            body = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    self.answer(*api_error(400, "parseError", "Invalid JSON payload received."))
                    return self.record(method, m.group(2), q, raw.decode(errors="replace"), 400, self._answered[1])
            self.compute(method, m.group(1), m.group(2), q, body)
            self.record(method, m.group(2), q, body, self._answered[0], self._answered[1])
        except BrokenPipeError:
            pass

    # -- OAuth --
    def token(self, raw):
        f = {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
        url = "http://%s/token" % self.headers.get("Host", "")
        if f.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return self.answer(400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type: %s"
                                     % f.get("grant_type", "")})
        try:
            verify_jwt(f.get("assertion", ""), url)
        except (ValueError, KeyError, json.JSONDecodeError) as e:
            why = str(e)
            if CONFIG.get("echo_assertion"):
                why += " (assertion " + f.get("assertion", "") + ")"
            return self.answer(400, {"error": "invalid_grant", "error_description": why})
        self.answer(200, {"access_token": issue_token(), "expires_in": ARGS.token_life, "token_type": "Bearer"})

    # -- the metadata server --
    def metadata(self, path, q):
        if self.headers.get("Metadata-Flavor") != "Google":
            return self.answer(403, "Missing required header: Metadata-Flavor")
        g = {"Metadata-Flavor": "Google"}
        p = path[len("/computeMetadata/v1/"):]
        if p == "instance/service-accounts/default/token":
            return self.answer(200, {"access_token": issue_token(), "expires_in": ARGS.token_life,
                                     "token_type": "Bearer"}, g)
        if p == "project/project-id":
            return self.answer(200, ARGS.project, g)
        if not p.startswith("instance/"):
            return self.answer(404, "not found", g)
        addr = self.client_address[0]
        deadline = now() + (30 if q.get("wait_for_change") == "true" else 0)
        with LOCK:
            while True:
                vm = next((v for v in VMS.values() if v["networkInterfaces"][0]["networkIP"] == addr), None)
                val = self.instance_value(vm, p[len("instance/"):])
                if val is not None or now() >= deadline:
                    break
                LOCK.wait(min(1.0, max(0.01, deadline - now())))
        if vm is None:
            return self.answer(404, "no VM has the address %s" % addr, g)
        if val is None:
            return self.answer(404, "not found", g)
        self.answer(200, val, g)

    def instance_value(self, vm, k):
        if vm is None:
            return None
        if k == "preempted":
            return "TRUE" if vm["_preempted"] else "FALSE"
        if k == "name":
            return vm["name"]
        if k == "id":
            return vm["id"]
        if k == "zone":
            return "projects/000000000000/zones/" + vm["_zone"]
        if k.startswith("attributes/"):
            key = k[len("attributes/"):]
            for it in vm["metadata"]["items"]:
                if it.get("key") == key:
                    return it.get("value", "")
        return None

    # -- control --
    def control(self, method, path, raw):
        if path == "/_fake/log":
            with LOCK:
                return self.answer(200, LOG)
        if path == "/_fake/state":
            with LOCK:
                reap()
                return self.answer(200, {"vms": [vm_view(v) for v in VMS.values()], "throttled": THROTTLED,
                                         "tokens": len(TOKENS), "window": CONFIG["window"],
                                         "elapsed": now() - T0,
                                         "used": [[g, w, n] for (g, w), n in USED.items()]})
        req = json.loads(raw or b"{}")
        if path == "/_fake/config":
            with LOCK:
                for k in ("capacity", "cpu_quota", "quota"):
                    if k in req:
                        CONFIG[k] = req[k]
                if "page_size" in req:
                    CONFIG["page_size"] = int(req["page_size"])
                for k in ("boot_delay", "op_delay", "wait_max", "delete_delay", "window"):
                    if k in req:
                        CONFIG[k] = float(req[k])
                if "fail" in req:
                    FAILS[:] = req["fail"]
                if "echo_assertion" in req:
                    CONFIG["echo_assertion"] = bool(req["echo_assertion"])
            return self.answer(200, {"ok": True})
        if path == "/_fake/vm":
            with LOCK:
                vm = VMS.get(req.get("name", ""))
                if not vm:
                    return self.answer(404, {"error": "no VM %s" % req.get("name")})
                if "ip" in req:
                    vm["networkInterfaces"][0]["networkIP"] = req["ip"]
                if "status" in req:
                    vm["_status"] = req["status"]
                if req.get("preempted"):
                    vm["_preempted"] = True
                if "serial" in req:
                    SERIAL[vm["name"]] = SERIAL.get(vm["name"], "") + req["serial"]
                if req.get("delete"):
                    del VMS[vm["name"]]
                LOCK.notify_all()
            return self.answer(200, {"ok": True})
        self.answer(404, {"error": "no such control"})

    # -- compute --
    def compute(self, method, project, path, q, body):
        auth = self.headers.get("Authorization", "")
        with LOCK:
            exp = TOKENS.get(auth[7:]) if auth.startswith("Bearer ") else None
        if exp is None or exp < now():
            return self.answer(401, {"error": {"code": 401, "message": "Request had invalid authentication credentials. "
                                               "Expected OAuth 2 access token, login cookie or other valid authentication "
                                               "credential.", "errors": [{"message": "Invalid Credentials",
                                                                          "domain": "global", "reason": "authError",
                                                                          "location": "Authorization",
                                                                          "locationType": "header"}],
                                               "status": "UNAUTHENTICATED"}})
        if project != ARGS.project:
            return self.answer(*api_error(403, "forbidden", "Required 'compute.instances.list' permission for "
                                          "'projects/%s'" % project))
        with LOCK:
            for f in FAILS:
                mm = f.get("match", {})
                if mm.get("method", method) == method and re.search(mm.get("path", ""), path) and f.get("times", 1) > 0:
                    f["times"] = f.get("times", 1) - 1
                    return self.answer(*api_error(f.get("status", 500), f.get("reason", "backendError"),
                                                  f.get("message", "Internal error.")))
            if not take_quota(quota_group(method, path), path):
                return self.answer(*api_error(403, "rateLimitExceeded",
                                              "Quota exceeded for quota metric '%s requests' and limit '%s requests "
                                              "per minute' of service 'compute.googleapis.com' for consumer "
                                              "'project_number:000000000000'." %
                                              ((quota_group(method, path).capitalize(),) * 2),
                                              "usageLimits"))
            reap()
            return self.answer(*self.dispatch(method, path, q, body))

    def dispatch(self, method, path, q, body):
        seg = path.split("/")
        # bulk inserts
        if method == "POST" and len(seg) == 4 and seg[0] in ("zones", "regions") and seg[2:] == ["instances", "bulkInsert"]:
            return bulk_insert(seg[0], seg[1], body or {}, q.get("requestId"))
        # operations
        if len(seg) >= 4 and seg[0] in ("zones", "regions") and seg[2] == "operations":
            op = OPS.get(seg[3])
            scope = op and op.get(seg[0][:-1], "").endswith("/" + seg[1])
            if not op or not scope:
                return api_error(404, "notFound", "The resource 'projects/%s/%s/%s/operations/%s' was not found" %
                                 (ARGS.project, seg[0], seg[1], seg[3]))
            if len(seg) == 5 and seg[4] == "wait" and method == "POST":
                end = now() + CONFIG["wait_max"]
                while True:
                    settle(op)
                    if op["status"] == "DONE" or now() >= end:
                        break
                    LOCK.wait(max(0.01, min(end, op["_done_at"]) - now()))
                return 200, op_view(op)
            if len(seg) == 4 and method == "GET":
                return 200, op_view(op)
        if method == "GET" and path == "aggregated/operations":
            try:
                flt = parse_filter(q.get("filter"))
            except ValueError as e:
                return api_error(400, "invalid", str(e))
            items = {}
            for op in OPS.values():
                v = op_view(op)
                if not matches(v, flt):
                    continue
                sc = "zones/" + v["zone"].rsplit("/", 1)[-1] if "zone" in v else "regions/" + v["region"].rsplit("/", 1)[-1]
                items.setdefault(sc, {"operations": []})["operations"].append(v)
            return 200, {"kind": "compute#operationAggregatedList", "id": "projects/%s/aggregated/operations" % ARGS.project,
                         "items": items, "selfLink": "%s/aggregated/operations" % base_url(None)}
        # instances
        if method == "GET" and (path == "aggregated/instances" or
                                (len(seg) == 3 and seg[0] == "zones" and seg[2] == "instances")):
            try:
                flt = parse_filter(q.get("filter"))
            except ValueError as e:
                return api_error(400, "invalid", str(e))
            zone = seg[1] if seg[0] == "zones" else None
            vms = sorted((v for v in VMS.values() if zone is None or v["_zone"] == zone), key=lambda v: v["name"])
            vms = [v for v in vms if matches(vm_view(v), flt)]
            start = int(q.get("pageToken") or 0)
            size = min(int(q.get("maxResults") or 500), 500, int(CONFIG.get("page_size") or 500))
            page, nxt = vms[start:start + size], (start + size if start + size < len(vms) else None)
            if zone:
                out = {"kind": "compute#instanceList", "id": "projects/%s/zones/%s/instances" % (ARGS.project, zone),
                       "items": [vm_view(v) for v in page],
                       "selfLink": "%s/zones/%s/instances" % (base_url(None), zone)}
            else:
                items = {}
                for v in page:
                    items.setdefault("zones/" + v["_zone"], {"instances": []})["instances"].append(vm_view(v))
                out = {"kind": "compute#instanceAggregatedList", "id": "projects/%s/aggregated/instances" % ARGS.project,
                       "items": items, "selfLink": "%s/aggregated/instances" % base_url(None)}
            if nxt is not None:
                out["nextPageToken"] = str(nxt)
            return 200, out
        if len(seg) >= 4 and seg[0] == "zones" and seg[2] == "instances":
            vm = VMS.get(seg[3])
            if not vm or vm["_zone"] != seg[1]:
                return api_error(404, "notFound", "The resource 'projects/%s/zones/%s/instances/%s' was not found" %
                                 (ARGS.project, seg[1], seg[3]))
            if len(seg) == 4 and method == "GET":
                return 200, vm_view(vm)
            if len(seg) == 4 and method == "DELETE":
                op = make_op("zones", seg[1], "delete", vm["selfLink"])
                op["targetId"] = vm["id"]
                if vm["_deleting"] is None:
                    vm["_deleting"] = now() + CONFIG["delete_delay"]
                op["_done_at"] = vm["_deleting"]
                return 200, op_view(op)
            if len(seg) == 5 and seg[4] == "setMetadata" and method == "POST":
                b = body or {}
                if b.get("fingerprint") != vm["metadata"]["fingerprint"]:
                    return api_error(412, "conditionNotMet", "Supplied fingerprint does not match current metadata "
                                     "fingerprint.")
                vm["metadata"] = {"kind": "compute#metadata", "fingerprint": fingerprint(),
                                  "items": list(b.get("items") or [])}
                op = make_op("zones", seg[1], "setMetadata", vm["selfLink"])
                op["targetId"] = vm["id"]
                LOCK.notify_all()
                return 200, op_view(op)
            if len(seg) == 5 and seg[4] == "serialPort" and method == "GET":
                text = SERIAL.get(vm["name"], "")
                start = int(q.get("start") or 0)
                return 200, {"kind": "compute#serialPortOutput", "contents": text[start:], "start": str(start),
                             "next": str(len(text)), "selfLink": vm["selfLink"] + "/serialPort"}
        # the catalog (an aggregated list in pages of maxResults or page_size
        # items, each page's items grouped by zone, as Compute Engine pages them)
        if method == "GET" and (path == "aggregated/machineTypes" or
                                (len(seg) == 3 and seg[0] == "zones" and seg[2] == "machineTypes")):
            zones = [seg[1]] if seg[0] == "zones" else sorted({z for r in CONFIG["zones"] for z in zones_of(r)} or
                                                               {"us-central1-a"})
            items = {}
            for z in zones:
                items["zones/" + z] = {"machineTypes": [
                    {"kind": "compute#machineType", "id": new_id(), "name": n, "guestCpus": c, "memoryMb": m,
                     "zone": z, "isSharedCpu": False, "maximumPersistentDisks": 128,
                     "architecture": "ARM64" if n.startswith("t2a-") else "X86_64",
                     "maximumPersistentDisksSizeGb": "263168", "description": "%d vCPUs, %g GB RAM" % (c, m / 1024),
                     "selfLink": "%s/zones/%s/machineTypes/%s" % (base_url(None), z, n),
                     **({"accelerators": [{"guestAcceleratorType": "nvidia-tesla-a100", "guestAcceleratorCount": 1}]}
                        if n.startswith("a2-") else {}),
                     **({"accelerators": [{"guestAcceleratorType": "nvidia-l4", "guestAcceleratorCount": 1}]}
                        if n.startswith("g2-") else {})}
                    for n, (c, m) in sorted(MACHINE_TYPES.items())]}
            if seg[0] == "zones":
                return 200, {"kind": "compute#machineTypeList", "items": items["zones/" + seg[1]]["machineTypes"],
                             "id": "projects/%s/zones/%s/machineTypes" % (ARGS.project, seg[1]),
                             "selfLink": "%s/zones/%s/machineTypes" % (base_url(None), seg[1])}
            return 200, paged({"kind": "compute#machineTypeAggregatedList",
                               "id": "projects/%s/aggregated/machineTypes" % ARGS.project,
                               "selfLink": "%s/aggregated/machineTypes" % base_url(None)}, items, "machineTypes", q)
        if method == "GET" and path == "aggregated/acceleratorTypes":
            zones = sorted({z for r in CONFIG["zones"] for z in zones_of(r)} or {"us-central1-a"})
            return 200, paged({"kind": "compute#acceleratorTypeAggregatedList",
                               "id": "projects/%s/aggregated/acceleratorTypes" % ARGS.project,
                               "selfLink": "%s/aggregated/acceleratorTypes" % base_url(None)},
                              {"zones/" + z: {"acceleratorTypes": [
                                  {"kind": "compute#acceleratorType", "id": new_id(), "name": n, "description": d,
                                   "zone": "%s/zones/%s" % (base_url(None), z), "maximumCardsPerInstance": 8,
                                   "selfLink": "%s/zones/%s/acceleratorTypes/%s" % (base_url(None), z, n)}
                                  for n, d in sorted(ACCELERATORS.items())]} for z in zones}, "acceleratorTypes", q)
        return api_error(404, "notFound", "The requested URL /compute/v1/projects/%s/%s was not found." %
                         (ARGS.project, path))


def paged(out, items, key, q):
    """out with one page of the aggregated items ({scope: {key: [...]}}):
    from pageToken on, maxResults (or page_size) of them, and nextPageToken
    when more are left."""
    flat = [(sc, it) for sc in sorted(items) for it in items[sc][key]]
    start = int(q.get("pageToken") or 0)
    size = min(int(q.get("maxResults") or 500), 500, int(CONFIG.get("page_size") or 500))
    out["items"] = {}
    for sc, it in flat[start:start + size]:
        out["items"].setdefault(sc, {key: []})[key].append(it)
    if start + size < len(flat):
        out["nextPageToken"] = str(start + size)
    return out


def load_key(path):
    from cryptography.hazmat.primitives import serialization
    k = json.load(open(path))
    priv = serialization.load_pem_private_key(k["private_key"].encode(), password=None)
    KEYS[k.get("private_key_id", path)] = (k["client_email"], priv.public_key())


def make_key(a):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    priv = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = priv.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()
    kid = hashlib.sha1(os.urandom(16)).hexdigest()
    doc = {"type": "service_account", "project_id": a.project, "private_key_id": kid, "private_key": pem,
           "client_email": "burst-agent@%s.iam.gserviceaccount.com" % a.project,
           "client_id": str(random.randint(10 ** 20, 10 ** 21)),
           "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": a.token_uri,
           "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
           "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/burst-agent",
           "universe_domain": "googleapis.com"}
    fd = os.open(a.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=2)


def kv_list(s, conv=int):
    out = {}
    for item in (s or "").split(","):
        if item:
            k, v = item.split("=", 1)
            out[k] = conv(v)
    return out


def main():
    global ARGS, LOGF
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port-file", required=True)
    s.add_argument("--bind", default="127.0.0.1")
    s.add_argument("--key", action="append", default=[])
    s.add_argument("--project", default="burst-test")
    s.add_argument("--log")
    s.add_argument("--window", type=float, default=60.0)
    s.add_argument("--quota", default="")
    s.add_argument("--boot-delay", type=float, default=1.0)
    s.add_argument("--op-delay", type=float, default=0.5)
    s.add_argument("--wait-max", type=float, default=120.0)
    s.add_argument("--delete-delay", type=float, default=0.5)
    s.add_argument("--ip-base", default="10.128.0.2")
    s.add_argument("--capacity", default="")
    s.add_argument("--cpu-quota", default="")
    s.add_argument("--zones", default="")
    s.add_argument("--token-life", type=int, default=3600)
    m = sub.add_parser("make-key")
    m.add_argument("--out", required=True)
    m.add_argument("--token-uri", required=True)
    m.add_argument("--project", default="burst-test")
    ARGS = p.parse_args()
    if ARGS.cmd == "make-key":
        return make_key(ARGS)
    for k in ARGS.key:
        load_key(k)
    CONFIG.update({"window": ARGS.window, "quota": kv_list(ARGS.quota), "boot_delay": ARGS.boot_delay,
                   "op_delay": ARGS.op_delay, "wait_max": ARGS.wait_max, "delete_delay": ARGS.delete_delay,
                   "capacity": kv_list(ARGS.capacity), "cpu_quota": kv_list(ARGS.cpu_quota, float),
                   "zones": {k: v.split("+") for k, v in kv_list(ARGS.zones, str).items()}})
    if ARGS.log:
        LOGF = open(ARGS.log, "a")
    srv = ThreadingHTTPServer((ARGS.bind, 0), H)
    srv.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""azure_fake.py - a fake Azure for the tests: Resource Manager with the compute
resource provider's virtual machines (and the network interfaces they make),
Entra ID's token endpoint, and the instance metadata service.

No emulator of ARM exists; this is one, small, and checked against Microsoft's
own SDK (tests/integration/azure_sdk_check.js drives it with @azure/arm-compute
and @azure/identity and validates every request and answer it logged against
the SDK's models). Python 3 standard library only.

  azure_fake.py --dir DIR [--cert PEM --key PEM] [--imds [--imds-bind ADDR]]

DIR/config.json (read at start and again on POST /_fake/config) says:
  subscription, tenant       the ids the fake answers for
  apps                       {client_id: {"secret": S} or {"modulus": HEX, "exponent": N}}
                             (a client certificate's RSA public key: the
                             assertion's RS256 signature is verified)
  managed_identity           true: IMDS gives tokens
  lro_polls                  operation status polls that answer InProgress
                             before the final status (default 2)
  retry_after                the Retry-After seconds of an operation (default 1)
  page                       VMs a listing page holds (default 50)
  skus                       the Resource SKUs listing's value (GET .../Microsoft.Compute/skus)
  sku_page                   SKUs a listing page holds (default all: one page)
  capacity                   [{"size": S, "zone": Z or "", "region": R or ""}]:
                             a create fails in its operation with
                             ZonalAllocationFailed (zone) or AllocationFailed
  sku_not_available          [size...]: a create answers 409 SkuNotAvailable
  cores_quota                {region: cores}: a create past it answers 409
                             OperationNotAllowed (the regional cores quota)
  buckets                    "azure" (the documented sizes and refills, below),
                             "off", or {name: [size, per_second]} to override
  time_scale                 refills are this many times faster (the bench)
  boot_delay                 seconds from a create to its Succeeded
  delete_delay               seconds from a DELETE to the VM (with its NIC) being
                             gone, whether or not its operation is polled (default 1)
  subnet_prefix              "10.77" (the NICs' private addresses: PREFIX.X.Y)
  ip_base                    "A.B.C.D": the NICs' addresses are D+1, D+2, ... in A.B.C
                             instead (a test's network, where its VMs are emulated)
  list_lag                   seconds a created VM stays out of listings (ARM's
                             listings may lag a create; default 0)

Buckets (issue 31, from Microsoft's documentation of ARM's and the compute
resource provider's throttling): per subscription reads 250 then 25/s,
writes 200 then 10/s, deletes 200 then 10/s; per region of the compute
resource provider VM create/update/delete ("PutVM", "DeleteVM") 1,500 then
500/min, VM list 900 then 300/min, operation status 15,000 then 5,000/min.
A request that finds a bucket empty gets 429 with Retry-After and its
x-ms-ratelimit-remaining-* headers.

The metadata service answers a VM's managed identity tokens and its Scheduled
Events (api-version 2020-07-01): the config's scheduled_events document, or
the events posted to POST /_fake/scheduled_event {"type": "Preempt",
"resources": [VM...], "in": SECONDS} (NotBefore that many seconds on, default
30), each raising DocumentIncarnation.

Every request is logged to DIR/requests.jsonl (method, path, query, status,
body, answer) after it is answered. DIR/port (and DIR/imds_port) get the
ports once the fake listens.
"""
import argparse
import base64
import hashlib
import json
import math
import os
import re
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPUTE_API = "2024-11-01"
NETWORK_API = "2024-05-01"
DOCUMENTED = {
    # name: (size, refill per second)
    "reads": (250, 25.0), "writes": (200, 10.0), "deletes": (200, 10.0),
    "PutVM": (1500, 500 / 60.0), "DeleteVM": (1500, 500 / 60.0),
    "ListVM": (900, 300 / 60.0), "GetOperation": (15000, 5000 / 60.0),
}


class Bucket:
    def __init__(self, size, rate):
        self.size, self.rate, self.tokens, self.t = float(size), float(rate), float(size), time.monotonic()

    def take(self, now):
        self.tokens = min(self.size, self.tokens + (now - self.t) * self.rate)
        self.t = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate if self.rate > 0 else 3600.0

    def left(self, now):
        return int(min(self.size, self.tokens + (now - self.t) * self.rate))


class Fake:
    def __init__(self, d):
        self.dir = d
        self.lock = threading.Lock()
        self.vms = {}        # name.lower() -> vm dict (the resource)
        self.meta = {}       # name.lower() -> {"cores", "region", "ready_at", "fail", "nic"}
        self.nics = {}       # name.lower() -> nic dict
        self.ops = {}        # op id -> {"polls", "final", "error", "vm", "kind"}
        self.tokens = {}     # token -> expiry
        self.ipseq = 0
        self.buckets = {}
        self.counts = {}
        self.events = []     # Scheduled Events posted by the test
        self.incarnation = 0
        self.load()

    def load(self):
        with open(os.path.join(self.dir, "config.json")) as f:
            self.cfg = json.load(f)
        self.buckets = {}

    def c(self, k, dflt):
        return self.cfg.get(k, dflt)

    # ---- throttling
    def bucket_wait(self, names, now):
        spec = self.c("buckets", "azure")
        if spec == "off":
            return None
        scale = float(self.c("time_scale", 1))
        worst = None
        for name in names:
            base = name.split("@")[0]
            size, rate = DOCUMENTED[base]
            if isinstance(spec, dict) and base in spec:
                size, rate = spec[base]
            b = self.buckets.get(name)
            if b is None:
                b = self.buckets[name] = Bucket(size, rate * scale)
            w = b.take(now)
            if w > 0 and (worst is None or w > worst[1]):
                worst = (name, w)
        return worst

    def remaining(self, name, now):
        b = self.buckets.get(name)
        return b.left(now) if b else DOCUMENTED[name.split("@")[0]][0]

    def purge(self):
        """VMs whose delete is done (delete_delay after it) are gone, with their NIC. Under the lock."""
        now = time.time()
        for k in [k for k, m in self.meta.items() if m.get("gone_at") is not None and m["gone_at"] <= now]:
            m = self.meta.pop(k)
            self.vms.pop(k, None)
            if m.get("nic"):
                self.nics.pop(m["nic"].lower(), None)

    def new_ip(self):
        self.ipseq += 1
        base = self.c("ip_base", "")
        if base:
            a, b, c, d = (int(x) for x in base.split("."))
            if d + self.ipseq > 254:
                raise ValueError("ip_base %s: no address left for NIC %d" % (base, self.ipseq))
            return "%d.%d.%d.%d" % (a, b, c, d + self.ipseq)
        return "%s.%d.%d" % (self.c("subnet_prefix", "10.77"), (self.ipseq >> 8) & 255, self.ipseq & 255 or 1)


def rs256_ok(n, e, sig, msg):
    """RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 8.2.2)."""
    em = pow(sig, e, n).to_bytes((n.bit_length() + 7) // 8, "big")
    info = bytes.fromhex("3031300d060960864801650304020105000420") + hashlib.sha256(msg).digest()
    return em == b"\x00\x01" + b"\xff" * (len(em) - len(info) - 3) + b"\x00" + info


def ps256_ok(n, e, sig, msg):
    """RSASSA-PSS with SHA-256, MGF1-SHA-256, any salt length (RFC 8017 8.1.2, 9.1.2)."""
    em_bits = n.bit_length() - 1
    em_len = (em_bits + 7) // 8
    m = pow(sig, e, n)
    if m.bit_length() > em_bits:
        return False
    em = m.to_bytes(em_len, "big")
    hl = 32
    if em_len < hl + 2 or em[-1] != 0xbc:
        return False
    masked, h = em[:em_len - hl - 1], em[em_len - hl - 1:-1]
    mask, c = b"", 0
    while len(mask) < len(masked):
        mask += hashlib.sha256(h + c.to_bytes(4, "big")).digest()
        c += 1
    db = bytearray(x ^ y for x, y in zip(masked, mask))
    db[0] &= 0xff >> (8 * em_len - em_bits)
    i = 0
    while i < len(db) and db[i] == 0:
        i += 1
    if i == len(db) or db[i] != 1:
        return False
    salt = bytes(db[i + 1:])
    return hashlib.sha256(b"\x00" * 8 + hashlib.sha256(msg).digest() + salt).digest() == h


def now_iso(t=None):
    t = time.time() if t is None else t
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%07dZ" % int((t % 1) * 1e7)


def arm_error(code, message, status=400):
    return status, {"error": {"code": code, "message": message}}


VM_RE = re.compile(r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/"
                   r"virtualMachines(?:/([^/]+))?$", re.I)
NIC_RE = re.compile(r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Network/"
                    r"networkInterfaces/([^/]+)$", re.I)
OP_RE = re.compile(r"^/subscriptions/([^/]+)/providers/Microsoft\.Compute/locations/([^/]+)/"
                   r"operations/([^/]+)$", re.I)
SKU_RE = re.compile(r"^/subscriptions/([^/]+)/providers/Microsoft\.Compute/skus$", re.I)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}[A-Za-z0-9_]$")


def capacity_fail(F, size, loc, zones):
    """The error a create of size in loc (zones) fails with for want of capacity, or None."""
    for c in F.c("capacity", []):
        if c.get("size") == size and c.get("region", "") in ("", loc) and \
                (c.get("zone", "") == "" or c.get("zone") in zones):
            return ("ZonalAllocationFailed", "Allocation failed. We do not have sufficient capacity for the "
                    "requested VM size in this zone. Read more about improving likelihood of allocation "
                    "success at http://aka.ms/allocation-guidance") if zones else \
                ("AllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested "
                 "VM size in this region. Read more about improving likelihood of allocation success at "
                 "http://aka.ms/allocation-guidance")
    return None


def vm_cores(size):
    m = re.match(r"Standard_[A-Z]+(\d+)", size or "")
    return int(m.group(1)) if m else 2


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "azure-fake"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self.handle_any("GET")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    # ------------------------------------------------------------------
    def handle_any(self, method):
        F = self.server.fake
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        body = None
        self.extra = {}
        self.buckets = []
        status, answer = 500, {"error": {"code": "InternalError", "message": "unhandled"}}
        with F.lock:
            F.purge()
        try:
            if self.server.imds:
                status, answer = self.imds(method, u.path, q)
            elif u.path.startswith("/_fake/"):
                status, answer = self.control(method, u.path, raw)
            elif u.path.endswith("/oauth2/v2.0/token") or ".well-known/openid-configuration" in u.path \
                    or u.path.startswith("/common/discovery/"):
                status, answer = self.login(method, u.path, raw)
            else:
                if raw:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        status, answer = arm_error("InvalidRequestContent", "The request content was invalid and could not be deserialized.")
                        raw = None
                if raw is not None:
                    status, answer = self.arm(method, u.path, q, body)
        except Exception as e:  # a bug of the fake: say so, loudly
            status, answer = 500, {"error": {"code": "FakeBug", "message": repr(e)}}
            print("azure_fake: %s %s: %r" % (method, self.path, e), file=sys.stderr)
        self.send(status, answer)
        if not u.path.startswith("/_fake/"):
            rec = {"t": time.time(), "method": method, "path": u.path, "query": q, "status": status,
                   "buckets": getattr(self, "buckets", []),
                   "body": body if body is not None else (None if not raw or u.path.endswith("/token") else "<raw>"),
                   "answer": answer if isinstance(answer, (dict, list)) else None,
                   "imds": self.server.imds}
            with F.lock:
                with open(os.path.join(F.dir, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(rec) + "\n")

    def send(self, status, answer):
        data = b"" if answer is None else json.dumps(answer).encode()
        self.send_response(status)
        if answer is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-ms-request-id", str(uuid.uuid4()))
        for k, v in self.extra.items():
            self.send_header(k, v)
        self.end_headers()
        if data:
            self.wfile.write(data)

    def base(self):
        return "https://%s" % self.headers.get("Host")

    # ---- Entra ID
    def login(self, method, path, raw):
        F = self.server.fake
        m = re.match(r"^/([^/]+)/", path)
        tenant = m.group(1) if m else ""
        if "openid-configuration" in path:
            b = self.base()
            return 200, {"token_endpoint": "%s/%s/oauth2/v2.0/token" % (b, tenant),
                         "authorization_endpoint": "%s/%s/oauth2/v2.0/authorize" % (b, tenant),
                         "end_session_endpoint": "%s/%s/oauth2/v2.0/logout" % (b, tenant),
                         "issuer": "%s/%s/v2.0" % (b, tenant), "jwks_uri": "%s/%s/discovery/v2.0/keys" % (b, tenant),
                         "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt"],
                         "response_types_supported": ["code"], "subject_types_supported": ["pairwise"],
                         "id_token_signing_alg_values_supported": ["RS256"]}
        if path.startswith("/common/discovery/"):
            return 200, {"tenant_discovery_endpoint": "%s/%s/v2.0/.well-known/openid-configuration" % (self.base(), tenant),
                         "metadata": []}
        if method != "POST":
            return 405, {"error": "invalid_request", "error_description": "POST the token request"}
        form = dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace")))
        bad = lambda code, why, st=400: (st, {"error": code, "error_description": why, "error_codes": [7000215],
                                             "timestamp": now_iso(), "trace_id": str(uuid.uuid4())})
        if tenant != F.c("tenant", ""):
            return bad("invalid_tenant", "AADSTS90002: Tenant '%s' not found." % tenant)
        if form.get("grant_type") != "client_credentials":
            return bad("unsupported_grant_type", "AADSTS70003: grant_type must be client_credentials here")
        if form.get("scope") != "https://management.azure.com/.default":
            return bad("invalid_scope", "AADSTS70011: The provided value for scope %s is not valid." % form.get("scope"))
        app = F.c("apps", {}).get(form.get("client_id", ""))
        if not app:
            return bad("unauthorized_client", "AADSTS700016: Application with identifier '%s' was not found in the directory."
                       % form.get("client_id"))
        if "client_secret" in form:
            if app.get("secret") != form["client_secret"]:
                return bad("invalid_client", "AADSTS7000215: Invalid client secret provided.", 401)
        elif form.get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            why = self.check_assertion(form.get("client_assertion", ""), app, form["client_id"], tenant)
            if why:
                return bad("invalid_client", "AADSTS700027: Client assertion failed signature validation. (%s)" % why, 401)
        else:
            return bad("invalid_client", "AADSTS7000218: The request body must contain client_assertion or client_secret.", 401)
        return 200, self.issue()

    def check_assertion(self, jwt, app, client_id, tenant):
        if "modulus" not in app:
            return "no certificate registered"
        try:
            h64, p64, s64 = jwt.split(".")
            pad = lambda s: s + "=" * (-len(s) % 4)
            hdr = json.loads(base64.urlsafe_b64decode(pad(h64)))
            pay = json.loads(base64.urlsafe_b64decode(pad(p64)))
            sig = int.from_bytes(base64.urlsafe_b64decode(pad(s64)), "big")
        except Exception:
            return "not a JWT"
        if hdr.get("alg") not in ("RS256", "PS256"):
            return "alg %r" % hdr.get("alg")
        if not (hdr.get("x5t") or hdr.get("x5t#S256")):
            return "no x5t"
        n, e = int(app["modulus"], 16), int(app.get("exponent", 65537))
        signed = ("%s.%s" % (h64, p64)).encode()
        if not (rs256_ok if hdr["alg"] == "RS256" else ps256_ok)(n, e, sig, signed):
            return "bad %s signature" % hdr["alg"]
        if pay.get("iss") != client_id or pay.get("sub") != client_id:
            return "iss/sub"
        if not str(pay.get("aud", "")).endswith("/%s/oauth2/v2.0/token" % tenant):
            return "aud %r" % pay.get("aud")
        if not (pay.get("exp", 0) > time.time() >= pay.get("nbf", 0) - 300) or not pay.get("jti"):
            return "exp/nbf/jti"
        return None

    def issue(self, resource=False):
        F = self.server.fake
        tok = "fake-" + base64.urlsafe_b64encode(os.urandom(24)).decode().rstrip("=")
        life = int(F.c("token_life", 3599))
        with F.lock:
            F.tokens[tok] = time.time() + life
            F.counts["tokens"] = F.counts.get("tokens", 0) + 1
        if resource:
            return {"access_token": tok, "client_id": "mi-client", "expires_in": str(life),
                    "expires_on": str(int(time.time()) + life), "ext_expires_in": str(life),
                    "not_before": str(int(time.time())), "resource": "https://management.azure.com/",
                    "token_type": "Bearer"}
        return {"token_type": "Bearer", "expires_in": life, "ext_expires_in": life, "access_token": tok}

    # ---- IMDS
    def imds(self, method, path, q):
        F = self.server.fake
        if self.headers.get("Metadata") != "true":
            return 400, {"error": "bad_request", "error_description": "Required metadata header not specified"}
        if path == "/metadata/identity/oauth2/token":
            if not F.c("managed_identity", False):
                return 400, {"error": "invalid_request", "error_description": "Identity not found"}
            if q.get("resource") not in ("https://management.azure.com/", "https://management.azure.com"):
                return 400, {"error": "invalid_resource", "error_description": "AADSTS500011: resource %s" % q.get("resource")}
            if not q.get("api-version"):
                return 400, {"error": "invalid_request", "error_description": "api-version is missing"}
            return 200, self.issue(resource=True)
        if path == "/metadata/scheduledevents":
            if q.get("api-version") != "2020-07-01":
                return 400, {"error": "invalid_request", "error_description": "api-version 2020-07-01 expected here"}
            with F.lock:
                if "scheduled_events" in F.cfg:
                    return 200, F.cfg["scheduled_events"]
                return 200, {"DocumentIncarnation": F.incarnation, "Events": list(F.events)}
        return 404, {"error": "not_found"}

    # ---- the test's knobs
    def control(self, method, path, raw):
        F = self.server.fake
        if path == "/_fake/config" and method == "POST":
            with F.lock:
                F.load()
            return 200, {"ok": True}
        if path == "/_fake/scheduled_event" and method == "POST":
            ev = json.loads(raw)
            with F.lock:
                F.incarnation += 1
                F.events.append({"EventId": str(uuid.uuid4()).upper(), "EventStatus": "Scheduled",
                                 "EventType": ev["type"], "ResourceType": "VirtualMachine",
                                 "Resources": ev["resources"], "EventSource": "Platform",
                                 "NotBefore": time.strftime("%a, %d %b %Y %H:%M:%S GMT",
                                                            time.gmtime(time.time() + float(ev.get("in", 30)))),
                                 "Description": "", "DurationInSeconds": -1})
            return 200, {"ok": True, "DocumentIncarnation": F.incarnation}
        if path == "/_fake/state":
            with F.lock:
                return 200, {"vms": {k: {"name": v["name"], "provisioningState": v["properties"]["provisioningState"],
                                          "zones": v.get("zones", []), "tags": v.get("tags", {}),
                                          "size": v["properties"]["hardwareProfile"]["vmSize"],
                                          "location": v["location"],
                                          "priority": v["properties"].get("priority", ""),
                                          "evictionPolicy": v["properties"].get("evictionPolicy", ""),
                                          "maxPrice": v["properties"].get("billingProfile", {}).get("maxPrice", ""),
                                          "customData": F.meta[k].get("customData", ""),
                                          "ip": F.nics[F.meta[k]["nic"].lower()]["properties"]["ipConfigurations"][0]["properties"]["privateIPAddress"]
                                          if F.meta[k].get("nic") and F.meta[k]["nic"].lower() in F.nics else ""}
                                      for k, v in F.vms.items()},
                             "nics": sorted(F.nics), "counts": F.counts}
        return 404, {"error": "no such control"}

    # ---- ARM
    def arm(self, method, path, q, body):
        F = self.server.fake
        auth = self.headers.get("Authorization", "")
        tok = auth[7:] if auth.startswith("Bearer ") else None
        with F.lock:
            good = tok in F.tokens and F.tokens[tok] > time.time()
        if not good:
            self.extra["WWW-Authenticate"] = 'Bearer authorization_uri="https://login.microsoftonline.com/%s", error="invalid_token"' % F.c("tenant", "")
            return arm_error("InvalidAuthenticationToken" if tok else "AuthenticationFailed",
                             "The access token is invalid." if tok else
                             "Authentication failed. The 'Authorization' header is missing.", 401)
        m = OP_RE.match(path) or VM_RE.match(path) or NIC_RE.match(path) or SKU_RE.match(path)
        if not m:
            return arm_error("InvalidResourceType", "The resource type could not be found in the namespace for api version '%s'."
                             % q.get("api-version"), 404)
        if m.group(1) != F.c("subscription", ""):
            return arm_error("SubscriptionNotFound", "The subscription '%s' could not be found." % m.group(1), 404)
        want_api = NETWORK_API if m.re is NIC_RE else COMPUTE_API if m.re is not SKU_RE else "2021-07-01"
        if q.get("api-version") != want_api:
            return arm_error("NoRegisteredProviderFound" if q.get("api-version") else "MissingApiVersionParameter",
                             "The api-version '%s' is not one the fake speaks (it speaks %s)" % (q.get("api-version"), want_api))
        now = time.monotonic()
        kind = {"GET": "reads", "DELETE": "deletes"}.get(method, "writes")
        names = [kind]
        region = None
        if m.re is OP_RE:
            region = m.group(2)
            names.append("GetOperation@" + region)
        elif m.re is VM_RE and m.group(3) is None:
            names.append("ListVM@*")
        elif m.re is VM_RE and method in ("PUT", "DELETE"):
            region = (body or {}).get("location") if method == "PUT" else None
            if method == "DELETE":
                with F.lock:
                    v = F.vms.get(m.group(3).lower())
                region = v["location"] if v else "-"
            names.append(("PutVM@" if method == "PUT" else "DeleteVM@") + (region or "-"))
        self.buckets = [] if F.c("buckets", "azure") == "off" else names
        with F.lock:
            w = F.bucket_wait(names, now)
            rem = {"x-ms-ratelimit-remaining-subscription-" + kind: str(F.remaining(kind, now))}
            if len(names) > 1:
                rem["x-ms-ratelimit-remaining-resource"] = "Microsoft.Compute/%s;%d" % (
                    names[1].replace("@", "-"), F.remaining(names[1], now))
            if w:
                F.counts["throttled"] = F.counts.get("throttled", 0) + 1
                F.counts.setdefault("throttled_by", {})[w[0]] = F.counts.get("throttled_by", {}).get(w[0], 0) + 1
        self.extra.update(rem)
        if w:
            self.extra["Retry-After"] = str(max(1, int(math.ceil(w[1]))))
            return 429, {"error": {"code": "TooManyRequests" if "@" in w[0] else "SubscriptionRequestsThrottled",
                                   "message": "The request is being throttled as the limit has been reached for "
                                              "operation type - %s. Retry after %s seconds." % (w[0], self.extra["Retry-After"])}}
        with F.lock:
            F.counts[method] = F.counts.get(method, 0) + 1
        if m.re is OP_RE:
            return self.operation(m.group(3))
        if m.re is NIC_RE:
            with F.lock:
                nic = F.nics.get(m.group(3).lower())
            if method != "GET":
                return arm_error("MethodNotAllowed", "the fake only reads network interfaces", 405)
            return (200, nic) if nic else arm_error("NotFound", "Resource %s not found." % path, 404)
        if m.re is SKU_RE:
            # paged as ARM pages: nextLink carries a $skiptoken
            skus, page = F.c("skus", []), int(F.c("sku_page", 0) or 0) or len(F.c("skus", [])) or 1
            start = int(q.get("$skiptoken", "0") or 0)
            doc = {"value": skus[start:start + page]}
            if start + page < len(skus):
                doc["nextLink"] = "%s/subscriptions/%s/providers/Microsoft.Compute/skus?api-version=2021-07-01&$skiptoken=%d" % (
                    self.base(), F.c("subscription", ""), start + page)
            return 200, doc
        rg, name = m.group(2), m.group(3)
        if name is None:
            if method != "GET":
                return arm_error("MethodNotAllowed", "list with GET", 405)
            return self.list_vms(rg, q)
        if method == "PUT":
            return self.put_vm(rg, name, body, path)
        if method == "GET":
            with F.lock:
                self.advance(name.lower())
                v = F.vms.get(name.lower())
                if v and q.get("$expand") == "instanceView":
                    v = dict(v, properties=dict(v["properties"], instanceView=self.instance_view(name.lower())))
                v = json.loads(json.dumps(v)) if v else None
            return (200, v) if v else arm_error("ResourceNotFound", "The Resource 'Microsoft.Compute/virtualMachines/%s' under "
                                                "resource group '%s' was not found." % (name, rg), 404)
        if method == "DELETE":
            return self.delete_vm(rg, name, path)
        return arm_error("MethodNotAllowed", "not here", 405)

    def instance_view(self, k):
        F = self.server.fake
        st = F.vms[k]["properties"]["provisioningState"]
        codes = [{"code": "ProvisioningState/%s" % st.lower(), "level": "Info", "displayStatus": st}]
        if st == "Succeeded":
            codes.append({"code": "PowerState/running", "level": "Info", "displayStatus": "VM running"})
        return {"statuses": codes}

    def advance(self, k):
        """The fake's clock for VM k: Creating -> Succeeded after boot_delay."""
        F = self.server.fake
        v, meta = F.vms.get(k), F.meta.get(k)
        if not v or v["properties"]["provisioningState"] not in ("Creating", "Updating"):
            return
        if meta.get("fail"):
            return
        if time.time() >= meta["ready_at"]:
            v["properties"]["provisioningState"] = "Succeeded"

    def operation(self, opid):
        F = self.server.fake
        with F.lock:
            op = F.ops.get(opid)
            if not op:
                return arm_error("NotFound", "The operation '%s' was not found." % opid, 404)
            op["polls"] += 1
            k = op["vm"]
            if op["kind"] == "create":
                self.advance(k)
            doc = {"startTime": op["start"], "status": "InProgress", "name": opid}
            if op["polls"] <= int(F.c("lro_polls", 2)):
                pass
            elif op["kind"] == "create":
                meta = F.meta.get(k)
                v = F.vms.get(k)
                if meta and meta.get("fail"):
                    code, msg = meta["fail"]
                    if v:
                        v["properties"]["provisioningState"] = "Failed"
                    doc.update(status="Failed", endTime=now_iso(), error={"code": code, "message": msg})
                elif v and v["properties"]["provisioningState"] == "Succeeded":
                    doc.update(status="Succeeded", endTime=now_iso())
            else:  # delete: done once polled past lro_polls (or gone by delete_delay)
                if k in F.vms:
                    F.meta[k]["gone_at"] = time.time()
                    F.purge()
                doc.update(status="Succeeded", endTime=now_iso())
            if doc["status"] == "InProgress":
                self.extra["Retry-After"] = str(F.c("retry_after", 1))
        return 200, doc

    def new_op(self, kind, k, region):
        F = self.server.fake
        opid = str(uuid.uuid4())
        F.ops[opid] = {"polls": 0, "kind": kind, "vm": k, "start": now_iso()}
        url = "%s/subscriptions/%s/providers/Microsoft.Compute/locations/%s/operations/%s?api-version=%s" % (
            self.base(), F.c("subscription", ""), region, opid, COMPUTE_API)
        self.extra["Azure-AsyncOperation"] = url
        self.extra["Retry-After"] = str(F.c("retry_after", 1))
        return url

    def put_vm(self, rg, name, body, path):
        F = self.server.fake
        if not NAME_RE.match(name):
            return arm_error("InvalidParameter", "The VM name '%s' is not valid." % name)
        if not isinstance(body, dict) or not isinstance(body.get("properties"), dict):
            return arm_error("InvalidRequestContent", "The request content has no properties.")
        loc = body.get("location")
        if not loc:
            return arm_error("LocationRequired", "The location property is required for this definition.")
        props = body["properties"]
        size = (props.get("hardwareProfile") or {}).get("vmSize")
        zones = body.get("zones") or []
        k = name.lower()
        with F.lock:
            old = F.vms.get(k)
            if old:
                if old["location"] != loc or old["properties"]["hardwareProfile"]["vmSize"] != size:
                    return arm_error("PropertyChangeNotAllowed", "Changing property 'location' or 'vmSize' of %s "
                                     "is not allowed." % name, 409)
                if old["properties"]["provisioningState"] == "Failed" and F.meta.get(k, {}).get("gone_at") is None:
                    # as ARM does: a PUT to a VM in Failed state provisions it
                    # again (Updating), with the capacity of now
                    F.meta[k]["fail"] = capacity_fail(F, size, loc, zones)
                    F.meta[k]["ready_at"] = time.time() + float(F.c("boot_delay", 0))
                    old["properties"]["provisioningState"] = "Updating"
                    self.new_op("create", k, loc)
                    return 200, json.loads(json.dumps(old))
                # a PUT of the same VM again: the same VM (idempotent)
                return 200, json.loads(json.dumps(old))
            if size in F.c("sku_not_available", []):
                return arm_error("SkuNotAvailable", "The requested VM size for resource 'Following SKUs have failed "
                                 "for Capacity Restrictions: %s' is currently not available in location '%s'. "
                                 "Please try another size or deploy to a different location or different zone."
                                 % (size, loc), 409)
            quota = F.c("cores_quota", {}).get(loc)
            used = sum(m["cores"] for m in F.meta.values() if m["region"] == loc)
            if quota is not None and used + vm_cores(size) > quota:
                return arm_error("OperationNotAllowed", "Operation could not be completed as it results in exceeding "
                                 "approved Total Regional Cores quota. Additional details - Deployment Model: "
                                 "Resource Manager, Location: %s, Current Limit: %d, Current Usage: %d, Additional "
                                 "Required: %d, (Minimum) New Limit Required: %d." % (loc, quota, used, vm_cores(size),
                                                                                    used + vm_cores(size)), 409)
            fail = capacity_fail(F, size, loc, zones)
            sub = F.c("subscription", "")
            vm = json.loads(json.dumps(body))
            vm.update(id="/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachines/%s" % (sub, rg, name),
                      name=name, type="Microsoft.Compute/virtualMachines")
            p = vm["properties"]
            os_prof = p.get("osProfile") or {}
            custom = os_prof.pop("customData", "")
            p.update(vmId=str(uuid.uuid4()), provisioningState="Creating", timeCreated=now_iso())
            p.setdefault("osProfile", os_prof)
            os_prof.setdefault("allowExtensionOperations", True)
            os_prof.setdefault("requireGuestProvisionSignal", True)
            nicname = None
            net = p.get("networkProfile") or {}
            cfgs = net.get("networkInterfaceConfigurations") or []
            if cfgs:
                nicname = cfgs[0].get("name") or (name + "-nic")
                nicid = "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/networkInterfaces/%s" % (sub, rg, nicname)
                ipc = ((cfgs[0].get("properties") or {}).get("ipConfigurations") or [{}])[0]
                F.nics[nicname.lower()] = {
                    "id": nicid, "name": nicname, "type": "Microsoft.Network/networkInterfaces", "location": loc,
                    "properties": {"provisioningState": "Succeeded",
                                   "ipConfigurations": [{"name": ipc.get("name", "ipconfig1"),
                                                         "properties": {"privateIPAddress": F.new_ip(),
                                                                        "privateIPAllocationMethod": "Dynamic",
                                                                        "primary": True,
                                                                        "subnet": (ipc.get("properties") or {}).get("subnet")}}],
                                   "virtualMachine": {"id": vm["id"]}, "primary": True}}
                net["networkInterfaces"] = [{"id": nicid, "properties": {"primary": True,
                                                                         "deleteOption": (cfgs[0].get("properties") or {}).get("deleteOption", "Detach")}}]
            F.vms[k] = vm
            F.meta[k] = {"cores": vm_cores(size), "region": loc, "fail": fail, "nic": nicname, "customData": custom,
                         "ready_at": time.time() + float(F.c("boot_delay", 0)), "created": time.time()}
            self.new_op("create", k, loc)
            return 201, json.loads(json.dumps(vm))

    def delete_vm(self, rg, name, path):
        F = self.server.fake
        k = name.lower()
        with F.lock:
            v = F.vms.get(k)
            if not v:
                return 204, None
            if v["properties"]["provisioningState"] != "Deleting":
                v["properties"]["provisioningState"] = "Deleting"
            url = self.new_op("delete", k, v["location"])
            self.extra["Location"] = url.replace("/operations/", "/operations/") + "&monitor=true"
            # quota is held until it is gone
            if F.meta[k].get("gone_at") is None:
                F.meta[k]["gone_at"] = time.time() + float(F.c("delete_delay", 1))
        return 202, None

    def list_vms(self, rg, q):
        F = self.server.fake
        page = int(F.c("page", 50))
        start = int(q.get("$skiptoken", "0") or 0)
        with F.lock:
            for k in list(F.vms):
                self.advance(k)
            lag, now = float(F.c("list_lag", 0)), time.time()
            ks = sorted(k for k in F.vms if F.meta[k].get("created", 0) + lag <= now)
            items = [json.loads(json.dumps(F.vms[k])) for k in ks[start:start + page]]
        doc = {"value": items}
        if start + page < len(ks):
            sub = F.c("subscription", "")
            doc["nextLink"] = "%s/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachines?api-version=%s&$skiptoken=%d" % (
                self.base(), sub, rg, COMPUTE_API, start + page)
        return 200, doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--imds", action="store_true", help="also serve the metadata service on plain HTTP")
    ap.add_argument("--imds-bind", default="127.0.0.1", help="the metadata service's address (default 127.0.0.1)")
    a = ap.parse_args()
    fake = Fake(a.dir)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.fake, srv.imds = fake, False
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threads = [threading.Thread(target=srv.serve_forever, daemon=True)]
    if a.imds:
        isrv = ThreadingHTTPServer((a.imds_bind, 0), Handler)
        isrv.daemon_threads = True
        isrv.fake, isrv.imds = fake, True
        threads.append(threading.Thread(target=isrv.serve_forever, daemon=True))
        with open(os.path.join(a.dir, "imds_port.tmp"), "w") as f:
            f.write("%d\n" % isrv.server_address[1])
        os.rename(os.path.join(a.dir, "imds_port.tmp"), os.path.join(a.dir, "imds_port"))
    for t in threads:
        t.start()
    with open(os.path.join(a.dir, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(a.dir, "port.tmp"), os.path.join(a.dir, "port"))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

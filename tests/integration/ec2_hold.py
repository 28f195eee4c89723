#!/usr/bin/env python3
"""ec2_hold.py - a proxy between the burst agent and an EC2 endpoint
(moto_server) that holds back the answer of a RunInstances, for
tests/integration/test_aws_crash.sh. Python standard library only.

    ec2_hold.py UPSTREAM PORT_FILE HOLD_DIR [HOLDS [DELAY]]

Listens on 127.0.0.1, a free port, written to PORT_FILE. Every request is
forwarded to UPSTREAM (http://HOST:PORT) verbatim: same method, path, body
and headers, the Host header included, so a SigV4 signature made for the
proxy's address stays valid upstream (hop-by-hop headers, which are never
signed, are dropped).

The first HOLDS (default 1) RunInstances are forwarded and answered by
UPSTREAM (the instances are launched there), but the answer is not passed
on: the proxy writes HOLD_DIR/held.N (JSON: the ClientToken, the HTTP
status and the instance ids of the answer) and keeps the connection open
until the client goes away (the test kills it) or 300 s pass. Later
RunInstances pass through.

With DELAY (seconds), every answer passed on (held ones aside) is sent
DELAY seconds after its request came in, as a slow EC2 endpoint would
(bench/agent-stress: HOLDS 0, DELAY 20).

Control (JSON, GET):
  /_requests   every EC2 request so far: {"action", "client_token",
               "instance_type", "max_count", "status", "held", "instances"}
  /_hold_before  the next RunInstances is held BEFORE it reaches UPSTREAM
               (a request still in flight at EC2, its instances not made
               yet): the proxy writes HOLD_DIR/before.N (JSON: the
               ClientToken) and forwards it only once HOLD_DIR/release.N
               exists (or 300 s pass); its answer goes to the client if
               it is still there.
"""
import http.client
import json
import os
import re
import select
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
       "transfer-encoding", "upgrade", "expect"}

lock = threading.Lock()
requests = []
holds_left = 1
held = 0
delay = 0.0
hold_before = 0
held_before = 0


def instance_ids(xml):
    return re.findall(r"<instanceId>([^<]+)</instanceId>", xml)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("ec2_hold: %s\n" % (fmt % args))

    def send_body(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global hold_before
        if self.path == "/_requests":
            with lock:
                body = json.dumps(requests).encode()
            self.send_body(200, body)
        elif self.path == "/_hold_before":
            with lock:
                hold_before += 1
            self.send_body(200, b"{}")
        else:
            self.forward(b"")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.forward(self.rfile.read(n) if n else b"")

    def wait_client_gone(self, seconds):
        """Until the client closes its end (EOF) or seconds pass."""
        sock = self.connection
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([sock], [], [], 0.2)
            if r:
                try:
                    if not sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                        return True
                except BlockingIOError:
                    continue
                except OSError:
                    return True
        return False

    def forward(self, body):
        global holds_left, held, hold_before, held_before
        t0 = time.time()
        params = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        p = {k: v[0] for k, v in params.items()}
        action = p.get("Action", "")
        before = 0
        with lock:
            if action == "RunInstances" and hold_before > 0:
                hold_before -= 1
                held_before += 1
                before = held_before
        if before:
            tmp = os.path.join(hold_dir, ".before.%d" % before)
            with open(tmp, "w") as f:
                json.dump({"client_token": p.get("ClientToken")}, f)
            os.rename(tmp, os.path.join(hold_dir, "before.%d" % before))
            release = os.path.join(hold_dir, "release.%d" % before)
            end = time.time() + 300
            while not os.path.exists(release) and time.time() < end:
                time.sleep(0.1)
            sys.stderr.write("ec2_hold: RunInstances %s held before %s, now forwarded\n"
                             % (p.get("ClientToken"), upstream_name))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        try:
            # 'Host' in headers: http.client sends ours, not one of its own
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            status, rbody = resp.status, resp.read()
            rheaders = [(k, v) for k, v in resp.getheaders()
                        if k.lower() not in HOP and k.lower() != "content-length"]
        finally:
            conn.close()
        rec = {"action": action, "client_token": p.get("ClientToken"),
               "instance_type": p.get("InstanceType"), "max_count": p.get("MaxCount"),
               "status": status, "held": False, "instances": []}
        hold = False
        with lock:
            if action == "RunInstances":
                rec["instances"] = instance_ids(rbody.decode("utf-8", "replace"))
                if holds_left > 0:
                    holds_left -= 1
                    held += 1
                    hold = True
                    rec["held"] = True
                    k = held
            requests.append(rec)
        if hold:
            tmp = os.path.join(hold_dir, ".held.%d" % k)
            with open(tmp, "w") as f:
                json.dump({"client_token": rec["client_token"], "status": status,
                           "instances": rec["instances"]}, f)
            os.rename(tmp, os.path.join(hold_dir, "held.%d" % k))
            gone = self.wait_client_gone(300)
            sys.stderr.write("ec2_hold: RunInstances %s held; the client %s\n"
                             % (rec["client_token"], "went away" if gone else "waited 300 s"))
            if gone:
                self.close_connection = True
                return
        if delay > 0 and time.time() < t0 + delay:
            time.sleep(t0 + delay - time.time())
        self.send_response(status)
        for name, value in rheaders:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(rbody)))
        self.end_headers()
        self.wfile.write(rbody)


def main():
    global up, hold_dir, holds_left, delay
    if len(sys.argv) not in (4, 5, 6):
        sys.exit("usage: ec2_hold.py UPSTREAM PORT_FILE HOLD_DIR [HOLDS [DELAY]]")
    global upstream_name
    up = urllib.parse.urlsplit(sys.argv[1])
    upstream_name = sys.argv[1]
    hold_dir = sys.argv[3]
    if len(sys.argv) >= 5:
        holds_left = int(sys.argv[4])
    if len(sys.argv) == 6:
        delay = float(sys.argv[5])
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, sys.argv[2])
    srv.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""os_hold.py - a proxy between the burst agent and Nova that holds back the
answer of the first POST /servers, for tests/integration/test_openstack_agent.sh
(the agent killed between creating a server and recording it). Python
standard library only.

    os_hold.py UPSTREAM PORT_FILE HOLD_DIR

Listens on 127.0.0.1, a free port, written to PORT_FILE. Every request is
forwarded to UPSTREAM (http://HOST:PORT) with its method, path, body and
headers (X-Auth-Token included: Nova checks the token). The first POST
/servers is answered by Nova (the server is created there), but the answer
is not passed on: HOLD_DIR/held.1 gets {"status", "server"} and the
connection is kept open until the client goes away (the test kills it) or
300 s pass. Later requests pass through.
"""
import http.client
import http.server
import json
import os
import select
import sys
import threading
import time
import urllib.parse

UP = urllib.parse.urlsplit(sys.argv[1])
HOLD_DIR = sys.argv[3]
lock = threading.Lock()
held = 0


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("os_hold: " + (fmt % args) + "\n")

    def forward(self):
        global held
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "keep-alive", "transfer-encoding")}
        conn = http.client.HTTPConnection(UP.hostname, UP.port, timeout=120)
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        hold = False
        if self.command == "POST" and self.path.rstrip("/").endswith("/servers"):
            with lock:
                if held == 0:
                    held = 1
                    hold = True
        if hold:
            try:
                server = json.loads(data)["server"]["id"]
            except (ValueError, KeyError):
                server = None
            tmp = os.path.join(HOLD_DIR, "held.1.tmp")
            with open(tmp, "w") as f:
                json.dump({"status": resp.status, "server": server}, f)
            os.rename(tmp, os.path.join(HOLD_DIR, "held.1"))
            end = time.time() + 300
            while time.time() < end:
                r, _, _ = select.select([self.connection], [], [], 1)
                if r and not self.connection.recv(1):
                    break
            self.close_connection = True
            return
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PUT = forward


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, sys.argv[2])
    srv.serve_forever()


if __name__ == "__main__":
    main()

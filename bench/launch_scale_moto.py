#!/usr/bin/env python3
"""launch_scale_moto.py - moto_server for bench/launch-scale, counting what
it is asked, and the boto3 replay that is the bench's floor.

  launch_scale_moto.py serve PORT_FILE RUNS_FILE
      moto_server (signatures checked once ec2_moto_setup.py has turned
      authentication on) on 127.0.0.1, a free port, written to PORT_FILE.
      Every RunInstances is appended to RUNS_FILE (one JSON object of its
      form parameters a line). GET /_counts answers the number of
      requests so far by action (JSON), without going to moto.
  launch_scale_moto.py replay ENDPOINT SETUP_JSON RUNS_FILE
      the RunInstances of RUNS_FILE again, in order, one at a time (as the
      agent sends them), through boto3 against ENDPOINT (another, fresh
      moto_server set up by ec2_moto_setup.py, whose SETUP_JSON gives the
      keys and image): same MinCount/MaxCount, type, user data, tags,
      token and options. Prints JSON {wall, client_cpu, calls, instances}.
"""
import base64
import io
import json
import sys
import threading
import time
import urllib.parse


def serve(port_file, runs_file):
    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    app = DomainDispatcherApplication(create_backend_app)
    counts = {}
    lock = threading.Lock()
    runs = open(runs_file, "a")

    def counting(environ, start_response):
        if environ.get("PATH_INFO") == "/_counts":
            with lock:
                body = json.dumps(counts).encode()
            start_response("200 OK", [("Content-Type", "application/json"),
                                      ("Content-Length", str(len(body)))])
            return [body]
        if environ.get("REQUEST_METHOD") == "POST":
            n = int(environ.get("CONTENT_LENGTH") or 0)
            raw = environ["wsgi.input"].read(n) if n else b""
            environ["wsgi.input"] = io.BytesIO(raw)
            p = dict(urllib.parse.parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
            action = p.get("Action", "?")
            with lock:
                counts[action] = counts.get(action, 0) + 1
                if action == "RunInstances":
                    runs.write(json.dumps(p) + "\n")
                    runs.flush()
        return app(environ, start_response)

    srv = make_server("127.0.0.1", 0, counting, threaded=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    import os
    os.rename(port_file + ".tmp", port_file)
    srv.serve_forever()


def indexed(p, prefix):
    out, n = [], 1
    while "%s.%d" % (prefix, n) in p:
        out.append(p["%s.%d" % (prefix, n)])
        n += 1
    return out


def run_kwargs(p, ami):
    """boto3 run_instances arguments for the form parameters p of a RunInstances."""
    kw = {"MinCount": int(p["MinCount"]), "MaxCount": int(p["MaxCount"])}
    if "ImageId" in p:
        kw["ImageId"] = ami
    for k in ("InstanceType", "ClientToken", "SubnetId"):
        if k in p:
            kw[k] = p[k]
    if "UserData" in p:
        kw["UserData"] = base64.b64decode(p["UserData"]).decode()
    sgs = indexed(p, "SecurityGroupId")
    if sgs:
        kw["SecurityGroupIds"] = sgs
    lt = {k[len("LaunchTemplate."):]: v for k, v in p.items() if k.startswith("LaunchTemplate.")}
    if lt:
        kw["LaunchTemplate"] = lt
    iam = {k[len("IamInstanceProfile."):]: v for k, v in p.items() if k.startswith("IamInstanceProfile.")}
    if iam:
        kw["IamInstanceProfile"] = iam
    mo = {k[len("MetadataOptions."):]: v for k, v in p.items() if k.startswith("MetadataOptions.")}
    if mo:
        kw["MetadataOptions"] = mo
    specs, s = [], 1
    while "TagSpecification.%d.ResourceType" % s in p:
        tags, t = [], 1
        while "TagSpecification.%d.Tag.%d.Key" % (s, t) in p:
            tags.append({"Key": p["TagSpecification.%d.Tag.%d.Key" % (s, t)],
                         "Value": p.get("TagSpecification.%d.Tag.%d.Value" % (s, t), "")})
            t += 1
        specs.append({"ResourceType": p["TagSpecification.%d.ResourceType" % s], "Tags": tags})
        s += 1
    if specs:
        kw["TagSpecifications"] = specs
    return kw


def replay(endpoint, setup_json, runs_file):
    import boto3

    setup = json.load(open(setup_json))
    runs = [json.loads(line) for line in open(runs_file) if line.strip()]
    ec2 = boto3.client("ec2", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id=setup["access_key"],
                       aws_secret_access_key=setup["secret_key"])
    calls = [run_kwargs(p, setup["ami"]) for p in runs]
    # the client's first request (connection, credentials) off the clock
    ec2.describe_instances(Filters=[{"Name": "tag:burst:bench", "Values": ["none"]}])
    c0, t0 = time.process_time(), time.monotonic()
    got = 0
    for kw in calls:
        got += len(ec2.run_instances(**kw)["Instances"])
    t1, c1 = time.monotonic(), time.process_time()
    print(json.dumps({"wall": t1 - t0, "client_cpu": c1 - c0, "calls": len(calls), "instances": got}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"] and len(sys.argv) == 4:
        serve(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["replay"] and len(sys.argv) == 5:
        replay(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)

#!/usr/bin/env python3
"""agent_stress.py - the two helpers of bench/agent-stress.

    agent_stress.py emulate LAB BRIDGE CLUSTER INSTANCE_SCRIPT ENV_FILE EP,KEY,SECRET...
        the emulated cloud: polls each EC2 endpoint EP (moto_server, with
        its access key and secret) for the cluster's running
        instances and runs each new one's user data as cloud-init would, in
        a namespace on BRIDGE with the instance's private IP
        (INSTANCE_SCRIPT start ...), with the environment of ENV_FILE
        (NAME=VALUE lines) and the launch index and instance id that IMDSv2
        would give. An instance that replaces another of the same node
        (a relaunch) stops the old one's namespace first. Runs until killed.

    agent_stress.py trickle HOST PORT N
        N connections to HOST:PORT, each sending one byte a second and never
        a newline; one closed by the peer is opened again at once. On
        SIGTERM prints {"connects": ..., "closed_by_peer": ...} and exits.

    agent_stress.py sink HOST PORT DEADLINE
        the control case's stand-in for the agent: listens on HOST:PORT,
        reads and drops whatever each connection sends and closes it
        DEADLINE seconds after its accept, as the agent closes a join
        connection with no whole report. Runs until killed.
"""
import asyncio
import base64
import json
import os
import re
import signal
import subprocess
import sys
import time


def emulate(lab, bridge, cluster, inst, env_file, eps):
    import boto3
    env = {}
    for line in open(env_file):
        k, _, v = line.rstrip("\n").partition("=")
        env[k] = v
    clients = []
    for spec in eps:
        ep, ak, sk = spec.split(",")
        clients.append(boto3.client("ec2", endpoint_url=ep, region_name="us-east-1",
                                    aws_access_key_id=ak, aws_secret_access_key=sk))
    seen, current, procs = set(), {}, []
    cache = os.path.join(lab, "ud")
    os.makedirs(cache, exist_ok=True)
    while True:
        for ec2 in clients:
            try:
                pages = list(ec2.get_paginator("describe_instances").paginate(
                    Filters=[{"Name": "tag:burst:cluster", "Values": [cluster]},
                             {"Name": "instance-state-name", "Values": ["running"]}]))
            except Exception as e:  # a slow or busy endpoint: next round
                sys.stderr.write("emulate: %s\n" % e)
                continue
            for page in pages:
                for r in page["Reservations"]:
                    for i in r["Instances"]:
                        iid = i["InstanceId"]
                        if iid in seen:
                            continue
                        # its own join token: the tag the agent puts on it
                        # after RunInstances (its metadata serves it); not
                        # there yet: next round, as the instance would wait
                        token = {t["Key"]: t["Value"] for t in i.get("Tags", [])}.get("burst-join-token")
                        if not token:
                            continue
                        ud = os.path.join(cache, iid + ".sh")
                        a = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")
                        with open(ud, "wb") as f:
                            f.write(base64.b64decode(a["UserData"]["Value"]))
                        idx = i["AmiLaunchIndex"]
                        m = re.search(r"^%d\) NODE='([^']*)'" % idx, open(ud).read(), re.M)
                        seen.add(iid)
                        if not m:
                            continue
                        node = m.group(1)
                        ns = "burst-%s-emu-%s" % (cluster, node)
                        if node in current:
                            subprocess.run([inst, "stop", ns], stderr=subprocess.DEVNULL)
                        current[node] = iid
                        d = os.path.join(lab, "emu", node)
                        os.makedirs(d, exist_ok=True)
                        e = dict(env, BURST_LAUNCH_INDEX=str(idx), BURST_INSTANCE_ID=iid)
                        cmd = [inst, "start", ns, node, i["PrivateIpAddress"] + "/24", bridge, d, "--",
                               "env"] + ["%s=%s" % kv for kv in sorted(e.items())] + ["sh", ud]
                        # the token in the environment, on no command line
                        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                                      env=dict(os.environ, BURST_JOIN_TOKEN=token)))
                        sys.stderr.write("emulate: %.3f %s %s %s\n" % (time.time(), node, iid,
                                                                     i["PrivateIpAddress"]))
        procs = [p for p in procs if p.poll() is None]
        time.sleep(0.2)


async def trickle(host, port, n):
    stats = {"connects": 0, "closed_by_peer": 0}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    async def one():
        while not stop.is_set():
            try:
                r, w = await asyncio.open_connection(host, port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            stats["connects"] += 1
            try:
                while not stop.is_set():
                    w.write(b"x")
                    await w.drain()
                    try:
                        # the peer's close (EOF or reset) ends the wait early
                        if not await asyncio.wait_for(r.read(1), 1.0):
                            break
                    except asyncio.TimeoutError:
                        pass
            except OSError:
                pass
            stats["closed_by_peer"] += not stop.is_set()
            w.close()

    tasks = [asyncio.create_task(one()) for _ in range(n)]
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(stats), flush=True)


async def sink(host, port, deadline):
    async def one(r, w):
        end = asyncio.get_running_loop().time() + deadline
        try:
            while True:
                left = end - asyncio.get_running_loop().time()
                if left <= 0 or not await asyncio.wait_for(r.read(4096), left):
                    break
        except (asyncio.TimeoutError, OSError):
            pass
        w.close()

    server = await asyncio.start_server(one, host, port, backlog=256)
    async with server:
        await server.serve_forever()


def main():
    if len(sys.argv) >= 7 and sys.argv[1] == "emulate":
        emulate(*sys.argv[2:7], sys.argv[7:])
    elif len(sys.argv) == 5 and sys.argv[1] == "trickle":
        asyncio.run(trickle(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    elif len(sys.argv) == 5 and sys.argv[1] == "sink":
        asyncio.run(sink(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

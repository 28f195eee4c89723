#!/usr/bin/env python3
"""agent_stress.py - the helpers of bench/agent-stress.

    agent_stress.py emulate LAB BRIDGE CLUSTER INSTANCE_SCRIPT ENV_FILE EP,KEY,SECRET,N...
        the emulated cloud: one thread per EC2 endpoint EP (moto_server,
        with its access key and secret) polls it for the cluster's running
        instances and starts each new one at once, as cloud-init would run
        its user data, in a namespace on BRIDGE with the instance's private
        IP (INSTANCE_SCRIPT start ..., not waited for: instances boot side
        by side, as a cloud's do), with the environment of ENV_FILE
        (NAME=VALUE lines) and the launch index and instance id that IMDSv2
        would give. The user data is read once per reservation (every
        instance of one RunInstances has the same), not once per instance:
        each call is a moto request that costs this machine's CPU, which a
        cloud's would not. An endpoint is polled every 0.25 s until N of its
        instances have started, then every 2 s (a relaunch is still seen).
        An instance that replaces another of the same node (a relaunch)
        stops the old one's namespace first. Runs until killed.

    agent_stress.py trickle HOST PORT N
        N connections to HOST:PORT, each sending one byte a second and never
        a newline; one closed by the peer is opened again at once. One
        process, one epoll set, no thread or coroutine per connection: what
        it costs is a send a second per connection and a connect per close,
        not the bench's machine (an attacker's would be its own). On SIGTERM
        prints {"connects", "closed_by_peer", "bytes", "cpu_s"} and exits.

    agent_stress.py sink HOST PORT DEADLINE
        the control case's stand-in for the agent: listens on HOST:PORT,
        reads and drops whatever each connection sends and closes it
        DEADLINE seconds after its accept, as the agent closes a join
        connection with no whole report (one epoll set, as the agent's).
        Runs until killed.
"""
import base64
import collections
import errno
import json
import os
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time


def emulate(lab, bridge, cluster, inst, env_file, eps):
    import boto3
    env = {}
    for line in open(env_file):
        k, _, v = line.rstrip("\n").partition("=")
        env[k] = v
    cache = os.path.join(lab, "ud")
    os.makedirs(cache, exist_ok=True)
    lock = threading.Lock()
    current = {}          # node -> its instance (a relaunch stops the old one)
    say = sys.stderr

    def start(procs, i, token, ud):
        iid = i["InstanceId"]
        idx = i["AmiLaunchIndex"]
        m = re.search(r"^%d\) NODE='([^']*)'" % idx, ud, re.M)
        if not m:
            return False
        node = m.group(1)
        ns = "burst-%s-emu-%s" % (cluster, node)
        with lock:
            old = current.get(node)
            current[node] = iid
        if old:
            subprocess.run([inst, "stop", ns], stderr=subprocess.DEVNULL)
        d = os.path.join(lab, "emu", node)
        os.makedirs(d, exist_ok=True)
        udf = os.path.join(cache, iid + ".sh")
        with open(udf, "w") as f:
            f.write(ud)
        e = dict(env, BURST_LAUNCH_INDEX=str(idx), BURST_INSTANCE_ID=iid)
        cmd = [inst, "start", ns, node, i["PrivateIpAddress"] + "/24", bridge, d, "--",
               "env"] + ["%s=%s" % kv for kv in sorted(e.items())] + ["sh", udf]
        # the token in the environment, on no command line; not waited for
        # (the script starts the instance in the background and exits)
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                      env=dict(os.environ, BURST_JOIN_TOKEN=token)))
        say.write("emulate: %.3f %s %s %s\n" % (time.time(), node, iid, i["PrivateIpAddress"]))
        say.flush()
        return True

    def watch(spec):
        ep, ak, sk, want = spec.split(",")
        want = int(want)
        ec2 = boto3.client("ec2", endpoint_url=ep, region_name="us-east-1",
                           aws_access_key_id=ak, aws_secret_access_key=sk)
        seen, uds, started, procs = set(), {}, 0, []
        while True:
            try:
                # which instances have their join token (the tag the agent
                # puts on each after RunInstances, which its metadata
                # serves; not there yet: next round, as the instance would
                # wait): a DescribeTags, light in moto where a
                # DescribeInstances of every instance is not
                tokens = {}
                for page in ec2.get_paginator("describe_tags").paginate(
                        Filters=[{"Name": "key", "Values": ["burst-join-token"]},
                                 {"Name": "resource-type", "Values": ["instance"]}]):
                    for t in page["Tags"]:
                        tokens[t["ResourceId"]] = t["Value"]
                new = sorted(set(tokens) - seen)
                pages = list(ec2.get_paginator("describe_instances").paginate(
                    InstanceIds=new,
                    Filters=[{"Name": "tag:burst:cluster", "Values": [cluster]},
                             {"Name": "instance-state-name", "Values": ["running"]}])) if new else []
                for page in pages:
                    for r in page["Reservations"]:
                        rid = r["ReservationId"]
                        if rid not in uds:
                            a = ec2.describe_instance_attribute(InstanceId=r["Instances"][0]["InstanceId"],
                                                                Attribute="userData")
                            uds[rid] = base64.b64decode(a["UserData"]["Value"]).decode()
                        for i in r["Instances"]:
                            seen.add(i["InstanceId"])
                            started += start(procs, i, tokens[i["InstanceId"]], uds[rid])
            except Exception as e:  # a busy endpoint: next round
                say.write("emulate: %s: %s\n" % (ep, e))
            procs[:] = [p for p in procs if p.poll() is None]
            time.sleep(0.25 if started < want else 2)

    for spec in eps:
        threading.Thread(target=watch, args=(spec,), daemon=True).start()
    threading.Event().wait()


def trickle(host, port, n):
    stats = {"connects": 0, "closed_by_peer": 0, "bytes": 0}
    ep = select.epoll()
    socks = {}            # fd -> [socket, connected]
    due = collections.deque()   # (when, fd, socket): its next byte, in time order
    retry = []            # when to try again a connect the kernel refused
    again = []            # closed by the peer in this batch of events: opened after it
    flags_in = select.EPOLLIN | select.EPOLLRDHUP

    class Stop(Exception):
        pass

    def on_term(*_):
        raise Stop()      # at once, out of a wait of up to a second too

    def opened():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex((host, port))
        if err not in (0, errno.EINPROGRESS):
            s.close()
            retry.append(time.monotonic() + 0.1)
            return
        socks[s.fileno()] = [s, False]
        ep.register(s.fileno(), select.EPOLLOUT | flags_in)

    def closed(fd, by_peer):
        s = socks.pop(fd)[0]
        ep.unregister(fd)
        s.close()
        stats["closed_by_peer"] += by_peer
        if by_peer:
            # not within the batch: a new socket may take fd's number,
            # which a later event of the batch still means for the old one
            again.append(1)
        else:   # refused: again, but not in a tight loop
            retry.append(time.monotonic() + 0.1)

    def send(fd, s):
        try:
            s.send(b"x")
            stats["bytes"] += 1
            return True
        except OSError:
            closed(fd, 1)
            return False

    def reopen():
        for _ in again:
            opened()
        del again[:]

    def loop():
        for _ in range(n):
            opened()
        while True:
            now = time.monotonic()
            while retry and retry[0] <= now:
                retry.pop(0)
                opened()
            while due and due[0][0] <= now:
                _, fd, s = due.popleft()
                if socks.get(fd, [None])[0] is s and send(fd, s):
                    due.append((now + 1, fd, s))
            reopen()
            wait = min([1.0] + [t - now for t in (due[0][0] if due else None, retry[0] if retry else None)
                                if t is not None])
            for fd, ev in ep.poll(max(wait, 0)):
                if fd not in socks:
                    continue
                s, up = socks[fd]
                if not up:
                    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        # refused or reset before it was up: not the peer's close
                        closed(fd, 0)
                        continue
                    socks[fd][1] = True
                    stats["connects"] += 1
                    ep.modify(fd, flags_in)
                    if send(fd, s):
                        due.append((time.monotonic() + 1, fd, s))
                    continue
                try:
                    data = s.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    closed(fd, 1)
            reopen()

    signal.signal(signal.SIGTERM, on_term)
    try:
        loop()
    except Stop:
        pass
    ru = resource.getrusage(resource.RUSAGE_SELF)
    stats["cpu_s"] = round(ru.ru_utime + ru.ru_stime, 3)
    print(json.dumps(stats), flush=True)


def sink(host, port, deadline):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
    ls.listen(256)
    ls.setblocking(False)
    ep = select.epoll()
    ep.register(ls.fileno(), select.EPOLLIN)
    conns = {}
    ends = collections.deque()   # (deadline, fd, socket) in accept order
    while True:
        now = time.monotonic()
        while ends and ends[0][0] <= now:
            _, fd, s = ends.popleft()
            if conns.get(fd) is s:
                del conns[fd]
                ep.unregister(fd)
                s.close()
        for fd, _ in ep.poll(max(0.0, min(1.0, ends[0][0] - now)) if ends else 1.0):
            if fd == ls.fileno():
                while True:
                    try:
                        s, _ = ls.accept()
                    except BlockingIOError:
                        break
                    s.setblocking(False)
                    conns[s.fileno()] = s
                    ep.register(s.fileno(), select.EPOLLIN)
                    ends.append((time.monotonic() + deadline, s.fileno(), s))
                continue
            s = conns.get(fd)
            if s is None:
                continue
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                del conns[fd]
                ep.unregister(fd)
                s.close()


def main():
    if len(sys.argv) >= 7 and sys.argv[1] == "emulate":
        emulate(*sys.argv[2:7], sys.argv[7:])
    elif len(sys.argv) == 5 and sys.argv[1] == "trickle":
        trickle(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) == 5 and sys.argv[1] == "sink":
        sink(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

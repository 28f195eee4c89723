#!/usr/bin/python3
"""ec2_botocore_check.py - parse EC2 XML with botocore's EC2 parser and the
ec2 service model (Debian's python3-botocore), to show that the fake
endpoint (ec2_faults.py) and the unit test fixtures are EC2's wire format.
Prints TAP lines (no plan); exits 1 on a failure.

    ec2_botocore_check.py SRCDIR
"""
import glob
import os
import sys

import botocore.parsers
import botocore.retries.standard
import botocore.session

src = sys.argv[1]
sys.path.insert(0, os.path.join(src, "tests", "integration"))
import ec2_faults as fk  # noqa: E402

model = botocore.session.get_session().get_service_model("ec2")
failed = 0
n = 0


def parse(op, body, status=200):
    parser = botocore.parsers.create_parser("ec2")
    shape = model.operation_model(op).output_shape
    return parser.parse({"body": body.encode() if isinstance(body, str) else body,
                         "headers": {}, "status_code": status}, shape)


def check(name, cond):
    global failed, n
    n += 1
    print("%s %d - botocore: %s" % ("ok" if cond else "not ok", n, name))
    if not cond:
        failed += 1


def instances(r):
    return [i for res in r.get("Reservations", []) for i in res["Instances"]]


fk.reset()
st, body = fk.do_run({"ImageId": "ami-1", "InstanceType": "g5.12xlarge", "MinCount": "1",
                      "MaxCount": "2", "ClientToken": "tok-1",
                      "TagSpecification.1.ResourceType": "instance",
                      "TagSpecification.1.Tag.1.Key": "burst:node",
                      "TagSpecification.1.Tag.1.Value": "a & <b>"}, None)
r = parse("RunInstances", body)
check("fake RunInstances", st == 200 and len(r["Instances"]) == 2
      and r["ReservationId"].startswith("r-")
      and r["Instances"][0]["ClientToken"] == "tok-1"
      and r["Instances"][0]["State"]["Name"] == "pending"
      and r["Instances"][0]["PrivateIpAddress"]
      and r["Instances"][0]["Tags"] == [{"Key": "burst:node", "Value": "a & <b>"}])
st, body = fk.do_describe({"MaxResults": "1"})
r = parse("DescribeInstances", body)
check("fake DescribeInstances page", len(instances(r)) == 1 and r["NextToken"] == "1")
st, body = fk.do_describe({"InstanceId.1": "i-nope"})
r = parse("DescribeInstances", body, st)
check("fake NotFound error", st == 400 and r["Error"]["Code"] == "InvalidInstanceID.NotFound"
      and r["ResponseMetadata"]["RequestId"].startswith("req-"))
# an instance is its region's, as in EC2: another region lists none of
# them, does not know their ids, and its ClientToken is its own
st, body = fk.do_describe({}, "us-west-2")
check("fake regions: another region lists none of the instances",
      st == 200 and instances(parse("DescribeInstances", body)) == [])
st, body = fk.do_describe({"InstanceId.1": "i-00000000000000001"}, "us-west-2")
r = parse("DescribeInstances", body, st)
check("fake regions: another region does not know an instance's id",
      st == 400 and r["Error"]["Code"] == "InvalidInstanceID.NotFound")
st, body = fk.do_run({"ImageId": "ami-1", "InstanceType": "t3.micro", "MinCount": "1", "MaxCount": "1",
                      "ClientToken": "tok-1"}, None, False, "us-west-2")
r = parse("RunInstances", body)
check("fake regions: a ClientToken is one region's",
      st == 200 and len(r["Instances"]) == 1 and r["Instances"][0]["InstanceId"] == "i-00000000000000003")
st, body = fk.do_describe({}, "us-west-2")
check("fake regions: the region lists its own",
      [i["InstanceId"] for i in instances(parse("DescribeInstances", body))] == ["i-00000000000000003"])
r = parse("TerminateInstances", fk.terminate_xml(["i-1"], "req-x"))
check("fake TerminateInstances", r["TerminatingInstances"][0]["InstanceId"] == "i-1")
r = parse("CreateTags", fk.simple_xml("CreateTags", "req-y", "<return>true</return>"))
check("fake CreateTags", r["ResponseMetadata"]["RequestId"] == "req-y")
r = parse("DescribeInstanceTypes", fk.types_xml(["g5.12xlarge", "t3.micro"], "2", "req-z"))
g5 = r["InstanceTypes"][0]
check("fake DescribeInstanceTypes", g5["InstanceType"] == "g5.12xlarge"
      and g5["VCpuInfo"]["DefaultVCpus"] == 48 and g5["MemoryInfo"]["SizeInMiB"] == 196608
      and g5["GpuInfo"]["Gpus"][0]["Count"] == 4
      and g5["GpuInfo"]["Gpus"][0]["MemoryInfo"]["SizeInMiB"] == 24576
      and g5["NetworkInfo"]["EfaSupported"] is True and r["NextToken"] == "2")
for code in ("InsufficientInstanceCapacity", "RequestLimitExceeded", "InternalError",
             "IdempotentParameterMismatch", "AuthFailure"):
    r = parse("RunInstances", fk.error_xml(code, "m <&>", "req-e"), 400)
    check("fake error " + code, r["Error"]["Code"] == code and r["Error"]["Message"] == "m <&>"
          and r["ResponseMetadata"]["RequestId"] == "req-e")

# throttling: the 503 RequestLimitExceeded the buckets answer is what
# botocore's standard retry mode takes for throttling
r = parse("RunInstances", fk.error_xml("RequestLimitExceeded", "Request limit exceeded.", "req-t"), 503)
ctx = botocore.retries.standard.RetryContext(attempt_number=1, parsed_response=r)
check("fake 503 RequestLimitExceeded is throttling to botocore",
      r["Error"]["Code"] == "RequestLimitExceeded" and r["ResponseMetadata"]["HTTPStatusCode"] == 503
      and botocore.retries.standard.ThrottledRetryableChecker().is_retryable(ctx))

# the buckets (EC2's documented numbers, a bucket made small), per region
fk.reset()
fk.set_buckets({"buckets": {"RunInstances.instances": [3, 1]}})
check("fake buckets: EC2's documented sizes", fk.limits["buckets"]["RunInstances"] == [5, 2]
      and fk.limits["buckets"]["TerminateInstances.instances"] == [1000, 20]
      and fk.limits["buckets"]["non-mutating"] == [100, 20])
t0 = 1000.0
run = {"Action": "RunInstances", "MaxCount": "2"}
check("fake buckets: 2 of 3 instances taken, 2 more refused, 1 more taken",
      fk.throttle("r1", "RunInstances", run, t0) is None
      and fk.throttle("r1", "RunInstances", run, t0) == "RunInstances.instances"
      and fk.throttle("r1", "RunInstances", dict(run, MaxCount="1"), t0) is None)
check("fake buckets: another region has its own",
      fk.throttle("r2", "RunInstances", run, t0) is None)
check("fake buckets: refilled at 1 a second",
      fk.throttle("r1", "RunInstances", run, t0 + 1.5) == "RunInstances.instances"
      and fk.throttle("r1", "RunInstances", run, t0 + 2.0) is None)
fk.set_buckets("default")
ok = True
for k in range(3):   # 5 requests, then 2 a second: 3 more requests at once are refused
    ok = ok and fk.throttle("r3", "RunInstances", dict(run, MaxCount="1"), t0) is None
check("fake buckets: RunInstances requests 5 then refused",
      ok and fk.throttle("r3", "RunInstances", dict(run, MaxCount="1"), t0) is None
      and fk.throttle("r3", "RunInstances", dict(run, MaxCount="1"), t0) is None
      and fk.throttle("r3", "RunInstances", dict(run, MaxCount="1"), t0) == "RunInstances")
check("fake buckets: CreateTags not limited",
      all(fk.throttle("r1", "CreateTags", {}, t0) is None for _ in range(200)))
try:
    fk.set_buckets({"buckets": {"RunInstances": [0, 1]}})
    bad = False
except ValueError:
    bad = True
check("fake buckets: a bucket of size 0 refused", bad)
fk.set_buckets({"off": True})
check("fake buckets: off", fk.throttle("r1", "RunInstances", dict(run, MaxCount="100000"), t0) is None)

# the unit test fixtures
fx = os.path.join(src, "tests", "fixtures", "ec2")
ops = {"run_instances.xml": "RunInstances", "describe_page1.xml": "DescribeInstances",
       "describe_page2.xml": "DescribeInstances",
       "describe_instance_types.xml": "DescribeInstanceTypes",
       "describe_instance_types_moto_page1.xml": "DescribeInstanceTypes",
       "describe_instance_types_moto_page2.xml": "DescribeInstanceTypes"}
# what each DescribeInstanceTypes fixture must parse to: types, NextToken
types_pages = {"describe_instance_types.xml": (2, "AAEAAWtypes2"),
               "describe_instance_types_moto_page1.xml": (4, "page-2-token"),
               "describe_instance_types_moto_page2.xml": (6, None)}
for path in sorted(glob.glob(os.path.join(fx, "*.xml"))):
    name = os.path.basename(path)
    body = open(path, "rb").read()
    if name.startswith("error_"):
        r = parse("RunInstances", body, 400)
        check("fixture " + name, bool(r["Error"]["Code"]) and bool(r["Error"]["Message"])
              and bool(r["ResponseMetadata"]["RequestId"]))
    elif name not in ops:
        # a new fixture must be given its operation here, not skipped
        check("fixture " + name + ": known to this check (add it to ops)", False)
    else:
        r = parse(ops[name], body)
        if ops[name] == "RunInstances":
            ok = len(r["Instances"]) == 2 and r["Instances"][0]["Tags"][1]["Value"] == "burst-1 & co"
        elif ops[name] == "DescribeInstances":
            ok = len(instances(r)) in (1, 3)
        else:
            n, tok = types_pages[name]
            ok = len(r["InstanceTypes"]) == n and r.get("NextToken") == tok
        check("fixture " + name, ok)
sys.exit(1 if failed else 0)

#!/usr/bin/python3
"""imds_botocore_check.py - the fake instance metadata service of
ec2_faults.py held against botocore's own IMDS clients (Debian's
python3-botocore): its IMDSv2 session token, the instance role's
credentials, and spot/instance-action before and after a notice.
Prints TAP lines (no plan, numbered from FIRST); exits 1 on a failure.

    imds_botocore_check.py ENDPOINT FIRST
"""
import json
import sys
import urllib.request

from botocore.utils import IMDSFetcher, InstanceMetadataFetcher

ep, n = sys.argv[1].rstrip("/"), int(sys.argv[2]) - 1
failed = 0
PATH = "latest/meta-data/spot/instance-action"


def check(name, cond, diag=""):
    global failed, n
    n += 1
    print("%s %d - botocore: %s" % ("ok" if cond else "not ok", n, name))
    if not cond:
        failed += 1
        if diag:
            print("# " + str(diag).replace("\n", "\n# "))


def spot(notice):
    """the notice the fake gives whoever asks (POST /_spot)"""
    req = urllib.request.Request(ep + "/_spot", data=json.dumps({"*": notice}).encode(), method="POST")
    urllib.request.urlopen(req, timeout=5).read()


def answer(r):
    return False     # no retry: every answer is wanted as it is


f = IMDSFetcher(base_url=ep + "/", timeout=2, num_attempts=1)
token = f._fetch_metadata_token()
check("IMDSFetcher gets an IMDSv2 session token (PUT latest/api/token)", bool(token), token)
r = f._get_request(PATH, answer, token=token)
check("spot/instance-action without a notice: 404", r.status_code == 404, (r.status_code, r.text))
r = f._get_request(PATH, answer, token="not-the-token")
check("... and 401 with a token it did not give", r.status_code == 401, r.status_code)
spot({"action": "terminate", "time": "2026-11-27T17:00:00Z"})
r = f._get_request(PATH, answer, token=token)
try:
    doc = json.loads(r.text)
except ValueError:
    doc = None
check("with a notice: 200, {\"action\": \"terminate\", \"time\": ...} as EC2 gives it",
      r.status_code == 200 and doc == {"action": "terminate", "time": "2026-11-27T17:00:00Z"},
      (r.status_code, r.text))
spot(None)
r = f._get_request(PATH, answer, token=token)
check("the notice withdrawn: 404 again", r.status_code == 404, r.status_code)
creds = InstanceMetadataFetcher(base_url=ep + "/", timeout=2, num_attempts=1).retrieve_iam_role_credentials()
check("InstanceMetadataFetcher reads the instance role's credentials (IMDSv2)",
      creds.get("role_name") == "burst-node-role" and creds.get("access_key") == "ASIAIMDSEXAMPLE"
      and creds.get("token") == "imdsSessionToken", creds)
sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""ec2_moto_setup.py - boto3 helpers for test_ec2_moto.sh (runs with the
python3 that has moto and boto3).

  ec2_moto_setup.py setup ENDPOINT
      before moto checks signatures: create an IAM user allowed ec2:*, its
      access key, and find an AMI; then turn authentication on
      (POST /moto-api/reset-auth 0). Prints JSON {access_key, secret_key, ami}.
  ec2_moto_setup.py userdata ENDPOINT INSTANCE_ID   (AWS_* in the environment)
      prints the instance's userData attribute as EC2 returns it (base64).
  ec2_moto_setup.py subnet ENDPOINT CIDR   (AWS_* in the environment)
      creates a VPC and a subnet of CIDR in it (instances launched there get
      their private IPs from it); prints the subnet's id.
  ec2_moto_setup.py ip ENDPOINT INSTANCE_ID   (AWS_* in the environment)
      prints the instance's private IP.
  ec2_moto_setup.py describe ENDPOINT INSTANCE_ID   (AWS_* in the environment)
      prints the instance as one JSON object: state, type, ip, image, token
      (its ClientToken), metadata_tags (MetadataOptions.InstanceMetadataTags),
      tags {KEY: VALUE} and userdata (decoded).
"""
import base64
import json
import sys
import urllib.request

import boto3


def client(service, endpoint, **kw):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", **kw)


def setup(endpoint):
    anon = dict(aws_access_key_id="AKIDSETUP", aws_secret_access_key="setup")
    iam = client("iam", endpoint, **anon)
    iam.create_user(UserName="burst")
    iam.put_user_policy(UserName="burst", PolicyName="ec2",
                        PolicyDocument=json.dumps({
                            "Version": "2012-10-17",
                            "Statement": [{"Effect": "Allow", "Action": "ec2:*",
                                           "Resource": "*"}]}))
    key = iam.create_access_key(UserName="burst")["AccessKey"]
    images = client("ec2", endpoint, **anon).describe_images(Owners=["amazon"])["Images"]
    ami = sorted(i["ImageId"] for i in images)[0]
    req = urllib.request.Request(endpoint.rstrip("/") + "/moto-api/reset-auth",
                                 data=b"0", method="POST",
                                 headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(req, timeout=10) as r:
        json.load(r)
    print(json.dumps({"access_key": key["AccessKeyId"],
                      "secret_key": key["SecretAccessKey"], "ami": ami}))


def userdata(endpoint, iid):
    ec2 = client("ec2", endpoint)
    a = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")
    print(a.get("UserData", {}).get("Value", ""))


def subnet(endpoint, cidr):
    ec2 = client("ec2", endpoint)
    vpc = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
    print(ec2.create_subnet(VpcId=vpc, CidrBlock=cidr)["Subnet"]["SubnetId"])


def join_token(endpoint, iid):
    """The instance's burst-join-token tag (its own join token, which its
    metadata serves it), or nothing."""
    ec2 = client("ec2", endpoint)
    r = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
    print({t["Key"]: t["Value"] for t in r.get("Tags", [])}.get("burst-join-token", ""))


def private_ip(endpoint, iid):
    ec2 = client("ec2", endpoint)
    r = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
    print(r.get("PrivateIpAddress", ""))


def describe(endpoint, iid):
    ec2 = client("ec2", endpoint)
    i = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
    ud = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData").get("UserData", {}).get("Value", "")
    print(json.dumps({"state": i["State"]["Name"], "type": i["InstanceType"], "ip": i.get("PrivateIpAddress", ""),
                      "tags": {t["Key"]: t["Value"] for t in i.get("Tags", [])},
                      "image": i["ImageId"], "token": i.get("ClientToken", ""),
                      "metadata_tags": i.get("MetadataOptions", {}).get("InstanceMetadataTags", ""),
                      "userdata": base64.b64decode(ud).decode() if ud else ""}))


if __name__ == "__main__":
    if sys.argv[1] == "setup":
        setup(sys.argv[2])
    elif sys.argv[1] == "userdata":
        userdata(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "subnet":
        subnet(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "ip":
        private_ip(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "jointoken":
        join_token(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "describe":
        describe(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: ec2_moto_setup.py setup|userdata|subnet|ip|jointoken|describe ENDPOINT [ID|CIDR]")

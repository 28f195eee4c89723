#!/usr/bin/python3
"""os_keystone_setup.py - what the tests need in a bootstrapped Keystone.

    os_keystone_setup.py AUTH_URL ADMIN_PW BURST_PW NOVA_PW NOVA_URL GLANCE_URL

As admin: projects "service" and "burst", a user "burst" (member of burst),
a user "nova" (admin of service: keystonemiddleware's service user), the
compute and image services with public and internal endpoints at NOVA_URL
and GLANCE_URL (RegionOne).
As burst: an application credential. Prints {"ac_id", "ac_secret",
"project_id", "user_id"} (of burst) as JSON.
One process instead of a dozen openstack CLI runs (each costs seconds).
"""
import json
import sys

from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client


def sess(url, user, pw, project):
    return session.Session(auth=v3.Password(
        auth_url=url, username=user, password=pw, project_name=project,
        user_domain_name="Default", project_domain_name="Default"))


def main():
    url, admin_pw, burst_pw, nova_pw, nova_url, glance_url = sys.argv[1:7]
    ks = client.Client(session=sess(url, "admin", admin_pw, "admin"))
    member = next(r for r in ks.roles.list() if r.name == "member")
    admin = next(r for r in ks.roles.list() if r.name == "admin")
    service = ks.projects.create("service", "default")
    burst = ks.projects.create("burst", "default")
    bu = ks.users.create("burst", domain="default", password=burst_pw)
    ks.roles.grant(member, user=bu, project=burst)
    nu = ks.users.create("nova", domain="default", password=nova_pw)
    ks.roles.grant(admin, user=nu, project=service)
    svc = ks.services.create("nova", type="compute")
    for iface in ("public", "internal"):
        ks.endpoints.create(svc, nova_url, interface=iface, region="RegionOne")
    svc = ks.services.create("glance", type="image")
    for iface in ("public", "internal"):
        ks.endpoints.create(svc, glance_url, interface=iface, region="RegionOne")
    bs = sess(url, "burst", burst_pw, "burst")
    r = bs.post(url + "/users/%s/application_credentials" % bu.id,
                json={"application_credential": {"name": "burst-ac"}})
    ac = r.json()["application_credential"]
    json.dump({"ac_id": ac["id"], "ac_secret": ac["secret"], "project_id": burst.id,
               "user_id": bu.id}, sys.stdout)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""os_nova.py - serve Nova's compute API on 127.0.0.1 for the tests.

Runs the stack of python3-nova's own functional tests in one process: the
API (the real osapi_compute WSGI application from /etc/nova/api-paste.ini),
conductor, scheduler and one compute service with the fake virt driver
(nova.virt.fake.FakeDriver), SQLite databases, and the Placement, Glance,
Neutron and Cinder fixtures. Unlike the functional tests, keystonemiddleware
is not stubbed: every request's token is checked against the Keystone at
--keystone (as the service user "nova" of project "service"), so what the
driver under test got from Keystone is what Nova checks.

Two test hooks. So that a build can fail the way a cloud's does: an image
named "burst-broken" (made here) is refused by the compute driver at spawn
(ImageUnacceptable: Nova aborts the build, the server goes ERROR with a
fault); so is "burst-hostile", whose fault message carries terminal escape
sequences (ESC, OSC, BEL) and a newline, as a hostile or broken cloud's may.
And so that each server has an address of its own in the tests'
network, as a tenant network's DHCP would give (the Neutron fixture gives
every port the same one): once the --address-file exists, holding a /24
prefix such as "10.1.2", each new port's fixed IP is PREFIX.200, .201, ...
and the port keeps the server's project (the fixture's template port would
give it the functional tests' own, hiding it from the server's addresses).

The images of Nova's Glance fixture are also served read-only on
--glance-port by a shim of Glance v2's image reads (GET /v2/images,
/v2/images/ID; Glance itself is not run), so that clients (the openstack
CLI, the driver) can find images by name as in a cloud. As Glance does,
it answers version discovery to anyone and everything else only with a
token that Keystone validates: keystonemiddleware, configured as Nova's is
(the service user "nova"), refuses any other with 401. The list honours
the filters name=, status= and visibility= (and marker=, which ends the
one page); any other query parameter is refused with 400 rather than
ignored. Beside "burst-broken" (active) there is a second image of that
name that is "queued" (an upload not finished), so that a lookup by name
finds one image only when it asks for status=active, as the driver does.

    os_nova.py --port P --glance-port G --keystone URL --service-password PW --info FILE --stop FILE
               [--address-file FILE]

When it serves, FILE (--info) is written: {"image", "broken_image",
"hostile_image", "network"}. It stops when the --stop file appears (or on SIGTERM).
"""
import argparse
import copy
import json
import os
import signal
import sys
import unittest
import urllib.parse

import nova.monkey_patch  # noqa: F401 (eventlet first, as Nova's tests do)

import eventlet
import fixtures
import eventlet.wsgi
from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token
from oslo_config import cfg

from nova.api import wsgi as nova_api_wsgi
from nova.api.openstack import wsgi_app
from nova import exception
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import integrated_helpers
from nova.virt import fake as fake_virt

ARGS = None
BROKEN_IMAGE = "b0b0b0b0-0000-4000-8000-00000000dead"
QUEUED_IMAGE = "b0b0b0b0-0000-4000-8000-00000000cafe"
HOSTILE_IMAGE = "b0b0b0b0-0000-4000-8000-00000000beef"
# a fault that clears a terminal, sets its title, rings it and forges a line
HOSTILE_REASON = "os_nova.py: \x1b[2J\x1b]0;owned\x07the image burst-hostile\ndoes not boot"


def spawn_or_refuse(orig):
    def spawn(self, context, instance, image_meta, *args, **kwargs):
        if getattr(image_meta, "name", None) == "burst-broken":
            raise exception.ImageUnacceptable(
                image_id=image_meta.id, reason="os_nova.py: the image burst-broken does not boot")
        if getattr(image_meta, "name", None) == "burst-hostile":
            raise exception.ImageUnacceptable(image_id=image_meta.id, reason=HOSTILE_REASON)
        return orig(self, context, instance, image_meta, *args, **kwargs)
    return spawn


def addressed_ports(neutron, orig):
    """create_port, with the next address of --address-file's prefix."""
    nxt = [200]

    def create_port(body=None):
        out = orig(body)
        try:
            with open(ARGS.address_file) as f:
                prefix = f.read().strip()
        except FileNotFoundError:
            return out
        if nxt[0] > 254:
            raise RuntimeError("os_nova.py: no address left in %s.0/24" % prefix)
        port = neutron._ports[out["port"]["id"]]
        port["fixed_ips"] = [dict(port["fixed_ips"][0], ip_address="%s.%d" % (prefix, nxt[0]))]
        # Nova shows a port's address only inside its subnet's CIDR: the
        # subnet becomes the tests' network
        sub = neutron._subnets.get(port["fixed_ips"][0].get("subnet_id"))
        if sub is not None and not sub["cidr"].startswith(prefix + "."):
            sub.update(cidr=prefix + ".0/24", gateway_ip=prefix + ".1",
                       allocation_pools=[{"start": prefix + ".200", "end": prefix + ".254"}])
        # the fixture's template port overwrote the server's project, so Nova
        # (which lists the ports of the server's project) would see none
        want = (body or {}).get("port", {})
        for key in ("tenant_id", "project_id"):
            if want.get("tenant_id") or want.get("project_id"):
                port[key] = want.get("tenant_id") or want.get("project_id")
        nxt[0] += 1
        return {"port": copy.deepcopy(port)}
    return create_port


class Serve(integrated_helpers._IntegratedTestBase):
    STUB_KEYSTONE = False
    compute_driver = "fake.FakeDriver"

    def _setup_services(self):
        conf = cfg.CONF
        group = "keystone_authtoken"
        # what keystonemiddleware reads: registered here so that they can be set
        ks_loading.register_auth_conf_options(conf, group)
        conf.register_opts(ks_loading.get_auth_plugin_conf_options("password"), group=group)
        self.flags(compute_driver=self.compute_driver)
        # room for a 100-node burst; no limit on cores and RAM, so that a
        # flavor bigger than the fake host (800000 MB) finds no valid host
        # rather than the quota (the tests set quotas where they want them)
        self.flags(instances=500, cores=-1, ram=-1, group="quota")
        self.flags(auth_strategy="keystone", group="api")
        self.flags(api_paste_config="/etc/nova/api-paste.ini", group="wsgi")
        # validated tokens are cached 10 s (a revoked token is refused after that)
        self.flags(www_authenticate_uri=ARGS.keystone, token_cache_time=10,
                   auth_type="password", auth_url=ARGS.keystone, username="nova",
                   password=ARGS.service_password, project_name="service",
                   user_domain_name="Default", project_domain_name="Default",
                   group=group)
        self.useFixture(fixtures.MonkeyPatch(
            "nova.virt.fake.FakeDriver.spawn", spawn_or_refuse(fake_virt.FakeDriver.spawn)))
        self.neutron.create_port = addressed_ports(self.neutron, self.neutron.create_port)
        self.glance.create(None, {"id": BROKEN_IMAGE, "name": "burst-broken", "status": "active",
                                  "container_format": "raw", "disk_format": "raw",
                                  "visibility": "public", "properties": {}})
        self.glance.create(None, {"id": HOSTILE_IMAGE, "name": "burst-hostile", "status": "active",
                                  "container_format": "raw", "disk_format": "raw",
                                  "visibility": "public", "properties": {}})
        self.glance.create(None, {"id": QUEUED_IMAGE, "name": "burst-broken", "status": "queued",
                                  "container_format": "raw", "disk_format": "raw",
                                  "visibility": "public", "properties": {}})
        # the image reads check tokens as Nova's API does (keystone_authtoken above)
        self.image_authed = auth_token.AuthProtocol(self.image_app, {})
        self.conductor = self._setup_conductor_service()
        self.scheduler = self._setup_scheduler_service()
        self.compute = self._setup_compute_service()
        app = nova_api_wsgi.Loader().load_app("osapi_compute")
        wsgi_app._setup_service(conf.host, "osapi_compute")
        self.app = app

    def glance_app(self, environ, start_response):
        """Version discovery to anyone, as Glance; the rest through
        keystonemiddleware (401 without a token Keystone validates)."""
        if environ.get("PATH_INFO", "").rstrip("/") in ("", "/v2", "/versions"):
            return self.image_app(environ, start_response)
        return self.image_authed(environ, start_response)

    def image_app(self, environ, start_response):
        """Glance's v2 image reads, from the Glance fixture Nova uses."""
        def image_doc(im):
            d = {k: im.get(k) for k in ("id", "name", "status", "visibility", "container_format",
                                          "disk_format", "min_ram", "min_disk", "protected")}
            d.update({"tags": im.get("tags", []), "size": int(im.get("size") or 0),
                      "created_at": "2011-01-01T01:02:03Z", "updated_at": "2011-01-01T01:02:03Z",
                      "self": "/v2/images/" + im["id"], "file": "/v2/images/%s/file" % im["id"],
                      "schema": "/v2/schemas/image"})
            d.update(im.get("properties") or {})
            return d

        def answer(status, doc):
            body = json.dumps(doc).encode()
            start_response(status, [("Content-Type", "application/json"),
                                    ("Content-Length", str(len(body)))])
            return [body]

        path = environ.get("PATH_INFO", "").rstrip("/")
        qs = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        images = list(self.glance.images.values())
        if path in ("", "/v2", "/versions"):
            return answer("200 OK", {"versions": [{"id": "v2.9", "status": "CURRENT", "links": [
                {"rel": "self", "href": "http://127.0.0.1:%d/v2/" % ARGS.glance_port}]}]})
        # keystonemiddleware set this (and dropped any the client sent)
        if environ.get("HTTP_X_IDENTITY_STATUS") != "Confirmed":
            return answer("401 Unauthorized", {"message": "a token Keystone validates is required", "code": 401})
        if path == "/v2/images":
            unknown = sorted(set(qs) - {"name", "status", "visibility", "marker", "limit"})
            if unknown:
                return answer("400 Bad Request", {"message": "os_nova.py's Glance shim does not filter by %s"
                                                  % ", ".join(unknown), "code": 400})
            for key in ("name", "status", "visibility"):
                if key in qs:
                    images = [im for im in images if im.get(key) in qs[key]]
            if "marker" in qs:
                images = []
            return answer("200 OK", {"images": [image_doc(im) for im in images],
                                     "first": "/v2/images", "schema": "/v2/schemas/images"})
        if path.startswith("/v2/images/"):
            im = self.glance.images.get(path[len("/v2/images/"):])
            if im:
                return answer("200 OK", image_doc(im))
        return answer("404 Not Found", {"message": "no such image here", "code": 404})

    def test_serve(self):
        sock = eventlet.listen(("127.0.0.1", ARGS.port))
        eventlet.spawn(eventlet.wsgi.server, sock, self.app, log=sys.stderr, debug=False)
        gsock = eventlet.listen(("127.0.0.1", ARGS.glance_port))
        eventlet.spawn(eventlet.wsgi.server, gsock, self.glance_app, log=sys.stderr, debug=False)
        info = {"image": self.glance.image1["id"], "broken_image": BROKEN_IMAGE,
                "hostile_image": HOSTILE_IMAGE, "network": nova_fixtures.NeutronFixture.network_1["id"]}
        tmp = ARGS.info + ".tmp"
        with open(tmp, "w") as f:
            json.dump(info, f)
        os.rename(tmp, ARGS.info)
        print("os_nova.py: serving on 127.0.0.1:%d" % ARGS.port, file=sys.stderr, flush=True)
        while not os.path.exists(ARGS.stop):
            eventlet.sleep(0.2)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--glance-port", type=int, required=True)
    ap.add_argument("--keystone", required=True)
    ap.add_argument("--service-password", required=True)
    ap.add_argument("--info", required=True)
    ap.add_argument("--stop", required=True)
    ap.add_argument("--address-file", default="/nonexistent")
    ARGS = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    res = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(Serve("test_serve"))
    sys.exit(0 if res.wasSuccessful() else 1)


if __name__ == "__main__":
    main()

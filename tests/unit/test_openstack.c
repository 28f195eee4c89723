/*
 * test_openstack.c - lib/cloud/openstack_api.c on answers recorded from the real
 * Keystone 22 and Nova 26 of tests/integration/os_peers.sh (under
 * tests/fixtures/openstack): the token's expiry and catalog, when a token
 * is refreshed, Nova's error messages and their classes, the credentials
 * file, and that no secret reaches a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ec2.h"
#include "openstack_api.h"
#include "strutil.h"
#include "tap.h"

#ifndef BURST_ABS_SRCDIR
#define BURST_ABS_SRCDIR "."
#endif

static char *slurp(const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/openstack/%s", BURST_ABS_SRCDIR, name);
	return tap_slurp(path, len);
}

static void test_token(void)
{
	struct os_token t;
	burst_err_t err = { 0 };
	size_t len;
	char *js = slurp("token_password.json", &len);

	ok(os_token_parse(js, len, "gAAAAAsubject", NULL, NULL, &t, &err) == 0, "the password token parses: %s", err.msg);
	is_str(t.id, "gAAAAAsubject", "its id is X-Subject-Token");
	ok(t.expires - t.issued == 3600, "it lives an hour (Keystone's default)");
	has_str(t.compute_url ? t.compute_url : "", "/v2.1", "the public compute endpoint from the catalog");
	ok(t.image_url && !strstr(t.image_url + strlen(t.image_url) - 1, "/"), "the image endpoint, no trailing slash");
	ok(t.project_id && strlen(t.project_id) == 32, "the project id");
	ok(!os_token_expiring(&t, t.issued + 10), "a fresh token is used");
	ok(!os_token_expiring(&t, t.expires - OS_TOKEN_REFRESH_MARGIN - 1), "... until the margin");
	ok(os_token_expiring(&t, t.expires - OS_TOKEN_REFRESH_MARGIN), "... then replaced before it expires");
	ok(os_token_expiring(&t, t.expires + 5), "an expired token is replaced");
	t.expires = t.issued + 120;
	ok(!os_token_expiring(&t, t.issued + 59) && os_token_expiring(&t, t.issued + 60),
	   "a short-lived token (120 s) is replaced at half its life");
	os_token_free(&t);

	ok(os_token_parse(js, len, "s", "internal", "RegionOne", &t, &err) == 0 && t.compute_url,
	   "the internal interface in RegionOne");
	os_token_free(&t);
	ok(os_token_parse(js, len, "s", "admin", NULL, &t, &err) < 0, "no admin compute endpoint: refused");
	has_str(err.msg, "no compute endpoint for interface admin", "the message says which");
	has_str(err.msg, "RegionOne/public", "... and lists what the catalog has");
	ok(os_token_parse(js, len, "s", NULL, "RegionTwo", &t, &err) < 0, "no compute endpoint in RegionTwo");
	has_str(err.msg, "in region RegionTwo", "the message names the region");
	ok(os_token_parse(js, len, NULL, NULL, NULL, &t, &err) < 0, "no X-Subject-Token: refused");
	ok(os_token_parse("{\"error\": 1}", 12, "s", NULL, NULL, &t, &err) < 0, "not a token: refused");
	free(js);
}

static void test_errors(void)
{
	size_t len;
	char *js, *m;

	js = slurp("create_400.json", &len);
	m = os_error_message(js);
	has_str(m ? m : "", "Invalid input for field/attribute imageRef", "Nova's 400 message");
	is_str(os_class_name(os_classify(400, m)), "PERMANENT", "400: permanent");
	free(m);
	free(js);
	js = slurp("create_403_quota.json", &len);
	m = os_error_message(js);
	has_str(m ? m : "", "Quota exceeded for instances", "Nova's quota message");
	is_str(os_class_name(os_classify(403, m)), "QUOTA", "403 quota exceeded: quota");
	free(m);
	free(js);
	js = slurp("token_401.json", &len);
	m = os_error_message(js);
	has_str(m ? m : "", "requires authentication", "Keystone's 401 message");
	is_str(os_class_name(os_classify(401, m)), "AUTH", "401: auth");
	free(m);
	free(js);
	is_str(os_class_name(os_classify(403, "Policy doesn't allow x")), "AUTH", "403 by policy: auth");
	is_str(os_class_name(os_classify(409, "Cannot 'delete' instance while it is in task_state")), "TRANSIENT", "409: transient");
	is_str(os_class_name(os_classify(503, NULL)), "TRANSIENT", "503: transient");
	is_str(os_class_name(os_classify(429, NULL)), "THROTTLED", "429: throttled");
	is_str(os_class_name(os_classify(404, NULL)), "NOT_FOUND", "404: not found");
	is_str(os_class_name(os_classify(0, "No valid host was found. ")), "CAPACITY", "an ERROR server's No valid host: capacity");
	js = slurp("server_error.json", &len);
	has_str(js, "\"status\": \"ERROR\"", "the recorded server is ERROR");
	has_str(js, "the image burst-broken does not boot", "... with its fault");
	free(js);
	ok(os_error_message("not json") == NULL, "no message from a non-JSON body");
	/* the cloud's text is written out as it enters: an escape sequence and
	 * a newline in a fault or an error body reach no log, reason or terminal */
	m = os_error_message("{\"badRequest\": {\"code\": 400, \"message\": \"bad\\u001b[2J\\u001b]0;x\\u0007\\nforged log line\"}}");
	is_str(m, "bad\\x1b[2J\\x1b]0;x\\x07\\x0aforged log line", "a message's ESC, BEL and newline are written out");
	free(m);
	m = os_cloud_text("  Build of instance x aborted: \033[31mred\n\302\233" "2J  ");
	is_str(m, "Build of instance x aborted: \\x1b[31mred\\x0a\\u009b2J", "a fault: written out and trimmed");
	free(m);
	/* found by tests/fuzz/fuzz_openstack: a body that is JSON but no object
	 * (a proxy's "503", a bare string) was walked as an object */
	ok(os_error_message("503") == NULL, "no message from a JSON number");
	ok(os_error_message("\"Service Unavailable\"") == NULL, "no message from a JSON string");
	ok(os_error_message("[{\"message\": \"x\"}]") == NULL, "no message from a JSON array");
}

static void test_auth_file(void)
{
	char path[] = "/tmp/test_openstack.XXXXXX";
	int fd = mkstemp(path);
	struct os_auth a;
	burst_err_t err = { 0 };
	FILE *f;

	if (fd < 0) {
		printf("Bail out! mkstemp\n");
		exit(1);
	}
	f = fdopen(fd, "w");
	fprintf(f, "# from Horizon\nexport OS_AUTH_URL=https://keystone.example:5000/v3\n"
		"export OS_USERNAME=\"burst\"\nexport OS_PASSWORD='s3cr3t-pw'\nOS_PROJECT_NAME=hpc\n"
		"OS_IDENTITY_API_VERSION=3\n");
	fclose(f);
	chmod(path, 0644);
	ok(os_auth_from_file(path, &a, &err) < 0, "a file others can read is refused");
	has_str(err.msg, "chmod 600", "the message says what to do");
	ok(!strstr(err.msg, "s3cr3t"), "no secret in the message");
	chmod(path, 0600);
	ok(os_auth_from_file(path, &a, &err) == 0, "an openrc file parses: %s", err.msg);
	is_str(a.auth_url, "https://keystone.example:5000/v3", "OS_AUTH_URL");
	is_str(a.username, "burst", "a double-quoted value");
	is_str(a.password, "s3cr3t-pw", "a single-quoted value");
	is_str(a.project_name, "hpc", "without export");
	ok(a.user_domain == NULL, "no domain: the default later");
	os_auth_free(&a);

	f = fopen(path, "w");
	fprintf(f, "OS_AUTH_URL=https://k/v3\nOS_APPLICATION_CREDENTIAL_ID=abc\n");
	fclose(f);
	ok(os_auth_from_file(path, &a, &err) < 0, "an application credential without its secret is refused");
	has_str(err.msg, "OS_APPLICATION_CREDENTIAL_SECRET", "the message names what is missing");
	f = fopen(path, "w");
	fprintf(f, "OS_AUTH_URL=https://k/v3\nOS_USERNAME=u\nOS_PASSWORD=hunter22\n");
	fclose(f);
	ok(os_auth_from_file(path, &a, &err) < 0, "a password without a project is refused");
	has_str(err.msg, "OS_PROJECT_NAME", "the message names the key");
	f = fopen(path, "w");
	fprintf(f, "OS_AUTH_URL=https://k/v3\nthis line hunter22\n");
	fclose(f);
	ok(os_auth_from_file(path, &a, &err) < 0, "a bad line is refused");
	has_str(err.msg, ":2:", "... naming file:line");
	ok(!strstr(err.msg, "hunter22"), "... and not its text");
	unlink(path);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void test_auth_clouds_yaml(void)
{
	char path[] = "/tmp/test_openstack_clouds.XXXXXX";
	int fd = mkstemp(path);
	struct os_auth a;
	burst_err_t err = { 0 };

	if (fd < 0) {
		printf("Bail out! mkstemp\n");
		exit(1);
	}
	close(fd);
	/* as openstacksdk writes one: two clouds, comments, quoting */
	write_file(path, "# clouds.yaml\nclouds:\n"
		   "  lab:\n    auth:\n      auth_url: http://127.0.0.1:5000/v3\n"
		   "      username: demo\n      password: \"p4ss: w0rd\"\n"
		   "      project_name: demo\n      user_domain_name: Default\n"
		   "      project_domain_name: Default\n"
		   "    region_name: RegionOne\n    interface: internal\n    identity_api_version: 3\n"
		   "  hpc:\n    auth_type: v3applicationcredential\n    auth:\n"
		   "      auth_url: https://keystone.example/v3\n"
		   "      application_credential_id: 'ac-1234'\n"
		   "      application_credential_secret: hunter22-secret\n"
		   "    region_name: Two\n");
	chmod(path, 0640);
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "a clouds.yaml the group can read is refused");
	has_str(err.msg, "chmod 600", "... saying what to do");
	chmod(path, 0600);
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) == 0, "a password cloud reads: %s", err.msg);
	is_str(a.auth_url, "http://127.0.0.1:5000/v3", "auth_url");
	is_str(a.username, "demo", "username");
	is_str(a.password, "p4ss: w0rd", "a quoted password with a colon");
	is_str(a.project_name, "demo", "project_name");
	is_str(a.user_domain, "Default", "user_domain_name");
	is_str(a.region, "RegionOne", "region_name");
	is_str(a.interface, "internal", "interface");
	ok(a.ac_id == NULL, "no application credential");
	has_str(a.source, "cloud lab of", "the source names the cloud");
	os_auth_free(&a);
	ok(os_auth_from_clouds_yaml(path, "hpc", &a, &err) == 0, "an application credential cloud reads: %s", err.msg);
	is_str(a.ac_id, "ac-1234", "application_credential_id");
	is_str(a.ac_secret, "hunter22-secret", "application_credential_secret");
	is_str(a.region, "Two", "its own region");
	ok(a.username == NULL, "no user");
	os_auth_free(&a);

	ok(os_auth_from_clouds_yaml(path, "nope", &a, &err) < 0, "a cloud the file lacks is refused");
	has_str(err.msg, "it has: lab, hpc", "... naming the clouds it has");
	ok(!strstr(err.msg, "hunter22") && !strstr(err.msg, "p4ss"), "... and no secret");

	write_file(path, "clouds:\n  lab:\n    auth:\n      auth_url: http://k/v3\n      password: [hunter22\n");
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "broken YAML is refused");
	has_str(err.msg, path, "... naming the file");
	ok(strstr(err.msg, ":6:") != NULL || strstr(err.msg, ":5:") != NULL, "... and the line: %s", err.msg);
	ok(!strstr(err.msg, "hunter22"), "... and not the secret");

	write_file(path, "clouds:\n  lab:\n    auth:\n      auth_url: http://k/v3\n      username: u\n"
		   "      password: hunter22\n");
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "a password without a project is refused");
	has_str(err.msg, "project_name", "... naming the key");

	write_file(path, "clouds:\n  lab:\n    auth_type: v3oidcpassword\n    auth:\n      auth_url: http://k/v3\n");
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "an auth_type the driver lacks is refused");
	has_str(err.msg, "v3oidcpassword", "... naming it");

	write_file(path, "clouds:\n  lab:\n    auth_type: v3applicationcredential\n    auth:\n"
		   "      auth_url: http://k/v3\n      application_credential_id: x\n");
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "an application credential without its secret is refused");
	has_str(err.msg, "application_credential_secret", "... naming what is missing");

	write_file(path, "clouds:\n  lab:\n    auth:\n      auth_url:\n        - http://k/v3\n");
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "a list where a value belongs is refused");
	has_str(err.msg, ":5: auth: auth_url is not a plain value", "... naming the line and the key");

	write_file(path, "OS_AUTH_URL=http://k/v3\n");
	ok(os_auth_from_clouds_yaml(path, "lab", &a, &err) < 0, "an openrc file is not a clouds.yaml");
	has_str(err.msg, "no 'clouds:' mapping", "... saying so");
	unlink(path);
}

static void test_flavors(void)
{
	struct ec2_instance_types l = { 0 };
	burst_err_t err = { 0 };
	char *aliases[] = { "a100:A100-80GB", "VGPU:A10" };
	size_t len, i;
	char *js = slurp("flavors_detail_2.61.json", &len);
	const struct ec2_instance_type *gpu = NULL, *vgpu = NULL, *small = NULL;

	ok(os_parse_flavors(js, aliases, 2, &l, &err) == 0, "Nova's flavors (2.61, extra_specs inline) parse: %s", err.msg);
	is_num(l.n, 8, "eight flavors");
	for (i = 0; i < l.n; i++) {
		if (!strcmp(l.v[i].name, "rec.gpu4"))
			gpu = &l.v[i];
		if (!strcmp(l.v[i].name, "rec.vgpu"))
			vgpu = &l.v[i];
		if (!strcmp(l.v[i].name, "m1.small"))
			small = &l.v[i];
	}
	ok(small && small->vcpus == 1 && small->memory_mib == 2048 && small->storage_gb == 20 && small->gpu_count == 0,
	   "m1.small: 1 vCPU, 2048 MiB, 20 GiB, no accelerator");
	ok(gpu && gpu->vcpus == 8 && gpu->memory_mib == 65536 && gpu->storage_gb == 140,
	   "rec.gpu4: 8 vCPUs, 64 GiB, disk 40 + ephemeral 100 GiB");
	ok(gpu && gpu->gpu_count == 4 && gpu->gpu_name && !strcmp(gpu->gpu_name, "A100-80GB"),
	   "pci_passthrough:alias=a100:4: 4 A100-80GB through the alias table");
	ok(vgpu && vgpu->gpu_count == 1 && vgpu->gpu_name && !strcmp(vgpu->gpu_name, "A10"),
	   "resources:VGPU=1: one accelerator of alias VGPU");
	ec2_instance_types_free(&l);
	ok(os_parse_flavors(js, NULL, 0, &l, &err) == 0 && l.n == 8, "without an alias table");
	for (i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].name, "rec.gpu4"))
			ok(l.v[i].gpu_name && !strcmp(l.v[i].gpu_name, "a100"), "an alias not in the table is its own model name");
	ec2_instance_types_free(&l);
	ok(os_parse_flavors("{\"servers\": []}", NULL, 0, &l, &err) < 0, "not a flavors answer: refused");
	free(js);
}

static void test_redact(void)
{
	char msg[128] = "Keystone said pw=hunter22 twice: hunter22";
	const char *secrets[] = { "hunter22", NULL };

	os_redact(msg, sizeof(msg), secrets);
	is_str(msg, "Keystone said pw=[redacted] twice: [redacted]", "secrets are redacted");
}

int main(void)
{
	test_token();
	test_errors();
	test_auth_file();
	test_auth_clouds_yaml();
	test_flavors();
	test_redact();
	return done_testing();
}

/*
 * test_gce.c - lib/cloud/gce.c and gce_auth.c without a network: how
 * Google's answers are classed, its errors, operations and instance
 * listings read (its text's control characters written out), VM names and
 * labels, the bulk insert's body, the service-account key file's checks,
 * the RS256 JWT (verified here with the key's public half), tokens and
 * their refresh, and that no secret reaches a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "gce.h"
#include "gce_auth.h"
#include "gce_catalog.h"
#include "strutil.h"
#include "tap.h"

static void test_classify(void)
{
	ok(gce_classify(403, "rateLimitExceeded", "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'")
	   == GCE_THROTTLED, "403 rateLimitExceeded is a throttle, though its message says 'Quota exceeded'");
	ok(gce_classify(403, "userRateLimitExceeded", "x") == GCE_THROTTLED, "userRateLimitExceeded too");
	ok(gce_classify(429, "", "") == GCE_THROTTLED, "429");
	ok(gce_classify(403, "", "Rate Limit Exceeded") == GCE_THROTTLED, "the text slurm-gcp retries on");
	ok(gce_classify(0, "ZONE_RESOURCE_POOL_EXHAUSTED", "The zone does not have enough resources") == GCE_CAPACITY,
	   "ZONE_RESOURCE_POOL_EXHAUSTED: capacity");
	ok(gce_classify(0, "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS", "") == GCE_CAPACITY, "..._WITH_DETAILS too");
	ok(gce_classify(503, "", "The zone 'projects/p/zones/z' does not have enough resources available to fulfill "
			"the request.") == GCE_CAPACITY, "a 503 that says so: capacity, not a transient error");
	ok(gce_classify(0, "QUOTA_EXCEEDED", "Quota 'CPUS' exceeded.  Limit: 24.0 in region us-central1.") == GCE_QUOTA,
	   "QUOTA_EXCEEDED: quota");
	ok(gce_classify(403, "quotaExceeded", "Quota 'N2_CPUS' exceeded") == GCE_QUOTA, "403 quotaExceeded: quota");
	ok(gce_classify(401, "authError", "") == GCE_AUTH, "401: auth");
	ok(gce_classify(403, "forbidden", "Required 'compute.instances.create' permission") == GCE_AUTH, "403: auth");
	ok(gce_classify(404, "notFound", "") == GCE_NOT_FOUND, "404");
	ok(gce_classify(409, "alreadyExists", "") == GCE_EXISTS, "409");
	ok(gce_classify(400, "invalid", "") == GCE_PERMANENT, "400: permanent");
	ok(gce_classify(412, "conditionNotMet", "") == GCE_TRANSIENT, "412 (a stale fingerprint): asked again");
	ok(gce_classify(500, "backendError", "") == GCE_TRANSIENT && gce_classify(0, NULL, NULL) == GCE_PERMANENT,
	   "500 transient; an operation error of no known code permanent");
	ok(gce_classify(0, "RESOURCE_ALREADY_EXISTS", "") == GCE_EXISTS, "an operation's RESOURCE_ALREADY_EXISTS");
	ok(gce_classify(200, NULL, NULL) == GCE_OK, "200");
}

static void test_errors(void)
{
	char r[64], m[256];

	ok(gce_error_parse("{\"error\":{\"code\":403,\"message\":\"Quota exceeded\\u001b[2J\\nfor x\","
			   "\"errors\":[{\"message\":\"m\",\"domain\":\"usageLimits\",\"reason\":\"rateLimitExceeded\"}]}}",
			   r, sizeof(r), m, sizeof(m)) == 0, "an API error parses");
	is_str(r, "rateLimitExceeded", "its first reason");
	is_str(m, "Quota exceeded\\x1b[2J\\x0afor x", "its message, control characters written out");
	ok(gce_error_parse("{\"error\":{\"code\":400,\"message\":\"bad\",\"status\":\"INVALID_ARGUMENT\","
			   "\"details\":[{\"@type\":\"x\",\"reason\":\"BAD_THING\"}]}}", r, sizeof(r), m, sizeof(m)) == 0 &&
	   !strcmp(r, "BAD_THING"), "the newer shape: the reason of its details");
	ok(gce_error_parse("[1,2]", r, sizeof(r), m, sizeof(m)) < 0 && !r[0] && !m[0], "not an error body: -1, empty");
	ok(gce_error_parse("{\"error\":\"invalid_grant\"}", r, sizeof(r), m, sizeof(m)) < 0, "OAuth's shape is not this");
}

static void test_names(void)
{
	char n[64], n2[64], v[64], back[64];

	gce_vm_name("burst", "gpu-1", 2, n);
	is_str(n, "burst-gpu-1-2", "CLUSTER-NODE-ATTEMPT");
	gce_vm_name("Site.A", "Node_07", 1, n);
	is_str(n, "site-a-node-07-1", "lower case, '.' and '_' become '-'");
	gce_vm_name("9lives", "n", 1, n);
	is_str(n, "b9lives-n-1", "a name starts with a letter");
	gce_vm_name("cluster-with-a-rather-long-name", "node-with-a-long-name-as-well-0001", 3, n);
	gce_vm_name("cluster-with-a-rather-long-name", "node-with-a-long-name-as-well-0002", 3, n2);
	ok(strlen(n) == 63 && strlen(n2) == 63 && strcmp(n, n2), "long names: 63 characters, still distinct (%s, %s)", n, n2);
	ok(n[62] == '3' && n[61] == '-', "... ending in the attempt");
	ok(strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789-") == 63, "... of GCE's characters only");

	ok(gce_label_value("gpu-1", v) == 0 && !strcmp(v, "gpu-1"), "a label-safe value is itself");
	ok(gce_label_value("Node.7", v) == 0 && !strcmp(v, "hex--4e6f64652e37"), "another is hex: %s", v);
	ok(gce_label_decode(v, back, sizeof(back)) == 0 && !strcmp(back, "Node.7"), "and decodes back");
	ok(gce_label_value("hex--6161", v) == 0 && strcmp(v, "hex--6161"), "a value that looks encoded is encoded");
	ok(gce_label_decode(v, back, sizeof(back)) == 0 && !strcmp(back, "hex--6161"), "... and comes back whole");
	ok(gce_label_value("ABCDEFGHIJKLMNOPQRSTUVWXYZABCD", v) < 0, "30 bytes that need hex: no label");
	ok(gce_label_decode("hex--4", back, sizeof(back)) < 0 && gce_label_decode("hex--zz", back, sizeof(back)) < 0 &&
	   gce_label_decode("hex--00", back, sizeof(back)) < 0, "a broken hex value is refused");

	ok(gce_parse_time("2026-05-01T10:00:00.123-07:00") == 1777654800, "RFC 3339 with an offset");
	ok(gce_parse_time("2026-05-01T17:00:00Z") == 1777654800 && gce_parse_time("2026-05-01T18:30:00+01:30") == 1777654800,
	   "Z and a positive offset");
	ok(gce_parse_time("yesterday") == 0 && gce_parse_time(NULL) == 0 && gce_parse_time("2026-05-01T17:00:00junk") == 0,
	   "unreadable: 0");
	is_str(gce_basename("https://x/compute/v1/projects/p/zones/us-central1-a"), "us-central1-a", "basename of a URL");
}

static const char bulk_op[] =
	"{\"kind\":\"compute#operation\",\"id\":\"1\",\"name\":\"operation-1-abc\",\"operationType\":\"bulkInsert\","
	"\"status\":\"DONE\",\"region\":\"https://x/compute/v1/projects/p/regions/us-central1\","
	"\"operationGroupId\":\"ogid-1\",\"targetLink\":\"https://x/compute/v1/projects/p/regions/us-central1/instances/bulkInsert\","
	"\"httpErrorStatusCode\":503,"
	"\"error\":{\"errors\":[{\"code\":\"QUOTA_EXCEEDED\",\"message\":\"Quota 'CPUS'\\u009b exceeded\"},"
	"{\"code\":\"ZONE_RESOURCE_POOL_EXHAUSTED\",\"message\":\"no room\"}]},"
	"\"instancesBulkInsertOperationMetadata\":{\"perLocationStatus\":{\"zones/us-central1-a\":{\"status\":\"DONE\","
	"\"targetVmCount\":3,\"createdVmCount\":\"2\",\"failedToCreateVmCount\":1}}}}";

static void test_ops(void)
{
	struct gce_op op;
	struct gce_ops l = { 0 };
	burst_err_t err;
	char buf[300], *next = NULL;

	ok(gce_op_parse(bulk_op, &op, &err) == 0, "a bulk insert's operation parses");
	ok(gce_op_done(&op) && !strcmp(op.type, "bulkInsert") && !strcmp(op.region, "us-central1") && !op.zone,
	   "DONE, bulkInsert, its region's short name");
	is_str(op.group, "ogid-1", "its operation group");
	ok(op.nlocs == 1 && op.locs[0].created == 2 && op.locs[0].failed == 1 && op.locs[0].target == 3,
	   "its per-location status, int64 as a string or a number");
	ok(op.nerrors == 2 && op.errors[0].cls == GCE_QUOTA && op.errors[1].cls == GCE_CAPACITY, "each error classed");
	ok(gce_op_class(&op) == GCE_CAPACITY, "a capacity error among them makes it capacity (the next zone)");
	gce_op_errors(&op, buf, sizeof(buf));
	is_str(buf, "QUOTA_EXCEEDED: Quota 'CPUS'\\u009b exceeded; ZONE_RESOURCE_POOL_EXHAUSTED: no room",
	       "the errors in one line, a C1 control written out");
	gce_op_free(&op);
	ok(gce_op_parse("{\"kind\":\"compute#operation\"}", &op, &err) < 0, "no name or status: not an operation");
	ok(gce_op_parse("{\"name\":\"op\",\"status\":\"RUNNING\"}", &op, &err) == 0 && !gce_op_done(&op) &&
	   gce_op_class(&op) == GCE_OK, "a running operation");
	gce_op_free(&op);
	ok(gce_ops_parse("{\"kind\":\"compute#operationAggregatedList\",\"items\":{\"zones/a\":{\"operations\":["
			 "{\"name\":\"o1\",\"status\":\"DONE\",\"zone\":\"z/a\",\"error\":{\"errors\":[{\"code\":"
			 "\"ZONE_RESOURCE_POOL_EXHAUSTED\",\"message\":\"m\"}]},\"targetLink\":\"x/instances/vm-1\"}]},"
			 "\"zones/b\":{\"warning\":{\"code\":\"NO_RESULTS_ON_PAGE\"}}},\"nextPageToken\":\"p2\"}",
			 &l, &next, &err) == 0, "an aggregated listing of operations parses");
	ok(l.n == 1 && !strcmp(l.v[0].target, "vm-1") && l.v[0].errors[0].cls == GCE_CAPACITY && next &&
	   !strcmp(next, "p2"), "its operation, target, error and next page");
	free(next);
	gce_ops_free(&l);
}

static void test_vms(void)
{
	struct gce_vms l = { 0 };
	struct gce_vm v;
	burst_err_t err;
	char *next = NULL;

	ok(gce_vms_parse("{\"kind\":\"compute#instanceAggregatedList\",\"items\":{"
			 "\"zones/us-central1-a\":{\"instances\":[{\"name\":\"c-n-1-1\",\"id\":\"4100000000000000123\","
			 "\"zone\":\"https://x/zones/us-central1-a\",\"status\":\"RUNNING\","
			 "\"creationTimestamp\":\"2026-05-01T10:00:00.000-07:00\",\"machineType\":\"https://x/machineTypes/n2-standard-4\","
			 "\"networkInterfaces\":[{\"networkIP\":\"10.128.0.7\"}],\"metadata\":{\"fingerprint\":\"abc=\"},"
			 "\"labels\":{\"burst-cluster\":\"c\",\"burst-node\":\"hex--4e2e31\",\"burst-attempt\":\"1\","
			 "\"burst-batch\":\"burst-00ff\"},\"scheduling\":{\"provisioningModel\":\"SPOT\"}}]},"
			 "\"zones/us-central1-b\":{\"instances\":[{\"name\":\"evil\\u001b]0;x\\u0007\",\"status\":\"STAGING\","
			 "\"networkInterfaces\":[{\"networkIP\":\"10.0.0.1; rm -rf\"}]}]},"
			 "\"zones/us-central1-c\":{\"warning\":{\"code\":\"NO_RESULTS_ON_PAGE\"}}}}", &l, &next, &err) == 0,
	   "an aggregated listing of instances parses");
	ok(l.n == 2 && !next, "two VMs, the last page");
	ok(!strcmp(l.v[0].zone, "us-central1-a") && !strcmp(l.v[0].ip, "10.128.0.7") &&
	   !strcmp(l.v[0].machine_type, "n2-standard-4") && !strcmp(l.v[0].fingerprint, "abc="),
	   "its zone, networkIP, machine type, fingerprint");
	ok(!strcmp(l.v[0].node, "N.1") && !strcmp(l.v[0].cluster, "c") && !strcmp(l.v[0].attempt, "1") &&
	   !strcmp(l.v[0].batch, "burst-00ff") && l.v[0].preemptible, "its labels, the node's decoded; SPOT");
	ok(!strcmp(l.v[0].id, "4100000000000000123"), "its id (a uint64 as a string)");
	is_str(l.v[1].name, "evil\\x1b]0;x\\x07", "a name's control characters written out");
	ok(l.v[1].ip == NULL, "an address that is not one is not taken");
	ok(!l.v[0].has_token && !l.v[1].has_token, "no join token in their metadata");
	gce_vms_free(&l);
	ok(gce_vms_parse("{\"items\":[{\"name\":\"t\",\"status\":\"RUNNING\",\"metadata\":{\"items\":["
			 "{\"key\":\"burst-node\",\"value\":\"n7\"},{\"key\":\"burst-join-token\",\"value\":\"tk\"}]}},"
			 "{\"name\":\"e\",\"status\":\"RUNNING\",\"metadata\":{\"items\":["
			 "{\"key\":\"burst-join-token\",\"value\":\"\"}]}}]}", &l, &next, &err) == 0 && l.n == 2,
	   "VMs with metadata items parse");
	ok(l.v[0].has_token && !strcmp(l.v[0].node, "n7") && !l.v[1].has_token,
	   "a join token in the metadata is seen; an empty one is none");
	gce_vms_free(&l);
	ok(gce_vms_parse("{\"kind\":\"compute#instanceList\",\"items\":[{\"name\":\"a\",\"status\":\"RUNNING\"}],"
			 "\"nextPageToken\":\"7\"}", &l, &next, &err) == 0 && l.n == 1 && next && !strcmp(next, "7"),
	   "a zonal listing, with its next page");
	free(next);
	gce_vms_free(&l);
	ok(gce_vms_parse("{\"foo\":1}", &l, &next, &err) < 0, "not a listing: refused");
	ok(gce_vm_parse("{\"name\":\"x\",\"id\":4100000000000000999,\"status\":\"RUNNING\"}", &v, &err) == 0 &&
	   !strcmp(v.id, "4100000000000000999"), "an id as a number too");
	gce_vm_free(&v);
}

static void test_bulk_body(void)
{
	const char *names[] = { "c-a-1", "c-b-1" }, *zones[] = { "us-central1-a", "us-central1-f" }, *tags[] = { "burst" };
	struct gce_kv labels[] = { { "burst-cluster", "c" } }, md[] = { { "startup-script", "#!/bin/sh\necho \"x\"\n" } };
	struct gce_bulk b;
	json_object *o, *x, *y;
	char *s;

	memset(&b, 0, sizeof(b));
	b.machine_type = "n2-standard-4";
	b.names = names;
	b.n = 2;
	b.min_count = 1;
	b.zones = zones;
	b.nzones = 2;
	b.image = "projects/debian-cloud/global/images/family/debian-12";
	b.subnetwork = "regions/us-central1/subnetworks/burst";
	b.tags = tags;
	b.ntags = 1;
	b.labels = labels;
	b.nlabels = 1;
	b.metadata = md;
	b.nmetadata = 1;
	b.spot = true;
	b.disk_gb = 20;
	s = gce_bulk_body(&b);
	o = json_tokener_parse(s);
	ok(o != NULL, "the bulk insert's body is JSON");
	ok(json_object_object_get_ex(o, "count", &x) && !strcmp(json_object_get_string(x), "2") &&
	   json_object_object_get_ex(o, "minCount", &y) && !strcmp(json_object_get_string(y), "1"),
	   "count and minCount (int64: strings, as proto3 JSON has them)");
	ok(json_object_object_get_ex(o, "perInstanceProperties", &x) && json_object_object_length(x) == 2 &&
	   json_object_object_get_ex(x, "c-b-1", &y), "one perInstanceProperties entry per name");
	ok(json_object_object_get_ex(o, "locationPolicy", &x) && json_object_object_get_ex(x, "locations", &y) &&
	   json_object_object_get_ex(y, "zones/us-central1-f", &x), "the zones allowed, as zones/Z");
	ok(strstr(s, "\"machineType\":\"n2-standard-4\"") && strstr(s, "\"provisioningModel\":\"SPOT\"") &&
	   strstr(s, "\"instanceTerminationAction\":\"DELETE\"") && strstr(s, "\"diskSizeGb\":\"20\"") &&
	   strstr(s, "\"subnetwork\":\"regions/us-central1/subnetworks/burst\""),
	   "the type by name, spot, the disk, the subnetwork");
	ok(strstr(s, "\"value\":\"#!/bin/sh\\necho \\\"x\\\"\\n\"") != NULL, "the startup script, escaped as JSON");
	json_object_put(o);
	free(s);
	s = gce_metadata_body("fp==", md, 1);
	ok(!strcmp(s, "{\"fingerprint\":\"fp==\",\"items\":[{\"key\":\"startup-script\",\"value\":\"#!/bin/sh\\necho \\\"x\\\"\\n\"}]}"),
	   "setMetadata's body: %s", s);
	free(s);
}

/* ---- keys and tokens ---- */

static char *new_rsa_pem(EVP_PKEY **pk)
{
	EVP_PKEY *k = EVP_RSA_gen(2048);
	BIO *b = BIO_new(BIO_s_mem());
	char *p, *out;
	long n;

	PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	n = BIO_get_mem_data(b, &p);
	out = xstrndup(p, (size_t)n);
	BIO_free(b);
	*pk = k;
	return out;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static char *key_json(const char *pem, const char *type)
{
	json_object *o = json_object_new_object();
	char *s;

	json_object_object_add(o, "type", json_object_new_string(type));
	json_object_object_add(o, "project_id", json_object_new_string("burst-test"));
	json_object_object_add(o, "private_key_id", json_object_new_string("kid-1"));
	json_object_object_add(o, "private_key", json_object_new_string(pem));
	json_object_object_add(o, "client_email", json_object_new_string("agent@burst-test.iam.gserviceaccount.com"));
	json_object_object_add(o, "token_uri", json_object_new_string("https://oauth2.example/token"));
	s = xstrdup(json_object_to_json_string(o));
	json_object_put(o);
	return s;
}

static json_object *b64_json(const char *s, size_t n)
{
	char *b = xmalloc(n + 4), *raw = xmalloc(n + 4);
	size_t i, l;
	int got;
	json_object *o;

	for (i = 0; i < n; i++)
		b[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	l = n;
	while (l % 4)
		b[l++] = '=';
	b[l] = '\0';
	got = EVP_DecodeBlock((unsigned char *)raw, (unsigned char *)b, (int)l);
	raw[got > 0 ? got : 0] = '\0';
	o = json_tokener_parse(raw);
	free(b);
	free(raw);
	return o;
}

static void test_key_and_jwt(void)
{
	char dir[] = "/tmp/test_gce.XXXXXX", path[300];
	EVP_PKEY *pk;
	char *pem = new_rsa_pem(&pk), *js, *jwt;
	struct gce_key k;
	burst_err_t err;

	ok(mkdtemp(dir) != NULL, "a directory for key files");
	snprintf(path, sizeof(path), "%s/key.json", dir);
	js = key_json(pem, "service_account");
	write_file(path, js, 0600);
	ok(gce_key_from_file(path, &k, &err) == 0, "a service account's key file, mode 0600: read (%s)", err.msg);
	ok(!strcmp(k.client_email, "agent@burst-test.iam.gserviceaccount.com") && !strcmp(k.project_id, "burst-test") &&
	   !strcmp(k.token_uri, "https://oauth2.example/token") && !strcmp(k.private_key_id, "kid-1"),
	   "its account, project, token URI and key id");
	has_str(k.source, path, "its source names the file");

	jwt = gce_jwt_assertion(&k, GCE_SCOPE_COMPUTE, 1777654800, &err);
	ok(jwt != NULL, "an RS256 JWT is signed");
	if (jwt) {
		char *d1 = strchr(jwt, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
		json_object *h = d1 ? b64_json(jwt, (size_t)(d1 - jwt)) : NULL, *c = d2 ? b64_json(d1 + 1, (size_t)(d2 - d1 - 1)) : NULL, *v;
		unsigned char sig[512];
		int siglen = 0, good = 0, bad = 1;

		ok(h && json_object_object_get_ex(h, "alg", &v) && !strcmp(json_object_get_string(v), "RS256") &&
		   json_object_object_get_ex(h, "kid", &v) && !strcmp(json_object_get_string(v), "kid-1"),
		   "its header: RS256 and the key's id");
		ok(c && json_object_object_get_ex(c, "iss", &v) &&
		   !strcmp(json_object_get_string(v), "agent@burst-test.iam.gserviceaccount.com") &&
		   json_object_object_get_ex(c, "aud", &v) && !strcmp(json_object_get_string(v), "https://oauth2.example/token") &&
		   json_object_object_get_ex(c, "scope", &v) && !strcmp(json_object_get_string(v), GCE_SCOPE_COMPUTE),
		   "its claims: iss the account, aud the token URI, the compute scope");
		ok(c && json_object_object_get_ex(c, "iat", &v) && json_object_get_int64(v) == 1777654800 &&
		   json_object_object_get_ex(c, "exp", &v) && json_object_get_int64(v) == 1777654800 + 3600,
		   "iat now, exp an hour later");
		ok(strchr(jwt, '=') == NULL && strchr(jwt, '+') == NULL && strchr(jwt, '/') == NULL, "base64url, no padding");
		if (d2) {
			/* the signature, checked with the public half */
			const char *s = d2 + 1;
			size_t n = strlen(s), i, l;
			char *b = xmalloc(n + 4);
			EVP_MD_CTX *md = EVP_MD_CTX_new();
			for (i = 0; i < n; i++)
				b[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
			l = n;
			while (l % 4)
				b[l++] = '=';
			b[l] = '\0';
			siglen = EVP_DecodeBlock(sig, (unsigned char *)b, (int)l);
			while (siglen > 0 && l > 0 && b[l - 1] == '=') {
				siglen--;
				l--;
			}
			free(b);
			good = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk) == 1 &&
				EVP_DigestVerify(md, sig, (size_t)siglen, (unsigned char *)jwt, (size_t)(d2 - jwt)) == 1;
			EVP_MD_CTX_free(md);
			md = EVP_MD_CTX_new();
			jwt[5] ^= 1;   /* the header changed: the signature no longer holds */
			bad = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk) == 1 &&
				EVP_DigestVerify(md, sig, (size_t)siglen, (unsigned char *)jwt, (size_t)(d2 - jwt)) == 1;
			EVP_MD_CTX_free(md);
		}
		ok(good && siglen == 256, "the signature verifies with the key's public half (RSASSA-PKCS1-v1_5, SHA-256)");
		ok(!bad, "... and not over another text");
		json_object_put(h);
		json_object_put(c);
		free(jwt);
	}
	gce_key_free(&k);

	chmod(path, 0640);
	ok(gce_key_from_file(path, &k, &err) < 0, "mode 0640: refused");
	has_str(err.msg, "has mode 0640: group or others can read or change it", "the message says why");
	has_str(err.msg, "chmod 600", "... and what to do");
	ok(strstr(err.msg, "PRIVATE KEY") == NULL && strstr(err.msg, "kid-1") == NULL, "no part of the key in it");
	chmod(path, 0600);
	if (geteuid() == 0) {
		ok(chown(path, 4321, 4321) == 0 && gce_key_from_file(path, &k, &err) < 0,
		   "owned by another user (uid 4321): refused");
		has_str(err.msg, "owned by uid 4321, neither root nor this process's user", "the message says whose it is");
		has_str(err.msg, "chown 0", "... and what to do");
		ok(chown(path, 0, 0) == 0, "back to root");
	} else {
		ok(gce_key_from_file("/proc/self/status", &k, &err) < 0, "a file that is not a key file: refused");
	}
	free(js);

	js = key_json(pem, "authorized_user");
	write_file(path, js, 0600);
	ok(gce_key_from_file(path, &k, &err) < 0, "a user's credentials file: refused");
	has_str(err.msg, "\"type\": \"authorized_user\", not \"service_account\"", "the message says which it is");
	free(js);
	write_file(path, "{\"type\": \"service_account\", \"client_email\": \"a@b\"}", 0600);
	ok(gce_key_from_file(path, &k, &err) < 0 && strstr(err.msg, "no \"private_key\""), "no private key: refused: %s", err.msg);
	write_file(path, "not json", 0600);
	ok(gce_key_from_file(path, &k, &err) < 0 && strstr(err.msg, "is not a JSON object"), "not JSON: refused");
	snprintf(path, sizeof(path), "%s/missing.json", dir);
	ok(gce_key_from_file(path, &k, &err) < 0 && strstr(err.msg, "No such file"), "a missing file: named, and why");

	ok(gce_key_parse("{\"type\":\"service_account\",\"client_email\":\"a@b\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\\n\"}",
			 "k.json", &k, &err) == 0, "a key whose PEM is broken still reads");
	ok(strcmp(k.token_uri, GCE_TOKEN_URI_DEFAULT) == 0, "... with Google's token URI when it names none");
	jwt = gce_jwt_assertion(&k, GCE_SCOPE_COMPUTE, 1, &err);
	ok(jwt == NULL && strstr(err.msg, "is not an RSA private key"), "but it signs nothing: %s", err.msg);
	gce_key_free(&k);

	snprintf(path, sizeof(path), "%s/key.json", dir);
	unlink(path);
	rmdir(dir);
	free(pem);
	EVP_PKEY_free(pk);
}

static void test_tokens(void)
{
	struct gce_token t;
	burst_err_t err;
	char msg[200];

	ok(gce_token_parse("{\"access_token\":\"ya29.a0AbCd-_\",\"expires_in\":3599,\"token_type\":\"Bearer\"}", 1000, &t, &err) == 0,
	   "a token answer parses");
	ok(!strcmp(t.access, "ya29.a0AbCd-_") && t.expires == 4599, "the token and its expiry");
	ok(!gce_token_expiring(&t, 1000 + 3599 - GCE_TOKEN_REFRESH_MARGIN - 1) &&
	   gce_token_expiring(&t, 1000 + 3599 - GCE_TOKEN_REFRESH_MARGIN), "kept until the margin before it expires");
	gce_token_free(&t);
	ok(gce_token_parse("{\"access_token\":\"x\",\"expires_in\":100,\"token_type\":\"Bearer\"}", 0, &t, &err) == 0 &&
	   !gce_token_expiring(&t, 49) && gce_token_expiring(&t, 50), "a short-lived one: replaced at half its life");
	gce_token_free(&t);
	ok(gce_token_parse("{\"expires_in\":3600}", 0, &t, &err) < 0 && strstr(err.msg, "no access_token"), "no token");
	ok(gce_token_parse("{\"access_token\":\"sec ret\",\"expires_in\":3600}", 0, &t, &err) < 0 &&
	   !strstr(err.msg, "sec ret"), "a token with a blank: refused, and not quoted");
	ok(gce_token_parse("{\"access_token\":\"abc\",\"expires_in\":3600,\"token_type\":\"MAC\"}", 0, &t, &err) < 0 &&
	   strstr(err.msg, "not Bearer"), "not a bearer token: refused");
	ok(gce_token_parse("{\"access_token\":\"abc\"}", 0, &t, &err) < 0 && strstr(err.msg, "expires_in"), "no expiry");
	ok(gce_token_parse("{\"access_token\":\"abc\",\"expires_in\":-5}", 0, &t, &err) < 0, "a negative life");
	ok(gce_token_parse("[]", 0, &t, &err) < 0, "not an object");

	snprintf(msg, sizeof(msg), "the endpoint said: bad assertion eyJhbGciOi.secret.part, eyJhbGciOi.secret.part again");
	gce_redact(msg, sizeof(msg), "eyJhbGciOi.secret.part");
	is_str(msg, "the endpoint said: bad assertion [redacted], [redacted] again", "a secret is redacted everywhere");
	snprintf(msg, 30, "0123456789 abcdefghijklmno");
	gce_redact(msg, 30, "abcdefghijklmno");
	is_str(msg, "0123456789 [redacted]", "... also where the room is short");
	snprintf(msg, sizeof(msg), "short abc");
	gce_redact(msg, sizeof(msg), "abc");
	is_str(msg, "short abc", "a too-short 'secret' is not hunted for");
}

static void test_auth_opts(void)
{
	struct gce_auth_opts o;
	struct gce_auth *a;
	burst_err_t err;

	memset(&o, 0, sizeof(o));
	o.metadata_host = "evil host/\n";
	ok(gce_auth_new(&o, &err) == NULL && strstr(err.msg, "is not HOST[:PORT]") && !strchr(err.msg, '\n'),
	   "a metadata host that is not HOST[:PORT]: refused, written out");
	o.metadata_host = "127.0.0.1:1";
	a = gce_auth_new(&o, &err);
	ok(a && !strcmp(gce_auth_source(a), "the metadata server 127.0.0.1:1"), "the metadata server's source");
	ok(a && gce_auth_token(a, false, &err) == NULL && strstr(err.msg, "an access token from the metadata server 127.0.0.1:1"),
	   "no server there: the message says where it asked: %s", err.msg);
	gce_auth_free(a);
	{
		struct gce_client_opts co;
		memset(&co, 0, sizeof(co));
		co.project = "burst-test";
		co.endpoint = "http://127.0.0.1:1";
		ok(gce_client_new(&co, &err) == NULL && strstr(err.msg, "AllowInsecureEndpoint"),
		   "a plain-http endpoint needs AllowInsecureEndpoint=yes");
		co.endpoint = NULL;
		co.project = "Bad Project";
		ok(gce_client_new(&co, &err) == NULL && strstr(err.msg, "is not a Google Cloud project id"), "a bad project id");
	}
}

static void test_catalog(void)
{
	struct gce_accels acc = { 0 };
	struct ec2_instance_types l = { 0 };
	burst_err_t err;
	char *next = NULL;

	ok(gce_accels_parse("{\"items\":{\"zones/us-central1-a\":{\"acceleratorTypes\":["
			    "{\"name\":\"nvidia-tesla-a100\",\"description\":\"NVIDIA A100 40GB\"},"
			    "{\"name\":\"nvidia-l4\",\"description\":\"NVIDIA L4\"}]},"
			    "\"zones/us-central1-b\":{\"acceleratorTypes\":[{\"name\":\"nvidia-l4\",\"description\":\"NVIDIA L4\"}]},"
			    "\"zones/x\":{\"warning\":{\"code\":\"NO_RESULTS_ON_PAGE\"}}},\"nextPageToken\":\"p2\"}",
			    &acc, &next, &err) == 0 && acc.n == 2 && next && !strcmp(next, "p2"),
	   "accelerator types: two, each once, and the next page");
	free(next);
	ok(gce_machine_types_parse("{\"items\":{"
				   "\"zones/us-central1-a\":{\"machineTypes\":["
				   "{\"name\":\"a2-highgpu-1g\",\"guestCpus\":12,\"memoryMb\":87040,\"architecture\":\"X86_64\","
				   "\"accelerators\":[{\"guestAcceleratorType\":\"nvidia-tesla-a100\",\"guestAcceleratorCount\":1}]},"
				   "{\"name\":\"t2a-standard-1\",\"guestCpus\":1,\"memoryMb\":4096,\"architecture\":\"ARM64\"},"
				   "{\"name\":\"g9-old\",\"guestCpus\":2,\"memoryMb\":4096,\"deprecated\":{\"state\":\"OBSOLETE\"}},"
				   "{\"name\":\"a3-x\",\"guestCpus\":8,\"memoryMb\":8192,"
				   "\"accelerators\":[{\"guestAcceleratorType\":\"nvidia-tesla-t4\",\"guestAcceleratorCount\":\"2\"}]}]},"
				   "\"zones/us-central1-b\":{\"machineTypes\":[{\"name\":\"t2a-standard-1\",\"guestCpus\":1,\"memoryMb\":4096}]},"
				   "\"zones/europe-west4-a\":{\"machineTypes\":[{\"name\":\"eu-only\",\"guestCpus\":1,\"memoryMb\":1024}]}}}",
				   "us-central1", &acc, &l, &next, &err) == 0 && !next,
	   "machine types of one region parse");
	ok(l.n == 3, "three: each once, not another region's, not an OBSOLETE one (%zu)", l.n);
	ok(l.n == 3 && !strcmp(l.v[0].name, "a2-highgpu-1g") && l.v[0].vcpus == 12 && l.v[0].memory_mib == 87040 &&
	   !strcmp(l.v[0].arch, "x86_64") && l.v[0].gpu_count == 1 && !strcmp(l.v[0].gpu_manufacturer, "NVIDIA") &&
	   !strcmp(l.v[0].gpu_name, "A100 40GB") && l.v[0].gpu_memory_mib == 40960,
	   "a GPU type: its accelerator named by the description (NVIDIA, A100 40GB, 40960 MiB)");
	ok(l.n == 3 && l.v[0].storage_disk && !*l.v[0].storage_disk, "no word on storage (not EC2's ebs)");
	ok(l.n == 3 && !strcmp(l.v[1].arch, "arm64") && l.v[1].gpu_count == 0, "ARM64 is arm64; no accelerator");
	ok(l.n == 3 && l.v[2].gpu_count == 2 && !strcmp(l.v[2].gpu_manufacturer, "NVIDIA") && !strcmp(l.v[2].gpu_name, "T4") &&
	   l.v[2].gpu_memory_mib == 0, "an accelerator without a description: named from its type (nvidia-tesla-t4: T4)");
	ec2_instance_types_free(&l);
	ok(gce_machine_types_parse("[1]", NULL, &acc, &l, &next, &err) < 0 && strstr(err.msg, "machine types"),
	   "not a listing: refused, saying so");
	gce_accels_free(&acc);
}

int main(void)
{
	test_classify();
	test_errors();
	test_names();
	test_ops();
	test_vms();
	test_bulk_body();
	test_key_and_jwt();
	test_tokens();
	test_auth_opts();
	test_catalog();
	return done_testing();
}

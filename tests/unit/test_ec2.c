/*
 * test_ec2.c - lib/cloud/ec2.c: the wire format (canned EC2 answers under
 * tests/fixtures/ec2), the error classes, backoff bounds, and that no
 * secret reaches an error message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ec2.h"
#include "ec2_int.h"
#include "strutil.h"
#include "tap.h"

#ifndef BURST_ABS_SRCDIR
#define BURST_ABS_SRCDIR "."
#endif

static char *slurp(const char *name, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/fixtures/ec2/%s", BURST_ABS_SRCDIR, name);
	return tap_slurp(path, len);
}

static const char *tag(const struct ec2_instance *i, const char *key)
{
	for (size_t k = 0; k < i->ntags; k++)
		if (strcmp(i->tags[k].key, key) == 0)
			return i->tags[k].value;
	return NULL;
}

static void test_run_instances(void)
{
	struct ec2_instances l = { 0 };
	burst_err_t err = { 0 };
	char *next = NULL;
	size_t len;
	char *xml = slurp("run_instances.xml", &len);

	ok(ec2_parse_instances(xml, len, &l, &next, &err) == 0, "RunInstances answer parses");
	is_num(l.n, 2, "two instances");
	is_str(l.reservation_id, "r-1234567890abcdef0", "reservation id");
	ok(next == NULL, "no nextToken in RunInstances");
	if (l.n == 2) {
		is_str(l.v[0].id, "i-0a1b2c3d4e5f60001", "first id");
		is_str(l.v[0].state, "pending", "state name");
		is_str(l.v[0].private_ip, "10.0.0.11", "private ip");
		is_str(l.v[0].launch_time, "2026-11-23T11:20:01.000Z", "launch time");
		is_str(l.v[0].type, "g5.12xlarge", "type");
		is_str(l.v[0].client_token, "burst-job42-ns1-0001", "client token");
		is_num(l.v[0].ntags, 2, "two tags");
		is_str(tag(&l.v[0], "Name"), "burst-1 & co", "tag value with an entity");
		is_str(tag(&l.v[0], "burst:cluster"), "lab", "tag with a colon");
		is_str(l.v[1].id, "i-0a1b2c3d4e5f60002", "second id");
		is_str(l.v[1].private_ip, "10.0.0.12", "second ip");
		is_num(l.v[1].ntags, 1, "second has one tag");
	}
	ec2_instances_free(&l);
	free(xml);
}

static void test_describe_pages(void)
{
	struct ec2_instances l = { 0 };
	burst_err_t err = { 0 };
	char *next = NULL;
	size_t len;
	char *p1 = slurp("describe_page1.xml", &len);

	ok(ec2_parse_instances(p1, len, &l, &next, &err) == 0, "DescribeInstances page 1 parses");
	is_str(next, "eyJ2IjoiMiIsImMiOiJwYWdlMiJ9", "nextToken of page 1");
	is_num(l.n, 3, "page 1: 3 instances in 2 reservations");
	free(p1);
	free(next);
	p1 = slurp("describe_page2.xml", &len);
	ok(ec2_parse_instances(p1, len, &l, &next, &err) == 0, "page 2 parses");
	ok(next == NULL, "page 2 is the last");
	is_num(l.n, 4, "pages accumulate: 4 instances");
	if (l.n == 4) {
		is_str(l.v[0].client_token, "tok-1", "client token of the first");
		is_str(tag(&l.v[0], "burst:node"), "burst-1", "its tag");
		ok(l.v[1].private_ip == NULL, "terminated instance without ip: NULL");
		ok(l.v[1].client_token == NULL, "empty clientToken: NULL");
		is_str(l.v[1].state, "terminated", "terminated state");
		is_str(l.v[2].id, "i-00000000000000003", "second reservation's instance");
		is_str(l.v[3].id, "i-00000000000000004", "page 2 instance");
		is_str(l.v[3].type, "c5.large", "page 2 type");
	}
	ec2_instances_free(&l);
	free(p1);
}

/*
 * The streaming reader of instances answers: fields only where they stand
 * in an instance item (not the like-named ones deeper in it), unknown
 * elements passed over, bad answers refused with what was wrong, and
 * nothing of a refused answer left in the list.
 */
static const char real_page[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<DescribeInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
	"<requestId>r1</requestId><unknownTop><instancesSet><item><instanceId>i-bogus</instanceId>"
	"</item></instancesSet></unknownTop>"
	"<reservationSet><item><reservationId>r-9</reservationId>"
	"<instancesSet><item>"
	"<networkInterfaceSet><item><privateIpAddress>10.9.9.9</privateIpAddress>"
	"<instanceId>i-eni</instanceId>"
	"<tagSet><item><key>burst:cluster</key><value>eni-tag</value></item></tagSet>"
	"</item></networkInterfaceSet>"
	"<instanceId> i-00000000000000042 </instanceId>"
	"<placement><availabilityZone>us-east-1a</availabilityZone><name>p</name></placement>"
	"<instanceState><code>16</code><name>run<![CDATA[ning]]></name></instanceState>"
	"<privateIpAddress>10.0.0.42</privateIpAddress>"
	"<privateIpAddress>10.0.0.43</privateIpAddress>"
	"<amiLaunchIndex>7</amiLaunchIndex>"
	"<newFieldEC2AddsOneDay attr=\"x\"><name>stopped</name><nested><deeper/></nested></newFieldEC2AddsOneDay>"
	"<tagSet><item><key>burst:cluster</key><value>lab</value></item>"
	"<item><key>Owner</key><value>someone</value></item>"
	"<item><key>burst:batch</key><value>b-1&amp;2</value></item></tagSet>"
	"</item></instancesSet></item></reservationSet>"
	"<nextToken>tok2</nextToken></DescribeInstancesResponse>";

static void test_stream(void)
{
	static const char *const keep[] = { "burst:cluster", "burst:batch" };
	struct ec2_instances l = { 0 };
	burst_err_t err = { 0 };
	char *next = NULL;
	size_t len = strlen(real_page);

	ok(ec2_parse_instances_keep(real_page, len, &l, keep, 2, &next, &err) == 0,
	   "stream: a full answer with unknown elements parses");
	is_num(l.n, 1, "stream: one instance (none from an unknown element's instancesSet)");
	is_str(next, "tok2", "stream: its nextToken");
	free(next);
	next = NULL;
	if (l.n == 1) {
		is_str(l.v[0].id, "i-00000000000000042", "stream: the item's own instanceId, trimmed");
		is_str(l.v[0].private_ip, "10.0.0.42",
		       "stream: the item's first privateIpAddress, not the interface's");
		is_str(l.v[0].state, "running", "stream: instanceState/name with CDATA, not another name");
		is_num(l.v[0].launch_index, 7, "stream: amiLaunchIndex");
		is_num(l.v[0].ntags, 2, "stream: only the tags asked for, not the interface's");
		if (l.v[0].ntags == 2) {
			is_str(l.v[0].tags[0].value, "lab", "stream: burst:cluster");
			is_str(l.v[0].tags[1].key, "burst:batch", "stream: burst:batch's key");
			is_str(l.v[0].tags[1].value, "b-1&2", "stream: its value with an entity");
		}
		ok(l.v[0].client_token == NULL && l.v[0].type == NULL, "stream: absent fields NULL");
	}
	/* every cut of the answer is refused and leaves the list as it was */
	{
		size_t bad = 0, kept = 0;
		for (size_t cut = 0; cut < len; cut += 7) {
			int rc = ec2_parse_instances_keep(real_page, cut, &l, keep, 2, &next, &err);
			bad += rc == -1 && strstr(err.msg, "not well-formed XML") != NULL;
			kept += l.n == 1 && next == NULL;
		}
		is_num(bad, (len + 6) / 7, "stream: every truncated answer is not well-formed XML");
		is_num(kept, (len + 6) / 7, "stream: and adds nothing to the list");
	}
	{
		const char *m = "<DescribeInstancesResponse><reservationSet><item>"
			"</reservationSet></DescribeInstancesResponse>";
		ok(ec2_parse_instances_keep(m, strlen(m), &l, NULL, 0, &next, &err) == -1,
		   "stream: mismatched tags refused");
	}
	has_str(err.msg, "line 1", "stream: the error says where");
	has_str(err.msg, "mismatch", "stream: and what");
	ok(ec2_parse_instances_keep("", 0, &l, NULL, 0, &next, &err) == -1 &&
	   strstr(err.msg, "empty"), "stream: an empty answer is not XML, and said so");
	{
		size_t el;
		char *e = slurp("error_capacity.xml", &el);
		ok(ec2_parse_instances_keep(e, el, &l, NULL, 0, &next, &err) == -2,
		   "stream: an error document is XML but no instances answer");
		has_str(err.msg, "unexpected EC2 answer <Response>", "stream: naming its root");
		free(e);
	}
	{
		const char *t = "<DescribeInstancesResponse><reservationSet><item><instancesSet>"
			"<item><instanceId>i-1</instanceId></item></instancesSet></item>"
			"</reservationSet><trailing>";
		ok(ec2_parse_instances_keep(t, strlen(t), &l, NULL, 0, &next, &err) == -1,
		   "stream: an answer cut after an instance is refused");
	}
	is_num(l.n, 1, "stream: and that instance is not kept");
	ok(l.reservation_id == NULL, "stream: nor a reservation id of a refused answer");
	ec2_instances_free(&l);
}

static void test_instance_types(void)
{
	struct ec2_instance_types l = { 0 };
	burst_err_t err = { 0 };
	char *next = NULL;
	size_t len;
	char *xml = slurp("describe_instance_types.xml", &len);

	ok(ec2_parse_instance_types(xml, len, &l, &next, &err) == 0, "DescribeInstanceTypes parses");
	is_str(next, "AAEAAWtypes2", "its nextToken");
	is_num(l.n, 2, "two types");
	if (l.n == 2) {
		is_str(l.v[0].name, "g5.12xlarge", "name");
		is_num(l.v[0].vcpus, 48, "vcpus");
		is_num(l.v[0].memory_mib, 196608, "memory");
		is_num(l.v[0].gpu_count, 4, "gpu count");
		is_str(l.v[0].gpu_manufacturer, "NVIDIA", "gpu manufacturer");
		is_str(l.v[0].gpu_name, "A10G", "gpu name");
		is_num(l.v[0].gpu_memory_mib, 24576, "gpu memory per gpu");
		is_str(l.v[0].network_performance, "40 Gigabit", "network");
		ok(l.v[0].efa_supported, "efa supported");
		is_str(l.v[1].name, "t3.micro", "second");
		is_num(l.v[1].gpu_count, 0, "no gpu");
		ok(l.v[1].gpu_name == NULL, "no gpu name");
		ok(!l.v[1].efa_supported, "no efa");
	}
	ec2_instance_types_free(&l);
	free(next);
	free(xml);
}

static void test_errors(void)
{
	static const struct {
		const char *file, *code, *rid;
		enum ec2_class cls;
	} cases[] = {
		{ "error_capacity.xml", "InsufficientInstanceCapacity", "5f2a1b3c-0001-example", EC2_CAPACITY },
		{ "error_quota.xml", "VcpuLimitExceeded", "5f2a1b3c-0002-example", EC2_QUOTA },
		{ "error_throttled.xml", "RequestLimitExceeded", "5f2a1b3c-0003-example", EC2_THROTTLED },
		{ "error_transient.xml", "InternalError", "5f2a1b3c-0004-example", EC2_TRANSIENT },
		{ "error_permanent.xml", "IdempotentParameterMismatch", "5f2a1b3c-0005-example", EC2_PERMANENT },
		{ "error_auth.xml", "AuthFailure", "5f2a1b3c-0006-example", EC2_AUTH },
		{ "error_notfound.xml", "InvalidInstanceID.NotFound", "5f2a1b3c-0007-example", EC2_NOT_FOUND },
	};
	struct ec2_instances l = { 0 };
	burst_err_t err = { 0 };
	char *next = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *code, *msg, *rid;
		size_t len;
		char *xml = slurp(cases[i].file, &len);

		ok(ec2_parse_error(xml, len, &code, &msg, &rid) == 0, "%s is an error", cases[i].file);
		is_str(code, cases[i].code, "%s code", cases[i].file);
		is_str(rid, cases[i].rid, "%s request id", cases[i].file);
		ok(msg && *msg, "%s has a message", cases[i].file);
		is_str(ec2_class_name(ec2_classify(code, 400)), ec2_class_name(cases[i].cls),
		       "%s class", cases[i].file);
		free(code);
		free(msg);
		free(rid);
		free(xml);
	}
	{
		char *code, *msg, *rid;
		size_t len;
		char *xml = slurp("run_instances.xml", &len);
		ok(ec2_parse_error(xml, len, &code, &msg, &rid) == -1, "a success is not an error");
		ok(ec2_parse_instances("<oops", 5, &l, &next, &err) == -1, "broken XML refused");
		has_str(err.msg, "not well-formed", "and said so");
		ok(ec2_parse_instances(xml, len, &l, &next, &err) == 0 && l.n == 2,
		   "valid answer after a failure");
		ec2_instances_free(&l);
		free(xml);
	}
	/* the cloud's text is written out as it enters: XML carries no ESC, but
	 * a newline (a forged log line) and a C1 CSI it does */
	{
		const char *xml = "<Response><Errors><Error><Code>Bad&#10;Code</Code><Message>line one&#10;forged "
				  "line \302\233" "2J&#13;x</Message></Error></Errors><RequestID>r&#9;1</RequestID></Response>";
		char *code = NULL, *msg = NULL, *rid = NULL;
		ok(ec2_parse_error(xml, strlen(xml), &code, &msg, &rid) == 0, "an error document with control characters");
		is_str(code, "Bad\\x0aCode", "its code written out");
		is_str(msg, "line one\\x0aforged line \\u009b2J\\x0dx", "its message: newline, C1 CSI, CR written out");
		is_str(rid, "r\\x091", "its request id: the tab written out");
		free(code);
		free(msg);
		free(rid);
	}
	/* an XXE attempt: external entities are never loaded or substituted */
	{
		const char *xxe = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM "
			"\"file:///etc/passwd\">]><Response><Errors><Error><Code>&x;</Code>"
			"<Message>m</Message></Error></Errors></Response>";
		char *code = NULL, *msg = NULL, *rid = NULL;
		int r = ec2_parse_error(xxe, strlen(xxe), &code, &msg, &rid);
		ok(r != 0 || (code && !strstr(code, "root:")), "external entity not expanded");
		free(code);
		free(msg);
		free(rid);
	}
}

static void test_classify(void)
{
	static const struct {
		const char *code;
		long status;
		enum ec2_class cls;
	} t[] = {
		{ "InsufficientInstanceCapacity", 500, EC2_CAPACITY },
		{ "InsufficientHostCapacity", 400, EC2_CAPACITY },
		{ "InsufficientReservedInstanceCapacity", 400, EC2_CAPACITY },
		{ "InsufficientCapacity", 400, EC2_CAPACITY },
		{ "Unsupported", 400, EC2_CAPACITY },
		{ "MaxSpotInstanceCountExceeded", 400, EC2_CAPACITY },
		{ "SpotMaxPriceTooLow", 400, EC2_CAPACITY },
		{ "InsufficientFreeAddressesInSubnet", 400, EC2_CAPACITY },
		{ "InstanceLimitExceeded", 400, EC2_QUOTA },
		{ "VcpuLimitExceeded", 400, EC2_QUOTA },
		{ "RequestLimitExceeded", 503, EC2_THROTTLED },
		{ "Throttling", 400, EC2_THROTTLED },
		{ "ThrottlingException", 400, EC2_THROTTLED },
		{ "RequestThrottled", 400, EC2_THROTTLED },
		{ "InternalError", 500, EC2_TRANSIENT },
		{ "ServiceUnavailable", 503, EC2_TRANSIENT },
		{ "Unavailable", 503, EC2_TRANSIENT },
		{ "InvalidParameterValue", 400, EC2_PERMANENT },
		{ "InvalidAMIID.NotFound", 400, EC2_PERMANENT },
		{ "InvalidAMIID.Malformed", 400, EC2_PERMANENT },
		{ "IdempotentParameterMismatch", 400, EC2_PERMANENT },
		{ "InvalidInstanceID.Malformed", 400, EC2_PERMANENT },
		{ "AuthFailure", 401, EC2_AUTH },
		{ "UnauthorizedOperation", 403, EC2_AUTH },
		{ "SignatureDoesNotMatch", 403, EC2_AUTH },
		{ "InvalidClientTokenId", 403, EC2_AUTH },
		{ "OptInRequired", 401, EC2_AUTH },
		{ "Blocked", 403, EC2_AUTH },
		{ "InvalidInstanceID.NotFound", 400, EC2_NOT_FOUND },
		{ NULL, 500, EC2_TRANSIENT },
		{ NULL, 502, EC2_TRANSIENT },
		{ "", 503, EC2_TRANSIENT },
		{ NULL, 429, EC2_THROTTLED },
		{ NULL, 403, EC2_AUTH },
		{ NULL, 400, EC2_PERMANENT },
		{ NULL, 200, EC2_OK },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		is_str(ec2_class_name(ec2_classify(t[i].code, t[i].status)),
		       ec2_class_name(t[i].cls), "classify %s/%ld",
		       t[i].code ? t[i].code : "(none)", t[i].status);
}

static void test_backoff(void)
{
	bool in_bounds = true, reaches_cap = false, capped = true;

	is_num(ec2_backoff_ms(0, 100, 5000, 0), 0, "rnd 0: no wait");
	is_num(ec2_backoff_ms(0, 100, 5000, 100), 100, "attempt 0 ceiling is base");
	is_num(ec2_backoff_ms(0, 100, 5000, 101), 0, "attempt 0 wraps at base+1");
	is_num(ec2_backoff_ms(3, 100, 5000, 800), 800, "attempt 3 ceiling 800");
	is_num(ec2_backoff_ms(3, 100, 5000, 801), 0, "attempt 3 wraps at 801");
	is_num(ec2_backoff_ms(40, 100, 5000, 5000), 5000, "huge attempt is capped, no overflow");
	is_num(ec2_backoff_ms(200, 100, 5000, 0xffffffffu), 0xffffffffu % 5001, "cap bounds");
	for (unsigned a = 0; a < 64; a++) {
		long ceil_ms = 100;
		for (unsigned k = 0; k < a && ceil_ms < 3000; k++)
			ceil_ms *= 2;
		if (ceil_ms > 3000)
			ceil_ms = 3000;
		for (uint32_t r = 0; r < 20000; r += 7) {
			long d = ec2_backoff_ms(a, 100, 3000, r * 2654435761u);
			if (d < 0 || d > ceil_ms)
				in_bounds = false;
			if (d > 3000)
				capped = false;
		}
	}
	ok(in_bounds, "every delay within [0, min(cap, base*2^attempt)]");
	ok(capped, "never above the cap");
	reaches_cap = ec2_backoff_ms(10, 100, 3000, 3000) == 3000 &&
		ec2_backoff_ms(10, 100, 3000, 3001) == 0;
	ok(reaches_cap, "the cap itself is reachable (full jitter, inclusive)");
}

static void test_redact(void)
{
	char msg[64];
	const char *secrets[] = { "SECRETKEY", "", NULL, NULL };

	snprintf(msg, sizeof(msg), "a SECRETKEY b SECRETKEY");
	ec2_redact(msg, sizeof(msg), secrets);
	is_str(msg, "a [redacted] b [redacted]", "both occurrences redacted");
	snprintf(msg, sizeof(msg), "%s", "xx AB yy");
	{
		const char *s2[] = { "AB", NULL };
		ec2_redact(msg, sizeof(msg), s2);
	}
	is_str(msg, "xx [redacted] yy", "short secret grows the message");
	{
		char small[16] = "AB AB AB AB";
		const char *s2[] = { "AB", NULL };
		ec2_redact(small, sizeof(small), s2);
		ok(strstr(small, "AB") == NULL && strlen(small) < sizeof(small),
		   "truncated but no secret left: '%s'", small);
	}
}

/* A client whose endpoint refuses connections: TRANSIENT, retried within
 * the budget, counted, and its message carries no secret. */
static void test_client_unreachable(void)
{
	struct aws_creds cr = { 0 };
	struct ec2_client_opts o = { 0 };
	struct ec2_client *c;
	struct ec2_instances l = { 0 };
	struct ec2_run_params p = { 0 };
	struct ec2_stats st;
	burst_err_t err = { 0 };
	enum ec2_class cls;

	cr.access_key = "AKIDEXAMPLE";
	cr.secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	cr.session_token = "SESSIONTOKENEXAMPLE0123456789";
	o.region = "us-east-1";
	o.endpoint = "http://127.0.0.1:1/";
	o.creds = &cr;
	o.max_attempts = 3;
	o.backoff_base_ms = 1;
	o.backoff_cap_ms = 5;
	c = ec2_client_new(&o, &err);
	ok(c != NULL, "client made: %s", c ? "" : err.msg);
	if (!c)
		return;
	p.image_id = "ami-1";
	p.instance_type = "g5.12xlarge";
	p.client_token = "tok";
	cls = ec2_run_instances(c, &p, &l, &err);
	is_str(ec2_class_name(cls), "TRANSIENT", "connection refused is TRANSIENT");
	has_str(err.msg, "ec2 RunInstances in us-east-1 (g5.12xlarge): ", "message names call, region, type");
	has_str(err.msg, "gave up after 3 attempts", "message says the budget ran out");
	ok(!strstr(err.msg, cr.secret_key) && !strstr(err.msg, cr.session_token),
	   "no secret in the message");
	st = ec2_client_stats(c);
	is_num(st.api_calls, 3, "3 calls made");
	is_num(st.retries, 2, "2 of them retries");
	is_num(st.budget_exhausted, 1, "budget exhausted once");
	ok(l.n == 0 && l.v == NULL, "no instances on failure");
	ec2_stats_reset(c);
	p.client_token = NULL;
	cls = ec2_run_instances(c, &p, &l, &err);
	ok(cls == EC2_PERMANENT && ec2_client_stats(c).api_calls == 0,
	   "no ClientToken: PERMANENT, nothing sent");
	ec2_client_free(c);

	o.endpoint = "ftp://example.com/";
	ok(ec2_client_new(&o, &err) == NULL, "ftp endpoint refused");
	has_str(err.msg, "https://", "message asks for https");
	o.endpoint = NULL;
	o.region = NULL;
	ok(ec2_client_new(&o, &err) == NULL, "no region refused");
	has_str(err.msg, "region", "message names the region");
}

int main(void)
{
	test_run_instances();
	test_describe_pages();
	test_stream();
	test_instance_types();
	test_errors();
	test_classify();
	test_backoff();
	test_redact();
	test_client_unreachable();
	return done_testing();
}

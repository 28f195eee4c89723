/*
 * test_azure.c - lib/cloud/azure_auth.c, arm.c and azure_vm.c without a
 * network: ARM's errors classed, operation documents, Retry-After, token
 * answers, the credentials file (names, permissions, no value in a
 * message), the certificate's client assertion (verified here with the
 * certificate's key), VM bodies, VM and listing and NIC answers. The wire
 * itself: tests/integration/test_azure_wire.sh against the fake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "arm.h"
#include "azure_auth.h"
#include "azure_catalog.h"
#include "azure_vm.h"
#include "strutil.h"
#include "tap.h"

static char dir[] = "/tmp/test_azure.XXXXXX";

static char *put(const char *name, mode_t mode, const char *text)
{
	struct strbuf sb;
	FILE *f;
	char *p;

	sb_init(&sb);
	sb_addf(&sb, "%s/%s", dir, name);
	p = sb_take(&sb);
	f = fopen(p, "w");
	if (!f) {
		printf("Bail out! cannot write %s\n", p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
	return p;
}

static void test_classify(void)
{
	char code[96], *msg = NULL, st[32];

	ok(arm_classify(200, "ZonalAllocationFailed", "x") == AZ_CAPACITY, "ZonalAllocationFailed (an operation's) is capacity");
	ok(arm_classify(409, "SkuNotAvailable", "x") == AZ_CAPACITY, "409 SkuNotAvailable is capacity");
	ok(arm_classify(200, "OverconstrainedZonalAllocationRequest", NULL) == AZ_CAPACITY, "Overconstrained...Zonal is capacity");
	ok(arm_classify(409, "OperationNotAllowed", "results in exceeding approved Total Regional Cores quota") == AZ_QUOTA,
	   "OperationNotAllowed about a quota is quota");
	ok(arm_classify(409, "OperationNotAllowed", "the VM is being deleted") == AZ_PERMANENT,
	   "OperationNotAllowed about something else is not quota");
	ok(arm_classify(400, "QuotaExceeded", NULL) == AZ_QUOTA, "QuotaExceeded is quota");
	ok(arm_classify(429, "TooManyRequests", NULL) == AZ_THROTTLED, "429 is throttled");
	ok(arm_classify(401, "InvalidAuthenticationToken", NULL) == AZ_AUTH, "401 is auth");
	ok(arm_classify(403, "AuthorizationFailed", NULL) == AZ_AUTH, "403 is auth");
	ok(arm_classify(404, "ResourceNotFound", NULL) == AZ_NOT_FOUND, "404 is not-found");
	ok(arm_classify(503, "", NULL) == AZ_TRANSIENT && arm_classify(0, NULL, NULL) == AZ_TRANSIENT,
	   "5xx and no answer are transient");
	ok(arm_classify(409, "AnotherOperationInProgress", NULL) == AZ_TRANSIENT, "409 of an operation in progress is transient");
	ok(arm_classify(400, "InvalidParameter", NULL) == AZ_PERMANENT, "400 InvalidParameter is permanent");
	ok(arm_classify(200, "InternalExecutionError", NULL) == AZ_TRANSIENT, "a failed operation's internal error is transient");

	arm_error_parse("{\"error\":{\"code\":\"SkuNotAvailable\",\"message\":\"no\\u001b[31m size\"}}", code, sizeof(code), &msg);
	is_str(code, "SkuNotAvailable", "error body: its code");
	ok(msg && !strchr(msg, '\033') && strstr(msg, "\\x1b"), "error body: its message with control characters written out");
	free(msg);
	arm_error_parse("{\"error\":{\"code\":\"DeploymentFailed\",\"message\":\"outer\",\"details\":[{\"code\":\"AllocationFailed\","
			"\"message\":\"inner\"}]}}", code, sizeof(code), &msg);
	ok(!strcmp(code, "AllocationFailed") && msg && !strcmp(msg, "inner"), "a DeploymentFailed error: the detail's code");
	free(msg);
	arm_error_parse("not json", code, sizeof(code), &msg);
	ok(code[0] == '\0' && !msg, "no JSON: no code, no message");

	ok(arm_operation_parse("{\"status\":\"Failed\",\"error\":{\"code\":\"AllocationFailed\",\"message\":\"m\"}}", st,
			       sizeof(st), code, sizeof(code), &msg) == 0 && !strcmp(st, "Failed") &&
	   !strcmp(code, "AllocationFailed"), "operation: Failed with its error");
	free(msg);
	ok(arm_operation_parse("{\"status\":\"InProgress\"}", st, sizeof(st), code, sizeof(code), &msg) == 0 &&
	   !strcmp(st, "InProgress") && !code[0], "operation: InProgress");
	free(msg);
	ok(arm_operation_parse("{\"value\":[]}", st, sizeof(st), code, sizeof(code), &msg) < 0, "no status: not an operation");

	is_num(arm_retry_after("17", 0), 17, "Retry-After in seconds");
	is_num(arm_retry_after(NULL, 0), -1, "no Retry-After");
	is_num(arm_retry_after("soon", 0), -1, "an unreadable Retry-After");
	is_num(arm_retry_after("Thu, 01 Jan 1970 00:01:40 GMT", 90), 10, "Retry-After as an HTTP date");
}

static void test_tokens(void)
{
	char *t = NULL;
	time_t exp = 0;
	burst_err_t err = { 0 };

	ok(az_token_parse("{\"token_type\":\"Bearer\",\"expires_in\":3599,\"access_token\":\"abc\"}", 1000, &t, &exp, &err) == 0 &&
	   t && !strcmp(t, "abc") && exp == 4599, "Entra's answer: expires_in a number");
	free(t);
	ok(az_token_parse("{\"access_token\":\"m\",\"expires_in\":\"3600\",\"expires_on\":\"99999\",\"token_type\":\"Bearer\"}",
			  1000, &t, &exp, &err) == 0 && exp == 4600, "IMDS's answer: expires_in a string");
	free(t);
	ok(az_token_parse("{\"access_token\":\"m\",\"expires_on\":\"5000\"}", 1000, &t, &exp, &err) == 0 && exp == 5000,
	   "expires_on alone");
	free(t);
	ok(az_token_parse("{\"access_token\":\"m\"}", 1000, &t, &exp, &err) < 0 && !t, "no expiry: refused");
	ok(az_token_parse("{\"access_token\":\"m\",\"expires_in\":60,\"token_type\":\"pop\"}", 1000, &t, &exp, &err) < 0,
	   "a token that is not Bearer: refused");
	ok(az_token_parse("[]", 1000, &t, &exp, &err) < 0, "not an object: refused");
}

static void test_creds(void)
{
	struct az_creds c;
	burst_err_t err = { 0 };
	char *p;

	p = put("sp", 0600, "# a service principal\nAZURE_TENANT_ID=11111111-1111-4111-8111-11111111beef\n"
		"export AZURE_CLIENT_ID=\"cid\"\nAZURE_CLIENT_SECRET='se=cr et'\nAZURE_SUBSCRIPTION_ID=x\n");
	ok(az_creds_from_file(p, &c, &err) == 0 && !c.managed && !strcmp(c.client_id, "cid") &&
	   !strcmp(c.secret, "se=cr et") && !strcmp(c.authority, AZ_DEFAULT_AUTHORITY), "a secret's file: quotes, export");
	az_creds_free(&c);
	chmod(p, 0640);
	ok(az_creds_from_file(p, &c, &err) < 0 && strstr(err.msg, "chmod 600") && !strstr(err.msg, "se=cr"),
	   "group-readable: refused, saying chmod 600, no secret in the message");
	free(p);
	p = put("both", 0600, "AZURE_TENANT_ID=t\nAZURE_CLIENT_ID=c\nAZURE_CLIENT_SECRET=hunter2\n"
		"AZURE_CLIENT_CERTIFICATE_PATH=/x.pem\n");
	ok(az_creds_from_file(p, &c, &err) < 0 && strstr(err.msg, "one of") && !strstr(err.msg, "hunter2"),
	   "a secret and a certificate: refused");
	free(p);
	p = put("typo", 0600, "AZURE_TENANT_ID=t\nAZURE_CLIENT_SECRTE=hunter2\n");
	ok(az_creds_from_file(p, &c, &err) < 0 && strstr(err.msg, ":2:") && strstr(err.msg, "AZURE_CLIENT_SECRTE") &&
	   !strstr(err.msg, "hunter2"), "an unknown name: file:line and the name, never the value");
	free(p);
	p = put("mi", 0600, "AZURE_MANAGED_IDENTITY=yes\n");
	ok(az_creds_from_file(p, &c, &err) == 0 && c.managed, "the managed identity");
	az_creds_free(&c);
	free(p);
	p = put("badtenant", 0600, "AZURE_TENANT_ID=a b\nAZURE_CLIENT_ID=c\nAZURE_CLIENT_SECRET=s\n");
	ok(az_creds_from_file(p, &c, &err) < 0 && strstr(err.msg, "AZURE_TENANT_ID"), "a tenant id with a space: refused");
	free(p);
	ok(az_creds_from_file("/nonexistent/az", &c, &err) < 0 && strstr(err.msg, "/nonexistent/az"), "no file: named");
	{
		struct az_auth_opts o;
		struct az_creds h = { 0 };
		h.tenant = "t";
		h.client_id = "c";
		h.secret = "s";
		h.authority = "http://login.example";
		memset(&o, 0, sizeof(o));
		o.creds = &h;
		ok(az_auth_new(&o, &err) == NULL && strstr(err.msg, "https"), "an http authority: refused");
	}
}

static char *b64url_decode(const char *s, size_t *n)
{
	size_t l = strlen(s), i;
	char *t = xmalloc(l + 4);
	unsigned char *out = xmalloc(l + 4);
	int r;

	for (i = 0; i < l; i++)
		t[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	while (i % 4)
		t[i++] = '=';
	t[i] = '\0';
	r = EVP_DecodeBlock(out, (unsigned char *)t, (int)i);
	*n = r < 0 ? 0 : (size_t)r - (size_t)(i - l);
	free(t);
	return (char *)out;
}

static void test_assertion(void)
{
	EVP_PKEY *key = EVP_RSA_gen(2048);
	X509 *x = X509_new();
	FILE *f;
	char path[200], *jwt, *dot1, *dot2, *hdr, *pay, *sig;
	size_t hn, pn, sn;
	burst_err_t err = { 0 };
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char *der = NULL, th[SHA_DIGEST_LENGTH];
	int dl;

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)"t", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_sign(x, key, EVP_sha256());
	snprintf(path, sizeof(path), "%s/client.pem", dir);
	f = fopen(path, "w");
	X509_print_fp(f, x);   /* text before the blocks, as openssl writes it */
	PEM_write_X509(f, x);
	PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
	fclose(f);
	chmod(path, 0600);

	jwt = az_client_assertion(path, "cid", "https://login/t/oauth2/v2.0/token", 1000, &err);
	ok(jwt != NULL, "an assertion from a PEM with the certificate before the key%s%s", jwt ? "" : ": ", jwt ? "" : err.msg);
	if (!jwt)
		goto out;
	dot1 = strchr(jwt, '.');
	dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	ok(dot1 && dot2, "three parts");
	if (!dot2)
		goto out;
	*dot1 = *dot2 = '\0';
	hdr = b64url_decode(jwt, &hn);
	pay = b64url_decode(dot1 + 1, &pn);
	sig = b64url_decode(dot2 + 1, &sn);
	hdr[hn] = pay[pn] = '\0';
	dl = i2d_X509(x, &der);
	SHA1(der, (size_t)dl, th);
	{
		json_object *h = json_tokener_parse(hdr), *p = json_tokener_parse(pay), *v;
		size_t xn;
		char *x5t = NULL;
		ok(h && json_object_object_get_ex(h, "x5t", &v) && (x5t = b64url_decode(json_object_get_string(v), &xn)) &&
		   xn == sizeof(th) && !memcmp(x5t, th, xn), "header x5t: the certificate's SHA-1 thumbprint");
		free(x5t);
		ok(h && json_object_object_get_ex(h, "alg", &v) && !strcmp(json_object_get_string(v), "RS256"), "alg RS256");
		ok(p && json_object_object_get_ex(p, "aud", &v) && !strcmp(json_object_get_string(v),
									 "https://login/t/oauth2/v2.0/token") &&
		   json_object_object_get_ex(p, "iss", &v) && !strcmp(json_object_get_string(v), "cid") &&
		   json_object_object_get_ex(p, "exp", &v) && json_object_get_int64(v) == 1600,
		   "payload: aud the token URL, iss the client, exp 10 minutes on");
		json_object_put(h);
		json_object_put(p);
	}
	dot1[0] = '.';
	ok(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	   EVP_DigestVerify(md, (unsigned char *)sig, sn, (unsigned char *)jwt, strlen(jwt)) == 1,
	   "the signature verifies with the certificate's key");
	jwt[3] ^= 1;
	EVP_MD_CTX_reset(md);
	ok(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	   EVP_DigestVerify(md, (unsigned char *)sig, sn, (unsigned char *)jwt, strlen(jwt)) != 1,
	   "... and not for a changed header");
	free(hdr);
	free(pay);
	free(sig);
	chmod(path, 0644);
	{
		char *j2 = az_client_assertion(path, "cid", "u", 1000, &err);
		ok(!j2 && strstr(err.msg, "chmod 600"), "a certificate file others can read: refused");
		free(j2);
	}
out:
	free(jwt);
	OPENSSL_free(der);
	EVP_MD_CTX_free(md);
	X509_free(x);
	EVP_PKEY_free(key);
	unlink(path);
}

static void test_vm(void)
{
	const char *k[] = { "burst-cluster", "burst-node", "burst-attempt" }, *v[] = { "c1", "n-1", "2" };
	struct az_vm_spec s;
	burst_err_t err = { 0 };
	char *b, *n = NULL;
	json_object *o, *x;
	struct az_vm vm;
	char ip[64];

	memset(&s, 0, sizeof(s));
	s.name = "c1-n-1";
	s.location = "eastus";
	s.zone = "2";
	s.size = "Standard_D2s_v5";
	s.image = "Canonical:ubuntu-24_04-lts:server:latest";
	s.subnet_id = "/subscriptions/s/resourceGroups/r/providers/Microsoft.Network/virtualNetworks/v/subnets/x";
	s.custom_data = "hi\n";
	s.custom_len = 3;
	s.tag_keys = k;
	s.tag_vals = v;
	s.ntags = 3;
	s.spot = true;
	s.max_price = 0.25;
	b = az_vm_body(&s, &err);
	o = b ? json_tokener_parse(b) : NULL;
	ok(o != NULL, "a VM body is JSON");
	ok(o && json_object_object_get_ex(o, "zones", &x) && !strcmp(json_object_get_string(json_object_array_get_idx(x, 0)), "2"),
	   "zones [\"2\"]");
	{
		json_object *p = NULL, *q = NULL;
		json_object_object_get_ex(o, "properties", &p);
		ok(p && json_object_object_get_ex(p, "priority", &x) && !strcmp(json_object_get_string(x), "Spot") &&
		   json_object_object_get_ex(p, "evictionPolicy", &x) && !strcmp(json_object_get_string(x), "Delete") &&
		   json_object_object_get_ex(p, "billingProfile", &q) && json_object_object_get_ex(q, "maxPrice", &x) &&
		   json_object_get_double(x) == 0.25, "spot: priority, evictionPolicy Delete, billingProfile.maxPrice");
		ok(p && json_object_object_get_ex(p, "osProfile", &q) && json_object_object_get_ex(q, "customData", &x) &&
		   !strcmp(json_object_get_string(x), "aGkK"), "customData base64");
		ok(p && json_object_object_get_ex(p, "storageProfile", &q) && json_object_object_get_ex(q, "imageReference", &q) &&
		   json_object_object_get_ex(q, "offer", &x) && !strcmp(json_object_get_string(x), "ubuntu-24_04-lts"),
		   "the URN split into imageReference");
	}
	json_object_put(o);
	free(b);
	s.image = "Canonical:ubuntu";
	ok(!az_vm_body(&s, &err) && strstr(err.msg, "four parts"), "a short URN: refused");
	s.image = "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/images/i";
	s.name = "-bad";
	ok(!az_vm_body(&s, &err) && strstr(err.msg, "-bad"), "a bad VM name: refused");
	s.name = "ok";
	s.subnet_id = "subnet-1";
	ok(!az_vm_body(&s, &err) && strstr(err.msg, "SubnetId"), "a subnet that is no resource id: refused");
	ok(az_vm_name_ok("a") && az_vm_name_ok("n_1.x") && !az_vm_name_ok("a.") && !az_vm_name_ok("a b") &&
	   !az_vm_name_ok(""), "VM names");

	ok(az_vm_parse("{\"name\":\"c1-n-1\",\"location\":\"eastus\",\"zones\":[\"3\"],\"tags\":{\"burst-cluster\":\"c1\","
		       "\"burst-node\":\"n-1\",\"burst-attempt\":\"4\"},\"properties\":{\"provisioningState\":\"Creating\","
		       "\"hardwareProfile\":{\"vmSize\":\"Standard_D2s_v5\"},\"networkProfile\":{\"networkInterfaces\":"
		       "[{\"id\":\"/subscriptions/s/nic1\"}]},\"instanceView\":{\"statuses\":[{\"code\":\"PowerState/running\"}]}}}",
		       &vm) == 0 && !strcmp(vm.state, "Creating") && !strcmp(vm.zone, "3") && !strcmp(vm.node, "n-1") &&
	   vm.attempt == 4 && !strcmp(vm.nic_id, "/subscriptions/s/nic1") && !strcmp(vm.power, "running"),
	   "a VM read back: state, zone, tags, NIC, power");
	ok(!vm.provider[0], "no burst-provider tag: none");
	ok(az_vm_parse("{\"name\":\"c1-n-2\",\"tags\":{\"burst-cluster\":\"c1\",\"burst-provider\":\"azurespot\"},"
		       "\"properties\":{}}", &vm) == 0 && !strcmp(vm.provider, "azurespot"),
	   "the burst-provider tag read back (%s)", vm.provider);
	ok(az_vm_parse("{\"error\":{}}", &vm) < 0, "an error is no VM");
	/* found by fuzz_azure: a VM whose name was no string was read as a VM without a name */
	ok(az_vm_parse("{\"name\":5,\"properties\":{}}", &vm) < 0, "a name that is no string: no VM");
	ok(az_vm_parse("{\"name\":\"\",\"properties\":{}}", &vm) < 0, "an empty name: no VM");
	ok(az_vm_parse("{\"name\":\"a\",\"properties\":[]}", &vm) < 0, "properties that are no object: no VM");
	{
		char big[200];
		memset(big, 'x', 100);
		snprintf(big + 100, sizeof(big) - 100, "\",\"properties\":{}}");
		memcpy(big, "{\"name\":\"", 9);
		ok(az_vm_parse(big, &vm) < 0, "a name too long to hold whole: no VM (not another VM's, cut short)");
	}
	{
		struct { long n; } cnt = { 0 };
		long r = az_vm_list_parse("{\"value\":[{\"name\":\"a\",\"properties\":{}},{\"x\":1},{\"name\":7,\"properties\":{}},"
					  "{\"name\":\"b\",\"properties\":{}}],"
					  "\"nextLink\":\"https://h/next\"}", NULL, &cnt, &n);
		ok(r == 2 && n && !strcmp(n, "https://h/next"), "a listing page: its VMs (not one without a name), its nextLink");
		free(n);
		ok(az_vm_list_parse("{\"value\":[]}", NULL, NULL, &n) == 0 && !n, "the last page: no nextLink");
		ok(az_vm_list_parse("{}", NULL, NULL, &n) < 0, "no value: no listing");
	}
	ok(az_nic_private_ip("{\"properties\":{\"ipConfigurations\":[{\"properties\":{\"privateIPAddress\":\"10.0.0.9\","
			     "\"primary\":true}}]}}", ip, sizeof(ip)) == 0 && !strcmp(ip, "10.0.0.9"), "a NIC's private address");
	ok(az_nic_private_ip("{\"properties\":{\"ipConfigurations\":[{\"properties\":{\"privateIPAddress\":\"10.0.0.9;rm\"}}]}}",
			     ip, sizeof(ip)) < 0 && !ip[0], "an address that is no address: refused");
	{
		char *p = az_vm_path("S", "R", "n");
		is_str(p, "/subscriptions/S/resourceGroups/R/providers/Microsoft.Compute/virtualMachines/n?api-version="
		       ARM_COMPUTE_API, "a VM's path");
		free(p);
	}
}

/* The Resource SKUs listing as the catalog refresh's instance types. */
/* A 429's x-ms-ratelimit-remaining-* headers: which bucket is empty. */
static void test_ratelimit_left(void)
{
	ok(arm_ratelimit_left("0") == 0 && arm_ratelimit_left(" 1199") == 1199 && arm_ratelimit_left("1199") == 1199,
	   "a subscription's remaining count");
	ok(arm_ratelimit_left("Microsoft.Compute/PutVM3Min;239,Microsoft.Compute/PutVM30Min;0") == 0,
	   "the resource provider's buckets: the least of them (0)");
	ok(arm_ratelimit_left("Microsoft.Compute/PutVM3Min;239,Microsoft.Compute/PutVM30Min;1199") == 239,
	   "... 239 of 239 and 1199");
	ok(arm_ratelimit_left("") == -1 && arm_ratelimit_left("none") == -1 && arm_ratelimit_left(NULL) == -1 &&
	   arm_ratelimit_left("Microsoft.Compute/PutVM3Min;x") == -1, "no count: -1 (both buckets are emptied)");
}

static void test_skus(void)
{
	struct ec2_instance_types l = { 0 };
	burst_err_t err;
	char *next = NULL;

	ok(az_skus_parse("{\"value\":["
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_ND96isr_H100_v5\",\"locations\":[\"EastUS\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"96\"},{\"name\":\"MemoryGB\",\"value\":\"1900\"},"
			 "{\"name\":\"GPUs\",\"value\":\"8\"},{\"name\":\"CpuArchitectureType\",\"value\":\"x64\"}]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_D2ps_v5\",\"locations\":[\"eastus\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"8\"},"
			 "{\"name\":\"CpuArchitectureType\",\"value\":\"Arm64\"}]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_A0\",\"locations\":[\"eastus\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"1\"},{\"name\":\"MemoryGB\",\"value\":\"0.75\"}]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_NC6s_v3\",\"locations\":[\"eastus\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"6\"},{\"name\":\"MemoryGB\",\"value\":\"112\"},{\"name\":\"GPUs\",\"value\":\"1\"}]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_D2ps_v5\",\"locations\":[\"eastus\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"8\"}]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_WestOnly\",\"locations\":[\"westus\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"8\"}]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_Restricted\",\"locations\":[\"eastus\"],"
			 "\"restrictions\":[{\"type\":\"Location\",\"values\":[\"eastus\"],\"reasonCode\":\"NotAvailableForSubscription\"}],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"2\"},{\"name\":\"MemoryGB\",\"value\":\"8\"}]},"
			 "{\"resourceType\":\"disks\",\"name\":\"Premium_LRS\",\"locations\":[\"eastus\"]},"
			 "{\"resourceType\":\"virtualMachines\",\"name\":\"Standard_Bad\",\"locations\":[\"eastus\"],"
			 "\"capabilities\":[{\"name\":\"vCPUs\",\"value\":\"two\"},{\"name\":\"MemoryGB\",\"value\":\"8\"}]}],"
			 "\"nextLink\":\"https://management.azure.com/subscriptions/s/providers/Microsoft.Compute/skus?$skiptoken=9\"}",
			 "eastus", &l, &next, &err) == 0 && next && strstr(next, "skiptoken=9"),
	   "a page of resource SKUs parses, with its nextLink");
	ok(l.n == 4, "four VM sizes: each once, not another region's, not a restricted one, not a disk, not one without a number of vCPUs (%zu)", l.n);
	ok(l.n == 4 && !strcmp(l.v[0].name, "Standard_ND96isr_H100_v5") && l.v[0].vcpus == 96 && l.v[0].memory_mib == 1945600 &&
	   l.v[0].gpu_count == 8 && !strcmp(l.v[0].gpu_name, "H100") && !strcmp(l.v[0].arch, "x86_64"),
	   "a GPU size: 96 vCPUs, 1900 GiB, 8 GPUs named from the size (H100), x64 is x86_64 (region matched without case)");
	ok(l.n == 4 && !strcmp(l.v[1].arch, "arm64") && l.v[1].gpu_count == 0 && l.v[1].storage_disk && !*l.v[1].storage_disk,
	   "Arm64 is arm64; no GPU; no word on storage");
	ok(l.n == 4 && l.v[2].memory_mib == 768 && !l.v[2].arch, "0.75 GiB is 768 MiB; no architecture given, none said");
	ok(l.n == 4 && l.v[3].gpu_count == 1 && !strcmp(l.v[3].gpu_name, "GPU"), "a GPU size whose name names no model: GPU");
	free(next);
	ec2_instance_types_free(&l);
	ok(az_skus_parse("{\"value\":[]}", "eastus", &l, &next, &err) == 0 && !next && l.n == 0, "the last page: no nextLink");
	ok(az_skus_parse("{\"error\":{\"code\":\"X\"}}", "eastus", &l, &next, &err) < 0 && strstr(err.msg, "resource SKUs"),
	   "not a listing: refused, saying so (%s)", err.msg);
	ok(az_skus_parse("not json", "eastus", &l, &next, &err) < 0, "not JSON: refused");
}

int main(void)
{
	test_skus();
	test_ratelimit_left();
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	test_classify();
	test_tokens();
	test_creds();
	test_assertion();
	test_vm();
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}

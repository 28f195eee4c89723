/*
 * test_policy.c - the admission policy (lib/core/policy.h) on the fixture records
 * of tests/fixtures/sysroots against the AWS catalog, and its burst.conf keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "policy.h"
#include "strutil.h"
#include "tap.h"

#define SYSROOTS BURST_ABS_SRCDIR "/tests/fixtures/sysroots"
#define CATALOG BURST_ABS_SRCDIR "/share/catalog"

static struct catalog *cat;

static json_object *record(const char *name)
{
	char path[512];
	json_object *r;

	snprintf(path, sizeof(path), SYSROOTS "/%s.expected.json", name);
	r = json_object_from_file(path);
	if (!r) {
		printf("Bail out! cannot read %s\n", path);
		exit(1);
	}
	return r;
}

static int check(const struct policy *p, const char *fixture, const char *type, json_object *rec,
		 char *why, size_t len)
{
	json_object *r = rec ? rec : record(fixture);
	const struct cat_type *t = type ? catalog_find_type(cat, type) : NULL;
	int rc;

	if (type && !t) {
		printf("Bail out! no type %s in the catalog\n", type);
		exit(1);
	}
	rc = policy_check(p, cat, t, r, why, len);
	if (!rec)
		json_object_put(r);
	return rc;
}

static void test_hardware(void)
{
	struct policy p;
	char why[1024];
	json_object *r, *mem;

	policy_init(&p);
	is_num(check(&p, "a10gx4", "aws:g5.12xlarge", NULL, why, sizeof(why)), 0,
	       "a10gx4 is a g5.12xlarge");
	is_str(why, "", "no reason when admitted");
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0,
	       "a100x8 is a p4d.24xlarge (MemTotal 1143 GiB within 5%% of 1152 GiB)");
	is_num(check(&p, "h100x8-missing1", "aws:p5.48xlarge", NULL, why, sizeof(why)), 1,
	       "h100x8 with one GPU fallen off the bus is rejected as a p5.48xlarge");
	has_str(why, "8 x H100 expected for p5.48xlarge, 7 found", "the reason names 8 and 7");
	has_str(why, "missing 1", "and how many are missing");

	/* the wrong model: an A100 node launched as a p5 */
	is_num(check(&p, "a100x8", "aws:p5.48xlarge", NULL, why, sizeof(why)), 1,
	       "a100x8 is not a p5.48xlarge");
	has_str(why, "8 x H100 expected for p5.48xlarge, 0 found (also 8 x A100-40GB)",
		"the reason names the model found instead");
	has_str(why, "192 vCPUs expected for p5.48xlarge, 96 found", "and the vCPUs");
	/* a node without accelerators launched as a GPU type */
	is_num(check(&p, "host", "aws:g5.12xlarge", NULL, why, sizeof(why)), 1,
	       "a machine without GPUs is not a g5.12xlarge");
	has_str(why, "4 x A10G expected for g5.12xlarge, 0 found (missing 4)", "no GPU found");
	/* more hardware than promised is fine: the a10gx4 record as a CPU-only type */
	is_num(check(&p, "a10gx4", "aws:m5.2xlarge", NULL, why, sizeof(why)), 0,
	       "extra accelerators and memory do not reject");

	/* memory: 576 GiB recorded for a type that promises 1152 GiB */
	r = record("a100x8");
	json_object_object_get_ex(r, "memory", &mem);
	json_object_object_add(mem, "total_bytes", json_object_new_int64(576LL << 30));
	is_num(check(&p, NULL, "aws:p4d.24xlarge", r, why, sizeof(why)), 1,
	       "half the memory rejects");
	has_str(why, "1152.0 GiB memory expected for p4d.24xlarge, 576.0 GiB found",
		"the reason names both amounts");
	/* exactly at the tolerance's edge: 95% of 1152 GiB is admitted, a MiB less is not */
	json_object_object_add(mem, "total_bytes", json_object_new_int64((long long)ceil(1152.0 * 0.95 * 1024) << 20));
	is_num(check(&p, NULL, "aws:p4d.24xlarge", r, why, sizeof(why)), 0, "95%% of the memory admits");
	json_object_object_add(mem, "total_bytes",
			       json_object_new_int64(((long long)ceil(1152.0 * 0.95 * 1024) - 1) << 20));
	is_num(check(&p, NULL, "aws:p4d.24xlarge", r, why, sizeof(why)), 1, "a MiB less rejects");
	has_str(why, "MemoryTolerance=5%", "naming the tolerance");
	p.memory_tolerance = 0.10;
	is_num(check(&p, NULL, "aws:p4d.24xlarge", r, why, sizeof(why)), 0, "a 10%% tolerance admits it");
	p.memory_tolerance = 0;
	json_object_put(r);
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 1,
	       "no tolerance: 1143 GiB is less than 1152 GiB");
	has_str(why, "1143.0 GiB found", "the recorded amount");
	/* no type: the policy alone */
	policy_init(&p);
	is_num(check(&p, "h100x8-missing1", NULL, NULL, why, sizeof(why)), 0, "no type, no hardware check");
}

static void test_kernel(void)
{
	struct policy p;
	char why[1024];
	char *good[] = { "6.1.0-18-amd64", "5.15.0-91-generic:B0BF2A764C76A427B48C6EDAD500ECBAF2387C6C" };
	char *bad[] = { "5.15.0-91-generic:0000000000000000000000000000000000000000", "5.15.0-91" };
	char *extra[] = { "5.15.0-91-generic" };
	char *mods[] = { "nvidia", "efa", "mlx5_ib" };

	policy_init(&p);
	p.blessed_kernels = bad;
	p.nblessed = 2;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 1,
	       "a kernel whose build-id differs from the blessed one is rejected");
	has_str(why, "kernel 5.15.0-91-generic (build-id b0bf2a764c76a427b48c6edad500ecbaf2387c6c) is not blessed",
		"the reason names release and build-id");
	p.blessed_extra = extra;
	p.nblessed_extra = 1;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0,
	       "blessed by the blessed-kernels file (release only)");
	p.blessed_extra = NULL;
	p.nblessed_extra = 0;
	p.blessed_kernels = good;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0,
	       "blessed release and build-id (case-insensitive hex)");
	is_num(check(&p, "a10gx4", "aws:g5.12xlarge", NULL, why, sizeof(why)), 1,
	       "another kernel is not blessed");
	ok(policy_kernel_matches("6.1.0-18-amd64", "6.1.0-18-amd64", NULL), "release alone matches");
	ok(!policy_kernel_matches("6.1.0-18-amd64:ab", "6.1.0-18-amd64", NULL), "a build-id needs one recorded");
	ok(!policy_kernel_matches("6.1.0-18", "6.1.0-18-amd64", "ab"), "release prefix does not match");

	/* taint */
	policy_init(&p);
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 0, "taint POE allowed by default");
	p.allowed_taint = POLICY_TAINT_P | POLICY_TAINT_O;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 1, "E outside AllowedTaint=PO rejects");
	has_str(why, "kernel tainted with E", "the reason names the flag");
	has_str(why, "AllowedTaint=PO", "and the allowed ones");
	p.allowed_taint = 0;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 1, "AllowedTaint=none rejects POE");
	has_str(why, "kernel tainted with POE", "naming every flag");
	{
		json_object *r = record("a10gx4"), *k, *t;
		json_object_object_get_ex(r, "kernel", &k);
		json_object_object_get_ex(k, "taint", &t);
		json_object_object_add(t, "value", json_object_new_int64(4097 | (1 << 9) | (1 << 7)));
		policy_init(&p);
		is_num(check(&p, NULL, NULL, r, why, sizeof(why)), 1, "a kernel warning (W) and oops (D) reject");
		has_str(why, "kernel tainted with DW", "naming D and W, not P or O");
		json_object_put(r);
	}

	/* modules */
	policy_init(&p);
	p.required_modules = mods;
	p.nrequired = 1;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 0, "nvidia is loaded");
	p.nrequired = 3;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 1, "efa is not loaded on the a100x8");
	has_str(why, "kernel module efa is required but not loaded", "the reason names it");
	ok(!strstr(why, "mlx5_ib"), "and only the missing one");
	is_num(check(&p, "host", NULL, NULL, why, sizeof(why)), 1, "no module list: rejected");

	/* several reasons at once */
	p.blessed_kernels = bad;
	p.nblessed = 1;
	is_num(check(&p, "h100x8-missing1", "aws:p5.48xlarge", NULL, why, sizeof(why)), 1, "several failures");
	has_str(why, "BlessedKernels=); kernel module mlx5_ib is required", "reasons are joined");
	has_str(why, "7 found", "the GPU too");
	/* a short buffer is truncated, not overrun */
	{
		char small[16];
		is_num(check(&p, "h100x8-missing1", "aws:p5.48xlarge", NULL, small, sizeof(small)), 1,
		       "short buffer");
		is_num(strlen(small), 15, "truncated to fit");
		is_num(check(&p, "h100x8-missing1", "aws:p5.48xlarge", NULL, NULL, 0), 1,
		       "no buffer at all: the verdict still");
		is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, NULL, 0), 1,
		       "no buffer: a100x8 is still rejected (efa, blessed)");
		p.blessed_kernels = NULL;
		p.nblessed = 0;
		p.nrequired = 1;
		is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, NULL, 0), 0, "no buffer: admitted");
	}
}

static void test_malformed(void)
{
	struct policy p;
	char why[256];
	json_object *r;

	policy_init(&p);
	r = json_object_new_array();
	is_num(policy_check(&p, cat, NULL, r, why, sizeof(why)), -1, "an array is not a record");
	json_object_put(r);
	r = json_tokener_parse("{\"kernel\":{},\"cpu\":{},\"memory\":{}}");
	is_num(policy_check(&p, cat, NULL, r, why, sizeof(why)), -1, "no accelerators section");
	has_str(why, "accelerators", "the reason names the section");
	json_object_put(r);
	is_num(policy_check(&p, cat, NULL, NULL, why, sizeof(why)), -1, "NULL record");
}

static void test_parse(void)
{
	double d;
	unsigned long long m;
	char bad;

	ok(policy_parse_tolerance("5%", &d) == 0 && fabs(d - 0.05) < 1e-12, "5%% is 0.05");
	ok(policy_parse_tolerance("0.1", &d) == 0 && fabs(d - 0.1) < 1e-12, "0.1");
	ok(policy_parse_tolerance("0", &d) == 0 && d == 0, "0");
	ok(policy_parse_tolerance("100%", &d) < 0, "100%% refused");
	ok(policy_parse_tolerance("-1%", &d) < 0, "negative refused");
	ok(policy_parse_tolerance("5 %", &d) < 0, "junk refused");
	ok(policy_parse_taint("OE", &m, &bad) == 0 && m == (POLICY_TAINT_O | POLICY_TAINT_E), "OE");
	ok(policy_parse_taint("12289", &m, &bad) == 0 && m == POLICY_DEFAULT_TAINT, "12289 is POE");
	ok(policy_parse_taint("0x1001", &m, &bad) == 0 && m == (POLICY_TAINT_P | POLICY_TAINT_O), "hex");
	ok(policy_parse_taint("none", &m, &bad) == 0 && m == 0, "none");
	ok(policy_parse_taint("OZ", &m, &bad) < 0 && bad == 'Z', "Z is not a letter");
	ok(policy_valid_kernel("6.1.0-18-amd64:ab12"), "valid entry");
	ok(!policy_valid_kernel("6.1.0-18-amd64:xyz"), "build-id must be hex");
	ok(!policy_valid_kernel(":ab"), "release needed");
	ok(!policy_valid_kernel("a b"), "no blanks");
}

static char *write_tmp(const char *text)
{
	char *path = xstrdup("/tmp/test_policy.XXXXXX");
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0) {
		printf("Bail out! mkstemp\n");
		exit(1);
	}
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_config(void)
{
	burst_err_t err;
	struct burst_config *cfg;
	struct policy p;
	char *path;

	path = write_tmp("# policy\n"
			 "BlessedKernels=6.1.0-18-amd64,6.1.0-20-amd64:ab12 MemoryTolerance=3%\n"
			 "RequiredModules=nvidia,efa AllowedTaint=OE\n"
			 "NodeSet=gpu Nodes=g-[1-2] InstanceTypes=p5.48xlarge MemoryTolerance=0.1 AllowedTaint=POE\n"
			 "NodeSet=cpu Nodes=c-[1-2] InstanceTypes=m5.2xlarge BlessedKernels= RequiredModules=ena\n");
	cfg = config_load(path, &err);
	ok(cfg != NULL, "burst.conf with policy keys loads");
	if (!cfg)
		diag("%s", err.msg);
	else {
		config_policy(cfg, NULL, &p);
		is_num(p.nblessed, 2, "global: two blessed kernels");
		is_str(p.blessed_kernels[1], "6.1.0-20-amd64:ab12", "as written");
		ok(fabs(p.memory_tolerance - 0.03) < 1e-12, "global tolerance 3%%");
		is_num(p.nrequired, 2, "two required modules");
		ok(p.allowed_taint == (POLICY_TAINT_O | POLICY_TAINT_E), "global AllowedTaint=OE");
		config_policy(cfg, &cfg->nodesets[0], &p);
		is_num(p.nblessed, 2, "gpu inherits the blessed kernels");
		ok(fabs(p.memory_tolerance - 0.1) < 1e-12, "gpu overrides the tolerance");
		is_str(p.required_modules[1], "efa", "gpu inherits the modules");
		ok(p.allowed_taint == POLICY_DEFAULT_TAINT, "gpu overrides the taint");
		config_policy(cfg, &cfg->nodesets[1], &p);
		is_num(p.nblessed, 0, "cpu: BlessedKernels= empty admits any kernel");
		ok(fabs(p.memory_tolerance - 0.03) < 1e-12, "cpu inherits the tolerance");
		is_num(p.nrequired, 1, "cpu overrides the modules");
		is_str(p.required_modules[0], "ena", "with ena");
		ok(p.any_kernel, "cpu: any kernel, even those the blessed-kernels file does not name");
		{
			char *extra[] = { "9.9.9" }, why[512];
			p.blessed_extra = extra;
			p.nblessed_extra = 1;
			p.allowed_taint = POLICY_DEFAULT_TAINT;  /* the global OE would reject P */
			is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 0,
			       "cpu admits an unblessed kernel despite the file");
			if (why[0])
				diag("%s", why);
			config_policy(cfg, &cfg->nodesets[0], &p);
			ok(!p.any_kernel, "gpu does not admit any kernel");
		}
		config_free(cfg);
	}
	unlink(path);
	free(path);

	path = write_tmp("ClusterName=x\n");
	cfg = config_load(path, &err);
	config_policy(cfg, NULL, &p);
	ok(p.nblessed == 0 && p.nrequired == 0 && p.memory_tolerance == 0.05 &&
	   p.allowed_taint == POLICY_DEFAULT_TAINT, "defaults: any kernel, 5%%, no module, POE");
	config_free(cfg);
	unlink(path);
	free(path);

	path = write_tmp("MemoryTolerance=150%\n"
			 "AllowedTaint=OZ\n"
			 "MemoryTolerence=5%\n"
			 "BlessedKernels=6.1.0:xyz\n"
			 "NodeSet=gpu Nodes=g-[1-2] InstanceTypes=p5.48xlarge AllowedTaint=none Memorytolerance=x\n");
	cfg = config_load(path, &err);
	ok(cfg == NULL, "bad policy values are errors");
	has_str(err.msg, ":1: MemoryTolerance=150%", "tolerance error names line 1");
	has_str(err.msg, ":2: AllowedTaint=OZ: 'Z' is not a kernel taint letter", "taint error names the letter");
	has_str(err.msg, ":3: unknown key 'MemoryTolerence'; did you mean 'MemoryTolerance'?", "suggestion");
	has_str(err.msg, ":4: BlessedKernels: '6.1.0:xyz' is not RELEASE[:BUILDID]", "bad build-id");
	has_str(err.msg, ":5: NodeSet gpu: MemoryTolerance=x", "node set errors name the node set");
	config_free(cfg);
	unlink(path);
	free(path);
}

static void test_blessed_file(void)
{
	burst_err_t err;
	char **list = NULL;
	size_t n = 0;
	char *path;

	is_num(policy_load_blessed_file("/nonexistent/blessed-kernels", &list, &n, &err), 0,
	       "a missing file adds nothing");
	is_num(n, 0, "nothing");
	path = write_tmp("# blessed by burstctl\n\n6.1.0-18-amd64:AB12  # from node-1\n  5.15.0-91-generic\n");
	is_num(policy_load_blessed_file(path, &list, &n, &err), 0, "the file loads");
	is_num(n, 2, "two entries");
	is_str(list[0], "6.1.0-18-amd64:AB12", "comment and blanks stripped");
	is_str(list[1], "5.15.0-91-generic", "release only");
	unlink(path);
	free(path);
	path = write_tmp("6.1.0\n6.1.0-18 amd64\n");
	is_num(policy_load_blessed_file(path, &list, &n, &err), -1, "a bad line fails");
	has_str(err.msg, ":2: '6.1.0-18 amd64' is not RELEASE[:BUILDID]", "naming file:line");
	is_num(n, 2, "and adds nothing");
	unlink(path);
	free(path);
	{
		static const char nul[] = "6.1.0-21-amd64\n6.1.0-18-amd64\0 is not this\n";
		FILE *f;

		path = write_tmp("");
		f = fopen(path, "w");
		if (!f || fwrite(nul, 1, sizeof(nul) - 1, f) != sizeof(nul) - 1 || fclose(f)) {
			printf("Bail out! cannot write %s\n", path);
			exit(1);
		}
		is_num(policy_load_blessed_file(path, &list, &n, &err), -1, "a line with a NUL byte fails");
		has_str(err.msg, ":2: a NUL byte at column 15: the blessed kernels file is text",
			"naming file:line:column (not taking what is before the NUL)");
		is_num(n, 2, "and adds nothing");
		unlink(path);
		free(path);
		path = write_tmp("nvidia=550.54.15\n\033[2Jnvidia=1\n");
		is_num(policy_load_blessed_drivers(path, &list, &n, &err), -1, "a line with an escape sequence fails");
		has_str(err.msg, ":2: '\\x1b[2Jnvidia=1' is not NAME=VERSION", "the entry quoted escaped, not raw");
		unlink(path);
		free(path);
	}
	policy_free_list(list, n);
}

/* a record from another: the h100x8 as admitted with all 8 GPUs */
static json_object *h100x8_full(void)
{
	json_object *r = record("h100x8-missing1"), *acc, *devs, *d = NULL, *models;

	json_object_object_get_ex(r, "accelerators", &acc);
	json_object_object_get_ex(acc, "devices", &devs);
	json_object_object_get_ex(acc, "models", &models);
	json_object_deep_copy(json_object_array_get_idx(devs, 0), &d, NULL);
	json_object_object_add(d, "pci_address", json_object_new_string("0000:86:00.0"));
	json_object_array_add(devs, d);
	json_object_object_add(acc, "count", json_object_new_int64(8));
	json_object_object_add(models, "H100", json_object_new_int64(8));
	return r;
}

static void test_compare(void)
{
	char why[1024];
	json_object *a100 = record("a100x8"), *a100b = record("a100x8"), *h7 = record("h100x8-missing1");
	json_object *h8 = h100x8_full(), *k, *mem;

	is_num(policy_compare(a100, a100b, 0.05, why, sizeof(why)), 0, "a node equal to its record is healthy");
	is_str(why, "", "no reason");
	is_num(policy_compare(h8, h7, 0.05, why, sizeof(why)), 1, "a GPU fell off the bus since admission");
	is_str(why, "accelerators: 8 x H100 admitted, 7 now (missing 0000:86:00.0)",
	       "the reason names the counts and the PCI address gone");
	is_num(policy_compare(h7, h8, 0.05, why, sizeof(why)), 0, "one more GPU than admitted is fine");
	is_num(policy_compare(a100, h7, 0.05, why, sizeof(why)), 1, "another machine altogether");
	has_str(why, "kernel release 5.15.0-91-generic admitted, 6.5.0-1018-aws now", "kernel release");
	has_str(why, "accelerators: 8 x A100-40GB admitted, 0 now (missing 0000:10:1c.0 ", "the A100s are gone");
	ok(!strstr(why, "memory"), "more memory is no change");

	/* the same release with another build-id: a rebuilt kernel */
	json_object_object_get_ex(a100b, "kernel", &k);
	json_object_object_add(k, "build_id", json_object_new_string("0123456789abcdef0123456789abcdef01234567"));
	is_num(policy_compare(a100, a100b, 0.05, why, sizeof(why)), 1, "a changed build-id");
	is_str(why, "kernel build-id b0bf2a764c76a427b48c6edad500ecbaf2387c6c admitted, "
	       "0123456789abcdef0123456789abcdef01234567 now", "names both build-ids");
	json_object_object_add(k, "build_id", json_object_new_string("B0BF2A764C76A427B48C6EDAD500ECBAF2387C6C"));
	is_num(policy_compare(a100, a100b, 0.05, why, sizeof(why)), 0, "build-id case does not matter");

	/* memory: 1143.04 GiB admitted; 1090 GiB is within 5%, 1080 GiB is not */
	json_object_object_get_ex(a100b, "memory", &mem);
	json_object_object_add(mem, "total_bytes", json_object_new_int64(1090LL << 30));
	is_num(policy_compare(a100, a100b, 0.05, why, sizeof(why)), 0, "memory within 5%% of the admitted");
	json_object_object_add(mem, "total_bytes", json_object_new_int64(1080LL << 30));
	is_num(policy_compare(a100, a100b, 0.05, why, sizeof(why)), 1, "memory shrunk beyond 5%%");
	is_str(why, "memory 1143.0 GiB admitted, 1080.0 GiB now (MemoryTolerance=5%)", "names both amounts");
	is_num(policy_compare(a100, a100b, 0.10, why, sizeof(why)), 0, "within 10%%");
	json_object_object_add(mem, "total_bytes", NULL);
	is_num(policy_compare(a100, a100b, 0.10, why, sizeof(why)), 1, "memory unknown now");
	has_str(why, "unknown now", "says so");

	json_object_object_del(a100b, "accelerators");
	is_num(policy_compare(a100, a100b, 0.05, why, sizeof(why)), -1, "a record without accelerators");
	has_str(why, "now has no accelerators section", "which record lacks what");
	is_num(policy_compare(NULL, a100, 0.05, why, sizeof(why)), -1, "no admitted record");
	json_object_put(a100);
	json_object_put(a100b);
	json_object_put(h7);
	json_object_put(h8);
}

/* ---- blessed drivers ---- */

static void test_drivers(void)
{
	struct policy p;
	char why[2048], dir[] = "/tmp/test_policy_drv.XXXXXX", path[600], **list = NULL;
	size_t n = 0;
	burst_err_t err;
	json_object *r, *d;
	char *nv550[] = { "nvidia=550.54.15" }, *nv535[] = { "nvidia=535.161.07", "nvidia=535.183.01" };
	char *mlx[] = { "mlx5_core=23.10-1.1.9", "ib_core=6.5" }, *efa[] = { "efa=2.10.0g" };
	FILE *f;

	ok(policy_valid_driver("nvidia=550.54.15"), "nvidia=550.54.15 is NAME=VERSION");
	ok(policy_valid_driver("mlx5_core=23.10-1.1.9") && policy_valid_driver("efa=2.10.0g") &&
	   policy_valid_driver("cxi-ss1=1.0+git~1:2"), "MLNX_OFED, EFA and odd version forms");
	ok(!policy_valid_driver("nvidia") && !policy_valid_driver("=1.0") && !policy_valid_driver("nvidia=") &&
	   !policy_valid_driver("nvidia=550 54") && !policy_valid_driver("nv idia=1") &&
	   !policy_valid_driver("nvidia=1.0#x") && !policy_valid_driver("nvidia=$(x)") &&
	   !policy_valid_driver("nvidia=0123456789012345678901234567890123456789012345678901234567890123x"),
	   "no name, no version, blanks, shell characters, a version over 64 are not");

	/* the a100x8 fixture runs nvidia 550.54.15, mlx5_core 23.10-1.1.9, ib_core without a version */
	policy_init(&p);
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0, "no driver blessed: any admitted");
	p.blessed_drivers = nv550;
	p.nblessed_drivers = 1;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0, "nvidia=550.54.15 blessed: admitted");
	p.blessed_drivers = nv535;
	p.nblessed_drivers = 2;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 1, "only 535 blessed: rejected");
	is_str(why, "driver nvidia 550.54.15 is not blessed (blessed: 535.161.07, 535.183.01; bless it with "
	       "burstctl bless --driver nvidia=550.54.15, or see BlessedDrivers=)",
	       "the reason names the driver, its version and the blessed ones");
	p.blessed_drivers_extra = nv550;
	p.nblessed_drivers_extra = 1;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0,
	       "blessed in the blessed-drivers file (the extra list): admitted");
	p.blessed_drivers_extra = NULL;
	p.nblessed_drivers_extra = 0;
	p.any_driver = true;
	is_num(check(&p, "a100x8", "aws:p4d.24xlarge", NULL, why, sizeof(why)), 0,
	       "a node set's empty BlessedDrivers=: any driver");
	p.any_driver = false;
	p.blessed_drivers = mlx;
	p.nblessed_drivers = 2;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 1, "ib_core=6.5 blessed, ib_core has no version");
	is_str(why, "driver ib_core is loaded but its version is unknown (no readable /sys/module/ib_core/version); blessed: 6.5",
	       "an unknown version is named as such");
	p.blessed_drivers = efa;
	p.nblessed_drivers = 1;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 0, "efa blessed, efa not loaded: admitted");
	is_num(check(&p, "h100x8-missing1", NULL, NULL, why, sizeof(why)), 0, "h100x8-missing1 runs efa 2.10.0g");
	r = record("a100x8");
	json_object_object_del(r, "drivers");
	is_num(check(&p, NULL, NULL, r, why, sizeof(why)), 1, "a record without a drivers section when drivers are blessed");
	has_str(why, "driver versions unknown (the record has no drivers section", "... says so");
	p.nblessed_drivers = 0;
	is_num(check(&p, NULL, NULL, r, why, sizeof(why)), 0, "... and is admitted when none is");
	json_object_put(r);
	/* the taint and the kernel reasons come before, joined with "; " */
	p.blessed_drivers = nv535;
	p.nblessed_drivers = 2;
	p.allowed_taint = 0;
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 1, "tainted and an unblessed driver");
	has_str(why, "kernel tainted with POE (taint 12289; AllowedTaint=none); driver nvidia 550.54.15 is not blessed",
		"every reason, \"; \"-separated");
	p.allowed_taint = POLICY_DEFAULT_TAINT;
	r = record("a100x8");
	is_num(policy_check_drivers(&p, r, why, sizeof(why)), 1, "policy_check_drivers alone rejects it too");
	has_str(why, "driver nvidia 550.54.15 is not blessed", "... with the same reason");
	/* a hostile version in a record (it came over the network) is named as is, within why */
	json_object_object_get_ex(r, "drivers", &d);
	json_object_object_add(d, "nvidia", json_tokener_parse("{\"version\": \"x\\\"; rm -rf /\", \"source\": null}"));
	is_num(policy_check_drivers(&p, r, why, 64), 1, "a hostile version is rejected");
	is_num((long long)strlen(why), 63, "... and the reason fits the buffer");
	json_object_put(r);

	/* health: the drivers now against the admitted record */
	{
		json_object *a = record("a100x8"), *b = record("a100x8"), *bd, *e;

		is_num(policy_compare(a, b, 0.05, why, sizeof(why)), 0, "the same drivers: healthy");
		json_object_object_get_ex(b, "drivers", &bd);
		json_object_object_get_ex(bd, "nvidia", &e);
		json_object_object_add(e, "version", json_object_new_string("535.161.07"));
		json_object_object_del(bd, "mlx5_core");
		json_object_object_add(bd, "efa", json_tokener_parse("{\"version\": \"2.10.0g\", \"source\": null}"));
		is_num(policy_compare(a, b, 0.05, why, sizeof(why)), 1, "a driver updated in place and one unloaded");
		is_str(why, "driver mlx5_core 23.10-1.1.9 admitted, not loaded now; driver nvidia 550.54.15 admitted, 535.161.07 now",
		       "both named with their versions; a driver loaded since admission is no change");
		json_object_object_del(b, "drivers");
		is_num(policy_compare(a, b, 0.05, why, sizeof(why)), 1, "no drivers section now");
		has_str(why, "driver nvidia 550.54.15 admitted, not loaded now", "... every admitted driver is gone");
		is_num(policy_compare(b, a, 0.05, why, sizeof(why)), 0,
		       "an admitted record without drivers (older burst-node) compares no drivers");
		json_object_put(a);
		json_object_put(b);
	}

	/* the blessed-drivers file and policy_load_state */
	if (!ok(mkdtemp(dir) != NULL, "a state directory"))
		return;
	policy_init(&p);
	is_num(policy_load_state(&p, dir, &err), 0, "an empty StateDir loads (nothing blessed)");
	ok(p.nblessed_extra == 0 && p.nblessed_drivers_extra == 0, "... and blesses nothing");
	policy_free_state(&p);
	snprintf(path, sizeof(path), "%s/blessed-drivers", dir);
	f = fopen(path, "w");
	fputs("# comment\nnvidia=550.54.15  # from burst-1\n\nefa=2.10.0g\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/blessed-kernels", dir);
	f = fopen(path, "w");
	fputs("5.15.0-91-generic\n", f);
	fclose(f);
	is_num(policy_load_state(&p, dir, &err), 0, "both files load");
	is_num(p.nblessed_drivers_extra, 2, "two blessed drivers");
	is_str(p.blessed_drivers_extra[1], "efa=2.10.0g", "as written, comments dropped");
	is_num(p.nblessed_extra, 1, "one blessed kernel");
	is_num(check(&p, "a100x8", NULL, NULL, why, sizeof(why)), 0, "a100x8 passes the state's kernel and drivers");
	policy_free_state(&p);
	ok(p.blessed_drivers_extra == NULL && p.blessed_extra == NULL, "policy_free_state empties the lists");
	snprintf(path, sizeof(path), "%s/blessed-drivers", dir);
	f = fopen(path, "w");
	fputs("nvidia=550.54.15\nnvidia 535\n", f);
	fclose(f);
	is_num(policy_load_state(&p, dir, &err), -1, "a bad blessed-drivers line fails");
	has_str(err.msg, "blessed-drivers:2: 'nvidia 535' is not NAME=VERSION", "naming file:line and the form");
	is_num(p.nblessed_drivers_extra, 0, "a broken file blesses nothing");
	is_num(p.nblessed_extra, 1, "the kernels file is still loaded");
	policy_free_state(&p);
	is_num(policy_load_blessed_drivers("/nonexistent/blessed-drivers", &list, &n, &err), 0,
	       "a missing blessed-drivers file adds nothing");
	is_num(n, 0, "... nothing");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	ok(system(path) == 0, "state directory removed");
}

static void test_driver_config(void)
{
	burst_err_t err;
	struct burst_config *cfg;
	struct policy p;
	char *path;

	path = write_tmp("BlessedDrivers=nvidia=550.54.15,efa=2.10.0g\n"
			 "NodeSet=gpu Nodes=g-[1-2] InstanceTypes=p5.48xlarge BlessedDrivers=nvidia=535.161.07\n"
			 "NodeSet=cpu Nodes=c-[1-2] InstanceTypes=m5.2xlarge BlessedDrivers=\n"
			 "NodeSet=mix Nodes=m-[1-2] InstanceTypes=m5.2xlarge\n");
	cfg = config_load(path, &err);
	ok(cfg != NULL, "burst.conf with BlessedDrivers= loads");
	if (!cfg)
		diag("%s", err.msg);
	else {
		config_policy(cfg, NULL, &p);
		is_num(p.nblessed_drivers, 2, "global: two blessed drivers");
		is_str(p.blessed_drivers[1], "efa=2.10.0g", "as written");
		config_policy(cfg, &cfg->nodesets[0], &p);
		is_num(p.nblessed_drivers, 1, "gpu overrides the list");
		is_str(p.blessed_drivers[0], "nvidia=535.161.07", "with its own");
		ok(!p.any_driver, "gpu: not any driver");
		config_policy(cfg, &cfg->nodesets[1], &p);
		ok(p.any_driver && p.nblessed_drivers == 0, "cpu: empty BlessedDrivers= admits any driver");
		config_policy(cfg, &cfg->nodesets[2], &p);
		is_num(p.nblessed_drivers, 2, "mix inherits the global list");
		config_free(cfg);
	}
	unlink(path);
	free(path);
	path = write_tmp("ClusterName=x\n"
			 "BlessedDrivers=nvidia\n"
			 "NodeSet=gpu Nodes=g-[1-2] InstanceTypes=p5.48xlarge BlessedDrivers=efa\n");
	cfg = config_load(path, &err);
	ok(cfg == NULL, "bad BlessedDrivers= values are errors");
	has_str(err.msg, ":2: BlessedDrivers: 'nvidia' is not NAME=VERSION", "a global error names line 2");
	has_str(err.msg, ":3: NodeSet gpu: BlessedDrivers: 'efa' is not NAME=VERSION", "a node set error names the node set");
	config_free(cfg);
	unlink(path);
	free(path);
}

int main(void)
{
	burst_err_t err;

	cat = catalog_load(CATALOG, &err);
	if (!cat) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	test_hardware();
	test_kernel();
	test_malformed();
	test_parse();
	test_config();
	test_blessed_file();
	test_compare();
	test_drivers();
	test_driver_config();
	catalog_free(cat);
	return done_testing();
}

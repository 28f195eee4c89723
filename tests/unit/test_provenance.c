/*
 * test_provenance.c - the node provenance record (lib/admit/provenance.h) on the
 * sysroots of tests/fixtures/sysroots (made by tools/make-fixture-sysroots.py
 * and tools/capture-sysroot.sh) and on this machine.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "provenance.h"
#include "strutil.h"
#include "tap.h"

#define SYSROOTS BURST_ABS_SRCDIR "/tests/fixtures/sysroots"
#define PCI_TABLE BURST_ABS_SRCDIR "/share/pci/accelerators.csv"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	sb_init(&sb);
	sb_add(&sb, "");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_addf(&sb, "%.*s", (int)n, buf);
	fclose(f);
	return sb_take(&sb);
}

/* The value at a path of keys and [indexes]: "accelerators.devices.0.model". */
static json_object *at(json_object *o, const char *path)
{
	char *p = xstrdup(path), *save = NULL, *k;

	for (k = strtok_r(p, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		json_object *next = NULL;

		if (json_object_is_type(o, json_type_array))
			next = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &next))
			next = NULL;
		o = next;
	}
	free(p);
	return o;
}

static const char *at_str(json_object *o, const char *path)
{
	json_object *v = at(o, path);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static double at_num(json_object *o, const char *path)
{
	json_object *v = at(o, path);

	return v && json_object_is_type(v, json_type_int) ? (double)json_object_get_int64(v) : -1;
}

static json_object *collect(const char *name)
{
	struct prov_opts o;
	burst_err_t err;
	json_object *rec = NULL;
	char root[512];

	memset(&o, 0, sizeof(o));
	o.pci_table = PCI_TABLE;
	snprintf(root, sizeof(root), "%s/%s", SYSROOTS, name);
	burst_err_clear(&err);
	if (!ok(provenance_collect(root, &o, &rec, &err) == 0, "%s: record collected", name))
		diag("%s", err.msg);
	return rec;
}

static void check_expected(const char *name, json_object *rec)
{
	char path[512], *want, *got;

	snprintf(path, sizeof(path), "%s/%s.expected.json", SYSROOTS, name);
	want = slurp(path);
	got = provenance_serialize(rec, true);
	{
		/* the expected files end with the newline burst-node prints */
		struct strbuf sb;
		char *g;

		sb_init(&sb);
		sb_addf(&sb, "%s\n", got);
		g = sb_take(&sb);
		ok(want && !strcmp(g, want), "%s: the record equals %s.expected.json byte for byte", name, name);
		if (want && strcmp(g, want)) {
			size_t i = 0;

			while (g[i] && g[i] == want[i])
				i++;
			diag("first difference at byte %zu: got '%.60s' want '%.60s'", i, g + i, want + i);
		}
		free(g);
	}
	free(want);
	free(got);
}

static void test_serialize(void)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char *s, *id;

	json_object_object_add(o, "zeta", json_object_new_int64(-3));
	json_object_object_add(o, "alpha", json_object_new_string("a\"b\\c\n\x01\xc3\xa9\xff"));
	json_object_array_add(a, json_object_new_boolean(1));
	json_object_array_add(a, NULL);
	json_object_object_add(o, "Mid", a);
	json_object_object_add(o, "empty", json_object_new_object());
	s = provenance_serialize(o, false);
	is_str(s, "{\"Mid\":[true,null],\"alpha\":\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\\ufffd\",\"empty\":{},\"zeta\":-3}",
	       "compact serialization: keys sorted bytewise, escapes, invalid UTF-8 replaced");
	free(s);
	s = provenance_serialize(o, true);
	is_str(s, "{\n  \"Mid\": [\n    true,\n    null\n  ],\n  \"alpha\": \"a\\\"b\\\\c\\n\\u0001\xc3\xa9\\ufffd\",\n"
	       "  \"empty\": {},\n  \"zeta\": -3\n}", "pretty serialization: two-space indentation");
	free(s);
	id = provenance_id(o);
	ok(id && strlen(id) == 64 && strspn(id, "0123456789abcdef") == 64, "id is 64 hex characters");
	free(id);
	json_object_put(o);
	o = json_object_new_object();
	id = provenance_id(o);   /* sha256("{}"), a published constant */
	is_str(id, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
	       "id of {} is sha256(\"{}\")");
	free(id);
	json_object_put(o);
}

static void test_build_id(void)
{
	/* a "Linux" note (namesz 6, padded to 8), then the GNU build-id */
	static const unsigned char notes[] = {
		6, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0, 'L', 'i', 'n', 'u', 'x', 0, 0, 0, 1, 2, 3, 4,
		4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0,
	};
	static const unsigned char truncated[] = { 4, 0, 0, 0, 200, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1 };
	static const unsigned char other_type[] = { 4, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0, 9, 0, 0, 0 };
	char *s, buf[40];

	s = provenance_build_id(notes, sizeof(notes));
	is_str(s, "deadbe", "build-id found after a note with a padded name");
	free(s);
	ok(provenance_build_id(truncated, sizeof(truncated)) == NULL, "a truncated desc gives no build-id");
	ok(provenance_build_id(other_type, sizeof(other_type)) == NULL, "a GNU note of another type is not a build-id");
	ok(provenance_build_id(notes, 10) == NULL, "a stream shorter than a header gives none");
	is_str(provenance_taint_flags(0, buf), "", "taint 0: no flags");
	is_str(provenance_taint_flags(12289, buf), "POE", "taint 12289: P (proprietary), O (out of tree), E (unsigned)");
	is_str(provenance_taint_flags(1u << 9, buf), "W", "taint 512: W (warning)");
}

static void test_fixtures(void)
{
	static const char *const names[] = { "a100x8", "a10gx4", "h100x8-missing1", "host", NULL };
	json_object *rec;
	size_t i;
	char *s;

	for (i = 0; names[i]; i++) {
		rec = collect(names[i]);
		if (!rec)
			continue;
		check_expected(names[i], rec);
		s = provenance_serialize(rec, false);
		ok(!strstr(s, "must-not-appear"), "%s: no DMI serial or UUID in the record", names[i]);
		free(s);
		json_object_put(rec);
	}

	/* the facts, asserted one by one (the numbers are what the generator wrote) */
	rec = collect("a100x8");
	if (rec) {
		is_num(at_num(rec, "accelerators.count"), 8, "a100x8: 8 accelerators");
		is_num(at_num(rec, "accelerators.models.A100-40GB"), 8, "a100x8: 8 x A100-40GB");
		is_str(at_str(rec, "accelerators.devices.0.model"), "A100-40GB", "a100x8: first GPU is an A100-40GB");
		is_str(at_str(rec, "accelerators.devices.7.architecture"), "ampere", "a100x8: ampere");
		is_str(at_str(rec, "accelerators.devices.7.pci_address"), "0000:a0:1d.0", "a100x8: devices in bus order");
		is_str(at_str(rec, "accelerators.devices.3.driver"), "nvidia", "a100x8: driver nvidia");
		is_num(at_num(rec, "accelerators.devices.0.memory_mib"), 40960, "a100x8: 40 GiB per GPU");
		is_str(at_str(rec, "kernel.build_id"), "b0bf2a764c76a427b48c6edad500ecbaf2387c6c",
		       "a100x8: the build-id the generator wrote (after a Xen and a Linux note)");
		is_str(at_str(rec, "kernel.release"), "5.15.0-91-generic", "a100x8: kernel 5.15");
		is_num(at_num(rec, "kernel.taint.value"), 12289, "a100x8: tainted 12289");
		is_str(at_str(rec, "kernel.modules.0"), "ena", "a100x8: modules sorted (ena first)");
		is_str(at_str(rec, "kernel.modules.9"), "nvme", "a100x8: modules sorted (nvme last)");
		is_str(at_str(rec, "os.version_id"), "22.04", "a100x8: Ubuntu 22.04");
		is_str(at_str(rec, "os.id"), "ubuntu", "a100x8: os id ubuntu");
		is_num(at_num(rec, "cpu.threads"), 96, "a100x8: 96 threads");
		is_num(at_num(rec, "cpu.sockets"), 2, "a100x8: 2 sockets");
		is_num(at_num(rec, "cpu.cores"), 48, "a100x8: 48 cores");
		is_str(at_str(rec, "cpu.isa"), "x86_64", "a100x8: isa from /proc/sys/kernel/arch");
		is_num(at_num(rec, "memory.total_bytes"), 1198565320.0 * 1024, "a100x8: MemTotal in bytes");
		is_str(at_str(rec, "firmware.product_name"), "p4d.24xlarge", "a100x8: DMI product name");
		is_num((double)json_object_array_length(at(rec, "interconnect.infiniband")), 2, "a100x8: 2 IB ports");
		is_str(at_str(rec, "interconnect.infiniband.1.state"), "4: ACTIVE", "a100x8: mlx5_1 active");
		has_str(at_str(rec, "interconnect.infiniband.0.rate"), "200 Gb/sec", "a100x8: 200 Gb/s");
		is_str(at_str(rec, "software.packages.slurmd"), "22.05.8-4+burst1", "a100x8: slurmd package version");
		ok(at(rec, "software.ch_run") == NULL, "a100x8: ch-run is not run for a sysroot");
		json_object_put(rec);
	}
	rec = collect("a10gx4");
	if (rec) {
		is_num(at_num(rec, "accelerators.count"), 4, "a10gx4: 4 accelerators (ENA and NVMe of vendor 1d0f left out)");
		is_num(at_num(rec, "accelerators.models.A10G"), 4, "a10gx4: 4 x A10G");
		is_num(at_num(rec, "cpu.threads"), 48, "a10gx4: 48 CPUs");
		is_str(at_str(rec, "cpu.isa"), "x86_64", "a10gx4: isa inferred from the lm flag");
		is_str(at_str(rec, "os.version_codename"), "jammy", "a10gx4: os-release from /usr/lib");
		is_num(at_num(rec, "memory.hugepages.total"), 1024, "a10gx4: 1024 huge pages");
		ok(at(rec, "software.packages.charliecloud-runtime") == NULL,
		   "a10gx4: a removed package (config-files) has no version");
		ok(at(rec, "interconnect.infiniband") == NULL, "a10gx4: no InfiniBand: null");
		json_object_put(rec);
	}
	rec = collect("h100x8-missing1");
	if (rec) {
		is_num(at_num(rec, "accelerators.count"), 7, "h100x8-missing1: 7 accelerators, not 8");
		is_num(at_num(rec, "accelerators.models.H100"), 7, "h100x8-missing1: 7 x H100");
		is_str(at_str(rec, "accelerators.devices.3.pci_address"), "0000:97:00.0",
		       "h100x8-missing1: 0000:86:00.0 is the one missing");
		is_str(at_str(rec, "accelerators.devices.0.architecture"), "hopper", "h100x8-missing1: hopper");
		json_object_put(rec);
	}
}

/* A made-up sysroot with an unknown NVIDIA GPU, an Intel GPU and a Gaudi. */
static void mk(const char *root, const char *rel, const char *content)
{
	char path[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void test_unknown_and_errors(void)
{
	char root[] = "/tmp/test_provenance.XXXXXX", cmd[600];
	struct prov_opts o;
	burst_err_t err;
	json_object *rec = NULL;

	memset(&o, 0, sizeof(o));
	o.pci_table = PCI_TABLE;
	o.node = "burst-a10g-1";
	o.instance_type = "g5.12xlarge";
	if (!ok(mkdtemp(root) != NULL, "temporary sysroot"))
		return;
	/* 10de:9999 is no id in the table; Intel display (integrated) is left
	 * out, Intel processing accelerators are kept; Gaudi is in the table */
	mk(root, "sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
	mk(root, "sys/bus/pci/devices/0000:01:00.0/device", "0x9999\n");
	mk(root, "sys/bus/pci/devices/0000:01:00.0/class", "0x030200\n");
	/* the driver link (as in sysfs) wins over uevent's DRIVER= */
	mk(root, "sys/bus/pci/devices/0000:01:00.0/uevent", "DRIVER=not-this-one\n");
	snprintf(cmd, sizeof(cmd), "%s/sys/bus/pci/devices/0000:01:00.0/driver", root);
	ok(symlink("../../../bus/pci/drivers/nouveau", cmd) == 0, "driver link made");
	mk(root, "sys/bus/pci/devices/0000:02:00.0/uevent", "PCI_CLASS=120000\nDRIVER=habanalabs\n");
	mk(root, "sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n");
	mk(root, "sys/bus/pci/devices/0000:00:02.0/device", "0x3e92\n");
	mk(root, "sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n");
	mk(root, "sys/bus/pci/devices/0000:02:00.0/vendor", "0x8086\n");
	mk(root, "sys/bus/pci/devices/0000:02:00.0/device", "0x0bd5\n");
	mk(root, "sys/bus/pci/devices/0000:02:00.0/class", "0x120000\n");
	mk(root, "sys/bus/pci/devices/0000:03:00.0/vendor", "0x1da3\n");
	mk(root, "sys/bus/pci/devices/0000:03:00.0/device", "0x1000\n");
	mk(root, "sys/bus/pci/devices/0000:03:00.0/class", "0x120000\n");
	mk(root, "etc/os-release", "ID=first\nID=\"deb\\\"ian\"\nPRETTY_NAME='Debian 12'\n");
	burst_err_clear(&err);
	ok(provenance_collect(root, &o, &rec, &err) == 0, "a nearly empty sysroot is not an error");
	if (rec) {
		is_num(at_num(rec, "accelerators.count"), 3, "unknown NVIDIA, Intel class 0x12 and Gaudi counted, Intel VGA not");
		is_str(at_str(rec, "accelerators.devices.0.model"), "unknown", "10de:9999 is model unknown");
		ok(at(rec, "accelerators.devices.0.architecture") == NULL, "... with a null architecture");
		is_str(at_str(rec, "accelerators.devices.0.driver"), "nouveau", "... driver from the driver link");
		is_str(at_str(rec, "accelerators.devices.1.driver"), "habanalabs", "driver from uevent's DRIVER= without a link");
		ok(at(rec, "accelerators.devices.2.driver") == NULL, "no link, no uevent: no driver");
		is_str(at_str(rec, "accelerators.devices.1.model"), "unknown", "Intel 8086:0bd5 class 0x12 is unknown");
		is_str(at_str(rec, "accelerators.devices.2.model"), "Gaudi-HL205", "1da3:1000 is a Gaudi");
		is_num(at_num(rec, "accelerators.models.unknown"), 2, "2 unknown accelerators grouped");
		is_str(at_str(rec, "identity.node"), "burst-a10g-1", "identity.node from the options");
		is_str(at_str(rec, "identity.instance_type"), "g5.12xlarge", "identity.instance_type from the options");
		ok(at(rec, "identity.region") == NULL, "identity.region not given: null");
		ok(at(rec, "kernel.release") == NULL && at(rec, "kernel.build_id") == NULL &&
		   at(rec, "kernel.modules") == NULL && at(rec, "memory.total_bytes") == NULL &&
		   at(rec, "cpu.model") == NULL && at(rec, "firmware.sys_vendor") == NULL,
		   "missing files are null");
		is_str(at_str(rec, "os.id"), "deb\"ian", "os-release: the last ID wins, double quotes and escapes");
		is_str(at_str(rec, "os.pretty_name"), "Debian 12", "os-release: single quotes");
		json_object_put(rec);
		rec = NULL;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ok(system(cmd) == 0, "temporary sysroot removed");

	ok(provenance_collect("/nonexistent/sysroot", &o, &rec, &err) == -1 && rec == NULL,
	   "a missing sysroot is an error");
	has_str(err.msg, "/nonexistent/sysroot", "... naming the sysroot");
	has_str(err.msg, "No such file", "... and why");
	o.pci_table = "/nonexistent/accelerators.csv";
	ok(provenance_collect(SYSROOTS "/host", &o, &rec, &err) == -1, "a missing accelerator table is an error");
	has_str(err.msg, "accelerators.csv", "... naming the table");
}

/* ---------- drivers ---------- */

static void test_parse_version(void)
{
	char big[PROVENANCE_MAX_VERSION + 2], *s;
	size_t i;

#define V(data, len, want, name) do { \
		s = provenance_parse_version(data, len); \
		if (want) \
			is_str(s, want, name); \
		else \
			ok(s == NULL, name " (none)"); \
		free(s); \
	} while (0)
#define VS(lit, want, name) V(lit, sizeof(lit) - 1, want, name)
	VS("550.54.15\n", "550.54.15", "version file: one line");
	VS("550.54.15", "550.54.15", "version file: no newline at the end");
	VS(" \t2.17.3g \r\n", "2.17.3g", "version file: blanks and CRLF around it");
	VS("23.10-1.1.9\n", "23.10-1.1.9", "version file: MLNX_OFED's form");
	VS("1.0.2.0-k\n", "1.0.2.0-k", "version file: an in-kernel driver's form");
	VS("", NULL, "version file: empty");
	VS("\n", NULL, "version file: only a newline");
	VS("1.0\n2.0\n", NULL, "version file: two lines");
	VS("1.0\n\n", NULL, "version file: an empty second line");
	VS("1.0\0garbage", NULL, "version file: a NUL inside");
	VS("\x7f" "ELF\x02\x01\x01\0\0\0", NULL, "version file: binary (an ELF header)");
	VS("550.54.15 (beta)\n", NULL, "version file: two words");
	VS("$(reboot)\n", NULL, "version file: shell characters");
	VS("5.0\xc3\xa9\n", NULL, "version file: non-ASCII");
	V(NULL, 0, NULL, "version file: NULL");
	for (i = 0; i < PROVENANCE_MAX_VERSION; i++)
		big[i] = (char)('0' + i % 10);
	big[PROVENANCE_MAX_VERSION] = '\n';
	V(big, PROVENANCE_MAX_VERSION + 1, "0123456789012345678901234567890123456789012345678901234567890123",
	  "version file: a version of PROVENANCE_MAX_VERSION (64) characters");
	big[PROVENANCE_MAX_VERSION] = '4';
	big[PROVENANCE_MAX_VERSION + 1] = '\n';
	V(big, PROVENANCE_MAX_VERSION + 2, NULL, "version file: one character too long");
	{
		size_t n = PROVENANCE_MAX_VERSION_FILE + 1;
		char *huge = xmalloc(n);

		memset(huge, ' ', n);
		memcpy(huge, "1.0", 3);
		V(huge, n, NULL, "version file: bigger than PROVENANCE_MAX_VERSION_FILE");
		free(huge);
	}

#define N(lit, want, name) do { \
		s = provenance_parse_nvrm(lit, sizeof(lit) - 1); \
		if (want) \
			is_str(s, want, name); \
		else \
			ok(s == NULL, name " (none)"); \
		free(s); \
	} while (0)
	N("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
	  "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n", "550.54.15",
	  "NVRM: the proprietary module's line");
	N("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.161.07  Release Build  "
	  "(dvs-builder@U16-I3-B03-4-3)  Sat Feb 17 22:55:48 UTC 2024\n", "535.161.07",
	  "NVRM: the open module's line (architecture word skipped)");
	N("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  550.90.07  Release Build", "550.90.07",
	  "NVRM: aarch64, no newline at the end");
	N("GCC version:  gcc version 12.3.0\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  Wed Oct 13\n",
	  "470.82.01", "NVRM: the line need not be the first");
	N("GCC version:  gcc version 12.3.0 (Ubuntu)\n", NULL, "NVRM: no NVRM line (the GCC line's 12.3.0 is not taken)");
	N("NVRM version: NVIDIA UNIX x86_64 Kernel Module  unknown  .5 5. 1..2x\n", NULL, "NVRM: no version word");
	N("NVRM version: NVIDIA UNIX x86_64 Kernel\0Module  550.54.15\n", NULL, "NVRM: a NUL in the line");
	N("XNVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n", NULL, "NVRM: the tag must start the line");
	N("", NULL, "NVRM: empty");
	ok(provenance_parse_nvrm(NULL, 0) == NULL, "NVRM: NULL");
#undef V
#undef VS
#undef N
}

static void mkbin(const char *root, const char *rel, const void *data, size_t len)
{
	char path[1024];
	FILE *f;

	mk(root, rel, "");
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void test_drivers(void)
{
	char root[] = "/tmp/test_provenance_drv.XXXXXX", p[1024], cmd[1100];
	static const char elf[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0 };
	struct prov_opts o;
	burst_err_t err;
	json_object *rec = NULL, *d;
	char *huge;
	size_t n = 1u << 20;

	/* the fixtures, whose files make-fixture-sysroots.py wrote */
	rec = collect("a100x8");
	if (rec) {
		is_str(at_str(rec, "drivers.nvidia.version"), "550.54.15", "a100x8: nvidia 550.54.15");
		is_str(at_str(rec, "drivers.nvidia.source"), "/sys/module/nvidia/version", "... from /sys/module/nvidia/version");
		is_str(at_str(rec, "drivers.mlx5_core.version"), "23.10-1.1.9", "a100x8: MLNX_OFED mlx5_core");
		ok(at(rec, "drivers.ib_core") && at(rec, "drivers.ib_core.version") == NULL,
		   "a100x8: the in-tree ib_core is loaded, without a version");
		ok(at(rec, "drivers.nvidia_drm") == NULL, "a100x8: nvidia_drm is no driver the record lists");
		is_str(at_str(rec, "software.container_runtime.name"), "charliecloud", "a100x8: the container runtime is Charliecloud");
		is_str(at_str(rec, "software.container_runtime.version"), "0.31", "... 0.31, from version.txt");
		json_object_put(rec);
	}
	rec = collect("a10gx4");
	if (rec) {
		is_str(at_str(rec, "drivers.nvidia.version"), "535.161.07", "a10gx4: nvidia 535.161.07 (open module)");
		is_str(at_str(rec, "drivers.nvidia.source"), "/proc/driver/nvidia/version",
		       "... from /proc/driver/nvidia/version (no /sys/module/nvidia)");
		is_str(at_str(rec, "drivers.lustre.version"), "2.15.4", "a10gx4: Lustre client 2.15.4");
		ok(at(rec, "software.container_runtime") == NULL, "a10gx4: no Charliecloud installed: null");
		json_object_put(rec);
	}
	rec = collect("h100x8-missing1");
	if (rec) {
		is_str(at_str(rec, "drivers.efa.version"), "2.10.0g", "h100x8-missing1: EFA 2.10.0g");
		is_str(at_str(rec, "drivers.nvidia_peermem.version"), "550.54.15", "h100x8-missing1: nvidia_peermem");
		is_str(at_str(rec, "software.container_runtime.source"), "/usr/local/lib/charliecloud/version.txt",
		       "h100x8-missing1: Charliecloud built from source, in /usr/local");
		json_object_put(rec);
	}
	rec = collect("host");
	if (rec) {
		d = at(rec, "drivers");
		ok(d && json_object_is_type(d, json_type_object) && json_object_object_length(d) == 0,
		   "host: no driver of the list: an empty drivers section");
		json_object_put(rec);
	}

	/* a hostile sysroot: every way a version file can be wrong */
	memset(&o, 0, sizeof(o));
	o.pci_table = PCI_TABLE;
	if (!ok(mkdtemp(root) != NULL, "temporary hostile sysroot"))
		return;
	mk(root, "proc/modules",
	   "nvidia 1 0 - Live 0x0\namdgpu 1 0 - Live 0x0\nefa 1 0 - Live 0x0\nlustre 1 0 - Live 0x0\n"
	   "mlx5_core 1 0 - Live 0x0\nib_core 1 0 - Live 0x0\nknem 1 0 - Live 0x0\nlnet 1 0 - Live 0x0\n"
	   "gdrdrv 1 0 - Live 0x0\n");
	mk(root, "sys/module/amdgpu/version", "6.3.6\n");                  /* ROCm's amdgpu-dkms */
	huge = xmalloc(n);
	memset(huge, '5', n);
	mkbin(root, "sys/module/nvidia/version", huge, n);                 /* 1 MiB of digits */
	free(huge);
	mk(root, "proc/driver/nvidia/version",
	   "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n");
	mkbin(root, "sys/module/efa/version", elf, sizeof(elf));           /* binary */
	mk(root, "sys/module/lustre/version", "2.15.4");                   /* no newline */
	mk(root, "sys/module/gdrdrv/version", "2.4\n2.5\n");               /* two lines */
	snprintf(p, sizeof(p), "%s/sys/module/mlx5_core", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sys/module/mlx5_core/version", root);
	ok(mkfifo(p, 0644) == 0, "a FIFO as mlx5_core's version");         /* would block a read */
	snprintf(p, sizeof(p), "%s/sys/module/ib_core/version", root);
	mk(root, "sys/module/ib_core/initstate", "live\n");
	mkdir(p, 0755);                                                     /* a directory */
	snprintf(p, sizeof(p), "%s/sys/module/knem", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/sys/module/knem/version", root);
	ok(symlink("/dev/zero", p) == 0, "/dev/zero as knem's version");   /* endless */
	mk(root, "sys/module/lnet/version", "");                           /* empty */
	snprintf(p, sizeof(p), "%s/sys/module/beegfs", root);               /* built in: no /proc/modules line */
	mkdir(p, 0755);
	mk(root, "usr/lib/charliecloud/version.txt", "0.38\nnot a version file\n");
	mk(root, "usr/local/lib/charliecloud/version.txt", "0.36\n");
	burst_err_clear(&err);
	ok(provenance_collect(root, &o, &rec, &err) == 0, "a sysroot with hostile version files is no error");
	if (rec) {
		is_str(at_str(rec, "drivers.amdgpu.version"), "6.3.6", "amdgpu-dkms's /sys/module/amdgpu/version");
		is_str(at_str(rec, "drivers.nvidia.version"), "550.54.15",
		       "a 1 MiB /sys/module/nvidia/version is no version: /proc/driver/nvidia/version is used");
		is_str(at_str(rec, "drivers.nvidia.source"), "/proc/driver/nvidia/version", "... and named");
		ok(at(rec, "drivers.efa") && !at(rec, "drivers.efa.version") && !at(rec, "drivers.efa.source"),
		   "a binary version file: efa recorded with a null version and source");
		is_str(at_str(rec, "drivers.lustre.version"), "2.15.4", "a version file without a newline");
		ok(at(rec, "drivers.gdrdrv") && !at(rec, "drivers.gdrdrv.version"), "a two-line version file: null");
		ok(at(rec, "drivers.mlx5_core") && !at(rec, "drivers.mlx5_core.version"),
		   "a FIFO is not read (no hang): null");
		ok(at(rec, "drivers.ib_core") && !at(rec, "drivers.ib_core.version"), "a directory: null");
		ok(at(rec, "drivers.knem") && !at(rec, "drivers.knem.version"), "a link to /dev/zero: null");
		ok(at(rec, "drivers.lnet") && !at(rec, "drivers.lnet.version"), "an empty version file: null");
		ok(at(rec, "drivers.beegfs") && !at(rec, "drivers.beegfs.version"),
		   "a module only in /sys/module (built in) is recorded");
		ok(!at(rec, "drivers.nvidia_uvm"), "a module neither loaded nor in /sys/module is left out");
		is_str(at_str(rec, "software.container_runtime.version"), "0.36",
		       "Charliecloud: a bad /usr/lib version.txt is skipped, /usr/local's used");
		json_object_put(rec);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ok(system(cmd) == 0, "temporary hostile sysroot removed");
}

static void test_live(void)
{
	struct prov_opts o;
	burst_err_t err;
	json_object *a = NULL, *b = NULL;
	char *sa, *sb_, *id;

	memset(&o, 0, sizeof(o));
	o.pci_table = PCI_TABLE;
	ok(provenance_collect("/", &o, &a, &err) == 0 && provenance_collect(NULL, &o, &b, &err) == 0,
	   "the live record of this machine is produced");
	if (!a || !b)
		return;
	sa = provenance_serialize(a, false);
	sb_ = provenance_serialize(b, false);
	is_str(sa, sb_, "two live records are identical");
	ok(at_str(a, "kernel.release") != NULL, "live: kernel release read");
	ok(at_num(a, "memory.total_bytes") > 0, "live: MemTotal read");
	ok(at_num(a, "cpu.threads") > 0, "live: CPUs counted");
	{
		/* the version commands run beside the file reads: each one's
		 * own first line, not the other's nor none (slurmd is a
		 * build dependency; PATH as the collector extends it) */
		char line[512] = "";
		FILE *p = popen("PATH=\"$PATH:/usr/local/sbin:/usr/sbin:/sbin\" slurmd -V 2>&1", "r");
		ok(p && fgets(line, sizeof(line), p) && pclose(p) == 0, "live: slurmd -V runs here");
		line[strcspn(line, "\n")] = '\0';
		is_str(at_str(a, "software.slurmd"), line, "live: the slurmd version is slurmd -V's line");
		is_str(at_str(b, "software.slurmd"), line, "live: ... again");
	}
	id = provenance_id(a);
	ok(strlen(id) == 64 && strspn(id, "0123456789abcdef") == 64, "live id is 64 hex characters");
	free(id);
	free(sa);
	free(sb_);
	json_object_put(a);
	json_object_put(b);
}

int main(void)
{
	test_serialize();
	test_build_id();
	test_fixtures();
	test_unknown_and_errors();
	test_parse_version();
	test_drivers();
	test_live();
	return done_testing();
}

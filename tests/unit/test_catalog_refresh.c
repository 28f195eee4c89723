/*
 * test_catalog_refresh.c - lib/cloud/catalog_refresh.c: EC2's DescribeInstanceTypes
 * (recorded from moto_server, tests/fixtures/ec2/describe_instance_types_moto_*.xml)
 * mapped to the catalog's canonical cells, the merge rules, the atomic write.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "catalog_refresh.h"
#include "ec2.h"
#include "ec2_int.h"
#include "strutil.h"
#include "tap.h"

#ifndef BURST_ABS_SRCDIR
#define BURST_ABS_SRCDIR "."
#endif

/* Both recorded pages into l; checks the paging token on the way. */
static void load_api(struct ec2_instance_types *l)
{
	char path[4096], *xml, *next = NULL;
	size_t len;
	burst_err_t err;

	memset(l, 0, sizeof(*l));
	snprintf(path, sizeof(path), "%s/tests/fixtures/ec2/describe_instance_types_moto_page1.xml", BURST_ABS_SRCDIR);
	xml = tap_slurp(path, &len);
	ok(ec2_parse_instance_types(xml, len, l, &next, &err) == 0 && l->n == 4, "page 1 parses: 4 types (%zu)", l->n);
	is_str(next, "page-2-token", "... and says where page 2 starts");
	free(next);
	free(xml);
	snprintf(path, sizeof(path), "%s/tests/fixtures/ec2/describe_instance_types_moto_page2.xml", BURST_ABS_SRCDIR);
	xml = tap_slurp(path, &len);
	ok(ec2_parse_instance_types(xml, len, l, &next, &err) == 0 && l->n == 10, "page 2 appends: 10 types (%zu)", l->n);
	ok(next == NULL, "... and is the last");
	free(next);
	free(xml);
}

static const struct ec2_instance_type *api_type(const struct ec2_instance_types *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].name && !strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

static void test_parse(const struct ec2_instance_types *l)
{
	const struct ec2_instance_type *t = api_type(l, "trn1.32xlarge");

	ok(t && t->neuron_count == 16 && t->neuron_name && !strcmp(t->neuron_name, "Trainium") &&
	   t->neuron_memory_mib == 32768, "trn1.32xlarge: 16 Trainium Neuron devices of 32768 MiB");
	ok(t && t->efa_supported && t->efa_max_interfaces == 8, "... EFA, 8 interfaces");
	t = api_type(l, "c7g.large");
	ok(t && t->arch && !strcmp(t->arch, "arm64") && t->cpu_manufacturer && !strcmp(t->cpu_manufacturer, "AWS"),
	   "c7g.large: arm64, made by AWS");
	ok(t && t->storage_gb == 0 && !t->storage_disk, "... no instance storage");
	t = api_type(l, "p4d.24xlarge");
	ok(t && t->storage_gb == 8000 && t->storage_disk && !strcmp(t->storage_disk, "ssd") && t->storage_nvme,
	   "p4d.24xlarge: 8000 GB of NVMe SSD");
}

/* The cells of one type, mapped. */
static void map_of(const struct ec2_instance_types *l, const struct catalog *cat, const char *name,
		   char *cells[CATREF_NCOLS], char *note, size_t notelen)
{
	const struct ec2_instance_type *t = api_type(l, name);

	if (!t) {
		printf("Bail out! %s is not in the fixtures\n", name);
		exit(1);
	}
	catref_map(t, cat, cells, note, notelen);
}

static void test_map(const struct ec2_instance_types *l, const struct catalog *cat)
{
	char *c[CATREF_NCOLS], note[512];
	struct ec2_instance_type fake;

	map_of(l, cat, "p4d.24xlarge", c, note, sizeof(note));
	ok(!strcmp(c[CATREF_VCPUS], "96") && !strcmp(c[CATREF_MEMORY], "1179648"), "p4d.24xlarge: 96 vCPUs, 1179648 MiB");
	ok(!strcmp(c[CATREF_ACC_COUNT], "8") && !strcmp(c[CATREF_ACC], "A100-40GB") &&
	   !strcmp(c[CATREF_ACC_ARCH], "ampere") && !strcmp(c[CATREF_ACC_MEMORY], "40960") &&
	   !strcmp(c[CATREF_ACC_TYPE], "GPU") && !strcmp(c[CATREF_ACC_MANUFACTURER], "NVIDIA"),
	   "... 8 x A100-40GB (EC2 says A100, 40960 MiB: the variant by memory), ampere, 40960 MiB");
	ok(!strcmp(c[CATREF_ISA], "x86_64") && !strcmp(c[CATREF_STORAGE_TYPE], "nvme-ssd") &&
	   !strcmp(c[CATREF_STORAGE_GIB], "8000") && !strcmp(c[CATREF_NETWORK], "400") && !strcmp(c[CATREF_EFA], "yes"),
	   "... x86_64, nvme-ssd 8000, 4x 100 Gigabit = 400, EFA");
	ok(!note[0], "... no note");
	catref_cells_free(c);

	map_of(l, cat, "g5.12xlarge", c, note, sizeof(note));
	is_str(c[CATREF_ACC_MEMORY], "24576", "g5.12xlarge: the A10G's memory from the model table (EC2 says 22888 MiB usable)");
	ok(!strcmp(c[CATREF_ACC], "A10G") && !strcmp(c[CATREF_ACC_COUNT], "4"), "... 4 x A10G");
	catref_cells_free(c);

	map_of(l, cat, "c7g.large", c, note, sizeof(note));
	ok(!strcmp(c[CATREF_ISA], "aarch64") && !strcmp(c[CATREF_ACC_COUNT], "0") && !c[CATREF_ACC][0] &&
	   !strcmp(c[CATREF_STORAGE_TYPE], "ebs") && !c[CATREF_STORAGE_GIB][0] && !strcmp(c[CATREF_NETWORK], "12.5") &&
	   !strcmp(c[CATREF_EFA], "no"), "c7g.large: aarch64 (EC2's arm64), no accelerator, ebs, up to 12.5, no EFA");
	catref_cells_free(c);

	map_of(l, cat, "trn1.32xlarge", c, note, sizeof(note));
	ok(!strcmp(c[CATREF_ACC_COUNT], "16") && !strcmp(c[CATREF_ACC], "Trainium") && !strcmp(c[CATREF_ACC_TYPE], "ASIC") &&
	   !strcasecmp(c[CATREF_ACC_MANUFACTURER], "AWS") && !strcmp(c[CATREF_ACC_ARCH], "trainium"),
	   "trn1.32xlarge: 16 x Trainium (Neuron devices), ASIC, AWS, trainium");
	catref_cells_free(c);

	map_of(l, cat, "g4ad.xlarge", c, note, sizeof(note));
	ok(!strcmp(c[CATREF_ACC], "Radeon-Pro-V520") && !strcmp(c[CATREF_ACC_ARCH], "rdna"),
	   "g4ad.xlarge: EC2's 'Radeon Pro V520' is the catalog's Radeon-Pro-V520 (rdna)");
	catref_cells_free(c);

	memset(&fake, 0, sizeof(fake));
	fake.name = "x9.large";
	fake.vcpus = 4;
	fake.memory_mib = 16384;
	fake.gpu_count = 2;
	fake.gpu_name = "Z 9000";
	fake.gpu_manufacturer = "Zeta";
	fake.gpu_memory_mib = 12288;
	catref_map(&fake, cat, c, note, sizeof(note));
	ok(!strcmp(c[CATREF_ACC], "Z-9000") && !c[CATREF_ACC_ARCH][0] && !strcmp(c[CATREF_ACC_MEMORY], "12288") &&
	   !strcmp(c[CATREF_ACC_MANUFACTURER], "Zeta") && !c[CATREF_ISA][0] && !c[CATREF_NETWORK][0],
	   "a model the table lacks: EC2's name and memory, architecture unknown; nothing invented");
	has_str(note, "x9.large: accelerator 'Z 9000' is not in the catalog's model table", "... and a note says so");
	catref_cells_free(c);
}

static void test_network(void)
{
	char b[32];

	is_str(catref_network_gbps("Up to 5 Gigabit", b, sizeof(b)), "5", "network: Up to 5 Gigabit");
	is_str(catref_network_gbps("4x 100 Gigabit", b, sizeof(b)), "400", "network: 4x 100 Gigabit");
	is_str(catref_network_gbps("3200 Gigabit", b, sizeof(b)), "3200", "network: 3200 Gigabit");
	is_str(catref_network_gbps("Up to 12.5 Gigabit", b, sizeof(b)), "12.5", "network: Up to 12.5 Gigabit");
	is_str(catref_network_gbps("100 Megabit", b, sizeof(b)), "0.1", "network: 100 Megabit");
	is_str(catref_network_gbps("Moderate", b, sizeof(b)), "", "network: Moderate is unknown");
	is_str(catref_network_gbps(NULL, b, sizeof(b)), "", "network: none given");
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

static const char *const small_csv =
	"# slurm-burst instance catalog, provider aws\n"
	"# version=2026.11.22\n"
	"# a comment kept as it is\n"
	"instance_type,vcpus,memory_mib,accelerator_count,accelerator,accelerator_type,accelerator_manufacturer,"
	"accelerator_architecture,accelerator_memory_mib,processor,processor_manufacturer,processor_microarchitecture,"
	"processor_isa,storage_type,storage_gib,network_gbps,source\n"
	"c7g.large,2,4096,0,,,,,,AWS Graviton3,AWS,neoverse-v1,aarch64,ebs,,12.5,platformaware\n"
	"f1.2xlarge,8,124928,1,VU9P,FPGA,Xilinx,ultrascale+,65536,Intel Xeon E5-2686 v4,Intel,broadwell,x86_64,nvme-ssd,470,10,platformaware\n"
	"g5.12xlarge,40,196608,4,A10G,GPU,NVIDIA,ampere,24576,AMD EPYC 7R32,AMD,zen2,,nvme-ssd,3800,40,platformaware+fix\n"
	"old.large,2,8192,0,,,,,,,,,x86_64,ebs,,1,platformaware\n"
	"p4d.24xlarge,96,1179648,8,A100-80GB,GPU,NVIDIA,ampere,81920,Intel Xeon Platinum 8275L,Intel,cascadelake,x86_64,nvme-ssd,8000,400,platformaware+fix\n";

static const struct catref_diff *find_diff(const struct catref_diff *d, size_t n, const char *type, const char *col)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(d[i].type, type) && !strcmp(d[i].col, col))
			return &d[i];
	return NULL;
}

static const char *cell(const struct catref_table *t, const char *type, const char *col)
{
	size_t i, k;

	for (k = 0; k < t->ncols; k++)
		if (!strcmp(t->cols[k], col))
			break;
	for (i = 0; k < t->ncols && i < t->nrows; i++)
		if (!strcmp(t->rows[i][0], type))
			return t->rows[i][k];
	return NULL;
}

static bool has_row(const struct catref_table *t, const char *type)
{
	return cell(t, type, "instance_type") != NULL;
}

/* The API answer restricted to a few types. */
static void subset(const struct ec2_instance_types *all, const char *const *names, struct ec2_instance_types *out)
{
	size_t i;

	out->n = 0;
	out->v = xcalloc(8, sizeof(*out->v));
	for (i = 0; names[i]; i++) {
		const struct ec2_instance_type *t = api_type(all, names[i]);
		if (t)
			out->v[out->n++] = *t;   /* shallow: freed with all */
	}
}

static void test_merge(const struct ec2_instance_types *all, const struct catalog *cat, const char *dir)
{
	static const char *const names[] = { "c7g.large", "g5.12xlarge", "p4d.24xlarge", "f1.2xlarge",
		"m7i.large", NULL };
	struct ec2_instance_types api;
	struct ec2_instance_type f1;
	struct catref_table t;
	struct catref_report rep;
	struct catref_merge_opts mo;
	const struct catref_diff *d;
	burst_err_t err;
	char path[4096];
	size_t i;
	bool sorted = true;

	snprintf(path, sizeof(path), "%s/aws.csv", dir);
	write_text(path, small_csv);
	ok(catref_read(path, &t, &err) == 0 && t.nrows == 5 && t.ncomments == 3, "the small catalog reads: 5 rows, 3 comment lines");
	subset(all, names, &api);
	/* f1.2xlarge as EC2 describes it: no GPU, no Neuron device (its FPGA is elsewhere) */
	memset(&f1, 0, sizeof(f1));
	f1.name = "f1.2xlarge";
	f1.vcpus = 8;
	f1.memory_mib = 124928;
	f1.arch = "x86_64";
	f1.network_performance = "Up to 10 Gigabit";
	f1.storage_gb = 470;
	f1.storage_disk = "ssd";
	f1.storage_nvme = true;
	api.v[api.n++] = f1;
	memset(&mo, 0, sizeof(mo));
	mo.provider = "aws";
	mo.region = "us-east-1";
	mo.version = "2026.12.01-api";
	ok(catref_merge(&t, &api, cat, &mo, &rep, &err) == 0, "merge");

	ok(rep.nadded == 1 && !strcmp(rep.added[0], "m7i.large") && has_row(&t, "m7i.large"), "added: m7i.large");
	is_str(cell(&t, "m7i.large", "source"), "aws-api", "... its source is aws-api");
	is_str(cell(&t, "m7i.large", "processor_isa"), "x86_64", "... x86_64");
	d = find_diff(rep.changed, rep.nchanged, "g5.12xlarge", "vcpus");
	ok(d && !strcmp(d->old, "40") && !strcmp(d->new_, "48"), "changed: g5.12xlarge vcpus 40 -> 48 (EC2 wins)");
	is_str(cell(&t, "g5.12xlarge", "vcpus"), "48", "... in the table");
	d = find_diff(rep.changed, rep.nchanged, "g5.12xlarge", "processor_isa");
	ok(d && !d->old[0] && !strcmp(d->new_, "x86_64"), "changed: g5.12xlarge processor_isa filled in (was empty)");
	is_str(cell(&t, "g5.12xlarge", "accelerator_memory_mib"), "24576", "g5.12xlarge keeps 24576 MiB per A10G");
	is_str(cell(&t, "g5.12xlarge", "source"), "platformaware+fix+api", "... its source gains +api");
	d = find_diff(rep.kept, rep.nkept, "p4d.24xlarge", "accelerator");
	ok(d && !strcmp(d->old, "A100-80GB") && !strcmp(d->new_, "A100-40GB"),
	   "kept: p4d.24xlarge's curated A100-80GB, EC2's A100-40GB reported");
	is_str(cell(&t, "p4d.24xlarge", "accelerator"), "A100-80GB", "... the table keeps the curated model");
	is_str(cell(&t, "p4d.24xlarge", "source"), "platformaware+fix", "... and its source (nothing applied)");
	is_str(cell(&t, "f1.2xlarge", "accelerator_count"), "1", "f1.2xlarge keeps its FPGA: EC2's silence is no fact");
	d = find_diff(rep.kept, rep.nkept, "f1.2xlarge", "accelerator_count");
	ok(d && !strcmp(d->old, "1") && !strcmp(d->new_, "0"), "... reported as kept");
	ok(rep.nmissing == 1 && !strcmp(rep.missing[0], "old.large") && has_row(&t, "old.large") && !rep.dropped,
	   "missing: old.large, kept");
	ok(rep.unchanged == 3, "unchanged: c7g.large, f1.2xlarge, p4d.24xlarge (%zu)", rep.unchanged);
	ok(rep.efa_added && t.ncols == 18 && !strcmp(t.cols[16], "efa") && !strcmp(t.cols[17], "source"),
	   "an efa column, before source");
	is_str(cell(&t, "p4d.24xlarge", "efa"), "yes", "p4d.24xlarge: efa yes");
	is_str(cell(&t, "c7g.large", "efa"), "no", "c7g.large: efa no");
	is_str(cell(&t, "old.large", "efa"), "", "old.large (EC2 lacks it): efa unknown");
	ok(!find_diff(rep.changed, rep.nchanged, "c7g.large", "efa"), "a new column filled is not reported as a change");
	for (i = 1; i < t.nrows; i++)
		if (strcmp(t.rows[i - 1][0], t.rows[i][0]) >= 0)
			sorted = false;
	ok(sorted, "rows sorted by instance type");
	is_str(rep.old_version, "2026.11.22", "old version");
	is_str(t.comments[1], "# version=2026.12.01-api", "the version line is the new version");
	has_str(t.comments[2], "# refreshed by burstctl catalog refresh from EC2 DescribeInstanceTypes (provider aws, region us-east-1)",
		"a refreshed line follows");
	has_str(t.comments[2], "was version 2026.11.22", "... naming the old version");
	is_str(t.comments[3], "# a comment kept as it is", "other comments kept");
	catref_report_free(&rep);

	/* the same answer again: nothing changes, not even the version */
	mo.version = "2026.12.02-api";
	ok(catref_merge(&t, &api, cat, &mo, &rep, &err) == 0 && rep.nadded == 0 && rep.nchanged == 0 &&
	   rep.unchanged == 5 && !strcmp(rep.new_version, "2026.12.01-api") &&
	   !strcmp(t.comments[1], "# version=2026.12.01-api"),
	   "merging the same answer again changes nothing, the version stays");
	catref_report_free(&rep);

	/* --drop-missing */
	mo.drop_missing = true;
	ok(catref_merge(&t, &api, cat, &mo, &rep, &err) == 0 && rep.dropped && !has_row(&t, "old.large") &&
	   !strcmp(t.comments[1], "# version=2026.12.02-api"), "drop_missing: old.large goes, a new version");
	ok(t.ncomments == 4, "one refreshed line, not two (%zu comment lines)", t.ncomments);
	catref_report_free(&rep);

	/* written and read back, it loads as a catalog */
	ok(catref_write(path, &t, &err) == 0, "written");
	{
		struct catalog *c2 = catalog_load(dir, &err);
		struct cat_type *ct;
		ok(c2 != NULL, "the written catalog loads (%s)", c2 ? "ok" : err.msg);
		ct = c2 ? catalog_find_type(c2, "aws:g5.12xlarge") : NULL;
		ok(ct && ct->num[KEY_VCPUS] == 48 && ct->num[KEY_ACC_MEMORY] == 24576.0 * 1048576.0,
		   "... g5.12xlarge: 48 vCPUs, 24 GiB per accelerator");
		ok(c2 && c2->version && !strcmp(c2->version, "aws=2026.12.02-api"), "... version aws=2026.12.02-api (%s)",
		   c2 && c2->version ? c2->version : "none");
		catalog_free(c2);
	}
	free(api.v);
	catref_table_free(&t);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

static void test_write(const char *dir)
{
	struct catref_table t;
	burst_err_t err;
	char src[4096], path[4096], old[64];
	char *a, *b;
	int fd;
	ssize_t n;

	/* the shipped catalog round-trips byte for byte */
	snprintf(src, sizeof(src), "%s/share/catalog/aws.csv", BURST_ABS_SRCDIR);
	snprintf(path, sizeof(path), "%s/w/aws.csv", dir);
	snprintf(old, sizeof(old), "%s", "old contents\n");
	{
		char wdir[4096];
		snprintf(wdir, sizeof(wdir), "%s/w", dir);
		mkdir(wdir, 0755);
		write_text(path, old);
		fd = open(path, O_RDONLY);
		ok(catref_read(src, &t, &err) == 0 && catref_write(path, &t, &err) == 0, "the shipped aws.csv read and written");
		a = tap_slurp(src, NULL);
		b = tap_slurp(path, NULL);
		ok(!strcmp(a, b), "... byte for byte the same");
		free(a);
		free(b);
		ok(count_entries(wdir) == 1, "... no temporary file left beside it");
		/* a reader that opened the old file still reads the old file whole */
		{
			char buf[64] = "";
			n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			ok(n == (ssize_t)strlen(old) && !strcmp(buf, old), "a reader of the old file sees it whole (replaced by rename)");
		}
		if (fd >= 0)
			close(fd);
		ok(catref_write("/nonexistent-burst-dir/aws.csv", &t, &err) < 0, "writing into a missing directory fails");
		has_str(err.msg, "cannot make a file beside /nonexistent-burst-dir/aws.csv", "... saying where");
		catref_table_free(&t);
	}
	snprintf(path, sizeof(path), "%s/bad.csv", dir);
	write_text(path, "# x\ninstance_type,vcpus\na,1,2\n");
	ok(catref_read(path, &t, &err) < 0, "a row with too many cells is refused");
	has_str(err.msg, "bad.csv:3: 3 cells where the header has 2", "... naming file:line");
	write_text(path, "# only comments\n");
	ok(catref_read(path, &t, &err) < 0, "a file without a header is refused");
}

int main(void)
{
	struct ec2_instance_types api;
	struct catalog *cat;
	burst_err_t err;
	char dir[] = "/tmp/test_catalog_refresh.XXXXXX", shipped[4096], cmd[4200];

	snprintf(shipped, sizeof(shipped), "%s/share/catalog", BURST_ABS_SRCDIR);
	cat = catalog_load(shipped, &err);
	if (!cat) {
		printf("Bail out! %s\n", err.msg);
		return 1;
	}
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	load_api(&api);
	test_parse(&api);
	test_map(&api, cat);
	test_network();
	test_merge(&api, cat, dir);
	test_write(dir);
	ec2_instance_types_free(&api);
	catalog_free(cat);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}

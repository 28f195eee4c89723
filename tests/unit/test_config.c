/*
 * test_config.c - burst.conf: what parses, what is refused and how (every
 * error names file:line), catalog overrides, node-set candidates, checks;
 * the key table: every key parses, lands where it says, is suggested.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_int.h"
#include "strutil.h"
#include "tap.h"

static char dir[256];

static const char *path_of(const char *name)
{
	static char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static const char *write_file(const char *name, const char *text)
{
	const char *p = path_of(name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

/* Load text as NAME; returns the config or NULL with err. */
static struct burst_config *load(const char *name, const char *text, burst_err_t *err)
{
	return config_load(write_file(name, text), err);
}

/* An invalid config: refused, and the message has frag, in which every
 * '@' stands for the temporary directory. */
static void refused(const char *name, const char *text, const char *frag)
{
	burst_err_t err;
	struct burst_config *cfg = load(name, text, &err);
	struct strbuf want;
	const char *p;

	ok(cfg == NULL, "%s is refused", name);
	config_free(cfg);
	sb_init(&want);
	for (p = frag; *p; p++) {
		if (*p == '@')
			sb_add(&want, dir);
		else
			sb_addf(&want, "%c", *p);
	}
	has_str(err.msg, want.s, "%s: %s", name, want.s);
	sb_free(&want);
}

static struct catalog *fixture(void)
{
	const char *top = getenv("BURST_TOP_SRCDIR");
	char d[1024];
	burst_err_t err;
	struct catalog *cat;

	snprintf(d, sizeof(d), "%s/tests/fixtures/catalog-small", top ? top : ".");
	cat = catalog_load(d, &err);
	if (!cat)
		diag("%s", err.msg);
	return cat;
}

/* The key table (config_keys.c): every key a line may start with parses
 * its example, lands where the table says, refuses a bad value, and a
 * misspelling of it is answered with it. */
static void key_table(void)
{
	size_t i;

	ok(cfg_nkeys >= 37, "the table has every key (%zu)", cfg_nkeys);
	for (i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		char text[512], typo[64], want[256];
		struct burst_config *cfg;
		burst_err_t err;
		size_t len = strlen(k->name);

		ok(cfg_key_find(k->name) == k, "%s: found by its name", k->name);
		if (k->example) {
			snprintf(text, sizeof(text), "%s=%s\n", k->name, k->example);
			cfg = load("key.conf", text, &err);
			ok(cfg != NULL, "%s=%s parses", k->name, k->example);
			if (!cfg)
				diag("%s", err.msg);
			if (cfg && k->kind == CK_INT)
				is_num(*(int *)(void *)((char *)cfg + k->off), atoi(k->example), "%s: the number is set", k->name);
			else if (cfg && (k->kind == CK_STRING || k->kind == CK_DIR || k->kind == CK_PATH ||
					 k->kind == CK_PATH_SYSLOG))
				is_str(*(char **)(void *)((char *)cfg + k->off), k->example, "%s: the text is set", k->name);
			else if (cfg && k->kind == CK_BOOL) {
				bool b = false;
				cfg_parse_bool(k->example, &b);
				ok(*(bool *)(void *)((char *)cfg + k->off) == b, "%s: the flag is set", k->name);
			}
			config_free(cfg);
			/* after another global key on its line too, when it is one */
			if (k->kind != CK_OBJECT && k->kind != CK_CONTRACT) {
				snprintf(text, sizeof(text), "ClusterName=x %s=%s\n", k->name, k->example);
				cfg = load("key2.conf", text, &err);
				ok(cfg != NULL, "ClusterName=x %s=%s parses", k->name, k->example);
				config_free(cfg);
			}
		}
		if (k->kind == CK_INT) {
			snprintf(text, sizeof(text), "%s=%ld\n", k->name, k->max + 1);
			snprintf(want, sizeof(want), "key.conf:1: %s=%ld: give %s (%ld-%ld)", k->name, k->max + 1,
				 k->unit, k->min, k->max);
			refused("key.conf", text, want);
			snprintf(text, sizeof(text), "%s=%ld\n", k->name, k->min - 1);
			refused("key.conf", text, "give");
		} else if (k->kind == CK_BOOL) {
			snprintf(text, sizeof(text), "%s=maybe\n", k->name);
			snprintf(want, sizeof(want), "key.conf:1: %s is yes or no, not 'maybe'", k->name);
			refused("key.conf", text, want);
		} else if (k->kind == CK_PATH || k->kind == CK_PATH_SYSLOG) {
			snprintf(text, sizeof(text), "%s=relative/path\n", k->name);
			snprintf(want, sizeof(want), "key.conf:1: %s must be an absolute path", k->name);
			refused("key.conf", text, want);
		}
		/* a letter dropped from its middle */
		snprintf(typo, sizeof(typo), "%.*s%s", (int)(len / 2), k->name, k->name + len / 2 + 1);
		snprintf(text, sizeof(text), "%s=%s\n", typo, k->example ? k->example : "x");
		snprintf(want, sizeof(want), "key.conf:1: unknown key '%s'; did you mean '%s'?", typo, k->name);
		refused("key.conf", text, want);
		if (k->kind != CK_OBJECT && k->kind != CK_CONTRACT && k->kind != CK_INCLUDE) {
			snprintf(text, sizeof(text), "ClusterName=x %s=%s\n", typo, k->example ? k->example : "x");
			snprintf(want, sizeof(want), "key.conf:1: unknown global key '%s'; did you mean '%s'?", typo,
				 k->name);
			refused("key.conf", text, want);
		}
	}
}

int main(void)
{
	struct burst_config *cfg;
	struct catalog *cat;
	burst_err_t err;

	snprintf(dir, sizeof(dir), "/tmp/test_config.XXXXXX");
	if (!mkdtemp(dir))
		return 1;

	/* ---- a valid file with every kind of line ---- */
	write_file("extra.conf", "Contract=extra accelerator_count>=2   # from an included file\n");
	cfg = load("good.conf",
		   "# a comment\n"
		   "ClusterName=lab AllowInlineContracts=no\n"
		   "StateDir=/var/lib/burst-test ReconcileInterval=15 orphangrace=120 VanishGrace=0\n"
		   "JoinPort=7000 BootTimeout=90 RejectCooldown=0 PrologSlurmctld=/etc/slurm/site-prolog LogFile=syslog MetricsListen=127.0.0.1:9830\n"
		   "provider=alpha TYPE=local Catalog=alpha Regions=r1,r2 Bridge=lo Address=127.0.0.1/8\n"
		   "Provider=aws Regions=us-east-1 ImageId=ami-1 LaunchTemplate=lt-2 SubnetId=subnet-3 SecurityGroups=sg-a,sg-b"
		   " IamInstanceProfile=arn:aws:iam::1:instance-profile/p Profile=burst CaFile=/etc/ca.pem JoinAddress=10.0.0.5:6830 MinCount=all\n"
		   "Contract=gpu4 accelerator_count=4 accelerator_architecture=ampere\n"
		   "Contract=cheap  max_price=1 # price cap\n"
		   "NODESET=g4 Nodes=burst-[1-4] Providers=alpha Constraint=\"accelerator_count=4 node_vcpus_count>=8\"\n"
		   "NodeSet=cpu Nodes=cpu-[01-10],spare Partition=batch InstanceTypes=cpu.big,cpu.arm Features=fast\n"
		   "Price=gpu.a10g.4 Provider=alpha Region=r1 OnDemand=4.00\n"
		   "InstanceType=gpu.new Provider=alpha node_vcpus_count=8 node_memory_size=32G accelerator_count=1 accelerator=L4 accelerator_architecture=ada\n"
		   "Include extra.conf\n", &err);
	if (!ok(cfg != NULL, "a valid burst.conf loads"))
		diag("%s", err.msg);
	else {
		is_str(cfg->cluster_name, "lab", "ClusterName");
		ok(!cfg->allow_inline, "AllowInlineContracts=no");
		is_str(cfg->state_dir, "/var/lib/burst-test", "StateDir");
		is_str(cfg->socket_path, "/var/lib/burst-test/agent.sock", "SocketPath defaults into StateDir");
		ok(cfg->join_port == 7000 && cfg->boot_timeout == 90, "JoinPort, BootTimeout");
		ok(cfg->reject_cooldown == 0, "RejectCooldown=0 is allowed");
		ok(cfg->metrics_listen && !strcmp(cfg->metrics_addr, "127.0.0.1") && cfg->metrics_port == 9830,
		   "MetricsListen=127.0.0.1:9830");
		ok(cfg->reconcile_interval == 15 && cfg->orphan_grace == 120 && cfg->vanish_grace == 0,
		   "ReconcileInterval, OrphanGrace (case-insensitive), VanishGrace=0");
		is_str(cfg->prolog_slurmctld, "/etc/slurm/site-prolog", "PrologSlurmctld");
		is_str(cfg->log_file, "syslog", "LogFile=syslog");
		ok(cfg->nproviders == 2, "two providers");
		is_str(cfg->providers[0].type, "local", "Type (case-insensitive key)");
		is_str(cfg->providers[0].catalog, "alpha", "Catalog");
		ok(cfg->providers[0].nregions == 2, "two regions");
		is_str(cfg->providers[0].regions[1], "r2", "second region");
		is_str(cfg->providers[1].type, "aws", "Type defaults to the name");
		is_str(cfg->providers[1].catalog, "aws", "Catalog defaults to the type");
		is_str(cfg->providers[1].image_id, "ami-1", "ImageId");
		is_str(cfg->providers[1].launch_template, "lt-2", "LaunchTemplate");
		is_str(cfg->providers[1].subnet_id, "subnet-3", "SubnetId");
		ok(cfg->providers[1].nsecurity_groups == 2 && !strcmp(cfg->providers[1].security_groups[1], "sg-b"),
		   "SecurityGroups list");
		is_str(cfg->providers[1].iam_instance_profile, "arn:aws:iam::1:instance-profile/p", "IamInstanceProfile");
		is_str(cfg->providers[1].profile, "burst", "Profile");
		is_str(cfg->providers[1].ca_file, "/etc/ca.pem", "CaFile");
		is_str(cfg->providers[1].join_address, "10.0.0.5:6830", "JoinAddress");
		ok(cfg->providers[1].min_count_all, "MinCount=all");
		ok(!cfg->providers[0].min_count_all && !cfg->providers[0].image_id, "the aws keys default to unset");
		ok(cfg->ncontracts == 3, "three contracts, one of them included");
		is_str(cfg->contracts[1].c->text, "max_price=1", "contract text without comment or blanks");
		is_str(cfg->contracts[2].name, "extra", "the included contract");
		has_str(cfg->contracts[2].where.file, "extra.conf", "... knows its file");
		ok(cfg->contracts[2].where.line == 1, "... and line");
		ok(cfg->nnodesets == 2, "two node sets");
		is_str(cfg->nodesets[0].partition, "g4", "Partition defaults to the node set name");
		ok(cfg->nodesets[0].nodes.n == 4, "burst-[1-4] is four nodes");
		ok(cfg->nodesets[0].constraint && cfg->nodesets[0].constraint->nas == 2,
		   "a quoted Constraint with a blank inside");
		ok(cfg->nodesets[1].nodes.n == 11, "cpu-[01-10],spare is eleven nodes");
		is_str(cfg->nodesets[1].nodes.names[0], "cpu-01", "zero padding kept");
		ok(cfg->nodesets[1].ntypes == 2, "InstanceTypes list");
		is_str(cfg->nodesets[1].features, "fast", "Features");
		ok(cfg->noverrides == 2, "a Price and an InstanceType override");

		cat = fixture();
		if (ok(cat != NULL, "fixture catalog")) {
			struct cat_type *t;
			struct candset *cs;
			size_t i, n4 = 0, ncpu = 0;

			ok(config_apply_catalog(cfg, cat, &err) == 0, "overrides apply");
			t = catalog_find_type(cat, "alpha:gpu.a10g.4");
			is_num(t ? t->prices[0].ondemand : NAN, 4.0, "Price overrides the on-demand price");
			t = catalog_find_type(cat, "alpha:gpu.new");
			ok(t != NULL, "InstanceType adds a type");
			if (t) {
				is_num(t->num[KEY_VCPUS], 8, "... with its vCPUs");
				is_num(t->num[KEY_MEMORY], 32 * 1073741824.0, "... and memory");
				is_str(catalog_str(cat, t->sid[KEY_ACC_MODEL]), "L4", "... and accelerator");
				ok(t->nprices == 0, "... and no price");
			}
			cs = config_candidates(cfg, cat, &err);
			if (ok(cs != NULL, "candidates")) {
				for (i = 0; i < cs->n; i++) {
					const char *n = catalog_str(cat, cs->c[i].type->name);
					if (cs->c[i].nodeset == 0) {
						n4++;
						ok(!strcmp(n, "gpu.a10g.4") || !strcmp(n, "gpu.a100.8") ||
						   !strcmp(n, "gpu.a100x.8") || !strcmp(n, "gpu.l4.4"),
						   "g4 candidate %s has 4 GPUs and >= 8 vCPUs", n);
					}
					if (cs->c[i].nodeset == 1) {
						ncpu++;
						ok(!strcmp(n, "cpu.big") || !strcmp(n, "cpu.arm"), "cpu candidate %s is listed", n);
					}
				}
				/* g4: alpha types with exactly 4 GPUs: gpu.a10g.4 and gpu.l4.4, in r1 and r2 */
				ok(n4 == 4, "g4: two types in the provider's two regions (%zu)", n4);
				/* cpu: no Providers= means every provider; aws has no such types */
				ok(ncpu == 4, "cpu: two types in two regions (%zu)", ncpu);
				for (i = 0; i < cs->n; i++)
					if (cs->c[i].nodeset == 0 && !strcmp(catalog_str(cat, cs->c[i].type->name), "gpu.l4.4") &&
					    !strcmp(catalog_str(cat, cs->c[i].region), "r2")) {
						is_num(cs->c[i].ondemand, 5.0, "a region with a price keeps it");
					}
				for (i = 0; i < cs->n; i++)
					if (cs->c[i].nodeset == 0 && !strcmp(catalog_str(cat, cs->c[i].type->name), "gpu.a10g.4") &&
					    !strcmp(catalog_str(cat, cs->c[i].region), "r2"))
						ok(isnan(cs->c[i].ondemand), "a configured region without a price: unknown");
				candset_free(cs);
			}
			/* gpu4 and cheap are served; extra (>=2 accelerators) by g4 */
			ok(config_check(cfg, cat, &err) == 1, "one problem");
			has_str(err.msg, "good.conf:8: Contract cheap is satisfied by no instance type of any NodeSet",
				"max_price=1: no node set has a type that cheap");
			catalog_free(cat);
		}
		config_free(cfg);
	}

	/* ---- rate limits: EC2's for aws, overridden per provider ---- */
	{
		burst_err_t rerr;
		struct burst_config *rc_cfg = load("rates.conf",
			"Provider=aws ImageId=ami-1\n"
			"Provider=small Type=aws ImageId=ami-1 LaunchRate=20/0.5 RequestRate=launch:2/1,terminate:none TerminateRate=none\n"
			"Provider=local Bridge=br0 Address=10.5.0.1/24\n"
			"Provider=lim Type=local Bridge=br1 Address=10.6.0.1/24 LaunchRate=3/1\n", &rerr);
		ok(rc_cfg != NULL, "rates.conf loads%s%s", rc_cfg ? "" : ": ", rc_cfg ? "" : rerr.msg);
		if (rc_cfg) {
			const struct rate_limits *a = &rc_cfg->providers[0].rates, *b = &rc_cfg->providers[1].rates;
			ok(a->launch.size == 1000 && a->launch.rate == 2 && a->launch_calls.size == 5 &&
			   a->launch_calls.rate == 2 && a->terminate.size == 1000 && a->terminate.rate == 20 &&
			   a->terminate_calls.size == 100 && a->terminate_calls.rate == 5,
			   "aws without rate keys: EC2's documented buckets");
			ok(b->launch.size == 20 && b->launch.rate == 0.5 && b->launch_calls.size == 2 &&
			   b->launch_calls.rate == 1 && b->terminate_calls.size == 0 && b->terminate.size == 0,
			   "LaunchRate=, RequestRate= and none override them one by one");
			ok(rc_cfg->providers[2].rates.launch.size == 0 && rc_cfg->providers[2].rates.launch_calls.size == 0,
			   "local: no limits by default");
			ok(rc_cfg->providers[3].rates.launch.size == 3 && rc_cfg->providers[3].rates.launch.rate == 1,
			   "any provider may be given one");
		}
		config_free(rc_cfg);
	}
	refused("rate1.conf", "Provider=aws ImageId=ami-1 LaunchRate=1000\n",
		"@/rate1.conf:1: Provider aws: LaunchRate=1000: '1000' is not SIZE/RATE: want a bucket size and its refill a second, such as 1000/2, or none");
	refused("rate2.conf", "Provider=aws ImageId=ami-1\nProvider=b Type=aws ImageId=ami-1 TerminateRate=10/0\n",
		"@/rate2.conf:2: Provider b: TerminateRate=10/0: '10/0': the refill must be more than 0 a second");
	refused("rate3.conf", "Provider=aws ImageId=ami-1 RequestRate=lanch:5/2\n",
		"@/rate3.conf:1: Provider aws: RequestRate=lanch:5/2: unknown call 'lanch'; did you mean 'launch'? (calls: launch, terminate)");
	refused("rate4.conf", "Provider=aws ImageId=ami-1 RequestRate=5/2\n",
		"@/rate4.conf:1: Provider aws: RequestRate=5/2: '5/2' is not CALL:SIZE/RATE; want e.g. RequestRate=launch:5/2,terminate:100/5");
	refused("rate5.conf", "Provider=aws ImageId=ami-1 RequestRate=launch:x\n",
		"@/rate5.conf:1: Provider aws: RequestRate=launch:x: 'x' is not SIZE/RATE");

	/* ---- errors: each names file:line and the word ---- */
	refused("misspelled.conf", "Provider=aws Regoins=us-east-1\n",
		"@/misspelled.conf:1: unknown Provider key 'Regoins'; did you mean 'Regions'?");
	refused("joinaddr.conf", "Provider=aws ImageId=ami-1\nProvider=b Type=aws ImageId=ami-1 JoinAddress=10.0.0.5\n",
		"@/joinaddr.conf:2: Provider b: JoinAddress=10.0.0.5 is not ADDRESS:PORT such as 10.0.0.5:6830");
	refused("mincount.conf", "Provider=aws ImageId=ami-1 MinCount=2\n",
		"@/mincount.conf:1: Provider aws: MinCount=2: want 1 (launch what capacity allows) or all");
	refused("ptype.conf", "Provider=x Type=awz\n",
		"@/ptype.conf:1: unknown provider type 'awz'; did you mean 'aws'?");
	refused("badunit.conf", "\n\nContract=big node_memory_size>=16X\n",
		"@/badunit.conf:3: Contract big: bad contract at character 21: node_memory_size: unknown size unit 'X'");
	refused("dup.conf", "Contract=a accelerator_count=1\nContract=a accelerator_count=2\n",
		"@/dup.conf:2: Contract a is defined twice (first at @/dup.conf:1)");
	refused("nonodes.conf", "Provider=aws\nNodeSet=n InstanceTypes=m5.large\n",
		"@/nonodes.conf:2: NodeSet n needs Nodes=");
	refused("notypes.conf", "Provider=aws\nNodeSet=n Nodes=a-[1-2]\n",
		"@/notypes.conf:2: NodeSet n needs InstanceTypes= or Constraint=");
	refused("unknownprov.conf", "Provider=aws\nNodeSet=n Nodes=a-1 Providers=awss InstanceTypes=x\n",
		"@/unknownprov.conf:2: NodeSet n: Providers names 'awss', which no Provider= line defines; did you mean 'aws'?");
	refused("overlap.conf", "Provider=aws\nNodeSet=a Nodes=n-[1-4] InstanceTypes=x\nNodeSet=b Nodes=n-[4-6] InstanceTypes=x\n",
		"@/overlap.conf:3: NodeSet b: node n-4 is already in NodeSet a (@/overlap.conf:2)");
	refused("samename.conf", "Provider=aws\nNodeSet=gpu Nodes=n-1 InstanceTypes=x\nContract=gpu accelerator_count=1\n",
		"Contract gpu has the name of NodeSet gpu");
	refused("missinginc.conf", "Include nothere.conf\n", "@/missinginc.conf:1: Include @/nothere.conf: No such file or directory");
	write_file("loop.conf", "Include loop.conf\n");
	refused("loop2.conf", "Include loop.conf\n", "Include nested deeper than 8 (a loop?)");
	refused("quote.conf", "NodeSet=n Nodes=a-1 Constraint=\"accelerator_count=1\n",
		"@/quote.conf:1: unterminated quote");
	refused("bareword.conf", "Provider=aws frobnicate\n", "@/bareword.conf:1: expected Key=Value, found 'frobnicate'");
	refused("unknownline.conf", "Contrat=x accelerator_count=1\n",
		"@/unknownline.conf:1: unknown key 'Contrat'; did you mean 'Contract'?");
	refused("relstate.conf", "StateDir=var/lib\n", "StateDir must be an absolute path");
	refused("rellog.conf", "LogFile=agent.log\n", "LogFile must be an absolute path or syslog, not 'agent.log'");
	refused("badcool.conf", "RejectCooldown=-1\n", "RejectCooldown=-1: give seconds (0-86400)");
	refused("badboot.conf", "BootTimeout=0\n", "BootTimeout=0: give seconds (1-86400)");
	refused("badport.conf", "JoinPort=70000\n", "JoinPort=70000: give a TCP port (1-65535)");
	refused("metricsnoport.conf", "MetricsListen=127.0.0.1\n", "MetricsListen=127.0.0.1: give ADDRESS:PORT");
	refused("metricsport.conf", "MetricsListen=127.0.0.1:0\n", "metricsport.conf:1: MetricsListen=127.0.0.1:0: give a TCP port (1-65535)");
	refused("metricsaddr.conf", "MetricsListen=localhost:9830\n", "'localhost' is not an IPv4 address");
	refused("metricstypo.conf", "MetricListen=127.0.0.1:9830\n", "did you mean 'MetricsListen'?");
	refused("badrecint.conf", "ReconcileInterval=-5\n", "ReconcileInterval=-5: give seconds (0-86400)");
	refused("badorphan.conf", "OrphanGrace=5m\n", "OrphanGrace=5m: give seconds (0-86400)");
	refused("badvanish.conf", "VanishGrace=86401\n", "VanishGrace=86401: give seconds (0-86400)");
	refused("typorec.conf", "OrphanGrase=5\n", "did you mean 'OrphanGrace'?");
	{
		struct burst_config *c = load("recdefault.conf", "ClusterName=x\n", &err);
		ok(c && c->reconcile_interval == 60 && c->orphan_grace == 300 && c->vanish_grace == 60,
		   "the reconciler's defaults: every 60 s, OrphanGrace 300 s, VanishGrace 60 s");
		ok(c && c->interruption_cooldown == 600, "InterruptionCooldown defaults to 600 s");
		config_free(c);
		c = load("intcool.conf", "ClusterName=x interruptioncooldown=45\n", &err);
		ok(c && c->interruption_cooldown == 45, "InterruptionCooldown=45 (case-insensitive)");
		config_free(c);
	}
	refused("badintcool.conf", "InterruptionCooldown=0\n", "intcool.conf:1: InterruptionCooldown=0: give seconds (1-86400)");
	refused("typointcool.conf", "InteruptionCooldown=60\n", "did you mean 'InterruptionCooldown'?");
	{
		struct burst_config *c = load("joinmem.conf", "ClusterName=x\n", &err);
		ok(c && c->join_report_memory == (size_t)64 << 20, "JoinReportMemory defaults to 64M");
		config_free(c);
		c = load("joinmem.conf", "JoinReportMemory=16M\n", &err);
		ok(c && c->join_report_memory == (size_t)16 << 20, "JoinReportMemory=16M");
		config_free(c);
	}
	refused("joinmemsmall.conf", "JoinReportMemory=512K\n",
		"joinmemsmall.conf:1: JoinReportMemory=512K: give a size from 1M (one whole report) to 64G");
	refused("joinmemunit.conf", "JoinReportMemory=64\n", "joinmemunit.conf:1: JoinReportMemory=64: ");
	refused("typoglobal.conf", "RejectColdown=5\n", "did you mean 'RejectCooldown'?");
	refused("badbool.conf", "AllowInlineContracts=maybe\n", "AllowInlineContracts is yes or no, not 'maybe'");
	{
		/* EarlyLaunch=: global default no; a node set's own wins */
		struct burst_config *c = load("early.conf",
					      "Provider=local Bridge=br0 Address=10.0.0.1/24\n"
					      "NodeSet=a Nodes=a-1 InstanceTypes=local.host\n"
					      "NodeSet=b Nodes=b-1 InstanceTypes=local.host EarlyLaunch=yes\n", &err);
		ok(c && !c->early_launch && !config_early_launch(c, &c->nodesets[0]) &&
		   config_early_launch(c, &c->nodesets[1]),
		   "EarlyLaunch is off by default; NodeSet EarlyLaunch=yes turns it on for that node set");
		config_free(c);
		c = load("early2.conf",
			 "EarlyLaunch=yes\nProvider=local Bridge=br0 Address=10.0.0.1/24\n"
			 "NodeSet=a Nodes=a-1 InstanceTypes=local.host\n"
			 "NodeSet=b Nodes=b-1 InstanceTypes=local.host EarlyLaunch=no\n", &err);
		ok(c && c->early_launch && config_early_launch(c, &c->nodesets[0]) &&
		   !config_early_launch(c, &c->nodesets[1]),
		   "global EarlyLaunch=yes; NodeSet EarlyLaunch=no keeps today's path there");
		config_free(c);
	}
	refused("badearly.conf", "EarlyLaunch=soon\n", "badearly.conf:1: EarlyLaunch is yes or no, not 'soon'");
	refused("badearly2.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host EarlyLaunch=1x\n",
		"badearly2.conf:2: NodeSet a: EarlyLaunch is yes or no, not '1x'");
	{
		/* warm pool: WarmPool=, WarmPoolMaxAge= (a duration), WarmPoolBudget= (USD per hour) */
		struct burst_config *c = load("warm.conf",
					      "Provider=local Bridge=br0 Address=10.0.0.1/24\n"
					      "NodeSet=a Nodes=a-1 InstanceTypes=local.host\n"
					      "NodeSet=b Nodes=b-[1-4] InstanceTypes=local.host WarmPool=2 WarmPoolMaxAge=12h WarmPoolBudget=0.5\n"
					      "NodeSet=c Nodes=c-1 InstanceTypes=local.host WarmPool=1\n", &err);
		ok(c != NULL, "warm.conf loads%s%s", c ? "" : ": ", c ? "" : err.msg);
		if (c) {
			ok(c->nodesets[0].warm_pool == 0 && isnan(c->nodesets[0].warm_pool_budget),
			   "no WarmPool=: no pool, no budget");
			ok(c->nodesets[1].warm_pool == 2 && c->nodesets[1].warm_pool_max_age == 12 * 3600 &&
			   c->nodesets[1].warm_pool_budget == 0.5,
			   "WarmPool=2 WarmPoolMaxAge=12h WarmPoolBudget=0.5 (%d, %d, %g)", c->nodesets[1].warm_pool,
			   c->nodesets[1].warm_pool_max_age, c->nodesets[1].warm_pool_budget);
			ok(c->nodesets[2].warm_pool_max_age == CONFIG_WARM_POOL_MAX_AGE && isnan(c->nodesets[2].warm_pool_budget),
			   "WarmPoolMaxAge defaults to a day (%d), WarmPoolBudget to none", c->nodesets[2].warm_pool_max_age);
			config_free(c);
		}
		c = load("warmage.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\n"
			 "NodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPool=1 WarmPoolMaxAge=5400\n"
			 "NodeSet=b Nodes=b-1 InstanceTypes=local.host WarmPool=1 WarmPoolMaxAge=90m\n"
			 "NodeSet=d Nodes=d-1 InstanceTypes=local.host WarmPool=1 WarmPoolMaxAge=7d\n", &err);
		ok(c && c->nodesets[0].warm_pool_max_age == 5400 && c->nodesets[1].warm_pool_max_age == 5400 &&
		   c->nodesets[2].warm_pool_max_age == 7 * 86400, "WarmPoolMaxAge= in seconds, 90m, 7d");
		config_free(c);
	}
	refused("warmbad.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPool=many\n",
		"warmbad.conf:2: NodeSet a: WarmPool=many: expected how many admitted instances to keep stopped, a whole number from 0 to 1000");
	refused("warmneg.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPool=-1\n",
		"warmneg.conf:2: NodeSet a: WarmPool=-1: expected");
	refused("warmage.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPool=1 WarmPoolMaxAge=1w\n",
		"warmage.conf:2: NodeSet a: WarmPoolMaxAge=1w: expected a duration from 1 minute to 365 days, such as 3600, 90m, 12h or 7d");
	refused("warmage2.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPool=1 WarmPoolMaxAge=30s\n",
		"warmage2.conf:2: NodeSet a: WarmPoolMaxAge=30s: expected a duration from 1 minute");
	refused("warmbudget.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPool=1 WarmPoolBudget=lots\n",
		"warmbudget.conf:2: NodeSet a: WarmPoolBudget=lots: expected a number");
	refused("warmnopool.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPoolBudget=1\n",
		"warmnopool.conf:2: NodeSet a: WarmPoolBudget= has no effect without WarmPool=N");
	refused("warmtypo.conf", "Provider=local Bridge=br0 Address=10.0.0.1/24\nNodeSet=a Nodes=a-1 InstanceTypes=local.host WarmPol=1\n",
		"did you mean 'WarmPool'?");
	refused("stoppedbad.conf", "Price=x Provider=aws Stopped=cheap\n", "Price x: Stopped=cheap: expected a number");
	refused("pricenone.conf", "Price=x Provider=aws Region=r\n", "Price x needs OnDemand=, Spot= and/or Stopped=");
	refused("stoppednoprov.conf", "Price=x Region=r Stopped=0.01\n", "Price x needs Provider= and Region=");
	refused("badprice.conf", "Price=x Provider=aws Region=r OnDemand=cheap\n", "Price x: OnDemand=cheap: expected a number");
	refused("pricemissing.conf", "Price=x Provider=aws\n", "Price x needs Provider= and Region=");
	refused("itype.conf", "InstanceType=x Provider=aws node_vcpu_count=4\n",
		"InstanceType x: unknown key 'node_vcpu_count'; did you mean 'node_vcpus_count'?");
	refused("itypearch.conf", "InstanceType=x Provider=aws accelerator_architecture=hoper\n",
		"unknown accelerator architecture 'hoper'; did you mean 'hopper'?");
	refused("badname.conf", "Contract=a/b accelerator_count=1\n", "Contract name 'a/b' must be letters");
	refused("badhosts.conf", "NodeSet=n Nodes=a-[1-2 InstanceTypes=x\n", "NodeSet n: Nodes=a-[1-2: missing ']'");
	{
		/* several errors at once: all reported, each with its line */
		struct burst_config *c = load("many.conf",
			"Provider=aws Regoins=x\nContract=a accelerator_count=>1\nFrob=1\n", &err);
		ok(c == NULL, "a file with three errors is refused");
		has_str(err.msg, "many.conf:1:", "first error reported");
		has_str(err.msg, "many.conf:2:", "second error reported");
		has_str(err.msg, "many.conf:3:", "third error reported");
		config_free(c);
		/* a key typo does not hide a reference to a provider nobody defines */
		c = load("refs.conf",
			 "Provider=aws Regoins=x\nNodeSet=n Nodes=a-[1-2] Providers=awz InstanceTypes=t\n", &err);
		ok(c == NULL, "a key typo and an unknown provider are refused");
		has_str(err.msg, "refs.conf:1: unknown Provider key 'Regoins'", "the typo is reported");
		has_str(err.msg, "refs.conf:2: NodeSet n: Providers names 'awz', which no Provider= line defines; did you mean 'aws'?",
			"... and in the same run the unknown provider");
		config_free(c);
	}
	cfg = config_load(path_of("absent.conf"), &err);
	ok(cfg == NULL, "a missing file is refused");
	has_str(err.msg, "absent.conf: cannot open: No such file or directory", "... saying so");
	mkdir(path_of("dir.conf"), 0755);
	cfg = config_load(path_of("dir.conf"), &err);
	ok(cfg == NULL, "a burst.conf that cannot be read (a directory) is refused");
	has_str(err.msg, "dir.conf: cannot read: Is a directory", "... saying so, not taken as empty");
	rmdir(path_of("dir.conf"));

	/* ---- with the catalog: overrides and checks ---- */
	cat = fixture();
	if (cat) {
		int n;
		cfg = load("unknownprice.conf", "Provider=alpha Type=local Catalog=alpha\nPrice=nope Provider=alpha Region=r1 OnDemand=1\n", &err);
		ok(cfg != NULL, "a Price for an unknown type parses");
		if (cfg) {
			burst_err_clear(&err);
			ok(config_apply_catalog(cfg, cat, &err) == -1, "... but does not apply");
			has_str(err.msg, "unknownprice.conf:2: Price nope: no instance type nope in the alpha catalog",
				"... naming file:line");
			config_free(cfg);
		}
		{
			/* a stopped instance's price: Stopped= (any region, or its own), else the
			 * catalog's disk, else the default disk; Stopped= alone leaves prices be */
			char src[512];
			double od = NAN;
			size_t k;
			const struct cat_type *t;
			cfg = load("stopped.conf", "Provider=alpha Type=local Catalog=alpha\n"
				   "Price=cpu.small Provider=alpha Stopped=0.01\n"
				   "Price=cpu.small Provider=alpha Region=r2 Stopped=0.02\n", &err);
			ok(cfg != NULL, "stopped.conf parses%s%s", cfg ? "" : ": ", cfg ? "" : err.msg);
			if (cfg) {
				burst_err_clear(&err);
				ok(config_apply_catalog(cfg, cat, &err) == 0, "Stopped= alone applies: %s", err.msg);
				is_num(config_stopped_price(cfg, cat, "alpha", "cpu.small", "r1", src, sizeof(src)), 0.01,
				       "Stopped= without Region= holds in r1");
				has_str(src, "stopped.conf:2", "... said to come from its line (%s)", src);
				is_num(config_stopped_price(cfg, cat, "alpha", "cpu.small", "r2", src, sizeof(src)), 0.02,
				       "the last line for r2 wins there");
				is_num(config_stopped_price(cfg, cat, "alpha", "gpu.t4", "r1", src, sizeof(src)),
				       225.0 * CONFIG_STOPPED_USD_PER_GB_MONTH / 730.0, "gpu.t4: its catalog disk, 225 GB");
				has_str(src, "the catalog's disk, 225 GB", "... said so (%s)", src);
				is_num(config_stopped_price(cfg, cat, "alpha", "cpu.big", "r1", src, sizeof(src)),
				       CONFIG_STOPPED_DEFAULT_DISK_GB * CONFIG_STOPPED_USD_PER_GB_MONTH / 730.0,
				       "cpu.big (no disk in the catalog): the default disk");
				has_str(src, "default: a 30 GB disk", "... said so (%s)", src);
				t = catalog_find_type(cat, "alpha:cpu.small");
				for (k = 0; t && k < t->nprices; k++)
					if (!strcmp(catalog_str(cat, t->prices[k].region), "r1"))
						od = t->prices[k].ondemand;
				is_num(od, 0.10, "cpu.small's on-demand price in r1 is the catalog's still");
				config_free(cfg);
			}
		}
		cfg = load("warmcheck.conf",
			   "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.1/8\n"
			   "Provider=os Type=openstack Catalog=alpha Image=img Endpoint=https://127.0.0.1:1/v3 JoinAddress=127.0.0.1:6830\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=cpu.small Providers=alpha WarmPool=1\n"
			   "NodeSet=m Nodes=b-[1-2] InstanceTypes=cpu.small WarmPool=1\n"
			   "NodeSet=o Nodes=c-[1-2] InstanceTypes=cpu.small Providers=os\n", &err);
		if (ok(cfg != NULL, "warmcheck.conf parses%s%s", cfg ? "" : ": ", cfg ? "" : err.msg)) {
			burst_err_clear(&err);
			config_check(cfg, cat, &err);
			has_str(err.msg, "warmcheck.conf:4: NodeSet m: WarmPool=1 needs instances that can be stopped and started, and the openstack driver (Provider os) cannot yet (local and aws can)",
				"a pool over a provider that cannot stop is refused, naming both");
			ok(!strstr(err.msg, "NodeSet n: WarmPool") && !strstr(err.msg, "NodeSet o: WarmPool"),
			   "a pool over the local provider alone, and a node set without a pool, are not");
			config_free(cfg);
		}
		cfg = load("check.conf",
			   "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.1/8\n"
			   "Contract=huge accelerator_count>=64\n"
			   "Contract=ok accelerator_count>=1\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4,gpu.t5\n", &err);
		if (ok(cfg != NULL, "check.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 2, "two problems (%d)", n);
			has_str(err.msg, "check.conf:2: Contract huge is satisfied by no instance type of any NodeSet",
				"an unsatisfiable contract");
			has_str(err.msg, "check.conf:4: NodeSet n: instance type gpu.t5 is in no catalog of its providers; did you mean 'gpu.t4'?",
				"an unknown instance type, with the nearest");
			config_free(cfg);
		}
		{
			char text[1024];
			write_file("cred", "secret\n");
			chmod(path_of("cred"), 0644);
			snprintf(text, sizeof(text), "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.1/8 CredentialsFile=%s\n", path_of("cred"));
			cfg = load("cred.conf", text, &err);
			if (ok(cfg != NULL, "cred.conf parses")) {
				n = config_check(cfg, cat, &err);
				ok(n == 1, "a credentials file others can read is a problem");
				has_str(err.msg, "is readable by others (mode 644): chmod 600 it", "... with what to do");
				chmod(path_of("cred"), 0600);
				ok(config_check(cfg, cat, &err) == 0, "mode 0600 is accepted");
				config_free(cfg);
			}
		}
		{
			char text[4096];
			write_file("clouds.yaml", "clouds: {}\n");
			chmod(path_of("clouds.yaml"), 0600);
			snprintf(text, sizeof(text),
				 "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.1/8\n"
				 "Provider=os Type=openstack Catalog=alpha Image=img CredentialsFile=%s\n"
				 "Provider=os2 Type=openstack Catalog=alpha Image=img CredentialsFile=%s Cloud=lab\n"
				 "Provider=aw Type=aws Catalog=alpha ImageId=ami-1 CredentialsFile=%s Cloud=lab\n",
				 path_of("clouds.yaml"), path_of("clouds.yaml"), path_of("clouds.yaml"));
			cfg = load("cloud.conf", text, &err);
			if (ok(cfg != NULL, "cloud.conf parses: %s", err.msg)) {
				n = config_check(cfg, cat, &err);
				ok(n == 2, "two problems with Cloud= (%d): %s", n, err.msg);
				has_str(err.msg, "cloud.conf:2: Provider os: CredentialsFile ", "a clouds.yaml without Cloud=");
				has_str(err.msg, "looks like a clouds.yaml: say which of its clouds with Cloud=NAME", "... saying what to add");
				has_str(err.msg, "cloud.conf:4: Provider aw: Cloud= is for openstack providers", "Cloud= on an aws provider");
				ok(!strstr(err.msg, "cloud.conf:3:"), "a clouds.yaml with Cloud= is fine");
				config_free(cfg);
			}
		}
		/* the local provider's bridge: checked on this host */
		cfg = load("nobridge.conf",
			   "Provider=alpha Type=local Catalog=alpha Bridge=brnone9z Address=10.250.9.1/24\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "nobridge.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 1, "a Bridge= that does not exist is a problem (%d)", n);
			has_str(err.msg, "nobridge.conf:1: Provider alpha: Bridge=brnone9z does not exist on this host: create it with an address and a MAC of its own "
				"(ip link add brnone9z address 02:00:0a:fa:09:01 type bridge; ip addr add 10.250.9.1/24 dev brnone9z; ip link set brnone9z up), "
				"and make it persistent (a systemd-networkd .netdev with MACAddress=",
				"... naming file:line, the bridge and how to make it, with a MAC made of its address, persistent");
			config_free(cfg);
		}
		cfg = load("lobridge.conf",
			   "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.1/8\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "lobridge.conf parses")) {
			ok(config_check(cfg, cat, &err) == 0, "an interface with the address is accepted: %s", err.msg);
			config_free(cfg);
		}
		cfg = load("noaddr.conf",
			   "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=10.250.9.1/24\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "noaddr.conf parses")) {
			ok(config_check(cfg, cat, &err) == 1, "a bridge without the address is a problem");
			has_str(err.msg, "Bridge=lo does not have the address 10.250.9.1: ip addr add 10.250.9.1/24 dev lo",
				"... saying what to add");
			config_free(cfg);
		}
		/* the network: where instances report, and that the agent listens there */
		cfg = load("awsonly.conf",
			   "Provider=alpha Type=aws Catalog=alpha Regions=r1 ImageId=ami-1\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "awsonly.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 1, "an aws provider with nowhere to report is a problem (%d)", n);
			has_str(err.msg, "awsonly.conf:1: Provider alpha: nothing says where its instances send their join report: set JoinAddress=ADDRESS:PORT",
				"... naming file:line and the key to set");
			config_free(cfg);
		}
		cfg = load("awsnat.conf",
			   "JoinAddress=203.0.113.7:16830\n"
			   "Provider=alpha Type=aws Catalog=alpha Regions=r1 ImageId=ami-1\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "awsnat.conf parses")) {
			char buf[300];
			ok(config_check(cfg, cat, &err) == 0, "a burst.conf with only an aws provider and JoinAddress= is fine: %s", err.msg);
			is_str(config_join_address(cfg, &cfg->providers[0], buf, sizeof(buf)), "203.0.113.7:16830",
			       "its instances are told the (NAT) JoinAddress=");
			config_free(cfg);
		}
		cfg = load("azure.conf",
			   "JoinAddress=10.0.0.5:6830\n"
			   "Provider=alpha Type=azure Catalog=alpha Regions=r1\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "azure.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 1, "an azure provider with only Regions= is one problem (%d)", n);
			has_str(err.msg, "azure.conf:2: Provider alpha (azure) needs Subscription=", "... naming what it needs");
			config_free(cfg);
		}
		cfg = load("gcp.conf",
			   "JoinAddress=10.0.0.5:6830\n"
			   "Provider=alpha Type=gcp Catalog=alpha Zones=r1-a,r2-b Network=global/networks/hpc NetworkTags=burst\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "gcp.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 4, "a gcp provider without Image=, Regions=, its Zones= outside them: 4 problems (%d)", n);
			has_str(err.msg, "gcp.conf:2: Provider alpha (gcp) needs Image=projects/P/global/images/family/F or InstanceTemplate=",
				"... the image");
			has_str(err.msg, "gcp.conf:2: Provider alpha (gcp) needs Regions=R[,R...]", "... the regions");
			has_str(err.msg, "gcp.conf:2: Provider alpha (gcp): zone r2-b of Zones= is in none of its Regions=",
				"... a zone outside them");
			is_str(cfg->providers[0].network, "global/networks/hpc", "Network= is kept");
			ok(cfg->providers[0].nnetwork_tags == 1 && !strcmp(cfg->providers[0].network_tags[0], "burst"),
			   "NetworkTags= is a list");
			config_free(cfg);
		}
		cfg = load("gcp2.conf",
			   "JoinAddress=10.0.0.5:6830\n"
			   "Provider=alpha Type=gcp Catalog=alpha Regions=r1 Zones=r1-a Image=projects/debian-cloud/global/images/family/debian-12 "
			   "Spot=yes ExternalIP=no DiskSizeGB=50 Project=burst-test\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "gcp2.conf parses: %s", cfg ? "" : err.msg)) {
			ok(config_check(cfg, cat, &err) == 0, "a complete gcp provider is fine: %s", err.msg);
			ok(cfg->providers[0].spot && !cfg->providers[0].external_ip && cfg->providers[0].disk_size_gb == 50,
			   "Spot=yes, ExternalIP=no, DiskSizeGB=50 are read");
			is_str(cfg->providers[0].project, "burst-test", "Project= is kept");
			config_free(cfg);
		}
		cfg = load("gcp3.conf",
			   "Provider=alpha Type=gcp Regions=r1 Image=i Spot=maybe DiskSizeGB=5\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		ok(cfg == NULL && strstr(err.msg, "gcp3.conf:1: Provider alpha: Spot=maybe: want yes or no") &&
		   strstr(err.msg, "DiskSizeGB=5: want GB from 10 to 65536"),
		   "Spot= not yes/no and a DiskSizeGB= too small: refused, naming the line: %s", err.msg);
		cfg = load("azure2.conf",
			   "JoinAddress=10.0.0.5:6830\n"
			   "Provider=az Type=azure Catalog=alpha Regions=eastus Subscription=s1 ResourceGroup=rg Zones=1,2,3 "
			   "Image=Canonical:ubuntu-24_04-lts:server:latest Priority=Spot MaxPrice=0.5 OsDiskType=Premium_LRS "
			   "SubnetId=/subscriptions/s1/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/n\n"
			   "Provider=az2 Type=azure Catalog=alpha Regions=eastus Subscription=s1 Image=Canonical:o:s:latest Zones=1,east\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "azure2.conf parses: %s", cfg ? "" : err.msg)) {
			ok(cfg->providers[0].nzones == 3 && !strcmp(cfg->providers[0].zones[2], "3") && cfg->providers[0].spot &&
			   cfg->providers[0].max_price == 0.5 && !strcmp(cfg->providers[0].resource_group, "rg"),
			   "azure keys: Zones, Priority, MaxPrice, ResourceGroup");
			ok(!cfg->providers[1].spot && cfg->providers[1].max_price == -1, "defaults: Regular, MaxPrice -1");
			n = config_check(cfg, cat, &err);
			ok(n == 2, "an azure provider without ResourceGroup=, a zone that is no number: two problems (%d): %s", n, err.msg);
			has_str(err.msg, "Provider az2 (azure): Zones: 'east' is not an availability zone number", "... the zone");
			has_str(err.msg, "azure2.conf:3: Provider az2 (azure) needs ResourceGroup=", "... naming file:line and the key");
			config_free(cfg);
		}
		cfg = load("azbad.conf",
			   "Provider=az Type=azure Catalog=alpha Priority=Low MaxPrice=cheap OsDiskType=SSD\n", &err);
		ok(cfg == NULL, "bad azure values are refused");
		has_str(err.msg, "Priority=Low: want Regular or Spot", "... a priority");
		has_str(err.msg, "MaxPrice=cheap: want USD per hour", "... a price");
		has_str(err.msg, "OsDiskType=SSD: want Standard_LRS", "... a disk type");
		config_free(cfg);
		cfg = load("nolisten.conf",
			   "JoinListen=192.0.2.77:7000 JoinAddress=10.0.0.5:6830\n"
			   "Provider=alpha Type=aws Catalog=alpha Regions=r1 ImageId=ami-1\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "nolisten.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 1, "JoinListen= on an address this host lacks is a problem (%d)", n);
			has_str(err.msg, "JoinListen: 192.0.2.77 is no address of this host", "... naming it");
			config_free(cfg);
		}
		cfg = load("localwild.conf",
			   "JoinListen=*:7001 JoinAddress=198.51.100.2:7001\n"
			   "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.1/8\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "localwild.conf parses")) {
			char buf[300];
			ok(config_check(cfg, cat, &err) == 0, "local provider, listening everywhere: fine: %s", err.msg);
			is_str(config_join_address(cfg, &cfg->providers[0], buf, sizeof(buf)), "127.0.0.1:7001",
			       "local instances report to their bridge's address, not the global JoinAddress=");
			config_free(cfg);
		}
		cfg = load("localelse.conf",
			   "JoinListen=127.0.0.1:7001\n"
			   "Provider=alpha Type=local Catalog=alpha Bridge=lo Address=127.0.0.2/8\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "localelse.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n >= 1, "a local bridge where the agent does not listen is a problem (%d)", n);
			has_str(err.msg, "localelse.conf:2: Provider alpha: its instances report to its bridge's address 127.0.0.2, where the agent does not listen: add 127.0.0.2 to JoinListen=",
				"... saying what to add");
			config_free(cfg);
		}
		cfg = load("nobr.conf",
			   "JoinAddress=10.0.0.5:6830\n"
			   "Provider=alpha Type=local Catalog=alpha\n"
			   "NodeSet=n Nodes=a-[1-2] InstanceTypes=gpu.t4\n", &err);
		if (ok(cfg != NULL, "nobr.conf parses")) {
			n = config_check(cfg, cat, &err);
			ok(n == 1, "a local provider without a bridge is a problem (%d)", n);
			has_str(err.msg, "nobr.conf:2: Provider alpha (local) needs Bridge=NAME Address=ADDR/PREFIX", "... saying what to give");
			config_free(cfg);
		}
		catalog_free(cat);
	}

	/* JoinListen=: addresses and ports, the default */
	{
		struct burst_config *c = load("listen.conf", "JoinListen=127.0.0.1,*:7001\nJoinPort=7000\nProvider=aws ImageId=ami-1\n", &err);
		if (ok(c != NULL, "JoinListen= with two addresses parses: %s", err.msg)) {
			ok(c->njoin_listen == 2, "two listening addresses");
			is_str(c->join_listen[0].addr, "127.0.0.1", "the first");
			ok(c->join_listen[0].port == 7000, "... at JoinPort (given after it)");
			is_str(c->join_listen[1].addr, "0.0.0.0", "* is every address");
			ok(c->join_listen[1].port == 7001, "... at its own port");
			config_free(c);
		}
		c = load("listen-def.conf", "Provider=aws ImageId=ami-1\n", &err);
		if (ok(c != NULL, "no JoinListen=")) {
			ok(c->njoin_listen == 1 && !strcmp(c->join_listen[0].addr, "0.0.0.0") && c->join_listen[0].port == 6830,
			   "without a local provider the agent listens on every address at JoinPort");
			config_free(c);
		}
		c = load("listen-br.conf", "JoinPort=7002\nProvider=loc Type=local Bridge=br9 Address=10.9.0.1/24\nProvider=aws ImageId=ami-1\n", &err);
		if (ok(c != NULL, "no JoinListen=, a local provider")) {
			ok(c->njoin_listen == 1 && !strcmp(c->join_listen[0].addr, "10.9.0.1") && c->join_listen[0].port == 7002,
			   "the agent listens on the local bridge's address, as before JoinListen=");
			config_free(c);
		}
	}
	refused("listen-bad.conf", "JoinListen=10.0.0.300\n", "@/listen-bad.conf:1: JoinListen=10.0.0.300: '10.0.0.300' is not an IPv4 ADDRESS[:PORT]");
	refused("listen-port.conf", "JoinListen=10.0.0.3:\n", "@/listen-port.conf:1: JoinListen=10.0.0.3:: '10.0.0.3:' has no TCP port");
	refused("joinaddr-g.conf", "JoinAddress=10.0.0.5\n", "@/joinaddr-g.conf:1: JoinAddress=10.0.0.5 is not ADDRESS:PORT");

	/* plain-HTTP endpoints: refused unless a test's burst.conf allows them */
	refused("http.conf", "Provider=aws Regions=us-east-1 Endpoint=http://127.0.0.1:5000\n",
		"@/http.conf:1: Provider aws: Endpoint=http://127.0.0.1:5000 is plain HTTP");
	refused("http-up.conf", "Provider=aws Regions=us-east-1 Endpoint=HTTP://ec2.example\n",
		"@/http-up.conf:1: Provider aws: Endpoint=HTTP://ec2.example is plain HTTP");
	{
		struct burst_config *c = load("https.conf", "Provider=aws Regions=us-east-1 Endpoint=https://ec2.example\n", &err);
		ok(c != NULL, "an https:// endpoint is accepted");
		config_free(c);
		c = load("http-ok.conf", "Provider=aws Regions=us-east-1 Endpoint=http://127.0.0.1:5000\nAllowInsecureEndpoint=yes\n",
			 &err);
		ok(c && c->allow_insecure_endpoint, "plain HTTP with AllowInsecureEndpoint=yes (even on a later line)");
		config_free(c);
	}
	refused("insecure-bad.conf", "AllowInsecureEndpoint=maybe\n", "@/insecure-bad.conf:1: AllowInsecureEndpoint is yes or no");

	/* a reload must not change what instances and state are known by */
	{
		const char *base = "ClusterName=c1\nProvider=aws Regions=us-east-1,us-west-2 ImageId=ami-1\n";
		struct burst_config *a = load("id0.conf", base, &err), *b;
		char why[600];
		size_t i;
		const struct { const char *name, *text, *frag; } cases[] = {
			{ "id-same.conf", "ClusterName=c1\nProvider=aws Regions=us-west-2,us-east-1 ImageId=ami-2\nProvider=more Type=aws\n", NULL },
			{ "id-cluster.conf", "ClusterName=c2\nProvider=aws Regions=us-east-1,us-west-2\n", "ClusterName changed from c1 to c2" },
			{ "id-region.conf", "ClusterName=c1\nProvider=aws Regions=us-east-1\n", "Provider aws: region us-west-2 was dropped" },
			{ "id-prov.conf", "ClusterName=c1\nProvider=other Type=aws\n", "Provider aws was removed" },
			{ "id-listen.conf", "ClusterName=c1\nJoinListen=10.9.9.9\nProvider=aws Regions=us-east-1,us-west-2\n", "JoinListen= changed" },
			{ "id-type.conf", "ClusterName=c1\nProvider=aws Type=local Bridge=b0 Address=10.9.0.1/24 Regions=us-east-1,us-west-2\n",
			  "Provider aws changed Type from aws to local" },
			{ "id-port.conf", "ClusterName=c1\nJoinPort=7000\nProvider=aws Regions=us-east-1,us-west-2\n", "JoinPort changed from 6830 to 7000" },
			{ "id-state.conf", "ClusterName=c1\nStateDir=/srv/b\nProvider=aws Regions=us-east-1,us-west-2\n", "StateDir changed" },
		};
		for (i = 0; a && i < sizeof(cases) / sizeof(cases[0]); i++) {
			const char *r;
			b = load(cases[i].name, cases[i].text, &err);
			r = b ? config_identity_change(a, b, why, sizeof(why)) : "not loaded";
			if (!cases[i].frag)
				ok(b && r == NULL, "%s: adding a provider or changing an image is no identity change (%s)",
				   cases[i].name, r ? r : "none");
			else
				ok(b && r && strstr(r, cases[i].frag), "%s: %s", cases[i].name, r ? r : "no change found");
			config_free(b);
		}
		ok(a != NULL, "the running configuration loads");
		config_free(a);
	}

	/* config_default_path: explicit, BURST_CONF, beside SLURM_CONF, /etc */
	unsetenv("BURST_CONF");
	setenv("SLURM_CONF", "/opt/slurm/etc/slurm.conf", 1);
	is_str(config_default_path(NULL), "/opt/slurm/etc/burst.conf", "beside slurm.conf");
	setenv("BURST_CONF", "/x/burst.conf", 1);
	is_str(config_default_path(NULL), "/x/burst.conf", "BURST_CONF wins");
	is_str(config_default_path("/y.conf"), "/y.conf", "explicit wins");
	unsetenv("BURST_CONF");
	unsetenv("SLURM_CONF");
	is_str(config_default_path(NULL), "/etc/slurm/burst.conf", "the default");

	/* SchedulerHints= after Accelerators= on one line: each list its own
	 * (the hints freed the accelerators and left them dangling) */
	{
		burst_err_t herr;
		struct burst_config *c2 = load("hints.conf",
			"Provider=os Type=openstack Accelerators=a100:A100-80GB SchedulerHints=group:g1\n", &herr);
		ok(c2 != NULL, "Accelerators= then SchedulerHints= parses");
		if (c2) {
			is_num(c2->providers[0].naccelerators, 1, "... the accelerator is kept");
			is_str(c2->providers[0].accelerators[0], "a100:A100-80GB", "... as given");
			is_num(c2->providers[0].nscheduler_hints, 1, "... and the hint");
			is_str(c2->providers[0].scheduler_hints[0], "group:g1", "... as given");
		}
		config_free(c2);
	}
	/* an absolute Acceptance= then a relative one: refused, and the first
	 * path freed once (it was freed again with the refused line) */
	refused("acc2.conf", "NodeSet=ns Nodes=b[1-2] InstanceTypes=t3.micro Acceptance=/etc/a.conf Acceptance=rel.conf\n",
		"Acceptance must be the absolute path of an acceptance.conf, not 'rel.conf'");
	key_table();
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}

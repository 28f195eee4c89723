/*
 * test_decide_dir.c - burst_decide_dir, the SPANK plugin's decision, which
 * reads only the configured providers' catalogs: its answers and its errors
 * must be those of the whole catalog (catalog_load, config_apply_catalog,
 * burst_decide) for every shipped contract and for a spread of inline ones;
 * the catalogs of providers burst.conf does not use must not be read; and
 * where a part of the catalog could bind a contract otherwise than the
 * whole (an accelerator model it does not spell), the whole one decides.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decide.h"
#include "tap.h"

static char dir[] = "/var/tmp/test_decide_dir.XXXXXX";

static const char *top(void)
{
	const char *t = getenv("BURST_TOP_SRCDIR");

	return t ? t : BURST_ABS_SRCDIR;
}

static void put(const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static struct burst_config *load(const char *path)
{
	burst_err_t err;
	struct burst_config *cfg = config_load(path, &err);

	if (!cfg)
		printf("# %s: %s\n", path, err.msg);
	return cfg;
}

/* What the plugin did before: the whole catalog, then burst.conf, then the decision. */
static int reference(const struct burst_config *cfg, const char *catdir, const char *arg,
		     struct burst_decision *d, int *stage, burst_err_t *err)
{
	struct catalog *cat = catalog_load_opts(catdir, CATALOG_NO_CHECKSUM, err);
	int rc = -1;

	memset(d, 0, sizeof(*d));
	if (!cat) {
		*stage = BURST_DECIDE_CATALOG;
		return -1;
	}
	if (config_apply_catalog(cfg, cat, err) < 0)
		*stage = BURST_DECIDE_APPLY;
	else if (burst_decide(cfg, cat, arg, d, err) < 0)
		*stage = BURST_DECIDE_CONTRACT;
	else
		rc = 0;
	catalog_free(cat);
	return rc;
}

static int partial_wins;   /* decisions made without the whole catalog */

/* burst_decide_dir agrees with the reference on arg; returns its "whole". */
static int same(const char *what, const struct burst_config *cfg, const char *catdir, const char *arg)
{
	struct burst_decision want, got;
	burst_err_t werr, gerr;
	int wrc, grc, wstage = 0, gstage = -1, whole = -1;

	memset(&werr, 0, sizeof(werr));
	memset(&gerr, 0, sizeof(gerr));
	wrc = reference(cfg, catdir, arg, &want, &wstage, &werr);
	grc = burst_decide_dir(cfg, catdir, arg, &got, &gstage, &whole, &gerr);
	ok(wrc == grc, "%s '%s': %s as with the whole catalog", what, arg, wrc ? "refused" : "decided");
	if (wrc == 0 && grc == 0) {
		is_str(got.nodesets, want.nodesets, "%s '%s': node sets", what, arg);
		is_str(got.partitions, want.partitions, "%s '%s': partitions", what, arg);
		is_str(got.features, want.features, "%s '%s': features", what, arg);
		is_str(got.first, want.first, "%s '%s': first choice", what, arg);
		is_str(got.contract, want.contract, "%s '%s': contract", what, arg);
		is_str(got.name, want.name, "%s '%s': name", what, arg);
		if (!whole)
			partial_wins++;
	} else if (wrc && grc) {
		is_str(gerr.msg, werr.msg, "%s '%s': the same error", what, arg);
		ok(gstage == wstage, "%s '%s': at the same step (%d, %d)", what, arg, gstage, wstage);
		ok(whole == 1, "%s '%s': a refusal comes from the whole catalog", what, arg);
	}
	if (wrc == 0)
		burst_decision_free(&want);
	if (grc == 0)
		burst_decision_free(&got);
	return whole;
}

static const char *const inline_contracts[] = {
	"accelerator=A100",
	"accelerator=A100-40GB",
	"accelerator=T4 accelerator_count>=1",
	"accelerator_manufacturer!=NVIDIA accelerator_count>=1",
	"accelerator_count>=8 rank=fit",
	"accelerator_architecture>=hopper",
	"processor_manufacturer=AMD node_vcpus_count>=16",
	"processor_isa=aarch64 node_memory_size>=64G rank=fit",
	"region=us-east-1 node_vcpus_count>=8",
	"region=us-central1 node_vcpus_count>=8",
	"machinetype=m5.large",
	"node_vcpus_count>=100000",
	"accelerator=B9000",
	"processor_manufacturer=Intell",
	"bogus_key=1",
	"node_vcpus_count>=",
	"",
	"nosuch",
	"gpu4-amper",
	NULL,
};

static void every_contract(const char *what, const struct burst_config *cfg, const char *catdir)
{
	size_t i;

	for (i = 0; i < cfg->ncontracts; i++)
		same(what, cfg, catdir, cfg->contracts[i].name);
	for (i = 0; inline_contracts[i]; i++)
		same(what, cfg, catdir, inline_contracts[i]);
}

static const char header[] =
	"instance_type,vcpus,memory_mib,accelerator_count,accelerator,accelerator_type,"
	"accelerator_manufacturer,accelerator_architecture,accelerator_memory_mib,processor,"
	"processor_manufacturer,processor_microarchitecture,processor_isa,storage_type,storage_gib,"
	"network_gbps,source\n";

/*
 * config_candidates sorts the list of node sets that select the same
 * candidates once (the example's three aws node sets): they must be the
 * candidates it makes when every one of them is sorted on its own, which
 * a node set with another list (InstanceTypes=) between each two forces.
 */
static void shared_sort(const char *catdir)
{
	static const char *const sets[] = {
		"NodeSet=gpu4 Nodes=g4-[1-2] Partition=p Providers=aws Constraint=\"accelerator_type=GPU accelerator_count=4\"\n",
		"NodeSet=gpu1 Nodes=g1-[1-2] Partition=p Providers=aws Constraint=\"accelerator_type=GPU accelerator_count=1\"\n",
		"NodeSet=big Nodes=a-[1-2] Partition=p Providers=aws Constraint=\"node_vcpus_count>=8\"\n",
		"NodeSet=cpu64 Nodes=c-[1-2] Partition=p Constraint=\"accelerator_count=0 node_vcpus_count>=64\"\n",
	};
	const char *head = "ClusterName=t\nProvider=aws Type=aws Regions=us-east-1,us-west-2\n";
	char together[4096], apart[4096], path[1024];
	struct burst_config *cfg[2];
	struct catalog *cat[2];
	struct candset *cs[2] = { NULL, NULL };
	burst_err_t err;
	size_t i, k, n = 0, same = 0;

	snprintf(together, sizeof(together), "%s", head);
	snprintf(apart, sizeof(apart), "%s", head);
	for (i = 0; i < sizeof(sets) / sizeof(*sets); i++) {
		char brk[256];
		snprintf(together + strlen(together), sizeof(together) - strlen(together), "%s", sets[i]);
		snprintf(brk, sizeof(brk), "NodeSet=brk%zu Nodes=b%zu-[1-2] Partition=p InstanceTypes=m5.large\n", i, i);
		snprintf(apart + strlen(apart), sizeof(apart) - strlen(apart), "%s%s", brk, sets[i]);
	}
	put("together.conf", together);
	put("apart.conf", apart);
	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, k ? "apart.conf" : "together.conf");
		burst_err_clear(&err);
		cfg[k] = load(path);
		cat[k] = catalog_load_opts(catdir, CATALOG_NO_CHECKSUM, &err);
		if (cfg[k] && cat[k] && config_apply_catalog(cfg[k], cat[k], &err) == 0)
			cs[k] = config_candidates(cfg[k], cat[k], &err);
		if (!cs[k])
			printf("# %s: cfg %d cat %d: %s\n", path, !!cfg[k], !!cat[k], err.msg);
	}
	ok(cs[0] && cs[1], "the node sets together and apart make candidates");
	if (cs[0] && cs[1]) {
		/* apart, node set i is 2i+1 (brk i before it); in name order still */
		for (i = 0; i < cs[1]->n; i++) {
			const struct candidate *b = &cs[1]->c[i], *a;
			if (b->nodeset % 2 == 0)
				continue;
			if (n >= cs[0]->n)
				break;
			a = &cs[0]->c[n++];
			if (!strcmp(catalog_str(cat[0], a->type->name), catalog_str(cat[1], b->type->name)) &&
			    (a->region < 0 ? b->region < 0 :
			     b->region >= 0 && !strcmp(catalog_str(cat[0], a->region), catalog_str(cat[1], b->region))) &&
			    a->nodeset * 2 + 1 == b->nodeset &&
			    !memcmp(&a->ondemand, &b->ondemand, sizeof(double)) &&
			    !memcmp(&a->spot, &b->spot, sizeof(double)))
				same++;
		}
		ok(n == cs[0]->n && same == n && n > 0,
		   "together, the node sets make the candidates they make apart (%zu of %zu the same)",
		   same, cs[0]->n);
	}
	for (k = 0; k < 2; k++) {
		candset_free(cs[k]);
		catalog_free(cat[k]);
		config_free(cfg[k]);
	}
}

int main(void)
{
	char path[1024], shipped[1024], small[1024];
	struct burst_config *cfg;
	struct burst_decision d;
	burst_err_t err;
	int stage, whole, before;
	char *text;

	if (!mkdtemp(dir))
		return 1;
	snprintf(shipped, sizeof(shipped), "%s/share/catalog", top());

	/* the shipped example: one aws provider, its three contracts */
	snprintf(path, sizeof(path), "%s/etc/burst.conf.example", top());
	cfg = load(path);
	ok(cfg != NULL, "etc/burst.conf.example loads");
	if (!cfg)
		return done_testing();
	before = partial_wins;
	every_contract("example", cfg, shipped);
	ok(partial_wins - before >= (int)cfg->ncontracts,
	   "every named contract of the example is decided from the aws catalog alone (%d)",
	   partial_wins - before);
	config_free(cfg);

	/* two providers, gcp's catalog by another provider name; and a local one */
	put("two.conf",
	    "ClusterName=t\n"
	    "AllowInlineContracts=yes\n"
	    "Provider=here Type=local Bridge=br9 Address=10.77.0.1/24\n"
	    "Provider=g Type=local Catalog=GCP Regions=us-central1\n"
	    "Provider=a Type=local Catalog=aws Regions=us-east-1\n"
	    "Contract=gpu accelerator_count>=1 rank=price\n"
	    "Contract=cpu node_vcpus_count>=32 accelerator_count=0\n"
	    "Contract=tiny node_vcpus_count>=1 accelerator_count=0 rank=fit\n"
	    "InstanceType=big.local Provider=a node_vcpus_count=512 node_memory_size=4T accelerator_count=0\n"
	    "Price=m5.large Provider=a Region=us-east-1 OnDemand=0.01\n"
	    "NodeSet=g Nodes=g-[1-4] Partition=gp Providers=g Constraint=\"node_vcpus_count>=2\"\n"
	    "NodeSet=a Nodes=a-[1-4] Partition=ap Providers=a InstanceTypes=m5.large,p4d.24xlarge,big.local\n"
	    "NodeSet=h Nodes=h-1 Partition=hp Providers=here InstanceTypes=local.host\n");
	snprintf(path, sizeof(path), "%s/two.conf", dir);
	cfg = load(path);
	ok(cfg != NULL, "a burst.conf with gcp, aws and local providers loads");
	if (cfg) {
		before = partial_wins;
		every_contract("three providers", cfg, shipped);
		ok(partial_wins - before >= (int)cfg->ncontracts,
		   "their named contracts are decided without the whole catalog (%d)", partial_wins - before);
		config_free(cfg);
	}

	/* local only (bench/spank-overhead's): no catalog file is read at all */
	put("local.conf",
	    "ClusterName=t\n"
	    "Provider=local Bridge=br9 Address=10.77.0.1/24\n"
	    "Contract=here node_vcpus_count>=1 accelerator_count=0\n"
	    "NodeSet=local Nodes=burst-1 Partition=burst InstanceTypes=local.host\n");
	snprintf(path, sizeof(path), "%s/local.conf", dir);
	cfg = load(path);
	ok(cfg != NULL, "a local-only burst.conf loads");
	if (cfg) {
		every_contract("local", cfg, shipped);
		config_free(cfg);
	}

	/*
	 * A catalog directory with a broken file of a provider burst.conf does
	 * not use: the decision does not read it; a refusal, made over the
	 * whole catalog, reports it as before.
	 */
	if (mkdir(strcat(strcpy(small, dir), "/cat"), 0755) < 0)
		return 1;
	snprintf(path, sizeof(path), "%s/tests/fixtures/catalog-small/alpha.csv", top());
	text = tap_slurp(path, NULL);
	put("cat/alpha.csv", text);
	free(text);
	snprintf(path, sizeof(path), "%s/tests/fixtures/catalog-small/alpha-prices.csv", top());
	text = tap_slurp(path, NULL);
	put("cat/alpha-prices.csv", text);
	free(text);
	{
		char beta[2048];
		snprintf(beta, sizeof(beta), "%s%s", header, "gpu.x,8,oops,0,,,,,,,,,,,,,test\n");
		put("cat/beta.csv", beta);
	}
	put("alpha.conf",
	    "ClusterName=t\n"
	    "Provider=alpha Type=local Catalog=alpha Regions=r1\n"
	    "Contract=cheap node_vcpus_count>=2\n"
	    "NodeSet=cpu Nodes=c-[1-4] Partition=batch Constraint=\"node_vcpus_count>=1\"\n");
	snprintf(path, sizeof(path), "%s/alpha.conf", dir);
	cfg = load(path);
	ok(cfg != NULL, "alpha.conf loads");
	if (cfg) {
		memset(&err, 0, sizeof(err));
		ok(burst_decide_dir(cfg, small, "cheap", &d, &stage, &whole, &err) == 0 && !whole,
		   "the broken catalog of a provider not configured is not read: 'cheap' decided (%s)",
		   err.msg);
		if (!whole)
			burst_decision_free(&d);
		ok(same("broken beta", cfg, small, "nosuch") == 1, "a refusal reads the whole catalog");
		memset(&err, 0, sizeof(err));
		burst_decide_dir(cfg, small, "nosuch", &d, &stage, &whole, &err);
		has_str(err.msg, "beta.csv:2", "and names the broken file's line, as before");
		ok(stage == BURST_DECIDE_CATALOG, "at the catalog step");
		config_free(cfg);
	}

	/*
	 * An accelerator model spelled only in the catalog of a provider not
	 * configured: the whole catalog takes 'X1' for that model, not for
	 * every X1-* (alpha's X1-big); so the whole catalog must decide.
	 */
	{
		char a[2048], b[2048];
		snprintf(a, sizeof(a), "%s%s", header,
			 "gpu.big,16,65536,1,X1-big,GPU,Acme,ampere,16384,Xeon X,Intel,icelake,x86_64,,,10,test\n"
			 "cpu.one,2,4096,0,,,,,,Xeon X,Intel,icelake,x86_64,,,10,test\n");
		put("cat/alpha.csv", a);
		snprintf(b, sizeof(b), "%s%s", header,
			 "gpu.x,8,32768,1,X1,GPU,Acme,ampere,16384,Xeon X,Intel,icelake,x86_64,,,10,test\n");
		put("cat/beta.csv", b);
		snprintf(path, sizeof(path), "%s/cat/alpha-prices.csv", dir);
		unlink(path);
	}
	put("model.conf",
	    "ClusterName=t\n"
	    "AllowInlineContracts=yes\n"
	    "Provider=alpha Type=local Catalog=alpha\n"
	    "NodeSet=any Nodes=c-[1-4] Partition=batch Constraint=\"node_vcpus_count>=1\"\n");
	snprintf(path, sizeof(path), "%s/model.conf", dir);
	cfg = load(path);
	ok(cfg != NULL, "model.conf loads");
	if (cfg) {
		ok(same("model", cfg, small, "accelerator=X1") == 1,
		   "'accelerator=X1', a model only beta spells: decided over the whole catalog");
		ok(same("model", cfg, small, "accelerator=X1-big") == 0,
		   "'accelerator=X1-big', which alpha spells: from alpha's catalog alone");
		ok(same("model", cfg, small, "accelerator_count=0") == 0,
		   "'accelerator_count=0': from alpha's catalog alone");
		config_free(cfg);
	}

	shared_sort(shipped);

	{
		const char *files[] = { "together.conf", "apart.conf", "two.conf", "local.conf", "alpha.conf", "model.conf",
					"cat/alpha.csv", "cat/alpha-prices.csv", "cat/beta.csv", NULL };
		size_t i;
		for (i = 0; files[i]; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/cat", dir);
		rmdir(path);
		rmdir(dir);
	}
	return done_testing();
}

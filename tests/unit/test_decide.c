/*
 * test_decide.c - the one decision path of a --cloud-contract value
 * (lib/core/decide.c), shared by the SPANK plugin, burstctl resolve and the
 * agent's per-job ranking: names and inline expressions, the refusals, the
 * routing, and the ranking kept for the agent (over candidates it passes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decide.h"
#include "tap.h"

static char dir[] = "/var/tmp/test_decide.XXXXXX";

static struct burst_config *load(const char *name, const char *text)
{
	char path[512];
	burst_err_t err;
	struct burst_config *cfg;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	cfg = config_load(path, &err);
	if (!cfg)
		printf("# %s\n", err.msg);
	unlink(path);
	return cfg;
}

/* The instance types of rk's ranking in node set nsi, best first. */
static const char *order_in(const struct burst_config *cfg, const struct catalog *cat,
			    const struct burst_ranking *rk, int nsi)
{
	static char buf[512];
	size_t i, l = 0;

	(void)cfg;
	buf[0] = '\0';
	for (i = 0; i < rk->res.n; i++) {
		const struct candidate *c = &rk->cs->c[rk->res.m[i].cand];
		if (c->nodeset == nsi)
			l += (size_t)snprintf(buf + l, sizeof(buf) - l, "%s%s", l ? " " : "",
					      catalog_str(cat, c->type->name));
	}
	return buf;
}

int main(void)
{
	const char *top = getenv("BURST_TOP_SRCDIR");
	char catdir[1024];
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct burst_decision d;
	struct burst_ranking rk;
	const struct cfg_contract *named;
	struct contract *inl;
	burst_err_t err;

	if (!mkdtemp(dir))
		return 1;
	snprintf(catdir, sizeof(catdir), "%s/tests/fixtures/catalog-small", top ? top : BURST_ABS_SRCDIR);
	cat = catalog_load(catdir, &err);
	ok(cat != NULL, "the small catalog loads");
	/* cpu.small $0.10/h (2 vCPU), cpu.big $2.50/h (64), cpu.arm $2.00/h (64, aarch64) */
	cfg = load("d.conf",
		   "ClusterName=t\n"
		   "Provider=alpha Type=local Catalog=alpha Regions=r1\n"
		   "Contract=cheap node_vcpus_count>=2\n"
		   "Contract=snug node_vcpus_count>=2 rank=fit\n"
		   "Contract=x86 node_vcpus_count>=32 processor_isa=x86_64\n"
		   "Contract=huge node_vcpus_count>=128\n"
		   "NodeSet=cpu Nodes=c-[1-4] Partition=batch InstanceTypes=cpu.big,cpu.arm\n"
		   "NodeSet=small Nodes=s-[1-2] Partition=tiny InstanceTypes=cpu.small\n");
	ok(cfg != NULL, "the burst.conf loads");
	if (!cat || !cfg)
		return done_testing();
	ok(config_apply_catalog(cfg, cat, &err) == 0, "its catalog applies");
	cs = config_candidates(cfg, cat, &err);
	ok(cs != NULL, "its candidates");

	/* a named contract: routing and ranking */
	ok(burst_decide_ranked(cfg, cat, cs, "cheap", 0, &d, &rk, &err) == 0, "cheap is decided");
	is_str(d.name, "cheap", "... by name");
	is_str(d.nodesets, "small,cpu", "... to node sets small then cpu (best first)");
	is_str(d.partitions, "tiny,batch", "... partitions tiny,batch");
	is_str(d.features, "small|cpu", "... features small|cpu");
	ok(d.first && !strncmp(d.first, "alpha/cpu.small@r1 $0.1000/h", 28), "... first choice cpu.small: %s", d.first);
	ok(rk.cs == cs && rk.named && !strcmp(rk.named->name, "cheap"), "the ranking is over the candidates given");
	is_str(order_in(cfg, cat, &rk, 0), "cpu.arm cpu.big", "in node set cpu, cheap (price) ranks cpu.arm before cpu.big");
	burst_ranking_free(&rk);
	burst_decision_free(&d);
	ok(burst_decide_ranked(cfg, cat, cs, "x86", 0, &d, &rk, &err) == 0, "x86 is decided");
	is_str(order_in(cfg, cat, &rk, 0), "cpu.big", "in node set cpu, x86 leaves only cpu.big");
	is_str(d.nodesets, "cpu", "... and routes to cpu alone");
	burst_ranking_free(&rk);
	burst_decision_free(&d);

	/* an inline one (allowed by default), ranked by fit */
	ok(burst_decide_ranked(cfg, cat, cs, "node_vcpus_count>=2 rank=fit", 0, &d, &rk, &err) == 0,
	   "an inline contract is decided");
	ok(d.name == NULL && rk.named == NULL && rk.inl != NULL, "... with no name");
	burst_ranking_free(&rk);
	burst_decision_free(&d);

	/* no node set satisfies: 1, with the nearest misses kept */
	ok(burst_decide_ranked(cfg, cat, cs, "huge", 0, &d, &rk, &err) == 1, "huge: nothing satisfies (1)");
	ok(strstr(err.msg, "no burst node set can satisfy the contract 'huge'") != NULL, "... saying so: %s", err.msg);
	ok(rk.res.n == 0 && rk.res.nmiss > 0 && rk.c != NULL, "... with its near misses kept");
	burst_ranking_free(&rk);
	burst_decision_free(&d);
	ok(burst_decide(cfg, cat, "huge", &d, &err) == -1, "burst_decide: -1 for the same");
	burst_decision_free(&d);

	/* refusals: -1 */
	ok(burst_decide_ranked(cfg, cat, cs, "chaep", 0, &d, &rk, &err) == -1 &&
	   strstr(err.msg, "no contract named 'chaep'; did you mean 'cheap'?"), "an unknown name: %s", err.msg);
	burst_ranking_free(&rk);
	ok(burst_decide_ranked(cfg, cat, cs, "node_vcpus_count>=", 0, &d, &rk, &err) == -1, "a bad expression is refused");
	burst_ranking_free(&rk);
	ok(burst_contract_of(cfg, "", &named, &inl, &err) == NULL && strstr(err.msg, "needs a contract name"),
	   "an empty value: %s", err.msg);

	/* the same answers without candidates given (the plugin's way) */
	ok(burst_decide(cfg, cat, "snug", &d, &err) == 0, "burst_decide snug");
	ok(d.first && !strncmp(d.first, "alpha/cpu.small@r1", 18), "... first choice cpu.small: %s", d.first);
	burst_decision_free(&d);
	ok(burst_decide_ranked(cfg, cat, NULL, "cheap", 0, &d, &rk, &err) == 0 && rk.own_cs != NULL &&
	   !strcmp(order_in(cfg, cat, &rk, 0), "cpu.arm cpu.big"), "made candidates rank the same");
	burst_ranking_free(&rk);
	burst_decision_free(&d);
	config_free(cfg);

	/* AllowInlineContracts=no: the names are offered instead */
	cfg = load("noinline.conf",
		   "ClusterName=t AllowInlineContracts=no\n"
		   "Provider=alpha Type=local Catalog=alpha Regions=r1\n"
		   "Contract=cheap node_vcpus_count>=2\n"
		   "NodeSet=cpu Nodes=c-[1-4] InstanceTypes=cpu.big,cpu.arm\n");
	ok(cfg != NULL, "a burst.conf without inline contracts loads");
	if (cfg) {
		ok(burst_contract_of(cfg, "node_vcpus_count>=2", &named, &inl, &err) == NULL &&
		   strstr(err.msg, "inline contracts are not allowed on this cluster (AllowInlineContracts=no in ") &&
		   strstr(err.msg, "use a named one: cheap"), "an inline contract is refused: %s", err.msg);
		ok(burst_contract_of(cfg, "cheap", &named, &inl, &err) != NULL && named && inl == NULL,
		   "a named one is taken");
		config_free(cfg);
	}
	candset_free(cs);

	/* two providers of one catalog (two accounts of one cloud): each
	 * candidate is its own provider's, by the Regions that made it */
	cfg = load("two.conf",
		   "ClusterName=t\n"
		   "Provider=east Type=local Catalog=alpha Regions=r1\n"
		   "Provider=west Type=local Catalog=alpha Regions=r2,r1\n"
		   "NodeSet=cpu Nodes=c-[1-4] InstanceTypes=cpu.small Providers=east,west\n");
	ok(cfg != NULL, "a burst.conf with two providers of one catalog loads");
	cs = cfg ? config_candidates(cfg, cat, &err) : NULL;
	ok(cs != NULL, "... its candidates");
	if (cs) {
		size_t i, east_r1 = 0, west_r1 = 0, west_r2 = 0, other = 0;
		for (i = 0; i < cs->n; i++) {
			const struct candidate *c = &cs->c[i];
			const char *reg = c->region >= 0 ? catalog_str(cat, c->region) : "?";
			const char *pv = c->provider >= 0 ? cfg->providers[c->provider].name : "none";
			if (!strcmp(pv, "east") && !strcmp(reg, "r1"))
				east_r1++;
			else if (!strcmp(pv, "west") && !strcmp(reg, "r1"))
				west_r1++;
			else if (!strcmp(pv, "west") && !strcmp(reg, "r2"))
				west_r2++;
			else
				other++;
		}
		ok(cs->n == 3 && east_r1 == 1 && west_r1 == 1 && west_r2 == 1 && other == 0,
		   "r1 is a candidate of each, r2 only west's (%zu candidates: east@r1 %zu, west@r1 %zu, west@r2 %zu, "
		   "other %zu)", cs->n, east_r1, west_r1, west_r2, other);
		/* what burstctl resolve and the decision's first choice show: the
		 * configured provider, not the catalog's (both "alpha") */
		for (i = 0; i < cs->n; i++) {
			const struct candidate *c = &cs->c[i];
			char name[256], want[256];
			snprintf(want, sizeof(want), "%s/cpu.small@%s", c->provider >= 0 ? cfg->providers[c->provider].name : "?",
				 c->region >= 0 ? catalog_str(cat, c->region) : "?");
			is_str(candidate_name(cat, c, name, sizeof(name)), want, "candidate %zu is named by its provider", i);
		}
		candset_free(cs);
	}
	config_free(cfg);
	catalog_free(cat);
	rmdir(dir);
	return done_testing();
}

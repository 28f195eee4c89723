/*
 * test_resolver.c - matching, ranking and explanations over the small
 * fixture catalog (tests/fixtures/catalog-small).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "contract.h"
#include "resolver.h"
#include "strutil.h"
#include "tap.h"

static struct catalog *cat;
static struct candset *cs;

/* The ranked result as "type@region type@region ..." */
static char *ranked(const char *text, int flags, struct resolution *keep)
{
	burst_err_t err;
	struct contract *c = contract_parse(text, &err);
	struct resolution r;
	struct strbuf sb;
	size_t i;

	if (!c) {
		diag("parse failed: %s", err.msg);
		return xstrdup("PARSE-ERROR");
	}
	resolver_run(cat, cs, c, flags, &r, &err);
	sb_init(&sb);
	for (i = 0; i < r.n; i++) {
		const struct candidate *cd = &cs->c[r.m[i].cand];
		sb_addf(&sb, "%s%s@%s", i ? " " : "", catalog_str(cat, cd->type->name),
			cd->region >= 0 ? catalog_str(cat, cd->region) : "?");
	}
	if (keep)
		*keep = r;
	else
		resolution_free(&r);
	contract_free(c);
	return sb_take(&sb);
}

static const struct {
	const char *contract;
	const char *want;     /* ranked list */
} cases[] = {
	/* architecture: '=' exactly, '>=' that or newer, only within a family */
	{ "accelerator_count>=4 accelerator_architecture=ampere",
	  "gpu.a10g.4@r1 gpu.a100.8@r1 gpu.a100x.8@r1" },
	{ "accelerator_count=4 accelerator_architecture=ampere node_memory_size<=256G",
	  "gpu.a10g.4@r1" },
	{ "accelerator_architecture>=ampere",
	  "gpu.l4.4@r1 gpu.l4.4@r2 gpu.a10g.4@r1 gpu.a100.8@r1 gpu.a100x.8@r1 gpu.h100.8@?" },
	{ "accelerator_architecture>ampere", "gpu.l4.4@r1 gpu.l4.4@r2 gpu.h100.8@?" },
	{ "accelerator_architecture<ampere", "gpu.t4@r1" },
	{ "accelerator_architecture<=turing", "gpu.t4@r1" },
	{ "accelerator_architecture>=cdna", "gpu.mi.2@r1" },
	{ "accelerator_architecture in {hopper, turing}", "gpu.t4@r1 gpu.h100.8@?" },
	/* != is true of types without accelerators, never of unknown values */
	{ "accelerator_architecture!=ampere node_vcpus_count>=64",
	  "cpu.arm@r1 cpu.big@r1 gpu.h100.8@?" },
	/* zero and non-powers of two are ordinary numbers */
	{ "accelerator_count=0 node_vcpus_count>=64", "cpu.arm@r1 cpu.big@r1" },
	{ "accelerator_count=2", "gpu.mi.2@r1 gpu.unknown@?" },
	{ "node_vcpus_count=48", "gpu.l4.4@r1 gpu.l4.4@r2 gpu.a10g.4@r1" },
	{ "node_vcpus_count>47 node_vcpus_count<49", "gpu.l4.4@r1 gpu.l4.4@r2 gpu.a10g.4@r1" },
	{ "accelerator_memory_size>=80G", "gpu.a100x.8@r1 gpu.h100.8@?" },
	{ "accelerator_memory_size=40G", "gpu.a100.8@r1" },
	/* unknown catalog values never satisfy an assumption */
	{ "accelerator_memory_size>=1G accelerator_count=2", "gpu.mi.2@r1" },
	{ "processor_isa=x86_64 accelerator_count=2 processor!=EPYC", "" },
	/* in{} and names; A100 stands for every A100-* model */
	{ "accelerator in {T4, L4}", "gpu.t4@r1 gpu.l4.4@r1 gpu.l4.4@r2" },
	{ "accelerator=A100", "gpu.a100.8@r1 gpu.a100x.8@r1" },
	{ "accelerator=a100-80gb", "gpu.a100x.8@r1" },
	{ "accelerator!=A10G accelerator_count=4", "gpu.l4.4@r1 gpu.l4.4@r2" },
	{ "accelerator=B300", "" },
	{ "node_region=r2", "gpu.l4.4@r2" },
	{ "processor_isa=aarch64", "cpu.arm@r1" },
	{ "network_performance>=400G", "gpu.a100.8@r1 gpu.a100x.8@r1 gpu.h100.8@?" },
	/* ranking: price (known first), then least excess, then name */
	{ "accelerator_count>=1",
	  "gpu.t4@r1 gpu.l4.4@r1 gpu.l4.4@r2 gpu.mi.2@r1 gpu.a10g.4@r1 gpu.a100.8@r1 "
	  "gpu.a100x.8@r1 gpu.unknown@? gpu.h100.8@?" },
	/* ties on price and excess: by name */
	{ "node_vcpus_count=4", "tie.a@r1 tie.b@r1" },
	/* rank=fit: excess first */
	{ "accelerator_count>=4 rank=fit",
	  "gpu.l4.4@r1 gpu.l4.4@r2 gpu.a10g.4@r1 gpu.a100.8@r1 gpu.a100x.8@r1 gpu.h100.8@?" },
	/* prices: max_price, price_per_hour, spot */
	{ "max_price=0.5", "cpu.small@r1 tie.a@r1 tie.b@r1" },
	{ "price_per_hour>5 price_per_hour<6", "gpu.mi.2@r1 gpu.a10g.4@r1" },
	{ "spot=yes max_price=0.25", "cpu.small@r1 gpu.t4@r1" },
	/* with spot=yes only gpu.t4 has a known (spot) price; the rest rank by excess */
	{ "spot=yes accelerator_count>=1", "gpu.t4@r1 gpu.unknown@? gpu.mi.2@r1 gpu.a10g.4@r1 "
	  "gpu.l4.4@r1 gpu.l4.4@r2 gpu.a100.8@r1 gpu.a100x.8@r1 gpu.h100.8@?" },
	{ "node_provider=alpha accelerator_count=8 accelerator_architecture=hopper", "gpu.h100.8@?" },
	{ "node_provider=beta", "" },
};

int main(void)
{
	const char *top = getenv("BURST_TOP_SRCDIR");
	char dir[4096];
	burst_err_t err;
	size_t i;

	snprintf(dir, sizeof(dir), "%s/tests/fixtures/catalog-small", top ? top : ".");
	cat = catalog_load(dir, &err);
	if (!ok(cat != NULL, "fixture catalog loads"))
		return diag("%s", err.msg), done_testing();
	cs = candset_from_catalog(cat, NULL);
	ok(cs->n == cat->ntypes + 1, "one candidate per priced region, one for an unpriced type (%zu)", cs->n);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = ranked(cases[i].contract, 0, NULL);
		is_str(got, cases[i].want, "%s", cases[i].contract);
		free(got);
	}

	/* the ranking of equal-priced candidates is by excess: mi.2 (72) before a10g (120) */
	{
		struct resolution r;
		char *got = ranked("accelerator_count>=1 price_per_hour=5.672", RESOLVE_WHY, &r);
		is_str(got, "gpu.mi.2@r1 gpu.a10g.4@r1", "equal price: less excess first");
		is_num(r.m[0].excess, 32 + 32 + 8, "excess of gpu.mi.2 over accelerator_count>=1");
		is_num(r.m[1].excess, 48 + 48 + 24, "excess of gpu.a10g.4 over accelerator_count>=1");
		has_str(r.why, "least excess", "why names the excess");
		resolution_free(&r);
		free(got);
	}
	/* why the first won */
	{
		struct resolution r;
		char *got = ranked("accelerator_count>=4 accelerator_architecture=ampere", 0, &r);
		ok(r.why == NULL, "no why without RESOLVE_WHY");
		resolution_free(&r);
		free(got);
		got = ranked("accelerator_count>=4 accelerator_architecture=ampere", RESOLVE_WHY, &r);
		has_str(r.why, "alpha/gpu.a10g.4@r1 is the cheapest at $5.6720/h", "why: cheapest");
		has_str(r.why, "next is alpha/gpu.a100.8@r1 at $21.9600/h", "why: names the next");
		resolution_free(&r);
		free(got);
		got = ranked("node_vcpus_count=4", RESOLVE_WHY, &r);
		has_str(r.why, "first by name", "why: tie broken by name");
		resolution_free(&r);
		free(got);
		got = ranked("node_region=r2", RESOLVE_WHY, &r);
		has_str(r.why, "only candidate", "why: only one");
		resolution_free(&r);
		free(got);
	}
	/* --explain: near misses and their reasons */
	{
		struct resolution r;
		char *got = ranked("accelerator_count=4 accelerator_architecture=ampere node_memory_size<=256G",
				   RESOLVE_EXPLAIN, &r);
		bool l4 = false, a100 = false;
		for (i = 0; i < r.nmiss; i++) {
			const char *name = catalog_str(cat, cs->c[r.miss[i].cand].type->name);
			ok(r.miss[i].nfailed == 1, "near miss %s fails one assumption", name);
			if (!strcmp(name, "gpu.l4.4")) {
				l4 = true;
				has_str(r.miss[i].reason, "accelerator_architecture=ampere: ada is not ampere",
					"l4 excluded by architecture");
			}
			if (!strcmp(name, "gpu.a100.8"))
				a100 = true;
		}
		ok(l4, "gpu.l4.4 is a near miss");
		ok(!a100, "gpu.a100.8 fails two assumptions and is not a near miss");
		resolution_free(&r);
		free(got);

		got = ranked("accelerator_memory_size>=1G accelerator_count=2", RESOLVE_EXPLAIN, &r);
		for (i = 0; i < r.nmiss; i++)
			if (!strcmp(catalog_str(cat, cs->c[r.miss[i].cand].type->name), "gpu.unknown"))
				has_str(r.miss[i].reason, "unknown in the catalog", "unknown value explained");
		resolution_free(&r);
		free(got);

		got = ranked("accelerator_architecture>=ampere accelerator_count=2", RESOLVE_EXPLAIN, &r);
		for (i = 0; i < r.nmiss; i++) {
			const char *name = catalog_str(cat, cs->c[r.miss[i].cand].type->name);
			if (!strcmp(name, "gpu.mi.2"))
				has_str(r.miss[i].reason, "cdna2 (AMD) is not comparable with ampere (NVIDIA)",
					"other vendor's architecture explained");
			if (!strcmp(name, "gpu.unknown"))
				has_str(r.miss[i].reason, "architecture unknown", "unknown architecture explained");
		}
		resolution_free(&r);
		free(got);

		got = ranked("accelerator=H200", RESOLVE_EXPLAIN, &r);
		has_str(r.notes, "no catalog type has accelerator=H200", "a value no type has is noted");
		resolution_free(&r);
		free(got);
	}
	/* determinism: the same contract twice gives the same list */
	{
		char *a = ranked("node_vcpus_count>=1", 0, NULL);
		char *b = ranked("node_vcpus_count>=1", 0, NULL);
		is_str(a, b, "ranking is deterministic");
		free(a);
		free(b);
	}
	/* resolver_satisfies, used by the node-side check */
	{
		struct contract *c = contract_parse("accelerator_count>=4", &err);
		char reason[256] = "";
		struct candidate cd = cs->c[0];
		for (i = 0; i < cs->n; i++)
			if (!strcmp(catalog_str(cat, cs->c[i].type->name), "gpu.t4"))
				cd = cs->c[i];
		ok(!resolver_satisfies(cat, &cd, &c->as[0], reason, sizeof(reason)), "t4 has fewer than 4");
		is_str(reason, "accelerator_count>=4: has 1", "reason names the number it has");
		contract_free(c);
	}
	candset_free(cs);
	catalog_free(cat);
	return done_testing();
}

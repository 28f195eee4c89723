/*
 * test_resolver_diff.c - resolver_run (indexed) against
 * resolver_run_reference (every candidate, every assumption) over
 * thousands of random contracts: the shipped catalog, a catalog with
 * overrides, candidate sets of several node sets and regions, and a
 * catalog changed under an indexed candidate set. The outputs (ranked
 * list, prices, excess, why, notes, near misses and their reasons) must be
 * identical. Seeded: every run draws the same contracts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "catalog.h"
#include "contract.h"
#include "keys.h"
#include "resolver.h"
#include "strutil.h"
#include "tap.h"

static uint64_t rng = 0x5eed2026cafef00dULL;

static uint64_t next(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static size_t pick(size_t n)
{
	return n ? (size_t)(next() % n) : 0;
}

static bool chance(int percent)
{
	return (int)pick(100) < percent;
}

/* Everything a resolution says, doubles exactly. */
static char *dump(const struct resolution *r)
{
	struct strbuf sb;
	size_t i;

	sb_init(&sb);
	sb_addf(&sb, "n=%zu\n", r->n);
	for (i = 0; i < r->n; i++)
		sb_addf(&sb, "%zu %a %a\n", r->m[i].cand, r->m[i].price, r->m[i].excess);
	sb_addf(&sb, "why=%s\nnotes=%s\nnmiss=%zu\n", r->why ? r->why : "(null)",
		r->notes ? r->notes : "(null)", r->nmiss);
	for (i = 0; i < r->nmiss; i++)
		sb_addf(&sb, "%zu %zu %s\n", r->miss[i].cand, r->miss[i].nfailed, r->miss[i].reason);
	return sb_take(&sb);
}

/* ---- random contracts ---- */

static void add_number(struct strbuf *sb, const struct key_info *ki, double v)
{
	switch (ki->unit) {
	case UNIT_SIZE:
		if (v == 0)
			sb_addf(sb, "0");
		else if (fmod(v, 1024) == 0)
			sb_addf(sb, "%.0fK", v / 1024);
		else
			sb_addf(sb, "%.0fK", ceil(v / 1024));
		return;
	case UNIT_COUNT:
		sb_addf(sb, "%.0f", v < 0 ? 0 : floor(v));
		return;
	case UNIT_NET:
	case UNIT_PRICE: {
		char buf[64];
		snprintf(buf, sizeof(buf), "%.17g", v);
		if (strchr(buf, 'e'))
			snprintf(buf, sizeof(buf), "%.6f", v);
		sb_addf(sb, "%s", buf);
		return;
	}
	}
}

/* A value of feature key near what the candidates have: exactly one of
 * theirs, a neighbour, zero, a non-power of two, or an unknown name. */
static void add_value(struct strbuf *sb, const struct catalog *cat, const struct candset *cs,
		      const struct key_info *ki)
{
	const struct candidate *cd = &cs->c[pick(cs->n)];

	if (ki->kind == KIND_ARCH) {
		const char *const *names = arch_names();
		size_t n = 0;
		while (names[n])
			n++;
		if (cd->type->sid[KEY_ACC_ARCH] >= 0 && chance(50))
			sb_addf(sb, "%s", arch_at((size_t)cd->type->sid[KEY_ACC_ARCH])->name);
		else
			sb_addf(sb, "%s", names[pick(n)]);
		return;
	}
	if (ki->kind == KIND_STRING) {
		int id = ki->id == KEY_REGION ? cd->region : cd->type->sid[ki->id];
		const char *s = id >= 0 ? catalog_str(cat, id) : NULL;
		int r = (int)pick(10), tries;

		/* contracts cannot spell a value with a blank ("AMD EPYC 7R13") */
		for (tries = 0; s && strchr(s, ' ') && tries < 8; tries++) {
			cd = &cs->c[pick(cs->n)];
			id = ki->id == KEY_REGION ? cd->region : cd->type->sid[ki->id];
			s = id >= 0 ? catalog_str(cat, id) : NULL;
		}
		if (s && strchr(s, ' ')) {
			sb_addf(sb, "%.*s", (int)(strchr(s, ' ') - s), s);
			return;
		}

		if (r == 0 || !s)
			sb_addf(sb, "%s", r == 0 && chance(50) ? "none" : "nosuch-value");
		else if (r == 1 && ki->id == KEY_ACC_MODEL && strchr(s, '-'))
			sb_addf(sb, "%.*s", (int)(strchr(s, '-') - s), s);   /* "A100": every A100-* */
		else if (r == 2) {
			/* another spelling of the case: matching is case-insensitive */
			char buf[256];
			size_t i;
			snprintf(buf, sizeof(buf), "%s", s);
			for (i = 0; buf[i]; i++)
				if (buf[i] >= 'a' && buf[i] <= 'z')
					buf[i] = (char)(buf[i] - 'a' + 'A');
			sb_addf(sb, "%s", buf);
		} else
			sb_addf(sb, "%s", s);
		return;
	}
	{
		double v = ki->id == KEY_PRICE ? (chance(50) ? cd->ondemand : cd->spot)
					       : cd->type->num[ki->id];
		double unit = ki->unit == UNIT_SIZE ? 1073741824.0 : ki->unit == UNIT_PRICE ? 0.25 : 1;
		static const double odd[] = { 0, 1, 2, 3, 5, 6, 7, 12, 24, 48, 80, 96, 100, 192, 1000 };

		switch (isnan(v) ? 3 : (int)pick(6)) {
		case 0: case 1: break;                          /* exactly a catalog value */
		case 2: v = v / 2; break;
		case 3: v = odd[pick(sizeof(odd) / sizeof(odd[0]))] * unit; break;
		case 4: v = v + unit; break;
		default: v = v > unit ? v - unit : 0; break;
		}
		add_number(sb, ki, v);
	}
}

static char *random_contract(const struct catalog *cat, const struct candset *cs)
{
	static const char *const ops[] = { "=", "!=", "<", "<=", ">", ">=" };
	struct strbuf sb;
	size_t nas = pick(6), i, k;

	sb_init(&sb);
	for (i = 0; i < nas; i++) {
		const struct key_info *ki = key_info((enum key_id)pick(KEY_NFEATURES));

		sb_addf(&sb, "%s%s", sb.len ? (chance(50) ? " " : ",") : "", ki->name);
		if (chance(15)) {
			size_t nv = 1 + pick(4);
			sb_addf(&sb, " in {");
			for (k = 0; k < nv; k++) {
				if (k)
					sb_addf(&sb, ",");
				add_value(&sb, cat, cs, ki);
			}
			sb_addf(&sb, "}");
			continue;
		}
		if (ki->kind == KIND_STRING)
			sb_addf(&sb, "%s", chance(70) ? "=" : "!=");
		else
			sb_addf(&sb, "%s", ops[pick(6)]);
		add_value(&sb, cat, cs, ki);
	}
	if (chance(35))
		sb_addf(&sb, "%srank=%s", sb.len ? " " : "", chance(60) ? "fit" : "price");
	if (chance(15))
		sb_addf(&sb, "%sspot=%s", sb.len ? " " : "", chance(70) ? "yes" : "no");
	if (chance(15)) {
		sb_addf(&sb, "%smax_price=", sb.len ? " " : "");
		add_number(&sb, key_info(KEY_PRICE), (double)pick(4000) / 100.0);
	}
	return sb_take(&sb);
}

/* ---- comparing ---- */

static int flags_of(size_t i)
{
	static const int f[] = { 0, RESOLVE_WHY, RESOLVE_EXPLAIN, RESOLVE_EXPLAIN | RESOLVE_WHY };
	return f[i % 4];
}

/*
 * Resolve ncontracts random contracts over cs both ways; returns how many
 * differed (and shows the first few). *nparsed and *nmatched count the
 * contracts that parsed and those with at least one match.
 */
static size_t compare(const struct catalog *cat, const struct candset *cs, size_t ncontracts,
		      size_t *nparsed, size_t *nmatched)
{
	size_t i, ndiff = 0;

	*nparsed = *nmatched = 0;
	for (i = 0; i < ncontracts; i++) {
		char *text = random_contract(cat, cs), *a, *b;
		burst_err_t err;
		struct contract *c = contract_parse(text, &err);
		struct resolution ra, rb;
		int fa, fb;

		if (!c) {
			free(text);
			continue;
		}
		(*nparsed)++;
		fa = resolver_run(cat, cs, c, flags_of(i), &ra, &err);
		fb = resolver_run_reference(cat, cs, c, flags_of(i), &rb, &err);
		a = dump(&ra);
		b = dump(&rb);
		if (fa != fb || strcmp(a, b) != 0) {
			if (ndiff++ < 3)
				diag("differs (flags %d): %s\n# indexed:\n%s# reference:\n%s", flags_of(i),
				     text, a, b);
		}
		if (rb.n)
			(*nmatched)++;
		free(a);
		free(b);
		resolution_free(&ra);
		resolution_free(&rb);
		contract_free(c);
		free(text);
	}
	return ndiff;
}

/* Whether candset_sort's price orders are what resolver.h says: every
 * candidate once, by (price, index), unknown prices last. The reference
 * resolver reads them too, so compare() alone would not see them wrong. */
static bool price_orders_hold(const struct candset *cs, size_t *nties)
{
	bool *seen = calloc(cs->n ? cs->n : 1, sizeof(bool));
	size_t s, i;
	bool good = seen != NULL;

	for (s = 0; s < 2 && good; s++) {
		memset(seen, 0, (cs->n ? cs->n : 1) * sizeof(bool));
		for (i = 0; i < cs->n && good; i++) {
			size_t a = cs->by_price[s][i];
			good = a < cs->n && !seen[a];
			if (good)
				seen[a] = true;
			if (good && i > 0) {
				size_t b = cs->by_price[s][i - 1];
				double pa = s ? cs->c[a].spot : cs->c[a].ondemand;
				double pb = s ? cs->c[b].spot : cs->c[b].ondemand;
				pa = isnan(pa) ? INFINITY : pa;
				pb = isnan(pb) ? INFINITY : pb;
				good = pb < pa || (pb == pa && b < a);
				*nties += pb == pa;
			}
		}
	}
	free(seen);
	return good;
}

/* Whether the candidates are in the name order resolver.h says: provider,
 * type, region (unknown last), node set. */
static bool name_order_holds(const struct catalog *cat, const struct candset *cs)
{
	size_t i;

	for (i = 1; i < cs->n; i++) {
		const struct candidate *a = &cs->c[i - 1], *b = &cs->c[i];
		int r = strcmp(catalog_str(cat, a->type->provider), catalog_str(cat, b->type->provider));
		if (!r)
			r = strcmp(catalog_str(cat, a->type->name), catalog_str(cat, b->type->name));
		if (!r && (a->region < 0 || b->region < 0))
			r = (a->region < 0) - (b->region < 0);
		else if (!r)
			r = strcmp(catalog_str(cat, a->region), catalog_str(cat, b->region));
		if (!r)
			r = (a->nodeset > b->nodeset) - (a->nodeset < b->nodeset);
		if (r > 0)
			return false;
	}
	return true;
}

static void check(const struct catalog *cat, const struct candset *cs, size_t ncontracts,
		  const char *what)
{
	size_t nparsed, nmatched, ndiff = compare(cat, cs, ncontracts, &nparsed, &nmatched);
	size_t nties = 0;
	bool held = price_orders_hold(cs, &nties);

	ok(name_order_holds(cat, cs), "%s: the candidates are in name order", what);

	ok(held && nties > 0,
	   "%s: the price orders are by price then name order, unknown last (%zu ties)", what, nties);
	ok(ndiff == 0, "%s: %zu random contracts (%zu with matches) resolve identically (%zu differ)",
	   what, nparsed, nmatched, ndiff);
	/* the draw must exercise both empty and non-empty results */
	ok(nparsed > ncontracts / 2 && nmatched > nparsed / 10 && nmatched < nparsed,
	   "%s: the draw is broad (%zu parsed, %zu matched)", what, nparsed, nmatched);
}

/* ---- changing a catalog as burst.conf overrides do ---- */

static double random_num(const struct catalog *cat, enum key_id key)
{
	const struct cat_type *t = &cat->types[pick(cat->ntypes)];
	const struct key_info *ki = key_info(key);
	double unit = ki->unit == UNIT_SIZE ? 1073741824.0 : 1;

	switch (pick(5)) {
	case 0: return NAN;
	case 1: return 0;
	case 2: return (double)(1 + pick(200)) * unit;
	default: return t->num[key];
	}
}

static int random_id(struct catalog *cat, enum key_id key)
{
	const struct cat_type *t = &cat->types[pick(cat->ntypes)];

	switch (pick(5)) {
	case 0: return CATALOG_UNKNOWN;
	case 1: return catalog_intern(cat, chance(50) ? "override-value" : "none");
	default: return t->sid[key];
	}
}

/* Change n random types (and add a few), the way config_apply_catalog does,
 * then catalog_index. */
static void override(struct catalog *cat, size_t n)
{
	size_t i, k;

	for (i = 0; i < 5; i++) {
		char name[64];
		snprintf(name, sizeof(name), "custom.%zu.%zu", n, i);
		catalog_add_type(cat, i % 2 ? "aws" : "newcloud", name, "test")->num[KEY_ACC_COUNT] = 0;
	}
	for (i = 0; i < n; i++) {
		struct cat_type *t = &cat->types[pick(cat->ntypes)];
		size_t nchanges = 1 + pick(4);

		for (k = 0; k < nchanges; k++) {
			enum key_id key = (enum key_id)pick(KEY_NFEATURES);
			const struct key_info *ki = key_info(key);

			if (key == KEY_PRICE) {
				catalog_set_price(cat, t, chance(50) ? "us-east-1" : "eu-test-9",
						  chance(20) ? NAN : (double)pick(5000) / 100.0,
						  chance(50) ? NAN : (double)pick(5000) / 100.0);
			} else if (ki->kind == KIND_NUMBER)
				t->num[key] = random_num(cat, key);
			else if (ki->kind == KIND_ARCH)
				t->sid[key] = chance(20) ? CATALOG_UNKNOWN : chance(20) ? ARCH_NONE
					: (int)pick(arch_count());
			else if (key != KEY_PROVIDER && key != KEY_MACHINETYPE && key != KEY_REGION)
				t->sid[key] = random_id(cat, key);
		}
		if (t->num[KEY_ACC_COUNT] == 0)
			catalog_no_accelerators(cat, t);
	}
	catalog_index(cat);
}

/* The candidates of a burst.conf with node sets: every type in each of
 * nsets node sets, in a priced region or in one without prices. */
static struct candset *nodeset_candidates(struct catalog *cat, int nsets)
{
	struct candset *cs = xcalloc(1, sizeof(*cs));
	int other = catalog_intern(cat, "unpriced-region-1");
	size_t i, k;
	int ns;

	for (ns = 0; ns < nsets; ns++)
		for (i = 0; i < cat->ntypes; i++) {
			const struct cat_type *t = &cat->types[i];
			for (k = 0; k < t->nprices; k++)
				candset_add(cs, t, t->prices[k].region, t->prices[k].ondemand,
					    t->prices[k].spot, ns);
			if (ns == 1 || t->nprices == 0)
				candset_add(cs, t, ns == 2 ? CATALOG_UNKNOWN : other, NAN, NAN, ns);
		}
	candset_sort(cat, cs);
	return cs;
}

/* Every type once, with prices on a coarse grid: few distinct prices, so
 * that the index has bitsets for them too. */
static struct candset *coarse_price_candidates(const struct catalog *cat)
{
	struct candset *cs = xcalloc(1, sizeof(*cs));
	size_t i;

	for (i = 0; i < cat->ntypes; i++) {
		const struct cat_type *t = &cat->types[i];
		double od = t->nprices ? floor(t->prices[0].ondemand) : NAN;
		candset_add(cs, t, t->nprices ? t->prices[0].region : CATALOG_UNKNOWN,
			    od, i % 3 ? floor(od / 2) : NAN, -1);
	}
	candset_sort(cat, cs);
	return cs;
}

/*
 * rank=fit walks matches in the order of their excess over no bounds;
 * the excess over the contract's bounds differs from it by a constant, but
 * for rounding, which can reorder. Here big.a has 2^53 vCPUs and 6 GiB
 * (excess over nothing 2^53 + 1.5, rounded to 2^53 + 2), big.b 2^53 vCPUs
 * and 4 GiB (2^53 + 1, rounded to 2^53): b first. Over node_vcpus_count>=1
 * both have 2^53 (2^53 - 1 + 1.5 rounds down), and a is cheaper: a first.
 */
static void rounding(const char *dir)
{
	burst_err_t err;
	struct catalog *cat = catalog_load(dir, &err);
	struct cat_type *a, *b;
	struct candset *cs;
	struct contract *c = contract_parse("node_vcpus_count>=1 accelerator_count=0 rank=fit", &err);
	struct resolution ra, rb;
	char *da, *db;

	a = catalog_add_type(cat, "test", "big.a", "test");
	a->num[KEY_VCPUS] = 9007199254740992.0;
	a->num[KEY_MEMORY] = 6 * 1073741824.0;
	a->num[KEY_ACC_COUNT] = 0;
	b = catalog_add_type(cat, "test", "big.b", "test");
	b->num[KEY_VCPUS] = 9007199254740992.0;
	b->num[KEY_MEMORY] = 4 * 1073741824.0;
	b->num[KEY_ACC_COUNT] = 0;
	catalog_set_price(cat, catalog_find_type(cat, "test:big.a"), "r1", 1, NAN);
	catalog_set_price(cat, catalog_find_type(cat, "test:big.b"), "r1", 2, NAN);
	catalog_index(cat);
	cs = candset_from_catalog(cat, NULL);
	resolver_index(cat, cs);
	resolver_run(cat, cs, c, RESOLVE_WHY, &ra, &err);
	resolver_run_reference(cat, cs, c, RESOLVE_WHY, &rb, &err);
	da = dump(&ra);
	db = dump(&rb);
	is_str(da, db, "rank=fit: a rounding that reorders the excess ranks the same");
	ok(rb.n >= 2 && strcmp(catalog_str(cat, cs->c[rb.m[rb.n - 2].cand].type->name), "big.a") == 0 &&
	   strcmp(catalog_str(cat, cs->c[rb.m[rb.n - 1].cand].type->name), "big.b") == 0,
	   "rank=fit: big.a (cheaper, same excess after rounding) before big.b");
	free(da);
	free(db);
	resolution_free(&ra);
	resolution_free(&rb);
	contract_free(c);
	candset_free(cs);
	catalog_free(cat);
}

int main(void)
{
	const char *dir = catalog_default_dir(getenv("BURST_CATALOG_DIR"));
	static const char *const aws_only[] = { "aws", NULL };
	burst_err_t err;
	struct catalog *cat = catalog_load(dir, &err), *cat2;
	struct candset *cs;
	struct resolution r;
	struct contract *c;
	size_t i;

	if (!ok(cat != NULL, "shipped catalog loads from %s", dir))
		return diag("%s", err.msg), done_testing();
	ok(cat->ntypes >= 800, "the shipped catalog has >= 800 types (%zu)", cat->ntypes);

	cs = candset_from_catalog(cat, NULL);
	/* the index is made at the second resolve, not the first */
	c = contract_parse("accelerator_count>=1", &err);
	resolver_run(cat, cs, c, 0, &r, &err);
	resolution_free(&r);
	ok(cs->index != NULL, "the first resolve notes the candidate set");
	resolver_run(cat, cs, c, 0, &r, &err);
	resolution_free(&r);
	contract_free(c);
	check(cat, cs, 3000, "shipped catalog");
	candset_free(cs);

	cs = candset_from_catalog(cat, (const char *const *)aws_only);
	resolver_index(cat, cs);
	check(cat, cs, 500, "shipped catalog, aws only");
	candset_free(cs);

	/* node sets: > 2048 candidates, the same type several times */
	cs = nodeset_candidates(cat, 3);
	ok(cs->n > 2048, "node-set candidates: %zu", cs->n);
	resolver_index(cat, cs);
	check(cat, cs, 800, "three node sets");
	candset_free(cs);

	cs = coarse_price_candidates(cat);
	resolver_index(cat, cs);
	check(cat, cs, 1000, "coarse prices");
	candset_free(cs);

	rounding(dir);

	/* a catalog with overrides */
	cat2 = catalog_load(dir, &err);
	override(cat2, 200);
	cs = candset_from_catalog(cat2, NULL);
	resolver_index(cat2, cs);
	check(cat2, cs, 1500, "catalog with overrides");

	/* the catalog changes under an indexed candidate set: the index must
	 * not be used after, though the set still points at the same types */
	{
		unsigned long gen = cat2->gen;
		for (i = 0; i < 300; i++) {
			struct cat_type *t = (struct cat_type *)cs->c[pick(cs->n)].type;
			t->num[KEY_VCPUS] = random_num(cat2, KEY_VCPUS);
			t->num[KEY_MEMORY] = random_num(cat2, KEY_MEMORY);
			t->num[KEY_ACC_COUNT] = (double)pick(9);
			t->sid[KEY_PROC_ISA] = random_id(cat2, KEY_PROC_ISA);
			t->sid[KEY_ACC_ARCH] = chance(30) ? ARCH_NONE : (int)pick(arch_count());
		}
		catalog_index(cat2);
		ok(cat2->gen != gen, "catalog_index bumps the generation");
		check(cat2, cs, 1500, "catalog changed under an indexed set");
	}
	candset_free(cs);
	catalog_free(cat2);
	catalog_free(cat);
	return done_testing();
}

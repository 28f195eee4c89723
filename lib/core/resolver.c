/*
 * resolver.c - match contracts against candidates, rank, explain.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "resolver.h"
#include "strutil.h"

static void drop_index(struct candset *cs);

/* ---- candidate sets ---- */

void candset_add(struct candset *cs, const struct cat_type *t, int region,
		 double ondemand, double spot, int nodeset)
{
	struct candidate *cd;

	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 1024;
		cs->c = xrealloc(cs->c, cs->cap * sizeof(*cs->c));
	}
	cd = &cs->c[cs->n++];
	cd->type = t;
	cd->region = region;
	cd->ondemand = ondemand;
	cd->spot = spot;
	cd->nodeset = nodeset;
	cd->provider = -1;
	cd->provider_name = NULL;
	cs->sorted = false;
	drop_index(cs);
}

struct candset *candset_from_catalog(const struct catalog *cat,
				     const char *const *providers)
{
	struct candset *cs = xcalloc(1, sizeof(*cs));
	size_t i, k;

	for (i = 0; i < cat->ntypes; i++) {
		const struct cat_type *t = &cat->types[i];

		if (providers) {
			const char *const *p;
			for (p = providers; *p; p++)
				if (strcasecmp(*p, catalog_str(cat, t->provider)) == 0)
					break;
			if (!*p)
				continue;
		}
		if (t->nprices == 0)
			candset_add(cs, t, CATALOG_UNKNOWN, NAN, NAN, -1);
		for (k = 0; k < t->nprices; k++)
			candset_add(cs, t, t->prices[k].region, t->prices[k].ondemand,
				    t->prices[k].spot, -1);
	}
	candset_sort(cat, cs);
	return cs;
}

void candset_clear(struct candset *cs)
{
	drop_index(cs);
	free(cs->c);
	free(cs->by_price[0]);
	free(cs->by_price[1]);
	memset(cs, 0, sizeof(*cs));
}

void candset_free(struct candset *cs)
{
	if (!cs)
		return;
	candset_clear(cs);
	free(cs);
}

const char *candidate_name(const struct catalog *cat, const struct candidate *cd,
			   char *buf, size_t len)
{
	/* the configured provider's name: two of one catalog (two AWS
	 * accounts) are told apart */
	const char *pv = cd->provider_name ? cd->provider_name : catalog_str(cat, cd->type->provider);

	if (cd->region >= 0)
		snprintf(buf, len, "%s/%s@%s", pv, catalog_str(cat, cd->type->name), catalog_str(cat, cd->region));
	else
		snprintf(buf, len, "%s/%s", pv, catalog_str(cat, cd->type->name));
	return buf;
}

/* ---- binding a contract to a catalog ---- */

/* An assumption compiled for fast evaluation against one catalog. */
struct bound {
	const struct assumption *a;
	const struct key_info *ki;
	enum key_kind kind;
	enum contract_op op;
	enum key_id key;
	double v;            /* KIND_NUMBER: the first value */
	int arch;            /* KIND_ARCH: wanted arch index (first value) */
	int fam, rank;       /* KIND_ARCH: its family and rank */
	int *ids;            /* KIND_STRING: catalog ids the values stand for */
	size_t nids;
	bool indexed;        /* resolver_run: the index applied it exactly */
};

static void add_id(struct bound *b, int id)
{
	size_t k;

	for (k = 0; k < b->nids; k++)
		if (b->ids[k] == id)
			return;
	b->ids = xrealloc(b->ids, (b->nids + 1) * sizeof(int));
	b->ids[b->nids++] = id;
}

static struct bound *bind(const struct catalog *cat, const struct contract *c,
			  struct strbuf *notes)
{
	struct bound *b = xcalloc(c->nas ? c->nas : 1, sizeof(*b));
	size_t i, k, s;

	for (i = 0; i < c->nas; i++) {
		const struct assumption *a = &c->as[i];

		b[i].a = a;
		b[i].ki = key_info(a->key);
		b[i].kind = b[i].ki->kind;
		b[i].op = a->op;
		b[i].key = a->key;
		if (b[i].kind == KIND_NUMBER && a->nvals)
			b[i].v = a->num[0];
		if (b[i].kind == KIND_ARCH && a->nvals) {
			const struct arch_info *ai = arch_at((size_t)a->arch[0]);
			b[i].arch = a->arch[0];
			b[i].fam = ai->family_id;
			b[i].rank = ai->rank;
		}
		if (b[i].kind != KIND_STRING)
			continue;
		for (k = 0; k < a->nvals; k++) {
			int id = catalog_find_str(cat, a->str[k]);
			size_t before = b[i].nids;

			if (id >= 0)
				add_id(&b[i], id);
			else if (a->key == KEY_ACC_MODEL) {
				/* "A100" stands for every A100-* model */
				size_t vl = strlen(a->str[k]);
				for (s = 0; s < cat->nmodels; s++) {
					const char *m = cat->strs[cat->models[s]];
					if (strncasecmp(m, a->str[k], vl) == 0 && m[vl] == '-')
						add_id(&b[i], cat->models[s]);
				}
			}
			if (notes && b[i].nids == before) {
				const char *near = str_suggest(a->str[k], (const char *const *)cat->strs,
							       cat->nstrs);
				if (near)
					sb_addf(notes, "no catalog type has %s=%s; did you mean '%s'?\n",
						b[i].ki->name, a->str[k], near);
				else
					sb_addf(notes, "no catalog type has %s=%s\n",
						b[i].ki->name, a->str[k]);
			}
		}
	}
	return b;
}

static void unbind(struct bound *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(b[i].ids);
	free(b);
}

/* ---- evaluation ---- */

static bool cmp_num(double v, enum contract_op op, const double *vals, size_t n)
{
	size_t k;

	switch (op) {
	case OP_EQ: return v == vals[0];
	case OP_NE: return v != vals[0];
	case OP_LT: return v < vals[0];
	case OP_LE: return v <= vals[0];
	case OP_GT: return v > vals[0];
	case OP_GE: return v >= vals[0];
	case OP_IN:
		for (k = 0; k < n; k++)
			if (v == vals[k])
				return true;
		return false;
	}
	return false;
}

static bool has_id(const struct bound *b, int id)
{
	size_t k;

	for (k = 0; k < b->nids; k++)
		if (b->ids[k] == id)
			return true;
	return false;
}

static double cand_price(const struct candidate *cd, bool spot)
{
	return spot ? cd->spot : cd->ondemand;
}

/* Does an accelerator architecture (arch index, ARCH_NONE or unknown)
 * satisfy b? */
static inline bool arch_ok(int id, const struct bound *b)
{
	const struct arch_info *have;
	size_t k;

	if (id == CATALOG_UNKNOWN)
		return false;
	if (id == ARCH_NONE)
		return b->op == OP_NE;
	switch (b->op) {
	case OP_EQ: return id == b->arch;
	case OP_NE: return id != b->arch;
	case OP_IN:
		for (k = 0; k < b->a->nvals; k++)
			if (b->a->arch[k] == id)
				return true;
		return false;
	default:
		have = arch_at((size_t)id);
		if (have->family_id != b->fam)
			return false;
		switch (b->op) {
		case OP_LT: return have->rank < b->rank;
		case OP_LE: return have->rank <= b->rank;
		case OP_GT: return have->rank > b->rank;
		case OP_GE: return have->rank >= b->rank;
		default: return false;
		}
	}
}

/* The heart of matching: does cd satisfy b? Unknown values never do. */
static inline __attribute__((always_inline))
bool pass(const struct candidate *cd, const struct bound *b, bool spot)
{
	const struct cat_type *t = cd->type;

	switch (b->kind) {
	case KIND_NUMBER: {
		double v = b->key == KEY_PRICE ? cand_price(cd, spot) : t->num[b->key];

		if (isnan(v))
			return false;
		switch (b->op) {
		case OP_EQ: return v == b->v;
		case OP_NE: return v != b->v;
		case OP_LT: return v < b->v;
		case OP_LE: return v <= b->v;
		case OP_GT: return v > b->v;
		case OP_GE: return v >= b->v;
		case OP_IN: return cmp_num(v, OP_IN, b->a->num, b->a->nvals);
		}
		return false;
	}
	case KIND_STRING: {
		int id = b->key == KEY_REGION ? cd->region : t->sid[b->key];

		if (id < 0)
			return false;
		return b->op == OP_NE ? !has_id(b, id) : has_id(b, id);
	}
	case KIND_ARCH:
		return arch_ok(t->sid[KEY_ACC_ARCH], b);
	case KIND_BOOL:
	case KIND_RANK:
		return true;
	}
	return true;
}

/* Why cd fails b, for a human (b must fail). */
static void why_not(const struct catalog *cat, const struct candidate *cd,
		    const struct bound *b, bool spot, char *reason, size_t rlen)
{
	const struct assumption *a = b->a;
	const struct cat_type *t = cd->type;

	switch (b->kind) {
	case KIND_NUMBER: {
		double v = a->key == KEY_PRICE ? cand_price(cd, spot) : t->num[a->key];
		char buf[64];

		if (isnan(v)) {
			snprintf(reason, rlen, "%s: %s unknown in the catalog", a->text,
				 a->key == KEY_PRICE ? (spot ? "spot price" : "price") : "value");
			return;
		}
		units_format(v, b->ki->unit, buf, sizeof(buf));
		snprintf(reason, rlen, "%s: has %s", a->text, buf);
		return;
	}
	case KIND_STRING: {
		int id = a->key == KEY_REGION ? cd->region : t->sid[a->key];

		if (id < 0)
			snprintf(reason, rlen, "%s: unknown in the catalog", a->text);
		else
			snprintf(reason, rlen, "%s: has %s", a->text, catalog_str(cat, id));
		return;
	}
	case KIND_ARCH: {
		int id = t->sid[KEY_ACC_ARCH];
		const struct arch_info *have, *want = arch_at((size_t)a->arch[0]);

		if (id == CATALOG_UNKNOWN) {
			snprintf(reason, rlen, "%s: architecture unknown in the catalog", a->text);
			return;
		}
		if (id == ARCH_NONE) {
			snprintf(reason, rlen, "%s: has no accelerator", a->text);
			return;
		}
		have = arch_at((size_t)id);
		switch (a->op) {
		case OP_EQ:
			if (have->family_id == want->family_id && have->rank > want->rank)
				snprintf(reason, rlen, "%s: %s is not %s ('=' means exactly; write >=%s for %s or newer)",
					 a->text, have->name, want->name, want->name, want->name);
			else
				snprintf(reason, rlen, "%s: %s is not %s", a->text, have->name, want->name);
			return;
		case OP_IN:
			snprintf(reason, rlen, "%s: %s is not in the set", a->text, have->name);
			return;
		case OP_NE:
			snprintf(reason, rlen, "%s: is %s", a->text, have->name);
			return;
		default:
			if (have->family_id != want->family_id)
				snprintf(reason, rlen, "%s: %s (%s) is not comparable with %s (%s)",
					 a->text, have->name, have->vendor, want->name, want->vendor);
			else
				snprintf(reason, rlen, "%s: %s is %s than %s", a->text, have->name,
					 have->rank < want->rank ? "older" :
					 have->rank > want->rank ? "newer" : "the same", want->name);
			return;
		}
	}
	case KIND_BOOL:
	case KIND_RANK:
		break;
	}
	snprintf(reason, rlen, "%s", a->text);
}

static bool test(const struct catalog *cat, const struct candidate *cd,
		 const struct bound *b, bool spot, char *reason, size_t rlen)
{
	if (pass(cd, b, spot))
		return true;
	if (reason)
		why_not(cat, cd, b, spot, reason, rlen);
	return false;
}

bool resolver_satisfies(const struct catalog *cat, const struct candidate *cd,
			const struct assumption *a, char *reason, size_t reasonlen)
{
	struct contract c;
	struct bound *b;
	bool ok;

	memset(&c, 0, sizeof(c));
	c.as = (struct assumption *)a;
	c.nas = 1;
	b = bind(cat, &c, NULL);
	ok = test(cat, cd, &b[0], false, reason, reasonlen);
	unbind(b, 1);
	return ok;
}

/* ---- ranking ---- */

/* The resource dimensions of "excess", with weights after typical cloud
 * price ratios: 1 vCPU ~ 4 GiB of memory ~ 1/8 of an accelerator. */
static const struct { enum key_id key; double w; } dims[] = {
	{ KEY_VCPUS, 1.0 },
	{ KEY_MEMORY, 0.25 / 1073741824.0 },
	{ KEY_ACC_COUNT, 8.0 },
};
#define NDIMS (sizeof(dims) / sizeof(dims[0]))

/* The lower bound a contract puts on a feature (0 when none). */
static double lower_bound(const struct contract *c, enum key_id key)
{
	double lb = 0;
	size_t i, k;

	for (i = 0; i < c->nas; i++) {
		const struct assumption *a = &c->as[i];
		double v;

		if (a->key != key)
			continue;
		switch (a->op) {
		case OP_EQ: case OP_GE: case OP_GT: v = a->num[0]; break;
		case OP_IN:
			v = a->num[0];
			for (k = 1; k < a->nvals; k++)
				if (a->num[k] < v)
					v = a->num[k];
			break;
		default: continue;
		}
		if (v > lb)
			lb = v;
	}
	return lb;
}

/* The excess of values v[d] (NAN unknown) over lower bounds lb[d]: one
 * definition, for excess_over and the index's copy of the values. */
static inline double excess_of(const double *v, const double *lb)
{
	double e = 0;
	size_t d;

	for (d = 0; d < NDIMS; d++)
		if (!isnan(v[d]) && v[d] > lb[d])
			e += (v[d] - lb[d]) * dims[d].w;
	return e;
}

static double excess_over(const struct cat_type *t, const double *lb)
{
	double v[NDIMS];
	size_t d;

	for (d = 0; d < NDIMS; d++)
		v[d] = t->num[dims[d].key];
	return excess_of(v, lb);
}

double resolver_excess(const struct cat_type *t, const struct contract *c)
{
	double lb[NDIMS];
	size_t d;

	for (d = 0; d < NDIMS; d++)
		lb[d] = lower_bound(c, dims[d].key);
	return excess_over(t, lb);
}

/* Name order of candidates: provider, type, region (unknown last), node set. */
static int cmp_cand_name(const struct catalog *cat, const struct candidate *a,
			 const struct candidate *b)
{
	int r;

	if (a->type->provider != b->type->provider &&
	    (r = strcmp(catalog_str(cat, a->type->provider), catalog_str(cat, b->type->provider))))
		return r;
	if (a->type->name != b->type->name &&
	    (r = strcmp(catalog_str(cat, a->type->name), catalog_str(cat, b->type->name))))
		return r;
	if (a->region != b->region) {
		if (a->region < 0 || b->region < 0)
			return a->region < 0 ? 1 : -1;
		if ((r = strcmp(catalog_str(cat, a->region), catalog_str(cat, b->region))))
			return r;
	}
	if (a->nodeset != b->nodeset)
		return (a->nodeset > b->nodeset) - (a->nodeset < b->nodeset);
	return (a->provider > b->provider) - (a->provider < b->provider);
}

static int cmp_cand_qsort(const void *pa, const void *pb, void *arg)
{
	return cmp_cand_name(arg, pa, pb);
}

/* Sort keys: primary, secondary, then the candidate's index (name order). */
struct rkey {
	double k1, k2;
	size_t cand;
};

static inline bool rkey_less(const struct rkey *x, const struct rkey *y)
{
	if (x->k1 != y->k1)
		return x->k1 < y->k1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2;
	return x->cand < y->cand;
}

/*
 * Sort keys: insertion sort for the short runs that dominate rank=price,
 * a bottom-up merge sort (comparator inlined, one scratch buffer) for the
 * long lists of rank=fit. glibc's qsort calls through a pointer and
 * allocates, which cost 3x here.
 */
static void sort_rkeys(struct rkey *k, size_t n)
{
	struct rkey *tmp, *src, *dst;
	size_t i, j, w;

	if (n <= 24) {
		for (i = 1; i < n; i++) {
			struct rkey x = k[i];
			for (j = i; j > 0 && rkey_less(&x, &k[j - 1]); j--)
				k[j] = k[j - 1];
			k[j] = x;
		}
		return;
	}
	/* runs of 16 by insertion, then merge passes */
	for (i = 0; i < n; i += 16)
		sort_rkeys(k + i, n - i < 16 ? n - i : 16);
	tmp = xmalloc(n * sizeof(*tmp));
	src = k;
	dst = tmp;
	for (w = 16; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t a = i, am = i + w < n ? i + w : n, b = am, bm = i + 2 * w < n ? i + 2 * w : n;
			size_t o = i;
			while (a < am && b < bm)
				dst[o++] = rkey_less(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < am)
				dst[o++] = src[a++];
			while (b < bm)
				dst[o++] = src[b++];
		}
		{
			struct rkey *t = src;
			src = dst;
			dst = t;
		}
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
	free(tmp);
}

/* Whether the set is in name order already (its candidates made in the
 * catalog's order often are): then a stable sort would leave it as it is. */
static bool in_name_order(const struct catalog *cat, const struct candset *cs)
{
	size_t i;

	for (i = 1; i < cs->n; i++)
		if (cmp_cand_name(cat, &cs->c[i - 1], &cs->c[i]) > 0)
			return false;
	return true;
}

/* Put the set in name order, and make its price orders: (price, index)
 * is a total order, which sort_rkeys keeps (unknown prices last). */
void candset_sort(const struct catalog *cat, struct candset *cs)
{
	struct rkey *keys;
	size_t i, s;

	drop_index(cs);
	if (cs->n > 1 && !in_name_order(cat, cs))
		qsort_r(cs->c, cs->n, sizeof(*cs->c), cmp_cand_qsort, (void *)cat);
	keys = xmalloc((cs->n ? cs->n : 1) * sizeof(*keys));
	for (s = 0; s < 2; s++) {
		free(cs->by_price[s]);
		cs->by_price[s] = xmalloc((cs->n ? cs->n : 1) * sizeof(size_t));
		for (i = 0; i < cs->n; i++) {
			double price = s ? cs->c[i].spot : cs->c[i].ondemand;
			keys[i].k1 = isnan(price) ? INFINITY : price;
			keys[i].k2 = 0;
			keys[i].cand = i;
		}
		sort_rkeys(keys, cs->n);
		for (i = 0; i < cs->n; i++)
			cs->by_price[s][i] = keys[i].cand;
	}
	free(keys);
	cs->sorted = true;
}

static int cmp_price(const struct match *x, const struct match *y)
{
	bool kx = !isnan(x->price), ky = !isnan(y->price);

	if (kx != ky)
		return kx ? -1 : 1;
	if (kx && x->price != y->price)
		return x->price < y->price ? -1 : 1;
	return 0;
}

static int cmp_excess(const struct match *x, const struct match *y)
{
	if (x->excess != y->excess)
		return x->excess < y->excess ? -1 : 1;
	return 0;
}

static char *explain_winner(const struct catalog *cat, const struct candset *cs,
			    const struct resolution *r, enum rank_mode mode)
{
	struct strbuf sb;
	const struct match *a = &r->m[0], *b;
	char an[256], bn[256];

	sb_init(&sb);
	candidate_name(cat, &cs->c[a->cand], an, sizeof(an));
	if (r->n == 1) {
		sb_addf(&sb, "%s is the only candidate that satisfies the contract", an);
		return sb_take(&sb);
	}
	b = &r->m[1];
	candidate_name(cat, &cs->c[b->cand], bn, sizeof(bn));
	if (mode == RANK_PRICE && cmp_price(a, b) != 0) {
		if (isnan(b->price))
			sb_addf(&sb, "%s is the cheapest at $%.4f/h (no price known for %s and %zu others)",
				an, a->price, bn, r->n - 2);
		else
			sb_addf(&sb, "%s is the cheapest at $%.4f/h; next is %s at $%.4f/h",
				an, a->price, bn, b->price);
	} else if (cmp_excess(a, b) != 0) {
		if (mode == RANK_PRICE)
			sb_addf(&sb, "%s: %s, and the least excess (%.1f vCPU-equivalents, next %s with %.1f)",
				an, isnan(a->price) ? "no price known" : "same price as the next",
				a->excess, bn, b->excess);
		else
			sb_addf(&sb, "%s fits best: least excess (%.1f vCPU-equivalents; next %s with %.1f)",
				an, a->excess, bn, b->excess);
	} else if (mode == RANK_FIT && cmp_price(a, b) != 0) {
		sb_addf(&sb, "%s: same excess as %s, and cheaper ($%.4f/h)", an, bn, a->price);
	} else {
		sb_addf(&sb, "%s: tied with %s on price and excess; first by name", an, bn);
	}
	return sb_take(&sb);
}

static int cmp_miss(const void *pa, const void *pb)
{
	const struct miss *x = pa, *y = pb;

	if (x->nfailed != y->nfailed)
		return x->nfailed < y->nfailed ? -1 : 1;
	return (x->cand > y->cand) - (x->cand < y->cand);
}

/*
 * The matches keys[0..n) (in price order already: the candidate set is)
 * ranked into out: with rank=price each run of equal price is sorted by
 * excess, with rank=fit all of them by sort_fit. Frees keys.
 */
static void rank_matches(const struct catalog *cat, const struct candset *cs,
			 const struct contract *c, int flags, struct rkey *keys, size_t n,
			 void (*sort_fit)(struct rkey *, size_t), struct resolution *out)
{
	size_t i, j;

	if (c->rank == RANK_PRICE) {
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && keys[j].k1 == keys[i].k1; j++)
				;
			if (j - i > 1)
				sort_rkeys(keys + i, j - i);
		}
	} else
		sort_fit(keys, n);
	if (n) {
		out->m = xmalloc(n * sizeof(*out->m));
		for (i = 0; i < n; i++) {
			out->m[i].cand = keys[i].cand;
			out->m[i].price = cand_price(&cs->c[keys[i].cand], c->spot);
			out->m[i].excess = c->rank == RANK_PRICE ? keys[i].k2 : keys[i].k1;
		}
		out->n = n;
		if (flags & (RESOLVE_EXPLAIN | RESOLVE_WHY))
			out->why = explain_winner(cat, cs, out, c->rank);
	}
	free(keys);
}

int resolver_run_reference(const struct catalog *cat, const struct candset *cs,
			   const struct contract *c, int flags, struct resolution *out,
			   burst_err_t *err)
{
	struct strbuf notes;
	struct bound *b;
	struct rkey *keys = NULL;
	double lb[NDIMS];
	size_t i, j, k, n = 0, cap = 0, mcap = 0;
	size_t minfail = (size_t)-1;
	bool explain = flags & RESOLVE_EXPLAIN;

	memset(out, 0, sizeof(*out));
	if (!cs->sorted) {
		burst_err_set(err, "internal error: candidate set not in name order (call candset_sort)");
		return -1;
	}
	sb_init(&notes);
	b = bind(cat, c, explain ? &notes : NULL);
	for (k = 0; k < NDIMS; k++)
		lb[k] = lower_bound(c, dims[k].key);

	/*
	 * With rank=price, walk the candidates cheapest first (the order
	 * candset_sort made), so that the matches come out sorted by price and
	 * only runs of equal price need sorting by excess.
	 */
	for (j = 0; j < cs->n; j++) {
		const struct candidate *cd;

		i = c->rank == RANK_PRICE ? cs->by_price[c->spot][j] : j;
		cd = &cs->c[i];
		for (k = 0; k < c->nas; k++)
			if (!pass(cd, &b[k], c->spot))
				break;
		if (k == c->nas) {
			double price = cand_price(cd, c->spot), excess = excess_over(cd->type, lb);
			double p = isnan(price) ? INFINITY : price;

			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				keys = xrealloc(keys, cap * sizeof(*keys));
			}
			keys[n].k1 = c->rank == RANK_PRICE ? p : excess;
			keys[n].k2 = c->rank == RANK_PRICE ? excess : p;
			keys[n].cand = i;
			n++;
			continue;
		}
		if (explain) {
			/* count every failed assumption and say why */
			struct strbuf why;
			size_t nf = 0;
			char reason[512];

			for (k = 0; k < c->nas; k++)
				if (!pass(cd, &b[k], c->spot))
					nf++;
			if (nf > minfail)
				continue;
			sb_init(&why);
			for (k = 0; k < c->nas; k++)
				if (!test(cat, cd, &b[k], c->spot, reason, sizeof(reason)))
					sb_addf(&why, "%s%s", why.len ? "; " : "", reason);
			if (out->nmiss == mcap) {
				mcap = mcap ? mcap * 2 : 32;
				out->miss = xrealloc(out->miss, mcap * sizeof(*out->miss));
			}
			out->miss[out->nmiss].cand = i;
			out->miss[out->nmiss].nfailed = nf;
			out->miss[out->nmiss].reason = sb_take(&why);
			out->nmiss++;
			if (nf < minfail)
				minfail = nf;
		}
	}
	rank_matches(cat, cs, c, flags, keys, n, sort_rkeys, out);
	if (explain && out->nmiss) {
		/* keep the nearest misses: those failing the fewest assumptions */
		size_t keep = 0;
		qsort(out->miss, out->nmiss, sizeof(*out->miss), cmp_miss);
		for (i = 0; i < out->nmiss; i++) {
			if (keep < RESOLVE_MAX_MISSES && out->miss[i].nfailed == out->miss[0].nfailed)
				out->miss[keep++] = out->miss[i];
			else
				free(out->miss[i].reason);
		}
		out->nmiss = keep;
	}
	if (notes.len)
		out->notes = sb_take(&notes);
	sb_free(&notes);
	unbind(b, c->nas);
	return 0;
}

void resolution_free(struct resolution *r)
{
	size_t i;

	free(r->m);
	free(r->why);
	for (i = 0; i < r->nmiss; i++)
		free(r->miss[i].reason);
	free(r->miss);
	free(r->notes);
	memset(r, 0, sizeof(*r));
}

/* ---- the index of a candidate set: resolver_run's fast path ---- */

/* A feature with at most this many distinct values among the candidates
 * gets bitsets; one with more (machine type, price) is checked candidate by
 * candidate on the survivors of the others. */
#define IDX_MAXVALS 128
/* The slot of the spot price among the indexed features (after KEY_PRICE,
 * which is the on-demand one). */
#define SLOT_SPOT KEY_NFEATURES
#define NSLOTS (KEY_NFEATURES + 1)

/* The bitsets (of w words, bit i for candidate i) of one feature. */
struct keyidx {
	bool tried;              /* made, or found to have too many values */
	bool on;                 /* indexed: the fields below are filled in */
	size_t nvals;
	double *vals;            /* KIND_NUMBER: the distinct known values, ascending */
	int *ids;                /* otherwise: the distinct values (ids), ascending */
	uint64_t *known;         /* candidates whose value is known */
	/* nvals + 1 bitsets. KIND_NUMBER: set k holds the candidates with a
	 * value >= vals[k], set nvals is empty. Otherwise set k holds those
	 * whose value is ids[k]. */
	uint64_t *sets;
};

struct rindex {
	const struct catalog *cat;
	unsigned long gen;       /* cat->gen when made */
	bool built;              /* false: the set was resolved once, nothing built */
	size_t n, w;             /* candidates; words per bitset */
	uint64_t *all;
	/* made when a contract first needs them (all by resolver_index) */
	struct keyidx key[NSLOTS];
	/* per price (0 on-demand, 1 spot): each candidate's position in
	 * cs->by_price; and the candidates by (excess over no bounds, price,
	 * index), with each one's position in that order (made at the first
	 * rank=fit) */
	size_t *price_pos[2];
	size_t *fit_order[2], *fit_pos[2];
	/* the values of the excess dimensions, NDIMS per candidate: reading
	 * them here, not from the types, halves a rank=fit resolve */
	double *dimv;
};

static void index_free(struct rindex *ix)
{
	size_t k, s;

	if (!ix)
		return;
	for (k = 0; k < NSLOTS; k++) {
		free(ix->key[k].vals);
		free(ix->key[k].ids);
		free(ix->key[k].known);
		free(ix->key[k].sets);
	}
	for (s = 0; s < 2; s++) {
		free(ix->price_pos[s]);
		free(ix->fit_order[s]);
		free(ix->fit_pos[s]);
	}
	free(ix->all);
	free(ix->dimv);
	free(ix);
}

static void drop_index(struct candset *cs)
{
	index_free(cs->index);
	cs->index = NULL;
}

static inline void bit_set(uint64_t *bs, size_t i)
{
	bs[i / 64] |= (uint64_t)1 << (i % 64);
}

static inline bool bit_get(const uint64_t *bs, size_t i)
{
	return bs[i / 64] >> (i % 64) & 1;
}

/* The value of a feature slot for a candidate, as pass() reads it. */
static double slot_num(const struct candidate *cd, size_t slot)
{
	if (slot == SLOT_SPOT)
		return cd->spot;
	if (slot == KEY_PRICE)
		return cd->ondemand;
	return cd->type->num[slot];
}

static int slot_id(const struct candidate *cd, size_t slot)
{
	return slot == KEY_REGION ? cd->region : cd->type->sid[slot];
}

/* The first k with vals[k] >= x (or > x when above), nvals if none. */
static size_t lower_idx(const double *vals, size_t nvals, double x, bool above)
{
	size_t lo = 0, hi = nvals;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (above ? vals[mid] > x : vals[mid] >= x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The k with ids[k] == id, or -1. */
static long find_id(const int *ids, size_t nids, int id)
{
	size_t lo = 0, hi = nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid] == id)
			return (long)mid;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The distinct values of a feature met so far, numbered in order of first
 * sight: open addressing over the values' bits.
 */
#define VH_CAP 512               /* a power of two, > 2 * IDX_MAXVALS */
struct vhash {
	uint64_t key[VH_CAP];
	int val[VH_CAP];         /* -1: empty */
	size_t n;
};

static void vhash_init(struct vhash *h)
{
	memset(h->val, 0xff, sizeof(h->val));
	h->n = 0;
}

/* The number of key, numbered now if new; -1 when that would make more
 * than IDX_MAXVALS. */
static int vhash_number(struct vhash *h, uint64_t key)
{
	size_t at = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 55) & (VH_CAP - 1);

	while (h->val[at] >= 0) {
		if (h->key[at] == key)
			return h->val[at];
		at = (at + 1) & (VH_CAP - 1);
	}
	if (h->n == IDX_MAXVALS)
		return -1;
	h->key[at] = key;
	h->val[at] = (int)h->n;
	return (int)h->n++;
}

/*
 * Fill in ki from each candidate's value number (num[i], -1 for unknown):
 * rank[v] is where value v goes in ascending order; ge: make the sets
 * cumulative (value >= vals[k]).
 */
static void index_sets(struct rindex *ix, struct keyidx *ki, const int *num, const size_t *rank,
		       size_t n, bool ge)
{
	size_t i, k, w = ix->w;

	ki->known = xcalloc(w, sizeof(uint64_t));
	ki->sets = xcalloc((ki->nvals + 1) * w, sizeof(uint64_t));
	for (i = 0; i < n; i++) {
		if (num[i] < 0)
			continue;
		bit_set(ki->known, i);
		bit_set(ki->sets + rank[num[i]] * w, i);
	}
	if (ge)
		for (k = ki->nvals; k-- > 0;)
			for (i = 0; i < w; i++)
				ki->sets[k * w + i] |= ki->sets[(k + 1) * w + i];
	ki->on = true;
}

/* order: the nv distinct values first[] ascending (few: insertion sort);
 * rank: each value's place in that order. */
static void value_order(const double *first, size_t nv, size_t *order, size_t *rank)
{
	size_t i, j;

	for (i = 0; i < nv; i++) {
		for (j = i; j > 0 && first[order[j - 1]] > first[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (i = 0; i < nv; i++)
		rank[order[i]] = i;
}

static void index_number(struct rindex *ix, const struct candset *cs, size_t slot)
{
	struct keyidx *ki = &ix->key[slot];
	struct vhash h;
	double first[IDX_MAXVALS];
	size_t rank[IDX_MAXVALS], order[IDX_MAXVALS], i, nv;
	int *num = xmalloc(cs->n * sizeof(int));

	vhash_init(&h);
	for (i = 0; i < cs->n; i++) {
		double x = slot_num(&cs->c[i], slot) + 0.0;   /* -0.0 == 0.0: one value */
		uint64_t bits;

		num[i] = -1;
		if (isnan(x))
			continue;
		memcpy(&bits, &x, sizeof(bits));
		if ((num[i] = vhash_number(&h, bits)) < 0)
			goto out;                      /* too many values */
		if ((size_t)num[i] == h.n - 1)
			first[num[i]] = x;
	}
	nv = h.n;
	value_order(first, nv, order, rank);
	ki->nvals = nv;
	ki->vals = xmalloc((nv ? nv : 1) * sizeof(double));
	for (i = 0; i < nv; i++)
		ki->vals[i] = first[order[i]];
	index_sets(ix, ki, num, rank, cs->n, true);
out:
	free(num);
}

static void index_ids(struct rindex *ix, const struct candset *cs, size_t slot)
{
	struct keyidx *ki = &ix->key[slot];
	struct vhash h;
	double first[IDX_MAXVALS];   /* ids: exact as doubles */
	size_t rank[IDX_MAXVALS], order[IDX_MAXVALS], i, nv;
	int *num = xmalloc(cs->n * sizeof(int));

	vhash_init(&h);
	for (i = 0; i < cs->n; i++) {
		int id = slot_id(&cs->c[i], slot);

		if ((num[i] = vhash_number(&h, (uint64_t)(uint32_t)id)) < 0)
			goto out;                      /* too many values */
		if ((size_t)num[i] == h.n - 1)
			first[num[i]] = id;
	}
	nv = h.n;
	value_order(first, nv, order, rank);
	ki->nvals = nv;
	ki->ids = xmalloc((nv ? nv : 1) * sizeof(int));
	for (i = 0; i < nv; i++)
		ki->ids[i] = (int)first[order[i]];
	/* every value has a set, unknown ones too (arch_ok says no to them);
	 * known (which != uses) is a string id */
	index_sets(ix, ki, num, rank, cs->n, false);
	for (i = 0; i < cs->n; i++)
		if (ki->ids[rank[num[i]]] < 0)
			ki->known[i / 64] &= ~((uint64_t)1 << (i % 64));
out:
	free(num);
}

/* The bitsets of one feature slot, unless made already. */
static void index_slot(struct rindex *ix, const struct candset *cs, size_t slot)
{
	enum key_kind kind;

	if (ix->key[slot].tried)
		return;
	ix->key[slot].tried = true;
	kind = slot == SLOT_SPOT ? KIND_NUMBER : key_info((enum key_id)slot)->kind;
	if (kind == KIND_NUMBER)
		index_number(ix, cs, slot);
	else if (kind == KIND_STRING || kind == KIND_ARCH)
		index_ids(ix, cs, slot);
}

/* The orders of rank=fit, unless made already. */
static void index_fit(struct rindex *ix, const struct candset *cs)
{
	static const double nolb[NDIMS];
	size_t i, s, n = cs->n;
	struct rkey *keys;

	if (ix->fit_order[0])
		return;
	keys = xmalloc(n * sizeof(*keys));
	for (s = 0; s < 2; s++) {
		for (i = 0; i < n; i++) {
			double p = cand_price(&cs->c[i], s);
			keys[i].k1 = excess_over(cs->c[i].type, nolb);
			keys[i].k2 = isnan(p) ? INFINITY : p;
			keys[i].cand = i;
		}
		sort_rkeys(keys, n);
		ix->fit_order[s] = xmalloc(n * sizeof(size_t));
		ix->fit_pos[s] = xmalloc(n * sizeof(size_t));
		for (i = 0; i < n; i++) {
			ix->fit_order[s][i] = keys[i].cand;
			ix->fit_pos[s][keys[i].cand] = i;
		}
	}
	free(keys);
}

/* What every resolve needs (cs->n > 0). */
static void index_build(struct rindex *ix, const struct candset *cs)
{
	size_t i, s, n = cs->n;

	ix->n = n;
	ix->w = (n + 63) / 64;
	ix->all = xcalloc(ix->w, sizeof(uint64_t));
	ix->dimv = xmalloc(n * NDIMS * sizeof(double));
	for (i = 0; i < n; i++) {
		size_t d;
		bit_set(ix->all, i);
		for (d = 0; d < NDIMS; d++)
			ix->dimv[i * NDIMS + d] = cs->c[i].type->num[dims[d].key];
	}
	for (s = 0; s < 2; s++) {
		ix->price_pos[s] = xmalloc(n * sizeof(size_t));
		for (i = 0; i < n; i++)
			ix->price_pos[s][cs->by_price[s][i]] = i;
	}
	ix->built = true;
}

void resolver_index(const struct catalog *cat, struct candset *cs)
{
	if (!cs->sorted || cs->n == 0)
		return;
	size_t k;

	if (!cs->index || cs->index->cat != cat || cs->index->gen != cat->gen) {
		drop_index(cs);
		cs->index = xcalloc(1, sizeof(*cs->index));
		cs->index->cat = cat;
		cs->index->gen = cat->gen;
	}
	if (!cs->index->built)
		index_build(cs->index, cs);
	for (k = 0; k < NSLOTS; k++)
		index_slot(cs->index, cs, k);
	index_fit(cs->index, cs);
}

/* surv &= the candidates whose number v satisfies "v op x" (x not NaN). */
static void narrow_cmp(const struct keyidx *ki, size_t w, enum contract_op op, double x,
		       uint64_t *surv)
{
	const uint64_t *lo = ki->sets + lower_idx(ki->vals, ki->nvals, x, false) * w;
	const uint64_t *hi = ki->sets + lower_idx(ki->vals, ki->nvals, x, true) * w;
	size_t i;

	for (i = 0; i < w; i++) {
		switch (op) {
		case OP_GE: surv[i] &= lo[i]; break;
		case OP_GT: surv[i] &= hi[i]; break;
		case OP_LE: surv[i] &= ki->known[i] & ~hi[i]; break;
		case OP_LT: surv[i] &= ki->known[i] & ~lo[i]; break;
		case OP_EQ: surv[i] &= lo[i] & ~hi[i]; break;
		case OP_NE: surv[i] &= ki->known[i] & ~(lo[i] & ~hi[i]); break;
		case OP_IN: break;
		}
	}
}

/*
 * Narrow surv to the candidates that satisfy b, when the index can say
 * exactly which do (tmp: scratch of w words). False when it cannot: b is
 * then checked candidate by candidate.
 */
static bool narrow(struct rindex *ix, const struct candset *cs, const struct bound *b,
		   bool spot, uint64_t *surv, uint64_t *tmp)
{
	const struct keyidx *ki;
	size_t slot, w = ix->w, i, k;

	if (b->kind == KIND_BOOL || b->kind == KIND_RANK)
		return true;             /* pass() says yes to every candidate */
	if ((size_t)b->key >= KEY_NFEATURES)
		return false;
	slot = b->key == KEY_PRICE && spot ? SLOT_SPOT : (size_t)b->key;
	index_slot(ix, cs, slot);
	ki = &ix->key[slot];
	if (!ki->on)
		return false;
	switch (b->kind) {
	case KIND_NUMBER:
		if (b->op != OP_IN) {
			if (isnan(b->v))
				return false;
			narrow_cmp(ki, w, b->op, b->v, surv);
			return true;
		}
		/* the union of "= x" over the values; NaN equals nothing */
		memset(tmp, 0, w * sizeof(uint64_t));
		for (k = 0; k < b->a->nvals; k++) {
			double x = b->a->num[k];
			const uint64_t *lo, *hi;
			if (isnan(x))
				continue;
			lo = ki->sets + lower_idx(ki->vals, ki->nvals, x, false) * w;
			hi = ki->sets + lower_idx(ki->vals, ki->nvals, x, true) * w;
			for (i = 0; i < w; i++)
				tmp[i] |= lo[i] & ~hi[i];
		}
		for (i = 0; i < w; i++)
			surv[i] &= tmp[i];
		return true;
	case KIND_STRING:
		/* the candidates whose value is one of b's ids */
		memset(tmp, 0, w * sizeof(uint64_t));
		for (k = 0; k < b->nids; k++) {
			long at = find_id(ki->ids, ki->nvals, b->ids[k]);
			const uint64_t *set;
			if (at < 0)
				continue;
			set = ki->sets + (size_t)at * w;
			for (i = 0; i < w; i++)
				tmp[i] |= set[i];
		}
		if (b->op == OP_NE)
			for (i = 0; i < w; i++)
				surv[i] &= ki->known[i] & ~tmp[i];
		else
			for (i = 0; i < w; i++)
				surv[i] &= tmp[i];
		return true;
	case KIND_ARCH:
		/* few values: the union of those that satisfy b */
		memset(tmp, 0, w * sizeof(uint64_t));
		for (k = 0; k < ki->nvals; k++) {
			const uint64_t *set = ki->sets + k * w;
			if (!arch_ok(ki->ids[k], b))
				continue;
			for (i = 0; i < w; i++)
				tmp[i] |= set[i];
		}
		for (i = 0; i < w; i++)
			surv[i] &= tmp[i];
		return true;
	case KIND_BOOL:
	case KIND_RANK:
		break;
	}
	return false;
}

/*
 * Sort keys that are in order already but for a few (rounding in the
 * excess): insertion sort, one comparison per key when in order; should
 * they be far from it, the general sort.
 */
static void sort_nearly(struct rkey *k, size_t n)
{
	size_t i, j, moves = 0, limit = 4 * n + 64;

	for (i = 1; i < n; i++) {
		struct rkey x;

		if (!rkey_less(&k[i], &k[i - 1]))
			continue;
		x = k[i];
		for (j = i; j > 0 && rkey_less(&x, &k[j - 1]); j--)
			k[j] = k[j - 1];
		k[j] = x;
		moves += i - j;
		if (moves > limit) {
			sort_rkeys(k, n);
			return;
		}
	}
}

static size_t count_failed(const struct candidate *cd, const struct bound *b, size_t nas,
			   bool spot)
{
	size_t k, nf = 0;

	for (k = 0; k < nas; k++)
		if (!pass(cd, &b[k], spot))
			nf++;
	return nf;
}

/* resolver_run with a built index (which it completes as c needs). */
static int run_indexed(const struct catalog *cat, const struct candset *cs,
		       struct rindex *ix, const struct contract *c, int flags,
		       struct resolution *out)
{
	uint64_t stackbits[3 * 32], *bits, *surv, *tmp, *ord;
	struct strbuf notes;
	struct bound *b;
	struct rkey *keys = NULL;
	double lb[NDIMS];
	const size_t *pos, *order;
	size_t i, j, k, wi, n = 0, w = ix->w;
	bool explain = flags & RESOLVE_EXPLAIN, spot = c->spot, all_indexed = true;

	memset(out, 0, sizeof(*out));
	sb_init(&notes);
	b = bind(cat, c, explain ? &notes : NULL);
	for (k = 0; k < NDIMS; k++)
		lb[k] = lower_bound(c, dims[k].key);
	bits = w <= 32 ? stackbits : xmalloc(3 * w * sizeof(uint64_t));
	surv = bits;
	tmp = bits + w;
	ord = bits + 2 * w;

	/* the candidates that satisfy every assumption the index can decide */
	memcpy(surv, ix->all, w * sizeof(uint64_t));
	for (k = 0; k < c->nas; k++)
		if (!(b[k].indexed = narrow(ix, cs, &b[k], spot, surv, tmp)))
			all_indexed = false;

	/*
	 * The others, checked on those survivors; each match is marked at its
	 * place in an order that ranks it: cheapest first for rank=price,
	 * least excess over no bounds for rank=fit (the excess over the
	 * contract's bounds is that minus a constant, but for rounding).
	 */
	if (c->rank != RANK_PRICE)
		index_fit(ix, cs);
	pos = c->rank == RANK_PRICE ? ix->price_pos[spot] : ix->fit_pos[spot];
	order = c->rank == RANK_PRICE ? cs->by_price[spot] : ix->fit_order[spot];
	memset(ord, 0, w * sizeof(uint64_t));
	for (wi = 0; wi < w; wi++) {
		uint64_t word = surv[wi];

		while (word) {
			i = wi * 64 + (size_t)__builtin_ctzll(word);
			word &= word - 1;
			if (!all_indexed) {
				for (k = 0; k < c->nas; k++)
					if (!b[k].indexed && !pass(&cs->c[i], &b[k], spot))
						break;
				if (k < c->nas) {
					surv[wi] &= ~((uint64_t)1 << (i % 64));
					continue;
				}
			}
			bit_set(ord, pos[i]);
			n++;
		}
	}
	if (n)
		keys = xmalloc(n * sizeof(*keys));
	for (wi = 0, j = 0; wi < w; wi++) {
		uint64_t word = ord[wi];

		while (word) {
			const struct candidate *cd;
			double price, excess, p;

			i = order[wi * 64 + (size_t)__builtin_ctzll(word)];
			word &= word - 1;
			cd = &cs->c[i];
			price = cand_price(cd, spot);
			excess = excess_of(ix->dimv + i * NDIMS, lb);
			p = isnan(price) ? INFINITY : price;
			keys[j].k1 = c->rank == RANK_PRICE ? p : excess;
			keys[j].k2 = c->rank == RANK_PRICE ? excess : p;
			keys[j].cand = i;
			j++;
		}
	}
	rank_matches(cat, cs, c, flags, keys, n, sort_nearly, out);

	if (explain) {
		/* the near misses: those failing the fewest assumptions, in name
		 * order, at most RESOLVE_MAX_MISSES */
		size_t minfail = (size_t)-1;

		for (i = 0; i < cs->n; i++) {
			size_t nf;
			if (bit_get(surv, i))
				continue;
			nf = count_failed(&cs->c[i], b, c->nas, spot);
			if (nf < minfail)
				minfail = nf;
		}
		for (i = 0; i < cs->n && minfail != (size_t)-1 && out->nmiss < RESOLVE_MAX_MISSES; i++) {
			struct strbuf why;
			char reason[512];

			if (bit_get(surv, i) || count_failed(&cs->c[i], b, c->nas, spot) != minfail)
				continue;
			sb_init(&why);
			for (k = 0; k < c->nas; k++)
				if (!test(cat, &cs->c[i], &b[k], spot, reason, sizeof(reason)))
					sb_addf(&why, "%s%s", why.len ? "; " : "", reason);
			if (!out->miss)
				out->miss = xmalloc(RESOLVE_MAX_MISSES * sizeof(*out->miss));
			out->miss[out->nmiss].cand = i;
			out->miss[out->nmiss].nfailed = minfail;
			out->miss[out->nmiss].reason = sb_take(&why);
			out->nmiss++;
		}
	}
	if (bits != stackbits)
		free(bits);
	if (notes.len)
		out->notes = sb_take(&notes);
	sb_free(&notes);
	unbind(b, c->nas);
	return 0;
}

int resolver_run(const struct catalog *cat, const struct candset *cs,
		 const struct contract *c, int flags, struct resolution *out,
		 burst_err_t *err)
{
	/* the index is a cache that resolver.h allows this to write */
	struct candset *mcs = (struct candset *)cs;

	if (!cs->sorted || cs->n == 0)
		return resolver_run_reference(cat, cs, c, flags, out, err);
	if (!cs->index || cs->index->cat != cat || cs->index->gen != cat->gen) {
		/* first resolve against this catalog generation: remember it, and
		 * resolve without an index (a one-off resolve would not repay it) */
		drop_index(mcs);
		mcs->index = xcalloc(1, sizeof(*mcs->index));
		mcs->index->cat = cat;
		mcs->index->gen = cat->gen;
		return resolver_run_reference(cat, cs, c, flags, out, err);
	}
	if (!cs->index->built)
		index_build(mcs->index, cs);
	return run_indexed(cat, cs, mcs->index, c, flags, out);
}

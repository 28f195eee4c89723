/*
 * resolver.c - match contracts against candidates, rank, explain.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "resolver.h"
#include "strutil.h"

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
	return cs;
}

void candset_free(struct candset *cs)
{
	if (!cs)
		return;
	free(cs->c);
	free(cs);
}

const char *candidate_name(const struct catalog *cat, const struct candidate *cd,
			   char *buf, size_t len)
{
	if (cd->region >= 0)
		snprintf(buf, len, "%s/%s@%s", catalog_str(cat, cd->type->provider),
			 catalog_str(cat, cd->type->name), catalog_str(cat, cd->region));
	else
		snprintf(buf, len, "%s/%s", catalog_str(cat, cd->type->provider),
			 catalog_str(cat, cd->type->name));
	return buf;
}

/* ---- binding a contract to a catalog ---- */

struct bound {
	const struct assumption *a;
	const struct key_info *ki;
	int *ids;            /* KIND_STRING: catalog ids the values stand for */
	size_t nids;
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
		if (b[i].ki->kind != KIND_STRING)
			continue;
		for (k = 0; k < a->nvals; k++) {
			int id = catalog_find_str(cat, a->str[k]);
			size_t before = b[i].nids;

			if (id >= 0)
				add_id(&b[i], id);
			else if (a->key == KEY_ACC_MODEL) {
				/* "A100" stands for every A100-* model */
				size_t vl = strlen(a->str[k]);
				for (s = 0; s < cat->nstrs; s++)
					if (strncasecmp(cat->strs[s], a->str[k], vl) == 0 &&
					    cat->strs[s][vl] == '-')
						add_id(&b[i], (int)s);
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

/*
 * The heart of matching. reason may be NULL (fast path); when given, it is
 * filled with why the candidate fails.
 */
static bool test(const struct catalog *cat, const struct candidate *cd,
		 const struct bound *b, bool spot, char *reason, size_t rlen)
{
	const struct assumption *a = b->a;
	const struct cat_type *t = cd->type;

	switch (b->ki->kind) {
	case KIND_NUMBER: {
		double v = a->key == KEY_PRICE ? cand_price(cd, spot) : t->num[a->key];

		if (isnan(v)) {
			if (reason)
				snprintf(reason, rlen, "%s: %s unknown in the catalog", a->text,
					 a->key == KEY_PRICE ? (spot ? "spot price" : "price") : "value");
			return false;
		}
		if (cmp_num(v, a->op, a->num, a->nvals))
			return true;
		if (reason) {
			char buf[64];
			units_format(v, b->ki->unit, buf, sizeof(buf));
			snprintf(reason, rlen, "%s: has %s", a->text, buf);
		}
		return false;
	}
	case KIND_STRING: {
		int id = a->key == KEY_REGION ? cd->region : t->sid[a->key];
		bool in;

		if (id < 0) {
			if (reason)
				snprintf(reason, rlen, "%s: unknown in the catalog", a->text);
			return false;
		}
		in = has_id(b, id);
		if (a->op == OP_NE ? !in : in)
			return true;
		if (reason)
			snprintf(reason, rlen, "%s: has %s", a->text, catalog_str(cat, id));
		return false;
	}
	case KIND_ARCH: {
		int id = t->sid[KEY_ACC_ARCH];
		const struct arch_info *have, *want;
		size_t k;

		if (id == CATALOG_UNKNOWN) {
			if (reason)
				snprintf(reason, rlen, "%s: architecture unknown in the catalog", a->text);
			return false;
		}
		if (id == ARCH_NONE) {
			if (a->op == OP_NE)
				return true;
			if (reason)
				snprintf(reason, rlen, "%s: has no accelerator", a->text);
			return false;
		}
		have = arch_at((size_t)id);
		switch (a->op) {
		case OP_EQ:
		case OP_IN:
			for (k = 0; k < a->nvals; k++)
				if (a->arch[k] == id)
					return true;
			if (reason) {
				want = arch_at((size_t)a->arch[0]);
				if (a->op == OP_EQ && !strcmp(have->family, want->family) &&
				    have->rank > want->rank)
					snprintf(reason, rlen, "%s: %s is not %s ('=' means exactly; write >=%s for %s or newer)",
						 a->text, have->name, want->name, want->name, want->name);
				else
					snprintf(reason, rlen, "%s: %s is not %s", a->text, have->name,
						 a->op == OP_EQ ? want->name : "in the set");
			}
			return false;
		case OP_NE:
			if (a->arch[0] != id)
				return true;
			if (reason)
				snprintf(reason, rlen, "%s: is %s", a->text, have->name);
			return false;
		default:
			want = arch_at((size_t)a->arch[0]);
			if (strcmp(have->family, want->family) != 0) {
				if (reason)
					snprintf(reason, rlen, "%s: %s (%s) is not comparable with %s (%s)",
						 a->text, have->name, have->vendor, want->name, want->vendor);
				return false;
			}
			{
				double hv = have->rank, wv = want->rank;
				if (cmp_num(hv, a->op, &wv, 1))
					return true;
				if (reason)
					snprintf(reason, rlen, "%s: %s is %s than %s", a->text, have->name,
						 have->rank < want->rank ? "older" : have->rank > want->rank ? "newer" : "the same", want->name);
				return false;
			}
		}
	}
	case KIND_BOOL:
	case KIND_RANK:
		return true;
	}
	return true;
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
		case OP_EQ: case OP_GE: v = a->num[0]; break;
		case OP_GT: v = a->num[0]; break;
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

/*
 * Excess in vCPU-equivalents, with weights after typical cloud price
 * ratios: 1 vCPU ~ 4 GiB of memory ~ 1/8 of an accelerator.
 */
double resolver_excess(const struct cat_type *t, const struct contract *c)
{
	static const struct { enum key_id key; double w; } dims[] = {
		{ KEY_VCPUS, 1.0 },
		{ KEY_MEMORY, 0.25 / 1073741824.0 },
		{ KEY_ACC_COUNT, 8.0 },
	};
	double e = 0;
	size_t d;

	for (d = 0; d < sizeof(dims) / sizeof(dims[0]); d++) {
		double v = t->num[dims[d].key];
		double lb;

		if (isnan(v))
			continue;
		lb = lower_bound(c, dims[d].key);
		if (v > lb)
			e += (v - lb) * dims[d].w;
	}
	return e;
}

struct rank_ctx {
	const struct catalog *cat;
	const struct candset *cs;
	enum rank_mode mode;
};

static int cmp_name(const struct rank_ctx *rc, const struct match *x, const struct match *y)
{
	const struct candidate *a = &rc->cs->c[x->cand], *b = &rc->cs->c[y->cand];
	int r;

	if (a->type->provider != b->type->provider &&
	    (r = strcmp(catalog_str(rc->cat, a->type->provider),
			catalog_str(rc->cat, b->type->provider))))
		return r;
	if (a->type->name != b->type->name &&
	    (r = strcmp(catalog_str(rc->cat, a->type->name), catalog_str(rc->cat, b->type->name))))
		return r;
	if (a->region != b->region) {
		if (a->region < 0 || b->region < 0)
			return a->region < 0 ? 1 : -1;
		if ((r = strcmp(catalog_str(rc->cat, a->region), catalog_str(rc->cat, b->region))))
			return r;
	}
	return (a->nodeset > b->nodeset) - (a->nodeset < b->nodeset);
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

static int cmp_match(const void *pa, const void *pb, void *arg)
{
	const struct rank_ctx *rc = arg;
	const struct match *x = pa, *y = pb;
	int r;

	if (rc->mode == RANK_PRICE) {
		if ((r = cmp_price(x, y)) || (r = cmp_excess(x, y)))
			return r;
	} else {
		if ((r = cmp_excess(x, y)) || (r = cmp_price(x, y)))
			return r;
	}
	return cmp_name(rc, x, y);
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

static int cmp_miss(const void *pa, const void *pb, void *arg)
{
	const struct miss *x = pa, *y = pb;
	const struct rank_ctx *rc = arg;
	struct match mx = { x->cand, 0, 0 }, my = { y->cand, 0, 0 };

	if (x->nfailed != y->nfailed)
		return x->nfailed < y->nfailed ? -1 : 1;
	return cmp_name(rc, &mx, &my);
}

int resolver_run(const struct catalog *cat, const struct candset *cs,
		 const struct contract *c, int flags, struct resolution *out,
		 burst_err_t *err)
{
	struct strbuf notes;
	struct bound *b;
	struct rank_ctx rc = { cat, cs, c->rank };
	size_t i, k, cap = 0, mcap = 0;
	size_t minfail = (size_t)-1;
	bool explain = flags & RESOLVE_EXPLAIN;

	(void)err;
	memset(out, 0, sizeof(*out));
	sb_init(&notes);
	b = bind(cat, c, explain ? &notes : NULL);

	for (i = 0; i < cs->n; i++) {
		const struct candidate *cd = &cs->c[i];

		for (k = 0; k < c->nas; k++)
			if (!test(cat, cd, &b[k], c->spot, NULL, 0))
				break;
		if (k == c->nas) {
			struct match *m;
			if (out->n == cap) {
				cap = cap ? cap * 2 : 32;
				out->m = xrealloc(out->m, cap * sizeof(*out->m));
			}
			m = &out->m[out->n++];
			m->cand = i;
			m->price = cand_price(cd, c->spot);
			m->excess = resolver_excess(cd->type, c);
			continue;
		}
		if (explain) {
			/* count every failed assumption and say why */
			struct strbuf why;
			size_t nf = 0;
			char reason[512];

			for (k = 0; k < c->nas; k++)
				if (!test(cat, cd, &b[k], c->spot, NULL, 0))
					nf++;
			if (nf > minfail + 1 && out->nmiss >= RESOLVE_MAX_MISSES)
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
	if (out->n > 1)
		qsort_r(out->m, out->n, sizeof(*out->m), cmp_match, &rc);
	if (out->n)
		out->why = explain_winner(cat, cs, out, c->rank);
	if (explain && out->nmiss) {
		/* keep the nearest misses: those failing the fewest assumptions */
		size_t keep = 0;
		qsort_r(out->miss, out->nmiss, sizeof(*out->miss), cmp_miss, &rc);
		for (i = 0; i < out->nmiss; i++) {
			if (keep < RESOLVE_MAX_MISSES && out->miss[i].nfailed <= out->miss[0].nfailed + 0)
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

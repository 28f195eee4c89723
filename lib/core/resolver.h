/*
 * resolver.h - match a contract against a set of candidates and rank them.
 *
 * A candidate is an instance type of the catalog in one region (and, when a
 * burst.conf is in use, for one node set). All satisfying candidates are
 * ranked deterministically: by price per hour where known (known before
 * unknown), then by least excess resources, then by name; rank=fit puts
 * excess before price. There is no ambiguity error: the first is launched,
 * the rest are the fallback order.
 */
#ifndef BURST_RESOLVER_H
#define BURST_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include "burst_err.h"
#include "catalog.h"
#include "contract.h"

struct candidate {
	const struct cat_type *type;
	int region;              /* interned id, or CATALOG_UNKNOWN */
	double ondemand, spot;   /* USD/h in that region, NAN if unknown */
	int nodeset;             /* index into the config's node sets, or -1 */
	int provider;            /* index into the config's providers (the one that
				  * launches it: two of one catalog provider, as two
				  * AWS accounts, each have their own), or -1 */
	const char *provider_name; /* that provider's configured name (the
				  * config's string), or NULL: candidate_name
				  * then names the catalog's provider */
};

struct candset {
	struct candidate *c;
	size_t n, cap;
	bool sorted;             /* in name order: resolver_run requires it */
	/* candset_sort also makes the price orders: candidate indexes by
	 * (on-demand price, index) and (spot price, index), unknown last */
	size_t *by_price[2];
	/* resolver_run's index of this set (private to resolver.c): made at
	 * the second resolve against the same catalog generation, dropped by
	 * candset_add, candset_sort and candset_clear */
	struct rindex *index;
};

/*
 * Every type of the catalog in every region it has a price for (one
 * candidate with an unknown region for a type with no price), restricted to
 * providers when providers is non-NULL (NULL-terminated list of names).
 * Caller frees with candset_free.
 */
struct candset *candset_from_catalog(const struct catalog *cat,
				     const char *const *providers);
/* Append a candidate; the set is then unsorted until candset_sort. */
void candset_add(struct candset *cs, const struct cat_type *t, int region,
		 double ondemand, double spot, int nodeset);
/* Put the set in name order (provider, type, region, node set), which is
 * the final tie-break of the ranking. */
void candset_sort(const struct catalog *cat, struct candset *cs);
void candset_free(struct candset *cs);
/* Free what a candset (e.g. one on the stack) holds, and empty it. */
void candset_clear(struct candset *cs);

struct match {
	size_t cand;             /* index into the candset */
	double price;            /* the price ranked by (on-demand or spot), NAN if unknown */
	double excess;           /* excess resources in vCPU-equivalents */
};

struct miss {
	size_t cand;
	size_t nfailed;          /* how many assumptions it fails */
	char *reason;            /* "accelerator_architecture=ampere: ada is not ampere; ..." */
};

struct resolution {
	struct match *m;         /* ranked, best first */
	size_t n;
	char *why;               /* why the first won (with RESOLVE_WHY or RESOLVE_EXPLAIN) */
	struct miss *miss;       /* near misses, with --explain only */
	size_t nmiss;
	char *notes;             /* explanations that concern the contract as a whole */
};

#define RESOLVE_EXPLAIN 0x1     /* near misses and notes */
#define RESOLVE_WHY     0x2     /* why the first won */
/* Near misses reported with RESOLVE_EXPLAIN: those failing the fewest
 * assumptions, at most this many. */
#define RESOLVE_MAX_MISSES 25

/*
 * Resolve c over cs (which must be sorted). Returns 0 (even with no match:
 * out->n == 0) or -1 with err set. out is filled in and must be freed with
 * resolution_free.
 *
 * From the second resolve over the same cs and catalog generation
 * (cat->gen) on, resolver_run uses an index of cs that it builds then and
 * keeps in cs->index: bitsets per feature value and threshold, so that most
 * assumptions become ANDs of bitsets, and orders that rank survivors
 * without sorting all candidates. A feature's bitsets, and rank=fit's
 * order, are made when a contract first needs them. The index is a cache
 * inside an object passed as const, owned by cs (candset_clear and
 * candset_free free it): it is rebuilt when the catalog changes (every
 * catalog_* function that changes it bumps cat->gen; whoever edits types
 * directly must call catalog_index) and dropped by candset_add and
 * candset_sort (change cs->c only through them).
 *
 * Thread safety: resolver_run may write cs->index, so concurrent calls on
 * one cs race, unless resolver_index(cat, cs) was called first and neither
 * the catalog nor cs changes after: then resolver_run only reads cs.
 * Results are identical to resolver_run_reference's, byte for byte.
 */
int resolver_run(const struct catalog *cat, const struct candset *cs,
		 const struct contract *c, int flags, struct resolution *out,
		 burst_err_t *err);
/* The straightforward implementation: every candidate, every assumption.
 * Same contract and output as resolver_run; kept to check it against
 * (tests/unit/test_resolver_diff.c, bench/resolve). Never writes cs. */
int resolver_run_reference(const struct catalog *cat, const struct candset *cs,
			   const struct contract *c, int flags, struct resolution *out,
			   burst_err_t *err);
/* Build resolver_run's whole index of cs now (cs must be sorted; nothing
 * is done otherwise); see above. */
void resolver_index(const struct catalog *cat, struct candset *cs);
void resolution_free(struct resolution *r);

/* Does candidate cd satisfy assumption a? (exported for tests and the
 * node-side hardware check); reason (may be NULL) gets why not. */
bool resolver_satisfies(const struct catalog *cat, const struct candidate *cd,
			const struct assumption *a, char *reason, size_t reasonlen);

/* Excess resources of t over c's lower bounds, in vCPU-equivalents. */
double resolver_excess(const struct cat_type *t, const struct contract *c);

/* "provider/type@region" of a candidate; caller provides the buffer. */
const char *candidate_name(const struct catalog *cat, const struct candidate *cd,
			   char *buf, size_t len);

#endif

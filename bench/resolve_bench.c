/*
 * bench/resolve.c - resolves per second of typical contracts over the whole
 * catalog, single thread: the reference resolver and the indexed one side
 * by side in one run (machines are noisy). Run by bench/resolve; prints
 * figures, asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "contract.h"
#include "resolver.h"

static const char *const contracts[] = {
	"accelerator_count=4 accelerator_architecture=ampere node_memory_size<=256G",
	"accelerator_count>=1 accelerator_architecture>=ampere rank=price",
	"node_vcpus_count>=64 node_memory_size>=256G network_performance>=100G",
	"accelerator=A100 accelerator_count>=8",
	"accelerator_memory_size>=80G node_provider in {aws,gcp}",
	"node_vcpus_count>=4 node_memory_size>=16G processor_isa=aarch64 max_price=1",
	"accelerator_count=0 node_vcpus_count>=2 rank=fit",
};
#define NCONTRACTS (sizeof(contracts) / sizeof(contracts[0]))

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef int (*resolve_fn)(const struct catalog *, const struct candset *,
			  const struct contract *, int, struct resolution *, burst_err_t *);

/* CPU microseconds per call of fn(c), over at least budget seconds. */
static double time_resolve(resolve_fn fn, const struct catalog *cat, const struct candset *cs,
			   const struct contract *c, double budget)
{
	struct resolution r;
	burst_err_t err;
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), t1;
	long n = 0;

	do {
		fn(cat, cs, c, 0, &r, &err);
		resolution_free(&r);
		n++;
	} while ((n & 63) || (t1 = now(CLOCK_THREAD_CPUTIME_ID)) - t0 < budget);
	return (t1 - t0) / (double)n * 1e6;
}

int main(int argc, char **argv)
{
	const char *dir = catalog_default_dir(argc > 1 ? argv[1] : NULL);
	double budget = argc > 2 ? atof(argv[2]) : 0.5;   /* seconds per contract and way */
	burst_err_t err;
	struct catalog *cat = catalog_load(dir, &err);
	struct candset *cs;
	size_t i;
	double total_ref = 0, total_fast = 0;

	if (!cat) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 2;
	}
	cs = candset_from_catalog(cat, NULL);
	printf("catalog: %zu types, %zu candidates (type x priced region), %s\n",
	       cat->ntypes, cs->n, cat->version);
	{
		/* what the index costs to make (resolver_run makes it at the
		 * second resolve over a set) */
		double t0 = now(CLOCK_THREAD_CPUTIME_ID), t1, sort_us;
		long n = 0;
		do {
			candset_sort(cat, cs);
			n++;
		} while ((n & 15) || (t1 = now(CLOCK_THREAD_CPUTIME_ID)) - t0 < budget);
		sort_us = (t1 - t0) / (double)n * 1e6;
		t0 = now(CLOCK_THREAD_CPUTIME_ID);
		n = 0;
		do {
			candset_sort(cat, cs);   /* drops the index */
			resolver_index(cat, cs);
			n++;
		} while ((n & 15) || (t1 = now(CLOCK_THREAD_CPUTIME_ID)) - t0 < budget);
		printf("index of the %zu candidates (made at the second resolve): %.1f us\n", cs->n,
		       (t1 - t0) / (double)n * 1e6 - sort_us);
	}
	printf("us/resolve: resolver_run_reference (every candidate) vs resolver_run (indexed), same run\n");
	printf("%-76s %7s %9s %9s %7s %12s %11s\n", "contract", "matches", "ref us", "fast us",
	       "ratio", "resolves/s", "parse+res");
	for (i = 0; i < NCONTRACTS; i++) {
		struct contract *c = contract_parse(contracts[i], &err);
		struct resolution r;
		double t0, t1, ref, fast, us2;
		long n2 = 0;
		size_t matches;

		if (!c) {
			fprintf(stderr, "bench: %s\n", err.msg);
			return 2;
		}
		/* the index is made at the second resolve: make it before timing */
		resolver_run(cat, cs, c, 0, &r, &err);
		resolution_free(&r);
		resolver_run(cat, cs, c, 0, &r, &err);
		matches = r.n;
		resolution_free(&r);
		/* resolve only: the contract parsed once, as the agent holds it */
		ref = time_resolve(resolver_run_reference, cat, cs, c, budget);
		fast = time_resolve(resolver_run, cat, cs, c, budget);
		/* parse + resolve: what the SPANK plugin does at submit time */
		t0 = now(CLOCK_THREAD_CPUTIME_ID);
		do {
			struct contract *c2 = contract_parse(contracts[i], &err);
			resolver_run(cat, cs, c2, 0, &r, &err);
			resolution_free(&r);
			contract_free(c2);
			n2++;
		} while ((n2 & 63) || (t1 = now(CLOCK_THREAD_CPUTIME_ID)) - t0 < budget);
		us2 = (t1 - t0) / (double)n2 * 1e6;
		total_ref += ref;
		total_fast += fast;
		printf("%-76s %7zu %9.2f %9.2f %6.1fx %12.0f %11.2f\n", contracts[i], matches, ref, fast,
		       ref / fast, 1e6 / fast, us2);
		contract_free(c);
	}
	printf("mean over %zu contracts: reference %.2f us, indexed %.2f us/resolve (%.0f resolves/s), %.1fx; CPU time of one thread\n",
	       NCONTRACTS, total_ref / NCONTRACTS, total_fast / NCONTRACTS,
	       1e6 / (total_fast / NCONTRACTS), total_ref / total_fast);
	candset_free(cs);
	catalog_free(cat);
	return 0;
}

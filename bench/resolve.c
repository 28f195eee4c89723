/*
 * bench/resolve.c - resolves per second of typical contracts over the whole
 * catalog, single thread. Run by bench/resolve; prints figures, asserts
 * nothing.
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

int main(int argc, char **argv)
{
	const char *dir = catalog_default_dir(argc > 1 ? argv[1] : NULL);
	double budget = argc > 2 ? atof(argv[2]) : 0.5;   /* seconds per contract */
	burst_err_t err;
	struct catalog *cat = catalog_load(dir, &err);
	struct candset *cs;
	size_t i;
	double total_us = 0;

	if (!cat) {
		fprintf(stderr, "bench: %s\n", err.msg);
		return 2;
	}
	cs = candset_from_catalog(cat, NULL);
	printf("catalog: %zu types, %zu candidates (type x priced region), %s\n",
	       cat->ntypes, cs->n, cat->version);
	printf("%-78s %8s %10s %12s %14s\n", "contract", "matches", "us/resolve",
	       "resolves/s", "us/parse+res");
	for (i = 0; i < NCONTRACTS; i++) {
		struct contract *c = contract_parse(contracts[i], &err);
		struct resolution r;
		double t0, t1, us, us2;
		long n = 0, n2 = 0;
		size_t matches;

		if (!c) {
			fprintf(stderr, "bench: %s\n", err.msg);
			return 2;
		}
		resolver_run(cat, cs, c, 0, &r, &err);
		matches = r.n;
		resolution_free(&r);
		/* resolve only: the contract parsed once, as the agent holds it */
		t0 = now(CLOCK_THREAD_CPUTIME_ID);
		do {
			resolver_run(cat, cs, c, 0, &r, &err);
			resolution_free(&r);
			n++;
		} while ((n & 63) || (t1 = now(CLOCK_THREAD_CPUTIME_ID)) - t0 < budget);
		us = (t1 - t0) / (double)n * 1e6;
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
		total_us += us;
		printf("%-78s %8zu %10.2f %12.0f %14.2f\n", contracts[i], matches, us, 1e6 / us, us2);
		contract_free(c);
	}
	printf("mean over %zu contracts: %.2f us/resolve (%.0f resolves/s), CPU time of one thread\n",
	       NCONTRACTS, total_us / NCONTRACTS, 1e6 / (total_us / NCONTRACTS));
	candset_free(cs);
	catalog_free(cat);
	return 0;
}

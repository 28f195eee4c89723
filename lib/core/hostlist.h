/*
 * hostlist.h - Slurm host list expressions: "burst-[1-4,7],gpu-[01-08]".
 */
#ifndef BURST_HOSTLIST_H
#define BURST_HOSTLIST_H

#include <stddef.h>
#include "burst_err.h"

struct hostlist {
	char **names;
	size_t n, cap;
};

/*
 * Expand expr into hl (appending). Zero-padded ranges keep their width.
 * Returns 0, or -1 with err saying what is wrong at which character and hl
 * as it was before the call (nothing of expr appended).
 * A list larger than max_hosts is an error (guards against "[1-999999999]"),
 * and so is one whose names would take more than 64 MiB.
 */
int hostlist_expand(const char *expr, struct hostlist *hl, size_t max_hosts,
		    burst_err_t *err);
void hostlist_free(struct hostlist *hl);
/* Index of name in hl, or -1. */
long hostlist_find(const struct hostlist *hl, const char *name);

#endif

/*
 * htab.h - a hash table from strings to pointers: the agent's indexed
 * lookups (nodes by name, jobs by node, prepared statements by their SQL)
 * in place of linear searches.
 *
 * Keys are borrowed, not copied: each key must stay valid, unchanged, for
 * as long as it is in the table. Open addressing, linear probing, deletion
 * by backward shift (no tombstones): every lookup is O(1) on average
 * however many keys came and went.
 */
#ifndef BURST_HTAB_H
#define BURST_HTAB_H

#include <stdbool.h>
#include <stddef.h>

struct htab_slot {
	const char *key;         /* NULL: empty */
	void *val;
	size_t hash;
};

struct htab {
	struct htab_slot *v;
	size_t cap;              /* 0 or a power of two */
	size_t n;
};

#define HTAB_INIT { NULL, 0, 0 }

/* Frees the table's memory (not the keys nor the values); h is empty again. */
void htab_free(struct htab *h);
/* key -> val; replaces val of a key already in. Returns 1 added, 0 replaced. */
int htab_put(struct htab *h, const char *key, void *val);
/* The value of key, or NULL (also for a key whose value is NULL). */
void *htab_get(const struct htab *h, const char *key);
/* Whether key is in; its value in *val if val. */
bool htab_has(const struct htab *h, const char *key, void **val);
/* Removes key; returns whether it was in (its value in *val if val). */
bool htab_del(struct htab *h, const char *key, void **val);
/*
 * Iteration: size_t it = 0; while (htab_next(h, &it, &k, &v)) ...
 * No put or del during it (but htab_free after).
 */
bool htab_next(const struct htab *h, size_t *it, const char **key, void **val);

#endif

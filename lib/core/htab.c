/*
 * htab.c - string-keyed hash table (see htab.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "strutil.h"

/* FNV-1a, 64-bit */
static size_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (size_t)(h ^ (h >> 32));
}

void htab_free(struct htab *h)
{
	free(h->v);
	h->v = NULL;
	h->cap = h->n = 0;
}

/* The slot of key, or the empty slot where it would go. */
static size_t slot_of(const struct htab *h, const char *key, size_t hash)
{
	size_t mask = h->cap - 1, i = hash & mask;

	while (h->v[i].key && (h->v[i].hash != hash || strcmp(h->v[i].key, key)))
		i = (i + 1) & mask;
	return i;
}

static void grow(struct htab *h)
{
	struct htab_slot *old = h->v;
	size_t oldcap = h->cap, i;

	h->cap = oldcap ? oldcap * 2 : 16;
	h->v = xcalloc(h->cap, sizeof(*h->v));
	for (i = 0; i < oldcap; i++)
		if (old[i].key)
			h->v[slot_of(h, old[i].key, old[i].hash)] = old[i];
	free(old);
}

int htab_put(struct htab *h, const char *key, void *val)
{
	size_t hash = hash_of(key), i;

	/* at most 3/4 full: probes stay short */
	if ((h->n + 1) * 4 > h->cap * 3)
		grow(h);
	i = slot_of(h, key, hash);
	if (h->v[i].key) {
		h->v[i].val = val;
		return 0;
	}
	h->v[i].key = key;
	h->v[i].val = val;
	h->v[i].hash = hash;
	h->n++;
	return 1;
}

bool htab_has(const struct htab *h, const char *key, void **val)
{
	size_t i;

	if (!h->n)
		return false;
	i = slot_of(h, key, hash_of(key));
	if (!h->v[i].key)
		return false;
	if (val)
		*val = h->v[i].val;
	return true;
}

void *htab_get(const struct htab *h, const char *key)
{
	void *v = NULL;

	return htab_has(h, key, &v) ? v : NULL;
}

bool htab_del(struct htab *h, const char *key, void **val)
{
	size_t mask, i, j;

	if (!h->n)
		return false;
	mask = h->cap - 1;
	i = slot_of(h, key, hash_of(key));
	if (!h->v[i].key)
		return false;
	if (val)
		*val = h->v[i].val;
	/* backward shift: move up every later key of the run whose home is
	 * not between the hole and it, so that no probe meets a false end */
	for (j = (i + 1) & mask; h->v[j].key; j = (j + 1) & mask) {
		size_t home = h->v[j].hash & mask;
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (!stays) {
			h->v[i] = h->v[j];
			i = j;
		}
	}
	h->v[i].key = NULL;
	h->v[i].val = NULL;
	h->n--;
	return true;
}

bool htab_next(const struct htab *h, size_t *it, const char **key, void **val)
{
	for (; *it < h->cap; (*it)++)
		if (h->v[*it].key) {
			if (key)
				*key = h->v[*it].key;
			if (val)
				*val = h->v[*it].val;
			(*it)++;
			return true;
		}
	return false;
}

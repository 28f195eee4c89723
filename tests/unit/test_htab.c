/*
 * test_htab.c - the string hash table behind the agent's indexed lookups:
 * every key put is found with its value, every key deleted is gone, and
 * the keys that shared its probe run stay found (backward-shift deletion),
 * checked against a plain array over many random puts and deletes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"
#include "tap.h"

#define NKEYS 600

static char keys[NKEYS][16];
static int model[NKEYS];         /* value + 1 of key i in the table, 0: absent */

int main(void)
{
	struct htab h = HTAB_INIT;
	size_t i, it, seen, wrong = 0, n = 0;
	const char *k;
	void *v;
	unsigned seed = 12345;

	ok(htab_get(&h, "x") == NULL && !htab_del(&h, "x", NULL), "an empty table finds and deletes nothing");
	for (i = 0; i < NKEYS; i++)
		snprintf(keys[i], sizeof(keys[i]), "burst-%zu", i);

	/* a put of each, then a replace */
	for (i = 0; i < NKEYS; i++)
		if (htab_put(&h, keys[i], &model[i]) != 1)
			wrong++;
	is_num(wrong, 0, "each new key is added");
	is_num(h.n, NKEYS, "the table counts %d keys", NKEYS);
	ok(h.n * 4 <= h.cap * 3, "it grew to stay at most 3/4 full (%zu of %zu)", h.n, h.cap);
	ok(htab_put(&h, keys[7], &model[8]) == 0 && htab_get(&h, keys[7]) == &model[8] && h.n == NKEYS,
	   "a put of a key already in replaces its value");
	{
		char copy[16];
		strcpy(copy, keys[9]);
		ok(htab_get(&h, copy) == &model[9], "a lookup compares the text, not the pointer");
	}
	ok(htab_get(&h, "burst-") == NULL && htab_get(&h, "burst-6000") == NULL && htab_get(&h, "") == NULL,
	   "keys never put are not found");
	htab_free(&h);
	ok(h.n == 0 && htab_get(&h, keys[1]) == NULL, "a freed table is empty");

	/* random puts and deletes against the model */
	for (i = 0; i < 200000; i++) {
		size_t x;
		seed = seed * 1103515245u + 12345u;
		x = (seed >> 8) % NKEYS;
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 8) % 3) {
			int added = htab_put(&h, keys[x], (void *)(i + 1));
			if (added != !model[x])
				wrong++;
			n += (size_t)added;
			model[x] = (int)(i + 1);
		} else {
			bool was = htab_del(&h, keys[x], &v);
			if (was != (model[x] != 0) || (was && v != (void *)(size_t)model[x]))
				wrong++;
			n -= was;
			model[x] = 0;
		}
		if (i % 997 == 0) {
			size_t y;
			for (y = 0; y < NKEYS; y++) {
				bool has = htab_has(&h, keys[y], &v);
				if (has != (model[y] != 0) || (has && v != (void *)(size_t)model[y]))
					wrong++;
			}
		}
	}
	is_num(wrong, 0, "200,000 random puts and deletes: every answer matches the model");
	is_num(h.n, n, "the count matches the model (%zu keys)", n);

	/* iteration visits each key once */
	for (it = 0, seen = 0, wrong = 0; htab_next(&h, &it, &k, &v); seen++) {
		size_t x = strtoul(k + 6, NULL, 10);
		if (x >= NKEYS || !model[x] || v != (void *)(size_t)model[x])
			wrong++;
		model[x] = -model[x];    /* visited */
	}
	is_num(seen, n, "iteration visits every key");
	is_num(wrong, 0, "each once, with its value");

	/* deleting all of them leaves nothing behind */
	for (i = 0, wrong = 0; i < NKEYS; i++)
		if (model[i] && !htab_del(&h, keys[i], NULL))
			wrong++;
	is_num(wrong, 0, "every key in can be deleted");
	is_num(h.n, 0, "and the table is empty after");
	for (i = 0, wrong = 0; i < h.cap; i++)
		if (h.v[i].key)
			wrong++;
	is_num(wrong, 0, "with no slot left in use");
	htab_free(&h);
	return done_testing();
}

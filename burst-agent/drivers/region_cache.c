/*
 * region_cache.c - a provider driver's clients per region (region_cache.h).
 */
#include <stdlib.h>
#include <string.h>

#include "region_cache.h"
#include "strutil.h"

void *region_cache_get(const struct region_cache *rc, const char *region)
{
	size_t i;

	for (i = 0; i < rc->n; i++)
		if (!strcmp(rc->regions[i], region))
			return rc->clients[i];
	return NULL;
}

void region_cache_put(struct region_cache *rc, const char *region, void *client)
{
	rc->regions = xrealloc(rc->regions, (rc->n + 1) * sizeof(*rc->regions));
	rc->clients = xrealloc(rc->clients, (rc->n + 1) * sizeof(*rc->clients));
	rc->regions[rc->n] = xstrdup(region);
	rc->clients[rc->n] = client;
	rc->n++;
}

void region_cache_free(struct region_cache *rc, void (*free_client)(void *))
{
	size_t i;

	for (i = 0; i < rc->n; i++) {
		free_client(rc->clients[i]);
		free(rc->regions[i]);
	}
	free(rc->regions);
	free(rc->clients);
	memset(rc, 0, sizeof(*rc));
}

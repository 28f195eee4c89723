/*
 * region_cache.h - a provider driver's clients, one per region, made on
 * first use and kept until the provider is freed. An entry's client pointer
 * stays where it is when later regions are added (a driver may hold one
 * region's client while it makes another's).
 */
#ifndef BURST_REGION_CACHE_H
#define BURST_REGION_CACHE_H

#include <stddef.h>

struct region_cache {
	char **regions;
	void **clients;
	size_t n;
};

/* The client of region, or NULL when there is none yet. */
void *region_cache_get(const struct region_cache *rc, const char *region);

/* Keep client as region's (the region is copied; one not there yet). */
void region_cache_put(struct region_cache *rc, const char *region, void *client);

/* Free every client with free_client, then the cache's own memory. */
void region_cache_free(struct region_cache *rc, void (*free_client)(void *));

#endif

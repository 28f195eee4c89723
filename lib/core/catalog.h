/*
 * catalog.h - instance catalogs: one CSV per provider in a directory
 * (share/catalog/<provider>.csv and <provider>-prices.csv), plus rows and
 * prices that burst.conf adds or overrides.
 *
 * Values are canonical: sizes in bytes, network in Gbit/s, prices in USD
 * per hour. An unknown numeric value is NAN, an unknown string is -1; a
 * type with no accelerator has accelerator_count 0 and the string "none"
 * in its accelerator name fields.
 */
#ifndef BURST_CATALOG_H
#define BURST_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include "burst_err.h"
#include "keys.h"

#define CATALOG_UNKNOWN (-1)

struct cat_price {
	int region;              /* interned string id */
	double ondemand;         /* NAN if unknown */
	double spot;             /* NAN if unknown */
};

struct cat_type {
	int provider;            /* interned string id */
	int name;                /* interned string id */
	/* For KIND_NUMBER features: value; NAN when unknown. */
	double num[KEY_NFEATURES];
	/* For KIND_STRING features: interned id, CATALOG_UNKNOWN when unknown;
	 * for KEY_ACC_ARCH: index into the arch table, ARCH_NONE or unknown. */
	int sid[KEY_NFEATURES];
	struct cat_price *prices;
	size_t nprices;
	const char *source;      /* "file:line" or "burst.conf:line" */
};

#define ARCH_NONE (-2)

struct catalog {
	struct cat_type *types;
	size_t ntypes, captypes;
	/* interned strings; ids index this array */
	char **strs;
	size_t nstrs, capstrs;
	int *hash;               /* open addressing, -1 empty */
	size_t hashcap;
	int none_id;             /* id of "none" */
	char *dir;
	char *version;           /* "aws=2026.11.22 gcp=2026.11.22" */
	char checksum[65];       /* sha256 of the loaded files, hex ("" with CATALOG_NO_CHECKSUM) */
	char **sources;          /* "file:line" strings owned here */
	size_t nsources, capsources;
	/* the distinct accelerator model ids (for "A100" = every A100-*);
	 * made by catalog_index */
	int *models;
	size_t nmodels;
	/* changes (process-wide unique, increasing) whenever the catalog does:
	 * catalog_intern of a new string, catalog_add_type, catalog_set_price,
	 * catalog_index; caches of derived data (the resolver's index) compare it */
	unsigned long gen;
};

/*
 * Load every <provider>.csv (and its -prices.csv) in dir.
 * Returns a new catalog (free with catalog_free) or NULL with err set,
 * naming file:line and the column for bad data.
 */
struct catalog *catalog_load(const char *dir, burst_err_t *err);
/*
 * The same, with flags: CATALOG_NO_CHECKSUM leaves checksum empty ("") and
 * reads each file once (the SPANK plugin, which decides with the catalog in
 * every sbatch with --cloud-contract and never shows its checksum).
 */
#define CATALOG_NO_CHECKSUM 1u
struct catalog *catalog_load_opts(const char *dir, unsigned flags, burst_err_t *err);
/*
 * The same, reading only the files of the providers named in only[0..nonly)
 * (case-insensitive, as the catalog's names match; only NULL: every one).
 * The directory is checked as catalog_load does (it must exist and hold a
 * <provider>.csv), and a provider without a file is no error (the local
 * provider's types come from burst.conf). The version lists the providers
 * read. For the SPANK plugin: a decision only ever draws candidates from
 * the configured providers' catalogs (config_candidates).
 */
struct catalog *catalog_load_providers(const char *dir, unsigned flags, const char *const *only,
				       size_t nonly, burst_err_t *err);
void catalog_free(struct catalog *cat);

/*
 * The catalog directory to use: explicit (if not NULL), else
 * $BURST_CATALOG_DIR, else the source tree's share/catalog when running from
 * the build tree, else the installed one. Returns a static or given string.
 */
const char *catalog_default_dir(const char *explicit_dir);

/* Intern s (case-insensitive match; first spelling wins); returns its id. */
int catalog_intern(struct catalog *cat, const char *s);
/* The id of s, or CATALOG_UNKNOWN when no catalog value is spelled so. */
int catalog_find_str(const struct catalog *cat, const char *s);
const char *catalog_str(const struct catalog *cat, int id);

/* Find a type by "name" or "provider:name"; NULL if none. */
struct cat_type *catalog_find_type(const struct catalog *cat, const char *name);

/*
 * Set or add a price of a type in a region. Returns 0.
 */
int catalog_set_price(struct catalog *cat, struct cat_type *t, const char *region,
		      double ondemand, double spot);

/* Add an empty type (all unknown) and return it. */
struct cat_type *catalog_add_type(struct catalog *cat, const char *provider,
				  const char *name, const char *source);

/* Rebuild the indexes (accelerator models) after types were added or
 * changed, and bump gen; catalog_load calls it, and so must whoever edits
 * types (a type's num[] or sid[] written directly). */
void catalog_index(struct catalog *cat);

/* A type without accelerators (count 0): model, type and manufacturer
 * "none", architecture ARCH_NONE, accelerator memory 0, never unknown. */
void catalog_no_accelerators(const struct catalog *cat, struct cat_type *t);

/* Record a source string and return a pointer owned by the catalog. */
const char *catalog_source(struct catalog *cat, const char *src);

#endif

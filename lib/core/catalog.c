/*
 * catalog.c - load instance catalogs and prices from CSV files.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#include "arch.h"
#include "catalog.h"
#include "confwords.h"
#include "sha256.h"
#include "strutil.h"

#define MAX_LINE 4096
#define MAX_COLS 32

/* A new generation for cat: unique across the process, so that a cache
 * keyed on (catalog, gen) never mistakes a new catalog at a reused address
 * for the one it was made for. */
static void bump_gen(struct catalog *cat)
{
	static unsigned long gens;

	cat->gen = __atomic_add_fetch(&gens, 1, __ATOMIC_RELAXED);
}

/* ---- string interning (case-insensitive) ---- */

static unsigned long hash_ci(const char *s)
{
	unsigned long h = 5381;

	/* ASCII case folding, inline: what strcasecmp folds in the C locale
	 * (the catalog's names are ASCII; tolower() was a call a character) */
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		h = h * 33 + (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
	}
	return h;
}

static void rehash(struct catalog *cat, size_t cap)
{
	size_t i;

	free(cat->hash);
	cat->hashcap = cap;
	cat->hash = xmalloc(cap * sizeof(int));
	for (i = 0; i < cap; i++)
		cat->hash[i] = -1;
	for (i = 0; i < cat->nstrs; i++) {
		size_t h = hash_ci(cat->strs[i]) & (cap - 1);
		while (cat->hash[h] >= 0)
			h = (h + 1) & (cap - 1);
		cat->hash[h] = (int)i;
	}
}

int catalog_find_str(const struct catalog *cat, const char *s)
{
	size_t h;

	if (!cat->hashcap)
		return CATALOG_UNKNOWN;
	h = hash_ci(s) & (cat->hashcap - 1);
	while (cat->hash[h] >= 0) {
		if (strcasecmp(cat->strs[cat->hash[h]], s) == 0)
			return cat->hash[h];
		h = (h + 1) & (cat->hashcap - 1);
	}
	return CATALOG_UNKNOWN;
}

int catalog_intern(struct catalog *cat, const char *s)
{
	int id = catalog_find_str(cat, s);

	if (id >= 0)
		return id;
	if (cat->nstrs == cat->capstrs) {
		cat->capstrs = cat->capstrs ? cat->capstrs * 2 : 256;
		cat->strs = xrealloc(cat->strs, cat->capstrs * sizeof(char *));
	}
	cat->strs[cat->nstrs++] = xstrdup(s);
	bump_gen(cat);
	if (cat->nstrs * 2 > cat->hashcap)
		rehash(cat, cat->hashcap ? cat->hashcap * 2 : 1024);
	else {
		size_t h = hash_ci(s) & (cat->hashcap - 1);
		while (cat->hash[h] >= 0)
			h = (h + 1) & (cat->hashcap - 1);
		cat->hash[h] = (int)(cat->nstrs - 1);
	}
	return (int)(cat->nstrs - 1);
}

const char *catalog_str(const struct catalog *cat, int id)
{
	if (id == ARCH_NONE)
		return "none";
	if (id < 0 || (size_t)id >= cat->nstrs)
		return NULL;
	return cat->strs[id];
}

void catalog_no_accelerators(const struct catalog *cat, struct cat_type *t)
{
	t->sid[KEY_ACC_MODEL] = cat->none_id;
	t->sid[KEY_ACC_TYPE] = cat->none_id;
	t->sid[KEY_ACC_MANUFACTURER] = cat->none_id;
	t->sid[KEY_ACC_ARCH] = ARCH_NONE;
	t->num[KEY_ACC_MEMORY] = 0;
}

const char *catalog_source(struct catalog *cat, const char *src)
{
	if (cat->nsources == cat->capsources) {
		cat->capsources = cat->capsources ? cat->capsources * 2 : 16;
		cat->sources = xrealloc(cat->sources, cat->capsources * sizeof(char *));
	}
	cat->sources[cat->nsources] = xstrdup(src);
	return cat->sources[cat->nsources++];
}

struct cat_type *catalog_add_type(struct catalog *cat, const char *provider,
				  const char *name, const char *source)
{
	struct cat_type *t;
	size_t k;

	/* doubling: a type is ~250 bytes, and a row at a time (+1) copied the
	 * whole array again and again while a catalog loaded */
	if (cat->ntypes == cat->captypes) {
		cat->captypes = cat->captypes ? cat->captypes * 2 : 256;
		cat->types = xrealloc(cat->types, cat->captypes * sizeof(*t));
	}
	t = &cat->types[cat->ntypes++];
	memset(t, 0, sizeof(*t));
	for (k = 0; k < KEY_NFEATURES; k++) {
		t->num[k] = NAN;
		t->sid[k] = CATALOG_UNKNOWN;
	}
	t->provider = catalog_intern(cat, provider);
	t->name = catalog_intern(cat, name);
	t->sid[KEY_PROVIDER] = t->provider;
	t->sid[KEY_MACHINETYPE] = t->name;
	t->source = source;
	bump_gen(cat);
	return t;
}

struct cat_type *catalog_find_type(const struct catalog *cat, const char *name)
{
	const char *colon = strchr(name, ':');
	int pid = CATALOG_UNKNOWN, nid;
	size_t i;

	if (colon) {
		char *p = xstrndup(name, (size_t)(colon - name));
		pid = catalog_find_str(cat, p);
		free(p);
		if (pid < 0)
			return NULL;
		name = colon + 1;
	}
	nid = catalog_find_str(cat, name);
	if (nid < 0)
		return NULL;
	for (i = 0; i < cat->ntypes; i++)
		if (cat->types[i].name == nid && (pid < 0 || cat->types[i].provider == pid))
			return &cat->types[i];
	return NULL;
}

int catalog_set_price(struct catalog *cat, struct cat_type *t, const char *region,
		      double ondemand, double spot)
{
	int rid = catalog_intern(cat, region);
	size_t i;

	bump_gen(cat);
	for (i = 0; i < t->nprices; i++)
		if (t->prices[i].region == rid) {
			t->prices[i].ondemand = ondemand;
			t->prices[i].spot = spot;
			return 0;
		}
	t->prices = xrealloc(t->prices, (t->nprices + 1) * sizeof(*t->prices));
	t->prices[t->nprices].region = rid;
	t->prices[t->nprices].ondemand = ondemand;
	t->prices[t->nprices].spot = spot;
	t->nprices++;
	return 0;
}

/* ---- CSV ---- */

/* Split line in place at commas (no quoting: catalog cells hold none). */
static size_t split_csv(char *line, char **cols, size_t max)
{
	size_t n = 0;
	char *p = line;

	for (;;) {
		char *c = strchr(p, ',');
		if (n < max)
			cols[n] = p;
		n++;
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	return n;
}

static int col_index(char **hdr, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(hdr[i], name) == 0)
			return (int)i;
	return -1;
}

static int parse_num(const char *cell, double *out)
{
	char *end;
	double v;

	if (!*cell) {
		*out = NAN;
		return 0;
	}
	/* the tables are plain decimals: most cells without strtod (a third
	 * of a load was strtod's before) */
	if (str_decimal_fast(cell, out))
		return 0;
	errno = 0;
	v = strtod(cell, &end);
	if (errno || *end || v < 0 || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static void chomp(char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
}

struct colmap {
	const char *name;
	enum key_id key;
	double scale;        /* numbers: multiply; 0 for strings */
	bool arch;
};

static const struct colmap type_cols[] = {
	{ "vcpus", KEY_VCPUS, 1, false },
	{ "memory_mib", KEY_MEMORY, 1048576.0, false },
	{ "accelerator_count", KEY_ACC_COUNT, 1, false },
	{ "accelerator", KEY_ACC_MODEL, 0, false },
	{ "accelerator_type", KEY_ACC_TYPE, 0, false },
	{ "accelerator_manufacturer", KEY_ACC_MANUFACTURER, 0, false },
	{ "accelerator_architecture", KEY_ACC_ARCH, 0, true },
	{ "accelerator_memory_mib", KEY_ACC_MEMORY, 1048576.0, false },
	{ "processor", KEY_PROCESSOR, 0, false },
	{ "processor_manufacturer", KEY_PROC_MANUFACTURER, 0, false },
	{ "processor_microarchitecture", KEY_PROC_UARCH, 0, false },
	{ "processor_isa", KEY_PROC_ISA, 0, false },
	{ "storage_type", KEY_STORAGE_TYPE, 0, false },
	{ "storage_gib", KEY_STORAGE_SIZE, 1073741824.0, false },
	{ "network_gbps", KEY_NETWORK, 1, false },
};
#define NTYPE_COLS (sizeof(type_cols) / sizeof(type_cols[0]))

/* Feed a file's bytes into the checksum and return its lines via f. */
/* Feed a file's name and bytes into the checksum (md NULL: none) and return
 * its lines via f. */
static FILE *open_hashed(const char *path, struct sha256 *md, burst_err_t *err)
{
	FILE *f = fopen(path, "r");
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char buf[8192];
	size_t n;

	if (!f) {
		burst_err_set(err, "%s: cannot open catalog file: %s", path, strerror(errno));
		return NULL;
	}
	if (!md)
		return f;
	sha256_update(md, base, strlen(base));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sha256_update(md, buf, n);
	rewind(f);
	return f;
}

static void note_version(struct catalog *cat, const char *provider, const char *line)
{
	const char *v = strstr(line, "version=");
	char ver[64];
	size_t n = 0;
	struct strbuf sb;

	if (!v)
		return;
	v += 8;
	while (v[n] && !isspace((unsigned char)v[n]) && n < sizeof(ver) - 1)
		n++;
	snprintf(ver, sizeof(ver), "%.*s", (int)n, v);
	sb_init(&sb);
	if (cat->version)
		sb_addf(&sb, "%s ", cat->version);
	sb_addf(&sb, "%s=%s", provider, ver);
	free(cat->version);
	cat->version = sb_take(&sb);
}

static int load_types(struct catalog *cat, const char *path, const char *provider,
		      struct sha256 *md, burst_err_t *err)
{
	FILE *f = open_hashed(path, md, err);
	char line[MAX_LINE], hdrline[MAX_LINE];
	char *hdr[MAX_COLS], *cols[MAX_COLS];
	size_t nhdr = 0, ncols, lineno = 0, k;
	int idx[NTYPE_COLS], name_col = -1;
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			burst_err_set(err, "%s:%zu: line longer than %d bytes", path, lineno, MAX_LINE);
			goto out;
		}
		chomp(line);
		if (line[0] == '#') {
			note_version(cat, provider, line);
			continue;
		}
		if (!line[0])
			continue;
		if (nhdr == 0) {
			memcpy(hdrline, line, sizeof(line));
			nhdr = split_csv(hdrline, hdr, MAX_COLS);
			if (nhdr > MAX_COLS) {
				burst_err_set(err, "%s:%zu: too many columns (%zu)", path, lineno, nhdr);
				goto out;
			}
			name_col = col_index(hdr, nhdr, "instance_type");
			if (name_col < 0) {
				burst_err_set(err, "%s:%zu: header has no 'instance_type' column", path, lineno);
				goto out;
			}
			for (k = 0; k < NTYPE_COLS; k++) {
				idx[k] = col_index(hdr, nhdr, type_cols[k].name);
				if (idx[k] < 0) {
					burst_err_set(err, "%s:%zu: header has no '%s' column", path, lineno,
						      type_cols[k].name);
					goto out;
				}
			}
			continue;
		}
		ncols = split_csv(line, cols, MAX_COLS);
		if (ncols != nhdr) {
			burst_err_set(err, "%s:%zu: %zu cells where the header has %zu (a comma inside a value?)",
				      path, lineno, ncols, nhdr);
			goto out;
		}
		if (!cols[name_col][0]) {
			burst_err_set(err, "%s:%zu: empty instance_type", path, lineno);
			goto out;
		}
		{
			char src[PATH_MAX + 32];
			struct cat_type *t;
			const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

			if (catalog_find_str(cat, cols[name_col]) >= 0) {
				int pid = catalog_find_str(cat, provider);
				int nid = catalog_find_str(cat, cols[name_col]);
				size_t j;
				for (j = 0; j < cat->ntypes; j++)
					if (cat->types[j].name == nid && cat->types[j].provider == pid) {
						burst_err_set(err, "%s:%zu: instance type %s is listed twice (first at %s)",
							      path, lineno, cols[name_col], cat->types[j].source);
						goto out;
					}
			}
			/* "FILE:LINE", a row at a time: without snprintf (an eighth of a load was it) */
			{
				size_t bl = strlen(base), dl = 0;
				char digits[24];
				size_t v = lineno;
				do
					digits[dl++] = (char)('0' + v % 10);
				while ((v /= 10) && dl < sizeof(digits));
				if (bl > sizeof(src) - sizeof(digits) - 2)
					bl = sizeof(src) - sizeof(digits) - 2;
				memcpy(src, base, bl);
				src[bl] = ':';
				for (size_t q = 0; q < dl; q++)
					src[bl + 1 + q] = digits[dl - 1 - q];
				src[bl + 1 + dl] = '\0';
			}
			t = catalog_add_type(cat, provider, cols[name_col], catalog_source(cat, src));
			for (k = 0; k < NTYPE_COLS; k++) {
				const struct colmap *cm = &type_cols[k];
				const char *cell = cols[idx[k]];

				if (cm->arch) {
					const struct arch_info *ai;
					if (!*cell)
						continue;
					ai = arch_lookup(cell);
					if (!ai) {
						burst_err_set(err, "%s:%zu: unknown accelerator_architecture '%s' for %s (add it to lib/core/arch.c or fix the row)",
							      path, lineno, cell, cols[name_col]);
						goto out;
					}
					t->sid[cm->key] = (int)(ai - arch_at(0));
				} else if (cm->scale == 0) {
					if (*cell)
						t->sid[cm->key] = catalog_intern(cat, cell);
				} else {
					double v;
					if (parse_num(cell, &v) < 0) {
						burst_err_set(err, "%s:%zu: column %s of %s: '%s' is not a non-negative number",
							      path, lineno, cm->name, cols[name_col], cell);
						goto out;
					}
					t->num[cm->key] = isnan(v) ? v : v * cm->scale;
				}
			}
			if (t->num[KEY_ACC_COUNT] == 0)
				catalog_no_accelerators(cat, t);
		}
	}
	if (nhdr == 0) {
		burst_err_set(err, "%s: no header line (empty catalog file?)", path);
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	return rc;
}

static int load_prices(struct catalog *cat, const char *path, const char *provider,
		       struct sha256 *md, burst_err_t *err)
{
	FILE *f = open_hashed(path, md, err);
	char line[MAX_LINE], hdrline[MAX_LINE];
	char *hdr[MAX_COLS], *cols[MAX_COLS];
	size_t nhdr = 0, lineno = 0;
	int ci[4] = { -1, -1, -1, -1 };
	int rc = -1, pid = catalog_find_str(cat, provider);
	/* the provider's types by their name's string id (the first of a name,
	 * as catalog_find_type finds it): a price row finds its type at once */
	size_t nbyname = cat->nstrs, i;
	int *byname = xmalloc((nbyname ? nbyname : 1) * sizeof(int));

	for (i = 0; i < nbyname; i++)
		byname[i] = -1;
	for (i = 0; i < cat->ntypes; i++) {
		const struct cat_type *t = &cat->types[i];
		if (t->provider == pid && t->name >= 0 && (size_t)t->name < nbyname && byname[t->name] < 0)
			byname[t->name] = (int)i;
	}
	if (!f) {
		free(byname);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		chomp(line);
		if (line[0] == '#' || !line[0])
			continue;
		if (nhdr == 0) {
			memcpy(hdrline, line, sizeof(line));
			nhdr = split_csv(hdrline, hdr, MAX_COLS);
			ci[0] = col_index(hdr, nhdr, "instance_type");
			ci[1] = col_index(hdr, nhdr, "region");
			ci[2] = col_index(hdr, nhdr, "ondemand_usd_per_hour");
			ci[3] = col_index(hdr, nhdr, "spot_usd_per_hour");
			if (ci[0] < 0 || ci[1] < 0 || ci[2] < 0 || ci[3] < 0) {
				burst_err_set(err, "%s:%zu: header must have instance_type,region,ondemand_usd_per_hour,spot_usd_per_hour",
					      path, lineno);
				goto out;
			}
			continue;
		}
		if (split_csv(line, cols, MAX_COLS) != nhdr) {
			burst_err_set(err, "%s:%zu: wrong number of cells", path, lineno);
			goto out;
		}
		{
			int nid = catalog_find_str(cat, cols[ci[0]]);
			struct cat_type *t;
			double od, sp;

			if (nid < 0 || (size_t)nid >= nbyname || byname[nid] < 0)
				continue;   /* a price for a type this catalog does not describe */
			t = &cat->types[byname[nid]];
			if (parse_num(cols[ci[2]], &od) < 0 || parse_num(cols[ci[3]], &sp) < 0) {
				burst_err_set(err, "%s:%zu: price of %s is not a non-negative number",
					      path, lineno, cols[ci[0]]);
				goto out;
			}
			if (!cols[ci[1]][0]) {
				burst_err_set(err, "%s:%zu: empty region", path, lineno);
				goto out;
			}
			catalog_set_price(cat, t, cols[ci[1]], od, sp);
		}
	}
	rc = 0;
out:
	free(byname);
	fclose(f);
	return rc;
}

void catalog_index(struct catalog *cat)
{
	size_t i, k;

	bump_gen(cat);
	cat->nmodels = 0;
	for (i = 0; i < cat->ntypes; i++) {
		int id = cat->types[i].sid[KEY_ACC_MODEL];
		if (id < 0 || id == cat->none_id)
			continue;
		for (k = 0; k < cat->nmodels; k++)
			if (cat->models[k] == id)
				break;
		if (k < cat->nmodels)
			continue;
		cat->models = xrealloc(cat->models, (cat->nmodels + 1) * sizeof(int));
		cat->models[cat->nmodels++] = id;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct catalog *catalog_load(const char *dir, burst_err_t *err)
{
	return catalog_load_opts(dir, 0, err);
}

struct catalog *catalog_load_opts(const char *dir, unsigned flags, burst_err_t *err)
{
	return catalog_load_providers(dir, flags, NULL, 0, err);
}

static bool wanted(const char *provider, const char *const *only, size_t nonly)
{
	size_t i;

	if (!only)
		return true;
	for (i = 0; i < nonly; i++)
		if (only[i] && strcasecmp(only[i], provider) == 0)
			return true;
	return false;
}

struct catalog *catalog_load_providers(const char *dir, unsigned flags, const char *const *only,
				       size_t nonly, burst_err_t *err)
{
	struct catalog *cat = xcalloc(1, sizeof(*cat));
	struct sha256 md, *sum;
	DIR *d = opendir(dir);
	struct dirent *de;
	char **files = NULL;
	size_t nfiles = 0, i;
	unsigned char digest[32];
	int ok = 0;

	cat->dir = xstrdup(dir);
	cat->none_id = catalog_intern(cat, "none");
	if (!d) {
		burst_err_set(err, "cannot open catalog directory %s: %s (set --catalog-dir, BURST_CATALOG_DIR or CatalogDir=)",
			      dir, strerror(errno));
		goto done;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n > 4 && strcmp(de->d_name + n - 4, ".csv") == 0 &&
		    !(n > 11 && strcmp(de->d_name + n - 11, "-prices.csv") == 0)) {
			files = xrealloc(files, (nfiles + 1) * sizeof(char *));
			files[nfiles++] = xstrndup(de->d_name, n - 4);
		}
	}
	closedir(d);
	if (nfiles == 0) {
		burst_err_set(err, "catalog directory %s holds no <provider>.csv file", dir);
		goto done;
	}
	qsort(files, nfiles, sizeof(char *), cmp_str);
	/* the directory's checks above are the whole load's: a subset only skips files */
	if (only) {
		size_t kept = 0;
		for (i = 0; i < nfiles; i++) {
			if (wanted(files[i], only, nonly))
				files[kept++] = files[i];
			else
				free(files[i]);
		}
		nfiles = kept;
	}
	sha256_init(&md);
	sum = (flags & CATALOG_NO_CHECKSUM) ? NULL : &md;
	for (i = 0; i < nfiles; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s.csv", dir, files[i]);
		if (load_types(cat, path, files[i], sum, err) < 0)
			goto done;
		snprintf(path, sizeof(path), "%s/%s-prices.csv", dir, files[i]);
		if (access(path, F_OK) == 0 && load_prices(cat, path, files[i], sum, err) < 0)
			goto done;
	}
	if (sum) {
		sha256_final(sum, digest);
		sha256_hex(digest, cat->checksum);
	}
	if (!cat->version)
		cat->version = xstrdup("unversioned");
	catalog_index(cat);
	ok = 1;
done:
	for (i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	if (!ok) {
		catalog_free(cat);
		return NULL;
	}
	return cat;
}

void catalog_free(struct catalog *cat)
{
	size_t i;

	if (!cat)
		return;
	for (i = 0; i < cat->ntypes; i++)
		free(cat->types[i].prices);
	free(cat->types);
	for (i = 0; i < cat->nstrs; i++)
		free(cat->strs[i]);
	free(cat->strs);
	free(cat->hash);
	for (i = 0; i < cat->nsources; i++)
		free(cat->sources[i]);
	free(cat->sources);
	free(cat->models);
	free(cat->dir);
	free(cat->version);
	free(cat);
}

const char *catalog_default_dir(const char *explicit_dir)
{
	static char buf[PATH_MAX];

	return share_default_path(explicit_dir, "BURST_CATALOG_DIR", "catalog", buf, sizeof(buf));
}

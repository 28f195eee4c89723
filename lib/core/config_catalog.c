/*
 * config_catalog.c - InstanceType= and Price= lines (catalog overrides),
 * and the candidates the configuration offers.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "arch.h"
#include "units.h"

#include "config_int.h"
#include "strutil.h"

static void add_override(struct burst_config *cfg, struct cfg_override *o)
{
	cfg->overrides = xrealloc(cfg->overrides, (cfg->noverrides + 1) * sizeof(*o));
	cfg->overrides[cfg->noverrides++] = *o;
}

void cfg_free_override(struct cfg_override *o)
{
	size_t i;

	free(o->provider);
	free(o->type);
	free(o->region);
	for (i = 0; i < o->nvals; i++)
		free(o->vals[i].str);
	free(o->vals);
	free(o->where.file);
}

void cfg_parse_price(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	static const char *const keys[] = { "Price", "Provider", "Region", "OnDemand", "Spot", "Stopped", NULL };
	struct cfg_override o;
	int k, before = ld->errs.n;

	memset(&o, 0, sizeof(o));
	o.kind = OVERRIDE_PRICE;
	o.type = xstrdup(w[0].val);
	o.ondemand = o.spot = o.stopped = NAN;
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		if (!key) {
			cfg_err(ld, file, line, "expected Key=Value, found '%s'", val);
			continue;
		}
		if (str_ieq(key, "Provider"))
			free(o.provider), o.provider = xstrdup(val);
		else if (str_ieq(key, "Region"))
			free(o.region), o.region = xstrdup(val);
		else if (str_ieq(key, "OnDemand") || str_ieq(key, "Spot") || str_ieq(key, "Stopped")) {
			double v;
			char msg[200];
			if (units_parse(val, strlen(val), UNIT_PRICE, &v, msg, sizeof(msg), NULL) < 0)
				cfg_err(ld, file, line, "Price %s: %s=%s: %s", o.type, key, val, msg);
			else if (str_ieq(key, "OnDemand"))
				o.ondemand = v;
			else if (str_ieq(key, "Spot"))
				o.spot = v;
			else
				o.stopped = v;
		} else
			cfg_unknown_key(ld, file, line, "Price", key, keys);
	}
	/* a stopped instance's price may hold in every region: Region= is then optional */
	if (!o.provider || (!o.region && (!isnan(o.ondemand) || !isnan(o.spot) || isnan(o.stopped))))
		cfg_err(ld, file, line, "Price %s needs Provider= and Region=", o.type);
	if (isnan(o.ondemand) && isnan(o.spot) && isnan(o.stopped))
		cfg_err(ld, file, line, "Price %s needs OnDemand=, Spot= and/or Stopped= (US dollars per hour; Stopped=: per hour an instance of it is kept stopped)",
			o.type);
	if (ld->errs.n != before) {
		cfg_free_override(&o);
		return;
	}
	o.where = cfg_where_of(file, line);
	add_override(ld->cfg, &o);
}

void cfg_parse_itype(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	struct cfg_override o;
	int k, before = ld->errs.n;

	memset(&o, 0, sizeof(o));
	o.kind = OVERRIDE_TYPE;
	o.type = xstrdup(w[0].val);
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		const struct key_info *ki;
		struct cfg_value v;

		if (!key) {
			cfg_err(ld, file, line, "expected Key=Value, found '%s'", val);
			continue;
		}
		if (str_ieq(key, "Provider")) {
			free(o.provider);
			o.provider = xstrdup(val);
			continue;
		}
		ki = key_lookup(key, strlen(key));
		if (!ki || ki->id >= KEY_NFEATURES || ki->id == KEY_PROVIDER ||
		    ki->id == KEY_REGION || ki->id == KEY_MACHINETYPE || ki->id == KEY_PRICE) {
			const char *near = str_suggest(key, key_names(), 0);
			if (ki)
				cfg_err(ld, file, line, "InstanceType %s: '%s' cannot be set here (use Provider=, or a Price line for prices)",
				     o.type, key);
			else
				cfg_err(ld, file, line, "InstanceType %s: unknown key '%s'%s%s%s", o.type, key,
				     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			continue;
		}
		memset(&v, 0, sizeof(v));
		v.key = ki->id;
		v.num = NAN;
		v.arch = -1;
		if (ki->kind == KIND_NUMBER) {
			char msg[200];
			if (units_parse(val, strlen(val), ki->unit, &v.num, msg, sizeof(msg), NULL) < 0) {
				cfg_err(ld, file, line, "InstanceType %s: %s=%s: %s", o.type, key, val, msg);
				continue;
			}
		} else if (ki->kind == KIND_ARCH) {
			const struct arch_info *ai = arch_lookup(val);
			if (!ai) {
				const char *near = str_suggest(val, arch_names(), 0);
				cfg_err(ld, file, line, "InstanceType %s: unknown accelerator architecture '%s'%s%s%s",
				     o.type, val, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
				continue;
			}
			v.arch = (int)(ai - arch_at(0));
		} else
			v.str = xstrdup(val);
		o.vals = xrealloc(o.vals, (o.nvals + 1) * sizeof(v));
		o.vals[o.nvals++] = v;
	}
	if (!o.provider)
		cfg_err(ld, file, line, "InstanceType %s needs Provider=", o.type);
	if (ld->errs.n != before) {
		cfg_free_override(&o);
		return;
	}
	o.where = cfg_where_of(file, line);
	add_override(ld->cfg, &o);
}

/* ---- with the catalog ---- */

/* The catalog provider name of a configured provider (or name itself). */
static const char *provider_catalog(const struct burst_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nproviders; i++)
		if (strcmp(cfg->providers[i].name, name) == 0)
			return cfg->providers[i].catalog;
	return name;
}

/*
 * The local provider offers one instance type, local.host: this machine's
 * real vCPUs and memory, detected now, so that contracts resolve honestly
 * against it.
 */
static void add_local_host(struct catalog *cat, const char *catalog_name)
{
	char name[256];
	struct cat_type *t;
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	double kib = NAN;

	snprintf(name, sizeof(name), "%s:local.host", catalog_name);
	t = catalog_find_type(cat, name);
	if (!t)
		t = catalog_add_type(cat, catalog_name, "local.host", catalog_source(cat, "detected on this host"));
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lf kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	t->num[KEY_VCPUS] = (double)sysconf(_SC_NPROCESSORS_ONLN);
	t->num[KEY_MEMORY] = kib * 1024;
	t->num[KEY_ACC_COUNT] = 0;
	catalog_no_accelerators(cat, t);
#if defined(__x86_64__)
	t->sid[KEY_PROC_ISA] = catalog_intern(cat, "x86_64");
#elif defined(__aarch64__)
	t->sid[KEY_PROC_ISA] = catalog_intern(cat, "aarch64");
#endif
}

int config_apply_catalog(const struct burst_config *cfg, struct catalog *cat,
			 burst_err_t *err)
{
	size_t i, k;
	int problems = 0;

	for (i = 0; i < cfg->nproviders; i++)
		if (!strcmp(cfg->providers[i].type, "local"))
			add_local_host(cat, cfg->providers[i].catalog);

	for (i = 0; i < cfg->noverrides; i++) {
		const struct cfg_override *o = &cfg->overrides[i];
		const char *ptype = provider_catalog(cfg, o->provider);
		char name[512], src[PATH_MAX + 32];
		struct cat_type *t;

		snprintf(name, sizeof(name), "%s:%s", ptype, o->type);
		t = catalog_find_type(cat, name);
		snprintf(src, sizeof(src), "%s:%d", o->where.file, o->where.line);
		if (o->kind == OVERRIDE_PRICE) {
			if (!t) {
				burst_err_append(err, "%s:%d: Price %s: no instance type %s in the %s catalog (add it with an InstanceType= line)",
						 o->where.file, o->where.line, o->type, o->type, ptype);
				problems++;
				continue;
			}
			if (isnan(o->ondemand) && isnan(o->spot))
				continue;      /* Stopped= alone: config_stopped_price */
			{
				double od = o->ondemand, sp = o->spot;
				int rid = catalog_find_str(cat, o->region);
				for (k = 0; k < t->nprices && rid >= 0; k++)
					if (t->prices[k].region == rid) {
						if (isnan(od)) od = t->prices[k].ondemand;
						if (isnan(sp)) sp = t->prices[k].spot;
					}
				catalog_set_price(cat, t, o->region, od, sp);
			}
			continue;
		}
		if (!t) {
			t = catalog_add_type(cat, ptype, o->type, catalog_source(cat, src));
			t->num[KEY_ACC_COUNT] = 0;
		} else
			t->source = catalog_source(cat, src);
		for (k = 0; k < o->nvals; k++) {
			const struct cfg_value *v = &o->vals[k];
			const struct key_info *ki = key_info(v->key);
			if (ki->kind == KIND_NUMBER)
				t->num[v->key] = v->num;
			else if (ki->kind == KIND_ARCH)
				t->sid[v->key] = v->arch;
			else
				t->sid[v->key] = catalog_intern(cat, v->str);
		}
		if (t->num[KEY_ACC_COUNT] == 0)
			catalog_no_accelerators(cat, t);
	}
	catalog_index(cat);
	return problems ? -1 : 0;
}

bool cfg_in_list(char **list, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(list[i], s) == 0)
			return true;
	return false;
}

void cfg_ns_cands_clear(struct ns_cands *nc)
{
	free(nc->raw);
	candset_clear(&nc->sorted);
	memset(nc, 0, sizeof(*nc));
}

/* Whether a and b are the same candidates in the same order, node sets aside. */
static bool same_cands(const struct candidate *a, const struct candidate *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i].type != b[i].type || a[i].region != b[i].region || a[i].provider != b[i].provider ||
		    memcmp(&a[i].ondemand, &b[i].ondemand, sizeof(double)) ||
		    memcmp(&a[i].spot, &b[i].spot, sizeof(double)))
			return false;
	return true;
}

/* Add a candidate to cs as configured provider p (index and name) launches it. */
static void add_provided(struct candset *cs, const struct cat_type *ty, int region, double ondemand, double spot,
			 int nodeset, int p, const char *pname)
{
	candset_add(cs, ty, region, ondemand, spot, nodeset);
	cs->c[cs->n - 1].provider = p;
	cs->c[cs->n - 1].provider_name = pname;
}

size_t cfg_nodeset_candidates(const struct burst_config *cfg, const struct catalog *cat,
			      size_t nsi, struct candset *cs, struct ns_cands *prev)
{
	const struct cfg_nodeset *ns = &cfg->nodesets[nsi];
	size_t p, t, r, before = cs->n;
	struct candset tmp, *sorted;

	memset(&tmp, 0, sizeof(tmp));
	for (p = 0; p < cfg->nproviders; p++) {
		const struct cfg_provider *pv = &cfg->providers[p];
		char *const *regs = ns->nregions ? ns->regions : pv->regions;
		size_t nregs = ns->nregions ? ns->nregions : pv->nregions;
		int *rids;
		int pid;

		if (ns->providers && ns->nproviders && !cfg_in_list(ns->providers, ns->nproviders, pv->name))
			continue;
		pid = catalog_find_str(cat, pv->catalog);
		if (pid < 0)
			continue;
		/* each region's id, looked up (interned if the catalog has no
		 * price there) at its first use, once for all the types */
		rids = xmalloc((nregs ? nregs : 1) * sizeof(int));
		for (r = 0; r < nregs; r++)
			rids[r] = INT_MIN;
		for (t = 0; t < cat->ntypes; t++) {
			const struct cat_type *ty = &cat->types[t];

			if (ty->provider != pid)
				continue;
			if (ns->ntypes && !cfg_in_list(ns->types, ns->ntypes, catalog_str(cat, ty->name)))
				continue;
			if (nregs == 0) {
				if (ty->nprices == 0) {
					add_provided(&tmp, ty, CATALOG_UNKNOWN, NAN, NAN, (int)nsi, (int)p, pv->name);
				}
				for (r = 0; r < ty->nprices; r++) {
					add_provided(&tmp, ty, ty->prices[r].region, ty->prices[r].ondemand,
						     ty->prices[r].spot, (int)nsi, (int)p, pv->name);
				}
				continue;
			}
			for (r = 0; r < nregs; r++) {
				double od = NAN, sp = NAN;
				size_t k;
				if (rids[r] == INT_MIN) {
					rids[r] = catalog_find_str(cat, regs[r]);
					if (rids[r] < 0)
						rids[r] = catalog_intern((struct catalog *)cat, regs[r]);
				}
				for (k = 0; k < ty->nprices; k++)
					if (ty->prices[k].region == rids[r]) {
						od = ty->prices[k].ondemand;
						sp = ty->prices[k].spot;
					}
				add_provided(&tmp, ty, rids[r], od, sp, (int)nsi, (int)p, pv->name);
			}
		}
		free(rids);
	}
	if (prev->valid && prev->nraw == tmp.n && same_cands(prev->raw, tmp.c, tmp.n)) {
		/* the same list as the previous node set's: its name and
		 * price orders hold, the node set being the same for all */
		candset_clear(&tmp);
		sorted = &prev->sorted;
		for (t = 0; t < sorted->n; t++)
			sorted->c[t].nodeset = (int)nsi;
	} else {
		cfg_ns_cands_clear(prev);
		prev->nraw = tmp.n;
		prev->raw = xmalloc((tmp.n ? tmp.n : 1) * sizeof(*tmp.c));
		if (tmp.n)
			memcpy(prev->raw, tmp.c, tmp.n * sizeof(*tmp.c));
		candset_sort(cat, &tmp);
		prev->sorted = tmp;
		prev->valid = true;
		sorted = &prev->sorted;
	}
	if (ns->constraint) {
		struct resolution res;
		burst_err_t e;
		resolver_run(cat, sorted, ns->constraint, 0, &res, &e);
		for (t = 0; t < res.n; t++) {
			const struct candidate *cd = &sorted->c[res.m[t].cand];
			add_provided(cs, cd->type, cd->region, cd->ondemand, cd->spot, cd->nodeset, cd->provider,
				     cd->provider_name);
		}
		resolution_free(&res);
	} else {
		for (t = 0; t < sorted->n; t++) {
			const struct candidate *cd = &sorted->c[t];
			add_provided(cs, cd->type, cd->region, cd->ondemand, cd->spot, cd->nodeset, cd->provider,
				     cd->provider_name);
		}
	}
	return cs->n - before;
}

struct candset *config_candidates(const struct burst_config *cfg,
				  const struct catalog *cat, burst_err_t *err)
{
	struct candset *cs = xcalloc(1, sizeof(*cs));
	struct ns_cands prev;
	size_t i;

	memset(&prev, 0, sizeof(prev));
	for (i = 0; i < cfg->nnodesets; i++)
		if (cfg_nodeset_candidates(cfg, cat, i, cs, &prev) == 0) {
			burst_err_set(err, "%s:%d: NodeSet %s has no instance type to launch: check its Providers, InstanceTypes and Constraint (burstctl catalog list)",
				      cfg->nodesets[i].where.file, cfg->nodesets[i].where.line,
				      cfg->nodesets[i].name);
			candset_free(cs);
			cfg_ns_cands_clear(&prev);
			return NULL;
		}
	cfg_ns_cands_clear(&prev);
	candset_sort(cat, cs);
	return cs;
}

const char *config_price_source(const struct burst_config *cfg, const char *provider, const char *type,
				const char *region, char *buf, size_t len)
{
	const char *cat = provider_catalog(cfg, provider);
	size_t i;

	snprintf(buf, len, "on-demand: catalog");
	/* the last Price= line of it wins, as config_apply_catalog applies them in order */
	for (i = 0; i < cfg->noverrides; i++) {
		const struct cfg_override *o = &cfg->overrides[i];
		if (o->kind == OVERRIDE_PRICE && !isnan(o->ondemand) && !strcmp(o->type, type) &&
		    o->region && region && !strcmp(o->region, region) && !strcmp(provider_catalog(cfg, o->provider), cat))
			snprintf(buf, len, "on-demand: Price= %s:%d", o->where.file, o->where.line);
	}
	return buf;
}

double config_stopped_price(const struct burst_config *cfg, const struct catalog *cat,
			    const char *provider, const char *type, const char *region,
			    char *src, size_t srclen)
{
	const char *pc = provider_catalog(cfg, provider);
	const struct cfg_override *hit = NULL;
	double gb = CONFIG_STOPPED_DEFAULT_DISK_GB;
	size_t i;

	/* the last Price= line of it wins, as with the other prices */
	for (i = 0; i < cfg->noverrides; i++) {
		const struct cfg_override *o = &cfg->overrides[i];
		if (o->kind == OVERRIDE_PRICE && !isnan(o->stopped) && !strcmp(o->type, type) &&
		    !strcmp(provider_catalog(cfg, o->provider), pc) &&
		    (!o->region || (region && !strcmp(o->region, region))))
			hit = o;
	}
	if (hit) {
		if (src)
			snprintf(src, srclen, "Price= %s:%d", hit->where.file, hit->where.line);
		return hit->stopped;
	}
	if (cat) {
		char name[512];
		const struct cat_type *t;
		snprintf(name, sizeof(name), "%s:%s", pc, type);
		t = catalog_find_type(cat, name);
		if (t && !isnan(t->num[KEY_STORAGE_SIZE]) && t->num[KEY_STORAGE_SIZE] > 0) {
			gb = t->num[KEY_STORAGE_SIZE] / (1024.0 * 1024 * 1024);
			if (src)
				snprintf(src, srclen, "the catalog's disk, %.0f GB at %.2f USD per GB-month", gb,
					 CONFIG_STOPPED_USD_PER_GB_MONTH);
			return gb * CONFIG_STOPPED_USD_PER_GB_MONTH / 730.0;
		}
	}
	if (src)
		snprintf(src, srclen, "default: a %.0f GB disk at %.2f USD per GB-month", gb,
			 CONFIG_STOPPED_USD_PER_GB_MONTH);
	return gb * CONFIG_STOPPED_USD_PER_GB_MONTH / 730.0;
}

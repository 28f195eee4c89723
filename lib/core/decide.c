/*
 * decide.c - from a --cloud-contract argument to node sets and partitions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "resolver.h"
#include "strutil.h"

#define MAX_MISSES_SHOWN 3

static bool looks_like_expr(const char *s)
{
	return strpbrk(s, "=<>!{") != NULL;
}

static bool listed(const char *list, const char *word, char sep)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (p && *p) {
		const char *e = strchr(p, sep);
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == wl && strncmp(p, word, wl) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static void append(struct strbuf *sb, const char *word, char sep)
{
	if (sb->len && listed(sb->s, word, sep))
		return;
	if (sb->len)
		sb_addf(sb, "%c", sep);
	sb_add(sb, word);
}

static void contract_names(const struct burst_config *cfg, struct strbuf *names)
{
	size_t i;

	sb_init(names);
	for (i = 0; i < cfg->ncontracts; i++)
		sb_addf(names, "%s%s", i ? ", " : "", cfg->contracts[i].name);
}

const struct contract *burst_contract_of(const struct burst_config *cfg, const char *arg,
					 const struct cfg_contract **named,
					 struct contract **inl, burst_err_t *err)
{
	struct strbuf names;

	*named = NULL;
	*inl = NULL;
	if (!arg || !*arg) {
		burst_err_set(err, "--cloud-contract needs a contract name or an expression");
		return NULL;
	}
	if (looks_like_expr(arg)) {
		if (!cfg->allow_inline) {
			contract_names(cfg, &names);
			burst_err_set(err, "inline contracts are not allowed on this cluster (AllowInlineContracts=no in %s); use a named one: %s",
				      cfg->path, names.len ? names.s : "(none defined)");
			sb_free(&names);
			return NULL;
		}
		*inl = contract_parse(arg, err);
		return *inl;
	}
	*named = config_find_contract(cfg, arg);
	if (*named)
		return (*named)->c;
	{
		const char *near = config_suggest_contract(cfg, arg);
		contract_names(cfg, &names);
		if (near)
			burst_err_set(err, "no contract named '%s'; did you mean '%s'? (contracts: %s)",
				      arg, near, names.len ? names.s : "none");
		else
			burst_err_set(err, "no contract named '%s' (contracts: %s; or write an expression such as 'accelerator_count>=1')",
				      arg, names.len ? names.s : "none");
		sb_free(&names);
	}
	return NULL;
}

int burst_decide_ranked(const struct burst_config *cfg, const struct catalog *cat,
			const struct candset *cs, const char *arg, int flags,
			struct burst_decision *d, struct burst_ranking *rk, burst_err_t *err)
{
	const struct contract *c;
	const struct cfg_contract *named;
	const struct resolution *res = &rk->res;
	struct strbuf ns, parts, feats;
	size_t i;

	memset(d, 0, sizeof(*d));
	memset(rk, 0, sizeof(*rk));
	c = burst_contract_of(cfg, arg, &named, &rk->inl, err);
	if (!c)
		return -1;
	if (!cs) {
		cs = rk->own_cs = config_candidates(cfg, cat, err);
		if (!cs)
			return -1;
	}
	if (resolver_run(cat, cs, c, flags | RESOLVE_EXPLAIN, &rk->res, err) < 0)
		return -1;
	rk->c = c;
	rk->named = named;
	rk->cs = cs;
	if (res->n == 0) {
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "no burst node set can satisfy the contract %s%s%s'%s'",
			named ? "'" : "", named ? named->name : "", named ? "' = " : "", c->text);
		if (res->nmiss) {
			sb_add(&sb, "; nearest:");
			for (i = 0; i < res->nmiss && i < MAX_MISSES_SHOWN; i++) {
				char name[256];
				candidate_name(cat, &cs->c[res->miss[i].cand], name, sizeof(name));
				sb_addf(&sb, "%s %s (node set %s) fails %s", i ? ";" : "", name,
					cfg->nodesets[cs->c[res->miss[i].cand].nodeset].name,
					res->miss[i].reason);
			}
		}
		if (res->notes)
			sb_addf(&sb, "; note: %s", res->notes);
		burst_err_set(err, "%s", sb.s);
		/* drop a trailing newline from notes */
		{
			size_t l = strlen(err->msg);
			while (l && err->msg[l - 1] == '\n')
				err->msg[--l] = '\0';
		}
		sb_free(&sb);
		return 1;
	}
	sb_init(&ns);
	sb_init(&parts);
	sb_init(&feats);
	for (i = 0; i < res->n; i++) {
		const struct cfg_nodeset *set = &cfg->nodesets[cs->c[res->m[i].cand].nodeset];
		append(&ns, set->name, ',');
		append(&parts, set->partition, ',');
		append(&feats, set->name, '|');
	}
	{
		char name[256], line[320];
		const struct match *m = &res->m[0];
		candidate_name(cat, &cs->c[m->cand], name, sizeof(name));
		if (isnan(m->price))
			snprintf(line, sizeof(line), "%s", name);
		else
			snprintf(line, sizeof(line), "%s $%.4f/h", name, m->price);
		d->first = xstrdup(line);
	}
	d->name = named ? xstrdup(named->name) : NULL;
	d->contract = xstrdup(c->text);
	d->nodesets = sb_take(&ns);
	d->partitions = sb_take(&parts);
	d->features = sb_take(&feats);
	return 0;
}

void burst_ranking_free(struct burst_ranking *rk)
{
	resolution_free(&rk->res);
	candset_free(rk->own_cs);
	contract_free(rk->inl);
	memset(rk, 0, sizeof(*rk));
}

int burst_decide(const struct burst_config *cfg, const struct catalog *cat,
		 const char *arg, struct burst_decision *d, burst_err_t *err)
{
	struct burst_ranking rk;
	int rc = burst_decide_ranked(cfg, cat, NULL, arg, 0, d, &rk, err);

	burst_ranking_free(&rk);
	return rc == 0 ? 0 : -1;
}

/*
 * Does c name an accelerator model that cat does not spell exactly? Then
 * the whole catalog could bind it otherwise than a part of it: a model
 * spelled so anywhere in it is taken as that value, one spelled nowhere
 * stands for every MODEL-* (resolver.c, bind).
 */
static bool model_unspelled(const struct catalog *cat, const struct contract *c)
{
	size_t i, k;

	for (i = 0; i < c->nas; i++)
		if (c->as[i].key == KEY_ACC_MODEL && c->as[i].str)
			for (k = 0; k < c->as[i].nvals; k++)
				if (catalog_find_str(cat, c->as[i].str[k]) < 0)
					return true;
	return false;
}

/* One try: the catalog of dir (only: the providers' files, or NULL), the
 * config applied, the decision. Returns 0, 1 when the partial catalog cannot
 * be trusted with this contract, or -1 with err and *stage. */
static int decide_with(const struct burst_config *cfg, const char *dir, const char *const *only,
		       size_t nonly, const char *arg, struct burst_decision *d, int *stage,
		       burst_err_t *err)
{
	struct catalog *cat;
	struct burst_ranking rk;
	int rc = -1;

	/* the decision needs no checksum of the catalog: not computed */
	cat = catalog_load_providers(dir, CATALOG_NO_CHECKSUM, only, nonly, err);
	if (!cat) {
		*stage = BURST_DECIDE_CATALOG;
		return -1;
	}
	if (config_apply_catalog(cfg, cat, err) < 0) {
		*stage = BURST_DECIDE_APPLY;
		goto out;
	}
	if (burst_decide_ranked(cfg, cat, NULL, arg, 0, d, &rk, err) != 0) {
		*stage = BURST_DECIDE_CONTRACT;
		burst_decision_free(d);
	} else if (only && model_unspelled(cat, rk.c)) {
		burst_decision_free(d);
		rc = 1;
	} else
		rc = 0;
	burst_ranking_free(&rk);
out:
	catalog_free(cat);
	return rc;
}

int burst_decide_dir(const struct burst_config *cfg, const char *dir, const char *arg,
		     struct burst_decision *d, int *stage, int *whole, burst_err_t *err)
{
	const char **only = xcalloc(cfg->nproviders + 1, sizeof(char *));
	burst_err_t *before = xmalloc(sizeof(*before));
	size_t i;
	int rc;

	/* each try starts from err as given (config_apply_catalog appends) */
	*before = *err;

	for (i = 0; i < cfg->nproviders; i++)
		only[i] = cfg->providers[i].catalog;
	*stage = 0;
	rc = decide_with(cfg, dir, only, cfg->nproviders, arg, d, stage, err);
	free(only);
	if (whole)
		*whole = rc != 0;
	if (rc != 0) {
		/* a refusal (or a doubt) comes from the whole catalog, word for word */
		*stage = 0;
		*err = *before;
		rc = decide_with(cfg, dir, NULL, 0, arg, d, stage, err) == 0 ? 0 : -1;
	}
	free(before);
	return rc;
}

void burst_decision_free(struct burst_decision *d)
{
	free(d->name);
	free(d->contract);
	free(d->nodesets);
	free(d->partitions);
	free(d->features);
	free(d->first);
	memset(d, 0, sizeof(*d));
}

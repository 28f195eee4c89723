/*
 * burst-agent: configuration state. What burst.conf makes (the config,
 * catalog, candidates, nodes and provider drivers), read at start and on
 * SIGHUP, and the lookups over it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "decide.h"
#include "strutil.h"

struct bnode *node_find(const char *name)
{
	return name ? htab_get(&A.node_index, name) : NULL;
}

/*
 * The node's place among the nodes provider p may launch (those of the node
 * sets that allow it, in burst.conf's order): stable while burst.conf is,
 * whatever the other providers' node sets hold.
 */
int node_index_for(const struct aprov *p, const struct bnode *bn)
{
	int idx = 0;
	size_t i, k;

	for (i = 0; i < A.cfg->nnodesets; i++) {
		const struct cfg_nodeset *ns = &A.cfg->nodesets[i];
		bool allowed = !ns->nproviders;
		for (k = 0; k < ns->nproviders && !allowed; k++)
			allowed = !strcmp(ns->providers[k], p->cfg->name);
		if ((int)i == bn->nodeset)
			return idx + bn->pos;
		if (allowed)
			idx += (int)ns->nodes.n;
	}
	return -1;
}

struct aprov *prov_by_name(const char *name)
{
	size_t i;
	for (i = 0; name && i < A.nprovs; i++)
		if (!strcmp(A.provs[i].cfg->name, name))
			return &A.provs[i];
	return NULL;
}

/* The configured provider that launches candidate c: the one whose Regions
 * made it (config_candidates, which keeps to each node set's Providers=);
 * NULL if that provider has no driver running. load_conf starts a driver
 * for every configured provider, in their order, or fails: the candidate's
 * provider index is its driver's. */
struct aprov *prov_of(const struct candidate *c)
{
	if (c->provider < 0 || (size_t)c->provider >= A.nprovs ||
	    A.provs[c->provider].cfg != &A.cfg->providers[c->provider])
		return NULL;
	return &A.provs[c->provider];
}

static int cmp_rank(const void *a, const void *b)
{
	const struct candidate *x = &A.cs->c[*(const size_t *)a], *y = &A.cs->c[*(const size_t *)b];
	double px = isnan(x->ondemand) ? INFINITY : x->ondemand, py = isnan(y->ondemand) ? INFINITY : y->ondemand;
	int c;

	if (px != py)
		return px < py ? -1 : 1;
	c = strcmp(catalog_str(A.cat, x->type->name), catalog_str(A.cat, y->type->name));
	if (c)
		return c;
	return strcmp(x->region >= 0 ? catalog_str(A.cat, x->region) : "",
		      y->region >= 0 ? catalog_str(A.cat, y->region) : "");
}

/* Each node set's candidates in launch order: price per hour, then name, then region. */
void rank_candidates(void)
{
	size_t i, j;

	A.ranked = xcalloc(A.cfg->nnodesets ? A.cfg->nnodesets : 1, sizeof(*A.ranked));
	A.nranked = xcalloc(A.cfg->nnodesets ? A.cfg->nnodesets : 1, sizeof(*A.nranked));
	for (i = 0; i < A.cfg->nnodesets; i++) {
		A.ranked[i] = xcalloc(A.cs->n ? A.cs->n : 1, sizeof(size_t));
		for (j = 0; j < A.cs->n; j++)
			if (A.cs->c[j].nodeset == (int)i && prov_of(&A.cs->c[j]))
				A.ranked[i][A.nranked[i]++] = j;
		qsort(A.ranked[i], A.nranked[i], sizeof(size_t), cmp_rank);
	}
}

/*
 * The rankings of the contracts jobs asked for, kept for the configuration
 * they were made with (cleared by every read of burst.conf): a burst of
 * n jobs of one contract resolves it once, not n times (per node set).
 */
struct contract_rank {
	char *text;              /* the contract argument: the table's key */
	int rc;                  /* burst_decide_ranked's: -1 does not resolve */
	char *err;               /* why, when rc < 0 */
	size_t *cands;           /* A.cs indexes, best first */
	size_t n;
};

static struct htab rank_cache;

/* at most this many kept (inline contracts are the users' text) */
#define RANK_CACHE_MAX 1024

static void rank_cache_clear(void)
{
	size_t it = 0;
	void *v;

	while (htab_next(&rank_cache, &it, NULL, &v)) {
		struct contract_rank *cr = v;
		free(cr->text);
		free(cr->err);
		free(cr->cands);
		free(cr);
	}
	htab_free(&rank_cache);
}

static const struct contract_rank *contract_ranking(const char *contract)
{
	struct contract_rank *cr = htab_get(&rank_cache, contract);
	struct burst_decision d;
	struct burst_ranking rk;
	burst_err_t err;
	size_t i;

	if (cr)
		return cr;
	if (rank_cache.n >= RANK_CACHE_MAX)
		rank_cache_clear();
	cr = xcalloc(1, sizeof(*cr));
	cr->text = xstrdup(contract);
	cr->rc = burst_decide_ranked(A.cfg, A.cat, A.cs, contract, 0, &d, &rk, &err);
	if (cr->rc < 0)
		cr->err = xstrdup(err.msg);
	else {
		cr->cands = xcalloc(rk.res.n ? rk.res.n : 1, sizeof(size_t));
		for (i = 0; i < rk.res.n; i++)
			cr->cands[cr->n++] = rk.res.m[i].cand;
	}
	burst_decision_free(&d);
	burst_ranking_free(&rk);
	htab_put(&rank_cache, cr->text, cr);
	return cr;
}

/*
 * The launch order of node set nsi for node, resumed for job: the node
 * set's candidates that satisfy the job's contract, ranked by it, by the
 * decision sbatch --cloud-contract and burstctl resolve take
 * (burst_decide_ranked, over the agent's own candidates). The node set's
 * own order (rank_candidates) for a node resumed for no job (an admin's
 * scontrol power up) or for a job without a contract; also, with a log line
 * naming the job and the node, when the job's contract cannot be read, no
 * longer resolves (renamed or removed from burst.conf, inline contracts
 * forbidden since) or nothing of this node set satisfies it. False (and
 * nothing to free) while the contract is being read from slurmctld, on the
 * Slurm worker: the node waits, the loop does not.
 */
bool job_order_for(struct job_order *jo, int nsi, uint32_t job, const char *node)
{
	const char *ns = A.cfg->nodesets[nsi].name;
	char why[400];
	char *contract, *shown, *emsg;
	const struct contract_rank *cr;
	size_t i;

	memset(jo, 0, sizeof(*jo));
	jo->job = job;
	jo->nodeset = nsi;
	jo->order = A.ranked[nsi];
	jo->n = A.nranked[nsi];
	if (!job) {
		snprintf(jo->how, sizeof(jo->how), "node set order: resumed for no job");
		return true;
	}
	if (!slurm_job_contract(job, &contract, why, sizeof(why)))
		return false;
	if (!contract) {
		if (strncmp(why, "no contract", 11))
			ERR("%s: job %u: %s: launched in node set %s's own order", node, job, why, ns);
		snprintf(jo->how, sizeof(jo->how), "node set order: job %u: %s", job, why);
		return true;
	}
	/* shown escaped: an inline contract is the user's text */
	shown = str_escape_ctl(contract);
	cr = contract_ranking(contract);
	if (cr->rc < 0) {
		emsg = str_escape_ctl(cr->err);
		ERR("%s: job %u's contract '%s' no longer resolves: %s: launched in node set %s's own order",
		    node, job, shown, emsg, ns);
		free(emsg);
		snprintf(jo->how, sizeof(jo->how), "node set order: job %u's contract '%.200s' does not resolve",
			 job, shown);
	} else {
		size_t *own = xcalloc(cr->n ? cr->n : 1, sizeof(*own)), n = 0;
		for (i = 0; i < cr->n; i++) {
			const struct candidate *c = &A.cs->c[cr->cands[i]];
			if (c->nodeset == nsi && prov_of(c))
				own[n++] = cr->cands[i];
		}
		if (!n) {
			free(own);
			ERR("%s: job %u's contract '%s' matches no instance type of node set %s: launched in the node set's own order",
			    node, job, shown, ns);
			snprintf(jo->how, sizeof(jo->how), "node set order: job %u's contract '%.200s' matches none of it",
				 job, shown);
		} else {
			jo->own = own;
			jo->order = own;
			jo->n = n;
			snprintf(jo->how, sizeof(jo->how), "job %u's contract %.200s", job, shown);
		}
	}
	free(shown);
	free(contract);
	return true;
}

void job_order_free(struct job_order *jo)
{
	free(jo->own);
	memset(jo, 0, sizeof(*jo));
}

const struct cfg_nodeset *nodeset_of(const char *node)
{
	const struct bnode *ni = node_find(node);
	return ni ? &A.cfg->nodesets[ni->nodeset] : NULL;
}

/* What burst.conf makes: config, catalog, candidates, nodes, drivers. */
struct conf_state {
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct bnode *nodes;
	size_t nnodes;
	struct htab node_index;
	struct aprov *provs;
	size_t nprovs;
	size_t **ranked;
	size_t *nranked;
};

static void conf_state_free(struct conf_state *c)
{
	size_t i;
	bool left = false;

	/* the workers first: a driver is freed only when its worker is gone */
	for (i = 0; i < c->nprovs; i++)
		if (pworker_stop(c->provs[i].w, !A.exiting) < 0)
			left = true;
	if (left)
		return;   /* at exit, a call still running: the process's end frees it all */
	for (i = 0; i < c->nprovs; i++)
		if (c->provs[i].ops && c->provs[i].drv)
			c->provs[i].ops->fini(c->provs[i].drv);
	free(c->provs);
	for (i = 0; c->ranked && c->cfg && i < c->cfg->nnodesets; i++)
		free(c->ranked[i]);
	free(c->ranked);
	free(c->nranked);
	for (i = 0; c->nodes && i < c->nnodes; i++)
		free(c->nodes[i].noticed);
	free(c->nodes);
	htab_free(&c->node_index);
	candset_free(c->cs);
	catalog_free(c->cat);
	config_free(c->cfg);
	memset(c, 0, sizeof(*c));
}

static void conf_state_get(struct conf_state *c)
{
	c->cfg = A.cfg; c->cat = A.cat; c->cs = A.cs; c->nodes = A.nodes; c->nnodes = A.nnodes;
	c->node_index = A.node_index;
	c->provs = A.provs; c->nprovs = A.nprovs; c->ranked = A.ranked; c->nranked = A.nranked;
}

static void conf_state_put(const struct conf_state *c)
{
	A.cfg = c->cfg; A.cat = c->cat; A.cs = c->cs; A.nodes = c->nodes; A.nnodes = c->nnodes;
	A.node_index = c->node_index;
	A.provs = c->provs; A.nprovs = c->nprovs; A.ranked = c->ranked; A.nranked = c->nranked;
}

/* At exit: what burst.conf made, drivers included. */
void agent_conf_free(void)
{
	struct conf_state c;

	conf_state_get(&c);
	conf_state_free(&c);
	rank_cache_clear();
}

int budget_accounts_verdict(const struct burst_config *cfg)
{
	burst_err_t err, warn;
	char *line, *nl;

	burst_err_clear(&err);
	burst_err_clear(&warn);
	if (config_check_budget_accounts(cfg, &A.slurm_acct, &err, &warn) > 0) {
		for (line = err.msg; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			ERR("%.*s", nl ? (int)(nl - line) : (int)strlen(line), line);
		}
		ERR("%s: refused: budgets by account that a user can escape (burstctl check-config %s says the same)",
		    cfg->path, cfg->path);
		return -1;
	}
	for (line = warn.msg; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		logmsg("warning", "%.*s", nl ? (int)(nl - line) : (int)strlen(line), line);
	}
	A.account_check = config_account_budget(cfg) && !A.slurm_acct.associations;
	return 0;
}

/* Read burst.conf into the agent's globals; on failure they are untouched. */
int load_conf(void)
{
	struct conf_state old, c;
	burst_err_t err;
	size_t i, j, k = 0;

	/* rankings of the configuration being replaced (or kept: cheap to redo) */
	rank_cache_clear();
	conf_state_get(&old);
	memset(&c, 0, sizeof(c));
	c.cfg = config_load(A.conf_path, &err);
	if (!c.cfg) {
		ERR("%s", err.msg);
		goto fail;
	}
	if (old.cfg) {
		char why[600];
		if (config_identity_change(old.cfg, c.cfg, why, sizeof(why))) {
			ERR("%s: %s: a reload cannot change that; restart burst-agent to apply it", A.conf_path, why);
			goto fail;
		}
	}
	c.cat = catalog_load(catalog_default_dir(c.cfg->catalog_dir), &err);
	if (!c.cat || config_apply_catalog(c.cfg, c.cat, &err) < 0) {
		ERR("%s", err.msg);
		goto fail;
	}
	/* the verdict burstctl check-config gives: one check for both */
	if (config_check(c.cfg, c.cat, &err) > 0) {
		ERR("%s", err.msg);
		ERR("%s: refused (burstctl check-config %s says the same)", A.conf_path, A.conf_path);
		goto fail;
	}
	/* a reload: its budgets by account against Slurm's enforcement as read
	 * at start (at start: setup_active, once slurmctld was asked) */
	if (old.cfg && budget_accounts_verdict(c.cfg) < 0)
		goto fail;
	c.cs = config_candidates(c.cfg, c.cat, &err);
	if (!c.cs) {
		ERR("%s", err.msg);
		goto fail;
	}
	for (i = 0; i < c.cfg->nnodesets; i++)
		c.nnodes += c.cfg->nodesets[i].nodes.n;
	c.nodes = xcalloc(c.nnodes ? c.nnodes : 1, sizeof(*c.nodes));
	for (i = 0; i < c.cfg->nnodesets; i++)
		for (j = 0; j < c.cfg->nodesets[i].nodes.n; j++, k++) {
			c.nodes[k].name = c.cfg->nodesets[i].nodes.names[j];
			c.nodes[k].nodeset = (int)i;
			c.nodes[k].index = (int)k;
			c.nodes[k].pos = (int)j;
			if (old.cfg) {
				/* a call in flight for it stays marked, and so does a
				 * launch waiting in its region's queue (the queues
				 * outlive the reload: unmarked, launch_retry would
				 * queue it a second time) */
				const struct bnode *o = node_find(c.nodes[k].name);
				c.nodes[k].busy = o && o->busy;
				c.nodes[k].paced = o && o->paced;
			}
		}
	/* a node of two node sets is the first one's (as the scan was) */
	for (k = c.nnodes; k-- > 0;)
		htab_put(&c.node_index, c.nodes[k].name, &c.nodes[k]);
	c.provs = xcalloc(c.cfg->nproviders ? c.cfg->nproviders : 1, sizeof(*c.provs));
	for (i = 0; i < c.cfg->nproviders; i++) {
		struct aprov *p = &c.provs[c.nprovs];
		p->cfg = &c.cfg->providers[i];
		p->ops = provider_ops_find(p->cfg->type);
		if (!p->ops) {
			ERR("%s:%d: Provider %s: Type=%s has no driver in this agent (drivers: local, aws, openstack)",
			    p->cfg->where.file, p->cfg->where.line, p->cfg->name, p->cfg->type);
			goto fail;
		}
		p->drv = p->ops->init(p->cfg, c.cfg, &err);
		if (!p->drv) {
			ERR("%s", err.msg);
			goto fail;
		}
		p->w = pworker_start(p->cfg->name, p->ops, p->drv, &err);
		if (!p->w) {
			p->ops->fini(p->drv);
			ERR("%s", err.msg);
			goto fail;
		}
		p->catalog_id = catalog_find_str(c.cat, p->cfg->catalog);
		c.nprovs++;
	}
	/* the ranking reads the globals: install, rank, and keep */
	conf_state_put(&c);
	rank_candidates();
	conf_state_get(&c);
	if (old.cfg) {
		if (strcmp(old.cfg->metrics_listen ? old.cfg->metrics_listen : "",
			   c.cfg->metrics_listen ? c.cfg->metrics_listen : ""))
			INFO("MetricsListen takes effect at the next restart");
		conf_state_put(&c);
		conf_state_free(&old);
	}
	return 0;
fail:
	conf_state_free(&c);
	conf_state_put(&old);
	return -1;
}

void ensure_nodes(void)
{
	burst_err_t err;
	size_t i;
	/* one commit for them all (15,000 new nodes took 15,000 synced
	 * commits); one by one only if that cannot be */
	bool batch = state_begin(A.db, &err) == 0;

	if (!batch)
		ERR("%s (the nodes are recorded one by one)", err.msg);
	for (i = 0; i < A.nnodes; i++)
		if (state_node_ensure(A.db, A.nodes[i].name, A.cfg->nodesets[A.nodes[i].nodeset].name, &err) < 0)
			ERR("%s", err.msg);
	if (batch && state_commit(A.db, &err) < 0) {
		ERR("%s: the nodes are recorded one by one", err.msg);
		for (i = 0; i < A.nnodes; i++)
			if (state_node_ensure(A.db, A.nodes[i].name, A.cfg->nodesets[A.nodes[i].nodeset].name,
					      &err) < 0)
				ERR("%s", err.msg);
	}
}

/*
 * agentview.c - burstctl status, nodes, events (see agentview.h).
 *
 * Everything here reads the agent's database through the read-only views of
 * lib/state/state.h; nothing is written, and the join token is never shown.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <pwd.h>

#include <json-c/json.h>

#include "agentview.h"
#include "config.h"
#include "cost.h"
#include "hostlist.h"
#include "spool.h"
#include "state.h"
#include "views.h"
#include "statedir.h"
#include "strutil.h"

#define EXIT_OK 0
#define EXIT_NOMATCH 1
#define EXIT_USAGE 2

#define STATUS_EVENTS 5          /* newest events status shows by default */
#define FOLLOW_EVENTS 10         /* events --follow starts with the newest 10, as tail -f */
#define FOLLOW_POLL_NS 200000000L
#define FOLLOW_BATCH 1000

static const char *prog = "burstctl";

/* ---- shared ---- */

struct view {
	struct burst_config *cfg;    /* may be NULL */
	char *state_dir;
	char *db_path;
	struct state_db *db;
	double now;
};

static void view_close(struct view *v)
{
	state_close(v->db);
	config_free(v->cfg);
	free(v->state_dir);
	free(v->db_path);
	memset(v, 0, sizeof(*v));
}

/* Load burst.conf (if any) and open the database. Returns 0 or an exit code. */
static int view_open(const struct agentview_opts *o, struct view *v)
{
	burst_err_t err;
	struct strbuf sb;

	memset(v, 0, sizeof(*v));
	if (o->config) {
		v->cfg = config_load(o->config, &err);
		if (!v->cfg) {
			fprintf(stderr, "%s\n%s: %s has errors (fix them, then run burstctl check-config)\n",
				err.msg, prog, o->config);
			return EXIT_USAGE;
		}
	}
	v->state_dir = xstrdup(v->cfg && v->cfg->state_dir ? v->cfg->state_dir : BURST_DEFAULT_STATE_DIR);
	sb_init(&sb);
	sb_addf(&sb, "%s/agent.db", v->state_dir);
	v->db_path = sb_take(&sb);
	/* a state others could have written is not shown as the agent's */
	if (statedir_check(v->state_dir, geteuid(), STATEDIR_ANY_OWNER, 0, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		view_close(v);
		return EXIT_USAGE;
	}
	v->db = state_view_open(v->db_path, NULL, &err);
	if (!v->db) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		view_close(v);
		return EXIT_USAGE;
	}
	v->now = wall_seconds();
	return 0;
}

/* "5s", "3m", "2h", "4d": how long ago t was (or how long until, for a future t). */
static void fmt_age(double secs, char *buf, size_t len)
{
	long s = secs < 0 ? 0 : (long)secs;

	if (s < 60)
		snprintf(buf, len, "%lds", s);
	else if (s < 3600)
		snprintf(buf, len, "%ldm", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%ldh", s / 3600);
	else
		snprintf(buf, len, "%ldd", s / 86400);
}

/* 2026-11-23T10:00:01.123 in local time */
static void fmt_time(double t, char *buf, size_t len)
{
	time_t sec = (time_t)floor(t);
	long ms = (long)((t - floor(t)) * 1000.0);
	struct tm tm;
	char base[32];

	if (ms > 999)
		ms = 999;
	if (ms < 0)
		ms = 0;
	localtime_r(&sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ld", base, ms);
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* Natural order: burst-2 before burst-10. */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *ea = a, *eb = b;
			size_t la, lb;
			int c;
			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (ea = a; isdigit((unsigned char)*ea); ea++)
				;
			for (eb = b; isdigit((unsigned char)*eb); eb++)
				;
			la = (size_t)(ea - a);
			lb = (size_t)(eb - b);
			if (la != lb)
				return la < lb ? -1 : 1;
			c = strncmp(a, b, la);
			if (c)
				return c;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int node_cmp(const void *pa, const void *pb)
{
	const struct node_rec *a = pa, *b = pb;
	return natcmp(a->name, b->name);
}

static int load_nodes(struct view *v, struct node_rec **nodes, size_t *n)
{
	burst_err_t err;

	if (state_nodes_all(v->db, nodes, n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return EXIT_USAGE;
	}
	if (*n)
		qsort(*nodes, *n, sizeof(**nodes), node_cmp);
	return 0;
}

/* A powered-down node has no instance, address or job: what its record
 * still holds is its last life (shown as last_instance in JSON). */
static bool node_live(const struct node_rec *r)
{
	return r->state != NS_POWERED_DOWN;
}

/* A node as JSON: every column but the token. */
static json_object *node_json(const struct node_rec *r, double now)
{
	json_object *o = json_object_new_object();
	double left = r->cooldown_until - now;
	bool live = node_live(r);

#define JSTR(k, s) json_object_object_add(o, k, (s) ? json_object_new_string(s) : NULL)
	JSTR("name", r->name);
	JSTR("nodeset", r->nodeset);
	JSTR("state", node_state_name(r->state));
	json_object_object_add(o, "attempt", json_object_new_int(r->attempt));
	JSTR("instance", live ? r->instance : NULL);
	JSTR("address", live ? r->address : NULL);
	/* what it was launched as: its job's contract or its node set chose it */
	JSTR("provider", live ? r->provider : NULL);
	JSTR("instance_type", live ? r->instance_type : NULL);
	JSTR("region", live ? r->region : NULL);
	json_object_object_add(o, "job", live && r->job ? json_object_new_int64(r->job) : NULL);
	if (!live)
		JSTR("last_instance", r->instance);
	json_object_object_add(o, "since", json_object_new_double(r->since));
	json_object_object_add(o, "age_seconds", json_object_new_int64(r->since > now ? 0 : (int64_t)(now - r->since)));
	json_object_object_add(o, "cooldown_until", r->cooldown_until > 0 ?
			       json_object_new_double(r->cooldown_until) : NULL);
	json_object_object_add(o, "cooldown_left_seconds", json_object_new_int64(left > 0 ? (int64_t)ceil(left) : 0));
	json_object_object_add(o, "token_used", json_object_new_boolean(r->token_used));
	JSTR("last_error", r->last_error);
	JSTR("provenance_id", r->provenance_id);
	json_object_object_add(o, "want_resume", json_object_new_boolean(r->want_resume));
#undef JSTR
	return o;
}

static json_object *event_json(const struct event_rec *e)
{
	json_object *o = json_object_new_object();
	const char *arrow = e->what ? strstr(e->what, " -> ") : NULL;
	char ts[64];

	fmt_time(e->time, ts, sizeof(ts));
	json_object_object_add(o, "id", json_object_new_int64(e->id));
	json_object_object_add(o, "time", json_object_new_double(e->time));
	json_object_object_add(o, "timestamp", json_object_new_string(ts));
	json_object_object_add(o, "node", e->node ? json_object_new_string(e->node) : NULL);
	json_object_object_add(o, "what", json_object_new_string(e->what ? e->what : ""));
	if (arrow) {
		json_object_object_add(o, "from", json_object_new_string_len(e->what, (int)(arrow - e->what)));
		json_object_object_add(o, "to", json_object_new_string(arrow + 4));
	}
	json_object_object_add(o, "detail", e->detail ? json_object_new_string(e->detail) : NULL);
	return o;
}

static void print_event(const struct event_rec *e, bool json)
{
	if (json) {
		json_object *o = event_json(e);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		char ts[64], *what = str_escape_ctl(e->what), *detail = str_escape_ctl(e->detail);
		fmt_time(e->time, ts, sizeof(ts));
		/* details quote nodes' text: no raw control characters to the terminal */
		printf("%s %s %s%s%s\n", ts, or_dash(e->node), what, e->detail ? " " : "", detail);
		free(what);
		free(detail);
	}
}

static void print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* ---- a table with columns as wide as their widest cell ---- */

#define MAXCOLS 12

struct table {
	size_t ncols, nrows, cap;
	char **cells;            /* nrows * ncols */
};

static void table_row(struct table *t, const char *const *cells)
{
	size_t i;

	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof(char *));
	}
	for (i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(or_dash(cells[i]));
	t->nrows++;
}

/* Print (the last column unpadded) with indent, then free. */
static void table_print(struct table *t, const char *indent)
{
	size_t w[MAXCOLS] = { 0 }, r, c;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++)
			if (strlen(t->cells[r * t->ncols + c]) > w[c])
				w[c] = strlen(t->cells[r * t->ncols + c]);
	for (r = 0; r < t->nrows; r++) {
		printf("%s", indent);
		for (c = 0; c < t->ncols; c++) {
			char *s = str_escape_ctl(t->cells[r * t->ncols + c]);
			if (c + 1 < t->ncols)
				printf("%-*s  ", (int)w[c], s);
			else
				printf("%s\n", s);
			free(s);
		}
	}
	for (r = 0; r < t->nrows * t->ncols; r++)
		free(t->cells[r]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* ---- status ---- */

struct group {
	const char *name;
	const char *nodes_expr;      /* as written in burst.conf, or NULL */
	bool in_config;
	size_t nconfigured;          /* nodes burst.conf gives the set */
	size_t *idx;                 /* indexes into the node array */
	size_t n;
};

static struct group *group_get(struct group **g, size_t *ng, const char *name)
{
	size_t i;

	for (i = 0; i < *ng; i++)
		if (!strcmp((*g)[i].name, name))
			return &(*g)[i];
	*g = xrealloc(*g, (*ng + 1) * sizeof(**g));
	memset(&(*g)[*ng], 0, sizeof(**g));
	(*g)[*ng].name = name;
	return &(*g)[(*ng)++];
}

static void group_add(struct group *g, size_t i)
{
	g->idx = xrealloc(g->idx, (g->n + 1) * sizeof(size_t));
	g->idx[g->n++] = i;
}

/* state counts of a group, in the order of a node's life (node_state.h) */
static size_t state_counts(const struct group *g, const struct node_rec *nodes,
			   const char **names, size_t *counts, size_t max)
{
	size_t k = 0, j;
	int i;

	for (i = 0; i < NS_COUNT && k < max; i++) {
		size_t c = 0;
		for (j = 0; j < g->n; j++)
			if (nodes[g->idx[j]].state == (enum node_state)i)
				c++;
		if (c) {
			names[k] = node_state_name((enum node_state)i);
			counts[k++] = c;
		}
	}
	return k;
}

int agentview_status(const struct agentview_opts *o, int argc, char **argv)
{
	struct view v;
	struct node_rec *nodes = NULL;
	struct event_rec *ev = NULL;
	struct event_query q;
	struct group *groups = NULL;
	size_t nnodes = 0, ngroups = 0, nev = 0, i, j;
	char **pending = NULL;
	char spooldir[4096];
	burst_err_t err, spool_err;
	json_object *top = NULL, *jsets = NULL;
	int rc;

	if (argc) {
		fprintf(stderr, "%s: status takes no argument such as '%s' (see burstctl nodes HOSTLIST)\n",
			prog, argv[0]);
		return EXIT_USAGE;
	}
	rc = view_open(o, &v);
	if (rc)
		return rc;
	rc = load_nodes(&v, &nodes, &nnodes);
	if (rc)
		goto out;
	memset(&q, 0, sizeof(q));
	q.limit = o->limit > 0 ? (size_t)o->limit : STATUS_EVENTS;
	q.newest = true;
	if (state_events(v.db, &q, &ev, &nev, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		rc = EXIT_USAGE;
		goto out;
	}
	snprintf(spooldir, sizeof(spooldir), "%s/spool", v.state_dir);
	pending = spool_list(spooldir, &spool_err);

	/* the node sets of burst.conf in file order, then any the database adds */
	for (i = 0; v.cfg && i < v.cfg->nnodesets; i++) {
		struct group *g = group_get(&groups, &ngroups, v.cfg->nodesets[i].name);
		g->in_config = true;
		g->nodes_expr = v.cfg->nodesets[i].nodes_expr;
		g->nconfigured = v.cfg->nodesets[i].nodes.n;
	}
	for (i = 0; i < nnodes; i++) {
		const char *set = NULL;
		for (j = 0; v.cfg && j < v.cfg->nnodesets && !set; j++)
			if (hostlist_find(&v.cfg->nodesets[j].nodes, nodes[i].name) >= 0)
				set = v.cfg->nodesets[j].name;
		if (!set)
			set = nodes[i].nodeset ? nodes[i].nodeset : "-";
		group_add(group_get(&groups, &ngroups, set), i);
	}

	/* which agent acts (agent_lease.c): the lease's holder */
	{
		struct state_lease l;
		int lr = state_lease_get(v.db, &l, &err);
		if (o->json) {
			json_object *jl = NULL;
			top = json_object_new_object();
			jsets = json_object_new_array();
			json_object_object_add(top, "state_db", json_object_new_string(v.db_path));
			json_object_object_add(top, "time", json_object_new_double(v.now));
			if (lr == 1) {
				jl = json_object_new_object();
				json_object_object_add(jl, "holder", json_object_new_string(l.holder));
				json_object_object_add(jl, "epoch", json_object_new_int64(l.epoch));
				json_object_object_add(jl, "renewed", json_object_new_double(l.renewed));
				json_object_object_add(jl, "expires", json_object_new_double(l.expires));
				json_object_object_add(jl, "held", json_object_new_boolean(l.expires > v.now));
			}
			json_object_object_add(top, "lease", jl);
		} else {
			printf("agent state: %s\n", v.db_path);
			if (lr < 0)
				printf("active agent: unknown (%s)\n", err.msg);
			else if (lr == 0)
				printf("active agent: none (no agent has held the lease)\n");
			else if (l.expires == 0)
				printf("active agent: none (lease epoch %lld released by %s)\n", l.epoch, l.holder);
			else if (l.expires > v.now)
				printf("active agent: %s (lease epoch %lld, renewed %.1f s ago, expires in %.1f s)\n",
				       l.holder, l.epoch, v.now - l.renewed, l.expires - v.now);
			else
				printf("active agent: none (the lease of %s, epoch %lld, expired %.1f s ago: "
				       "a standby takes it over)\n", l.holder, l.epoch, v.now - l.expires);
		}
	}
	for (i = 0; i < ngroups; i++) {
		const struct group *g = &groups[i];
		const char *names[32];
		size_t counts[32], k, nk = state_counts(g, nodes, names, counts, 32);
		struct table t = { 7, 0, 0, NULL };
		json_object *js = NULL, *jst = NULL, *jact = NULL;
		bool any_active = false;
		size_t cooling = 0;

		for (j = 0; j < g->n; j++)
			if (nodes[g->idx[j]].state == NS_POWERED_DOWN && nodes[g->idx[j]].cooldown_until > v.now)
				cooling++;
		if (o->json) {
			js = json_object_new_object();
			jst = json_object_new_object();
			jact = json_object_new_array();
			json_object_object_add(js, "name", json_object_new_string(g->name));
			json_object_object_add(js, "nodes", g->nodes_expr ? json_object_new_string(g->nodes_expr) : NULL);
			json_object_object_add(js, "in_config", json_object_new_boolean(g->in_config));
			json_object_object_add(js, "count", json_object_new_int64((int64_t)g->n));
			for (k = 0; k < nk; k++)
				json_object_object_add(jst, names[k], json_object_new_int64((int64_t)counts[k]));
			json_object_object_add(js, "states", jst);
			json_object_object_add(js, "cooling_down", json_object_new_int64((int64_t)cooling));
		} else {
			printf("\nnode set %s%s%s%s: %zu node%s", g->name, g->nodes_expr ? " (" : "",
			       g->nodes_expr ? g->nodes_expr : "", g->nodes_expr ? ")" : "", g->n,
			       g->n == 1 ? "" : "s");
			for (k = 0; k < nk; k++)
				printf("%s %zu %s", k ? "," : ":", counts[k], names[k]);
			if (cooling)
				printf(" (%zu powered_down in cooldown after a failure: see burstctl nodes)", cooling);
			printf("%s\n", g->in_config || !v.cfg ? "" : " (not in burst.conf)");
			if (g->in_config && g->nconfigured > g->n)
				printf("  %zu node%s of burst.conf %s no state yet: has burst-agent run with this burst.conf?\n",
				       g->nconfigured - g->n, g->nconfigured - g->n == 1 ? "" : "s",
				       g->nconfigured - g->n == 1 ? "has" : "have");
		}
		for (j = 0; j < g->n; j++) {
			const struct node_rec *r = &nodes[g->idx[j]];
			char age[32];
			const char *row[7];
			if (r->state == NS_POWERED_DOWN)
				continue;
			if (o->json) {
				json_object_array_add(jact, node_json(r, v.now));
				continue;
			}
			if (!any_active) {
				const char *hdr[7] = { "NODE", "STATE", "INSTANCE", "AGE", "JOB", "ATTEMPT", "LAST_ERROR" };
				table_row(&t, hdr);
				any_active = true;
			}
			fmt_age(v.now - r->since, age, sizeof(age));
			{
				char job[32], att[32];
				snprintf(job, sizeof(job), "%ld", r->job);
				snprintf(att, sizeof(att), "%d", r->attempt);
				row[0] = r->name;
				row[1] = node_state_name(r->state);
				row[2] = r->instance;
				row[3] = age;
				row[4] = r->job ? job : NULL;
				row[5] = att;
				row[6] = r->last_error;
				table_row(&t, row);
			}
		}
		if (o->json) {
			json_object_object_add(js, "active", jact);
			json_object_array_add(jsets, js);
		} else
			table_print(&t, "  ");
	}
	if (o->json) {
		json_object *jp = json_object_new_array(), *je = json_object_new_array();
		for (i = 0; pending && pending[i]; i++)
			json_object_array_add(jp, json_object_new_string(pending[i]));
		json_object_object_add(top, "nodesets", jsets);
		json_object_object_add(top, "pending_requests", pending ? jp : NULL);
		if (!pending)
			json_object_put(jp);
		json_object_object_add(top, "pending_requests_error",
				       pending ? NULL : json_object_new_string(spool_err.msg));
		for (i = 0; i < nev; i++)
			json_object_array_add(je, event_json(&ev[i]));
		json_object_object_add(top, "events", je);
		print_json(top);
	} else {
		size_t np = 0;
		for (i = 0; pending && pending[i]; i++)
			np++;
		if (pending)
			printf("\npending requests: %zu%s\n", np,
			       np ? " (in the spool, not yet taken in by the agent: is it running?)" : "");
		else
			printf("\npending requests: unknown (%s)\n", spool_err.msg);
		for (i = 0; pending && pending[i]; i++)
			printf("  %s\n", pending[i]);
		printf("\nnewest events:\n");
		if (!nev)
			printf("  none\n");
		for (i = 0; i < nev; i++) {
			printf("  ");
			print_event(&ev[i], false);
		}
	}
	rc = EXIT_OK;
out:
	for (i = 0; i < ngroups; i++)
		free(groups[i].idx);
	free(groups);
	spool_list_free(pending);
	state_events_free(ev, nev);
	state_nodes_free(nodes, nnodes);
	view_close(&v);
	return rc;
}

/* ---- nodes ---- */

int agentview_nodes(const struct agentview_opts *o, int argc, char **argv)
{
	struct view v;
	struct node_rec *nodes = NULL;
	struct hostlist want = { NULL, 0, 0 };
	size_t nnodes = 0, i;
	char *seen = NULL;
	struct table t = { 10, 0, 0, NULL };
	json_object *arr = NULL;
	burst_err_t err;
	int rc;

	for (i = 0; i < (size_t)argc; i++)
		if (hostlist_expand(argv[i], &want, 1 << 20, &err) < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, argv[i], err.msg);
			hostlist_free(&want);
			return EXIT_USAGE;
		}
	rc = view_open(o, &v);
	if (rc) {
		hostlist_free(&want);
		return rc;
	}
	rc = load_nodes(&v, &nodes, &nnodes);
	if (rc)
		goto out;
	seen = xcalloc(want.n ? want.n : 1, 1);
	if (o->json)
		arr = json_object_new_array();
	else {
		const char *hdr[10] = { "NODE", "NODESET", "STATE", "ATTEMPT", "INSTANCE", "ADDRESS", "AGE",
					"JOB", "COOLDOWN", "LAST_ERROR" };
		table_row(&t, hdr);
	}
	for (i = 0; i < nnodes; i++) {
		const struct node_rec *r = &nodes[i];
		char age[32], att[32], job[32], cool[32];
		const char *row[10];
		if (argc) {
			long k = hostlist_find(&want, r->name);
			if (k < 0)
				continue;
			seen[k] = 1;
		}
		if (o->json) {
			json_object_array_add(arr, node_json(r, v.now));
			continue;
		}
		fmt_age(v.now - r->since, age, sizeof(age));
		snprintf(att, sizeof(att), "%d", r->attempt);
		snprintf(job, sizeof(job), "%ld", r->job);
		fmt_age(ceil(r->cooldown_until - v.now), cool, sizeof(cool));
		row[0] = r->name;
		row[1] = r->nodeset;
		row[2] = node_state_name(r->state);
		row[3] = att;
		row[4] = node_live(r) ? r->instance : NULL;
		row[5] = node_live(r) ? r->address : NULL;
		row[6] = age;
		row[7] = node_live(r) && r->job ? job : NULL;
		row[8] = r->cooldown_until > v.now ? cool : NULL;
		row[9] = r->last_error;
		table_row(&t, row);
	}
	if (o->json)
		print_json(arr);
	else
		table_print(&t, "");
	rc = EXIT_OK;
	for (i = 0; i < want.n; i++)
		if (!seen[i]) {
			fprintf(stderr, "%s: %s: not in the agent's state (%s); is it a node of burst.conf?\n",
				prog, want.names[i], v.db_path);
			rc = EXIT_NOMATCH;
		}
out:
	free(seen);
	hostlist_free(&want);
	state_nodes_free(nodes, nnodes);
	view_close(&v);
	return rc;
}

/* ---- events ---- */

static volatile sig_atomic_t stop_following;

static void on_stop(int sig)
{
	(void)sig;
	stop_following = 1;
}

/* SECONDS, or a number with s, m, h or d. Returns seconds or -1. */
static double parse_duration(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (*end && end[1])
		return -1;
	switch (*end) {
	case '\0': case 's': return v;
	case 'm': return v * 60;
	case 'h': return v * 3600;
	case 'd': return v * 86400;
	default: return -1;
	}
}

/*
 * Whether stdout is a pipe whose reader has gone (head -1 has seen enough):
 * then there is no one to follow for, even before the next write fails.
 */
static bool reader_gone(void)
{
	struct stat sb;
	struct pollfd p = { STDOUT_FILENO, 0, 0 };

	if (fstat(STDOUT_FILENO, &sb) < 0 || !S_ISFIFO(sb.st_mode))
		return false;
	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* Print the events q selects; *last gets the id of the last one printed. */
static int print_events(struct view *v, const struct event_query *q, bool json, long long *last,
			size_t *printed)
{
	struct event_rec *ev;
	size_t n, i;
	burst_err_t err;

	if (state_events(v->db, q, &ev, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	for (i = 0; i < n; i++) {
		print_event(&ev[i], json);
		*last = ev[i].id;
	}
	*printed = n;
	state_events_free(ev, n);
	return 0;
}

int agentview_events(const struct agentview_opts *o, int argc, char **argv)
{
	struct view v;
	struct event_query q;
	long long last = 0;
	size_t printed;
	double since = 0;
	int rc;

	if (argc) {
		fprintf(stderr, "%s: events takes no argument such as '%s' (options: --follow, --node NODE, --since SECONDS, -n COUNT)\n",
			prog, argv[0]);
		return EXIT_USAGE;
	}
	if (o->since) {
		since = parse_duration(o->since);
		if (since < 0) {
			fprintf(stderr, "%s: --since takes seconds (or a number with s, m, h, d), not '%s'\n",
				prog, o->since);
			return EXIT_USAGE;
		}
	}
	rc = view_open(o, &v);
	if (rc)
		return rc;
	if (o->node) {
		struct node_rec r;
		burst_err_t err;
		int found = state_node_get(v.db, o->node, &r, &err);
		state_node_clear(&r);
		if (found == 0) {
			fprintf(stderr, "%s: %s: not in the agent's state (%s); is it a node of burst.conf?\n",
				prog, o->node, v.db_path);
			view_close(&v);
			return EXIT_NOMATCH;
		}
	}
	memset(&q, 0, sizeof(q));
	q.node = o->node;
	q.since = o->since ? v.now - since : 0;
	if (o->limit > 0)
		q.limit = (size_t)o->limit;
	else if (o->follow && !o->since)
		q.limit = FOLLOW_EVENTS;
	q.newest = true;
	if (print_events(&v, &q, o->json, &last, &printed) < 0) {
		view_close(&v);
		return EXIT_USAGE;
	}
	fflush(stdout);
	if (o->follow) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGPIPE, &sa, NULL);
		q.newest = false;
		q.limit = FOLLOW_BATCH;
		while (!stop_following && !ferror(stdout)) {
			q.after_id = last;
			if (print_events(&v, &q, o->json, &last, &printed) < 0) {
				view_close(&v);
				return EXIT_USAGE;
			}
			if (fflush(stdout) != 0 || reader_gone())
				break;
			if (printed < FOLLOW_BATCH) {
				struct timespec ts = { 0, FOLLOW_POLL_NS };
				nanosleep(&ts, NULL);
			}
		}
	}
	view_close(&v);
	return EXIT_OK;
}

/* ---- cost ---- */

/*
 * A time for cost --since/--until: a duration ago (90, 90s, 5m, 2h, 3d),
 * a date or date and time in UTC (2026-11-01, 2026-11-01T08:00[:SS][Z]),
 * or @SECONDS since the epoch. -1 if it is none of these.
 */
static double parse_when(const char *s, double now)
{
	struct tm tm;
	const char *end;
	double d;

	if (!s || !*s)
		return -1;
	if (s[0] == '@') {
		char *e;
		errno = 0;
		d = strtod(s + 1, &e);
		return errno || e == s + 1 || *e || !isfinite(d) || d < 0 ? -1 : d;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && *end == 'T') {
		const char *e2 = strptime(end + 1, "%H:%M:%S", &tm);
		end = e2 ? e2 : strptime(end + 1, "%H:%M", &tm);
	}
	if (end && (!*end || (end[0] == 'Z' && !end[1]))) {
		tm.tm_isdst = 0;
		return (double)timegm(&tm);
	}
	d = parse_duration(s);
	return d < 0 ? -1 : now - d;
}

static const char *const cost_bys[] = { "job", "user", "account", "partition", "nodeset", "provider", NULL };

struct cost_row {
	char *key;
	const char *kind;        /* "job" (a job's time), "boot", "idle" */
	double seconds, dollars, unpriced;   /* unpriced: seconds at an unknown price */
};

static int cmp_row(const void *a, const void *b)
{
	const struct cost_row *x = a, *y = b;
	int k = strcmp(x->kind, y->kind);

	if (k)   /* the jobs' rows first, then boot, then idle */
		return !strcmp(x->kind, "job") ? -1 : !strcmp(y->kind, "job") ? 1 : k;
	/* job ids in numeric order */
	if (strlen(x->key) != strlen(y->key) && strspn(x->key, "0123456789") == strlen(x->key) &&
	    strspn(y->key, "0123456789") == strlen(y->key))
		return strlen(x->key) < strlen(y->key) ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void user_name(const char *uid, char *buf, size_t len)
{
	struct passwd *pw = NULL;
	char *end;
	unsigned long v;

	snprintf(buf, len, "%s", uid ? uid : "?");
	if (!uid || !*uid)
		return;
	v = strtoul(uid, &end, 10);
	if (!*end && (pw = getpwuid((uid_t)v)) != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
}

static void fmt_utc(double t, char *buf, size_t len)
{
	time_t s = (time_t)floor(t);
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* cost --budgets: each Budget= line's spending in its period so far, as the
 * agent counts it before a launch (lib/core/cost.c's cost_spent). */

static int strcmp_null(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* The instance types whose time the cost could not price, and the line
 * that would price each (a first try with the local provider has none). */
static void unpriced_hint(const struct cost_inst *insts, size_t ni, double secs)
{
	size_t i, j;

	printf("note: %.4f hours at no known price, not counted:", secs / 3600.0);
	for (i = 0; i < ni; i++) {
		if (!isnan(insts[i].price))
			continue;
		for (j = 0; j < i; j++)   /* each (type, provider, region) once */
			if (isnan(insts[j].price) && !strcmp_null(insts[j].type, insts[i].type) &&
			    !strcmp_null(insts[j].provider, insts[i].provider) && !strcmp_null(insts[j].region, insts[i].region))
				break;
		if (j < i)
			continue;
		if (insts[i].region && *insts[i].region)
			printf(" %s (provider %s, region %s)", insts[i].type ? insts[i].type : "?",
			       insts[i].provider ? insts[i].provider : "?", insts[i].region);
		else   /* (a price is per region: the provider needs one) */
			printf(" %s (provider %s, no region: give the provider Regions=NAME first)",
			       insts[i].type ? insts[i].type : "?", insts[i].provider ? insts[i].provider : "?");
	}
	printf("; give each a price in burst.conf for the instances launched from now on: "
	       "Price=TYPE Provider=P Region=R OnDemand=USD-PER-HOUR (burst.conf(5))\n");
}
static int cost_budgets(const struct agentview_opts *o)
{
	struct view v;
	struct cost_inst *insts = NULL;
	struct cost_hold *holds = NULL;
	size_t ni = 0, nh = 0, b;
	double from;
	burst_err_t err;
	json_object *arr = NULL;
	int rc;

	if (o->since || o->until || o->by) {
		fprintf(stderr, "%s: cost --budgets takes each budget's own period: no --since, --until or --by\n", prog);
		return EXIT_USAGE;
	}
	if (!o->config) {
		fprintf(stderr, "%s: cost --budgets needs burst.conf (--config FILE): the budgets are its Budget= lines\n", prog);
		return EXIT_USAGE;
	}
	if ((rc = view_open(o, &v)) != 0)
		return rc;
	from = v.now;
	for (b = 0; b < v.cfg->nbudgets; b++) {
		double f = cost_period_start((enum cost_period)v.cfg->budgets[b].period, v.now);
		if (f < from)
			from = f;
	}
	if (state_cost_read(v.db, from, &insts, &ni, &holds, &nh, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		view_close(&v);
		return EXIT_USAGE;
	}
	if (o->json)
		arr = json_object_new_array();
	else if (!v.cfg->nbudgets)
		printf("no Budget= line in %s\n", o->config);
	else
		printf("%-16s %-28s %-6s %-20s %12s %12s %12s\n", "BUDGET", "SCOPE", "PERIOD", "SINCE", "SPENT", "AMOUNT", "LEFT");
	for (b = 0; b < v.cfg->nbudgets; b++) {
		const struct cfg_budget *bg = &v.cfg->budgets[b];
		double ps = cost_period_start((enum cost_period)bg->period, v.now), spent;
		struct cost_item *items = NULL;
		size_t n = 0;
		char scope[300], since[40];

		cost_items(insts, ni, holds, nh, ps, v.now, &items, &n);
		spent = cost_spent(insts, holds, items, n, bg->nodeset, bg->account);
		free(items);
		snprintf(scope, sizeof(scope), "%s%s%s%s%s", bg->nodeset ? "nodeset=" : "", bg->nodeset ? bg->nodeset : "",
			 bg->nodeset && bg->account ? " " : "", bg->account ? "account=" : "", bg->account ? bg->account : "");
		fmt_utc(ps, since, sizeof(since));
		if (arr) {
			json_object *r = json_object_new_object();
			json_object_object_add(r, "budget", json_object_new_string(bg->name));
			json_object_object_add(r, "nodeset", bg->nodeset ? json_object_new_string(bg->nodeset) : NULL);
			json_object_object_add(r, "account", bg->account ? json_object_new_string(bg->account) : NULL);
			json_object_object_add(r, "period", json_object_new_string(cost_period_name((enum cost_period)bg->period)));
			json_object_object_add(r, "since", json_object_new_double(ps));
			json_object_object_add(r, "spent", json_object_new_double(spent));
			json_object_object_add(r, "amount", json_object_new_double(bg->amount));
			json_object_object_add(r, "left", json_object_new_double(bg->amount - spent));
			json_object_array_add(arr, r);
		} else
			printf("%-16s %-28s %-6s %-20s %12.4f %12.4f %12.4f\n", bg->name, scope[0] ? scope : "global",
			       cost_period_name((enum cost_period)bg->period), since, spent, bg->amount, bg->amount - spent);
	}
	if (arr) {
		json_object *top = json_object_new_object();
		json_object_object_add(top, "budgets", arr);
		print_json(top);
	}
	cost_insts_free(insts, ni);
	cost_holds_free(holds, nh);
	view_close(&v);
	return EXIT_OK;
}

int agentview_cost(const struct agentview_opts *o, int argc, char **argv)
{
	struct view v;
	struct cost_inst *insts = NULL;
	struct cost_hold *holds = NULL;
	struct cost_item *items = NULL;
	struct cost_row *rows = NULL;
	size_t ni = 0, nh = 0, n = 0, nrows = 0, i, k;
	const char *by = o->by ? o->by : "job";
	double since, until, tot_s = 0, tot_d = 0, tot_u = 0;
	bool by_inst;
	burst_err_t err;
	int rc;

	if (argc > 0) {
		fprintf(stderr, "%s: cost takes no argument such as '%s' (options: --since T, --until T, --by KEY, --json)\n",
			prog, argv[0]);
		return EXIT_USAGE;
	}
	if (o->budgets)
		return cost_budgets(o);
	for (i = 0; cost_bys[i] && strcmp(cost_bys[i], by); i++)
		;
	if (!cost_bys[i]) {
		const char *near = str_suggest(by, cost_bys, 0);
		fprintf(stderr, "%s: --by %s: give job, user, account, partition, nodeset or provider%s%s%s\n", prog, by,
			near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
		return EXIT_USAGE;
	}
	by_inst = !strcmp(by, "nodeset") || !strcmp(by, "provider");
	{
		double t = wall_seconds();
		since = o->since ? parse_when(o->since, t) : 0;
		until = o->until ? parse_when(o->until, t) : t;
		if (since < 0 || until < 0) {
			fprintf(stderr, "%s: --%s %s: not a time: give a duration ago (90s, 5m, 2h, 3d), a date in UTC "
				"(2026-11-01 or 2026-11-01T08:00), or @SECONDS since the epoch\n", prog,
				since < 0 ? "since" : "until", since < 0 ? o->since : o->until);
			return EXIT_USAGE;
		}
		if (until > t)
			until = t;   /* nothing ran in the future */
		if (since >= until) {
			char a[40], b[40];
			fmt_utc(since, a, sizeof(a));
			fmt_utc(until, b, sizeof(b));
			fprintf(stderr, "%s: --since (%s) is not before --until (%s, or now)\n", prog, a, b);
			return EXIT_USAGE;
		}
	}
	if ((rc = view_open(o, &v)) != 0)
		return rc;
	if (state_cost_read(v.db, since, &insts, &ni, &holds, &nh, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		view_close(&v);
		return EXIT_USAGE;
	}
	cost_items(insts, ni, holds, nh, since, until, &items, &n);
	for (i = 0; i < n; i++) {
		const struct cost_item *it = &items[i];
		const struct cost_inst *in = &insts[it->inst];
		const struct cost_hold *h = it->hold >= 0 ? &holds[it->hold] : NULL;
		const char *kind = it->kind == COST_JOB ? "job" : it->kind == COST_BOOT ? "boot" : "idle";
		char key[256];

		if (by_inst)
			snprintf(key, sizeof(key), "%s", !strcmp(by, "nodeset") ? (in->nodeset ? in->nodeset : "?") :
				 (in->provider ? in->provider : "?"));
		else if (!h)
			snprintf(key, sizeof(key), "-");
		else if (!strcmp(by, "job"))
			snprintf(key, sizeof(key), "%ld", h->job);
		else if (!strcmp(by, "user"))
			user_name(h->user, key, sizeof(key));
		else
			snprintf(key, sizeof(key), "%s", !strcmp(by, "account") ? (h->account ? h->account : "?") :
				 (h->partition ? h->partition : "?"));
		for (k = 0; k < nrows; k++)
			if (!strcmp(rows[k].kind, kind) && !strcmp(rows[k].key, key))
				break;
		if (k == nrows) {
			rows = xrealloc(rows, (nrows + 1) * sizeof(*rows));
			memset(&rows[nrows], 0, sizeof(*rows));
			rows[nrows].key = xstrdup(key);
			rows[nrows].kind = kind;
			nrows++;
		}
		rows[k].seconds += it->seconds;
		tot_s += it->seconds;
		if (isnan(it->dollars)) {
			rows[k].unpriced += it->seconds;
			tot_u += it->seconds;
		} else {
			rows[k].dollars += it->dollars;
			tot_d += it->dollars;
		}
	}
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), cmp_row);
	if (o->json) {
		json_object *top = json_object_new_object(), *arr = json_object_new_array();
		char a[40], b[40];
		fmt_utc(since, a, sizeof(a));
		fmt_utc(until, b, sizeof(b));
		json_object_object_add(top, "since", json_object_new_double(since));
		json_object_object_add(top, "until", json_object_new_double(until));
		json_object_object_add(top, "since_utc", json_object_new_string(a));
		json_object_object_add(top, "until_utc", json_object_new_string(b));
		json_object_object_add(top, "by", json_object_new_string(by));
		for (k = 0; k < nrows; k++) {
			json_object *r = json_object_new_object();
			json_object_object_add(r, by, json_object_new_string(rows[k].key));
			json_object_object_add(r, "kind", json_object_new_string(rows[k].kind));
			json_object_object_add(r, "seconds", json_object_new_double(rows[k].seconds));
			json_object_object_add(r, "dollars", json_object_new_double(rows[k].dollars));
			json_object_object_add(r, "unpriced_seconds", json_object_new_double(rows[k].unpriced));
			json_object_array_add(arr, r);
		}
		json_object_object_add(top, "rows", arr);
		{
			json_object *t = json_object_new_object();
			json_object_object_add(t, "seconds", json_object_new_double(tot_s));
			json_object_object_add(t, "dollars", json_object_new_double(tot_d));
			json_object_object_add(t, "unpriced_seconds", json_object_new_double(tot_u));
			json_object_object_add(top, "total", t);
		}
		{
			json_object *ia = json_object_new_array();
			for (i = 0; i < ni; i++) {
				json_object *r = json_object_new_object();
				json_object_object_add(r, "provider", json_object_new_string(insts[i].provider ? insts[i].provider : ""));
				json_object_object_add(r, "instance", json_object_new_string(insts[i].instance ? insts[i].instance : ""));
				json_object_object_add(r, "node", json_object_new_string(insts[i].node ? insts[i].node : ""));
				json_object_object_add(r, "instance_type", json_object_new_string(insts[i].type ? insts[i].type : ""));
				json_object_object_add(r, "region", json_object_new_string(insts[i].region ? insts[i].region : ""));
				json_object_object_add(r, "price", isnan(insts[i].price) ? NULL : json_object_new_double(insts[i].price));
				json_object_object_add(r, "price_source", json_object_new_string(insts[i].price_source ? insts[i].price_source : ""));
				json_object_object_add(r, "launched", json_object_new_double(insts[i].launched));
				json_object_object_add(r, "joined", insts[i].joined > 0 ? json_object_new_double(insts[i].joined) : NULL);
				json_object_object_add(r, "ended", insts[i].ended > 0 ? json_object_new_double(insts[i].ended) : NULL);
				json_object_array_add(ia, r);
			}
			json_object_object_add(top, "instances", ia);
		}
		print_json(top);
	} else {
		char a[40], b[40];
		fmt_utc(since, a, sizeof(a));
		fmt_utc(until, b, sizeof(b));
		printf("cost from %s to %s, by %s (instance time at its on-demand price)\n", since > 0 ? a : "the first record", b, by);
		{
			char up[16];
			for (k = 0; by[k] && k + 1 < sizeof(up); k++)
				up[k] = (char)toupper((unsigned char)by[k]);
			up[k] = '\0';
			printf("%-24s %-5s %12s %12s\n", up, "KIND", "HOURS", "USD");
		}
		for (k = 0; k < nrows; k++)
			printf("%-24s %-5s %12.4f %12.4f%s\n", rows[k].key, rows[k].kind, rows[k].seconds / 3600.0,
			       rows[k].dollars, rows[k].unpriced > 0 ? "  (some time at an unknown price: not counted)" : "");
		printf("%-24s %-5s %12.4f %12.4f\n", "total", "", tot_s / 3600.0, tot_d);
		if (tot_u > 0)
			unpriced_hint(insts, ni, tot_u);
	}
	for (k = 0; k < nrows; k++)
		free(rows[k].key);
	free(rows);
	free(items);
	cost_insts_free(insts, ni);
	cost_holds_free(holds, nh);
	view_close(&v);
	return EXIT_OK;
}

int agentview_state(const struct agentview_opts *o, int argc, char **argv)
{
	struct view v;
	burst_err_t err;
	int rc;
	char when[40];

	if (argc != 2 || strcmp(argv[0], "backup")) {
		fprintf(stderr, "%s: usage: burstctl [-c burst.conf] state backup FILE\n", prog);
		return EXIT_USAGE;
	}
	if ((rc = view_open(o, &v)) != 0)
		return rc;
	rc = EXIT_OK;
	if (state_backup(v.db, argv[1], &err) < 0) {
		fprintf(stderr, "%s: state backup: %s (%s is untouched; nothing was written)\n", prog, err.msg, argv[1]);
		rc = 1;
	} else {
		fmt_utc(v.now, when, sizeof(when));
		printf("%s: the agent's state (%s) as of %s\n", argv[1], v.db_path, when);
	}
	view_close(&v);
	return rc;
}

/*
 * config.c - read burst.conf: its lines, Include, the references between
 * objects and the defaults (the keys are in config_keys.c, each object
 * line's parser in config_OBJECT.c).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <libgen.h>
#include <stdarg.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "policy.h"

#include "config_int.h"
#include "strutil.h"

#define MAX_WORDS 128
#define MAX_INCLUDE_DEPTH 8
#define MAX_LINE_LEN 65536

void cfg_err(struct loader *ld, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(&ld->errs, file, line, fmt, ap);
	va_end(ap);
}

char **cfg_split_list(const char *s, size_t *n)
{
	char **v = NULL;
	const char *p = s;

	*n = 0;
	while (*p) {
		const char *q = strchr(p, ',');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len) {
			v = xrealloc(v, (*n + 2) * sizeof(char *));
			v[(*n)++] = xstrndup(p, len);
			v[*n] = NULL;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!v) {
		v = xcalloc(1, sizeof(char *));
	}
	return v;
}

void cfg_free_list(char **v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

bool cfg_valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

void cfg_unknown_key(struct loader *ld, const char *file, int line, const char *obj,
		     const char *key, const char *const *known)
{
	conf_unknown_key(&ld->errs, file, line, obj, key, known, "burst.conf(5)");
}

bool cfg_parse_bool(const char *v, bool *out)
{
	if (str_ieq(v, "yes") || str_ieq(v, "true") || str_ieq(v, "1")) { *out = true; return true; }
	if (str_ieq(v, "no") || str_ieq(v, "false") || str_ieq(v, "0")) { *out = false; return true; }
	return false;
}

struct cfg_where cfg_where_of(const char *file, int line)
{
	struct cfg_where w = { xstrdup(file), line };
	return w;
}

const char *config_default_path(const char *explicit_path)
{
	static char buf[PATH_MAX];

	return conf_default_path(explicit_path, "BURST_CONF", "burst.conf", buf, sizeof(buf));
}

/* ---- object lines ---- */

bool cfg_object_open(struct loader *ld, const char *file, int line, const char *kind, const char *name,
		     const char *rule, struct cfg_objects objs)
{
	size_t i;

	if (!cfg_valid_name(name)) {
		cfg_err(ld, file, line, "%s name '%s' must be letters, digits, '_', '.' or '-'%s", kind, name, rule);
		return false;
	}
	for (i = 0; i < objs.n; i++) {
		const char *at = (const char *)objs.v + i * objs.size;
		const char *other = *(char *const *)(const void *)(at + objs.name_off);
		const struct cfg_where *where = (const struct cfg_where *)(const void *)(at + objs.where_off);
		if (strcmp(other, name) == 0) {
			cfg_err(ld, file, line, "%s %s is defined twice (first at %s:%d)", kind, name, where->file,
				where->line);
			return false;
		}
	}
	return true;
}

void cfg_object_words(struct loader *ld, const char *file, int line, struct conf_word *w, int n,
		      const char *kind, const char *bare, const char *const *known, cfg_key_fn key, void *obj)
{
	int k;

	for (k = 1; k < n; k++) {
		if (!w[k].key)
			cfg_err(ld, file, line, "%sexpected Key=Value, found '%s'", bare, w[k].val);
		else if (!key(ld, file, line, obj, w[k].key, w[k].val))
			cfg_unknown_key(ld, file, line, kind, w[k].key, known);
	}
}

/* ---- values several lines share ---- */

/* ADDRESS:PORT (JoinAddress=): 1 when it is one. */
int cfg_valid_hostport(const char *v)
{
	const char *colon = strrchr(v, ':');
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;

	return colon && colon != v && end && !*end && colon[1] && port >= 1 && port <= 65535;
}

/* An IPv4 address in dotted form, or "*" (every address): into out; 1 when valid. */
int cfg_listen_addr(const char *v, size_t n, char out[16])
{
	char a[64];
	struct in_addr in;

	if (n == 0 || n >= sizeof(a))
		return 0;
	memcpy(a, v, n);
	a[n] = '\0';
	if (!strcmp(a, "*"))
		snprintf(a, sizeof(a), "0.0.0.0");
	if (inet_pton(AF_INET, a, &in) != 1)
		return 0;
	inet_ntop(AF_INET, &in, out, 16);
	return 1;
}

static int load_file(struct loader *ld, const char *path, int depth, const char *from,
		     int fromline);

static void parse_line(struct loader *ld, const char *file, int line, char *text, int depth)
{
	const char **names = NULL;
	struct conf_word w[MAX_WORDS];
	const struct cfg_key *k;
	size_t bad = 0;
	int n;
	char *copy;

	/* Contract lines: the rest of the line after the name is the contract. */
	{
		char *p = text;
		while (isspace((unsigned char)*p))
			p++;
		if (strncasecmp(p, "Contract=", 9) == 0) {
			char *name = p + 9, *end = name;
			while (*end && !isspace((unsigned char)*end))
				end++;
			if (*end)
				*end++ = '\0';
			cfg_parse_contract(ld, file, line, str_trim(end), name);
			return;
		}
	}
	copy = xstrdup(text);
	n = conf_split_words(copy, w, MAX_WORDS, false, &bad);
	if (n < 0) {
		cfg_err(ld, file, line, "unterminated quote starting near column %zu", bad);
		goto out;
	}
	if (n == 0)
		goto out;
	if (n == MAX_WORDS) {
		cfg_err(ld, file, line, "too many words on one line (at most %d)", MAX_WORDS - 1);
		goto out;
	}
	names = cfg_key_names();
	if (!w[0].key) {
		if (str_ieq(w[0].val, "Include")) {
			char path[PATH_MAX];
			if (n != 2) {
				cfg_err(ld, file, line, "Include takes one file name");
				goto out;
			}
			if (w[1].val[0] == '/')
				snprintf(path, sizeof(path), "%s", w[1].val);
			else {
				char *dup = xstrdup(file);
				snprintf(path, sizeof(path), "%s/%s", dirname(dup), w[1].val);
				free(dup);
			}
			load_file(ld, path, depth + 1, file, line);
			goto out;
		}
		{
			const char *near = str_suggest(w[0].val, names, 0);
			cfg_err(ld, file, line, "expected Key=Value, found '%s'%s%s%s", w[0].val,
				near ? "; did you mean '" : "", near ? near : "", near ? "=...'?" : "");
		}
		goto out;
	}
	k = cfg_key_find(w[0].key);
	if (!w[0].val[0] && !(k && k->kind == CK_DIR)) {
		cfg_err(ld, file, line, "%s= needs a value", w[0].key);
		goto out;
	}
	if (k && k->kind == CK_OBJECT)
		k->object(ld, file, line, w, n);
	else if (k && k->kind != CK_CONTRACT)
		cfg_parse_globals(ld, file, line, w, n);
	else {
		const char *near = str_suggest(w[0].key, names, 0);
		cfg_err(ld, file, line, "unknown key '%s'%s%s%s (a line starts with a global key or Provider=, Contract=, NodeSet=, InstanceType=, Price=, Budget=)",
			w[0].key, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
out:
	free(names);
	free(copy);
}

static int load_file(struct loader *ld, const char *path, int depth, const char *from,
		     int fromline)
{
	FILE *f;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	int line = 0;

	if (depth > MAX_INCLUDE_DEPTH) {
		cfg_err(ld, from, fromline, "Include nested deeper than %d (a loop?) at %s", MAX_INCLUDE_DEPTH, path);
		return -1;
	}
	f = fopen(path, "r");
	if (!f) {
		if (from)
			cfg_err(ld, from, fromline, "Include %s: %s", path, strerror(errno));
		else {
			burst_err_set(ld->errs.err, "%s: cannot open: %s", path, strerror(errno));
			ld->errs.n++;
		}
		return -1;
	}
	while ((len = getline(&buf, &cap, f)) >= 0) {
		line++;
		if (len > MAX_LINE_LEN) {
			cfg_err(ld, path, line, "line longer than %d bytes", MAX_LINE_LEN);
			continue;
		}
		if (memchr(buf, '\0', (size_t)len)) {
			cfg_err(ld, path, line, "NUL byte in line (not a text file?)");
			continue;
		}
		/* join continuation lines ending in '\' */
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		conf_strip_comment(buf, false);
		parse_line(ld, path, line, buf, depth);
	}
	free(buf);
	if (ferror(f)) {   /* e.g. a directory: fopen succeeds, reading does not */
		int e = errno;

		fclose(f);
		if (from)
			cfg_err(ld, from, fromline, "Include %s: cannot read: %s", path, strerror(e));
		else {
			burst_err_set(ld->errs.err, "%s: cannot read: %s", path, strerror(e));
			ld->errs.n++;
		}
		return -1;
	}
	fclose(f);
	return 0;
}

struct burst_config *config_load(const char *path, burst_err_t *err)
{
	struct burst_config *cfg = xcalloc(1, sizeof(*cfg));
	struct loader ld = { cfg, { err, 0 } };
	size_t i, j;

	burst_err_clear(err);
	cfg->path = xstrdup(path);
	cfg->allow_inline = true;
	cfg->join_port = 6830;
	cfg->join_report_memory = CONFIG_JOIN_REPORT_MEMORY;
	cfg->boot_timeout = 300;
	cfg->reject_cooldown = 60;
	cfg->interruption_cooldown = 600;
	cfg->reconcile_interval = 60;
	cfg->cost_note_interval = 60;
	cfg->orphan_grace = 300;
	cfg->vanish_grace = 60;
	cfg->lease_timeout = 5;
	cfg->memory_tolerance = POLICY_DEFAULT_MEMORY_TOLERANCE;
	cfg->allowed_taint = POLICY_DEFAULT_TAINT;
	load_file(&ld, path, 0, NULL, 0);
	/* references between objects: checked even when lines had errors, so
	 * that one run reports everything (an object whose own line failed is
	 * still in its table unless its name itself was bad) */
	{
		for (i = 0; i < cfg->nnodesets; i++) {
			struct cfg_nodeset *ns = &cfg->nodesets[i];
			for (j = 0; j < ns->nproviders; j++) {
				size_t p;
				const char *names[64];
				size_t nn = 0;
				for (p = 0; p < cfg->nproviders; p++)
					if (strcmp(cfg->providers[p].name, ns->providers[j]) == 0)
						break;
				if (p < cfg->nproviders)
					continue;
				for (p = 0; p < cfg->nproviders && nn < 63; p++)
					names[nn++] = cfg->providers[p].name;
				names[nn] = NULL;
				{
					const char *near = str_suggest(ns->providers[j], names, 0);
					cfg_err(&ld, ns->where.file, ns->where.line,
					     "NodeSet %s: Providers names '%s', which no Provider= line defines%s%s%s",
					     ns->name, ns->providers[j], near ? "; did you mean '" : "",
					     near ? near : "", near ? "'?" : "");
				}
			}
			for (j = 0; j < i; j++) {
				size_t h;
				for (h = 0; h < ns->nodes.n; h++)
					if (hostlist_find(&cfg->nodesets[j].nodes, ns->nodes.names[h]) >= 0) {
						cfg_err(&ld, ns->where.file, ns->where.line,
						     "NodeSet %s: node %s is already in NodeSet %s (%s:%d); a node belongs to one node set",
						     ns->name, ns->nodes.names[h], cfg->nodesets[j].name,
						     cfg->nodesets[j].where.file, cfg->nodesets[j].where.line);
						break;
					}
			}
		}
		/* cloud API calls carry signed requests and their answers: TLS,
		 * unless a test's burst.conf says otherwise */
		for (i = 0; i < cfg->nproviders && !cfg->allow_insecure_endpoint; i++)
			if (cfg->providers[i].endpoint && !strncasecmp(cfg->providers[i].endpoint, "http://", 7))
				cfg_err(&ld, cfg->providers[i].where.file, cfg->providers[i].where.line,
				     "Provider %s: Endpoint=%s is plain HTTP: requests and answers would travel unencrypted and unverified; use https:// (AllowInsecureEndpoint=yes is for tests against a local endpoint only)",
				     cfg->providers[i].name, cfg->providers[i].endpoint);
		for (i = 0; i < cfg->nbudgets; i++) {
			const struct cfg_budget *b = &cfg->budgets[i];
			const char *names[64];
			size_t nn = 0;
			if (!b->nodeset)
				continue;
			for (j = 0; j < cfg->nnodesets; j++)
				if (!strcmp(cfg->nodesets[j].name, b->nodeset))
					break;
			if (j < cfg->nnodesets)
				continue;
			for (j = 0; j < cfg->nnodesets && nn < 63; j++)
				names[nn++] = cfg->nodesets[j].name;
			names[nn] = NULL;
			{
				const char *near = str_suggest(b->nodeset, names, 0);
				cfg_err(&ld, b->where.file, b->where.line,
				     "Budget %s: NodeSet=%s names no NodeSet= line%s%s%s", b->name, b->nodeset,
				     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			}
		}
		for (i = 0; i < cfg->ncontracts; i++)
			for (j = 0; j < cfg->nnodesets; j++)
				if (strcmp(cfg->contracts[i].name, cfg->nodesets[j].name) == 0)
					cfg_err(&ld, cfg->contracts[i].where.file, cfg->contracts[i].where.line,
					     "Contract %s has the name of NodeSet %s (%s:%d); both become Slurm features, so they must differ",
					     cfg->contracts[i].name, cfg->nodesets[j].name,
					     cfg->nodesets[j].where.file, cfg->nodesets[j].where.line);
	}
	/* where the agent listens for node reports: JoinListen=, else the local
	 * provider's bridge (as before JoinListen= existed), else everywhere */
	if (!cfg->join_listen_set) {
		const struct cfg_provider *loc = NULL;
		for (i = 0; i < cfg->nproviders && !loc; i++)
			if (!strcmp(cfg->providers[i].type, "local") && cfg->providers[i].address)
				loc = &cfg->providers[i];
		cfg->join_listen = xcalloc(1, sizeof(*cfg->join_listen));
		cfg->njoin_listen = 1;
		if (!loc || !cfg_listen_addr(loc->address, strcspn(loc->address, "/"), cfg->join_listen[0].addr))
			snprintf(cfg->join_listen[0].addr, sizeof(cfg->join_listen[0].addr), "0.0.0.0");
	}
	for (i = 0; i < cfg->njoin_listen; i++)
		if (!cfg->join_listen[i].port)
			cfg->join_listen[i].port = cfg->join_port;
	if (!cfg->cluster_name)
		cfg->cluster_name = xstrdup("slurm");
	if (!cfg->state_dir)
		cfg->state_dir = xstrdup(BURST_DEFAULT_STATE_DIR);
	if (!cfg->socket_path) {
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "%s/agent.sock", cfg->state_dir);
		cfg->socket_path = sb_take(&sb);
	}
	if (ld.errs.n) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

bool config_early_launch(const struct burst_config *cfg, const struct cfg_nodeset *ns)
{
	return ns && ns->early_launch >= 0 ? ns->early_launch != 0 : cfg->early_launch;
}

void config_free(struct burst_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->nproviders; i++)
		cfg_free_provider(&cfg->providers[i]);
	free(cfg->providers);
	for (i = 0; i < cfg->ncontracts; i++) {
		free(cfg->contracts[i].name);
		contract_free(cfg->contracts[i].c);
		free(cfg->contracts[i].where.file);
	}
	free(cfg->contracts);
	for (i = 0; i < cfg->nnodesets; i++)
		cfg_free_nodeset(&cfg->nodesets[i]);
	free(cfg->nodesets);
	for (i = 0; i < cfg->noverrides; i++)
		cfg_free_override(&cfg->overrides[i]);
	free(cfg->overrides);
	for (i = 0; i < cfg->nbudgets; i++)
		cfg_free_budget(&cfg->budgets[i]);
	free(cfg->budgets);
	free(cfg->path);
	free(cfg->cluster_name);
	free(cfg->catalog_dir);
	free(cfg->state_dir);
	free(cfg->socket_path);
	free(cfg->join_listen);
	free(cfg->join_address);
	free(cfg->prolog_slurmctld);
	free(cfg->munge_socket);
	free(cfg->acceptance);
	free(cfg->log_file);
	free(cfg->metrics_listen);
	cfg_free_list(cfg->blessed_kernels, cfg->nblessed_kernels);
	cfg_free_list(cfg->blessed_drivers, cfg->nblessed_drivers);
	cfg_free_list(cfg->required_modules, cfg->nrequired_modules);
	free(cfg);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

const char *config_identity_change(const struct burst_config *old, const struct burst_config *cfg,
				   char *buf, size_t len)
{
	size_t i, j, k;

	if (!same_str(old->cluster_name, cfg->cluster_name)) {
		snprintf(buf, len, "ClusterName changed from %s to %s (instances are tagged with it)",
			 old->cluster_name, cfg->cluster_name);
		return buf;
	}
	if (!same_str(old->state_dir, cfg->state_dir)) {
		snprintf(buf, len, "StateDir changed from %s to %s", old->state_dir, cfg->state_dir);
		return buf;
	}
	if (!same_str(old->socket_path, cfg->socket_path)) {
		snprintf(buf, len, "SocketPath changed from %s to %s", old->socket_path, cfg->socket_path);
		return buf;
	}
	if (old->join_port != cfg->join_port) {
		snprintf(buf, len, "JoinPort changed from %d to %d", old->join_port, cfg->join_port);
		return buf;
	}
	for (i = 0; i < old->nproviders; i++) {
		const struct cfg_provider *o = &old->providers[i], *n = NULL;
		for (j = 0; j < cfg->nproviders && !n; j++)
			if (!strcmp(cfg->providers[j].name, o->name))
				n = &cfg->providers[j];
		if (!n) {
			snprintf(buf, len, "Provider %s was removed (its live instances would be taken for vanished)",
				 o->name);
			return buf;
		}
		if (strcmp(n->type, o->type)) {
			snprintf(buf, len, "Provider %s changed Type from %s to %s", o->name, o->type, n->type);
			return buf;
		}
		for (j = 0; j < o->nregions; j++) {
			for (k = 0; k < n->nregions; k++)
				if (!strcmp(n->regions[k], o->regions[j]))
					break;
			if (k == n->nregions) {
				snprintf(buf, len,
					 "Provider %s: region %s was dropped (its live instances would be taken for vanished)",
					 o->name, o->regions[j]);
				return buf;
			}
		}
	}
	for (i = 0; i < old->njoin_listen || i < cfg->njoin_listen; i++)
		if (i >= old->njoin_listen || i >= cfg->njoin_listen ||
		    strcmp(old->join_listen[i].addr, cfg->join_listen[i].addr) ||
		    old->join_listen[i].port != cfg->join_listen[i].port) {
			snprintf(buf, len, "JoinListen= changed (the addresses the agent listens on for node reports)");
			return buf;
		}
	return NULL;
}

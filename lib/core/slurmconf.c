/*
 * slurmconf.c - slurm.conf read as slurmctld reads it, and Slurm's
 * accounting enforcement, for budgets by account (slurmconf.h). The rules are slurmctld's (22.05 and 24.11):
 * src/common/read_config.c reads AccountingStorageEnforce, and
 * src/slurmctld/controller.c turns enforcement off when
 * AccountingStorageType is not accounting_storage/slurmdbd.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "confwords.h"
#include "slurmconf.h"
#include "strutil.h"

#define MAX_INCLUDE_DEPTH 16
#define MAX_WORDS 256

int slurm_enforce_associations(const char *value)
{
	static const char *const implies[] = { "1", "associations", "2", "limits", "safe", "wckeys",
		"qos", "all", NULL };
	char *copy = xstrdup(value ? value : ""), *save = NULL, *tok;
	int assoc = 0;
	size_t i;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool known = false;
		for (i = 0; implies[i]; i++)
			if (!strcasecmp(tok, implies[i]))
				known = true, assoc = 1;
		if (!strcasecmp(tok, "nojobs") || !strcasecmp(tok, "nosteps") || !strcasecmp(tok, "none"))
			known = true;
		if (!known) {
			free(copy);
			return -1;
		}
	}
	free(copy);
	return assoc;
}

struct reader {
	const char *const *keys;    /* the keys wanted, and their values (the last wins) */
	size_t nkeys;
	char **vals;
	char cluster[128];
	char why[PATH_MAX + 256];
};

/* One logical line: its words; the keys wanted kept (the last wins). */
static void line_words(struct reader *r, char *text)
{
	struct conf_word w[MAX_WORDS];
	size_t bad = 0, i;
	int n = conf_split_words(text, w, MAX_WORDS, false, &bad), k;

	if (n <= 0 || !w[0].key)
		return;
	/* a node, partition or node set line: its words are the object's */
	if (!strcasecmp(w[0].key, "NodeName") || !strcasecmp(w[0].key, "PartitionName") ||
	    !strcasecmp(w[0].key, "NodeSet") || !strcasecmp(w[0].key, "DownNodes") ||
	    !strcasecmp(w[0].key, "FrontendName") || !strcasecmp(w[0].key, "SwitchName"))
		return;
	for (k = 0; k < n; k++) {
		if (!w[k].key)
			continue;
		if (!strcasecmp(w[k].key, "ClusterName"))
			snprintf(r->cluster, sizeof(r->cluster), "%s", w[k].val);
		for (i = 0; i < r->nkeys; i++)
			if (!strcasecmp(w[k].key, r->keys[i])) {
				free(r->vals[i]);
				r->vals[i] = xstrdup(w[k].val ? w[k].val : "");
			}
	}
}

static int read_file(struct reader *r, const char *path, int depth);

/* "Include FILE": 1 (read, or failed: r->why), 0 not an include line. */
static int include_line(struct reader *r, const char *path, const char *line, int depth, int *rc)
{
	const char *p = line;
	char file[PATH_MAX], full[PATH_MAX * 2];
	size_t n = 0;

	if (strncasecmp(p, "include", 7) || !isspace((unsigned char)p[7]))
		return 0;
	p += 7;
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p) && n + 1 < sizeof(file)) {
		if (p[0] == '%' && p[1] == 'c') {   /* the ClusterName, lower case */
			const char *c;
			for (c = r->cluster; *c && n + 1 < sizeof(file); c++)
				file[n++] = (char)tolower((unsigned char)*c);
			p += 2;
			continue;
		}
		file[n++] = *p++;
	}
	file[n] = '\0';
	if (file[0] == '/' || !strchr(path, '/'))
		snprintf(full, sizeof(full), "%s", file);
	else
		snprintf(full, sizeof(full), "%.*s/%s", (int)(strrchr(path, '/') - path), path, file);
	if (depth >= MAX_INCLUDE_DEPTH) {
		snprintf(r->why, sizeof(r->why), "%s: Include %s: includes nested more than %d deep", path, file,
			 MAX_INCLUDE_DEPTH);
		*rc = -1;
		return 1;
	}
	*rc = read_file(r, full, depth + 1);
	return 1;
}

static int read_file(struct reader *r, const char *path, int depth)
{
	FILE *f = fopen(path, "r");
	struct strbuf logical;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (!f) {
		snprintf(r->why, sizeof(r->why), "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	sb_init(&logical);
	sb_add(&logical, "");
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *p, *o;
		bool cont = false;

		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		/* '#' starts a comment, "\#" is a '#' */
		for (p = o = line; *p; p++) {
			if (p[0] == '\\' && p[1] == '#') {
				*o++ = '#';
				p++;
				continue;
			}
			if (*p == '#')
				break;
			*o++ = *p;
		}
		*o = '\0';
		/* a trailing '\' continues the line */
		if (o > line && o[-1] == '\\') {
			o[-1] = '\0';
			cont = true;
		}
		sb_add(&logical, line);
		if (cont)
			continue;
		{
			char *text = str_trim(logical.s);
			int irc = 0;
			if (include_line(r, path, text, depth, &irc)) {
				if (irc < 0) {
					rc = -1;
					break;
				}
			} else
				line_words(r, text);
		}
		sb_free(&logical);
		sb_init(&logical);
		sb_add(&logical, "");
	}
	if (!rc && logical.len)
		line_words(r, str_trim(logical.s));
	sb_free(&logical);
	free(line);
	fclose(f);
	return rc;
}

static void verdict(struct slurm_acct *out)
{
	out->dbd = !strcasecmp(out->type, "accounting_storage/slurmdbd");
	/* slurmctld enforces nothing without slurmdbd (controller.c), and
	 * nothing when a word is invalid (read_config.c) */
	out->associations = out->dbd && slurm_enforce_associations(out->enforce) == 1;
}

int slurmconf_values(const char *path, const char *const *keys, size_t nkeys, char **vals,
		     char *why, size_t whylen)
{
	struct reader r;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.keys = keys;
	r.nkeys = nkeys;
	r.vals = vals;
	for (i = 0; i < nkeys; i++)
		vals[i] = NULL;
	if (read_file(&r, path, 0) < 0) {
		for (i = 0; i < nkeys; i++) {
			free(vals[i]);
			vals[i] = NULL;
		}
		snprintf(why, whylen, "%s", r.why);
		return -1;
	}
	return 0;
}

void slurmconf_acct(const char *path, struct slurm_acct *out)
{
	static const char *const keys[] = { "AccountingStorageEnforce", "AccountingStorageType" };
	char *v[2];

	memset(out, 0, sizeof(*out));
	snprintf(out->source, sizeof(out->source), "%s", path);
	if (slurmconf_values(path, keys, 2, v, out->why, sizeof(out->why)) < 0)
		return;
	out->known = true;
	snprintf(out->enforce, sizeof(out->enforce), "%s", v[0] ? v[0] : "none");
	snprintf(out->type, sizeof(out->type), "%s", v[1] ? v[1] : "accounting_storage/none");
	free(v[0]);
	free(v[1]);
	verdict(out);
}

void slurm_acct_from_ctld(struct slurm_acct *out, bool associations, const char *enforce_text,
			  const char *type)
{
	memset(out, 0, sizeof(*out));
	out->known = true;
	snprintf(out->source, sizeof(out->source), "slurmctld's running configuration (scontrol show config)");
	snprintf(out->enforce, sizeof(out->enforce), "%s", enforce_text && *enforce_text ? enforce_text : "none");
	snprintf(out->type, sizeof(out->type), "%s", type && *type ? type : "accounting_storage/none");
	out->dbd = !strcasecmp(out->type, "accounting_storage/slurmdbd");
	out->associations = out->dbd && associations;
}

/*
 * confwords.c - the words of a slurm.conf-style line (confwords.h).
 */
#include <ctype.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confwords.h"
#include "strutil.h"

int conf_split_words(char *line, struct conf_word *w, int max, bool escapes, size_t *bad)
{
	char *p = line;
	int n = 0;

	for (;;) {
		char *start, *out;
		bool q = false;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (n == max)
			return n;
		w[n].col = (size_t)(p - line) + 1;
		start = out = p;
		w[n].key = NULL;
		w[n].val = NULL;
		while (*p && (q || !isspace((unsigned char)*p))) {
			if (escapes && q && *p == '\\' && (p[1] == '"' || p[1] == '\\')) {
				*out++ = p[1];
				p += 2;
				continue;
			}
			if (*p == '"') {
				q = !q;
				p++;
				continue;
			}
			if (*p == '=' && !w[n].key && !q) {
				*out++ = '\0';
				w[n].key = start;
				w[n].val = out;
				p++;
				continue;
			}
			*out++ = *p++;
		}
		if (q) {
			*bad = w[n].col;
			return -1;
		}
		if (*p)
			p++;
		*out = '\0';
		if (!w[n].key)
			w[n].val = start;
		n++;
	}
	return n;
}

const char *conf_default_path(const char *explicit_path, const char *env_name, const char *name,
			      char *buf, size_t len)
{
	const char *env;

	if (explicit_path && *explicit_path)
		return explicit_path;
	env = getenv(env_name);
	if (env && *env)
		return env;
	env = getenv("SLURM_CONF");
	if (env && *env && strlen(env) + strlen(name) + 2 < len) {
		char *dup = xstrdup(env);
		snprintf(buf, len, "%s/%s", dirname(dup), name);
		free(dup);
		return buf;
	}
	snprintf(buf, len, "/etc/slurm/%s", name);
	return buf;
}

/*
 * confwords.c - the words of a slurm.conf-style line (confwords.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confwords.h"
#include "strutil.h"

void conf_strip_comment(char *s, bool escapes)
{
	bool q = false;
	char *p;

	for (p = s; *p; p++) {
		if (*p == '\\' && p[1] == '#') {
			memmove(p, p + 1, strlen(p));
			continue;
		}
		if (escapes && *p == '\\' && q && p[1] == '"') {
			p++;
			continue;
		}
		if (*p == '"')
			q = !q;
		else if (*p == '#' && !q) {
			*p = '\0';
			return;
		}
	}
}

void conf_verror(struct conf_errors *ce, const char *file, int line, const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (ce->n == 0)
		burst_err_clear(ce->err);
	if (ce->n < CONF_ERRORS_SHOWN)
		burst_err_append(ce->err, "%s:%d: %s", file, line, msg);
	else if (ce->n == CONF_ERRORS_SHOWN)
		burst_err_append(ce->err, "%s:%d: (more errors not shown)", file, line);
	ce->n++;
}

void conf_error(struct conf_errors *ce, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(ce, file, line, fmt, ap);
	va_end(ap);
}

void conf_unknown_key(struct conf_errors *ce, const char *file, int line, const char *obj,
		      const char *key, const char *const *known, const char *manpage)
{
	const char *near = str_suggest(key, known, 0);

	if (near)
		conf_error(ce, file, line, "unknown %s key '%s'; did you mean '%s'?", obj, key, near);
	else
		conf_error(ce, file, line, "unknown %s key '%s' (see %s)", obj, key, manpage);
}

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
	env = env_name ? getenv(env_name) : NULL;
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

const char *share_default_path(const char *explicit_path, const char *env_name, const char *rel,
			       char *buf, size_t len)
{
	const char *env;

	if (explicit_path && *explicit_path)
		return explicit_path;
	env = getenv(env_name);
	if (env && *env)
		return env;
#if defined(BURST_ABS_BUILDDIR) && defined(BURST_ABS_SRCDIR)
	{
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		size_t bl = strlen(BURST_ABS_BUILDDIR);

		if (n > 0) {
			exe[n] = '\0';
			if (strncmp(exe, BURST_ABS_BUILDDIR, bl) == 0 && exe[bl] == '/') {
				snprintf(buf, len, "%s/share/%s", BURST_ABS_SRCDIR, rel);
				if (access(buf, R_OK) == 0)
					return buf;
			}
		}
	}
#endif
#ifdef BURST_PKGDATADIR
	snprintf(buf, len, "%s/%s", BURST_PKGDATADIR, rel);
#else
	snprintf(buf, len, "/usr/share/slurm-burst/%s", rel);
#endif
	return buf;
}

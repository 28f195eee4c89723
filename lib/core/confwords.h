/*
 * confwords.h - the words of a slurm.conf-style line (burst.conf,
 * acceptance.conf): Key=Value or bare words separated by blanks, values
 * quoted with "..." where they hold blanks.
 */
#ifndef BURST_CONFWORDS_H
#define BURST_CONFWORDS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"

struct conf_word {
	char *key;               /* before '=' (NULL for a bare word) */
	char *val;               /* after '=', unquoted */
	size_t col;              /* 1-based column in the line */
};

/*
 * Split line in place into at most max words (pointers into line). With
 * escapes, \" and \\ inside quotes stand for " and \. Returns the number of
 * words, or -1 with *bad the column of a quote left open.
 */
int conf_split_words(char *line, struct conf_word *w, int max, bool escapes, size_t *bad);

/*
 * Cut a comment off line s: from a '#' outside double quotes; "\#" stands
 * for a '#' of the text. With escapes, \" inside quotes does not end them
 * (conf_split_words' escapes).
 */
void conf_strip_comment(char *s, bool escapes);

/* How many errors a file's list shows: the rest are counted, and said once. */
#define CONF_ERRORS_SHOWN 50

/*
 * The errors of one configuration file, each a line "FILE:LINE: message" of
 * err (the first one clears it): at most CONF_ERRORS_SHOWN, then one line
 * "(more errors not shown)". n counts them all (0: none yet).
 */
struct conf_errors {
	burst_err_t *err;
	int n;
};

void conf_error(struct conf_errors *ce, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void conf_verror(struct conf_errors *ce, const char *file, int line, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/*
 * "unknown OBJ key 'KEY'", with the nearest of known (NULL-terminated) as
 * "did you mean", else a pointer to the manual page (e.g. "burst.conf(5)").
 */
void conf_unknown_key(struct conf_errors *ce, const char *file, int line, const char *obj,
		      const char *key, const char *const *known, const char *manpage);

/*
 * Where a configuration file is by default: explicit if given, else
 * $env_name (env_name may be NULL: no such variable), else name beside
 * slurm.conf ($SLURM_CONF's directory), else
 * /etc/slurm/name. Returns the argument, the environment's value, or buf
 * (len bytes) holding the path.
 */
const char *conf_default_path(const char *explicit_path, const char *env_name, const char *name,
			      char *buf, size_t len);

/*
 * Where shipped data (rel, relative to share/ in the source tree and to
 * the package data directory once installed) is by default: explicit if
 * given, else $env_name, else the source tree's when the running program is
 * in the build tree, else the installed one. Returns the argument, the
 * environment's value, or buf (len bytes) holding the path.
 */
const char *share_default_path(const char *explicit_path, const char *env_name, const char *rel,
			       char *buf, size_t len);

#endif

/*
 * confwords.h - the words of a slurm.conf-style line (burst.conf,
 * acceptance.conf): Key=Value or bare words separated by blanks, values
 * quoted with "..." where they hold blanks.
 */
#ifndef BURST_CONFWORDS_H
#define BURST_CONFWORDS_H

#include <stdbool.h>
#include <stddef.h>

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

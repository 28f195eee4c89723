/*
 * strutil.h - small string helpers shared by libburst modules.
 */
#ifndef BURST_STRUTIL_H
#define BURST_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* malloc/strdup that abort with a message on exhaustion; never return NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* A NULL-terminated list of strings being built: strv_add takes s (the
 * list stays NULL-terminated), strv_take gives the list (an empty one when
 * nothing was added), strv_free frees one. */
struct strv {
	char **v;
	size_t n, cap;
};
void strv_add(struct strv *l, char *s);
char **strv_take(struct strv *l);
void strv_free(char **v);

/* The wall clock (CLOCK_REALTIME), in seconds. */
double wall_seconds(void);

/* Edit distance (Damerau-Levenshtein, optimal string alignment), case-insensitive. */
size_t str_distance(const char *a, const char *b);

/*
 * The candidate nearest to word, or NULL when none is close enough to be a
 * plausible misspelling. Candidates are a NULL-terminated array, or n entries
 * when n > 0. The result points into cands (not allocated).
 */
const char *str_suggest(const char *word, const char *const *cands, size_t n);

/*
 * s with its control characters written out, for text from elsewhere (a
 * node's record, a reason) bound for a log or a terminal: C0 bytes and DEL
 * become \xNN, the C1 controls in UTF-8 (U+0080-U+009F, e.g. CSI) \u00NN,
 * and every byte that is not part of valid UTF-8 \xNN (a lone 0x9b is CSI
 * to an 8-bit terminal); other UTF-8 is kept. A new string (caller frees);
 * "" for NULL.
 */
char *str_escape_ctl(const char *s);

/* The same in place, for a buffer of len bytes that holds s: cut to fit
 * (a cut escape stays plain text). Nothing is done when nothing needs it. */
void str_escape_ctl_buf(char *s, size_t len);

/*
 * The length of the UTF-8 character at p: 1 for ASCII (NUL included), 2 to
 * 4 for a valid sequence (RFC 3629: no overlong form, no surrogate, nothing
 * above U+10FFFF), 0 when p does not start one (a sequence cut short by the
 * string's end included).
 */
size_t str_utf8_len(const unsigned char *p);

/* Trim leading and trailing white space in place; returns s. */
char *str_trim(char *s);

/*
 * A plain decimal ("123", "0.0416", "12."; no sign, no exponent, at most 15
 * significant digits) into *out, exactly as strtod() would round it (the
 * digits and the power of ten are both exact doubles, so their quotient is
 * rounded once): true. Anything else: false, *out untouched - the caller
 * falls back to strtod(). For parsers of large tables (the catalog).
 */
bool str_decimal_fast(const char *s, double *out);
bool str_ieq(const char *a, const char *b);
bool str_has_iprefix(const char *s, const char *prefix);

/* A growable string buffer. */
struct strbuf {
	char *s;
	size_t len, cap;
};
void sb_init(struct strbuf *sb);
void sb_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_add(struct strbuf *sb, const char *s);
/* n bytes of s (no NUL among them), and one character. */
void sb_addn(struct strbuf *sb, const char *s, size_t n);
void sb_addc(struct strbuf *sb, char c);
/* Returns the buffer (caller frees) and resets sb. */
char *sb_take(struct strbuf *sb);
void sb_free(struct strbuf *sb);

#endif

/*
 * strutil.c - string helpers: allocation, suggestions, buffers.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <time.h>

#include "strutil.h"

static void out_of_memory(size_t n)
{
	fprintf(stderr, "slurm-burst: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}

void strv_add(struct strv *l, char *s)
{
	if (l->n + 1 >= l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

char **strv_take(struct strv *l)
{
	char **v = l->v ? l->v : xcalloc(1, sizeof(*v));

	l->v = NULL;
	l->n = l->cap = 0;
	return v;
}

void strv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

size_t str_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev2, *prev, *cur, i, j, d;

	if (la > 64 || lb > 64)
		return (size_t)-1 / 2;
	prev2 = xcalloc(lb + 1, sizeof(size_t));
	prev = xcalloc(lb + 1, sizeof(size_t));
	cur = xcalloc(lb + 1, sizeof(size_t));
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			size_t best = prev[j] + 1;

			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (prev[j - 1] + cost < best)
				best = prev[j - 1] + cost;
			if (i > 1 && j > 1 &&
			    ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		{
			size_t *t = prev2;
			prev2 = prev;
			prev = cur;
			cur = t;
		}
	}
	d = prev[lb];
	free(prev2);
	free(prev);
	free(cur);
	return d;
}

const char *str_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t bestd = (size_t)-1, i, wl = strlen(word);
	/* A plausible misspelling: at most a third of the word wrong, at least 2 edits allowed. */
	size_t limit = wl / 3 > 2 ? wl / 3 : 2;

	for (i = 0; n ? i < n : cands[i] != NULL; i++) {
		size_t d;

		if (!cands[i])
			continue;
		d = str_distance(word, cands[i]);
		/* A word that is the start or end of a candidate is a good hint too
		 * ("vcpus" for node_vcpus_count). */
		if (d > limit && wl >= 4) {
			size_t cl = strlen(cands[i]);
			if (cl > wl && (strncasecmp(cands[i], word, wl) == 0 ||
					strcasecmp(cands[i] + cl - wl, word) == 0 ||
					strcasestr(cands[i], word)))
				d = limit;
		}
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

char *str_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		memmove(s, s + 1, strlen(s));
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

bool str_ieq(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

bool str_has_iprefix(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

void sb_init(struct strbuf *sb)
{
	sb->s = NULL;
	sb->len = sb->cap = 0;
}

static void sb_reserve(struct strbuf *sb, size_t more)
{
	if (sb->len + more + 1 <= sb->cap)
		return;
	while (sb->cap < sb->len + more + 1)
		sb->cap = sb->cap ? sb->cap * 2 : 64;
	sb->s = xrealloc(sb->s, sb->cap);
}

/* Formatted once into the room there is; a second time only when it did
 * not fit (the signing and the EC2 requests format a lot of short pieces). */
void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	sb_reserve(sb, 0);
	room = sb->cap - sb->len;
	va_start(ap, fmt);
	n = vsnprintf(sb->s + sb->len, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->s[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		sb_reserve(sb, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

void sb_add(struct strbuf *sb, const char *s)
{
	sb_addn(sb, s, strlen(s));
}

void sb_addn(struct strbuf *sb, const char *s, size_t n)
{
	sb_reserve(sb, n);
	memcpy(sb->s + sb->len, s, n);
	sb->len += n;
	sb->s[sb->len] = '\0';
}

void sb_addc(struct strbuf *sb, char c)
{
	sb_reserve(sb, 1);
	sb->s[sb->len++] = c;
	sb->s[sb->len] = '\0';
}

char *sb_take(struct strbuf *sb)
{
	char *s = sb->s ? sb->s : xstrdup("");

	sb_init(sb);
	return s;
}

void sb_free(struct strbuf *sb)
{
	free(sb->s);
	sb_init(sb);
}

size_t str_utf8_len(const unsigned char *p)
{
	size_t n, i;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)   /* the string's end (0) included */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* How one piece of s at p is written (its bytes in *len): 'x' \xNN, 'u'
 * \u00NN (a C1 control in UTF-8), 'c' copied. */
static char escape_kind(const unsigned char *p, size_t *len)
{
	size_t n;

	*len = 1;
	if (p[0] < 0x20 || p[0] == 0x7f)
		return 'x';
	if (p[0] < 0x80)
		return 'c';
	if (!(n = str_utf8_len(p)))
		return 'x';   /* not UTF-8: a lone byte 0x80-0x9f is a C1 control to an 8-bit terminal */
	*len = n;
	return n == 2 && p[0] == 0xc2 && p[1] <= 0x9f ? 'u' : 'c';
}

char *str_escape_ctl(const char *s)
{
	size_t n = 0, i, len;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *out, *o;

	for (i = 0; p[i]; i += len)
		switch (escape_kind(p + i, &len)) {
		case 'x': n += 4; break;
		case 'u': n += 6; break;
		default: n += len;
		}
	o = out = xmalloc(n + 1);
	for (i = 0; p[i]; i += len)
		switch (escape_kind(p + i, &len)) {
		case 'x': o += sprintf(o, "\\x%02x", p[i]); break;
		case 'u': o += sprintf(o, "\\u%04x", p[i + 1]); break;
		default: memcpy(o, p + i, len); o += len;
		}
	*o = '\0';
	return out;
}

void str_escape_ctl_buf(char *s, size_t len)
{
	size_t i, l;
	char *e;

	if (!s || !len)
		return;
	for (i = 0; s[i]; i += l)
		if (escape_kind((const unsigned char *)s + i, &l) != 'c')
			break;
	if (!s[i])
		return;
	e = str_escape_ctl(s);
	snprintf(s, len, "%s", e);
	free(e);
}

double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

bool str_decimal_fast(const char *s, double *out)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
				      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	unsigned long long m = 0;
	int sig = 0, frac = -1, digits = 0;

	for (; *s; s++) {
		if (*s == '.') {
			if (frac >= 0)
				return false;
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			return false;
		digits++;
		if (m || *s != '0')
			sig++;
		if (sig > 15)
			return false;
		m = m * 10 + (unsigned)(*s - '0');
		if (frac >= 0 && ++frac > 22)
			return false;
	}
	if (!digits)
		return false;
	*out = frac > 0 ? (double)m / p10[frac] : (double)m;
	return true;
}

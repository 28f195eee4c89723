/*
 * sigv4_req.h - parse the HTTP request text of the AWS SigV4 test suite
 * (.req files) into a struct sigv4_request. Header-only, for
 * tests/unit/test_sigv4.c and the tests/unit/sigv4_sign helper.
 *
 * The format: "METHOD TARGET PROTOCOL" (TARGET may contain spaces, as in
 * normalize-path/get-space), then "Name:value" header lines, a line that
 * starts with a space or tab continuing the previous header's value (kept
 * with its line break: joining folded values is the signer's job), then an
 * empty line and the body, all to the end. Lines end in LF.
 */
#ifndef BURST_SIGV4_REQ_H
#define BURST_SIGV4_REQ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sigv4.h"
#include "strutil.h"

struct httpreq {
	struct sigv4_request req;
	char *method, *path, *query;      /* owned */
	struct sigv4_header *h;           /* names and values owned */
	size_t nh;
	char *body;                       /* owned */
};

__attribute__((unused))
static void httpreq_free(struct httpreq *r)
{
	free(r->method);
	free(r->path);
	free(r->query);
	for (size_t i = 0; i < r->nh; i++) {
		free((char *)r->h[i].name);
		free((char *)r->h[i].value);
	}
	free(r->h);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* Parses text[0..len) into *r (free with httpreq_free). Returns 0, or -1
 * with a reason in why. */
__attribute__((unused))
static int httpreq_parse(const char *text, size_t len, struct httpreq *r, char *why, size_t whylen)
{
	const char *p = text, *end = text + len, *eol, *sp1, *sp2, *q;

	memset(r, 0, sizeof(*r));
	eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	sp1 = memchr(p, ' ', (size_t)(eol - p));
	for (sp2 = eol; sp2 > p && sp2[-1] != ' '; sp2--)
		;
	if (!sp1 || sp2 <= sp1 + 1) {
		snprintf(why, whylen, "request line is not 'METHOD TARGET PROTOCOL'");
		return -1;
	}
	sp2--;                             /* the last space */
	r->method = xstrndup(p, (size_t)(sp1 - p));
	q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	r->path = xstrndup(sp1 + 1, (size_t)((q ? q : sp2) - sp1 - 1));
	r->query = q ? xstrndup(q + 1, (size_t)(sp2 - q - 1)) : NULL;

	for (p = eol < end ? eol + 1 : end; p < end; ) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (eol == p) {                    /* empty line: the body follows */
			p = eol + 1;
			break;
		}
		if (*p == ' ' || *p == '\t') {    /* folded continuation line */
			char *v;

			if (r->nh == 0) {
				snprintf(why, whylen, "continuation line before any header");
				httpreq_free(r);
				return -1;
			}
			v = xmalloc(strlen(r->h[r->nh - 1].value) + (size_t)(eol - p) + 2);
			sprintf(v, "%s\n%.*s", r->h[r->nh - 1].value, (int)(eol - p), p);
			free((char *)r->h[r->nh - 1].value);
			r->h[r->nh - 1].value = v;
		} else {
			const char *colon = memchr(p, ':', (size_t)(eol - p));

			if (!colon) {
				snprintf(why, whylen, "header line '%.*s' has no ':'", (int)(eol - p), p);
				httpreq_free(r);
				return -1;
			}
			r->h = xrealloc(r->h, (r->nh + 1) * sizeof(*r->h));
			r->h[r->nh].name = xstrndup(p, (size_t)(colon - p));
			r->h[r->nh].value = xstrndup(colon + 1, (size_t)(eol - colon - 1));
			r->nh++;
		}
		p = eol < end ? eol + 1 : end;
	}
	if (p > end)
		p = end;
	r->body = xstrndup(p, (size_t)(end - p));

	r->req.method = r->method;
	r->req.path = r->path;
	r->req.query = r->query;
	r->req.headers = r->h;
	r->req.nheaders = r->nh;
	r->req.body = r->body;
	r->req.body_len = (size_t)(end - p);
	return 0;
}

/* The value of the first header named name (any case), or NULL. */
__attribute__((unused))
static const char *httpreq_header(const struct httpreq *r, const char *name)
{
	for (size_t i = 0; i < r->nh; i++)
		if (strcasecmp(r->h[i].name, name) == 0)
			return r->h[i].value;
	return NULL;
}

/* Reads a whole file (or stdin for "-"): returns a NUL-terminated buffer
 * (caller frees) and its length in *len, or NULL. */
__attribute__((unused))
static char *slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (cap - n < 4096)
			buf = xrealloc(buf, cap = cap * 2 + 4096);
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	} else {
		buf[n] = '\0';
		*len = n;
	}
	if (f != stdin)
		fclose(f);
	return buf;
}

#endif

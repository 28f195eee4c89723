/*
 * metrics.c - counters, gauges and histograms in Prometheus text
 * exposition 0.0.4 (metrics.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "strutil.h"

struct series {
	char *labels;            /* rendered: a="x",b="y" (escaped), "" for none */
	double v;                /* counter, gauge; histogram: the sum */
	unsigned long long count;
	unsigned long long *bucket;  /* histogram: per bucket (not cumulative) */
};

struct family {
	char *name, *help;
	enum metric_type type;
	double *le;
	size_t nle;
	struct series *s;
	size_t n;
};

struct metrics {
	struct family *f;
	size_t n;
};

struct metrics *metrics_new(void)
{
	return xcalloc(1, sizeof(struct metrics));
}

static void free_series(struct series *s)
{
	free(s->labels);
	free(s->bucket);
}

static void reset_family(struct family *f)
{
	size_t j;

	for (j = 0; j < f->n; j++)
		free_series(&f->s[j]);
	free(f->s);
	f->s = NULL;
	f->n = 0;
}

void metrics_reset(struct metrics *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].name, name))
			reset_family(&m->f[i]);
}

void metrics_free(struct metrics *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		reset_family(&m->f[i]);
		free(m->f[i].name);
		free(m->f[i].help);
		free(m->f[i].le);
	}
	free(m->f);
	free(m);
}

void metrics_family(struct metrics *m, const char *name, enum metric_type type, const char *help,
		    const double *buckets, size_t nbuckets)
{
	struct family *f;
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].name, name))
			return;
	m->f = xrealloc(m->f, (m->n + 1) * sizeof(*m->f));
	f = &m->f[m->n++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->help = xstrdup(help);
	f->type = type;
	if (type == METRIC_HISTOGRAM && nbuckets) {
		f->le = xmalloc(nbuckets * sizeof(double));
		memcpy(f->le, buckets, nbuckets * sizeof(double));
		f->nle = nbuckets;
	}
}

char *metrics_escape_label(const char *v)
{
	struct strbuf sb;
	char one[2] = { 0, 0 };

	sb_init(&sb);
	sb_add(&sb, "");
	for (; v && *v; v++) {
		if (*v == '\\')
			sb_add(&sb, "\\\\");
		else if (*v == '"')
			sb_add(&sb, "\\\"");
		else if (*v == '\n')
			sb_add(&sb, "\\n");
		else {
			one[0] = *v;
			sb_add(&sb, one);
		}
	}
	return sb_take(&sb);
}

/* The series of name for the labels in ap (made if missing); NULL if no such family. */
static struct series *series_of(struct metrics *m, const char *name, va_list ap, struct family **fam)
{
	struct family *f = NULL;
	struct strbuf sb;
	const char *k;
	char *key;
	size_t i;

	for (i = 0; i < m->n && !f; i++)
		if (!strcmp(m->f[i].name, name))
			f = &m->f[i];
	if (!f)
		return NULL;
	*fam = f;
	sb_init(&sb);
	sb_add(&sb, "");
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);
		char *e = metrics_escape_label(v ? v : "");
		sb_addf(&sb, "%s%s=\"%s\"", sb.len ? "," : "", k, e);
		free(e);
	}
	key = sb_take(&sb);
	for (i = 0; i < f->n; i++)
		if (!strcmp(f->s[i].labels, key)) {
			free(key);
			return &f->s[i];
		}
	f->s = xrealloc(f->s, (f->n + 1) * sizeof(*f->s));
	memset(&f->s[f->n], 0, sizeof(*f->s));
	f->s[f->n].labels = key;
	if (f->type == METRIC_HISTOGRAM)
		f->s[f->n].bucket = xcalloc(f->nle + 1, sizeof(unsigned long long));
	return &f->s[f->n++];
}

void metrics_add(struct metrics *m, const char *name, double v, ...)
{
	struct family *f;
	struct series *s;
	va_list ap;

	va_start(ap, v);
	s = series_of(m, name, ap, &f);
	va_end(ap);
	if (s && f->type != METRIC_HISTOGRAM)
		s->v += v;
}

void metrics_set(struct metrics *m, const char *name, double v, ...)
{
	struct family *f;
	struct series *s;
	va_list ap;

	va_start(ap, v);
	s = series_of(m, name, ap, &f);
	va_end(ap);
	if (s && f->type != METRIC_HISTOGRAM)
		s->v = v;
}

double metrics_get(struct metrics *m, const char *name, ...)
{
	struct family *f;
	struct series *s;
	va_list ap;

	va_start(ap, name);
	s = series_of(m, name, ap, &f);
	va_end(ap);
	return s ? s->v : NAN;
}

void metrics_touch(struct metrics *m, const char *name, ...)
{
	struct family *f;
	va_list ap;

	va_start(ap, name);
	series_of(m, name, ap, &f);
	va_end(ap);
}

void metrics_observe(struct metrics *m, const char *name, double v, ...)
{
	struct family *f;
	struct series *s;
	size_t i;
	va_list ap;

	va_start(ap, v);
	s = series_of(m, name, ap, &f);
	va_end(ap);
	if (!s || f->type != METRIC_HISTOGRAM || isnan(v))
		return;
	for (i = 0; i < f->nle && v > f->le[i]; i++)
		;
	s->bucket[i]++;
	s->count++;
	s->v += v;
}

/* A sample value: integers as such, else enough digits to read back; the format's Inf and NaN. */
static void add_value(struct strbuf *sb, double v)
{
	if (isnan(v))
		sb_add(sb, "NaN");
	else if (isinf(v))
		sb_add(sb, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		sb_addf(sb, "%.0f", v);
	else
		sb_addf(sb, "%.17g", v);
}

/* HELP text: \ and newline escaped. */
static void add_help(struct strbuf *sb, const char *h)
{
	for (; *h; h++) {
		if (*h == '\\')
			sb_add(sb, "\\\\");
		else if (*h == '\n')
			sb_add(sb, "\\n");
		else
			sb_addf(sb, "%c", *h);
	}
}

static void add_sample(struct strbuf *sb, const char *name, const char *suffix, const char *labels,
		       const char *extra, double v)
{
	bool any = labels[0] || extra;

	sb_addf(sb, "%s%s", name, suffix);
	if (any)
		sb_addf(sb, "{%s%s%s}", labels, labels[0] && extra ? "," : "", extra ? extra : "");
	sb_add(sb, " ");
	add_value(sb, v);
	sb_add(sb, "\n");
}

char *metrics_render(const struct metrics *m, size_t *len)
{
	static const char *const tname[] = { "counter", "gauge", "histogram" };
	struct strbuf sb;
	size_t i, j, k;
	char *out;

	sb_init(&sb);
	sb_add(&sb, "");
	for (i = 0; i < m->n; i++) {
		const struct family *f = &m->f[i];

		sb_addf(&sb, "# HELP %s ", f->name);
		add_help(&sb, f->help);
		sb_addf(&sb, "\n# TYPE %s %s\n", f->name, tname[f->type]);
		for (j = 0; j < f->n; j++) {
			const struct series *s = &f->s[j];
			unsigned long long cum = 0;
			char le[64];

			if (f->type != METRIC_HISTOGRAM) {
				add_sample(&sb, f->name, "", s->labels, NULL, s->v);
				continue;
			}
			for (k = 0; k < f->nle; k++) {
				cum += s->bucket[k];
				snprintf(le, sizeof(le), "le=\"%g\"", f->le[k]);
				add_sample(&sb, f->name, "_bucket", s->labels, le, (double)cum);
			}
			add_sample(&sb, f->name, "_bucket", s->labels, "le=\"+Inf\"", (double)s->count);
			add_sample(&sb, f->name, "_sum", s->labels, NULL, s->v);
			add_sample(&sb, f->name, "_count", s->labels, NULL, (double)s->count);
		}
	}
	*len = sb.len;
	out = sb_take(&sb);
	return out;
}

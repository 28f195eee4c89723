/*
 * ratelimit.c - token buckets (ratelimit.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ratelimit.h"
#include "strutil.h"

/* tokens are counted in doubles: a whole token despite rounding */
#define TB_EPS 1e-9

static int parse_num(const char *s, size_t len, double *out)
{
	char buf[64], *end;

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!strchr("0123456789.", buf[0]))
		return -1;
	*out = strtod(buf, &end);
	return *end || !isfinite(*out) ? -1 : 0;
}

int rate_spec_parse(const char *s, struct rate_spec *out, char *why, size_t whylen)
{
	const char *slash;
	double size, rate;

	if (!s || !*s) {
		snprintf(why, whylen, "empty: want SIZE/RATE such as 1000/2 (a bucket of 1000, 2 more a second) or none");
		return -1;
	}
	if (str_ieq(s, "none")) {
		out->size = out->rate = 0;
		return 0;
	}
	slash = strchr(s, '/');
	if (!slash || parse_num(s, (size_t)(slash - s), &size) < 0 ||
	    parse_num(slash + 1, strlen(slash + 1), &rate) < 0) {
		snprintf(why, whylen, "'%s' is not SIZE/RATE: want a bucket size and its refill a second, "
			 "such as 1000/2, or none", s);
		return -1;
	}
	if (size < 1) {
		snprintf(why, whylen, "'%s': the bucket must hold at least 1 token (none turns the limit off)", s);
		return -1;
	}
	if (rate <= 0) {
		snprintf(why, whylen, "'%s': the refill must be more than 0 a second, or nothing would ever be sent", s);
		return -1;
	}
	out->size = size;
	out->rate = rate;
	return 0;
}

const char *rate_spec_format(const struct rate_spec *s, char *buf, size_t len)
{
	if (s->size <= 0)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%g/%g", s->size, s->rate);
	return buf;
}

void rate_limits_default(const char *type, struct rate_limits *out)
{
	memset(out, 0, sizeof(*out));
	if (type && str_ieq(type, "aws")) {
		/* the EC2 API reference, "Request throttling for the Amazon EC2
		 * API", https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html
		 * (tables "Request token bucket sizes and refill rates" and
		 * "Resource token bucket sizes and refill rates"): per account
		 * and region */
		out->launch = (struct rate_spec){ 1000, 2 };
		out->launch_calls = (struct rate_spec){ 5, 2 };
		out->terminate = (struct rate_spec){ 1000, 20 };
		out->terminate_calls = (struct rate_spec){ 100, 5 };
	} else if (type && str_ieq(type, "azure")) {
		/* Microsoft's "Understand how Azure Resource Manager throttles
		 * requests" and the compute resource provider's throttling
		 * (issue 31): one PUT or DELETE per VM takes from the
		 * subscription's writes or deletes (200, then 10/s) and the
		 * region's VM create/update/delete (1,500, then 500/min) */
		out->launch = (struct rate_spec){ 200, 500.0 / 60 };
		out->launch_calls = (struct rate_spec){ 200, 500.0 / 60 };
		out->terminate = (struct rate_spec){ 200, 500.0 / 60 };
		out->terminate_calls = (struct rate_spec){ 200, 500.0 / 60 };
	}
}

void tb_init(struct tbucket *b, const struct rate_spec *s, double t)
{
	b->size = s ? s->size : 0;
	b->rate = s ? s->rate : 0;
	b->tokens = b->size;
	b->t = t;
}

bool tb_unlimited(const struct tbucket *b)
{
	return b->size <= 0;
}

double tb_tokens(const struct tbucket *b, double t)
{
	double v;

	if (tb_unlimited(b))
		return INFINITY;
	if (t <= b->t)
		return b->tokens;
	v = b->tokens + (t - b->t) * b->rate;
	return v > b->size ? b->size : v;
}

double tb_when(const struct tbucket *b, double need, double t)
{
	double have;

	if (tb_unlimited(b) || need <= 0)
		return t;
	if (t < b->t)
		t = b->t;
	have = tb_tokens(b, t);
	if (have + TB_EPS >= need)
		return t;
	if (b->rate <= 0)
		return INFINITY;
	return t + (need - have) / b->rate;
}

void tb_take(struct tbucket *b, double n, double t)
{
	double have;

	if (tb_unlimited(b))
		return;
	if (t < b->t)
		t = b->t;
	have = tb_tokens(b, t);
	b->tokens = have - n > 0 ? have - n : 0;
	b->t = t;
}

void tb_drain(struct tbucket *b, double t)
{
	if (tb_unlimited(b))
		return;
	if (t > b->t)
		b->t = t;
	b->tokens = 0;
}

void pace_init(struct launch_pace *p, const struct rate_spec *inst, const struct rate_spec *calls, double t)
{
	tb_init(&p->inst, inst, t);
	tb_init(&p->calls, calls, t);
	p->per_call = 0;
}

/* Whole tokens at t, at most cap. */
static double whole(const struct tbucket *b, double t, double cap)
{
	double v = tb_tokens(b, t);

	if (v >= cap)
		return cap;
	return floor(v + TB_EPS);
}

size_t pace_now(const struct launch_pace *p, size_t want, double t)
{
	double n = whole(&p->inst, t, (double)want);
	double calls = whole(&p->calls, t, (double)want);

	if (calls < 1)
		return 0;
	if (p->per_call && n > calls * (double)p->per_call)
		n = calls * (double)p->per_call;
	return (size_t)n;
}

void pace_take(struct launch_pace *p, size_t n, size_t calls, double t)
{
	tb_take(&p->inst, (double)n, t);
	tb_take(&p->calls, (double)calls, t);
}

double pace_when(const struct launch_pace *p, double k, double t)
{
	double a, c, calls;

	if (k <= 0)
		return t;
	a = tb_when(&p->inst, k, t);
	calls = p->per_call ? ceil(k / (double)p->per_call) : 1;
	c = tb_when(&p->calls, calls, t);
	return a > c ? a : c;
}

void pace_sender_init(struct pace_sender *s, const struct rate_spec *inst, const struct rate_spec *calls,
		      double t)
{
	memset(s, 0, sizeof(*s));
	pace_init(&s->cur, inst, calls, t);
}

size_t pace_send(struct pace_sender *s, size_t want, double t, double slack)
{
	size_t k;

	if (s->inflight || !want)
		return 0;
	k = pace_now(&s->cur, want, t - slack);
	if (!k)
		return 0;
	s->before = s->cur;
	pace_take(&s->cur, k, 1, t);
	s->sent = t;
	s->inflight = !tb_unlimited(&s->cur.inst) || !tb_unlimited(&s->cur.calls);
	return k;
}

void pace_unsend(struct pace_sender *s)
{
	if (!s->inflight)
		return;
	s->cur = s->before;
	s->inflight = false;
}

void pace_answer(struct pace_sender *s, size_t n, double t0, double t1, bool throttled)
{
	if (!s->inflight)
		return;
	s->inflight = false;
	s->cur = s->before;
	if (throttled) {
		tb_drain(&s->cur.inst, t1);
		tb_drain(&s->cur.calls, t1);
		return;
	}
	pace_take(&s->cur, n, n ? 1 : 0, t0 > s->sent ? t0 : s->sent);
}

double pace_sender_eta(const struct pace_sender *s, size_t queued, double t, double slack)
{
	return pace_when(&s->cur, (double)queued + 1, t) + slack;
}

/* How many instances region p can have requested by time T (from t). */
static double pace_cap(const struct launch_pace *p, double T, double t, double n)
{
	double inst = tb_unlimited(&p->inst) ? n : floor(p->inst.tokens + (T - t) * p->inst.rate + TB_EPS);
	double calls;

	if (tb_unlimited(&p->calls))
		return inst;
	calls = floor(p->calls.tokens + (T - t) * p->calls.rate + TB_EPS);
	if (calls < 1)
		return 0;
	if (p->per_call && inst > calls * (double)p->per_call)
		inst = calls * (double)p->per_call;
	return inst;
}

static double caps(const struct launch_pace *v, size_t m, double T, double t, double n)
{
	double s = 0;
	size_t i;

	for (i = 0; i < m; i++)
		s += pace_cap(&v[i], T, t, n);
	return s;
}

double pace_bound(const struct launch_pace *v, size_t m, double n, double t)
{
	struct launch_pace *w;
	double lo = 0, hi = 1;
	size_t i;
	int k;

	if (n <= 0)
		return t;
	/* each region's buckets as of t (a bucket is counted from its own time) */
	w = xcalloc(m ? m : 1, sizeof(*w));
	for (i = 0; i < m; i++) {
		w[i] = v[i];
		if (!tb_unlimited(&w[i].inst))
			w[i].inst.tokens = tb_tokens(&v[i].inst, t);
		if (!tb_unlimited(&w[i].calls))
			w[i].calls.tokens = tb_tokens(&v[i].calls, t);
	}
	if (caps(w, m, t, t, n) >= n) {
		free(w);
		return t;
	}
	while (caps(w, m, t + hi, t, n) < n) {
		hi *= 2;
		if (hi > 1e12) {
			free(w);
			return INFINITY;
		}
	}
	/* the refills are linear: the crossing is found to well under a millisecond */
	for (k = 0; k < 100 && hi - lo > 1e-6; k++) {
		double mid = (lo + hi) / 2;
		if (caps(w, m, t + mid, t, n) >= n)
			hi = mid;
		else
			lo = mid;
	}
	free(w);
	return t + hi;
}

void wq_init(struct win_quota *q, double limit, double len, double slack)
{
	memset(q, 0, sizeof(*q));
	q->limit = limit > 0 ? limit : 0;
	q->len = len > 0 ? len : 60;
	q->slack = slack < 0 ? 0 : slack > q->len / 4 ? q->len / 4 : slack;
	for (size_t i = 0; i < 4; i++)
		q->idx[i] = -1;
}

bool wq_unlimited(const struct win_quota *q)
{
	return q->limit <= 0;
}

static long wq_index(const struct win_quota *q, double t)
{
	return (long)floor(t / q->len);
}

static double wq_count(const struct win_quota *q, long w)
{
	for (size_t i = 0; i < 4; i++)
		if (q->idx[i] == w)
			return q->used[i];
	return 0;
}

/* The slot of interval w (the oldest one's, or a free one's, when it has none). */
static double *wq_slot(struct win_quota *q, long w)
{
	size_t k = 0;

	for (size_t i = 0; i < 4; i++) {
		if (q->idx[i] == w)
			return &q->used[i];
		if (q->idx[i] < q->idx[k])
			k = i;
	}
	q->idx[k] = w;
	q->used[k] = 0;
	return &q->used[k];
}

double wq_when(const struct win_quota *q, double t)
{
	if (wq_unlimited(q))
		return t;
	/* each round moves past a full interval: at most as many as are counted */
	for (int round = 0; round < 6; round++) {
		long lo = wq_index(q, t - q->slack), hi = wq_index(q, t + q->slack);
		double next = t;

		for (long w = lo; w <= hi; w++)
			if (wq_count(q, w) + TB_EPS >= q->limit) {
				double free_at = (double)(w + 1) * q->len + q->slack;
				if (free_at > next)
					next = free_at;
			}
		if (next <= t)
			return t;
		t = next;
	}
	return t;
}

void wq_take(struct win_quota *q, double t)
{
	if (wq_unlimited(q))
		return;
	for (long w = wq_index(q, t - q->slack); w <= wq_index(q, t + q->slack); w++)
		*wq_slot(q, w) += 1;
}

void wq_drain(struct win_quota *q, double t)
{
	if (wq_unlimited(q))
		return;
	for (long w = wq_index(q, t - q->slack); w <= wq_index(q, t + q->slack); w++) {
		double *u = wq_slot(q, w);
		if (*u < q->limit)
			*u = q->limit;
	}
}

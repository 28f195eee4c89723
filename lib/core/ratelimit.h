/*
 * ratelimit.h - token buckets: a cloud's request and resource rate limits
 * as the agent models them (doc/design.md §9, "Rate limits").
 *
 * A bucket holds at most size tokens and gains rate tokens a second; a
 * request that needs n tokens is answered only when the bucket holds n
 * (EC2 throttles it otherwise). The agent keeps, for each provider and
 * region, a bucket of launch requests and one of instances launched, and
 * the same for terminations, and sends only what the buckets hold.
 *
 * Times are seconds on any one clock (the agent's mono()).
 */
#ifndef BURST_RATELIMIT_H
#define BURST_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>

/* A bucket's configuration: size 0 means no limit. */
struct rate_spec {
	double size;     /* tokens at most (the burst) */
	double rate;     /* tokens added a second */
};

/*
 * Parse "SIZE/RATE" (e.g. "1000/2": 1,000 tokens, 2 more a second; numbers
 * may have decimals) or "none" (no limit). Returns 0, or -1 with why (what
 * is wrong, for an error message that names the key and the place).
 */
int rate_spec_parse(const char *s, struct rate_spec *out, char *why, size_t whylen);
/* "1000/2" or "none" into buf. */
const char *rate_spec_format(const struct rate_spec *s, char *buf, size_t len);

/* The limits of one provider in one region (each per region, as EC2's). */
struct rate_limits {
	struct rate_spec launch;          /* instances launched */
	struct rate_spec launch_calls;    /* launch requests */
	struct rate_spec terminate;       /* instances terminated */
	struct rate_spec terminate_calls; /* terminate requests */
};

/*
 * A provider type's documented limits: aws has EC2's (the EC2 API
 * reference, "Request throttling for the Amazon EC2 API": RunInstances
 * 1000 instances then 2/s and 5 requests then 2/s; TerminateInstances 1000
 * instances then 20/s and 100 requests then 5/s); other types none.
 */
void rate_limits_default(const char *type, struct rate_limits *out);

struct tbucket {
	double size, rate;   /* size 0: no limit */
	double tokens;       /* as of t */
	double t;
};

/* A full bucket of spec s at time t. */
void tb_init(struct tbucket *b, const struct rate_spec *s, double t);
bool tb_unlimited(const struct tbucket *b);
/* The tokens at t (t before the bucket's time counts as its time). */
double tb_tokens(const struct tbucket *b, double t);
/*
 * When the need-th token from t on is in the bucket, counting every token
 * taken as soon as it comes (so need may be more than size: the time the
 * last of need tokens can be taken). t when it holds need already; a
 * bucket of no refill that cannot: INFINITY. Unlimited: t.
 */
double tb_when(const struct tbucket *b, double need, double t);
/* Take n tokens at t (n at most tb_tokens; more leaves it empty). */
void tb_take(struct tbucket *b, double n, double t);
/* A throttling answer at t: the cloud's bucket is empty, so is ours. */
void tb_drain(struct tbucket *b, double t);

/* The launch side of one provider's region: instances and requests. */
struct launch_pace {
	struct tbucket inst, calls;
	size_t per_call;     /* instances one request carries at most (0: any) */
};

void pace_init(struct launch_pace *p, const struct rate_spec *inst, const struct rate_spec *calls,
	       double t);
/* How many of want instances may be requested at t without being throttled. */
size_t pace_now(const struct launch_pace *p, size_t want, double t);
/* Record n instances sent at t in calls requests. */
void pace_take(struct launch_pace *p, size_t n, size_t calls, double t);
/*
 * When the last of k instances (the ones already waiting included) can be
 * requested, sent as soon as the buckets allow from t on.
 */
double pace_when(const struct launch_pace *p, double k, double t);
/*
 * The bound: the earliest time after t at which n instances spread over
 * the m regions v can all have been requested (each region's buckets as
 * they are at t). INFINITY when they never can.
 */
double pace_bound(const struct launch_pace *v, size_t m, double n, double t);

/*
 * The sender's side of one region (the agent's loop): what may be sent now,
 * one request in flight at a time, and its answer. A request that waited
 * behind others on its way reaches the cloud later than it was sent, and
 * the cloud's bucket fills meanwhile only up to its size: when the answer
 * comes the buckets are counted again from the moment the request left
 * (t0, never before it was sent). The buckets are read slack seconds early
 * (a request may reach the cloud up to that much sooner after the one
 * before it than they were sent apart). A throttling answer empties them.
 * Unlimited buckets: nothing in flight is waited for.
 */
struct pace_sender {
	struct launch_pace cur;     /* the model, with what is in flight taken */
	struct launch_pace before;  /* before the request in flight */
	double sent;
	bool inflight;
};

void pace_sender_init(struct pace_sender *s, const struct rate_spec *inst, const struct rate_spec *calls,
		      double t);
/* How many of want to send now in one request (0: none; then nothing is
 * taken); they are taken, and the request is in flight until its answer. */
size_t pace_send(struct pace_sender *s, size_t want, double t, double slack);
/* Nothing was sent after all (the request was dropped): as before it. */
void pace_unsend(struct pace_sender *s);
/* The answer: n instances were requested, the request left at t0 and was
 * answered at t1, throttled or not. */
void pace_answer(struct pace_sender *s, size_t n, double t0, double t1, bool throttled);
/* When (with slack) one more than queued instances could be sent. */
double pace_sender_eta(const struct pace_sender *s, size_t queued, double t, double slack);

/*
 * A rate quota counted per synchronized interval rather than refilled
 * token by token: Compute Engine's rate quotas (a project's requests of one
 * group, https://cloud.google.com/compute/api-quota) are counted per minute
 * of the clock and refilled whole at the start of the next one (a quota
 * spent at 10:00:15 is there again at 10:01:00). Times are seconds of the
 * wall clock, as the intervals are. The cloud's clock and the moment a
 * request reaches it may differ from the sender's by up to slack seconds:
 * a request sent at t counts in every interval that [t - slack, t + slack]
 * touches, so that none of the cloud's intervals gets more than limit of
 * them, whatever it counted them in.
 */
struct win_quota {
	double len;              /* the interval (Compute Engine's: 60) */
	double limit;            /* requests an interval; 0: no limit */
	double slack;            /* at most len / 4 */
	long idx[4];             /* intervals counted (floor(t / len)), -1: none */
	double used[4];
};

/* No request counted yet; slack is cut to len / 4. */
void wq_init(struct win_quota *q, double limit, double len, double slack);
bool wq_unlimited(const struct win_quota *q);
/* When, from t on, one more request may be sent (t when now). */
double wq_when(const struct win_quota *q, double t);
/* A request sent at t. */
void wq_take(struct win_quota *q, double t);
/* A throttling answer at t: the interval it was counted in is full, and
 * which one that was is known to within slack. */
void wq_drain(struct win_quota *q, double t);

#endif

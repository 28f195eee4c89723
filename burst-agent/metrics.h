/*
 * metrics.h - the agent's counters, gauges and histograms, rendered as
 * Prometheus text exposition (format 0.0.4).
 *
 * A registry holds families (a name, a type, a help text); a family holds
 * series, one per set of label values. Labels are given as NULL-ended
 * name, value pairs: metrics_add(m, "burst_joins_total", 1, "outcome",
 * "admitted", NULL). Label names are the caller's constants; label values
 * are anyone's text and are escaped when rendered. Nothing here is locked:
 * the agent's loop thread alone uses its registry.
 */
#ifndef BURST_METRICS_H
#define BURST_METRICS_H

#include <stddef.h>

enum metric_type { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM };

struct metrics;

struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/*
 * Declare a family (again: nothing changes). A histogram's buckets are
 * their upper bounds, ascending (+Inf is implied); others pass NULL, 0.
 * Families are rendered in the order they were declared.
 */
void metrics_family(struct metrics *m, const char *name, enum metric_type type, const char *help,
		    const double *buckets, size_t nbuckets);

/* Add v to a counter's or gauge's series (made at 0 if new). */
void metrics_add(struct metrics *m, const char *name, double v, ...) __attribute__((sentinel));
/* Set a gauge's series to v (or a counter's: to put back what metrics_get read). */
void metrics_set(struct metrics *m, const char *name, double v, ...) __attribute__((sentinel));
/* A counter's or gauge's value (the series is made at 0 if new; NAN: no such family). */
double metrics_get(struct metrics *m, const char *name, ...) __attribute__((sentinel));
/* Count v into a histogram's series. */
void metrics_observe(struct metrics *m, const char *name, double v, ...) __attribute__((sentinel));
/* Make the series if missing (a counter shown at 0 before its first event). */
void metrics_touch(struct metrics *m, const char *name, ...) __attribute__((sentinel));
/* Drop every series of a family (a gauge recomputed at each scrape). */
void metrics_reset(struct metrics *m, const char *name);

/* The exposition text of every family (caller frees); its length in *len. */
char *metrics_render(const struct metrics *m, size_t *len);

/* A label value as the format wants it: \ " and newline escaped (caller frees). */
char *metrics_escape_label(const char *v);

#endif

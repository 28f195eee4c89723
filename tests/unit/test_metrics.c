/*
 * test_metrics.c - the agent's metrics in Prometheus text exposition
 * 0.0.4: a HELP and a TYPE line per family, label values escaped, counters
 * summed per label set, histograms cumulative with +Inf, _sum and _count.
 */
#include <string.h>

#include "../../burst-agent/metrics.h"
#include "tap.h"

static int has(const char *text, const char *line)
{
	const char *p = text;
	size_t n = strlen(line);

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
		p += n;
	}
	return 0;
}

int main(void)
{
	static const double b[] = { 0.1, 1, 10 };
	struct metrics *m = metrics_new();
	size_t len;
	char *t, *e;

	e = metrics_escape_label("a\"b\\c\nd");
	is_str(e, "a\\\"b\\\\c\\nd", "a label value's quote, backslash and newline are escaped");
	free(e);

	metrics_family(m, "burst_launches_total", METRIC_COUNTER, "Instances launched, by outcome.", NULL, 0);
	metrics_family(m, "burst_nodes", METRIC_GAUGE, "Nodes by state\\and \"node set\".\nTwo lines.", NULL, 0);
	metrics_family(m, "burst_provider_call_duration_seconds", METRIC_HISTOGRAM, "Provider calls.", b, 3);
	metrics_family(m, "burst_launches_total", METRIC_GAUGE, "declared twice", NULL, 0);
	metrics_add(m, "burst_launches_total", 1, "provider", "aws", "outcome", "ok", NULL);
	metrics_add(m, "burst_launches_total", 2, "provider", "aws", "outcome", "ok", NULL);
	metrics_add(m, "burst_launches_total", 1, "provider", "we\"ird\n", "outcome", "capacity", NULL);
	metrics_set(m, "burst_nodes", 5, "state", "booting", NULL);
	metrics_set(m, "burst_nodes", 3, "state", "booting", NULL);
	metrics_add(m, "no_such_family", 1, NULL);
	metrics_observe(m, "burst_provider_call_duration_seconds", 0.05, "op", "launch", NULL);
	metrics_observe(m, "burst_provider_call_duration_seconds", 0.5, "op", "launch", NULL);
	metrics_observe(m, "burst_provider_call_duration_seconds", 100, "op", "launch", NULL);
	t = metrics_render(m, &len);
	ok(len == strlen(t), "the length is the text's");
	ok(has(t, "# HELP burst_launches_total Instances launched, by outcome."), "HELP line");
	ok(has(t, "# TYPE burst_launches_total counter"), "TYPE counter (the first declaration holds)");
	ok(has(t, "burst_launches_total{provider=\"aws\",outcome=\"ok\"} 3"), "a counter sums per label set");
	ok(has(t, "burst_launches_total{provider=\"we\\\"ird\\n\",outcome=\"capacity\"} 1"), "a hostile label value is escaped");
	ok(has(t, "# HELP burst_nodes Nodes by state\\\\and \"node set\".\\nTwo lines."),
	   "HELP escapes backslash and newline, not quotes");
	ok(has(t, "# TYPE burst_nodes gauge") && has(t, "burst_nodes{state=\"booting\"} 3"), "a gauge is set");
	ok(has(t, "# TYPE burst_provider_call_duration_seconds histogram"), "TYPE histogram");
	ok(has(t, "burst_provider_call_duration_seconds_bucket{op=\"launch\",le=\"0.1\"} 1") &&
	   has(t, "burst_provider_call_duration_seconds_bucket{op=\"launch\",le=\"1\"} 2") &&
	   has(t, "burst_provider_call_duration_seconds_bucket{op=\"launch\",le=\"10\"} 2") &&
	   has(t, "burst_provider_call_duration_seconds_bucket{op=\"launch\",le=\"+Inf\"} 3"), "buckets are cumulative, +Inf last");
	ok(has(t, "burst_provider_call_duration_seconds_sum{op=\"launch\"} 100.55") &&
	   has(t, "burst_provider_call_duration_seconds_count{op=\"launch\"} 3"), "_sum and _count");
	ok(strstr(t, "no_such_family") == NULL, "an undeclared family is not made up");
	ok(strstr(t, "burst_launches_total") < strstr(t, "burst_nodes") &&
	   strstr(t, "burst_nodes") < strstr(t, "burst_provider_call"), "families in declaration order");
	{
		/* every line is a comment or name{labels} value */
		char *dup = strdup(t), *line, *save = NULL;
		int good = 1;
		for (line = strtok_r(dup, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			const char *sp = strrchr(line, ' ');
			if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7))
				continue;
			if (!sp || !(line[0] >= 'a' && line[0] <= 'z') || strchr(sp + 1, '"'))
				good = 0;
		}
		ok(good && t[len - 1] == '\n', "each line is HELP, TYPE or a sample; the text ends in a newline");
		free(dup);
	}
	free(t);
	ok(metrics_get(m, "burst_launches_total", "provider", "aws", "outcome", "ok", NULL) == 3,
	   "a counter's value is read back");
	metrics_set(m, "burst_launches_total", 7, "provider", "aws", "outcome", "ok", NULL);
	ok(metrics_get(m, "burst_launches_total", "provider", "aws", "outcome", "ok", NULL) == 7,
	   "and put back");
	metrics_reset(m, "burst_nodes");
	metrics_touch(m, "burst_launches_total", "provider", "gcp", "outcome", "ok", NULL);
	t = metrics_render(m, &len);
	ok(!strstr(t, "burst_nodes{") && has(t, "# TYPE burst_nodes gauge"), "reset drops a family's series, not the family");
	ok(has(t, "burst_launches_total{provider=\"gcp\",outcome=\"ok\"} 0"), "a touched series shows 0");
	free(t);
	metrics_free(m);
	return done_testing();
}

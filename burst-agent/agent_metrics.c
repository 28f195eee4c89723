/*
 * burst-agent: Prometheus metrics (MetricsListen=ADDR:PORT; off when not
 * set). Counters are counted on the loop where the agent handles each
 * event; gauges (nodes by state, cooldowns, the spool) are read from the
 * state database when a scraper asks, at most once a second (the scrapes
 * in between answer with that read). The server answers GET /metrics only,
 * on connections of the loop's own kind (conn.h): a request of at most
 * METRICS_MAX_REQ bytes, the whole exchange within METRICS_DEADLINE_S, at
 * most METRICS_MAX_CONNS at once and METRICS_MAX_PER_SOURCE of one source
 * (an address, and a user for a client on this host), the answer sent as the scraper reads it,
 * so a slow or hostile scraper costs the loop nothing.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent_int.h"
#include "metrics.h"
#include "spool.h"
#include "strutil.h"

static struct metrics *M;
static double started;
/* mono() when the gauges were last read from the state (< 0: never): a
 * read is every node's record, 30 ms of the loop at 20,000 nodes, and a
 * client may scrape as often as it likes */
static double gauges_at = -1;

static const double call_buckets[] = { 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120 };
static const double join_buckets[] = { 1, 5, 10, 20, 30, 60, 120, 300, 600, 1200 };

/* Instance time: the lives of instances ended (counted), the ones running (live). */
struct inst_time {
	char *node, *provider, *type, *region;
	double since;            /* mono(): when this agent saw it start (or itself start) */
	double price;            /* USD per hour (the catalog's on-demand price), NAN if unknown */
};
static struct inst_time *live;
static size_t nlive;
/* node -> its place in live, plus one (a burst has thousands live) */
static struct htab live_index = HTAB_INIT;

void metrics_init(void)
{
	if (M)
		return;
	started = now();
	M = metrics_new();
	metrics_family(M, "burst_nodes", METRIC_GAUGE,
		       "Burst nodes by life state and node set (from the agent's state database).", NULL, 0);
	metrics_family(M, "burst_nodes_cooling_down", METRIC_GAUGE,
		       "Nodes kept out of Slurm after a failure until their cooldown ends, by node set.", NULL, 0);
	metrics_family(M, "burst_cooldowns", METRIC_GAUGE,
		       "Instance types cooling down after a capacity or quota failure (1 while in force).", NULL, 0);
	metrics_family(M, "burst_cooldown_remaining_seconds", METRIC_GAUGE,
		       "Seconds left of each capacity cooldown in force.", NULL, 0);
	metrics_family(M, "burst_launches_total", METRIC_COUNTER,
		       "Instance launches by provider, instance type, region and outcome (ok or the error class).",
		       NULL, 0);
	metrics_family(M, "burst_provider_api_calls_total", METRIC_COUNTER,
		       "Calls of the agent into a provider driver, by operation.", NULL, 0);
	metrics_family(M, "burst_provider_api_errors_total", METRIC_COUNTER,
		       "Provider calls or launches that failed, by operation and error class.", NULL, 0);
	metrics_family(M, "burst_provider_api_call_duration_seconds", METRIC_HISTOGRAM,
		       "Duration of provider driver calls (a launch batch is one call).", call_buckets,
		       sizeof(call_buckets) / sizeof(call_buckets[0]));
	metrics_family(M, "burst_interruption_notices_total", METRIC_COUNTER,
		       "Spot interruption notices acted on, by provider, instance type, region and action "
		       "(terminate, stop, hibernate).", NULL, 0);
	metrics_family(M, "burst_joins_total", METRIC_COUNTER,
		       "Join reports by outcome: admitted, rejected (admission or acceptance), refused "
		       "(not verified), retry, malformed, unanswered (the agent's credential could not be made: "
		       "munged, or too many at once).", NULL, 0);
	metrics_family(M, "burst_node_life_refused_total", METRIC_COUNTER,
		       "Events node life has no edge for in the node's state (a bug; each is in the log): "
		       "nothing was done, by event and state.", NULL, 0);
	metrics_family(M, "burst_admission_duration_seconds", METRIC_HISTOGRAM,
		       "From the instance's launch to its admission, by node set.", join_buckets,
		       sizeof(join_buckets) / sizeof(join_buckets[0]));
	metrics_family(M, "burst_acceptance_duration_seconds", METRIC_HISTOGRAM,
		       "The node-local acceptance suite's run time as the node reported it, by node set.",
		       call_buckets, sizeof(call_buckets) / sizeof(call_buckets[0]));
	metrics_family(M, "burst_spool_depth", METRIC_GAUGE,
		       "Requests of the power-save programs waiting in the spool.", NULL, 0);
	metrics_family(M, "burst_launches_waiting", METRIC_GAUGE,
		       "Launches waiting in their region's queue for its rate-limit tokens.", NULL, 0);
	metrics_family(M, "burst_reconciler_rounds_total", METRIC_COUNTER,
		       "Reconciler rounds (provider listings held against the node records).", NULL, 0);
	metrics_family(M, "burst_reconciler_findings_total", METRIC_COUNTER,
		       "What the reconciler found, by finding.", NULL, 0);
	metrics_family(M, "burst_instance_seconds_total", METRIC_COUNTER,
		       "Instance time seen by this agent process (launch to termination), by provider, "
		       "instance type and region.", NULL, 0);
	metrics_family(M, "burst_instance_cost_dollars_total", METRIC_COUNTER,
		       "Cost of that instance time in US dollars at the catalog's on-demand price (or a Price= "
		       "override); instances of unknown price are not counted.", NULL, 0);
	metrics_family(M, "burst_metrics_connections_dropped_total", METRIC_COUNTER,
		       "Metrics connections closed unanswered, by reason (deadline, too_many, too_big).", NULL, 0);
	metrics_family(M, "burst_metrics_gauge_reads_total", METRIC_COUNTER,
		       "Reads of the gauges from the state database: at most one a second, the scrapes in "
		       "between answer with the last.", NULL, 0);
	metrics_family(M, "burst_agent_start_time_seconds", METRIC_GAUGE,
		       "When this agent process started (Unix time).", NULL, 0);
	metrics_set(M, "burst_agent_start_time_seconds", started, NULL);
	metrics_touch(M, "burst_reconciler_rounds_total", NULL);
	metrics_touch(M, "burst_metrics_gauge_reads_total", NULL);
	metrics_touch(M, "burst_joins_total", "outcome", "admitted", NULL);
	metrics_touch(M, "burst_joins_total", "outcome", "rejected", NULL);
}

void metrics_fini(void)
{
	size_t i;

	for (i = 0; i < nlive; i++) {
		free(live[i].node);
		free(live[i].provider);
		free(live[i].type);
		free(live[i].region);
	}
	free(live);
	live = NULL;
	nlive = 0;
	htab_free(&live_index);
	metrics_free(M);
	M = NULL;
	gauges_at = -1;
}

void metric_launch(const char *provider, const char *type, const char *region, enum prov_class cls)
{
	metrics_add(M, "burst_launches_total", 1, "provider", provider ? provider : "", "instance_type",
		    type ? type : "", "region", region ? region : "", "outcome", prov_class_name(cls), NULL);
	if (cls != PROV_OK)
		metrics_add(M, "burst_provider_api_errors_total", 1, "provider", provider ? provider : "",
			    "op", "launch", "class", prov_class_name(cls), NULL);
}

void metric_provider_call(const char *provider, const char *op, double seconds, int failed_cls)
{
	metrics_add(M, "burst_provider_api_calls_total", 1, "provider", provider ? provider : "", "op", op, NULL);
	metrics_observe(M, "burst_provider_api_call_duration_seconds", seconds, "provider",
			provider ? provider : "", "op", op, NULL);
	if (failed_cls > 0)
		metrics_add(M, "burst_provider_api_errors_total", 1, "provider", provider ? provider : "",
			    "op", op, "class", prov_class_name((enum prov_class)failed_cls), NULL);
}

void metric_notice(const char *provider, const char *type, const char *region, const char *action)
{
	metrics_add(M, "burst_interruption_notices_total", 1, "provider", provider ? provider : "", "instance_type",
		    type ? type : "", "region", region ? region : "", "action", action, NULL);
}

void metric_join(const char *outcome)
{
	metrics_add(M, "burst_joins_total", 1, "outcome", outcome, NULL);
}

void metric_life_refused(const char *event, const char *state)
{
	metrics_add(M, "burst_node_life_refused_total", 1, "event", event, "state", state, NULL);
}

void metric_observe(const char *name, const char *nodeset, double seconds)
{
	metrics_observe(M, name, seconds, "nodeset", nodeset ? nodeset : "", NULL);
}

void metric_reconcile(const char *finding, double n)
{
	if (!finding)
		metrics_add(M, "burst_reconciler_rounds_total", n, NULL);
	else
		metrics_add(M, "burst_reconciler_findings_total", n, "finding", finding, NULL);
}

double instance_price(const char *provider, const char *type, const char *region)
{
	size_t i;

	for (i = 0; A.cs && i < A.cs->n; i++) {
		const struct candidate *c = &A.cs->c[i];
		const char *cr = c->region >= 0 ? catalog_str(A.cat, c->region) : "";
		struct aprov *p;

		if (strcmp(catalog_str(A.cat, c->type->name), type) || strcmp(cr, region) || c->nodeset < 0 ||
		    (size_t)c->nodeset >= A.cfg->nnodesets)
			continue;
		p = prov_of(c);
		if (p && !strcmp(p->cfg->name, provider))
			return c->ondemand;
	}
	return NAN;
}

/* Count secs of live instance i (negative: take back). */
static void count_time(const struct inst_time *t, double secs)
{
	metrics_add(M, "burst_instance_seconds_total", secs, "provider", t->provider, "instance_type", t->type,
		    "region", t->region, NULL);
	if (!isnan(t->price))
		metrics_add(M, "burst_instance_cost_dollars_total", secs * t->price / 3600.0, "provider",
			    t->provider, "instance_type", t->type, "region", t->region, NULL);
}

void metric_instance_up(const char *node, const char *provider, const char *type, const char *region)
{
	if (htab_get(&live_index, node))
		return;
	live = xrealloc(live, (nlive + 1) * sizeof(*live));
	live[nlive].node = xstrdup(node);
	live[nlive].provider = xstrdup(provider ? provider : "");
	live[nlive].type = xstrdup(type ? type : "");
	live[nlive].region = xstrdup(region ? region : "");
	live[nlive].since = mono();
	live[nlive].price = instance_price(live[nlive].provider, live[nlive].type, live[nlive].region);
	count_time(&live[nlive], 0);   /* the series exist from the launch on */
	htab_put(&live_index, live[nlive].node, (void *)(uintptr_t)(nlive + 1));
	nlive++;
}

void metric_instance_down(const char *node)
{
	void *v;
	size_t i;

	if (!htab_del(&live_index, node, &v))
		return;
	i = (size_t)(uintptr_t)v - 1;
	count_time(&live[i], mono() - live[i].since);
	free(live[i].node);
	free(live[i].provider);
	free(live[i].type);
	free(live[i].region);
	live[i] = live[--nlive];
	if (i < nlive)   /* the last one moved here */
		htab_put(&live_index, live[i].node, (void *)(uintptr_t)(i + 1));
}

void metric_dropped(const char *reason)
{
	metrics_add(M, "burst_metrics_connections_dropped_total", 1, "reason", reason, NULL);
}

/* The gauges read from the state (the nodes, the cooldowns) and the spool, read now. */
static void refresh_gauges(void)
{
	struct node_rec *recs = NULL;
	size_t n = 0, i, j, k;
	burst_err_t err;
	double t = now();
	unsigned long *count;
	unsigned long *cooling;

	metrics_reset(M, "burst_nodes");
	metrics_reset(M, "burst_nodes_cooling_down");
	metrics_reset(M, "burst_cooldowns");
	metrics_reset(M, "burst_cooldown_remaining_seconds");
	count = xcalloc(A.cfg->nnodesets * NS_COUNT + 1, sizeof(*count));
	cooling = xcalloc(A.cfg->nnodesets + 1, sizeof(*cooling));
	if (state_nodes_all(A.db, &recs, &n, &err) < 0)
		ERR("metrics: cannot read the nodes: %s", err.msg);
	for (i = 0; i < n; i++) {
		for (j = 0; j < A.cfg->nnodesets; j++)
			if (recs[i].nodeset && !strcmp(recs[i].nodeset, A.cfg->nodesets[j].name))
				break;
		if (j == A.cfg->nnodesets || (int)recs[i].state < 0 || recs[i].state >= NS_COUNT)
			continue;   /* a node set no longer configured */
		count[j * NS_COUNT + recs[i].state]++;
		if (recs[i].state == NS_POWERED_DOWN && recs[i].cooldown_until > t)
			cooling[j]++;
	}
	state_nodes_free(recs, n);
	for (j = 0; j < A.cfg->nnodesets; j++) {
		for (k = 0; k < NS_COUNT; k++)
			metrics_set(M, "burst_nodes", (double)count[j * NS_COUNT + k], "nodeset",
				    A.cfg->nodesets[j].name, "state", node_state_name((enum node_state)k), NULL);
		metrics_set(M, "burst_nodes_cooling_down", (double)cooling[j], "nodeset",
			    A.cfg->nodesets[j].name, NULL);
	}
	free(count);
	free(cooling);
	/* capacity cooldowns in force, in one read: keys are PROVIDER/TYPE@REGION ("-": none) */
	{
		char **keys;
		double *until;
		size_t nk;
		if (state_cooldowns_active(A.db, t, &keys, &until, &nk, &err) < 0)
			ERR("metrics: cannot read the cooldowns: %s", err.msg);
		for (i = 0; i < nk; i++) {
			char *slash = strchr(keys[i], '/'), *at = strrchr(keys[i], '@');
			const char *region;
			if (slash && at && at > slash) {
				*slash = *at = '\0';
				region = strcmp(at + 1, "-") ? at + 1 : "";
				metrics_set(M, "burst_cooldowns", 1, "provider", keys[i], "instance_type", slash + 1,
					    "region", region, NULL);
				metrics_set(M, "burst_cooldown_remaining_seconds", until[i] - t, "provider", keys[i],
					    "instance_type", slash + 1, "region", region, NULL);
			}
			free(keys[i]);
		}
		free(keys);
		free(until);
	}
	{
		burst_err_t e2;
		char **names = spool_list(A.spool, &e2);
		size_t depth = 0;
		for (i = 0; names && names[i]; i++)
			depth++;
		spool_list_free(names);
		metrics_set(M, "burst_spool_depth", (double)depth, NULL);
	}
}

/* The whole text: the counters with the live instances' time so far. */
static char *scrape(size_t *len)
{
	double t = mono(), *keep = xcalloc(2 * nlive + 1, sizeof(double));
	size_t i;
	char *text;

	/* the gauges of a read less than a second old are answered again */
	if (gauges_at < 0 || t - gauges_at >= METRICS_GAUGES_CACHE_S) {
		refresh_gauges();
		gauges_at = t;
		metrics_add(M, "burst_metrics_gauge_reads_total", 1, NULL);
	}
	/* counted in memory: always now */
	metrics_set(M, "burst_launches_waiting", (double)pace_waiting(), NULL);
	/* live instances count into the totals for this answer only: the
	 * totals are put back exactly after (adding and taking back a double
	 * could leave one a rounding lower: a counter reset to Prometheus) */
	for (i = 0; i < nlive; i++) {
		keep[2 * i] = metrics_get(M, "burst_instance_seconds_total", "provider", live[i].provider,
					  "instance_type", live[i].type, "region", live[i].region, NULL);
		if (!isnan(live[i].price))
			keep[2 * i + 1] = metrics_get(M, "burst_instance_cost_dollars_total", "provider",
						      live[i].provider, "instance_type", live[i].type, "region",
						      live[i].region, NULL);
	}
	for (i = 0; i < nlive; i++)
		count_time(&live[i], t - live[i].since);
	text = metrics_render(M, len);
	for (i = nlive; i-- > 0;) {
		metrics_set(M, "burst_instance_seconds_total", keep[2 * i], "provider", live[i].provider,
			    "instance_type", live[i].type, "region", live[i].region, NULL);
		if (!isnan(live[i].price))
			metrics_set(M, "burst_instance_cost_dollars_total", keep[2 * i + 1], "provider",
				    live[i].provider, "instance_type", live[i].type, "region", live[i].region, NULL);
	}
	free(keep);
	return text;
}

static char *http_answer(int code, const char *status, const char *ctype, const char *body, size_t blen,
			 size_t *len)
{
	struct strbuf sb;

	sb_init(&sb);
	sb_addf(&sb, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
		code, status, ctype, blen, code == 405 ? "Allow: GET\r\n" : "");
	sb_add(&sb, "");
	*len = sb.len + blen;
	sb.s = xrealloc(sb.s, *len + 1);
	memcpy(sb.s + sb.len, body, blen);
	sb.s[*len] = '\0';
	return sb.s;
}

/* Answer a request (its request line and header in req); the answer to send. */
char *metrics_http(const char *req, size_t *len)
{
	static const char plain[] = "text/plain; charset=utf-8";
	char method[16], target[256];
	const char *sp, *sp2;
	size_t ml, tl;

	sp = strchr(req, ' ');
	sp2 = sp ? strchr(sp + 1, ' ') : NULL;
	ml = sp ? (size_t)(sp - req) : 0;
	tl = sp2 ? (size_t)(sp2 - sp - 1) : 0;
	if (!sp || !sp2 || ml == 0 || ml >= sizeof(method) || tl == 0 || tl >= sizeof(target) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7))
		return http_answer(400, "Bad Request", plain, "bad request\n", 12, len);
	memcpy(method, req, ml);
	method[ml] = '\0';
	memcpy(target, sp + 1, tl);
	target[tl] = '\0';
	target[strcspn(target, "?")] = '\0';
	if (strcmp(target, "/metrics"))
		return http_answer(404, "Not Found", plain, "only /metrics is here\n", 22, len);
	if (strcmp(method, "GET"))
		return http_answer(405, "Method Not Allowed", plain, "only GET\n", 9, len);
	{
		size_t blen;
		char *body = scrape(&blen), *out;
		out = http_answer(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, blen, len);
		free(body);
		return out;
	}
}

/*
 * A metrics connection the loop found ready (revents): read the request,
 * then send the answer as the scraper takes it. true when it is done with
 * (answered, failed, or the scraper left): the caller drops it.
 */
bool metrics_conn(struct conn *c, short revents)
{
	enum conn_status st;

	if (c->out) {
		if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
			return false;
		st = conn_flush(c);
		if (st == CONN_SENT)
			shutdown(c->fd, SHUT_WR);
		return st != CONN_MORE;
	}
	st = conn_pump_until(c, METRICS_MAX_REQ, "\r\n\r\n");
	if (st == CONN_MORE)
		return false;
	if (st == CONN_LINE) {
		size_t len;
		char *out = metrics_http(c->buf, &len);
		st = conn_send(c, out, len);
		if (st == CONN_SENT)
			shutdown(c->fd, SHUT_WR);
		return st != CONN_MORE;
	}
	if (st == CONN_TOO_BIG) {
		static const char msg[] = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
					  "Connection: close\r\n\r\n";
		metric_dropped("too_big");
		if (send(c->fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			return true;
	}
	return true;
}

/* The listening socket of MetricsListen=, or -1 when it is not set, -3 when
 * its port is in use (said by the caller), -2 on another error (logged). */
int metrics_listen(void)
{
	struct sockaddr_in sa;
	int one = 1, fd;

	if (!A.cfg->metrics_listen)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)A.cfg->metrics_port);
	if (inet_pton(AF_INET, A.cfg->metrics_addr, &sa.sin_addr) != 1) {
		ERR("MetricsListen=%s: not an IPv4 address", A.cfg->metrics_listen);
		return -2;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ERR("MetricsListen=%s: socket: %s", A.cfg->metrics_listen, strerror(errno));
		return -2;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		int e = errno;
		close(fd);
		if (e == EADDRINUSE)
			return -3;   /* the caller says who holds it, and tries again */
		ERR("cannot serve metrics on MetricsListen=%s: %s (is the address this host's?)",
		    A.cfg->metrics_listen, strerror(e));
		return -2;
	}
	return fd;
}

/*
 * driver_gcp.c - the gcp provider: Compute Engine VMs through the compute
 * v1 REST API (lib/cloud/gce.h), tokens from a service account's key file
 * (CredentialsFile=) or the metadata server (lib/cloud/gce_auth.h).
 *
 * A launch batch (n nodes of one node set as one machine type in one
 * region) is one bulk insert per chunk of at most GCP_CHUNK nodes: zonal
 * (zones/Z/instances/bulkInsert) when Zones= allows one zone of the region,
 * else regional with a locationPolicy allowing Zones= (or every zone of the
 * region). Each VM is named after its node and attempt (gce_vm_name:
 * CLUSTER-NODE-ATTEMPT), minCount 1 (MinCount=all: the chunk's size), labels
 * burst-cluster, burst-provider and burst-batch=<token of the chunk's
 * (node, attempt)s>, and a startup-script (the join, doc/gcp.md). Its
 * requestId is a UUID derived from the same (cluster, provider, region,
 * type, names): Compute Engine answers a repeated one with the first
 * operation for an hour, so a launch sent again after a crash is the same
 * launch; later, the names (unique in a project's zone... and checked by the
 * insert) refuse it (RESOURCE_ALREADY_EXISTS), and the VMs of those names
 * that exist are adopted, the rest sent again.
 *
 * The operation is waited for (zoneOperations/regionOperations.wait, each
 * call answered at DONE or after up to 2 minutes) until BuildWait= seconds
 * (default 120) have passed; calls refused for the rate quota or a 5xx are
 * asked again a second later. Still running then: the nodes get
 * PROV_TRANSIENT, and the agent sends the same launch again (the same
 * requestId: the same operation). Once DONE, the chunk's VMs are listed by
 * their burst-batch label: a node whose VM exists is launched (instance id
 * ZONE/NAME, its address the first interface's networkIP); the others get
 * the class of the operation's errors, or of their own insert operation's
 * (operations of the group, operationType insert): a capacity error
 * (ZONE_RESOURCE_POOL_EXHAUSTED) is PROV_CAPACITY, so the agent moves them
 * to the next candidate (zone, type or provider) at once; QUOTA_EXCEEDED is
 * PROV_QUOTA (the family cools down in that region).
 *
 * Then each VM gets its own metadata (instances.setMetadata, with the
 * fingerprint of the listing): the startup-script and the items
 * burst-node, burst-attempt and burst-join-token. The VM's startup script
 * waits for them on the metadata server: the bulk insert's metadata is the
 * same for every VM, and holds no token.
 *
 * Every mutation (bulk insert, setMetadata, delete) counts against the
 * project's per-minute rate quota of its group, counted per minute of the
 * clock and refilled whole at the next one (WriteQuota=, default Compute
 * Engine's 1,500 a minute; lib/core/ratelimit.h, win_quota): the driver
 * sends none the minute has no room for, and waits (on the provider's
 * worker, never the agent's loop) for the next. A launch of n VMs is n + 1
 * of them (a bulk insert per chunk, a setMetadata per VM): the agent's own
 * pacing (LaunchRate=, RequestRate=) counts the bulk inserts and the
 * instances, not these calls. A throttling answer all the same (another
 * client of the project): the minute counted full, the setMetadata sent
 * once more in the next.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "../crash.h"
#include "ratelimit.h"
#include "../provider.h"
#include "gce.h"
#include "gce_auth.h"
#include "sha256.h"
#include "strutil.h"

/* nodes in one bulk insert (Compute Engine takes up to 5,000; the per-VM
 * metadata calls that follow are what bounds a chunk's time) */
#define GCP_CHUNK 1000
/* seconds a launch waits for its operation (BuildWait=) */
#define GCP_OP_WAIT 120
/* Compute Engine's default rate quota of the mutation methods' group
 * (https://cloud.google.com/compute/api-quota): 1,500 a minute a project */
#define GCP_WRITE_QUOTA 1500
/* how far (s) the clock here and Compute Engine's may disagree, with a
 * request's way there */
#define GCP_QUOTA_SLACK 1.0

struct provider {
	char *name, *cluster, *cluster_label, *name_label;
	char *credentials, *endpoint, *ca_file, *project;
	char *image, *template, *network, *subnetwork, *service_account, *disk_type;
	char *join_address;
	char **zones, **tags, **regions;
	size_t nzones, ntags, nregions;
	long disk_gb;
	bool external_ip, spot, min_count_all, allow_http;
	int op_wait;
	struct win_quota writes;    /* the mutations sent, per minute of the clock */
	unsigned write_waits;       /* times a mutation waited for the quota */
	struct gce_auth *auth;
	struct gce_client *c;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static char **dup_list(char **v, size_t n)
{
	char **o = xcalloc(n + 1, sizeof(char *));

	for (size_t i = 0; i < n; i++)
		o[i] = xstrdup(v[i]);
	return o;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static enum prov_class prov_of_gce(enum gce_class c)
{
	switch (c) {
	case GCE_OK: return PROV_OK;
	case GCE_CAPACITY: return PROV_CAPACITY;
	case GCE_QUOTA: return PROV_QUOTA;
	case GCE_THROTTLED: return PROV_THROTTLED;
	case GCE_TRANSIENT: return PROV_TRANSIENT;
	case GCE_PERMANENT: return PROV_PERMANENT;
	case GCE_AUTH: return PROV_AUTH;
	case GCE_NOT_FOUND: return PROV_PERMANENT;
	case GCE_EXISTS: return PROV_PERMANENT;
	}
	return PROV_TRANSIENT;
}

static struct provider *gcp_init(const struct cfg_provider *cfg, const struct burst_config *all,
				 burst_err_t *err)
{
	struct provider *p;
	char lab[64];

	if (!cfg->image_id && !cfg->instance_template) {
		burst_err_set(err, "%s:%d: Provider=%s (gcp) needs Image=projects/P/global/images/family/F "
			      "(the boot image) or InstanceTemplate=global/instanceTemplates/NAME",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	if (!cfg->nregions) {
		burst_err_set(err, "%s:%d: Provider=%s (gcp) needs Regions=R[,R...] such as us-central1",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->name = xstrdup(cfg->name);
	p->cluster = xstrdup(all->cluster_name);
	if (gce_label_value(p->cluster, lab) < 0) {
		burst_err_set(err, "%s:%d: Provider=%s (gcp): ClusterName=%s is too long for a Compute Engine label "
			      "(at most 63 of a-z, 0-9, '_', '-', or 29 other bytes)",
			      cfg->where.file, cfg->where.line, cfg->name, p->cluster);
		free(p->cluster);
		free(p->name);
		free(p);
		return NULL;
	}
	p->cluster_label = xstrdup(lab);
	p->name_label = xstrdup(gce_label_value(p->name, lab) == 0 ? lab : "");
	p->credentials = dup_or_null(cfg->credentials);
	p->endpoint = dup_or_null(cfg->endpoint);
	p->ca_file = dup_or_null(cfg->ca_file);
	p->project = dup_or_null(cfg->project);
	p->image = dup_or_null(cfg->image_id);
	p->template = dup_or_null(cfg->instance_template);
	p->network = dup_or_null(cfg->network);
	p->subnetwork = dup_or_null(cfg->subnetwork);
	p->service_account = dup_or_null(cfg->service_account);
	p->disk_type = dup_or_null(cfg->disk_type);
	p->join_address = dup_or_null(cfg->join_address);
	p->zones = dup_list(cfg->zones, cfg->nzones);
	p->nzones = cfg->nzones;
	p->tags = dup_list(cfg->network_tags, cfg->nnetwork_tags);
	p->ntags = cfg->nnetwork_tags;
	p->regions = dup_list(cfg->regions, cfg->nregions);
	p->nregions = cfg->nregions;
	p->disk_gb = cfg->disk_size_gb;
	p->external_ip = cfg->external_ip;
	p->spot = cfg->spot;
	p->min_count_all = cfg->min_count_all;
	p->allow_http = all->allow_insecure_endpoint;
	p->op_wait = cfg->build_wait >= 0 ? cfg->build_wait : GCP_OP_WAIT;
	wq_init(&p->writes, cfg->write_quota < 0 ? GCP_WRITE_QUOTA : cfg->write_quota,
		cfg->write_quota_len > 0 ? cfg->write_quota_len : 60, GCP_QUOTA_SLACK);
	return p;
}

/* The client, made on first use (the key file is read then, so that a
 * fixed file needs no restart); NULL with err and *cls. */
static struct gce_client *client(struct provider *p, enum prov_class *cls, burst_err_t *err)
{
	struct gce_auth_opts ao;
	struct gce_client_opts co;
	const char *project;

	if (p->c)
		return p->c;
	if (!p->auth) {
		memset(&ao, 0, sizeof(ao));
		ao.key_file = p->credentials;
		ao.ca_file = p->ca_file;
		ao.allow_http = p->allow_http;
		if (!(p->auth = gce_auth_new(&ao, err))) {
			*cls = PROV_AUTH;
			return NULL;
		}
	}
	project = p->project;
	if (!project && !(project = gce_auth_project(p->auth, err))) {
		*cls = PROV_AUTH;
		return NULL;
	}
	memset(&co, 0, sizeof(co));
	co.endpoint = p->endpoint;
	co.project = project;
	co.auth = p->auth;
	co.ca_file = p->ca_file;
	co.allow_http = p->allow_http;
	if (!(p->c = gce_client_new(&co, err))) {
		*cls = PROV_PERMANENT;
		return NULL;
	}
	return p->c;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A mutation (POST or DELETE) sent when the minute's quota has room for
 * it: waited for here, on the provider's worker. A throttling answer
 * counts the minute full. */
static enum gce_class mutate(struct provider *p, struct gce_client *c, const char *method, const char *path,
			     const char *body, const char *what, char **ans, burst_err_t *err)
{
	enum gce_class cls;
	double t = wall(), at = wq_when(&p->writes, t);

	if (at > t) {
		struct timespec ts;
		p->write_waits++;
		do {
			double d = at - t;
			ts.tv_sec = (time_t)d;
			ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
			t = wall();
			at = wq_when(&p->writes, t);
		} while (at > t);
	}
	wq_take(&p->writes, t);
	cls = gce_call(c, method, path, body, what, ans, err);
	if (cls == GCE_THROTTLED)
		wq_drain(&p->writes, wall());
	return cls;
}

static void set_error(struct prov_node *pn, enum prov_class cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_error(struct prov_node *pn, enum prov_class cls, const char *fmt, ...)
{
	va_list ap;

	pn->cls = cls;
	pn->instance[0] = '\0';
	pn->address[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(pn->error, sizeof(pn->error), fmt, ap);
	va_end(ap);
}

static void fail_range(struct prov_batch *b, size_t from, size_t to, enum prov_class cls, const char *what,
		       const char *msg)
{
	for (size_t i = from; i < to; i++)
		if (b->nodes[i].cls != PROV_OK || !b->nodes[i].instance[0])
			set_error(&b->nodes[i], cls, "%s: %s", what, msg);
}

/* sha256 of the chunk's identity: the burst-batch label ("burst-" + 40 hex
 * digits) and the requestId (a UUID of version 4's shape). */
static void chunk_ids(const struct provider *p, const struct prov_batch *b, const char *region,
		      char names[][64], const size_t *idx, size_t n, char batch[47], char uuid[37])
{
	struct sha256 h;
	unsigned char d[32];
	struct strbuf s;
	size_t i;

	sb_init(&s);
	sb_addf(&s, "%s\n%s\n%s\n%s\n%s\n", p->cluster, p->name, b->nodeset ? b->nodeset : "", region,
		b->instance_type ? b->instance_type : "");
	for (i = 0; i < n; i++)
		sb_addf(&s, "%s\n", names[idx[i]]);
	sha256_init(&h);
	sha256_update(&h, s.s, s.len);
	sha256_final(&h, d);
	sb_free(&s);
	memcpy(batch, "burst-", 6);
	for (i = 0; i < 20; i++)
		snprintf(batch + 6 + 2 * i, 3, "%02x", d[i]);
	d[6] = (unsigned char)((d[6] & 0x0f) | 0x40);
	d[8] = (unsigned char)((d[8] & 0x3f) | 0x80);
	snprintf(uuid, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]);
}

/*
 * The startup-script every VM of the batch runs (Compute Engine's guest
 * agent runs it at each boot): it asks the metadata server for its zone and
 * name (its instance id, ZONE/NAME), then waits for the items the agent sets
 * once the VM exists (burst-node, burst-join-token), and joins.
 * GCE_METADATA_HOST names another metadata server (as Google's libraries
 * read it); BURST_INSTANCE_ID, BURST_NODE, BURST_JOIN_TOKEN, BURST_NODE_BIN,
 * BURST_STATE_DIR, BURST_MUNGE_SOCKET and SLURMD_CONF may be set by whoever
 * runs it (an image's own wrapper, the tests).
 */
static void startup_script(const struct provider *p, const struct prov_batch *b, const char *region,
			   const char *join, struct strbuf *s)
{
	ud_head(s, "VM", join, b->provider ? b->provider : p->name, b->instance_type ? b->instance_type : "",
		region, b->acceptance ? b->acceptance : "");
	sb_add(s, "\n"
		"MD=http://${GCE_METADATA_HOST:-metadata.google.internal}/computeMetadata/v1/instance\n"
		"md() {\n"
		"\tcurl -fsS --retry 5 -H 'Metadata-Flavor: Google' \"$MD/$1\"\n"
		"}\n"
		"if [ -z \"${BURST_INSTANCE_ID:-}\" ]; then\n"
		"\tZONE=$(md zone) && NAME=$(md name) || exit 1\n"
		"\tBURST_INSTANCE_ID=${ZONE##*/}/$NAME\n"
		"fi\n"
		"# this VM's node and join token: the agent sets them in its metadata once\n"
		"# the bulk insert has made it\n"
		"NODE=${BURST_NODE:-}\n"
		"TOKEN=${BURST_JOIN_TOKEN:-}\n"
		"tries=0\n"
		"while [ -z \"$TOKEN\" ] || [ -z \"$NODE\" ]; do\n"
		"\tNODE=$(md attributes/" GCE_META_NODE " 2>/dev/null) &&\n"
		"\t\tTOKEN=$(md \"attributes/" GCE_META_TOKEN "?wait_for_change=true&timeout_sec=30\" 2>/dev/null) &&\n"
		"\t\t[ -n \"$TOKEN\" ] && [ -n \"$NODE\" ] && break\n"
		"\ttries=$((tries + 1))\n"
		"\tif [ \"$tries\" -ge 300 ]; then\n"
		"\t\techo \"burst: no " GCE_META_NODE " / " GCE_META_TOKEN " in this VM's metadata (set by the agent)\" >&2\n"
		"\t\texit 1\n"
		"\tfi\n"
		"\tNODE= TOKEN=\n"
		"\tsleep 1\n"
		"done\n");
	if (p->spot)
		/* a Spot VM: burst-node watches for its preemption (instance/preempted) */
		sb_add(s, "BURST_GCE_METADATA=${BURST_GCE_METADATA:-http://${GCE_METADATA_HOST:-metadata.google.internal}}\n");
	ud_join_tail(s);
}

/* POST .../operations/NAME/wait until op is DONE or deadline passes (a
 * throttled or failed wait asked again a second later). GCE_OK when DONE
 * (its own errors are in op), GCE_TRANSIENT with err when still running. */
static enum gce_class wait_op(struct gce_client *c, struct gce_op *op, time_t deadline, burst_err_t *err)
{
	char path[700], scope[300];

	if (op->zone)
		snprintf(scope, sizeof(scope), "zones/%s", op->zone);
	else if (op->region)
		snprintf(scope, sizeof(scope), "regions/%s", op->region);
	else
		snprintf(scope, sizeof(scope), "global");
	while (!gce_op_done(op)) {
		char *ans = NULL;
		enum gce_class cls;
		struct gce_op next;

		if (time(NULL) >= deadline) {
			burst_err_set(err, "operation %s still %s after BuildWait= (sent again, the same requestId "
				      "answers it)", op->name, op->status);
			return GCE_TRANSIENT;
		}
		snprintf(path, sizeof(path), "%s/operations/%s/wait", scope, op->name);
		cls = gce_call(c, "POST", path, NULL, "wait for the operation", &ans, err);
		if (cls == GCE_OK && gce_op_parse(ans, &next, err) == 0) {
			gce_op_free(op);
			*op = next;
		} else if (cls == GCE_OK || cls == GCE_THROTTLED || cls == GCE_TRANSIENT) {
			sleep(1);
		} else {
			free(ans);
			return cls;
		}
		free(ans);
	}
	return GCE_OK;
}

/* Every page of aggregated/instances?filter=FILTER into *out. */
static enum gce_class list_vms(struct gce_client *c, const char *filter, struct gce_vms *out, burst_err_t *err)
{
	char *esc = curl_escape(filter, 0), *page = NULL;
	enum gce_class cls = GCE_OK;

	do {
		struct strbuf path;
		char *ans = NULL, *next = NULL;

		sb_init(&path);
		sb_addf(&path, "aggregated/instances?maxResults=500&filter=%s%s%s", esc ? esc : "",
			page ? "&pageToken=" : "", page ? page : "");
		cls = gce_call(c, "GET", path.s, NULL, "list instances", &ans, err);
		sb_free(&path);
		free(page);
		page = NULL;
		if (cls == GCE_OK && gce_vms_parse(ans, out, &next, err) < 0)
			cls = GCE_TRANSIENT;
		free(ans);
		page = next;
	} while (cls == GCE_OK && page);
	free(page);
	curl_free(esc);
	return cls;
}

/* The per-VM errors of an operation group: each insert operation's target
 * name and its errors' class and text (NULL: none listed). */
static void group_errors(struct gce_client *c, const char *group, struct gce_ops *ops)
{
	char f[300], *esc, path[600], *ans = NULL, *next = NULL;
	burst_err_t err;

	memset(ops, 0, sizeof(*ops));
	if (!group)
		return;
	snprintf(f, sizeof(f), "operationType = insert AND operationGroupId = %s", group);
	esc = curl_escape(f, 0);
	snprintf(path, sizeof(path), "aggregated/operations?filter=%s", esc ? esc : "");
	curl_free(esc);
	if (gce_call(c, "GET", path, NULL, "list the operation group", &ans, &err) == GCE_OK)
		gce_ops_parse(ans, ops, &next, &err);
	free(ans);
	free(next);
}

/* The items every VM gets, and (node) its own. */
static char *metadata_body(const char *fingerprint, const char *script, const struct prov_node *pn)
{
	char att[32];
	struct gce_kv items[4];

	snprintf(att, sizeof(att), "%d", pn->attempt);
	items[0] = (struct gce_kv){ "startup-script", script };
	items[1] = (struct gce_kv){ GCE_META_NODE, pn->node };
	items[2] = (struct gce_kv){ GCE_META_ATTEMPT, att };
	items[3] = (struct gce_kv){ GCE_META_TOKEN, pn->token ? pn->token : "" };
	return gce_metadata_body(fingerprint, items, 4);
}

/* Set VM v's own metadata (node pn). A stale fingerprint (412): the VM read
 * again, once. */
static enum gce_class give_metadata(struct provider *p, struct gce_client *c, const struct gce_vm *v,
				    const char *script, const struct prov_node *pn, burst_err_t *err)
{
	char path[400], *fp = dup_or_null(v->fingerprint);
	enum gce_class cls = GCE_TRANSIENT;

	for (int round = 0; round < 2; round++) {
		char *body = metadata_body(fp, script, pn), *ans = NULL;

		snprintf(path, sizeof(path), "zones/%s/instances/%s/setMetadata", v->zone ? v->zone : "-", v->name);
		cls = mutate(p, c, "POST", path, body, "set the VM's metadata (its node and join token)", &ans, err);
		free(body);
		free(ans);
		if (round || (cls != GCE_TRANSIENT && cls != GCE_THROTTLED))
			break;
		if (cls == GCE_THROTTLED)
			/* the minute counted full: sent again in the next */
			continue;
		/* maybe a stale fingerprint: read it again */
		snprintf(path, sizeof(path), "zones/%s/instances/%s", v->zone ? v->zone : "-", v->name);
		ans = NULL;
		if (gce_call(c, "GET", path, NULL, "read the VM", &ans, err) == GCE_OK) {
			struct gce_vm now;
			if (gce_vm_parse(ans, &now, err) == 0) {
				free(fp);
				fp = dup_or_null(now.fingerprint);
				gce_vm_free(&now);
			}
		}
		free(ans);
	}
	free(fp);
	return cls;
}

static const struct gce_vm *find_vm(const struct gce_vms *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name) && strcmp(l->v[i].status, "STOPPING") &&
		    strcmp(l->v[i].status, "TERMINATED"))
			return &l->v[i];
	return NULL;
}

/* The zones of region that Zones= allows (none given: n = 0, any zone). */
static size_t zones_in(const struct provider *p, const char *region, const char **out, size_t cap)
{
	size_t n = 0, rl = strlen(region);

	for (size_t i = 0; i < p->nzones && n < cap; i++)
		if (!strncmp(p->zones[i], region, rl) && p->zones[i][rl] == '-')
			out[n++] = p->zones[i];
	return n;
}

/*
 * One chunk: the nodes idx[0..n) of b (their names in names[]), those
 * without a VM yet. Sends the bulk insert, waits, lists the batch, fills
 * each node's outcome, gives each VM its metadata.
 */
static void launch_chunk(struct provider *p, struct gce_client *c, struct prov_batch *b, const char *region,
			 const char *join, char names[][64], const size_t *idx, size_t n, int round)
{
	const char *zones[64], *vm_names[GCP_CHUNK];
	size_t nz = zones_in(p, region, zones, 64), i;
	struct gce_kv labels[3];
	struct gce_kv md[1];
	struct gce_bulk bk;
	struct strbuf script;
	char batch[47], uuid[37], scope[200], path[400], what[600], *body, *ans = NULL;
	struct gce_op op;
	struct gce_vms vms = { 0 };
	struct gce_ops gops = { 0 };
	enum gce_class cls, opcls;
	burst_err_t err;
	char errs[600] = "";
	bool listed_group = false;

	chunk_ids(p, b, region, names, idx, n, batch, uuid);
	for (i = 0; i < n; i++)
		vm_names[i] = names[idx[i]];
	sb_init(&script);
	startup_script(p, b, region, join, &script);
	labels[0] = (struct gce_kv){ GCE_LABEL_CLUSTER, p->cluster_label };
	labels[1] = (struct gce_kv){ GCE_LABEL_PROVIDER, p->name_label };
	labels[2] = (struct gce_kv){ GCE_LABEL_BATCH, batch };
	md[0] = (struct gce_kv){ "startup-script", script.s };
	memset(&bk, 0, sizeof(bk));
	bk.machine_type = b->instance_type ? b->instance_type : "";
	bk.names = vm_names;
	bk.n = n;
	bk.min_count = p->min_count_all ? (long)n : 1;
	bk.image = p->image;
	bk.source_template = p->template;
	bk.disk_gb = p->disk_gb;
	bk.disk_type = p->disk_type;
	bk.network = p->network;
	bk.subnetwork = p->subnetwork;
	bk.external_ip = p->external_ip;
	bk.service_account = p->service_account;
	bk.tags = (const char *const *)p->tags;
	bk.ntags = p->ntags;
	bk.labels = labels;
	bk.nlabels = *p->name_label ? 3 : 2;
	if (bk.nlabels == 2)
		labels[1] = labels[2];
	bk.metadata = md;
	bk.nmetadata = 1;
	bk.spot = p->spot;
	if (nz == 1) {
		snprintf(scope, sizeof(scope), "zones/%s", zones[0]);
	} else {
		snprintf(scope, sizeof(scope), "regions/%s", region);
		bk.zones = zones;
		bk.nzones = nz;
	}
	snprintf(what, sizeof(what), "gcp %s: bulk insert of %zu VM%s (%s%s) as %s in %s", p->name, n,
		 n == 1 ? "" : "s", vm_names[0], n > 1 ? ", ..." : "", bk.machine_type, scope);
	body = gce_bulk_body(&bk);
	snprintf(path, sizeof(path), "%s/instances/bulkInsert?requestId=%s", scope, uuid);
	cls = mutate(p, c, "POST", path, body, what, &ans, &err);
	free(body);
	if (cls == GCE_OK && gce_op_parse(ans, &op, &err) < 0)
		cls = GCE_TRANSIENT;
	free(ans);
	if (cls != GCE_OK) {
		for (i = 0; i < n; i++)
			set_error(&b->nodes[idx[i]], prov_of_gce(cls), "%s", err.msg);
		sb_free(&script);
		return;
	}
	if (provider_crash)
		provider_crash(CP_GCP_BULK_SENT);
	cls = wait_op(c, &op, time(NULL) + p->op_wait, &err);
	if (cls != GCE_OK) {
		for (i = 0; i < n; i++)
			set_error(&b->nodes[idx[i]], prov_of_gce(cls), "%s: %s", what, err.msg);
		gce_op_free(&op);
		sb_free(&script);
		return;
	}
	if (provider_crash)
		provider_crash(CP_GCP_BULK_DONE);
	opcls = gce_op_class(&op);
	gce_op_errors(&op, errs, sizeof(errs));
	if (opcls == GCE_EXISTS && round == 0) {
		/* names in use: a launch of these (node, attempt)s made earlier
		 * (its answer lost, its requestId forgotten): adopt what exists,
		 * send the rest again (round 1) */
		struct strbuf f;
		size_t rest[GCP_CHUNK], nrest = 0;

		/* by name alone: Compute Engine's filters take a regular
		 * expression (eq) only as the one constraint; the cluster's
		 * label is checked here */
		sb_init(&f);
		sb_add(&f, "name eq \"(");
		for (i = 0; i < n; i++)
			sb_addf(&f, "%s%s", i ? "|" : "", vm_names[i]);
		sb_add(&f, ")\"");
		cls = list_vms(c, f.s, &vms, &err);
		sb_free(&f);
		if (cls != GCE_OK) {
			for (i = 0; i < n; i++)
				set_error(&b->nodes[idx[i]], prov_of_gce(cls), "%s: %s; then listing them: %s", what, errs,
					  err.msg);
		} else {
			for (i = 0; i < n; i++) {
				struct prov_node *pn = &b->nodes[idx[i]];
				const struct gce_vm *v = find_vm(&vms, vm_names[i]);
				if (v && (!v->cluster || strcmp(v->cluster, p->cluster_label))) {
					/* the name is another cluster's VM's: a launch cannot make it */
					set_error(pn, PROV_PERMANENT, "%s: the name %s is taken by a VM of %s: %s", what,
						  vm_names[i], v->cluster ? "another cluster" : "no slurm-burst cluster", errs);
					continue;
				}
				if (!v) {
					rest[nrest++] = idx[i];
					continue;
				}
				snprintf(pn->instance, sizeof(pn->instance), "%s/%s", v->zone ? v->zone : "", v->name);
				snprintf(pn->address, sizeof(pn->address), "%s", v->ip ? v->ip : "");
				pn->cls = PROV_OK;
				snprintf(pn->error, sizeof(pn->error), "VM %s adopted: launched earlier (attempt %d, %s), "
					 "the answer was not recorded", pn->instance, pn->attempt, v->status);
				if (give_metadata(p, c, v, script.s, pn, &err) != GCE_OK)
					set_error(pn, PROV_TRANSIENT, "gcp %s: VM %s/%s: %s", p->name, v->zone ? v->zone : "",
						  v->name, err.msg);
			}
			if (nrest)
				launch_chunk(p, c, b, region, join, names, rest, nrest, 1);
		}
		gce_vms_free(&vms);
		gce_op_free(&op);
		sb_free(&script);
		return;
	}
	/* the chunk's VMs, by their batch label */
	{
		char f[200];
		snprintf(f, sizeof(f), "labels.%s = %s AND labels.%s = %s", GCE_LABEL_CLUSTER, p->cluster_label,
			 GCE_LABEL_BATCH, batch);
		cls = list_vms(c, f, &vms, &err);
	}
	if (cls != GCE_OK) {
		/* cannot tell what was made: the same launch again answers it */
		for (i = 0; i < n; i++)
			set_error(&b->nodes[idx[i]], PROV_TRANSIENT, "%s: DONE, then listing its VMs: %s", what, err.msg);
		gce_op_free(&op);
		sb_free(&script);
		return;
	}
	for (i = 0; i < n; i++) {
		struct prov_node *pn = &b->nodes[idx[i]];
		const struct gce_vm *v = find_vm(&vms, vm_names[i]);
		enum gce_class vc = opcls;
		const char *why = errs;
		char own[600];

		if (v) {
			snprintf(pn->instance, sizeof(pn->instance), "%s/%s", v->zone ? v->zone : "", v->name);
			snprintf(pn->address, sizeof(pn->address), "%s", v->ip ? v->ip : "");
			pn->cls = PROV_OK;
			pn->error[0] = '\0';
			if (give_metadata(p, c, v, script.s, pn, &err) != GCE_OK)
				set_error(pn, PROV_TRANSIENT, "gcp %s: VM %s/%s made, its node and join token not set "
					  "(sent again, the launch sets them): %s", p->name, v->zone ? v->zone : "", v->name,
					  err.msg);
			else if (provider_crash)
				provider_crash(CP_GCP_METADATA);
			continue;
		}
		/* no VM: its own insert operation says why (the bulk's may not) */
		if (!listed_group) {
			group_errors(c, op.group, &gops);
			listed_group = true;
		}
		for (size_t k = 0; k < gops.n; k++)
			if (gops.v[k].target && !strcmp(gops.v[k].target, vm_names[i]) && gops.v[k].nerrors) {
				vc = gce_op_class(&gops.v[k]);
				gce_op_errors(&gops.v[k], own, sizeof(own));
				why = own;
				break;
			}
		if (vc == GCE_OK) {
			/* DONE without errors and no VM: the capacity minCount allowed */
			vc = GCE_CAPACITY;
			why = "the bulk insert made fewer VMs than asked (minCount)";
		}
		set_error(pn, prov_of_gce(vc), "%s: VM %s not made: %s", what, vm_names[i], *why ? why : "no reason given");
	}
	gce_ops_free(&gops);
	gce_vms_free(&vms);
	gce_op_free(&op);
	sb_free(&script);
}

static size_t gcp_launch(struct provider *p, struct prov_batch *b)
{
	const char *region = b->region ? b->region : p->regions[0];
	const char *join = p->join_address ? p->join_address : b->join_addr;
	enum prov_class pcls = PROV_OK;
	struct gce_client *c;
	burst_err_t err;
	char (*names)[64];
	size_t *idx, i, got = 0;
	char what[300];

	if (!b->n)
		return 0;
	snprintf(what, sizeof(what), "gcp %s: launch %s as %s in %s", p->name, b->nodes[0].node,
		 b->instance_type ? b->instance_type : "?", region);
	for (i = 0; i < b->n; i++) {
		b->nodes[i].cls = PROV_OK;
		b->nodes[i].instance[0] = b->nodes[i].address[0] = b->nodes[i].error[0] = '\0';
	}
	if (!(c = client(p, &pcls, &err))) {
		fail_range(b, 0, b->n, pcls, what, err.msg);
		return 0;
	}
	names = xcalloc(b->n, sizeof(*names));
	idx = xcalloc(b->n, sizeof(*idx));
	for (i = 0; i < b->n; i++) {
		gce_vm_name(p->cluster, b->nodes[i].node, b->nodes[i].attempt, names[i]);
		idx[i] = i;
	}
	for (i = 0; i < b->n; i += GCP_CHUNK)
		launch_chunk(p, c, b, region, join, names, idx + i, b->n - i < GCP_CHUNK ? b->n - i : GCP_CHUNK, 0);
	for (i = 0; i < b->n; i++)
		if (b->nodes[i].cls == PROV_OK && b->nodes[i].instance[0])
			got++;
	free(names);
	free(idx);
	return got;
}

/* "ZONE/NAME" into zone and name; -1 when instance is not one. */
static int split_instance(const char *instance, char zone[128], char name[64])
{
	const char *slash = instance ? strchr(instance, '/') : NULL;

	if (!slash || slash == instance || (size_t)(slash - instance) >= 128 || strlen(slash + 1) >= 64 ||
	    !slash[1] || strchr(slash + 1, '/'))
		return -1;
	memcpy(zone, instance, (size_t)(slash - instance));
	zone[slash - instance] = '\0';
	strcpy(name, slash + 1);
	return 0;
}

static int gcp_terminate(struct provider *p, const char *node, const char *instance, enum prov_class *cls,
			 burst_err_t *err)
{
	struct gce_client *c;
	char zone[128], name[64], path[400], what[400], *ans = NULL;
	enum gce_class gc;

	*cls = PROV_OK;
	if (!instance || !*instance)
		return 0;
	if (split_instance(instance, zone, name) < 0) {
		*cls = PROV_PERMANENT;
		burst_err_set(err, "gcp %s: instance '%s' of %s is not ZONE/NAME", p->name, instance, node);
		return -1;
	}
	if (!(c = client(p, cls, err)))
		return -1;
	snprintf(path, sizeof(path), "zones/%s/instances/%s", zone, name);
	snprintf(what, sizeof(what), "gcp %s: delete VM %s (%s)", p->name, instance, node);
	/* the delete's operation is not waited for: the VM is STOPPING, then
	 * gone; a listing shows it stopping (not the node's any more) */
	gc = mutate(p, c, "DELETE", path, NULL, what, &ans, err);
	free(ans);
	if (gc == GCE_OK || gc == GCE_NOT_FOUND) {
		burst_err_clear(err);
		return 0;
	}
	*cls = prov_of_gce(gc);
	return -1;
}

/* GET the VM: its status into st; 1 found, 0 gone, -1 cannot tell. */
static int get_vm(struct provider *p, const char *instance, char *st, size_t len)
{
	struct gce_client *c;
	enum prov_class cls;
	burst_err_t err;
	char zone[128], name[64], path[400], *ans = NULL;
	enum gce_class gc;
	int rc = -1;

	if (!instance || split_instance(instance, zone, name) < 0)
		return 0;
	if (!(c = client(p, &cls, &err)))
		return -1;
	snprintf(path, sizeof(path), "zones/%s/instances/%s", zone, name);
	gc = gce_call(c, "GET", path, NULL, "read the VM", &ans, &err);
	if (gc == GCE_NOT_FOUND)
		rc = 0;
	else if (gc == GCE_OK) {
		struct gce_vm v;
		if (gce_vm_parse(ans, &v, &err) == 0) {
			snprintf(st, len, "%s", v.status);
			gce_vm_free(&v);
			rc = 1;
		}
	}
	free(ans);
	return rc;
}

static int gcp_exists(struct provider *p, const char *node, const char *instance)
{
	char st[64];
	int rc;

	(void)node;
	if (!instance || !*instance)
		return 0;
	rc = get_vm(p, instance, st, sizeof(st));
	if (rc == 1 && (!strcmp(st, "TERMINATED") || !strcmp(st, "STOPPING")))
		return 0;
	return rc;
}

static int gcp_ended(struct provider *p, const char *node, const char *instance)
{
	char st[64];
	int rc;

	(void)node;
	rc = get_vm(p, instance, st, sizeof(st));
	if (rc == 0)
		return 1;
	if (rc < 0)
		return -1;
	return !strcmp(st, "TERMINATED") || !strcmp(st, "STOPPED") || !strcmp(st, "SUSPENDED") ? 1 : 0;
}

static int gcp_console(struct provider *p, const char *node, const char *instance, char *buf, size_t len,
		       char *where, size_t wlen, enum prov_class *cls, burst_err_t *err)
{
	struct gce_client *c;
	char zone[128], name[64], path[400], *ans = NULL;
	enum gce_class gc;

	(void)node;
	*cls = PROV_OK;
	buf[0] = '\0';
	if (!instance || split_instance(instance, zone, name) < 0) {
		snprintf(where, wlen, "gcloud compute instances get-serial-port-output");
		return 0;
	}
	snprintf(where, wlen, "gcloud compute instances get-serial-port-output %s --zone %s", name, zone);
	if (!(c = client(p, cls, err)))
		return -1;
	snprintf(path, sizeof(path), "zones/%s/instances/%s/serialPort?port=1", zone, name);
	gc = gce_call(c, "GET", path, NULL, "read the VM's serial port", &ans, err);
	if (gc != GCE_OK) {
		free(ans);
		*cls = prov_of_gce(gc);
		return -1;
	}
	{
		json_object *root = ans ? json_tokener_parse(ans) : NULL, *x;
		const char *text = root && json_object_object_get_ex(root, "contents", &x) &&
			json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
		if (text) {
			/* the serial port is the VM's to write: its control
			 * characters are written out by the agent (provider.h) */
			size_t tn = strlen(text);
			const char *from = tn > len - 1 ? text + tn - (len - 1) : text;
			if (from != text && strchr(from, '\n'))
				from = strchr(from, '\n') + 1;
			snprintf(buf, len, "%s", from);
		}
		json_object_put(root);
	}
	free(ans);
	return 0;
}

static const char *state_of(const char *status)
{
	if (!strcmp(status, "PROVISIONING") || !strcmp(status, "STAGING"))
		return "pending";
	if (!strcmp(status, "STOPPING") || !strcmp(status, "SUSPENDING"))
		return "stopping";
	if (!strcmp(status, "TERMINATED") || !strcmp(status, "STOPPED") || !strcmp(status, "SUSPENDED"))
		return "stopped";
	return "running";
}

/* The node and attempt a VM name of this cluster says (gce_vm_name
 * reversed, checked by making it again); 0 when it says none. */
static int node_of_name(const struct provider *p, const char *vm, char *node, size_t len, int *attempt)
{
	char pre[64], again[64];
	const char *dash = strrchr(vm, '-');
	size_t pl;

	gce_vm_name(p->cluster, "", 0, pre);
	pl = strlen(pre) - 2;   /* "CLUSTER-" of "CLUSTER--0" */
	if (!dash || strncmp(vm, pre, pl) || dash <= vm + pl || strspn(dash + 1, "0123456789") != strlen(dash + 1) ||
	    !dash[1] || strlen(dash + 1) > 6 || (size_t)(dash - vm - (long)pl) >= len)
		return 0;
	memcpy(node, vm + pl, (size_t)(dash - vm) - pl);
	node[(size_t)(dash - vm) - pl] = '\0';
	*attempt = atoi(dash + 1);
	gce_vm_name(p->cluster, node, *attempt, again);
	return !strcmp(again, vm);
}

static int gcp_list(struct provider *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	struct gce_client *c;
	struct gce_vms vms = { 0 };
	enum gce_class gc;
	char f[200];

	*cls = PROV_OK;
	if (!(c = client(p, cls, err)))
		return -1;
	snprintf(f, sizeof(f), "labels.%s = %s", GCE_LABEL_CLUSTER, p->cluster_label);
	gc = list_vms(c, f, &vms, err);
	if (gc != GCE_OK) {
		char m[sizeof(err->msg)];
		*cls = prov_of_gce(gc);
		snprintf(m, sizeof(m), "gcp %.128s: %.3000s", p->name, err->msg);
		burst_err_set(err, "%s", m);
		gce_vms_free(&vms);
		return -1;
	}
	for (size_t i = 0; i < vms.n; i++) {
		const struct gce_vm *v = &vms.v[i];
		struct prov_instance *o;
		char id[200], node[64] = "";
		int attempt = 0;

		/* another provider's (the same project behind two Provider lines) */
		if (v->provider && *p->name_label && strcmp(v->provider, p->name_label))
			continue;
		if (!v->has_token && strcmp(state_of(v->status), "stopping") && strcmp(state_of(v->status), "stopped")) {
			/* made by a bulk insert whose launch did not get to set
			 * its node and join token (a crash, a failed
			 * setMetadata): no node's yet. Adopted as its name says,
			 * it would wait for a token forever; left to its launch,
			 * sent again (the same requestId, or its name in use),
			 * it gets them; no launch within OrphanGrace: an orphan */
			node[0] = '\0';
		} else if (v->node) {
			snprintf(node, sizeof(node), "%s", v->node);
			attempt = v->attempt ? atoi(v->attempt) : 0;
		} else if (!node_of_name(p, v->name, node, sizeof(node), &attempt)) {
			node[0] = '\0';
			attempt = 0;
		}
		snprintf(id, sizeof(id), "%s/%s", v->zone ? v->zone : "", v->name);
		o = prov_list_add(out, id, p->cluster, node, state_of(v->status));
		o->attempt = attempt;
		o->launched = (double)gce_parse_time(v->created);
	}
	gce_vms_free(&vms);
	return 0;
}

static void gcp_fini(struct provider *p)
{
	if (!p)
		return;
	gce_client_free(p->c);
	gce_auth_free(p->auth);
	free(p->name);
	free(p->cluster);
	free(p->cluster_label);
	free(p->name_label);
	free(p->credentials);
	free(p->endpoint);
	free(p->ca_file);
	free(p->project);
	free(p->image);
	free(p->template);
	free(p->network);
	free(p->subnetwork);
	free(p->service_account);
	free(p->disk_type);
	free(p->join_address);
	free_list(p->zones, p->nzones);
	free_list(p->tags, p->ntags);
	free_list(p->regions, p->nregions);
	free(p);
}

/* The driver's requests and tokens (the CLI test driver, bench). */
void gcp_provider_stats(const struct provider *p, unsigned *api_calls, unsigned *tokens)
{
	*api_calls = p && p->c ? gce_client_calls(p->c) : 0;
	*tokens = p && p->auth ? gce_auth_tokens(p->auth) : 0;
}

unsigned gcp_provider_write_waits(const struct provider *p)
{
	return p ? p->write_waits : 0;
}

const struct provider_ops provider_gcp = {
	.type = "gcp",
	.init = gcp_init,
	.launch = gcp_launch,
	.terminate = gcp_terminate,
	.exists = gcp_exists,
	.list = gcp_list,
	.console = gcp_console,
	.ended = gcp_ended,
	.fini = gcp_fini,
};

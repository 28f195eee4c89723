/*
 * openstack.c - the openstack provider: Nova servers through the compute
 * API, authenticated by Keystone v3 (lib/cloud/openstack_api.h).
 *
 * A launch batch (n nodes of one node set as one flavor in one region) is
 * one POST /servers per node: name CLUSTER-NODE, the flavor and image (by
 * name or id), Networks=, KeyName=, AvailabilityZone=, SchedulerHints=, the
 * node's user data (a shell script for cloud-init that runs burst-node join
 * and then slurmd) and metadata burst:cluster, burst:provider,
 * burst:nodeset, burst:node, burst:attempt and burst:batch. Nova has no client token, so every launch
 * first lists the cluster's servers (one paged GET /servers/detail filtered
 * by name) and adopts the server a node already has for this attempt: a
 * crash between the POST and the agent recording its answer adopts instead
 * of launching twice.
 *
 * Then the launch waits (BuildWait=, default 30 s, one listing a second)
 * for its servers to leave BUILD, and takes each server's first fixed IPv4
 * address as the node's Slurm NodeAddr (fixed_address); a server that goes ERROR is a failed
 * launch with Nova's fault message ("No valid host was found" is
 * PROV_CAPACITY, so the agent moves to the next candidate; others
 * PROV_PERMANENT) and is deleted at once (it holds quota). A server still
 * building when the wait ends is launched; the agent's boot timeout covers
 * it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/evp.h>

#include "../provider.h"
#include "openstack_api.h"
#include "region_cache.h"
#include "sha256.h"
#include "strutil.h"

struct region_client {
	const char *region;      /* "" for the credentials' own (the cache's copy) */
	struct os_client *c;
	char **flavor_names, **flavor_ids;
	size_t nflavors;
	bool flavors_known;
	char *image_id;          /* Image= resolved */
};

struct provider {
	char *name, *cluster;
	char *credentials, *cloud, *endpoint, *ca_file, *interface, *microversion, *compute_endpoint;
	char *image, *key_name, *az, *join_address;
	char **networks, **hints;
	size_t nnetworks, nhints;
	char **regions;
	size_t nregions;
	int build_wait;
	bool allow_http;
	struct region_cache rc;  /* struct region_client per region */
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static char **dup_list(char **v, size_t n)
{
	char **o = xcalloc(n + 1, sizeof(char *));
	size_t i;

	for (i = 0; i < n; i++)
		o[i] = xstrdup(v[i]);
	return o;
}

static void free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static enum prov_class prov_of_os(enum os_class c)
{
	switch (c) {
	case OS_OK: return PROV_OK;
	case OS_CAPACITY: return PROV_CAPACITY;
	case OS_QUOTA: return PROV_QUOTA;
	case OS_THROTTLED: return PROV_THROTTLED;
	case OS_TRANSIENT: return PROV_TRANSIENT;
	case OS_PERMANENT: return PROV_PERMANENT;
	case OS_AUTH: return PROV_AUTH;
	case OS_NOT_FOUND: return PROV_PERMANENT;
	}
	return PROV_TRANSIENT;
}

static struct provider *os_init(const struct cfg_provider *cfg, const struct burst_config *all,
				burst_err_t *err)
{
	struct provider *p;

	if (!cfg->image_id) {
		burst_err_set(err, "%s:%d: Provider=%s (openstack) needs Image=NAME|ID", cfg->where.file,
			      cfg->where.line, cfg->name);
		return NULL;
	}
	if (!cfg->credentials) {
		burst_err_set(err, "%s:%d: Provider=%s (openstack) needs CredentialsFile= (an openrc-style file, mode 0600)",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->name = xstrdup(cfg->name);
	p->cluster = xstrdup(all->cluster_name);
	p->credentials = xstrdup(cfg->credentials);
	p->cloud = dup_or_null(cfg->cloud);
	p->endpoint = dup_or_null(cfg->endpoint);
	p->ca_file = dup_or_null(cfg->ca_file);
	p->interface = dup_or_null(cfg->interface);
	p->microversion = dup_or_null(cfg->microversion);
	p->compute_endpoint = dup_or_null(cfg->compute_endpoint);
	p->image = xstrdup(cfg->image_id);
	p->key_name = dup_or_null(cfg->key_name);
	p->az = dup_or_null(cfg->availability_zone);
	p->join_address = dup_or_null(cfg->join_address);
	p->networks = dup_list(cfg->networks, cfg->nnetworks);
	p->nnetworks = cfg->nnetworks;
	p->hints = dup_list(cfg->scheduler_hints, cfg->nscheduler_hints);
	p->nhints = cfg->nscheduler_hints;
	p->regions = dup_list(cfg->regions, cfg->nregions);
	p->nregions = cfg->nregions;
	p->build_wait = cfg->build_wait >= 0 ? cfg->build_wait : 30;
	p->allow_http = all->allow_insecure_endpoint;
	return p;
}

/* The region's client ("": the credentials file's), made on first use (the
 * credentials file is read then, so that a fixed file needs no restart);
 * NULL with err and *cls. */
static struct region_client *client_for(struct provider *p, const char *region, enum prov_class *cls,
					burst_err_t *err)
{
	struct region_client *r;
	struct os_client *c;

	if (!region)
		region = p->nregions ? p->regions[0] : "";
	if ((r = region_cache_get(&p->rc, region)))
		return r;
	{
		/* the provider's own copies of its settings (burst.conf may be reloaded) */
		struct cfg_provider cp;
		memset(&cp, 0, sizeof(cp));
		cp.name = p->name;
		cp.credentials = p->credentials;
		cp.cloud = p->cloud;
		cp.endpoint = p->endpoint;
		cp.interface = p->interface;
		cp.compute_endpoint = p->compute_endpoint;
		cp.ca_file = p->ca_file;
		cp.microversion = p->microversion;
		c = os_client_for_provider(&cp, region, p->allow_http, NULL, err);
	}
	if (!c) {
		*cls = PROV_AUTH;
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->c = c;
	region_cache_put(&p->rc, region, r);
	r->region = p->rc.regions[p->rc.n - 1];
	return r;
}

/* the i-th region's client, for calls that try every region */
static struct os_client *client_at(const struct provider *p, size_t i)
{
	return ((const struct region_client *)p->rc.clients[i])->c;
}

static json_object *jparse(const char *s)
{
	return s ? json_tokener_parse(s) : NULL;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool looks_like_uuid(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	return true;
}

/* The flavor id of type (a flavor's name or id); NULL with err and *cls. */
static const char *flavor_id(struct region_client *r, const char *type, enum os_class *cls, burst_err_t *err)
{
	size_t i;

	if (!r->flavors_known) {
		json_object *root, *fl;
		char *ans = NULL;
		long st;

		*cls = os_compute(r->c, "GET", "/flavors?is_public=None", NULL, "list flavors", &st, &ans, err);
		if (*cls != OS_OK) {
			free(ans);
			return NULL;
		}
		root = jparse(ans);
		free(ans);
		if (!root || !json_object_object_get_ex(root, "flavors", &fl)) {
			json_object_put(root);
			*cls = OS_TRANSIENT;
			burst_err_set(err, "list flavors: the answer has no flavors");
			return NULL;
		}
		for (i = 0; i < json_object_array_length(fl); i++) {
			json_object *f = json_object_array_get_idx(fl, i);
			if (!jstr(f, "id") || !jstr(f, "name"))
				continue;
			r->flavor_names = xrealloc(r->flavor_names, (r->nflavors + 1) * sizeof(char *));
			r->flavor_ids = xrealloc(r->flavor_ids, (r->nflavors + 1) * sizeof(char *));
			r->flavor_names[r->nflavors] = xstrdup(jstr(f, "name"));
			r->flavor_ids[r->nflavors] = xstrdup(jstr(f, "id"));
			r->nflavors++;
		}
		json_object_put(root);
		r->flavors_known = true;
	}
	for (i = 0; i < r->nflavors; i++)
		if (!strcmp(r->flavor_ids[i], type))
			return r->flavor_ids[i];
	for (i = 0; i < r->nflavors; i++)
		if (!strcmp(r->flavor_names[i], type))
			return r->flavor_ids[i];
	*cls = OS_PERMANENT;
	burst_err_set(err, "no flavor named %s (or with that id) is visible to the project%s%s: "
		      "burst.conf's InstanceTypes= or the catalog name one it does not have "
		      "(burstctl catalog refresh --provider lists them)",
		      type, *r->region ? " in region " : "", r->region);
	return NULL;
}

/* The image id of Image=: an id as it is, a name through Glance (exactly one active image). */
static const char *image_id(struct provider *p, struct region_client *r, enum os_class *cls, burst_err_t *err)
{
	json_object *root, *imgs;
	char *ans = NULL, *esc, path[1024];
	const char *found = NULL;
	size_t i, n = 0;

	if (r->image_id)
		return r->image_id;
	if (looks_like_uuid(p->image))
		return r->image_id = xstrdup(p->image);
	esc = curl_easy_escape(NULL, p->image, 0);
	snprintf(path, sizeof(path), "/v2/images?name=%s&status=active", esc ? esc : "");
	curl_free(esc);
	*cls = os_image_get(r->c, path, "find the image named by Image=", &ans, err);
	if (*cls != OS_OK) {
		free(ans);
		return NULL;
	}
	root = jparse(ans);
	free(ans);
	if (root && json_object_object_get_ex(root, "images", &imgs))
		for (i = 0; i < json_object_array_length(imgs); i++) {
			json_object *im = json_object_array_get_idx(imgs, i);
			const char *name = jstr(im, "name"), *id = jstr(im, "id");
			if (name && id && !strcmp(name, p->image)) {
				n++;
				found = id;
			}
		}
	if (n != 1) {
		*cls = OS_PERMANENT;
		burst_err_set(err, "Image=%s: %s image of that name: give its id instead", p->image,
			      n ? "more than one" : "no active");
	} else
		r->image_id = xstrdup(found);
	json_object_put(root);
	return r->image_id;
}

/*
 * The user data of node pn: a shell script for cloud-init. BURST_INSTANCE_ID
 * (instead of asking the metadata service), BURST_NODE_BIN,
 * BURST_STATE_DIR, BURST_MUNGE_SOCKET and SLURMD_CONF may be set by whoever
 * runs it (an image's own wrapper, the tests).
 */
static void user_data(const struct provider *p, const struct prov_batch *b, const char *join,
		      const struct prov_node *pn, const char *region, struct strbuf *s)
{
	ud_head(s, "server", join, b->provider ? b->provider : p->name, b->instance_type ? b->instance_type : "",
		region, b->acceptance ? b->acceptance : "");
	sb_add(s, "\nNODE=");
	ud_sh_quote(s, pn->node);
	sb_add(s, "\nTOKEN=");
	ud_sh_quote(s, pn->token ? pn->token : "");
	sb_add(s, "\n"
		"if [ -z \"${BURST_INSTANCE_ID:-}\" ]; then\n"
		"\tBURST_INSTANCE_ID=$(curl -fsS --retry 5 http://169.254.169.254/openstack/latest/meta_data.json |\n"
		"\t\tsed -n 's/.*\"uuid\": *\"\\([^\"]*\\)\".*/\\1/p') || exit 1\n"
		"\t[ -n \"$BURST_INSTANCE_ID\" ] || { echo 'burst: no uuid from the metadata service' >&2; exit 1; }\n"
		"fi\n");
	ud_join_tail(s);
}

static char *base64(const char *s, size_t len)
{
	char *out = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)len);
	return out;
}

/* "burst-" + the first 40 hex digits of sha256(cluster, node set, (name, attempt)...). */
static void batch_token(const struct prov_batch *b, char out[47])
{
	struct sha256 h;
	unsigned char d[32];
	struct strbuf s;
	size_t i;

	sb_init(&s);
	sb_addf(&s, "%s\n%s\n", b->cluster ? b->cluster : "", b->nodeset ? b->nodeset : "");
	for (i = 0; i < b->n; i++)
		sb_addf(&s, "%s:%d\n", b->nodes[i].node, b->nodes[i].attempt);
	sha256_init(&h);
	sha256_update(&h, s.s, s.len);
	sha256_final(&h, d);
	sb_free(&s);
	memcpy(out, "burst-", 6);
	for (i = 0; i < 20; i++)
		snprintf(out + 6 + 2 * i, 3, "%02x", d[i]);
}

/* A server as listed. */
struct srv {
	char *id, *node, *cluster, *status, *fault, *created;
	char *addr;   /* its first fixed IPv4 address, NULL while it has none */
	int attempt;
};

static void srvs_free(struct srv *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].node);
		free(v[i].cluster);
		free(v[i].status);
		free(v[i].fault);
		free(v[i].created);
		free(v[i].addr);
	}
	free(v);
}

/*
 * A server's address for Slurm (its NodeAddr): the first fixed IPv4 address
 * of its "addresses" (networks in the order of Networks=, as Nova lists
 * them), not a floating one: slurmctld reaches the instances through the
 * site's route into the tenant network. NULL when Nova has none yet (its
 * port not bound).
 */
static char *fixed_address(json_object *s)
{
	json_object *addrs;

	if (!json_object_object_get_ex(s, "addresses", &addrs) || !json_object_is_type(addrs, json_type_object))
		return NULL;
	json_object_object_foreach(addrs, net, list)
	{
		size_t i, n;

		(void)net;
		if (!json_object_is_type(list, json_type_array))
			continue;
		n = json_object_array_length(list);
		for (i = 0; i < n; i++) {
			json_object *a = json_object_array_get_idx(list, i), *ver = NULL;
			const char *ip = jstr(a, "addr"), *type = jstr(a, "OS-EXT-IPS:type");

			if (!ip || (type && strcmp(type, "fixed")))
				continue;
			if (json_object_object_get_ex(a, "version", &ver) && json_object_get_int(ver) != 4)
				continue;
			if (strlen(ip) >= 16 || strspn(ip, "0123456789.") != strlen(ip))
				continue;   /* not an IPv4 address as Nova writes one */
			return xstrdup(ip);
		}
	}
	return NULL;
}

/*
 * The project's servers whose name starts with CLUSTER- and whose
 * burst:cluster metadata is this cluster, following the pages. Returns the
 * class; *out and *n are filled on OS_OK.
 */
static enum os_class list_cluster(struct provider *p, struct region_client *r, struct srv **out, size_t *n,
				  burst_err_t *err)
{
	struct strbuf re;
	char *esc, *marker = NULL;
	const char *q;
	enum os_class cls = OS_OK;

	*out = NULL;
	*n = 0;
	sb_init(&re);
	sb_add(&re, "^");
	for (q = p->cluster; *q; q++)
		sb_addf(&re, "%s%c", strchr(".^$*+?()[]{}|\\", *q) ? "\\" : "", *q);
	sb_add(&re, "-");
	esc = curl_easy_escape(NULL, re.s, 0);
	sb_free(&re);
	for (;;) {
		char path[1024], *ans = NULL;
		json_object *root, *servers;
		size_t i, got;
		long st;

		snprintf(path, sizeof(path), "/servers/detail?name=%s&limit=500%s%s", esc ? esc : "",
			 marker ? "&marker=" : "", marker ? marker : "");
		cls = os_compute(r->c, "GET", path, NULL, "list the cluster's servers", &st, &ans, err);
		if (cls != OS_OK) {
			free(ans);
			break;
		}
		root = jparse(ans);
		free(ans);
		if (!root || !json_object_object_get_ex(root, "servers", &servers)) {
			json_object_put(root);
			cls = OS_TRANSIENT;
			burst_err_set(err, "list the cluster's servers: the answer has no servers");
			break;
		}
		got = json_object_array_length(servers);
		for (i = 0; i < got; i++) {
			json_object *s = json_object_array_get_idx(servers, i), *md = NULL, *fault = NULL;
			const char *cl, *id = jstr(s, "id");
			struct srv *v;

			if (!id)
				continue;
			free(marker);
			marker = xstrdup(id);
			json_object_object_get_ex(s, "metadata", &md);
			cl = jstr(md, "burst:cluster");
			if (!cl || strcmp(cl, p->cluster))
				continue;
			/* another provider's (the same project behind two Provider lines) */
			if (jstr(md, "burst:provider") && strcmp(jstr(md, "burst:provider"), p->name))
				continue;
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			v = &(*out)[(*n)++];
			memset(v, 0, sizeof(*v));
			v->id = xstrdup(id);
			v->cluster = xstrdup(cl);
			v->node = dup_or_null(jstr(md, "burst:node"));
			v->attempt = jstr(md, "burst:attempt") ? atoi(jstr(md, "burst:attempt")) : 0;
			v->status = xstrdup(jstr(s, "status") ? jstr(s, "status") : "");
			v->created = dup_or_null(jstr(s, "created"));
			v->addr = fixed_address(s);
			if (json_object_object_get_ex(s, "fault", &fault) && jstr(fault, "message"))
				v->fault = os_cloud_text(jstr(fault, "message"));
		}
		json_object_put(root);
		if (got < 500)
			break;
	}
	free(marker);
	curl_free(esc);
	if (cls != OS_OK) {
		srvs_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return cls;
}

static const struct srv *find_srv(const struct srv *v, size_t n, const char *node, int attempt)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].node && !strcmp(v[i].node, node) && v[i].attempt == attempt &&
		    strcmp(v[i].status, "DELETED") && strcmp(v[i].status, "SOFT_DELETED"))
			return &v[i];
	return NULL;
}

static void set_error(struct prov_node *pn, enum prov_class cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_error(struct prov_node *pn, enum prov_class cls, const char *fmt, ...)
{
	va_list ap;

	pn->cls = cls;
	va_start(ap, fmt);
	vsnprintf(pn->error, sizeof(pn->error), fmt, ap);
	va_end(ap);
}

static void fail_all(struct prov_batch *b, enum prov_class cls, const char *what, const char *msg)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		b->nodes[i].instance[0] = '\0';
		set_error(&b->nodes[i], cls, "%s: %s", what, msg);
	}
}

/* The body of POST /servers for node pn. */
static char *server_body(const struct provider *p, const struct prov_batch *b, const struct prov_node *pn,
			 const char *region, const char *join, const char *flavor, const char *image,
			 const char *batch)
{
	json_object *root = json_object_new_object(), *s = json_object_new_object(),
		    *md = json_object_new_object();
	struct strbuf ud, name;
	char att[32], *u64, *out;
	size_t i;

	json_object_object_add(root, "server", s);
	sb_init(&name);
	sb_addf(&name, "%s-%s", p->cluster, pn->node);
	json_object_object_add(s, "name", json_object_new_string(name.s));
	sb_free(&name);
	json_object_object_add(s, "flavorRef", json_object_new_string(flavor));
	json_object_object_add(s, "imageRef", json_object_new_string(image));
	sb_init(&ud);
	user_data(p, b, join, pn, region, &ud);
	u64 = base64(ud.s, ud.len);
	sb_free(&ud);
	json_object_object_add(s, "user_data", json_object_new_string(u64));
	free(u64);
	json_object_object_add(md, "burst:cluster", json_object_new_string(p->cluster));
	json_object_object_add(md, "burst:provider", json_object_new_string(p->name));
	json_object_object_add(md, "burst:nodeset", json_object_new_string(b->nodeset ? b->nodeset : ""));
	json_object_object_add(md, "burst:node", json_object_new_string(pn->node));
	snprintf(att, sizeof(att), "%d", pn->attempt);
	json_object_object_add(md, "burst:attempt", json_object_new_string(att));
	json_object_object_add(md, "burst:batch", json_object_new_string(batch));
	json_object_object_add(s, "metadata", md);
	if (p->nnetworks == 1 && (!strcmp(p->networks[0], "auto") || !strcmp(p->networks[0], "none")))
		json_object_object_add(s, "networks", json_object_new_string(p->networks[0]));
	else if (p->nnetworks) {
		json_object *nets = json_object_new_array();
		for (i = 0; i < p->nnetworks; i++) {
			json_object *n = json_object_new_object();
			json_object_object_add(n, "uuid", json_object_new_string(p->networks[i]));
			json_object_array_add(nets, n);
		}
		json_object_object_add(s, "networks", nets);
	} else
		json_object_object_add(s, "networks", json_object_new_string("auto"));
	if (p->key_name)
		json_object_object_add(s, "key_name", json_object_new_string(p->key_name));
	if (p->az)
		json_object_object_add(s, "availability_zone", json_object_new_string(p->az));
	if (p->nhints) {
		json_object *h = json_object_new_object();
		for (i = 0; i < p->nhints; i++) {
			char *k = xstrdup(p->hints[i]), *colon = strchr(k, ':');
			if (colon) {
				*colon = '\0';
				json_object_object_add(h, k, json_object_new_string(colon + 1));
			}
			free(k);
		}
		json_object_object_add(root, "os:scheduler_hints", h);
	}
	out = xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
	json_object_put(root);
	return out;
}

static void delete_server(struct region_client *r, const char *id)
{
	char path[256], *ans = NULL;
	burst_err_t err;
	long st;

	snprintf(path, sizeof(path), "/servers/%s", id);
	os_compute(r->c, "DELETE", path, NULL, "delete server", &st, &ans, &err);
	free(ans);
}

/* The fault message of server id (Nova shows it in the server, not in listings), or NULL. */
static char *server_fault(struct region_client *r, const char *id)
{
	char path[256], *ans = NULL, *msg = NULL;
	json_object *root, *s, *f;
	burst_err_t err;
	long st;

	snprintf(path, sizeof(path), "/servers/%s", id);
	if (os_compute(r->c, "GET", path, NULL, "show server", &st, &ans, &err) == OS_OK &&
	    (root = jparse(ans))) {
		if (json_object_object_get_ex(root, "server", &s) && json_object_object_get_ex(s, "fault", &f) &&
		    jstr(f, "message"))
			msg = os_cloud_text(jstr(f, "message"));
		json_object_put(root);
	}
	free(ans);
	return msg;
}

/* Wait for the servers of the nodes in want[] to leave BUILD (BuildWait=). */
static void await_build(struct provider *p, struct region_client *r, struct prov_batch *b, const char *want)
{
	time_t end = time(NULL) + p->build_wait;
	size_t i, pending;

	for (;;) {
		struct srv *v = NULL;
		size_t n = 0;
		burst_err_t err;

		pending = 0;
		if (list_cluster(p, r, &v, &n, &err) != OS_OK)
			return;   /* cannot tell now: the servers are launched; the boot timeout covers them */
		for (i = 0; i < b->n; i++) {
			struct prov_node *pn = &b->nodes[i];
			const struct srv *s;
			size_t k;

			if (!want[i] || pn->cls != PROV_OK)
				continue;
			s = NULL;
			for (k = 0; k < n; k++)
				if (!strcmp(v[k].id, pn->instance))
					s = &v[k];
			if (s && s->addr)   /* Slurm's NodeAddr: often known while it builds */
				snprintf(pn->address, sizeof(pn->address), "%s", s->addr);
			if (!s || !strcmp(s->status, "BUILD")) {
				pending++;
				continue;
			}
			if (!strcmp(s->status, "ERROR")) {
				char *fault = s->fault ? xstrdup(s->fault) : server_fault(r, s->id);
				enum os_class c = os_classify(0, fault);
				set_error(pn, c == OS_CAPACITY ? PROV_CAPACITY : PROV_PERMANENT,
					  "openstack server %s (%s-%s, flavor %s) went ERROR: %s", s->id, p->cluster,
					  pn->node, b->instance_type ? b->instance_type : "?",
					  fault ? fault : "(Nova gave no fault)");
				free(fault);
				delete_server(r, s->id);
				pn->instance[0] = '\0';
				pn->address[0] = '\0';
			}
		}
		srvs_free(v, n);
		if (!pending || time(NULL) >= end)
			return;
		sleep(1);
	}
}

static size_t os_launch(struct provider *p, struct prov_batch *b)
{
	enum prov_class pcls = PROV_OK;
	enum os_class cls;
	struct region_client *r;
	burst_err_t err;
	const char *region = b->region ? b->region : p->nregions ? p->regions[0] : NULL;
	const char *join = p->join_address ? p->join_address : b->join_addr;
	const char *flavor, *image;
	struct srv *v = NULL;
	size_t n = 0, i, got = 0;
	char what[512], batch[47], *want;
	bool stop = false;

	if (!b->n)
		return 0;
	snprintf(what, sizeof(what), "openstack %s: launch %s as %s%s%s", p->name, b->nodes[0].node,
		 b->instance_type ? b->instance_type : "?", region ? " in " : "", region ? region : "");
	r = client_for(p, region, &pcls, &err);
	if (!r) {
		fail_all(b, pcls, what, err.msg);
		return 0;
	}
	if (!(flavor = flavor_id(r, b->instance_type ? b->instance_type : "", &cls, &err)) ||
	    !(image = image_id(p, r, &cls, &err))) {
		fail_all(b, prov_of_os(cls), what, err.msg);
		return 0;
	}
	/* the servers this cluster has: adopt the ones of these (node, attempt)s */
	cls = list_cluster(p, r, &v, &n, &err);
	if (cls != OS_OK) {
		fail_all(b, prov_of_os(cls), what, err.msg);
		return 0;
	}
	batch_token(b, batch);
	want = xcalloc(b->n, 1);
	for (i = 0; i < b->n; i++) {
		struct prov_node *pn = &b->nodes[i];
		const struct srv *s = find_srv(v, n, pn->node, pn->attempt);
		char *body, *ans = NULL;
		long st;

		pn->instance[0] = '\0';
		pn->address[0] = '\0';
		pn->error[0] = '\0';
		if (s) {
			snprintf(pn->instance, sizeof(pn->instance), "%s", s->id);
			snprintf(pn->address, sizeof(pn->address), "%s", s->addr ? s->addr : "");
			pn->cls = PROV_OK;
			snprintf(pn->error, sizeof(pn->error),
				 "server %s adopted: launched earlier (attempt %d, status %s), the answer was not recorded",
				 s->id, pn->attempt, s->status);
			want[i] = 1;
			got++;
			continue;
		}
		if (stop) {
			set_error(pn, pcls, "%s: not tried after the error of an earlier node: %s", what, err.msg);
			continue;
		}
		body = server_body(p, b, pn, region ? region : "", join, flavor, image, batch);
		snprintf(what, sizeof(what), "openstack %s: create server %s-%s (%s%s%s)", p->name, p->cluster,
			 pn->node, b->instance_type ? b->instance_type : "?", region ? " in " : "", region ? region : "");
		cls = os_compute(r->c, "POST", "/servers", body, what, &st, &ans, &err);
		free(body);
		if (cls == OS_OK) {
			json_object *root = jparse(ans), *s2;
			const char *id = NULL;
			if (root && json_object_object_get_ex(root, "server", &s2))
				id = jstr(s2, "id");
			if (id) {
				snprintf(pn->instance, sizeof(pn->instance), "%s", id);
				pn->cls = PROV_OK;
				want[i] = 1;
				got++;
			} else
				set_error(pn, PROV_TRANSIENT, "%s: HTTP %ld without a server id", what, st);
			json_object_put(root);
		} else {
			pcls = prov_of_os(cls);
			set_error(pn, pcls, "%s", err.msg);
			/* the same answer for the others: do not ask again */
			stop = cls == OS_AUTH || cls == OS_THROTTLED || cls == OS_QUOTA;
		}
		free(ans);
	}
	srvs_free(v, n);
	if (got && p->build_wait > 0)
		await_build(p, r, b, want);
	free(want);
	for (i = 0, got = 0; i < b->n; i++)
		if (b->nodes[i].cls == PROV_OK)
			got++;
	return got;
}

/* Every configured region's client (at least one). */
static int all_clients(struct provider *p, enum prov_class *cls, burst_err_t *err)
{
	size_t i;

	for (i = 0; i < p->nregions; i++)
		if (!client_for(p, p->regions[i], cls, err))
			return -1;
	if (!p->rc.n && !client_for(p, NULL, cls, err))
		return -1;
	return 0;
}

static int os_terminate(struct provider *p, const char *node, const char *instance,
			enum prov_class *cls, burst_err_t *err)
{
	enum os_class c = OS_NOT_FOUND;
	size_t i;

	*cls = PROV_OK;
	if (!instance || !*instance)
		return 0;
	if (all_clients(p, cls, err) < 0)
		return -1;
	for (i = 0; i < p->rc.n; i++) {
		char path[256], what[400], *ans = NULL;
		long st;

		snprintf(path, sizeof(path), "/servers/%s", instance);
		snprintf(what, sizeof(what), "openstack %s: delete server %s (%s)", p->name, instance, node);
		c = os_compute(client_at(p, i), "DELETE", path, NULL, what, &st, &ans, err);
		free(ans);
		if (c != OS_NOT_FOUND)
			break;
	}
	if (c == OS_OK || c == OS_NOT_FOUND) {
		burst_err_clear(err);
		return 0;
	}
	*cls = prov_of_os(c);
	return -1;
}

static int os_exists(struct provider *p, const char *node, const char *instance)
{
	enum prov_class cls;
	burst_err_t err;
	int res = 0;
	size_t i;

	(void)node;
	if (!instance || !*instance)
		return 0;
	if (all_clients(p, &cls, &err) < 0)
		return -1;
	for (i = 0; i < p->rc.n; i++) {
		char path[256], *ans = NULL;
		long st;
		enum os_class c;

		snprintf(path, sizeof(path), "/servers/%s", instance);
		c = os_compute(client_at(p, i), "GET", path, NULL, "show server", &st, &ans, &err);
		if (c == OS_OK) {
			json_object *root = jparse(ans), *s;
			const char *status = root && json_object_object_get_ex(root, "server", &s) ? jstr(s, "status") : NULL;
			res = status && strcmp(status, "DELETED") && strcmp(status, "SOFT_DELETED") ? 1 : 0;
			json_object_put(root);
			free(ans);
			return res;
		}
		free(ans);
		if (c != OS_NOT_FOUND)
			res = -1;
	}
	return res;
}

static const char *state_of(const char *status)
{
	if (!strcmp(status, "BUILD"))
		return "pending";
	if (!strcmp(status, "SHUTOFF") || !strcmp(status, "STOPPED") || !strcmp(status, "SUSPENDED") ||
	    !strcmp(status, "PAUSED") || !strcmp(status, "SHELVED") || !strcmp(status, "SHELVED_OFFLOADED") ||
	    !strcmp(status, "ERROR"))
		return "stopped";
	return "running";
}

static int os_list(struct provider *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	size_t r, i;

	*cls = PROV_OK;
	if (all_clients(p, cls, err) < 0)
		return -1;
	for (r = 0; r < p->rc.n; r++) {
		struct srv *v = NULL;
		size_t n = 0;
		enum os_class c = list_cluster(p, p->rc.clients[r], &v, &n, err);

		if (c != OS_OK) {
			char m[sizeof(err->msg)];
			*cls = prov_of_os(c);
			snprintf(m, sizeof(m), "openstack %.128s%s%.64s: %.3000s", p->name,
				 *p->rc.regions[r] ? " in " : "", p->rc.regions[r], err->msg);
			burst_err_set(err, "%s", m);
			return -1;
		}
		for (i = 0; i < n; i++) {
			struct prov_instance *o;

			if (!strcmp(v[i].status, "DELETED") || !strcmp(v[i].status, "SOFT_DELETED"))
				continue;
			o = prov_list_add(out, v[i].id, v[i].cluster, v[i].node, state_of(v[i].status));
			o->attempt = v[i].attempt;
			o->launched = (double)os_parse_time(v[i].created);
		}
		srvs_free(v, n);
	}
	return 0;
}

static void free_region_client(void *v)
{
	struct region_client *r = v;

	os_client_free(r->c);
	free_list(r->flavor_names, r->nflavors);
	free_list(r->flavor_ids, r->nflavors);
	free(r->image_id);
	free(r);
}

static void os_fini(struct provider *p)
{
	if (!p)
		return;
	region_cache_free(&p->rc, free_region_client);
	free(p->name);
	free(p->cluster);
	free(p->credentials);
	free(p->cloud);
	free(p->endpoint);
	free(p->ca_file);
	free(p->interface);
	free(p->microversion);
	free(p->compute_endpoint);
	free(p->image);
	free(p->key_name);
	free(p->az);
	free(p->join_address);
	free_list(p->networks, p->nnetworks);
	free_list(p->hints, p->nhints);
	free_list(p->regions, p->nregions);
	free(p);
}

/* The client's counters of the provider's clients, for the CLI test driver and bench. */
void openstack_provider_stats(const struct provider *p, unsigned *api_calls, unsigned *tokens)
{
	size_t i;

	*api_calls = *tokens = 0;
	for (i = 0; p && i < p->rc.n; i++) {
		struct os_stats s = os_client_stats(client_at(p, i));
		*api_calls += s.api_calls;
		*tokens += s.tokens;
	}
}

const struct provider_ops provider_openstack = {
	.type = "openstack",
	.init = os_init,
	.launch = os_launch,
	.terminate = os_terminate,
	.exists = os_exists,
	.list = os_list,
	.fini = os_fini,
};

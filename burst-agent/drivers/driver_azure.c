/*
 * driver_azure.c - the azure provider: virtual machines of the compute
 * resource provider through Azure Resource Manager (lib/cloud/arm.h), with
 * Entra ID tokens (lib/cloud/azure_auth.h).
 *
 * A VM's name is the launch's identity: CLUSTER-NODE-aATTEMPT, with zN
 * after it when Zones= are given (e.g. c1-gpu-3-a2z1). ARM's PUT of a VM is
 * idempotent by name, so the name is the launch intent: it is known before
 * the PUT and follows from what the agent has stored (node, attempt), and a
 * PUT sent again after a crash (or a lost answer) makes no second VM: the
 * name is the launch journal, and the driver keeps no other. A launch first
 * lists the resource group and adopts the VM a node already has for this
 * attempt (tags burst-cluster, burst-node, burst-attempt), so that a crash
 * after the PUT adopts instead of trying the next zone; a VM the listing
 * does not show yet (ARM's listings may lag a create) gets its PUT again,
 * answered with that same VM (crash points azure.put.sent, azure.op.done:
 * doc/crash_points.md).
 *
 * Each node is one PUT that makes the VM with its OS disk and its network
 * interface (both deleted with the VM), the node's join script as
 * customData (cloud-init runs it) and the tags above plus burst-provider and
 * burst-nodeset; listings keep the VMs of this cluster that carry no
 * burst-provider or this provider's (another Provider= may share the
 * resource group: its VMs are no orphans of this one). With Zones=, a node goes to the first zone, and a capacity
 * answer (SkuNotAvailable at once, or ZonalAllocationFailed from its
 * operation) sends it to the next zone within the same launch; when every
 * zone is out of capacity the node's class is PROV_CAPACITY and the agent
 * tries the node set's next candidate (another size, region or cloud) in the
 * same resume cycle. A quota answer (OperationNotAllowed about a quota,
 * QuotaExceeded) is PROV_QUOTA for the node and every node after it (the
 * agent cools the candidate down; waiting never fixes a quota of zero).
 *
 * The PUTs' operations are then polled together (each after its own
 * Retry-After, through the operation-status bucket) for BuildWait= seconds
 * (default 60); a VM that Succeeded gets its NIC's private address as the
 * node's NodeAddr; one still creating when the wait ends is launched (the
 * agent's boot timeout covers it); a failed create is deleted at once (it
 * holds quota). All of it runs on the agent's provider worker, never on its
 * loop; the client waits for ARM's and the compute resource provider's
 * token buckets before each request (arm.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../crash.h"
#include "../provider.h"
#include "arm.h"
#include "azure_auth.h"
#include "azure_vm.h"
#include "strutil.h"

struct provider {
	char *name, *cluster;
	char *credentials, *endpoint, *imds, *ca_file;
	char *subscription, *rg, *image, *subnet, *admin_user, *ssh_key_file, *os_disk, *join_address;
	char **zones;
	size_t nzones;
	char **regions;
	size_t nregions;
	bool spot, allow_http;
	double max_price;
	int build_wait;
	struct arm_client *c;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static enum prov_class prov_of(enum az_class c)
{
	switch (c) {
	case AZ_OK: return PROV_OK;
	case AZ_CAPACITY: return PROV_CAPACITY;
	case AZ_QUOTA: return PROV_QUOTA;
	case AZ_THROTTLED: return PROV_THROTTLED;
	case AZ_TRANSIENT: return PROV_TRANSIENT;
	case AZ_PERMANENT: return PROV_PERMANENT;
	case AZ_AUTH: return PROV_AUTH;
	case AZ_NOT_FOUND: return PROV_PERMANENT;
	}
	return PROV_TRANSIENT;
}

static struct provider *az_init(const struct cfg_provider *cfg, const struct burst_config *all, burst_err_t *err)
{
	struct provider *p;
	const char *why;
	size_t i;

	if (!cfg->subscription || !cfg->resource_group) {
		burst_err_set(err, "%s:%d: Provider=%s (azure) needs Subscription= and ResourceGroup=", cfg->where.file,
			      cfg->where.line, cfg->name);
		return NULL;
	}
	if ((why = az_image_check(cfg->image_id))) {
		burst_err_set(err, "%s:%d: Provider=%s (azure): Image=: %s", cfg->where.file, cfg->where.line, cfg->name,
			      why);
		return NULL;
	}
	if (!cfg->subnet_id || strncasecmp(cfg->subnet_id, "/subscriptions/", 15)) {
		burst_err_set(err, "%s:%d: Provider=%s (azure) needs SubnetId= the subnet's resource id "
			      "(/subscriptions/SUB/resourceGroups/RG/providers/Microsoft.Network/virtualNetworks/NET/subnets/NAME)",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	if (!cfg->nregions) {
		burst_err_set(err, "%s:%d: Provider=%s (azure) needs Regions= (e.g. eastus)", cfg->where.file,
			      cfg->where.line, cfg->name);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->name = xstrdup(cfg->name);
	p->cluster = xstrdup(all->cluster_name);
	p->credentials = dup_or_null(cfg->credentials);
	p->endpoint = dup_or_null(cfg->endpoint);
	p->imds = dup_or_null(cfg->metadata_endpoint);
	p->ca_file = dup_or_null(cfg->ca_file);
	p->subscription = xstrdup(cfg->subscription);
	p->rg = xstrdup(cfg->resource_group);
	p->image = xstrdup(cfg->image_id);
	p->subnet = xstrdup(cfg->subnet_id);
	p->admin_user = dup_or_null(cfg->admin_user);
	p->ssh_key_file = dup_or_null(cfg->ssh_public_key);
	p->os_disk = dup_or_null(cfg->os_disk_type);
	p->join_address = dup_or_null(cfg->join_address);
	p->zones = xcalloc(cfg->nzones + 1, sizeof(char *));
	for (i = 0; i < cfg->nzones; i++)
		p->zones[i] = xstrdup(cfg->zones[i]);
	p->nzones = cfg->nzones;
	p->regions = xcalloc(cfg->nregions + 1, sizeof(char *));
	for (i = 0; i < cfg->nregions; i++)
		p->regions[i] = xstrdup(cfg->regions[i]);
	p->nregions = cfg->nregions;
	p->spot = cfg->spot;
	p->max_price = cfg->max_price;
	p->build_wait = cfg->build_wait >= 0 ? cfg->build_wait : 60;
	p->allow_http = all->allow_insecure_endpoint;
	return p;
}

/* The client, made on first use (the credentials file is read then, so that
 * a fixed file needs no restart); NULL with err and *cls. */
static struct arm_client *client(struct provider *p, enum prov_class *cls, burst_err_t *err)
{
	struct az_creds cr;
	struct arm_client_opts o;

	if (p->c)
		return p->c;
	if (p->credentials) {
		if (az_creds_from_file(p->credentials, &cr, err) < 0) {
			*cls = PROV_AUTH;
			return NULL;
		}
	} else
		az_creds_managed(&cr);
	memset(&o, 0, sizeof(o));
	o.creds = &cr;
	o.endpoint = p->endpoint;
	o.imds = p->imds;
	o.ca_file = p->ca_file;
	o.allow_http = p->allow_http;
	p->c = arm_client_new(&o, err);
	az_creds_free(&cr);
	if (!p->c)
		*cls = PROV_PERMANENT;
	return p->c;
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

/* The VM name of (node, attempt) in zone (NULL: none), or -1 when it would not be one Azure takes. */
static int vm_name(const struct provider *p, const char *node, int attempt, const char *zone, char *out, size_t len)
{
	int n = snprintf(out, len, "%s-%s-a%d%s%s", p->cluster, node, attempt, zone ? "z" : "", zone ? zone : "");

	return n > 0 && (size_t)n < len && az_vm_name_ok(out) ? 0 : -1;
}

/*
 * The join script of pn for cloud-init. BURST_INSTANCE_ID (the VM's name,
 * instead of asking the metadata service), BURST_NODE_BIN, BURST_STATE_DIR,
 * BURST_MUNGE_SOCKET and SLURMD_CONF may be set by whoever runs it.
 */
static void user_data(const struct provider *p, const struct prov_batch *b, const char *join,
		      const struct prov_node *pn, const char *region, struct strbuf *s)
{
	ud_head(s, "VM", join, b->provider ? b->provider : p->name, b->instance_type ? b->instance_type : "", region,
		b->acceptance ? b->acceptance : "");
	sb_add(s, "\nNODE=");
	ud_sh_quote(s, pn->node);
	sb_add(s, "\nTOKEN=");
	ud_sh_quote(s, pn->token ? pn->token : "");
	sb_add(s, "\n"
		"if [ -z \"${BURST_INSTANCE_ID:-}\" ]; then\n"
		"\tBURST_INSTANCE_ID=$(curl -fsS --retry 5 -H Metadata:true \\\n"
		"\t\t'http://169.254.169.254/metadata/instance/compute/name?api-version=2021-02-01&format=text') || exit 1\n"
		"\t[ -n \"$BURST_INSTANCE_ID\" ] || { echo 'burst: no VM name from the metadata service' >&2; exit 1; }\n"
		"fi\n");
	if (p->spot)
		/* a Spot VM: burst-node watches Scheduled Events for its eviction (Preempt) */
		sb_add(s, "BURST_AZURE_METADATA=${BURST_AZURE_METADATA:-http://169.254.169.254}\n");
	ud_join_tail(s);
}

/* The SSH public key line of SshPublicKey=, or NULL (none configured, or unreadable: err). */
static char *ssh_key(const struct provider *p, burst_err_t *err)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (!p->ssh_key_file)
		return NULL;
	f = fopen(p->ssh_key_file, "re");
	if (!f) {
		burst_err_set(err, "SshPublicKey=%s: cannot read it", p->ssh_key_file);
		return NULL;
	}
	if (getline(&line, &cap, f) < 0) {
		free(line);
		line = NULL;
		burst_err_set(err, "SshPublicKey=%s: empty", p->ssh_key_file);
	} else
		str_trim(line);
	fclose(f);
	return line;
}

/* A VM of the resource group as the driver sees it. */
struct vms {
	struct az_vm *v;
	size_t n;
	const char *cluster;
	const char *provider;      /* this Provider='s name */
};

static int keep_vm(const struct az_vm *vm, void *ud)
{
	struct vms *l = ud;

	if (strcmp(vm->cluster, l->cluster))
		return 0;
	/* another provider's (two Provider= lines on one resource group: spot and regular) */
	if (vm->provider[0] && strcmp(vm->provider, l->provider))
		return 0;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = *vm;
	return 0;
}

/* The cluster's VMs in the resource group (every page). */
static enum az_class list_cluster(struct provider *p, const char *region, struct vms *out, burst_err_t *err)
{
	char *path = az_vm_path(p->subscription, p->rg, NULL), *next = NULL, what[200];
	enum az_class cls = AZ_OK;
	unsigned pages = 0;

	out->v = NULL;
	out->n = 0;
	out->cluster = p->cluster;
	out->provider = p->name;
	snprintf(what, sizeof(what), "azure %s: list the VMs of resource group %s", p->name, p->rg);
	for (;;) {
		struct arm_answer a;
		cls = arm_request(p->c, "GET", next ? next : path, NULL, ARM_VM_LIST, region, what, &a, err);
		free(next);
		next = NULL;
		if (cls == AZ_OK && az_vm_list_parse(a.body, keep_vm, out, &next) < 0) {
			cls = AZ_TRANSIENT;
			burst_err_set(err, "%s: page %u is no listing", what, pages + 1);
		}
		arm_answer_free(&a);
		pages++;
		if (cls != AZ_OK || !next)
			break;
		if (pages > 10000) {
			cls = AZ_TRANSIENT;
			burst_err_set(err, "%s: more than 10,000 pages: given up", what);
			break;
		}
	}
	free(next);
	free(path);
	if (cls != AZ_OK) {
		free(out->v);
		out->v = NULL;
		out->n = 0;
	}
	return cls;
}

static bool gone_state(const char *s)
{
	return !strcasecmp(s, "Deleting") || !strcasecmp(s, "Failed") || !strcasecmp(s, "Canceled");
}

/* The NIC's private address of VM vm (its nic id, else NAME-nic in the group) into out. */
static void vm_address(struct provider *p, const struct az_vm *vm, char *out, size_t len)
{
	struct arm_answer a;
	burst_err_t err;
	struct strbuf sb;

	out[0] = '\0';
	sb_init(&sb);
	if (vm->nic_id[0])
		sb_addf(&sb, "%s?api-version=%s", vm->nic_id, ARM_NETWORK_API);
	else
		sb_addf(&sb, "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/networkInterfaces/%s-nic"
			"?api-version=%s", p->subscription, p->rg, vm->name, ARM_NETWORK_API);
	if (arm_request(p->c, "GET", sb.s, NULL, ARM_READ, NULL, "read a VM's network interface", &a, &err) == AZ_OK)
		az_nic_private_ip(a.body, out, len);
	arm_answer_free(&a);
	sb_free(&sb);
}

static void delete_vm(struct provider *p, const char *name, const char *region)
{
	char *path = az_vm_path(p->subscription, p->rg, name);
	struct arm_answer a;
	burst_err_t err;

	arm_request(p->c, "DELETE", path, NULL, ARM_VM_DELETE, region, "delete a failed VM", &a, &err);
	arm_answer_free(&a);
	free(path);
}

/* One node's launch as it goes: its zone, its operation. */
struct pending {
	size_t zone;             /* index into zones (0 without Zones=) */
	char *op;                /* the operation's URL, NULL: none to poll */
	bool async;              /* op is an Azure-AsyncOperation (else a Location) */
	double next;             /* when to poll it (monotonic seconds) */
	bool done;
};

/* src into dst of len bytes, cut to fit */
static void copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* PUT node i's VM in its current zone; false when the node is finished (failed, or nothing to wait for). */
static bool put_vm(struct provider *p, struct prov_batch *b, size_t i, struct pending *w, const char *region,
		   const char *join, const char *key, enum prov_class *stop, char *stopmsg, size_t stoplen)
{
	struct prov_node *pn = &b->nodes[i];
	const char *zone = p->nzones ? p->zones[w->zone] : NULL;
	const char *keys[5] = { "burst-cluster", "burst-provider", "burst-nodeset", "burst-node", "burst-attempt" };
	const char *vals[5];
	char name[80], att[16], what[300], *body, *path;
	struct az_vm_spec s;
	struct strbuf ud;
	struct arm_answer a;
	burst_err_t err;
	enum az_class cls;

	for (;;) {
		zone = p->nzones ? p->zones[w->zone] : NULL;
		if (vm_name(p, pn->node, pn->attempt, zone, name, sizeof(name)) < 0) {
			set_error(pn, PROV_PERMANENT, "azure %s: node %s: the VM name %s-%s-a%d is not one Azure takes "
				  "(1-64 letters, digits, . - _): use a shorter ClusterName or node name", p->name, pn->node,
				  p->cluster, pn->node, pn->attempt);
			return false;
		}
		snprintf(att, sizeof(att), "%d", pn->attempt);
		vals[0] = p->cluster;
		vals[1] = p->name;
		vals[2] = b->nodeset ? b->nodeset : "";
		vals[3] = pn->node;
		vals[4] = att;
		memset(&s, 0, sizeof(s));
		s.name = name;
		s.location = region;
		s.zone = zone;
		s.size = b->instance_type;
		s.image = p->image;
		s.subnet_id = p->subnet;
		s.admin_user = p->admin_user;
		s.ssh_key = key;
		s.tag_keys = keys;
		s.tag_vals = vals;
		s.ntags = 5;
		s.spot = p->spot;
		s.max_price = p->max_price;
		s.os_disk_type = p->os_disk;
		sb_init(&ud);
		user_data(p, b, join, pn, region, &ud);
		s.custom_data = ud.s;
		s.custom_len = ud.len;
		body = az_vm_body(&s, &err);
		sb_free(&ud);
		if (!body) {
			set_error(pn, PROV_PERMANENT, "azure %s: %s", p->name, err.msg);
			return false;
		}
		path = az_vm_path(p->subscription, p->rg, name);
		snprintf(what, sizeof(what), "azure %s: create VM %s (%s in %s%s%s)", p->name, name,
			 b->instance_type ? b->instance_type : "?", region, zone ? " zone " : "", zone ? zone : "");
		cls = arm_request(p->c, "PUT", path, body, ARM_VM_PUT, region, what, &a, &err);
		free(body);
		free(path);
		if (cls == AZ_OK) {
			struct az_vm vm;
			snprintf(pn->instance, sizeof(pn->instance), "%s", name);
			pn->cls = PROV_OK;
			free(w->op);
			w->op = dup_or_null(a.async_op ? a.async_op : a.location);
			w->async = a.async_op != NULL;
			w->next = mono() + (a.retry_after >= 0 ? a.retry_after : 1);
			w->done = !w->op;
			/* no operation: the VM existed (a PUT sent again), as its answer says */
			if (w->done && az_vm_parse(a.body, &vm) == 0 && !strcasecmp(vm.state, "Succeeded"))
				vm_address(p, &vm, pn->address, sizeof(pn->address));
			arm_answer_free(&a);
			if (provider_crash)
				provider_crash(CP_AZURE_PUT_SENT);
			return !w->done;
		}
		arm_answer_free(&a);
		if (cls == AZ_CAPACITY && w->zone + 1 < p->nzones) {
			w->zone++;   /* the next zone, now */
			continue;
		}
		set_error(pn, prov_of(cls), "%s", err.msg);
		if (cls == AZ_QUOTA || cls == AZ_AUTH || cls == AZ_THROTTLED) {
			*stop = prov_of(cls);
			copy(stopmsg, stoplen, err.msg);
		}
		return false;
	}
}

static size_t az_launch(struct provider *p, struct prov_batch *b)
{
	enum prov_class pcls = PROV_OK, stop = PROV_OK;
	burst_err_t err;
	const char *region = b->region ? b->region : p->regions[0];
	const char *join = p->join_address ? p->join_address : b->join_addr;
	struct pending *w;
	struct vms have;
	char *key = NULL, stopmsg[400] = "";
	size_t i, k, got = 0, npend = 0;
	double end;

	if (!b->n)
		return 0;
	for (i = 0; i < b->n; i++) {
		b->nodes[i].instance[0] = b->nodes[i].address[0] = b->nodes[i].error[0] = '\0';
		b->nodes[i].cls = PROV_OK;
	}
	if (!client(p, &pcls, &err) || (p->ssh_key_file && !(key = ssh_key(p, &err)))) {
		for (i = 0; i < b->n; i++)
			set_error(&b->nodes[i], p->c ? PROV_PERMANENT : pcls, "azure %s: launch %s: %s", p->name,
				  b->nodes[i].node, err.msg);
		return 0;
	}
	/* the VMs this cluster has: adopt the ones of these (node, attempt)s */
	{
		enum az_class c = list_cluster(p, region, &have, &err);
		if (c != AZ_OK) {
			for (i = 0; i < b->n; i++)
				set_error(&b->nodes[i], prov_of(c), "%s", err.msg);
			free(key);
			return 0;
		}
	}
	w = xcalloc(b->n, sizeof(*w));
	for (i = 0; i < b->n; i++) {
		struct prov_node *pn = &b->nodes[i];
		const struct az_vm *vm = NULL;

		for (k = 0; k < have.n; k++)
			if (!strcmp(have.v[k].node, pn->node) && have.v[k].attempt == pn->attempt &&
			    !gone_state(have.v[k].state))
				vm = &have.v[k];
		if (vm) {
			snprintf(pn->instance, sizeof(pn->instance), "%s", vm->name);
			snprintf(pn->error, sizeof(pn->error), "VM %s adopted: created earlier (attempt %d, %s), the "
				 "answer was not recorded", vm->name, pn->attempt, vm->state);
			if (!strcasecmp(vm->state, "Succeeded"))
				vm_address(p, vm, pn->address, sizeof(pn->address));
			w[i].done = true;
			continue;
		}
		if (stop != PROV_OK) {
			set_error(pn, stop, "azure %s: not tried after the answer to an earlier node: %s", p->name, stopmsg);
			w[i].done = true;
			continue;
		}
		if (put_vm(p, b, i, &w[i], region, join, key, &stop, stopmsg, sizeof(stopmsg)))
			npend++;
		else
			w[i].done = true;
	}
	free(have.v);
	/* the operations, each polled after its own Retry-After, until BuildWait= */
	end = mono() + p->build_wait;
	while (npend) {
		double now = mono(), t = INFINITY;
		size_t j = b->n;
		struct arm_answer a;
		char status[32], code[96], *msg = NULL, what[300];
		enum az_class c;
		struct prov_node *pn;

		for (i = 0; i < b->n; i++)
			if (!w[i].done && w[i].next < t) {
				t = w[i].next;
				j = i;
			}
		if (j == b->n || t > end)
			break;
		if (t > now) {
			struct timespec ts = { (time_t)(t - now), (long)(((t - now) - floor(t - now)) * 1e9) };
			nanosleep(&ts, NULL);
		}
		pn = &b->nodes[j];
		snprintf(what, sizeof(what), "azure %s: create VM %s", p->name, pn->instance);
		c = arm_request(p->c, "GET", w[j].op, NULL, ARM_OP_STATUS, region, what, &a, &err);
		if (c != AZ_OK) {
			/* cannot tell now: launched; the boot timeout covers it */
			w[j].done = true;
			npend--;
			arm_answer_free(&a);
			continue;
		}
		w[j].next = mono() + (a.retry_after >= 0 ? a.retry_after : 1);
		if (!w[j].async) {
			if (a.status != 202) {
				w[j].done = true;
				npend--;
			}
			arm_answer_free(&a);
			continue;
		}
		if (arm_operation_parse(a.body, status, sizeof(status), code, sizeof(code), &msg) < 0 ||
		    !strcasecmp(status, "InProgress")) {
			arm_answer_free(&a);
			free(msg);
			continue;
		}
		arm_answer_free(&a);
		if (!strcasecmp(status, "Succeeded")) {
			struct az_vm vm;
			if (provider_crash)
				provider_crash(CP_AZURE_OP_DONE);
			memset(&vm, 0, sizeof(vm));
			copy(vm.name, sizeof(vm.name), pn->instance);
			vm_address(p, &vm, pn->address, sizeof(pn->address));
			w[j].done = true;
			npend--;
		} else {
			c = arm_classify(200, code, msg);
			if (c == AZ_OK)
				c = AZ_TRANSIENT;
			delete_vm(p, pn->instance, region);   /* a failed VM holds quota */
			if (c == AZ_CAPACITY && w[j].zone + 1 < p->nzones) {
				w[j].zone++;
				pn->instance[0] = '\0';
				if (!put_vm(p, b, j, &w[j], region, join, key, &stop, stopmsg, sizeof(stopmsg))) {
					w[j].done = true;
					npend--;
				}
			} else {
				set_error(pn, prov_of(c), "azure %s: VM %s (%s in %s): its create %s: %s%s%s", p->name,
					  pn->instance, b->instance_type ? b->instance_type : "?", region, status,
					  code[0] ? code : "(no code)", msg ? ": " : "", msg ? msg : "");
				pn->instance[0] = '\0';
				w[j].done = true;
				npend--;
			}
		}
		free(msg);
	}
	for (i = 0; i < b->n; i++) {
		free(w[i].op);
		if (b->nodes[i].cls == PROV_OK && b->nodes[i].instance[0])
			got++;
	}
	free(w);
	free(key);
	return got;
}

static int az_terminate(struct provider *p, const char *node, const char *instance, enum prov_class *cls,
			burst_err_t *err)
{
	char *path, what[300];
	struct arm_answer a;
	enum az_class c;

	*cls = PROV_OK;
	if (!instance || !*instance)
		return 0;
	if (!az_vm_name_ok(instance)) {
		*cls = PROV_PERMANENT;
		burst_err_set(err, "azure %s: node %s: '%.100s' is no VM name", p->name, node, instance);
		return -1;
	}
	if (!client(p, cls, err))
		return -1;
	path = az_vm_path(p->subscription, p->rg, instance);
	snprintf(what, sizeof(what), "azure %s: delete VM %s (%s)", p->name, instance, node);
	c = arm_request(p->c, "DELETE", path, NULL, ARM_VM_DELETE, p->regions[0], what, &a, err);
	arm_answer_free(&a);
	free(path);
	if (c == AZ_OK || c == AZ_NOT_FOUND) {
		burst_err_clear(err);
		return 0;   /* 202: ARM deletes it, its disk and NIC; the reconciler sees it go */
	}
	*cls = prov_of(c);
	return -1;
}

static int az_exists(struct provider *p, const char *node, const char *instance)
{
	enum prov_class cls;
	burst_err_t err;
	struct arm_answer a;
	char *path;
	enum az_class c;
	int res = -1;

	(void)node;
	if (!instance || !*instance || !az_vm_name_ok(instance))
		return 0;
	if (!client(p, &cls, &err))
		return -1;
	path = az_vm_path(p->subscription, p->rg, instance);
	c = arm_request(p->c, "GET", path, NULL, ARM_READ, NULL, "read VM", &a, &err);
	if (c == AZ_NOT_FOUND)
		res = 0;
	else if (c == AZ_OK) {
		struct az_vm vm;
		res = az_vm_parse(a.body, &vm) == 0 && strcasecmp(vm.state, "Deleting") ? 1 : 0;
	}
	arm_answer_free(&a);
	free(path);
	return res;
}

static const char *state_of(const char *s)
{
	if (!strcasecmp(s, "Creating") || !strcasecmp(s, "Updating"))
		return "pending";
	if (!strcasecmp(s, "Deleting"))
		return "stopping";
	if (!strcasecmp(s, "Failed") || !strcasecmp(s, "Canceled"))
		return "stopped";
	return "running";
}

static int az_list(struct provider *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	struct vms l;
	enum az_class c;
	size_t i;

	*cls = PROV_OK;
	if (!client(p, cls, err))
		return -1;
	c = list_cluster(p, p->regions[0], &l, err);
	if (c != AZ_OK) {
		*cls = prov_of(c);
		return -1;
	}
	for (i = 0; i < l.n; i++) {
		struct prov_instance *o = prov_list_add(out, l.v[i].name, l.v[i].cluster, l.v[i].node,
							 state_of(l.v[i].state));
		struct tm tm;
		o->attempt = l.v[i].attempt;
		memset(&tm, 0, sizeof(tm));
		if (l.v[i].time_created[0] && strptime(l.v[i].time_created, "%Y-%m-%dT%H:%M:%S", &tm))
			o->launched = (double)timegm(&tm);
	}
	free(l.v);
	return 0;
}

static void az_fini(struct provider *p)
{
	size_t i;

	if (!p)
		return;
	arm_client_free(p->c);
	free(p->name);
	free(p->cluster);
	free(p->credentials);
	free(p->endpoint);
	free(p->imds);
	free(p->ca_file);
	free(p->subscription);
	free(p->rg);
	free(p->image);
	free(p->subnet);
	free(p->admin_user);
	free(p->ssh_key_file);
	free(p->os_disk);
	free(p->join_address);
	for (i = 0; i < p->nzones; i++)
		free(p->zones[i]);
	free(p->zones);
	for (i = 0; i < p->nregions; i++)
		free(p->regions[i]);
	free(p->regions);
	free(p);
}

/* The client's counters, for the CLI test driver and the bench. */
void azure_provider_stats(const struct provider *p, unsigned *calls, unsigned *throttled, unsigned *tokens)
{
	struct arm_stats s;

	*calls = *throttled = *tokens = 0;
	if (!p || !p->c)
		return;
	s = arm_client_stats(p->c);
	*calls = s.calls;
	*throttled = s.throttled;
	*tokens = s.tokens;
}

const struct provider_ops provider_azure = {
	.type = "azure",
	.init = az_init,
	.launch = az_launch,
	.terminate = az_terminate,
	.exists = az_exists,
	.list = az_list,
	.fini = az_fini,
};

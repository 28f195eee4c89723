/*
 * aws.c - the aws provider: EC2 instances through the EC2 Query API
 * (lib/cloud/ec2.h), credentials from CredentialsFile=/Profile=/the environment/
 * the instance role (lib/cloud/aws_creds.h).
 *
 * A launch batch (n nodes of one node set as one type in one region) is one
 * RunInstances with MinCount=1 (MinCount=all: n), MaxCount=n (split only when the user data
 * would pass EC2's 16 KiB limit), an idempotency key (ClientToken) derived
 * from the cluster, the node set and each node's (name, attempt), tags
 * burst:cluster, burst:nodeset, burst:batch=<token> and Name, and user data:
 * a shell script that reads the instance's launch index and id from IMDSv2,
 * picks its node name from a table indexed by launch index (node i of the
 * batch is launch index i), reads its own join token from its instance
 * tags in its metadata (InstanceMetadataTags) and runs burst-node join and
 * then slurmd, burst-node watching the metadata for a spot interruption
 * notice (--imds). The user data, the same for every instance of the batch,
 * holds no token: once RunInstances has answered, each instance is tagged
 * burst-join-token=<its token> (one CreateTags per instance; an instance
 * adopted from an earlier batch is tagged again), so that an instance, and
 * a job on it, can read its own token and no other's (doc/aws.md, "Join
 * tokens"). Each batch is written to the batch journal (fsynced) before its
 * RunInstances; a batch the journal has may have been sent, so it is first
 * looked up by its burst:batch tag and what exists is adopted: that covers a
 * crash between RunInstances and the agent recording the answer, also on
 * endpoints (moto) that do not honour ClientToken. A batch the journal does
 * not have was never sent: it is launched without the lookup (which costs
 * EC2, and moto most of all, a search through every instance's tags). A
 * journaled batch that shows no instance but was never answered and may
 * still be in flight (journal_in_flight) is looked for again, not launched
 * anew, until it cannot be.
 *
 * Instances fewer than asked (a partial launch): the nodes without one get
 * PROV_CAPACITY, so the agent moves them to the next candidate.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../provider.h"
#include "batch_journal.h"
#include "ec2.h"
#include "region_cache.h"
#include "sigv4.h"
#include "strutil.h"

/*
 * A journaled batch none of whose instances a complete listing shows is
 * finished only if it was sent at least this long before the listing (or
 * one call's longest life, if longer): EC2 lists what RunInstances made
 * a while after it answered (eventual consistency).
 */
#define JOURNAL_GRACE 600.0

/* EC2 takes at most 16 KiB of user data (before base64); keep a margin. */
#define AWS_USER_DATA_MAX 15360

struct provider {
	struct batch_journal J;  /* StateDir/aws-PROVIDER.batches (lib/state/batch_journal.h) */
	char *name;
	char *cluster;
	char *endpoint, *ca_file;
	char *credentials, *profile;
	char *image_id, *launch_template, *subnet_id, *iam_profile;
	char **sgs;
	size_t nsgs;
	char *default_region;
	char **regions;          /* Regions= (NULL-terminated) */
	bool min_count_all;
	bool paced;              /* rate limits configured: the agent paces launches and terminations */
	struct region_cache rc;  /* struct ec2_client per region */
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static enum prov_class prov_of_ec2(enum ec2_class c)
{
	switch (c) {
	case EC2_OK: return PROV_OK;
	case EC2_CAPACITY: return PROV_CAPACITY;
	case EC2_QUOTA: return PROV_QUOTA;
	case EC2_THROTTLED: return PROV_THROTTLED;
	case EC2_TRANSIENT: return PROV_TRANSIENT;
	case EC2_PERMANENT: return PROV_PERMANENT;
	case EC2_AUTH: return PROV_AUTH;
	case EC2_NOT_FOUND: return PROV_TRANSIENT;   /* eventual consistency: later */
	}
	return PROV_TRANSIENT;
}

/*
 * The batch journal. The agent retries a launch node by node (after a
 * transient error, or a restart while a batch was in flight), so a node's
 * retry does not repeat its batch's ClientToken. Each batch is written here
 * (TOKEN NODE:ATTEMPT...) before its RunInstances; a launch of a (node,
 * attempt) found here first adopts that node's instance of the earlier
 * batch (found by its burst:batch tag, at the node's launch index). A batch
 * not found here was never sent, so nothing is looked up for it.
 */
/*
 * Whether batch j may still be launching at EC2 although no instance of it
 * is seen: its RunInstances was never answered here (the agent that sent it
 * died, or the call failed without an answer: a timeout, a 5xx) and was
 * sent less than a call's longest life ago. EC2 (and moto, which does not
 * honour ClientToken) may create its instances after a DescribeInstances
 * that shows none: launching its nodes again then would give each two
 * instances. *age and *bound (seconds) say how long ago and for how long.
 */
static bool journal_in_flight(const struct bj_batch *j, const struct ec2_client *c, double *age, double *bound)
{
	*bound = (double)ec2_client_call_bound_ms(c) / 1000.0;
	*age = wall_seconds() - j->sent;
	return !j->settled && j->sent > 0 && *age < *bound;
}

static void fail_nodes(struct prov_batch *b, size_t from, size_t to, enum prov_class cls, const char *msg);

/* Nodes [from, to) of b wait for batch j, which may still be launching. */
static void wait_in_flight(struct prov_batch *b, size_t from, size_t to, const struct bj_batch *j, double age,
			   double bound)
{
	char msg[600];

	snprintf(msg, sizeof(msg), "batch %s (sent %.1f s ago, never answered here) shows no instance for it "
		 "yet: it may still be launching; looked for again until %.0f s after it was sent, then "
		 "launched anew", j->token, age, bound);
	fail_nodes(b, from, to, PROV_TRANSIENT, msg);
}

/*
 * A compaction renames its new file over the journal, which holds what
 * this agent knew when it wrote the new one: an agent that has lost its
 * lease (frozen through a listing) must not write away what the agent
 * that took over has journaled since.
 */
static int journal_fence(void)
{
	return provider_fence ? provider_fence() : 0;
}

/*
 * Record nodes [from, to) of b as batch token, on disk (synced) before its
 * RunInstances: a batch that is not journaled is launched without looking
 * for an earlier launch of it, so it must not be sent unless journaled.
 * Returns 0, or -1 with msg (nothing recorded, not even in memory).
 */
static int journal_add(struct provider *p, const char *token, const struct prov_batch *b, const char *region,
		       size_t from, size_t to, char *msg, size_t msglen)
{
	const char **nodes = xcalloc(to - from + 1, sizeof(char *));
	int *attempts = xcalloc(to - from + 1, sizeof(int));
	burst_err_t err;
	size_t i;
	int rc;

	for (i = from; i < to; i++) {
		nodes[i - from] = b->nodes[i].node;
		attempts[i - from] = b->nodes[i].attempt;
	}
	rc = bj_add(&p->J, token, nodes, attempts, to - from, region, wall_seconds(), &err);
	if (rc < 0)
		snprintf(msg, msglen, "%.900s: not launching (a launch it does not record could be repeated after "
			 "a crash)", err.msg);
	free(nodes);
	free(attempts);
	return rc;
}

static struct provider *aws_init(const struct cfg_provider *cfg, const struct burst_config *all,
				 burst_err_t *err)
{
	struct provider *p;
	size_t i;

	if (!cfg->image_id && !cfg->launch_template) {
		burst_err_set(err, "%s:%d: Provider=%s (aws) needs ImageId=ami-... or LaunchTemplate=lt-...|NAME",
			      cfg->where.file, cfg->where.line, cfg->name);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->name = xstrdup(cfg->name);
	p->cluster = xstrdup(all->cluster_name);
	p->endpoint = dup_or_null(cfg->endpoint);
	p->ca_file = dup_or_null(cfg->ca_file);
	p->credentials = dup_or_null(cfg->credentials);
	p->profile = dup_or_null(cfg->profile);
	p->paced = cfg->rates.launch.size > 0 || cfg->rates.launch_calls.size > 0 ||
		cfg->rates.terminate.size > 0 || cfg->rates.terminate_calls.size > 0;
	p->image_id = dup_or_null(cfg->image_id);
	p->launch_template = dup_or_null(cfg->launch_template);
	p->subnet_id = dup_or_null(cfg->subnet_id);
	p->iam_profile = dup_or_null(cfg->iam_instance_profile);
	p->nsgs = cfg->nsecurity_groups;
	p->sgs = xcalloc(p->nsgs + 1, sizeof(char *));
	for (i = 0; i < p->nsgs; i++)
		p->sgs[i] = xstrdup(cfg->security_groups[i]);
	p->default_region = dup_or_null(cfg->nregions ? cfg->regions[0] : NULL);
	p->regions = xcalloc(cfg->nregions + 1, sizeof(char *));
	for (i = 0; i < cfg->nregions; i++)
		p->regions[i] = xstrdup(cfg->regions[i]);
	p->min_count_all = cfg->min_count_all;
	{
		char path[4096];
		snprintf(path, sizeof(path), "%s/aws-%s.batches", all->state_dir ? all->state_dir : ".", cfg->name);
		bj_open(&p->J, path);
		p->J.fence = journal_fence;
	}
	return p;
}

static void free_client(void *c)
{
	ec2_client_free(c);
}

/* The region's client, made on first use; NULL with err (and *cls). */
static struct ec2_client *client_for(struct provider *p, const char *region, enum prov_class *cls,
				     burst_err_t *err)
{
	struct ec2_client *c;

	if (!region)
		region = p->default_region;
	if (!region) {
		*cls = PROV_PERMANENT;
		burst_err_set(err, "provider %s has no region: set Regions= on its Provider= line", p->name);
		return NULL;
	}
	if ((c = region_cache_get(&p->rc, region)))
		return c;
	c = ec2_client_for_provider(region, p->endpoint, p->ca_file, p->credentials, p->profile, err);
	if (!c) {
		/* no credentials (or a bad endpoint): nothing an instant retry fixes */
		*cls = PROV_AUTH;
		return NULL;
	}
	ec2_client_paced(c, p->paced);
	region_cache_put(&p->rc, region, c);
	return c;
}

/* "burst-" + the first 40 hex digits of sha256(cluster, node set, (name, attempt)...). */
static void batch_token(const struct prov_batch *b, size_t from, size_t to, char out[47])
{
	struct strbuf s;
	char hex[65];
	size_t i;

	sb_init(&s);
	sb_addf(&s, "%s\n%s\n", b->cluster ? b->cluster : "", b->nodeset ? b->nodeset : "");
	for (i = from; i < to; i++)
		sb_addf(&s, "%s:%d\n", b->nodes[i].node, b->nodes[i].attempt);
	sigv4_sha256_hex(s.s, s.len, hex);
	sb_free(&s);
	snprintf(out, 47, "burst-%.40s", hex);
}

/* The instance tag that carries an instance's own join token: read by the
 * instance at /latest/meta-data/tags/instance/TOKEN_TAG (IMDS serves tag
 * keys of letters, digits and a few signs; a hyphen is one of them). */
#define TOKEN_TAG "burst-join-token"

static void ud_case_line(struct strbuf *s, size_t idx, const struct prov_node *pn)
{
	sb_addf(s, "%zu) NODE=", idx);
	ud_sh_quote(s, pn->node);
	sb_add(s, " ;;\n");
}

/*
 * The user data of nodes [from, to) of b: a shell script for cloud-init.
 * BURST_INSTANCE_ID / BURST_LAUNCH_INDEX / BURST_JOIN_TOKEN (instead of
 * asking IMDSv2), BURST_NODE_BIN, BURST_STATE_DIR, BURST_MUNGE_SOCKET and
 * SLURMD_CONF may be set by whoever runs it (an image's own wrapper, the
 * tests). No join token is in it: the instance reads its own from its tag,
 * waiting for the agent to have put it there.
 */
static void user_data(const struct provider *p, const struct prov_batch *b, const char *join,
		      size_t from, size_t to, struct strbuf *s)
{
	size_t i;

	ud_head(s, "instance", join, b->provider ? b->provider : p->name, b->instance_type ? b->instance_type : "",
		b->region ? b->region : p->default_region ? p->default_region : "", b->acceptance ? b->acceptance : "");
	sb_add(s, "\n"
		"# the instance metadata service (IMDSv2); AWS_EC2_METADATA_SERVICE_ENDPOINT,\n"
		"# as the AWS SDKs read it, names another; burst-node watches it for a spot\n"
		"# interruption notice\n"
		"BURST_IMDS=${AWS_EC2_METADATA_SERVICE_ENDPOINT:-http://169.254.169.254}\n"
		"BURST_IMDS=${BURST_IMDS%/}\n"
		"imds() {\n"
		"\tcurl -fsS --retry 5 -H \"X-aws-ec2-metadata-token: $IMDS_TOKEN\" \"$BURST_IMDS/latest/meta-data/$1\"\n"
		"}\n"
		"imds_session() {\n"
		"\t[ -n \"${IMDS_TOKEN:-}\" ] || IMDS_TOKEN=$(curl -fsS --retry 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 21600' \"$BURST_IMDS/latest/api/token\")\n"
		"}\n"
		"if [ -z \"${BURST_INSTANCE_ID:-}\" ] || [ -z \"${BURST_LAUNCH_INDEX:-}\" ]; then\n"
		"\timds_session || exit 1\n"
		"\tBURST_INSTANCE_ID=$(imds instance-id) || exit 1\n"
		"\tBURST_LAUNCH_INDEX=$(imds ami-launch-index) || exit 1\n"
		"fi\n"
		"case \"$BURST_LAUNCH_INDEX\" in\n");
	for (i = from; i < to; i++)
		ud_case_line(s, i - from, &b->nodes[i]);
	sb_add(s, "*) echo \"burst: no node for launch index $BURST_LAUNCH_INDEX\" >&2; exit 1 ;;\n"
		"esac\n"
		"# this instance's own join token: the agent tags it on the instance once\n"
		"# RunInstances has answered (the user data is the whole batch's)\n"
		"TOKEN=${BURST_JOIN_TOKEN:-}\n"
		"tries=0\n"
		"while [ -z \"$TOKEN\" ]; do\n"
		"\timds_session && TOKEN=$(imds tags/instance/" TOKEN_TAG " 2>/dev/null) && [ -n \"$TOKEN\" ] && break\n"
		"\ttries=$((tries + 1))\n"
		"\tif [ \"$tries\" -ge 300 ]; then\n"
		"\t\techo \"burst: no " TOKEN_TAG " tag in this instance's metadata after 300 s (InstanceMetadataTags enabled? tagged by the agent?)\" >&2\n"
		"\t\texit 1\n"
		"\tfi\n"
		"\tTOKEN=\n"
		"\tsleep 1\n"
		"done\n");
	ud_join_tail(s);
}

/* An ec2 message without its "ec2 ACTION in REGION (...): " prefix (ours says it). */
static const char *ec2_detail(const char *m)
{
	const char *colon = strncmp(m, "ec2 ", 4) ? NULL : strstr(m, ": ");
	return colon ? colon + 2 : m;
}

/* The admin's view of nodes [from, to): "burst-1" or "burst-1..burst-4 (4 nodes)". */
static void nodes_desc(const struct prov_batch *b, size_t from, size_t to, char *buf, size_t len)
{
	if (to - from == 1)
		snprintf(buf, len, "%s", b->nodes[from].node);
	else
		snprintf(buf, len, "%s..%s (%zu nodes)", b->nodes[from].node, b->nodes[to - 1].node, to - from);
}

static void fail_nodes(struct prov_batch *b, size_t from, size_t to, enum prov_class cls, const char *msg)
{
	size_t i;

	for (i = from; i < to; i++) {
		b->nodes[i].cls = cls;
		b->nodes[i].instance[0] = '\0';
		size_t l = strlen(msg);
		if (l >= sizeof(b->nodes[i].error))
			l = sizeof(b->nodes[i].error) - 1;
		memcpy(b->nodes[i].error, msg, l);
		b->nodes[i].error[l] = '\0';
	}
}

/* Say in pn's note (its error, with PROV_OK) that its instance was adopted. */
static void adopted_note(struct prov_node *pn, const char *token)
{
	snprintf(pn->error, sizeof(pn->error),
		 "instance %s adopted: launched earlier (batch %s, attempt %d), the answer was not recorded",
		 pn->instance, token, pn->attempt);
}

/*
 * Give nodes [from, to) the instances of l: by amiLaunchIndex when every
 * instance has a distinct one in range, else in the order EC2 listed them.
 * Returns how many nodes got one; the others fail with PROV_CAPACITY.
 */
static size_t assign(struct prov_batch *b, size_t from, size_t to, const struct ec2_instances *l,
		     const char *what)
{
	size_t n = to - from, i, got = 0;
	bool by_index = l->n <= n;
	char *seen = xcalloc(n ? n : 1, 1);

	for (i = 0; i < l->n && by_index; i++) {
		int li = l->v[i].launch_index;
		if (li < 0 || (size_t)li >= n || seen[li])
			by_index = false;
		else
			seen[li] = 1;
	}
	for (i = from; i < to; i++)
		b->nodes[i].instance[0] = '\0';
	for (i = from; i < to; i++)
		b->nodes[i].address[0] = '\0';
	for (i = 0; i < l->n && i < n; i++) {
		size_t k = from + (by_index ? (size_t)l->v[i].launch_index : i);
		snprintf(b->nodes[k].instance, sizeof(b->nodes[k].instance), "%s", l->v[i].id ? l->v[i].id : "");
		/* the address slurmctld reaches it at: its private IP in its subnet */
		snprintf(b->nodes[k].address, sizeof(b->nodes[k].address), "%s",
			 l->v[i].private_ip ? l->v[i].private_ip : "");
	}
	for (i = from; i < to; i++) {
		struct prov_node *pn = &b->nodes[i];
		if (pn->instance[0]) {
			pn->cls = PROV_OK;
			pn->error[0] = '\0';
			got++;
		} else {
			pn->cls = PROV_CAPACITY;
			snprintf(pn->error, sizeof(pn->error), "%s: partial launch: %zu of %zu instances",
				 what, l->n < n ? l->n : n, n);
		}
	}
	free(seen);
	return got;
}

/* dp asks for the instances whose tag is *value (f and value must outlive
 * dp), in every state but shutting-down and terminated. */
static void describe_live_by_tag(struct ec2_describe_params *dp, struct ec2_filter f[2],
				 const char *tag, const char *const *value)
{
	static const char *const live[] = { "pending", "running", "stopping", "stopped" };

	memset(dp, 0, sizeof(*dp));
	f[0].name = tag;
	f[0].values = value;
	f[0].nvalues = 1;
	f[1].name = "instance-state-name";
	f[1].values = live;
	f[1].nvalues = 4;
	dp->filters = f;
	dp->nfilters = 2;
}

/*
 * Give each instance of nodes [from, to) that has one its own join token,
 * as its TOKEN_TAG tag (one CreateTags each: a CreateTags gives all its
 * instances the same tags). EC2 may not know an instance yet right after
 * RunInstances (eventual consistency): InvalidInstanceID.NotFound is asked
 * again a few times. A node whose instance could not be tagged fails with
 * the call's class and no instance: its instance would wait for a token
 * that never comes. The agent's retry of the same attempt adopts it from
 * the journal and tags it again; after a permanent failure the reconciler
 * ends it. Returns how many nodes failed so.
 */
static size_t deliver_tokens(struct ec2_client *c, struct prov_batch *b, size_t from, size_t to)
{
	size_t i, failed = 0;

	for (i = from; i < to; i++) {
		struct prov_node *pn = &b->nodes[i];
		struct ec2_tag tag;
		const char *ids[1];
		burst_err_t err;
		enum ec2_class ec = EC2_OK;
		long wait_ms = 250;

		if (pn->cls != PROV_OK || !pn->instance[0] || !pn->token || !pn->token[0])
			continue;
		tag.key = TOKEN_TAG;
		tag.value = pn->token;
		ids[0] = pn->instance;
		for (int attempt = 0; attempt < 5; attempt++) {
			ec = ec2_create_tags(c, ids, 1, &tag, 1, &err);
			if (ec != EC2_NOT_FOUND)
				break;
			struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			wait_ms *= 2;
		}
		if (ec != EC2_OK) {
			/* the token is a secret: the message names the tag, not its value */
			char msg[sizeof(pn->error)];
			snprintf(msg, sizeof(msg), "aws CreateTags " TOKEN_TAG " on %.40s (its join token): %.300s",
				 pn->instance, ec2_detail(err.msg));
			memcpy(pn->error, msg, sizeof(msg));
			pn->cls = prov_of_ec2(ec);
			pn->instance[0] = '\0';
			pn->address[0] = '\0';
			failed++;
		}
	}
	return failed;
}

/* One RunInstances (after looking for an earlier one) for nodes [from, to). */
static size_t launch_chunk(struct provider *p, struct ec2_client *c, struct prov_batch *b,
			   const char *region, const char *join, size_t from, size_t to)
{
	struct ec2_instances l = { 0 };
	struct ec2_run_params rp;
	struct ec2_describe_params dp;
	struct ec2_filter f[2];
	struct ec2_tag tags[4];
	struct strbuf ud;
	burst_err_t err;
	enum ec2_class ec;
	char token[47], who[256], what[512], name[600], msg[1400];
	const char *tokv[1];
	size_t got = 0;
	struct bj_batch *jb;
	double age, bound;

	batch_token(b, from, to, token);
	nodes_desc(b, from, to, who, sizeof(who));
	snprintf(what, sizeof(what), "aws RunInstances %s in %s for %s",
		 b->instance_type ? b->instance_type : "(template's type)", region, who);

	/* 1. a journaled batch may have been sent: adopt what it launched */
	if (!(jb = bj_get(&p->J, token)))
		goto launch;
	tokv[0] = token;
	describe_live_by_tag(&dp, f, "tag:burst:batch", tokv);
	ec = ec2_describe_instances(c, &dp, &l, &err);
	if (ec != EC2_OK) {
		snprintf(msg, sizeof(msg), "aws DescribeInstances (batch %s) before %s: %.700s", token, what, ec2_detail(err.msg));
		fail_nodes(b, from, to, prov_of_ec2(ec), msg);
		goto out;
	}
	if (l.n) {
		size_t i;
		got = assign(b, from, to, &l, what);
		for (i = from; i < to; i++)
			if (b->nodes[i].cls == PROV_OK)
				adopted_note(&b->nodes[i], token);
		got -= deliver_tokens(c, b, from, to);
		goto out;
	}
	ec2_instances_free(&l);
	if (journal_in_flight(jb, c, &age, &bound)) {
		wait_in_flight(b, from, to, jb, age, bound);
		goto out;
	}

launch:
	/* 2. launch, journaled first */
	if (journal_add(p, token, b, region, from, to, msg, sizeof(msg)) < 0) {
		fail_nodes(b, from, to, PROV_TRANSIENT, msg);
		goto out;
	}
	/* a batch sent again is sent now: it may be launching from now on
	 * (journal_in_flight), and no listing begun before now may find it
	 * finished (aws_list_step: it pages between launches) */
	if (jb)
		jb->sent = wall_seconds();
	sb_init(&ud);
	user_data(p, b, join, from, to, &ud);
	snprintf(name, sizeof(name), "%s-%s", b->cluster ? b->cluster : "burst", who);
	tags[0].key = "burst:cluster";
	tags[0].value = b->cluster ? b->cluster : "";
	tags[1].key = "burst:nodeset";
	tags[1].value = b->nodeset ? b->nodeset : "";
	tags[2].key = "burst:batch";
	tags[2].value = token;
	tags[3].key = "Name";
	tags[3].value = name;
	memset(&rp, 0, sizeof(rp));
	rp.image_id = p->image_id;
	if (p->launch_template) {
		if (!strncmp(p->launch_template, "lt-", 3))
			rp.launch_template_id = p->launch_template;
		else
			rp.launch_template_name = p->launch_template;
	}
	rp.instance_type = b->instance_type;
	rp.max_count = (int)(to - from);
	rp.min_count = p->min_count_all ? rp.max_count : 1;
	rp.subnet_id = p->subnet_id;
	rp.security_group_ids = (const char *const *)p->sgs;
	rp.nsecurity_groups = p->nsgs;
	if (p->iam_profile && !strncmp(p->iam_profile, "arn:", 4))
		rp.iam_instance_profile_arn = p->iam_profile;
	else
		rp.iam_instance_profile_name = p->iam_profile;
	rp.user_data = ud.s;
	rp.user_data_len = ud.len;
	rp.tags = tags;
	rp.ntags = 4;
	rp.client_token = token;
	rp.metadata_tags = true;
	ec = ec2_run_instances(c, &rp, &l, &err);
	sb_free(&ud);
	/* answered: what it launched is known (an error of class TRANSIENT,
	 * a timeout or a 5xx, says nothing of what EC2 did) */
	if (ec != EC2_TRANSIENT && (jb = bj_get(&p->J, token)))
		bj_settle(&p->J, jb);
	if (ec != EC2_OK) {
		snprintf(msg, sizeof(msg), "%s: %.800s", what, ec2_detail(err.msg));
		fail_nodes(b, from, to, prov_of_ec2(ec), msg);
		goto out;
	}
	got = assign(b, from, to, &l, what);
	got -= deliver_tokens(c, b, from, to);
out:
	ec2_instances_free(&l);
	return got;
}

/* How many nodes from 'from' fit in one user data. */
static size_t chunk_end(const struct provider *p, const struct prov_batch *b, const char *join,
			size_t from)
{
	struct strbuf s;
	size_t to = from + 1, base;

	sb_init(&s);
	user_data(p, b, join, from, from, &s);
	base = s.len;
	sb_free(&s);
	while (to < b->n) {
		sb_init(&s);
		ud_case_line(&s, to - from, &b->nodes[to]);
		base += s.len;
		sb_free(&s);
		if (base > AWS_USER_DATA_MAX)
			break;
		to++;
	}
	return to;
}

/*
 * Nodes of b launched by an earlier batch (the journal): adopt their
 * instances. Returns how many were adopted (their cls is PROV_OK; *done[i]
 * set), or -1 (nodes failed with the class) when EC2 cannot be asked.
 */
static long adopt_journaled(struct provider *p, struct ec2_client *c, struct prov_batch *b, char *done)
{
	long adopted = 0;
	size_t i;

	for (i = 0; i < b->n; i++) {
		const struct bj_batch *j;
		struct ec2_instances l = { 0 };
		struct ec2_describe_params dp;
		struct ec2_filter f[2];
		const char *tokv[1];
		burst_err_t err;
		enum ec2_class ec;
		size_t idx, k, m;
		bool by_index = true, in_flight;
		double age, bound;

		if (done[i] || !(j = bj_find(&p->J, b->nodes[i].node, b->nodes[i].attempt, &idx)))
			continue;
		tokv[0] = j->token;
		describe_live_by_tag(&dp, f, "tag:burst:batch", tokv);
		ec = ec2_describe_instances(c, &dp, &l, &err);
		if (ec != EC2_OK) {
			char msg[1200];
			snprintf(msg, sizeof(msg), "aws DescribeInstances (batch %s) before launching %s again: %.700s",
				 j->token, b->nodes[i].node, ec2_detail(err.msg));
			fail_nodes(b, 0, b->n, prov_of_ec2(ec), msg);
			return -1;
		}
		for (k = 0; k < l.n; k++)
			if (l.v[k].launch_index < 0 || (size_t)l.v[k].launch_index >= j->n)
				by_index = false;
		/* every node of that batch that is in this one too */
		for (k = 0; k < l.n && k < j->n; k++) {
			size_t at = by_index ? (size_t)l.v[k].launch_index : k;
			for (m = 0; m < b->n; m++)
				if (!done[m] && b->nodes[m].attempt == j->attempts[at] &&
				    !strcmp(b->nodes[m].node, j->nodes[at])) {
					snprintf(b->nodes[m].instance, sizeof(b->nodes[m].instance), "%s", l.v[k].id ? l.v[k].id : "");
					snprintf(b->nodes[m].address, sizeof(b->nodes[m].address), "%s",
						 l.v[k].private_ip ? l.v[k].private_ip : "");
					b->nodes[m].cls = PROV_OK;
					adopted_note(&b->nodes[m], j->token);
					/* done either way: not launched again here (a
					 * node whose tag failed is retried by the agent) */
					done[m] = 1;
					if (!deliver_tokens(c, b, m, m + 1))
						adopted++;
				}
		}
		ec2_instances_free(&l);
		/* looked up once: not found there means never launched, unless
		 * the batch may still be launching (then looked for again) */
		in_flight = journal_in_flight(j, c, &age, &bound);
		for (m = 0; m < b->n; m++)
			if (!done[m] && bj_find(&p->J, b->nodes[m].node, b->nodes[m].attempt, &k) == j) {
				if (in_flight)
					wait_in_flight(b, m, m + 1, j, age, bound);
				done[m] = in_flight ? 1 : 2;
			}
	}
	return adopted;
}

static size_t aws_launch(struct provider *p, struct prov_batch *b)
{
	enum prov_class cls = PROV_OK;
	struct ec2_client *c;
	burst_err_t err;
	const char *region = b->region ? b->region : p->default_region;
	const char *join = b->join_addr;
	size_t from = 0, got = 0, i, k;
	struct prov_batch rest;
	char *done;
	long adopted;

	if (!b->n)
		return 0;
	c = client_for(p, region, &cls, &err);
	if (!c) {
		char msg[1200];
		snprintf(msg, sizeof(msg), "aws RunInstances %.100s in %.100s: %.900s",
			 b->instance_type ? b->instance_type : "?", region ? region : "?", err.msg);
		fail_nodes(b, 0, b->n, cls, msg);
		return 0;
	}
	done = xcalloc(b->n, 1);
	adopted = adopt_journaled(p, c, b, done);
	if (adopted < 0) {
		free(done);
		return 0;
	}
	/* the others, in their order, as one batch */
	rest = *b;
	rest.nodes = xcalloc(b->n, sizeof(*rest.nodes));
	rest.n = 0;
	for (i = 0; i < b->n; i++)
		if (done[i] != 1)
			rest.nodes[rest.n++] = b->nodes[i];
	while (from < rest.n) {
		size_t to = chunk_end(p, &rest, join, from);
		got += launch_chunk(p, c, &rest, region, join, from, to);
		from = to;
	}
	for (i = 0, k = 0; i < b->n; i++)
		if (done[i] != 1)
			b->nodes[i] = rest.nodes[k++];
	free(rest.nodes);
	free(done);
	return got + (size_t)adopted;
}

/* Instance ids say nothing of their region: a client for each configured
 * region (and any other launched in), so that all can be asked. */
static int all_clients(struct provider *p, enum prov_class *cls, burst_err_t *err)
{
	size_t i;

	for (i = 0; p->regions[i]; i++)
		if (!client_for(p, p->regions[i], cls, err))
			return -1;
	if (!p->rc.n && !client_for(p, NULL, cls, err))
		return -1;
	return 0;
}

static int aws_terminate(struct provider *p, const char *node, const char *instance,
			 enum prov_class *cls, burst_err_t *err)
{
	struct ec2_client *c;
	enum ec2_class ec = EC2_NOT_FOUND;
	const char *ids[1];
	size_t i;

	*cls = PROV_OK;
	if (!instance || !*instance)
		return 0;
	ids[0] = instance;
	if (all_clients(p, cls, err) < 0)
		return -1;
	/* the instance lives in one of the regions we launched in */
	for (i = 0; i < p->rc.n; i++) {
		c = p->rc.clients[i];
		ec = ec2_terminate_instances(c, ids, 1, err);
		if (ec != EC2_NOT_FOUND)
			break;
	}
	if (ec == EC2_OK || ec == EC2_NOT_FOUND) {
		burst_err_clear(err);
		return 0;
	}
	*cls = prov_of_ec2(ec);
	{
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "aws TerminateInstances %.128s (%.128s): %.3000s", instance, node, err->msg);
		burst_err_set(err, "%s", m);
	}
	return -1;
}

/* StopInstances or StartInstances (action), in the region that knows the instance. */
static int aws_stop_start(struct provider *p, const char *action, const char *node, const char *instance,
			  enum prov_class *cls, burst_err_t *err)
{
	enum ec2_class ec = EC2_NOT_FOUND;
	const char *ids[1];
	size_t i;

	*cls = PROV_OK;
	if (!instance || !*instance) {
		*cls = PROV_PERMANENT;
		burst_err_set(err, "aws %s (%.128s): the node has no instance", action, node);
		return -1;
	}
	ids[0] = instance;
	if (all_clients(p, cls, err) < 0)
		return -1;
	for (i = 0; i < p->rc.n; i++) {
		ec = !strcmp(action, "StopInstances") ? ec2_stop_instances(p->rc.clients[i], ids, 1, err)
						      : ec2_start_instances(p->rc.clients[i], ids, 1, err);
		if (ec != EC2_NOT_FOUND)
			break;
	}
	if (ec == EC2_OK) {
		burst_err_clear(err);
		return 0;
	}
	/* an instance no region knows is gone: it can be neither stopped nor started */
	*cls = ec == EC2_NOT_FOUND ? PROV_PERMANENT : prov_of_ec2(ec);
	{
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "aws %s %.128s (%.128s): %.3000s", action, instance, node,
			 ec == EC2_NOT_FOUND ? "no region knows the instance" : err->msg);
		burst_err_set(err, "%s", m);
	}
	return -1;
}

static int aws_stop(struct provider *p, const char *node, const char *instance,
		    enum prov_class *cls, burst_err_t *err)
{
	return aws_stop_start(p, "StopInstances", node, instance, cls, err);
}

static int aws_start(struct provider *p, const char *node, const char *instance,
		     enum prov_class *cls, burst_err_t *err)
{
	return aws_stop_start(p, "StartInstances", node, instance, cls, err);
}

static int aws_exists(struct provider *p, const char *node, const char *instance)
{
	struct ec2_describe_params dp;
	struct ec2_instances l = { 0 };
	enum prov_class cls;
	burst_err_t err;
	const char *ids[1];
	int res = -1;
	size_t i;

	(void)node;
	if (!instance || !*instance)
		return 0;
	if (all_clients(p, &cls, &err) < 0)
		return -1;
	ids[0] = instance;
	memset(&dp, 0, sizeof(dp));
	dp.instance_ids = ids;
	dp.nids = 1;
	for (i = 0; i < p->rc.n; i++) {
		enum ec2_class ec = ec2_describe_instances(p->rc.clients[i], &dp, &l, &err);
		if (ec == EC2_OK && l.n) {
			const char *st = l.v[0].state ? l.v[0].state : "";
			res = strcmp(st, "terminated") && strcmp(st, "shutting-down") ? 1 : 0;
			ec2_instances_free(&l);
			break;
		}
		ec2_instances_free(&l);
		/* NOT_FOUND right after a launch is eventual consistency: cannot tell */
	}
	return res;
}

/* GetConsoleOutput, in the region that knows the instance; its last len - 1 bytes. */
static int aws_console(struct provider *p, const char *node, const char *instance, char *buf, size_t len,
		       char *where, size_t wlen, enum prov_class *cls, burst_err_t *err)
{
	enum ec2_class ec = EC2_NOT_FOUND;
	char *text = NULL;
	size_t i;

	(void)node;
	*cls = PROV_OK;
	buf[0] = '\0';
	snprintf(where, wlen, "aws ec2 get-console-output --latest --instance-id %s", instance ? instance : "?");
	if (!instance || !*instance)
		return 0;
	if (all_clients(p, cls, err) < 0)
		return -1;
	for (i = 0; i < p->rc.n; i++) {
		ec = ec2_console_output(p->rc.clients[i], instance, &text, err);
		if (ec != EC2_NOT_FOUND)
			break;
	}
	if (ec != EC2_OK) {
		*cls = prov_of_ec2(ec);
		return -1;
	}
	if (i < p->rc.n && p->rc.regions[i])
		snprintf(where, wlen, "aws ec2 get-console-output --latest --region %s --instance-id %s",
			 p->rc.regions[i], instance);
	{
		size_t n = strlen(text);
		const char *from = n > len - 1 ? text + n - (len - 1) : text;
		if (from != text && strchr(from, '\n'))
			from = strchr(from, '\n') + 1;
		snprintf(buf, len, "%s", from);
	}
	free(text);
	return 0;
}

/* An EC2 launch time (2026-11-23T17:42:45.000Z) in seconds since the epoch; 0 if unreadable. */
static double launch_seconds(const char *t)
{
	struct tm tm;
	const char *rest;

	memset(&tm, 0, sizeof(tm));
	if (!t || !(rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	return (double)timegm(&tm);
}

static const char *tag_of(const struct ec2_instance *in, const char *key)
{
	size_t i;

	for (i = 0; i < in->ntags; i++)
		if (in->tags[i].key && !strcmp(in->tags[i].key, key))
			return in->tags[i].value;
	return NULL;
}

/*
 * The reconciler's view: DescribeInstances filtered by tag:burst:cluster in
 * every region, terminated and shutting-down ones left out, one page per
 * step (aws_list_step; aws_list makes them all at once). The node and
 * attempt of an instance come from the batch journal (its burst:batch tag,
 * at its launch index). A complete listing is also what compacts the
 * journal: a batch none of whose instances is live any more, sent long
 * enough before the listing's first page, is finished (JOURNAL_GRACE). A
 * batch sent between two pages is never dropped by that listing (sent
 * after it began; a batch sent again has its time of sending moved, see
 * launch_chunk), so an instance launched into a region already listed
 * costs nothing but its absence from this listing.
 */
struct aws_listing {
	struct htab live;        /* the burst:batch tags of the live instances seen,
				  * each once (its key: owned) */
};

static void aws_listing_free(void *v)
{
	struct aws_listing *ls = v;
	const char *k;
	size_t it = 0;

	while (htab_next(&ls->live, &it, &k, NULL))
		free((char *)k);
	htab_free(&ls->live);
	free(ls);
}

/* The listing is complete: the journal's finished batches go. */
static void list_compact(struct provider *p, const struct aws_listing *ls, double listed_at, struct prov_list *out)
{
	const char **regions = xcalloc(p->rc.n + 1, sizeof(char *));
	double grace = JOURNAL_GRACE;
	burst_err_t e;
	long dropped;
	size_t r;

	for (r = 0; r < p->rc.n; r++) {
		double bound = (double)ec2_client_call_bound_ms(p->rc.clients[r]) / 1000.0;
		regions[r] = p->rc.regions[r];
		if (bound > grace)
			grace = bound;
	}
	dropped = bj_drop_finished(&p->J, &ls->live, regions, listed_at, grace, &e);
	if (dropped < 0)
		snprintf(out->note, sizeof(out->note), "%.1000s", e.msg);
	free(regions);
}

static const char *const list_tags[] = { "burst:cluster", "burst:batch" };

static int aws_list_step(struct provider *p, struct prov_list_cursor *cur, struct prov_list *out,
			 enum prov_class *cls, burst_err_t *err)
{
	const char *cl[1];
	struct ec2_describe_params dp;
	struct ec2_filter f[2];
	struct ec2_instances l = { 0 };
	struct aws_listing *ls;
	enum ec2_class ec;
	char *next = NULL;
	size_t i;

	*cls = PROV_OK;
	if (!cur->priv) {
		cur->listed_at = wall_seconds();
		cur->priv = xcalloc(1, sizeof(struct aws_listing));
		cur->priv_free = aws_listing_free;
	}
	ls = cur->priv;
	if (all_clients(p, cls, err) < 0)
		return -1;
	if (cur->region >= p->rc.n)
		goto complete;
	cl[0] = p->cluster;
	describe_live_by_tag(&dp, f, "tag:burst:cluster", cl);
	/* the two tags read below: the others (the join token's, a user's)
	 * are read past, never copied */
	dp.tag_keys = list_tags;
	dp.ntag_keys = 2;
	ec = ec2_describe_instances_page(p->rc.clients[cur->region], &dp, cur->page, &l, &next, err);
	if (ec != EC2_OK) {
		char m[sizeof(err->msg)];
		*cls = prov_of_ec2(ec);
		snprintf(m, sizeof(m), "aws DescribeInstances (tag:burst:cluster=%.128s) in %.64s: %.3000s",
			 p->cluster, p->rc.regions[cur->region], ec2_detail(err->msg));
		burst_err_set(err, "%s", m);
		ec2_instances_free(&l);
		return -1;
	}
	for (i = 0; i < l.n; i++) {
		const struct ec2_instance *in = &l.v[i];
		const char *cluster = tag_of(in, "burst:cluster"), *batch = tag_of(in, "burst:batch");
		const char *st = in->state ? in->state : "";
		struct prov_instance *o;
		const struct bj_batch *j;
		const char *node = NULL;
		int attempt = 0;

		if (!in->id || !strcmp(st, "terminated") || !strcmp(st, "shutting-down"))
			continue;
		if (batch) {
			if (!htab_has(&ls->live, batch, NULL))
				htab_put(&ls->live, xstrdup(batch), NULL);
		}
		if (batch && (j = bj_get(&p->J, batch))) {
			size_t at = in->launch_index >= 0 ? (size_t)in->launch_index : 0;
			if (at < j->n && (in->launch_index >= 0 || j->n == 1)) {
				node = j->nodes[at];
				attempt = j->attempts[at];
			}
		}
		o = prov_list_add(out, in->id, cluster, node, st);
		o->attempt = attempt;
		o->launched = launch_seconds(in->launch_time);
	}
	ec2_instances_free(&l);
	free(cur->page);
	cur->page = next;
	if (!next)
		cur->region++;
	if (cur->region < p->rc.n)
		return 1;
complete:
	/* every region listed whole */
	list_compact(p, ls, cur->listed_at, out);
	return 0;
}

static int aws_list(struct provider *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err)
{
	struct prov_list_cursor cur;
	int rc;

	memset(&cur, 0, sizeof(cur));
	while ((rc = aws_list_step(p, &cur, out, cls, err)) == 1)
		;
	prov_list_cursor_free(&cur);
	return rc;
}

static void aws_fini(struct provider *p)
{
	size_t i;

	if (!p)
		return;
	region_cache_free(&p->rc, free_client);
	for (i = 0; i < p->nsgs; i++)
		free(p->sgs[i]);
	free(p->sgs);
	free(p->name);
	free(p->cluster);
	free(p->endpoint);
	free(p->ca_file);
	free(p->credentials);
	free(p->profile);
	free(p->image_id);
	free(p->launch_template);
	free(p->subnet_id);
	free(p->iam_profile);
	free(p->default_region);
	for (i = 0; p->regions[i]; i++)
		free(p->regions[i]);
	free(p->regions);
	bj_free(&p->J);
	free(p);
}

/*
 * The lease taken: the journal as the agent taken over from left it. A
 * standby read it at its start; a batch written since then and unknown here
 * would count as never sent: its nodes would be launched a second time (a
 * batch made up of other nodes has another ClientToken, and moto honours
 * none), and the next compaction would write its entries away.
 */
static void aws_activate(struct provider *p)
{
	char *path = xstrdup(p->J.path);

	bj_free(&p->J);
	bj_open(&p->J, path);
	p->J.fence = journal_fence;
	free(path);
}

const struct provider_ops provider_aws = {
	.type = "aws",
	.init = aws_init,
	.launch = aws_launch,
	.terminate = aws_terminate,
	.stop = aws_stop,
	.start = aws_start,
	.exists = aws_exists,
	.list = aws_list,
	.list_step = aws_list_step,
	.console = aws_console,
	.activate = aws_activate,
	.fini = aws_fini,
};

/*
 * provenance_cmd.c - burstctl provenance (see provenance_cmd.h, burstctl(8)).
 *
 *   burstctl provenance NODE [--all] [--json]
 *       the newest provenance record of NODE (every record with --all) and
 *       the agent's decision on it
 *   burstctl provenance --job JOBID [--json]
 *       for every node of the job, the admitted record in force when the
 *       job started (job nodes and start time from slurmctld)
 *   burstctl provenance --job-nodes HOSTLIST --job-start EPOCH [--json]
 *       the same for given nodes and start time (a testing aid)
 *   ... --attestation [--key KEY] [-o FILE]
 *       signed in-toto statements (DSSE) of the acceptance results and the
 *       admission decision, as one JSON array of envelopes
 *
 * The records are read from StateDir/agent.db read-only (lib/state/state.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "attest.h"
#include "config.h"
#include "hostlist.h"
#include "provenance_cmd.h"
#include "slurm_compat.h"
#include "verb.h"
#include "state.h"
#include "views.h"
#include "statedir.h"
#include "strutil.h"

#define EXIT_OK 0
#define EXIT_NOTFOUND 1
#define EXIT_USAGE 2

#define DEFAULT_CONF "/etc/slurm/burst.conf"
#define VERIFIER_ID "urn:slurm-burst:burst-agent:v1"
#define JOB_MAX_NODES 100000

const char provenance_cmd_usage[] =
"  provenance NODE          the node's newest provenance record and the agent's decision\n"
"                           (--all: every record of the node)\n"
"  provenance --job JOBID   for each node of the job, the admitted record in force when\n"
"                           the job started; --attestation [--key KEY] [-o FILE]: as\n"
"                           signed in-toto attestations (a JSON array of DSSE envelopes)\n";

static const char *prog = "burstctl";

struct popts {
	const char *config;
	const char *job, *job_nodes, *job_start;
	const char *key, *output;
	bool json, all, attestation;
};

struct ctx {
	const struct popts *o;
	struct burst_config *cfg;
	char *state_dir;
	struct state_db *db;
	EVP_PKEY *key;
	json_object *envelopes;      /* --attestation: the signed envelopes */
};

/* One node of a job and the time the job (or its component) started there. */
struct job_node {
	char *node;
	double start;
	long job_id;
};

/* ---- reading records ---- */

static void fmt_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The member at a dotted path ("kernel.release"), or NULL. */
static json_object *jget(json_object *o, const char *path)
{
	char key[64];
	const char *dot;

	while (o && *path) {
		size_t n;
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key) || !json_object_is_type(o, json_type_object))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (dot ? 1 : 0);
	}
	return o;
}

/* The string at path, or NULL when absent, null or not a string. */
static const char *jstr(json_object *o, const char *path)
{
	json_object *v = jget(o, path);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* The acceptance results of a record (an array), or NULL. */
static json_object *acceptance_of(json_object *rec)
{
	json_object *a = jget(rec, "acceptance");
	return a && json_object_is_type(a, json_type_array) ? a : NULL;
}

static bool result_passed(json_object *r)
{
	json_object *v = jget(r, "passed");
	return v && json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* "8 x A100-40GB (ampere)[, 2 x ...]" of the accelerators into sb. */
static void describe_accelerators(json_object *rec, struct strbuf *sb)
{
	json_object *devs = jget(rec, "accelerators.devices");
	size_t n = devs && json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
	bool *done = n ? xcalloc(n, sizeof(*done)) : NULL;
	size_t i, j, groups = 0;

	for (i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(devs, i);
		const char *model = or_dash(jstr(d, "model")), *arch = or_dash(jstr(d, "architecture"));
		size_t count = 0;
		if (done[i])
			continue;
		for (j = i; j < n; j++) {
			json_object *e = json_object_array_get_idx(devs, j);
			if (!done[j] && !strcmp(model, or_dash(jstr(e, "model"))) &&
			    !strcmp(arch, or_dash(jstr(e, "architecture")))) {
				done[j] = true;
				count++;
			}
		}
		sb_addf(sb, "%s%zu x %s (%s)", groups++ ? ", " : "", count, model, arch);
	}
	if (!groups)
		sb_add(sb, "none");
	free(done);
}

/* The distinct drivers of the accelerators ("nvidia"), or "-". */
static void describe_drivers(json_object *rec, struct strbuf *sb)
{
	json_object *devs = jget(rec, "accelerators.devices");
	size_t n = devs && json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
	size_t i, j, added = 0;

	for (i = 0; i < n; i++) {
		const char *drv = jstr(json_object_array_get_idx(devs, i), "driver");
		bool seen = false;
		if (!drv || !*drv)
			continue;
		for (j = 0; j < i && !seen; j++) {
			const char *d2 = jstr(json_object_array_get_idx(devs, j), "driver");
			seen = d2 && !strcmp(d2, drv);
		}
		if (!seen)
			sb_addf(sb, "%s%s", added++ ? ", " : "", drv);
	}
	if (!added)
		sb_add(sb, "-");
}

/* The package versions whose name contains one of words, "name version, ...". */
static void describe_packages(json_object *rec, const char *const *words, struct strbuf *sb)
{
	json_object *pk = jget(rec, "software.packages");
	size_t added = 0, i;

	if (pk && json_object_is_type(pk, json_type_object)) {
		json_object_object_foreach(pk, name, ver) {
			bool match = false;
			for (i = 0; words[i] && !match; i++)
				match = strstr(name, words[i]) != NULL;
			if (match && ver && json_object_is_type(ver, json_type_string))
				sb_addf(sb, "%s%s %s", added++ ? ", " : "", name, json_object_get_string(ver));
		}
	}
	if (!added)
		sb_add(sb, "-");
}

static void print_line(const char *label, struct strbuf *sb)
{
	printf("%-15s%s\n", label, sb->s ? sb->s : "");
	sb_free(sb);
	sb_init(sb);
}

/* The instance type of a record: its identity, else the node's row when the
 * row is of the same instance. Caller frees. */
static char *instance_type_of(struct ctx *c, const struct record_rec *r, json_object *rec)
{
	struct node_rec nr;
	burst_err_t err;
	char *t = NULL;

	if (jstr(rec, "identity.instance_type"))
		return xstrdup(jstr(rec, "identity.instance_type"));
	if (state_node_get(c->db, r->node, &nr, &err) == 1) {
		if (nr.instance_type && nr.instance && r->instance && !strcmp(nr.instance, r->instance))
			t = xstrdup(nr.instance_type);
		state_node_clear(&nr);
	}
	return t;
}

static void print_acceptance(json_object *rec, const char *indent)
{
	json_object *acc = acceptance_of(rec);
	size_t n = acc ? json_object_array_length(acc) : 0, i, pass = 0;

	for (i = 0; i < n; i++)
		pass += result_passed(json_object_array_get_idx(acc, i));
	if (!acc) {
		printf("%s%-15snone recorded\n", indent, "acceptance:");
		return;
	}
	printf("%s%-15s%zu passed, %zu failed\n", indent, "acceptance:", pass, n - pass);
	for (i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(acc, i);
		const char *kind = jstr(t, "kind"), *reason = jstr(t, "reason");
		bool ok = result_passed(t);
		printf("%s  %s  %s", indent, ok ? "PASS" : "FAIL", or_dash(jstr(t, "name")));
		if (kind)
			printf(" [%s]", kind);
		if (!ok || (reason && *reason))
			printf(": %s", reason && *reason ? reason : "no reason given");
		printf("\n");
	}
}

/* The human summary of one record. */
static void print_record(struct ctx *c, const struct record_rec *r, json_object *rec)
{
	static const char *const runtime_w[] = { "charliecloud", "apptainer", "singularity",
		"podman", "enroot", "docker", NULL };
	static const char *const slurm_w[] = { "slurm", NULL };
	static const char *const pmix_w[] = { "pmix", NULL };
	static const char *const mpi_w[] = { "mpi", "mpich", NULL };
	struct strbuf sb;
	char when[32], *itype = instance_type_of(c, r, rec);
	json_object *v, *ib;
	size_t i, nib;

	sb_init(&sb);
	fmt_time(r->time, when, sizeof(when));
	printf("%-15s%s\n", "node:", r->node);
	printf("%-15s%s (record %lld)\n", "time:", when, r->id);
	printf("%-15s%s\n", "decision:", r->decision);
	sb_addf(&sb, "%s", or_dash(r->instance));
	if (itype || jstr(rec, "identity.provider") || jstr(rec, "identity.region"))
		sb_addf(&sb, " (%s%s%s%s%s)", or_dash(itype),
			jstr(rec, "identity.provider") ? ", " : "", jstr(rec, "identity.provider") ?
			jstr(rec, "identity.provider") : "",
			jstr(rec, "identity.region") ? ", " : "", jstr(rec, "identity.region") ?
			jstr(rec, "identity.region") : "");
	print_line("instance:", &sb);
	printf("%-15s%s\n", "provenance id:", r->provenance_id);
	if (!rec) {
		printf("%-15s%s\n", "record:", "not JSON (see --json)");
		goto out;
	}
	printf("%-15s%s (build-id %s)\n", "kernel:", or_dash(jstr(rec, "kernel.release")),
	       or_dash(jstr(rec, "kernel.build_id")));
	printf("%-15s%s\n", "os:", or_dash(jstr(rec, "os.pretty_name")));
	sb_addf(&sb, "%s", or_dash(jstr(rec, "cpu.model")));
	if ((v = jget(rec, "cpu.threads")) && json_object_is_type(v, json_type_int))
		sb_addf(&sb, ", %d threads", json_object_get_int(v));
	if ((v = jget(rec, "cpu.cores")) && json_object_is_type(v, json_type_int))
		sb_addf(&sb, ", %d cores", json_object_get_int(v));
	if ((v = jget(rec, "cpu.sockets")) && json_object_is_type(v, json_type_int))
		sb_addf(&sb, ", %d sockets", json_object_get_int(v));
	print_line("cpu:", &sb);
	if ((v = jget(rec, "memory.total_bytes")) && json_object_is_type(v, json_type_int))
		sb_addf(&sb, "%.1f GiB", (double)json_object_get_int64(v) / (1024.0 * 1024 * 1024));
	else
		sb_add(&sb, "-");
	print_line("memory:", &sb);
	describe_accelerators(rec, &sb);
	print_line("accelerators:", &sb);
	describe_drivers(rec, &sb);
	print_line("driver:", &sb);
	ib = jget(rec, "interconnect.infiniband");
	nib = ib && json_object_is_type(ib, json_type_array) ? json_object_array_length(ib) : 0;
	if (!nib)
		sb_add(&sb, "none");
	for (i = 0; i < nib; i++) {
		json_object *p = json_object_array_get_idx(ib, i), *port = jget(p, "port");
		sb_addf(&sb, "%s%s/%d %s %s", i ? ", " : "", or_dash(jstr(p, "device")),
			port ? json_object_get_int(port) : 0, or_dash(jstr(p, "rate")),
			or_dash(jstr(p, "state")));
	}
	print_line("infiniband:", &sb);
	printf("%-15s%s\n", "image:", or_dash(jstr(rec, "identity.image")));
	if (jstr(rec, "software.ch_run"))
		sb_addf(&sb, "ch-run %s; ", jstr(rec, "software.ch_run"));
	describe_packages(rec, runtime_w, &sb);
	print_line("container:", &sb);
	if (jstr(rec, "software.slurmd"))
		sb_addf(&sb, "%s; ", jstr(rec, "software.slurmd"));
	describe_packages(rec, slurm_w, &sb);
	print_line("slurm:", &sb);
	describe_packages(rec, pmix_w, &sb);
	print_line("pmix:", &sb);
	describe_packages(rec, mpi_w, &sb);
	print_line("mpi:", &sb);
	print_acceptance(rec, "");
out:
	sb_free(&sb);
	free(itype);
}

/* The record as JSON with the agent's metadata (the record itself under "record"). */
static json_object *record_json(struct ctx *c, const struct record_rec *r, json_object *rec)
{
	json_object *o = json_object_new_object();
	char when[32], *itype = instance_type_of(c, r, rec);

	fmt_time(r->time, when, sizeof(when));
	json_object_object_add(o, "node", json_object_new_string(r->node));
	json_object_object_add(o, "record_id", json_object_new_int64(r->id));
	json_object_object_add(o, "time", json_object_new_double(r->time));
	json_object_object_add(o, "time_utc", json_object_new_string(when));
	json_object_object_add(o, "decision", json_object_new_string(r->decision));
	json_object_object_add(o, "admitted", json_object_new_boolean(!strcmp(r->decision, "admitted")));
	json_object_object_add(o, "instance", r->instance ? json_object_new_string(r->instance) : NULL);
	json_object_object_add(o, "instance_type", itype ? json_object_new_string(itype) : NULL);
	json_object_object_add(o, "provenance_id", json_object_new_string(r->provenance_id));
	json_object_object_add(o, "record", rec ? json_object_get(rec) : json_object_new_string(r->record));
	free(itype);
	return o;
}

/* ---- attestations ---- */

static int add_envelope(struct ctx *c, const char *stmt)
{
	burst_err_t err;
	char *env = attest_envelope_sign(ATTEST_PAYLOAD_TYPE, stmt, strlen(stmt), c->key, &err);
	json_object *e;

	if (!env) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	e = json_tokener_parse(env);
	free(env);
	if (!e) {
		fprintf(stderr, "%s: internal error: a signed envelope is not JSON\n", prog);
		return -1;
	}
	json_object_array_add(c->envelopes, e);
	return 0;
}

/*
 * The statements of one record: test-result of its acceptance results (when
 * it has any) and the simple verification result of the decision.
 */
static int attest_record(struct ctx *c, const struct record_rec *r, json_object *rec)
{
	struct attest_subject subj = { r->node, r->instance ? r->instance : "none", r->provenance_id };
	json_object *acc = acceptance_of(rec);
	size_t n = acc ? json_object_array_length(acc) : 0, i, k = 0;
	struct attest_test *t = n ? xcalloc(n, sizeof(*t)) : NULL;
	char *stmt = NULL;
	burst_err_t err;
	int rc = -1;

	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(acc, i);
		if (!jstr(x, "name") || !*jstr(x, "name")) {
			fprintf(stderr, "%s: %s record %lld: acceptance result #%zu has no name; "
				"not attested\n", prog, r->node, r->id, i + 1);
			continue;
		}
		t[k].name = jstr(x, "name");
		t[k].passed = result_passed(x);
		k++;
	}
	if (k > 0) {
		stmt = attest_statement_test_result(&subj, t, k, NULL, &err);
		if (!stmt) {
			fprintf(stderr, "%s: %s: %s\n", prog, r->node, err.msg);
			goto out;
		}
		if (add_envelope(c, stmt) < 0)
			goto out;
		free(stmt);
	}
	stmt = attest_statement_verification(&subj, VERIFIER_ID, NULL, !strcmp(r->decision, "admitted"),
					     t, k, (time_t)r->time, &err);
	if (!stmt) {
		fprintf(stderr, "%s: %s: %s\n", prog, r->node, err.msg);
		goto out;
	}
	if (add_envelope(c, stmt) < 0)
		goto out;
	rc = 0;
out:
	free(stmt);
	free(t);
	return rc;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	fprintf(f, "%s\n", text);
	if (fflush(f) != 0 || ferror(f) || (f != stdout && fclose(f) != 0)) {
		fprintf(stderr, "%s: %s: write error: %s\n", prog, path ? path : "stdout", strerror(errno));
		return -1;
	}
	return 0;
}

static const char *to_json(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/*
 * Print out (JSON or text, done by the callers) unless the attestation goes
 * to stdout; write the attestation. Returns whether the caller prints.
 */
static bool prints_report(const struct ctx *c)
{
	return !c->o->attestation || (c->o->output && strcmp(c->o->output, "-"));
}

static int finish_attestation(struct ctx *c)
{
	if (!c->o->attestation)
		return 0;
	if (write_text(c->o->output, to_json(c->envelopes)) < 0)
		return -1;
	if (c->o->output && strcmp(c->o->output, "-"))
		fprintf(stderr, "%s: %zu signed attestations written to %s (check them with "
			"burstctl verify %s --key PUBKEY)\n", prog,
			json_object_array_length(c->envelopes), c->o->output, c->o->output);
	return 0;
}

/* ---- provenance NODE ---- */

static int cmd_node(struct ctx *c, const char *node)
{
	struct record_query q = { node, 0, false, !c->o->all };
	struct record_rec *v = NULL;
	json_object *arr = NULL, *rec;
	size_t n = 0, i;
	burst_err_t err;
	int rc = EXIT_USAGE;

	if (state_records(c->db, &q, &v, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return EXIT_USAGE;
	}
	if (n == 0) {
		fprintf(stderr, "%s: no provenance record of node %s in the agent's state "
			"(the node has not joined yet, or it is not a burst node; see burstctl nodes)\n",
			prog, node);
		return EXIT_NOTFOUND;
	}
	if (c->o->json)
		arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		rec = json_tokener_parse(v[i].record);
		if (c->o->attestation && attest_record(c, &v[i], rec) < 0) {
			json_object_put(rec);
			goto out;
		}
		if (arr)
			json_object_array_add(arr, record_json(c, &v[i], rec));
		else if (prints_report(c) && c->o->all) {
			char when[32];
			json_object *acc = acceptance_of(rec);
			size_t k, na = acc ? json_object_array_length(acc) : 0, pass = 0;
			for (k = 0; k < na; k++)
				pass += result_passed(json_object_array_get_idx(acc, k));
			fmt_time(v[i].time, when, sizeof(when));
			if (i == 0)
				printf("%-6s %-20s %-20s %-16s %-22s %-12s %s\n", "RECORD", "TIME", "INSTANCE",
				       "PROVENANCE_ID", "KERNEL", "ACCEPTANCE", "DECISION");
			printf("%-6lld %-20s %-20s %-16.16s %-22s %zu/%-10zu %s\n", v[i].id, when,
			       or_dash(v[i].instance), v[i].provenance_id,
			       or_dash(jstr(rec, "kernel.release")), pass, na, v[i].decision);
		} else if (prints_report(c))
			print_record(c, &v[i], rec);
		json_object_put(rec);
	}
	if (arr && prints_report(c))
		printf("%s\n", to_json(c->o->all ? arr : json_object_array_get_idx(arr, 0)));
	if (finish_attestation(c) < 0)
		goto out;
	rc = EXIT_OK;
out:
	json_object_put(arr);
	state_records_free(v, n);
	return rc;
}

/* ---- provenance --job ---- */

/*
 * For each of the n job nodes, the newest admitted record written before
 * the end of the second the job started there (Slurm keeps whole seconds; a
 * node is admitted before its slurmd registers, so before any job starts on
 * it). label names the job in the output.
 */
static int show_job(struct ctx *c, const char *label, const struct job_node *jn, size_t n)
{
	json_object *top = NULL, *nodes = NULL;
	size_t i, found = 0;
	int rc = EXIT_USAGE;

	if (c->o->json) {
		top = json_object_new_object();
		nodes = json_object_new_array();
		json_object_object_add(top, "job", json_object_new_string(label));
	}
	for (i = 0; i < n; i++) {
		struct record_query q = { jn[i].node, floor(jn[i].start) + 1 - 1e-6, true, true };
		struct record_rec *v = NULL;
		size_t nv = 0;
		json_object *rec = NULL;
		char when[32];
		burst_err_t err;

		if (state_records(c->db, &q, &v, &nv, &err) < 0) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			goto out;
		}
		fmt_time(jn[i].start, when, sizeof(when));
		if (nv)
			rec = json_tokener_parse(v[0].record);
		if (nodes) {
			json_object *e = nv ? record_json(c, &v[0], rec) : json_object_new_object();
			if (!nv) {
				json_object_object_add(e, "node", json_object_new_string(jn[i].node));
				json_object_object_add(e, "record", NULL);
			}
			json_object_object_add(e, "job_id", json_object_new_int64(jn[i].job_id));
			json_object_object_add(e, "job_start", json_object_new_int64((int64_t)jn[i].start));
			json_object_array_add(nodes, e);
		} else if (prints_report(c)) {
			if (!nv) {
				printf("%s: no admitted provenance record before the job started at %s "
				       "(not a burst node?)\n", jn[i].node, when);
			} else {
				struct strbuf sb;
				char *itype = instance_type_of(c, &v[0], rec), part[40] = "";
				sb_init(&sb);
				if (jn[i].job_id)
					snprintf(part, sizeof(part), " (job %ld)", jn[i].job_id);
				printf("%s%s: instance %s (%s), provenance %s, admitted %s\n", jn[i].node,
				       part, or_dash(v[0].instance), or_dash(itype), v[0].provenance_id,
				       (fmt_time(v[0].time, when, sizeof(when)), when));
				printf("  %-15s%s (build-id %s)\n", "kernel:", or_dash(jstr(rec, "kernel.release")),
				       or_dash(jstr(rec, "kernel.build_id")));
				describe_accelerators(rec, &sb);
				printf("  %-15s%s\n", "accelerators:", sb.s ? sb.s : "");
				sb_free(&sb);
				sb_init(&sb);
				{
					static const char *const rt[] = { "charliecloud", "apptainer",
						"singularity", "podman", "enroot", "docker", NULL };
					describe_packages(rec, rt, &sb);
				}
				printf("  %-15s%s; runtime %s%s%s\n", "image:", or_dash(jstr(rec, "identity.image")),
				       jstr(rec, "software.ch_run") ? jstr(rec, "software.ch_run") : "",
				       jstr(rec, "software.ch_run") ? ", " : "", sb.s ? sb.s : "");
				sb_free(&sb);
				print_acceptance(rec, "  ");
				free(itype);
			}
		}
		if (nv) {
			found++;
			if (c->o->attestation && attest_record(c, &v[0], rec) < 0) {
				json_object_put(rec);
				state_records_free(v, nv);
				goto out;
			}
		}
		json_object_put(rec);
		state_records_free(v, nv);
	}
	if (top && prints_report(c)) {
		json_object_object_add(top, "nodes", json_object_get(nodes));
		printf("%s\n", to_json(top));
	}
	if (!found)
		fprintf(stderr, "%s: job %s: none of its %zu nodes has an admitted provenance record "
			"(it ran on no burst node?)\n", prog, label, n);
	if (finish_attestation(c) < 0)
		goto out;
	rc = EXIT_OK;
out:
	json_object_put(nodes);
	json_object_put(top);
	return rc;
}

static void job_nodes_free(struct job_node *jn, size_t n)
{
	size_t i;

	for (i = 0; jn && i < n; i++)
		free(jn[i].node);
	free(jn);
}

/* Append the nodes of hostlist expr, started at start, to *jn. 0, or -1 + message. */
static int job_nodes_add(const char *expr, double start, long job_id, struct job_node **jn,
			 size_t *n)
{
	struct hostlist hl = { 0 };
	burst_err_t err;
	size_t i;

	if (hostlist_expand(expr, &hl, JOB_MAX_NODES, &err) < 0) {
		fprintf(stderr, "%s: node list '%s': %s\n", prog, expr, err.msg);
		hostlist_free(&hl);
		return -1;
	}
	*jn = xrealloc(*jn, (*n + hl.n) * sizeof(**jn));
	for (i = 0; i < hl.n; i++) {
		(*jn)[*n].node = hl.names[i];
		(*jn)[*n].start = start;
		(*jn)[*n].job_id = job_id;
		hl.names[i] = NULL;
		(*n)++;
	}
	hostlist_free(&hl);
	return 0;
}

/*
 * The nodes and start times of job id from slurmctld (running or completed
 * jobs; a job array's or heterogeneous job's every started part). Returns
 * 0, EXIT_NOTFOUND when Slurm does not know the job, or EXIT_USAGE.
 */
static int job_from_slurm(const char *id, struct job_node **jn, size_t *n)
{
	job_info_msg_t *msg = NULL;
	char *end;
	unsigned long jobid;
	uint32_t i;
	size_t pending = 0, tasks = 0;
	unsigned long task = 0;
	bool is_task;
	int rc = EXIT_USAGE;

	errno = 0;
	jobid = strtoul(id, &end, 10);
	is_task = *end == '_';
	if (is_task) {   /* JOBID_TASK: a task of a job array */
		char *task_end;
		if (end[1] < '0' || end[1] > '9' ||
		    (task = strtoul(end + 1, &task_end, 10), *task_end) || task >= UINT32_MAX)
			is_task = false, end = end + 1;
	}
	if (errno || (*end && !is_task) || end == id || jobid == 0 || jobid > UINT32_MAX) {
		fprintf(stderr, "%s: --job takes a job id (JOBID, or JOBID_TASK for a task of a "
			"job array), not '%s'\n", prog, id);
		return EXIT_USAGE;
	}
	/* libslurm retries a missing slurm.conf for a minute, then exits: say it now */
	{
		const char *sc = getenv("SLURM_CONF");
		if (sc && *sc ? access(sc, R_OK) != 0 :
		    access("/etc/slurm/slurm.conf", R_OK) != 0 &&
		    access("/run/slurm/conf/slurm.conf", R_OK) != 0) {
			fprintf(stderr, "%s: --job needs Slurm's configuration: cannot read %s; set "
				"SLURM_CONF to the cluster's slurm.conf\n", prog,
				sc && *sc ? sc : "/etc/slurm/slurm.conf");
			return EXIT_USAGE;
		}
	}
	slurm_init(NULL);
	if (slurm_load_job(&msg, (uint32_t)jobid, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
		int e = burst_slurm_errno();
		if (e == ESLURM_INVALID_JOB_ID) {
			fprintf(stderr, "%s: Slurm does not know job %lu: it never existed, or it ended "
				"longer ago than MinJobAge (300 s by default) and slurmctld forgot it. "
				"Find its nodes and start time in the accounting (sacct -j %lu -X -o "
				"NodeList,Start) and look at each node's history with "
				"burstctl provenance NODE --all\n", prog, jobid, jobid);
			rc = EXIT_NOTFOUND;
		} else
			fprintf(stderr, "%s: cannot load job %lu from slurmctld: %s (is slurmctld "
				"running, and SLURM_CONF right?)\n", prog, jobid, slurm_strerror(e));
		goto out;
	}
	/* JOBID of an array gives every task; JOBID_TASK the one task */
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		if (is_task && (j->array_job_id != jobid || j->array_task_id != task))
			continue;
		tasks++;
		if ((j->job_state & JOB_STATE_BASE) == JOB_PENDING || !j->nodes || !*j->nodes ||
		    j->start_time == 0) {
			pending++;
			continue;
		}
		if (job_nodes_add(j->nodes, (double)j->start_time, (long)j->job_id, jn, n) < 0)
			goto out;
	}
	if (is_task && tasks == 0) {
		fprintf(stderr, "%s: Slurm knows no task %lu of job array %lu (see squeue -r -j %lu)\n",
			prog, task, jobid, jobid);
		rc = EXIT_NOTFOUND;
		goto out;
	}
	if (*n == 0) {
		fprintf(stderr, "%s: job %s has not started on any node yet%s\n", prog, id,
			pending ? " (it is pending)" : "");
		rc = EXIT_NOTFOUND;
		goto out;
	}
	rc = 0;
out:
	slurm_free_job_info_msg(msg);
	return rc;
}

static int cmd_job(struct ctx *c)
{
	struct job_node *jn = NULL;
	size_t n = 0;
	int rc;

	if (c->o->job) {
		rc = job_from_slurm(c->o->job, &jn, &n);
		if (rc == 0)
			rc = show_job(c, c->o->job, jn, n);
	} else {
		char *end;
		double start;
		errno = 0;
		start = strtod(c->o->job_start, &end);
		if (errno || *end || end == c->o->job_start || start <= 0) {
			fprintf(stderr, "%s: --job-start takes seconds since the epoch, not '%s'\n",
				prog, c->o->job_start);
			return EXIT_USAGE;
		}
		rc = job_nodes_add(c->o->job_nodes, start, 0, &jn, &n) < 0 ? EXIT_USAGE :
			show_job(c, "(given)", jn, n);
	}
	job_nodes_free(jn, n);
	return rc;
}

/* ---- main ---- */

static int ctx_open(struct ctx *c, const struct popts *o)
{
	const char *conf = o->config;
	struct strbuf sb;
	burst_err_t err;
	char *path;

	memset(c, 0, sizeof(*c));
	c->o = o;
	if (!conf) {
		const char *env = getenv("BURST_CONF");
		if (env && *env)
			conf = env;
		else if (access(DEFAULT_CONF, R_OK) == 0)
			conf = DEFAULT_CONF;
	}
	if (conf) {
		c->cfg = config_load(conf, &err);
		if (!c->cfg) {
			fprintf(stderr, "%s\n%s: %s has errors (fix them, then run burstctl check-config)\n",
				err.msg, prog, conf);
			return -1;
		}
	}
	c->state_dir = xstrdup(c->cfg && c->cfg->state_dir ? c->cfg->state_dir : BURST_DEFAULT_STATE_DIR);
	sb_init(&sb);
	sb_addf(&sb, "%s/agent.db", c->state_dir);
	path = sb_take(&sb);
	/* records others could have written are not the agent's */
	if (statedir_check(c->state_dir, geteuid(), STATEDIR_ANY_OWNER, 0, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		free(path);
		return -1;
	}
	c->db = state_view_open(path, NULL, &err);
	free(path);
	if (!c->db) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	if (o->attestation) {
		char *kp = NULL;
		if (!o->key) {
			sb_init(&sb);
			sb_addf(&sb, "%s/attest.key", c->state_dir);
			kp = sb_take(&sb);
		}
		if (attest_key_load_or_create(o->key ? o->key : kp, &c->key, &err) < 0) {
			fprintf(stderr, "%s: %s\n%s: the attestation key is the agent's: run burstctl as "
				"root, or give --key KEY\n", prog, err.msg, prog);
			free(kp);
			return -1;
		}
		free(kp);
		c->envelopes = json_object_new_array();
	}
	return 0;
}

static void ctx_close(struct ctx *c)
{
	state_close(c->db);
	config_free(c->cfg);
	free(c->state_dir);
	EVP_PKEY_free(c->key);
	json_object_put(c->envelopes);
	memset(c, 0, sizeof(*c));
}

int provenance_cmd_main(const char *verb, int argc, char **argv)
{
	enum { O_ALL = 256, O_JOB, O_JOB_NODES, O_JOB_START, O_ATTEST };
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, O_ALL },
		{ "job", required_argument, NULL, O_JOB },
		{ "job-nodes", required_argument, NULL, O_JOB_NODES },
		{ "job-start", required_argument, NULL, O_JOB_START },
		{ "attestation", no_argument, NULL, O_ATTEST },
		{ "key", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	/* burstctl's global options: --config and --json ours, the others of no use here */
	struct ctl_getopt g;
	struct ctl_globals gl;
	struct popts o;
	struct ctx c;
	char **av = argv;
	int ac = argc, ch, rc = EXIT_USAGE, nargs;

	(void)verb;
	ctl_getopt_init(&g, longopts, "k:o:", CTL_G(CONFIG) | CTL_G(CATALOG_DIR) | CTL_G(PROVIDER) |
			CTL_G(LIMIT) | CTL_G(LIBEXECDIR) | CTL_G(EXPLAIN) | CTL_G(CATALOG) |
			CTL_G(NODES_ONLY) | CTL_G(JSON) | CTL_G(HELP));
	memset(&o, 0, sizeof(o));
	memset(&c, 0, sizeof(c));
	memset(&gl, 0, sizeof(gl));
	optind = 1;
	while ((ch = getopt_long(ac, av, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case O_ALL: o.all = true; break;
		case O_JOB: o.job = optarg; break;
		case O_JOB_NODES: o.job_nodes = optarg; break;
		case O_JOB_START: o.job_start = optarg; break;
		case O_ATTEST: o.attestation = true; break;
		case 'k': o.key = optarg; break;
		case 'o': o.output = optarg; break;
		case 'j': o.json = true; break;
		case 'c': o.config = optarg; break;
		case 'h':
			printf("usage: burstctl provenance NODE [--all] [--json] [--attestation [--key KEY] "
			       "[-o FILE]]\n       burstctl provenance --job JOBID [--json] [--attestation "
			       "[--key KEY] [-o FILE]]\n%sSee burstctl(8), PROVENANCE.\n",
			       provenance_cmd_usage);
			rc = EXIT_OK;
			goto out;
		default:
			if (ctl_global(ch, optarg, &gl))
				break;
			fprintf(stderr, "Try 'burstctl provenance --help'.\n");
			goto out;
		}
	}
	nargs = ac - optind;
	if (!!o.job_nodes != !!o.job_start) {
		fprintf(stderr, "%s: --job-nodes and --job-start go together\n", prog);
		goto out;
	}
	if ((o.job || o.job_nodes) ? (nargs != 0 || o.all || (o.job && o.job_nodes)) : nargs != 1) {
		fprintf(stderr, "%s: usage: burstctl provenance NODE [--all] [--json], or "
			"burstctl provenance --job JOBID [--json]\n", prog);
		goto out;
	}
	if ((o.key || o.output) && !o.attestation) {
		fprintf(stderr, "%s: --key and --output go with --attestation\n", prog);
		goto out;
	}
	if (o.attestation && o.all) {
		fprintf(stderr, "%s: --attestation attests the newest record; not with --all\n", prog);
		goto out;
	}
	if (ctx_open(&c, &o) < 0)
		goto out;
	rc = (o.job || o.job_nodes) ? cmd_job(&c) : cmd_node(&c, av[optind]);
out:
	ctx_close(&c);
	return rc;
}

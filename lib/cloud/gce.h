/*
 * gce.h - a small client of Google's Compute Engine API (v1, REST/JSON),
 * what the gcp driver and the catalog refresh ask of it.
 *
 * Requests go to ENDPOINT/compute/v1/projects/PROJECT/... (ENDPOINT
 * https://compute.googleapis.com unless Endpoint= names another) with the
 * access token of a gce_auth (gce_auth.h): a 401 gets one new token and
 * one retry. Every call returns a class (GCE_OK = 0) and, on failure,
 * fills err with a message for an admin: the request (what), the HTTP
 * status, Google's reason and message. Google's text (an error message, an
 * operation's errors) has its control characters written out where it
 * enters (str_escape_ctl), before any caller sees it.
 *
 * How Google's answers are classed (gce_classify), from the reason of an
 * error (errors[].reason: rateLimitExceeded, quotaExceeded, ...) or the
 * code of an operation's error (ZONE_RESOURCE_POOL_EXHAUSTED, ...):
 *   - a rate quota (403 rateLimitExceeded / userRateLimitExceeded, 429,
 *     "Rate Limit Exceeded"; refilled each minute): GCE_THROTTLED;
 *   - no capacity in a zone (ZONE_RESOURCE_POOL_EXHAUSTED[_WITH_DETAILS],
 *     RESOURCE_POOL_EXHAUSTED, "does not have enough resources", also as
 *     a 503): GCE_CAPACITY: the next zone, type or provider;
 *   - a resource quota (QUOTA_EXCEEDED, quotaExceeded; CPUS_PER_VM_FAMILY,
 *     ...): GCE_QUOTA: the family cools down in that region;
 *   - 401 and other 403s: GCE_AUTH; 404: GCE_NOT_FOUND; 409 (a name in
 *     use): GCE_EXISTS; other 4xx: GCE_PERMANENT; 5xx, 412 and no answer:
 *     GCE_TRANSIENT.
 *
 * Not thread-safe: one client per thread.
 */
#ifndef BURST_GCE_H
#define BURST_GCE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "burst_err.h"

#define GCE_ENDPOINT_DEFAULT "https://compute.googleapis.com"

/* the labels every VM the driver makes carries (label keys and values:
 * at most 63 of [a-z0-9_-]) */
#define GCE_LABEL_CLUSTER "burst-cluster"
#define GCE_LABEL_PROVIDER "burst-provider"
#define GCE_LABEL_NODE "burst-node"
#define GCE_LABEL_ATTEMPT "burst-attempt"
#define GCE_LABEL_BATCH "burst-batch"
/* the metadata items the driver sets on each VM once it exists (labels
 * are the whole bulk insert's): its node, attempt and join token; a VM
 * without a burst-node label takes its node and attempt from them */
#define GCE_META_NODE "burst-node"
#define GCE_META_ATTEMPT "burst-attempt"
#define GCE_META_TOKEN "burst-join-token"

enum gce_class {
	GCE_OK = 0,
	GCE_CAPACITY,
	GCE_QUOTA,
	GCE_THROTTLED,
	GCE_TRANSIENT,
	GCE_PERMANENT,
	GCE_AUTH,
	GCE_NOT_FOUND,
	GCE_EXISTS,
};

const char *gce_class_name(enum gce_class c);

/* The class of an answer: its HTTP status (0 for an operation's error),
 * Google's reason or code (may be NULL) and message (may be NULL). */
enum gce_class gce_classify(long status, const char *reason, const char *message);

/*
 * An API error body ({"error": {"code", "message", "errors": [{"reason",
 * "message", "domain"}]}}): its first reason into reason and its message
 * into msg (control characters written out). 0, or -1 when json is not
 * such a body (both left empty).
 */
int gce_error_parse(const char *json, char *reason, size_t rlen, char *msg, size_t mlen);

/* ---- names, labels, times ---- */

/*
 * The VM name of (cluster, node, attempt): "CLUSTER-NODE-ATTEMPT", lower
 * case, each character outside [a-z0-9] a '-', starting with a letter
 * ('b' put before a digit), at most 63 characters (a longer one keeps its
 * start and ends with 8 hex digits of the SHA-256 of the three and the
 * attempt, so it stays unique). out: 64 bytes.
 */
void gce_vm_name(const char *cluster, const char *node, int attempt, char out[64]);

/*
 * A label value for s: s itself when it is at most 63 of [a-z0-9_-] and
 * does not start with "hex--", else "hex--" and its bytes in hex (s of at
 * most 29 bytes). out: 64 bytes. 0, or -1 (too long: no label).
 * gce_label_decode reverses it: 0, or -1 (not a value gce_label_value makes).
 */
int gce_label_value(const char *s, char out[64]);
int gce_label_decode(const char *v, char *out, size_t len);

/* An RFC 3339 time as Google writes it (2026-05-01T10:00:00.123-07:00) in
 * seconds since the epoch; 0 when unreadable. */
time_t gce_parse_time(const char *s);

/* The last path segment of a URL or partial path ("zones/us-central1-a",
 * ".../zones/us-central1-a" -> "us-central1-a"). */
const char *gce_basename(const char *url);

/* ---- operations ---- */

struct gce_op_error {
	char *code;              /* ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED, ... */
	char *message;
	enum gce_class cls;
};

/* instancesBulkInsertOperationMetadata.perLocationStatus, one location */
struct gce_op_loc {
	char *where;             /* "zones/us-central1-a" */
	char *status;            /* CREATING, DONE, FAILED, ROLLING_BACK, ... */
	long target, created, failed, deleted;
};

struct gce_op {
	char *name;
	char *status;            /* PENDING, RUNNING, DONE */
	char *type;              /* operationType: bulkInsert, insert, delete, ... */
	char *zone, *region;     /* the short names (NULL: not that scope) */
	char *group;             /* operationGroupId, or NULL */
	char *target;            /* targetLink's last segment, or NULL */
	long http_error;         /* httpErrorStatusCode, 0 */
	struct gce_op_error *errors;
	size_t nerrors;
	struct gce_op_loc *locs;
	size_t nlocs;
};

/* Parse an Operation: 0, or -1 with err (not an Operation: no name or
 * status). */
int gce_op_parse(const char *json, struct gce_op *out, burst_err_t *err);
void gce_op_free(struct gce_op *op);
bool gce_op_done(const struct gce_op *op);
/* The class of a DONE operation: GCE_OK without errors, else its first
 * error's (a capacity error first when any is one). */
enum gce_class gce_op_class(const struct gce_op *op);
/* Its errors as one line for an admin ("CODE: message; CODE: ..."). */
void gce_op_errors(const struct gce_op *op, char *buf, size_t len);

/* Operations of a listing (operations aggregatedList). */
struct gce_ops {
	struct gce_op *v;
	size_t n;
};
int gce_ops_parse(const char *json, struct gce_ops *out, char **next, burst_err_t *err);
void gce_ops_free(struct gce_ops *l);

/* ---- instances ---- */

struct gce_vm {
	char *name, *id, *zone;  /* zone: its short name */
	char *status;            /* PROVISIONING, STAGING, RUNNING, STOPPING, ... */
	char *ip;                /* the first interface's networkIP, or NULL */
	char *created;           /* creationTimestamp */
	char *fingerprint;       /* metadata.fingerprint, or NULL */
	char *machine_type;      /* its last segment */
	/* the labels GCE_LABEL_* (NULL when missing; node and attempt else
	 * from the metadata items GCE_META_NODE, GCE_META_ATTEMPT) */
	char *cluster, *provider, *node, *attempt, *batch;
	bool preemptible;        /* scheduling.provisioningModel SPOT or preemptible */
	bool has_token;          /* its metadata holds a GCE_META_TOKEN item, not empty */
};

struct gce_vms {
	struct gce_vm *v;
	size_t n;
};

/*
 * Parse a page of instances: aggregated ({"items": {"zones/Z":
 * {"instances": [...]}}}) or zonal ({"items": [...]}); appends to *out,
 * *next gets nextPageToken (caller frees; NULL at the last page). 0, or -1
 * with err (not a listing).
 */
int gce_vms_parse(const char *json, struct gce_vms *out, char **next, burst_err_t *err);
int gce_vm_parse(const char *json, struct gce_vm *out, burst_err_t *err);
void gce_vm_free(struct gce_vm *v);
void gce_vms_free(struct gce_vms *l);

/* ---- the client ---- */

struct gce_auth;

struct gce_client_opts {
	const char *endpoint;    /* NULL: GCE_ENDPOINT_DEFAULT */
	const char *project;
	struct gce_auth *auth;   /* borrowed: outlives the client */
	const char *ca_file;
	bool allow_http;         /* a plain-HTTP endpoint is accepted */
	long timeout_ms;         /* per request; 0: 30000 */
};

struct gce_client;

struct gce_client *gce_client_new(const struct gce_client_opts *o, burst_err_t *err);
void gce_client_free(struct gce_client *c);
const char *gce_client_project(const struct gce_client *c);
/* The longest a call can take (ms): its timeout and the token's. */
long gce_client_call_bound_ms(const struct gce_client *c);
/* Requests sent (tests, bench). */
unsigned gce_client_calls(const struct gce_client *c);

/*
 * One request: METHOD ENDPOINT/compute/v1/projects/PROJECT/path (path
 * starting "zones/...", "regions/...", "aggregated/...", "global/..."),
 * with an optional JSON body. *answer (caller frees; may be NULL) gets the
 * body of a 2xx answer. what names the request for messages.
 */
enum gce_class gce_call(struct gce_client *c, const char *method, const char *path, const char *body,
			const char *what, char **answer, burst_err_t *err);

/* ---- the bulk insert ---- */

struct gce_kv {
	const char *key, *value;
};

struct gce_bulk {
	const char *machine_type;        /* a name: n2-standard-4 */
	const char *const *names;        /* perInstanceProperties, n of them */
	size_t n;
	long min_count;                  /* 1..n */
	const char *const *zones;        /* locationPolicy ALLOW (a regional insert; may be 0) */
	size_t nzones;
	const char *image;               /* sourceImage */
	const char *source_template;     /* sourceInstanceTemplate instead of what follows */
	long disk_gb;                    /* 0: the image's */
	const char *disk_type;           /* NULL: the default */
	const char *network, *subnetwork;/* NULL: the default network */
	bool external_ip;                /* an ephemeral external address */
	const char *service_account;     /* an email, or NULL: none */
	const char *const *tags;         /* network tags (firewall rules) */
	size_t ntags;
	const struct gce_kv *labels;
	size_t nlabels;
	const struct gce_kv *metadata;   /* metadata items */
	size_t nmetadata;
	bool spot;                       /* provisioningModel SPOT, DELETE on preemption */
};

/* The body of instances.bulkInsert / regionInstances.bulkInsert (caller
 * frees). */
char *gce_bulk_body(const struct gce_bulk *b);

/* The body of instances.setMetadata: fingerprint and items (caller frees). */
char *gce_metadata_body(const char *fingerprint, const struct gce_kv *items, size_t n);

#endif

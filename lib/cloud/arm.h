/*
 * arm.h - a small client of Azure Resource Manager for the azure driver:
 * requests with a bearer token (azure_auth.h; one new token and one retry
 * after a 401), ARM's errors classed, long-running operations read from
 * their Azure-AsyncOperation (else Location) header with Retry-After, and
 * ARM's and the compute resource provider's token buckets modelled so that
 * what is sent is what the buckets hold (a 429 empties the bucket its
 * x-ms-ratelimit-remaining-* headers say is at 0,
 * and the request is sent again after its Retry-After, at most
 * ARM_THROTTLE_RETRIES times).
 *
 * The buckets (Microsoft's documentation of ARM's and the compute resource
 * provider's throttling, as issue 31 lists them): per subscription reads
 * 250 then 25/s, writes 200 then 10/s, deletes 200 then 10/s; per region,
 * VM create/update/delete 1,500 then 500/min, VM list 900 then 300/min,
 * operation status 15,000 then 5,000/min.
 *
 * Only URLs of the configured endpoint's origin get the token: an
 * operation or next-page URL elsewhere is refused. Every message names the
 * request and carries ARM's error code and its message with control
 * characters written out; never a token or a secret.
 *
 * Not thread-safe: one client per thread.
 */
#ifndef BURST_ARM_H
#define BURST_ARM_H

#include <stdbool.h>
#include <stddef.h>

#include "azure_auth.h"
#include "burst_err.h"

#define ARM_DEFAULT_ENDPOINT "https://management.azure.com"
#define ARM_COMPUTE_API "2024-11-01"
#define ARM_NETWORK_API "2024-05-01"
#define ARM_THROTTLE_RETRIES 3

/* Which buckets a request takes from. */
enum arm_kind {
	ARM_READ,        /* a GET: subscription reads */
	ARM_VM_PUT,      /* writes, and the region's VM create/update/delete */
	ARM_VM_DELETE,   /* deletes, and the region's VM create/update/delete */
	ARM_VM_LIST,     /* reads, and the region's VM list */
	ARM_OP_STATUS,   /* reads, and the region's operation status */
};

/* The class of an ARM answer: its HTTP status and error code and message. */
enum az_class arm_classify(long status, const char *code, const char *message);

/*
 * ARM's error body {"error": {"code", "message"}} (or an operation's
 * {"status": "Failed", "error": {...}}): code into code (empty if none),
 * *message (caller frees; control characters written out; NULL if none).
 */
void arm_error_parse(const char *json, char *code, size_t clen, char **message);

/*
 * An operation status document: its status (InProgress, Succeeded, Failed,
 * Canceled) into status, and for Failed its error. 0, or -1 when it is no
 * status document.
 */
int arm_operation_parse(const char *json, char *status, size_t slen, char *code, size_t clen, char **message);

/*
 * The least count of an x-ms-ratelimit-remaining-* header: "7", or the
 * resource provider's "Microsoft.Compute/PutVM3Min;0,...;1199" (0); -1
 * when it holds none. A 429 empties the client's bucket whose header says
 * 0 (both of the request's when neither says).
 */
long arm_ratelimit_left(const char *value);
/* Retry-After: seconds (or an HTTP date), -1 when none or unreadable. */
double arm_retry_after(const char *value, double now_epoch);

struct arm_answer {
	long status;             /* 0: none (a transport failure) */
	char *body;              /* the answer's body, or NULL */
	char *async_op;          /* Azure-AsyncOperation, or NULL */
	char *location;          /* Location, or NULL */
	double retry_after;      /* seconds, -1 when none */
	char code[96];           /* ARM's error code, "" when none */
	char *message;           /* ARM's error message (escaped), or NULL */
};

void arm_answer_free(struct arm_answer *a);

struct arm_client_opts {
	const struct az_creds *creds;    /* copied */
	const char *endpoint;            /* NULL: ARM_DEFAULT_ENDPOINT */
	const char *imds;                /* NULL: azure_auth's default */
	const char *ca_file;
	bool allow_http;
	long timeout_ms;                 /* 0: 30000 */
	double time_scale;               /* the buckets' refills this many times faster (0: 1) */
};

struct arm_client;

struct arm_client *arm_client_new(const struct arm_client_opts *o, burst_err_t *err);
void arm_client_free(struct arm_client *c);

struct arm_stats {
	unsigned calls;          /* requests sent to ARM */
	unsigned throttled;      /* of them, answered 429 */
	unsigned tokens;         /* tokens asked for */
	double waited;           /* seconds slept for the buckets and Retry-After */
};
struct arm_stats arm_client_stats(const struct arm_client *c);

/*
 * One request: METHOD path (below the endpoint, e.g. "/subscriptions/...?
 * api-version=...") or an absolute URL of the endpoint's origin, with an
 * optional JSON body; kind and region (NULL: "-") name its buckets; what
 * (e.g. "create VM c-n1-a1") is for messages. Returns the class of the
 * answer (2xx is AZ_OK) with ans filled (free it with arm_answer_free) and
 * err set on failure.
 */
enum az_class arm_request(struct arm_client *c, const char *method, const char *path, const char *body,
			  enum arm_kind kind, const char *region, const char *what, struct arm_answer *ans,
			  burst_err_t *err);

/*
 * Follow the long-running operation that start (a PUT's or DELETE's answer)
 * began, to its end: poll its Azure-AsyncOperation URL (an operation status
 * document), else its Location URL (202: still running; 200 or 204: done),
 * after each answer's Retry-After (none: 1 s), for at most timeout_s
 * seconds. An answer with neither header was final (AZ_OK). AZ_OK when the
 * operation Succeeded; its error classed (arm_classify) when it Failed;
 * AZ_TRANSIENT when Canceled or still running at the timeout, with err.
 * *polls (may be NULL) gets the polls made.
 */
enum az_class arm_wait(struct arm_client *c, const struct arm_answer *start, const char *region, const char *what,
		       double timeout_s, unsigned *polls, burst_err_t *err);

/* Get a token now when none is held. */
enum az_class arm_authenticate(struct arm_client *c, burst_err_t *err);

#endif

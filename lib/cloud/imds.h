/*
 * imds.h - the EC2 instance metadata service, IMDSv2 only: a session token
 * (PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds), then
 * GETs that carry it (X-aws-ec2-metadata-token). Every call is bounded:
 * connection and whole answer within the timeout, the body at most the
 * caller's maximum; no proxy is used.
 *
 * Used by the agent for an instance role's credentials (aws_creds.c) and by
 * burst-node for the spot interruption notice (spot/instance-action), which
 * imds_notice_parse reads.
 */
#ifndef BURST_IMDS_H
#define BURST_IMDS_H

#include <stddef.h>
#include <time.h>

#include "burst_err.h"

#define IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define IMDS_TOKEN_TTL_S 21600            /* the session token's life asked for */
#define IMDS_NOTICE_PATH "/latest/meta-data/spot/instance-action"
#define IMDS_NOTICE_MAX 1024              /* a notice is ~60 bytes; more is refused */

struct imds;

/*
 * A client of endpoint (NULL or empty: $AWS_EC2_METADATA_SERVICE_ENDPOINT,
 * else IMDS_DEFAULT_ENDPOINT), each request bounded by timeout_ms (0: 2000).
 * NULL with err if libcurl cannot start.
 */
struct imds *imds_open(const char *endpoint, long timeout_ms, burst_err_t *err);
/*
 * A client of Compute Engine's metadata server instead (endpoint NULL or
 * empty: http:// $GCE_METADATA_HOST, else GCE_METADATA_DEFAULT_HOST): GETs
 * with Metadata-Flavor: Google, no token; imds_get as below.
 */
#define GCE_METADATA_DEFAULT_HOST "metadata.google.internal"
#define GCE_PREEMPTED_PATH "/computeMetadata/v1/instance/preempted"
#define GCE_PREEMPT_NOTICE_S 30            /* a preempted VM is stopped about 30 s after the notice */
struct imds *imds_open_gce(const char *endpoint, long timeout_ms, burst_err_t *err);
/*
 * A client of Azure's instance metadata service instead (endpoint NULL or
 * empty: IMDS_DEFAULT_ENDPOINT, the same address as EC2's): GETs with
 * Metadata: true, no token; imds_get as below. Scheduled Events
 * (AZURE_EVENTS_PATH) say a Spot VM's eviction, EventType Preempt, at least
 * 30 s ahead.
 */
#define AZURE_EVENTS_PATH "/metadata/scheduledevents?api-version=2020-07-01"
#define AZURE_EVENTS_MAX 65536             /* a document of many events is a few KiB; more is refused */
struct imds *imds_open_azure(const char *endpoint, long timeout_ms, burst_err_t *err);
/* The endpoint in use, without a trailing '/'. */
const char *imds_base(const struct imds *m);
/*
 * GET path with the session token (asked for first, again before it ends,
 * and once more when the service answers 401). 0 with the HTTP status and
 * the body (caller frees; NUL-terminated, *len its length) for any answer;
 * -1 with err when there is none (connection, timeout), the body is larger
 * than max, or the token request is refused.
 */
int imds_get(struct imds *m, const char *path, size_t max, long *status, char **body, size_t *len,
	     burst_err_t *err);
/* Close it (the token is wiped). NULL is fine. */
void imds_close(struct imds *m);

/* What an interruption notice says the instance is about to undergo. */
enum imds_action {
	IMDS_ACTION_TERMINATE,
	IMDS_ACTION_STOP,
	IMDS_ACTION_HIBERNATE,
};

struct imds_notice {
	enum imds_action action;
	char action_name[16];    /* "terminate", "stop", "hibernate" */
	char time[32];           /* as given: 2026-11-27T17:00:00Z */
	time_t at;               /* the same, seconds since the epoch (UTC) */
};

/* "terminate", "stop", "hibernate" into *a: false for anything else. */
int imds_action_from_name(const char *name, enum imds_action *a);

/* A notice's time, exactly YYYY-MM-DDTHH:MM:SSZ, into *at (UTC): false if not one. */
int imds_notice_time(const char *s, time_t *at);

/*
 * The answer of IMDS_NOTICE_PATH (its HTTP status and body of len bytes):
 * 1 with *n for a notice (200, a JSON object with a known "action" and a
 * "time" YYYY-MM-DDTHH:MM:SSZ), 0 for none (404), -1 with why (naming what
 * was wrong, with the answer's words escaped and cut short) for anything
 * else: another status, a body over IMDS_NOTICE_MAX or with a NUL byte, not
 * JSON, a field missing, an unknown action, a time that is not one.
 */
int imds_notice_parse(long status, const char *body, size_t len, struct imds_notice *n, char *why,
		      size_t wlen);

/*
 * The answer of GCE_PREEMPTED_PATH: 1 with *n for TRUE (the VM is being
 * preempted: action terminate, time now + GCE_PREEMPT_NOTICE_S), 0 for
 * FALSE, -1 with why for anything else (another status, another word, a
 * longer answer).
 */
int imds_gce_preempted_parse(long status, const char *body, size_t len, time_t now, struct imds_notice *n,
			     char *why, size_t wlen);

/*
 * The answer of AZURE_EVENTS_PATH for the VM named vm: 1 with *n for an
 * event of EventType "Preempt" whose Resources name vm (ignoring case, as
 * Azure does): action terminate (a Spot VM's eviction policy is Delete), at
 * its NotBefore (RFC 1123, "Mon, 19 Sep 2016 18:29:47 GMT"), or now when it
 * has none or an unreadable one (the eviction may be under way); 0 for a
 * document without one (no events, other events, other VMs' events); -1
 * with why for anything else: another status, a body over
 * AZURE_EVENTS_MAX or with a NUL byte, not a JSON object, no "Events"
 * array, an event that is not an object or has no EventType string, a
 * Preempt whose Resources is not an array of strings.
 */
int imds_azure_events_parse(long status, const char *body, size_t len, const char *vm, time_t now,
			    struct imds_notice *n, char *why, size_t wlen);

#endif

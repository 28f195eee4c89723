/*
 * ec2.h - a small client of the EC2 Query API (Version 2016-11-15).
 *
 * Each call is an HTTP POST of an application/x-www-form-urlencoded body,
 * signed with SigV4 (service "ec2"), whose XML answer is parsed with
 * libxml2. TLS peer and host verification are always on for https.
 *
 * Every call returns an error class (EC2_OK = 0) and, on failure, fills err
 * with a message for an admin, e.g.
 *   ec2 RunInstances in us-east-1 (g5.12xlarge): InsufficientInstanceCapacity:
 *   <message> (request id X)
 * No secret (secret key, session token, Authorization header) ever appears in
 * a message.
 *
 * THROTTLED and TRANSIENT failures are retried by the client itself with
 * full-jitter exponential backoff, within a budget (max_attempts per call,
 * max_total_ms of sleeping and waiting per call); RunInstances is retried
 * with the SAME ClientToken, so a retry never launches twice. Credentials
 * resolved by the client (not given explicitly) are refreshed 5 minutes
 * before they expire, and once more if EC2 answers ExpiredToken. The counters
 * (ec2_client_stats) show what was done.
 *
 * A client is not thread-safe: use one per thread. It uses libcurl; a
 * threaded program calls curl_global_init(CURL_GLOBAL_DEFAULT) once before
 * its threads start (libcurl otherwise does it on first use).
 */
#ifndef BURST_EC2_H
#define BURST_EC2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws_creds.h"
#include "burst_err.h"

enum ec2_class {
	EC2_OK = 0,
	EC2_CAPACITY,      /* no capacity for that type/zone now: try another */
	EC2_QUOTA,         /* an account limit: needs a quota increase */
	EC2_THROTTLED,     /* request rate: retried with backoff */
	EC2_TRANSIENT,     /* 5xx, network, timeouts: retried */
	EC2_PERMANENT,     /* bad request: do not retry */
	EC2_AUTH,          /* credentials or permissions */
	EC2_NOT_FOUND,     /* InvalidInstanceID.NotFound: eventual consistency, caller retries */
};

/* "OK", "CAPACITY", ... (static string). */
const char *ec2_class_name(enum ec2_class c);

/* Class of an EC2 error code (http_status used when code is NULL/empty). */
enum ec2_class ec2_classify(const char *code, long http_status);

/*
 * Full-jitter exponential backoff: a delay in [0, min(cap_ms, base_ms * 2^attempt)],
 * picked by rnd (any 32-bit random value). attempt counts from 0.
 */
long ec2_backoff_ms(unsigned attempt, long base_ms, long cap_ms, uint32_t rnd);

struct ec2_client_opts {
	const char *region;             /* required, e.g. "us-east-1" */
	const char *endpoint;           /* NULL: https://ec2.REGION.amazonaws.com/ */
	const struct aws_creds *creds;  /* explicit credentials (copied), or NULL: */
	const struct aws_creds_opts *creds_opts; /* resolved with aws_creds_resolve
						   (and refreshed before expiry) */
	const char *ca_file;            /* CA bundle to verify https with (a private
					   endpoint); NULL: the system's. Verification
					   of peer and host is always on. */
	long connect_timeout_ms;        /* 0: 5000 */
	long timeout_ms;                /* per HTTP request; 0: 30000 */
	unsigned max_attempts;          /* per API call, 0: 5 */
	long max_total_ms;              /* per API call incl. backoff, 0: 60000 */
	long backoff_base_ms;           /* 0: 200 */
	long backoff_cap_ms;            /* 0: 10000 */
};

struct ec2_client;   /* opaque */

/* Counters since ec2_client_new (or the last reset). */
struct ec2_stats {
	unsigned api_calls;       /* HTTP requests sent */
	unsigned retries;         /* of those, retries after THROTTLED/TRANSIENT */
	long backoff_ms;          /* total time slept in backoff */
	unsigned budget_exhausted;/* calls given up because the budget ran out */
};

/*
 * A new client (free with ec2_client_free), or NULL with err set (missing
 * region, bad endpoint, no credentials).
 */
struct ec2_client *ec2_client_new(const struct ec2_client_opts *opts, burst_err_t *err);
void ec2_client_free(struct ec2_client *c);
/*
 * The caller paces RunInstances and TerminateInstances to its own model of
 * EC2's buckets (lib/core/ratelimit.h): a throttling answer to them is returned
 * at once, not retried (each retry would be throttled too). Others are
 * retried as before.
 */
void ec2_client_paced(struct ec2_client *c, bool paced);

/*
 * ec2_client_new for a configured aws provider: its Endpoint=, CaFile=,
 * CredentialsFile= and Profile= (each NULL: the default), other options
 * default.
 */
struct ec2_client *ec2_client_for_provider(const char *region, const char *endpoint,
					   const char *ca_file, const char *credentials_file,
					   const char *profile, burst_err_t *err);
/* Current counters; ec2_stats_reset zeroes them. */
struct ec2_stats ec2_client_stats(const struct ec2_client *c);
void ec2_stats_reset(struct ec2_client *c);
/* The EC2 error code and request id of the last failed call ("" when none);
 * pointers into the client, valid until the next call. */
const char *ec2_last_code(const struct ec2_client *c);
const char *ec2_last_request_id(const struct ec2_client *c);

struct ec2_tag {
	const char *key;
	const char *value;
};

struct ec2_instance {
	char *id;
	char *type;
	char *state;           /* pending, running, shutting-down, terminated, ... */
	char *private_ip;      /* NULL when none yet */
	char *launch_time;     /* ISO 8601 as EC2 gives it */
	char *client_token;    /* NULL when none */
	char *image_id;
	struct ec2_tag *tags;  /* strings owned by the instance */
	size_t ntags;
	int launch_index;      /* amiLaunchIndex within its RunInstances, -1 when not given */
};

struct ec2_instances {
	struct ec2_instance *v;
	size_t n;
	char *reservation_id;  /* RunInstances only, else NULL */
};

/* Frees everything in l and zeroes it; l may be NULL or zeroed. */
void ec2_instances_free(struct ec2_instances *l);

struct ec2_run_params {
	const char *image_id;                 /* or a launch template: */
	const char *launch_template_id;
	const char *launch_template_name;
	const char *launch_template_version;  /* NULL: $Default */
	const char *instance_type;            /* may be NULL with a template */
	int min_count, max_count;             /* 0: 1 */
	const char *subnet_id;
	const char *const *security_group_ids;
	size_t nsecurity_groups;
	const char *iam_instance_profile_name;  /* ignored when the ARN is given */
	const char *iam_instance_profile_arn;
	const void *user_data;                /* raw bytes, base64-encoded here */
	size_t user_data_len;
	const struct ec2_tag *tags;           /* TagSpecification for the instances */
	size_t ntags;
	const char *client_token;             /* required: the idempotency key */
	bool metadata_tags;                   /* the instances read their tags in their
					       * metadata (InstanceMetadataTags) */
};

/*
 * RunInstances (IMDSv2 required on the instances). On EC2_OK, *out holds
 * the reservation's instances (possibly fewer than max_count; caller frees
 * with ec2_instances_free).
 */
enum ec2_class ec2_run_instances(struct ec2_client *c, const struct ec2_run_params *p,
				 struct ec2_instances *out, burst_err_t *err);

/*
 * The longest a call of c can be in flight, in ms: its retries' budget plus
 * the last request's own timeouts. A RunInstances sent by an agent that
 * died may be launching at EC2 for that long after it was sent.
 */
long ec2_client_call_bound_ms(const struct ec2_client *c);

struct ec2_filter {
	const char *name;               /* "tag:KEY", "instance-state-name", "client-token" */
	const char *const *values;
	size_t nvalues;
};

struct ec2_describe_params {
	const char *const *instance_ids;
	size_t nids;
	const struct ec2_filter *filters;
	size_t nfilters;
	int max_results;                /* page size; 0: 1000 (not sent with ids) */
	const char *const *tag_keys;    /* the tags kept of each instance (NULL: all;
					 * the others are read past, never copied) */
	size_t ntag_keys;
};

/*
 * DescribeInstances, following NextToken to the end. On EC2_OK, *out holds
 * every instance of every reservation (caller frees with ec2_instances_free).
 */
enum ec2_class ec2_describe_instances(struct ec2_client *c, const struct ec2_describe_params *p,
				      struct ec2_instances *out, burst_err_t *err);
/*
 * One page of DescribeInstances: the page after token (NULL: the first),
 * its instances APPENDED to *out (zeroed or from an earlier page); *next
 * gets the token of the page after it (allocated; NULL: it was the last).
 * What a caller that must not hold its thread for a whole listing calls,
 * one page at a time. On an error *next is NULL and *out is as it was (an
 * answer is read as a stream: one that is cut short or not XML is retried,
 * one that is XML but not a DescribeInstancesResponse is PERMANENT).
 */
enum ec2_class ec2_describe_instances_page(struct ec2_client *c, const struct ec2_describe_params *p,
					   const char *token, struct ec2_instances *out, char **next,
					   burst_err_t *err);

enum ec2_class ec2_terminate_instances(struct ec2_client *c, const char *const *ids, size_t n,
				       burst_err_t *err);
/* StopInstances and StartInstances of n instances (a warm pool's members:
 * their EBS disks kept while they are stopped). */
enum ec2_class ec2_stop_instances(struct ec2_client *c, const char *const *ids, size_t n,
				  burst_err_t *err);
enum ec2_class ec2_start_instances(struct ec2_client *c, const char *const *ids, size_t n,
				   burst_err_t *err);

/*
 * GetConsoleOutput (Latest=true) of one instance: *out gets its console text,
 * decoded (caller frees; "" when there is none yet).
 */
enum ec2_class ec2_console_output(struct ec2_client *c, const char *id, char **out, burst_err_t *err);

enum ec2_class ec2_create_tags(struct ec2_client *c, const char *const *ids, size_t n,
			       const struct ec2_tag *tags, size_t ntags, burst_err_t *err);

struct ec2_instance_type {
	char *name;
	int vcpus;
	long memory_mib;
	int gpu_count;               /* 0 when none; the first GPU kind below */
	char *gpu_manufacturer;      /* NULL when no GPU */
	char *gpu_name;
	long gpu_memory_mib;         /* per GPU */
	char *network_performance;
	bool efa_supported;
	int efa_max_interfaces;      /* 0 when not given */
	char *arch;                  /* the first supported architecture: x86_64, arm64, ...; NULL if none */
	char *cpu_manufacturer;      /* Intel, AMD, AWS; NULL when not given */
	long storage_gb;             /* instance storage in all (totalSizeInGB), 0 when none */
	char *storage_disk;          /* ssd, hdd; NULL when no instance storage; "": the API says nothing of it */
	bool storage_nvme;           /* the instance storage is NVMe (nvmeSupport not unsupported) */
	int neuron_count;            /* AWS Neuron devices (Inferentia, Trainium), 0 when none */
	char *neuron_name;
	long neuron_memory_mib;      /* per device */
};

struct ec2_instance_types {
	struct ec2_instance_type *v;
	size_t n;
};

void ec2_instance_types_free(struct ec2_instance_types *l);

/*
 * DescribeInstanceTypes for the given types (n = 0: all), following
 * NextToken. On EC2_OK, caller frees *out with ec2_instance_types_free.
 */
enum ec2_class ec2_describe_instance_types(struct ec2_client *c, const char *const *types,
					   size_t n, struct ec2_instance_types *out,
					   burst_err_t *err);

#endif

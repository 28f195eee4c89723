/*
 * openstack.h - a small client of Keystone v3 and Nova's compute API.
 *
 * Authentication: Keystone v3, by password (scoped to a project) or by an
 * application credential. The token (X-Subject-Token) is kept and used until
 * OS_TOKEN_REFRESH_MARGIN seconds (at most half its life) before its
 * expires_at; then a new one is asked for. A 401 from Nova (a token revoked
 * or expired early) gets one new token and one retry. The compute endpoint
 * is the token catalog's "compute" service at the configured interface
 * (default public) and region (default: the only one, else an error naming
 * the regions), unless one is given. Each compute request carries
 * "OpenStack-API-Version: compute MICROVERSION".
 *
 * Every call returns a class (OS_OK = 0) and, on failure, fills err with a
 * message for an admin (the request, the HTTP status and Nova's or
 * Keystone's own message). No secret (password, application credential
 * secret, token) ever appears in a message. TLS peer and host verification
 * are always on for https.
 *
 * Not thread-safe: one client per thread.
 */
#ifndef BURST_OPENSTACK_H
#define BURST_OPENSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "burst_err.h"

/* Ask for a new token this many seconds before the current one expires
 * (at most half of the token's life). */
#define OS_TOKEN_REFRESH_MARGIN 300

enum os_class {
	OS_OK = 0,
	OS_CAPACITY,       /* "No valid host was found": try another flavor/region */
	OS_QUOTA,          /* "Quota exceeded" */
	OS_THROTTLED,      /* 429 */
	OS_TRANSIENT,      /* 409, 5xx, network, timeouts */
	OS_PERMANENT,      /* 400, a bad image or flavor... */
	OS_AUTH,           /* 401, or 403 that is not a quota */
	OS_NOT_FOUND,      /* 404 */
};

const char *os_class_name(enum os_class c);

/*
 * The class of a Nova or Keystone answer: its HTTP status and its message
 * (Nova's error body's "message", or a server's fault message; may be NULL).
 */
enum os_class os_classify(long http_status, const char *message);

/* What authenticates: from a credentials file and burst.conf. */
struct os_auth {
	char *auth_url;          /* OS_AUTH_URL: Keystone's v3 URL */
	char *username;          /* OS_USERNAME, with OS_PASSWORD */
	char *password;
	char *user_domain;       /* OS_USER_DOMAIN_NAME (default "Default") */
	char *project_name;      /* OS_PROJECT_NAME, or OS_PROJECT_ID */
	char *project_id;
	char *project_domain;    /* OS_PROJECT_DOMAIN_NAME (default "Default") */
	char *ac_id;             /* OS_APPLICATION_CREDENTIAL_ID, with ..._SECRET */
	char *ac_secret;
	char *region;            /* OS_REGION_NAME */
	char *interface;         /* OS_INTERFACE (public, internal, admin) */
	char *source;            /* for messages: "file /etc/slurm/openstack.rc" */
};

/*
 * Read an openrc-style file: lines "[export ]OS_NAME=VALUE" (VALUE
 * optionally quoted), '#' comments. The file must be readable by its owner
 * only (else refused, naming its mode and "chmod 600"). Returns 0, or -1
 * with err (file:line of a bad line; never a value).
 */
int os_auth_from_file(const char *path, struct os_auth *out, burst_err_t *err);
/*
 * Read the entry CLOUD of a clouds.yaml (the format of openstacksdk and the
 * openstack CLI: clouds: CLOUD: auth: {auth_url, username, password,
 * project_name|project_id, user_domain_name, project_domain_name,
 * application_credential_id, application_credential_secret}, auth_type,
 * region_name, interface). Mode 0600 as above. auth_type, when given, must
 * be password or v3applicationcredential. Returns 0, or -1 with err
 * (file:line:column of a YAML error, the clouds the file has when CLOUD is
 * not one of them; never a secret).
 */
int os_auth_from_clouds_yaml(const char *path, const char *cloud, struct os_auth *out, burst_err_t *err);
/* Frees the strings (wiping the secrets first) and zeroes a; a may be NULL. */
void os_auth_free(struct os_auth *a);

/* A token and what came with it. */
struct os_token {
	char *id;                /* X-Subject-Token */
	time_t issued, expires;
	char *compute_url;       /* the catalog's compute endpoint (NULL if none) */
	char *image_url;         /* the catalog's image endpoint (NULL if none) */
	char *project_id;
	char *user_id;
};

void os_token_free(struct os_token *t);

/*
 * Parse Keystone's answer to POST /v3/auth/tokens (body json, the
 * X-Subject-Token subject): the expiry and the compute and image endpoints
 * of the given interface (NULL: public) and region (NULL: any, but it must
 * be the only one). Returns 0, or -1 with err (no compute endpoint: err
 * names the regions and interfaces the catalog has).
 */
int os_token_parse(const char *json, size_t len, const char *subject, const char *interface,
		   const char *region, struct os_token *out, burst_err_t *err);

/* Whether t must be replaced at 'now' (see OS_TOKEN_REFRESH_MARGIN). */
bool os_token_expiring(const struct os_token *t, time_t now);

/* ISO 8601 (2026-11-25T08:21:54Z, 2026-11-25T09:21:54.000000Z) in seconds
 * since the epoch; 0 when unreadable. */
time_t os_parse_time(const char *s);

struct os_client_opts {
	const struct os_auth *auth;      /* copied */
	const char *compute_url;         /* NULL: from the catalog */
	const char *microversion;        /* NULL: "2.52" */
	const char *ca_file;             /* NULL: the system's CA */
	bool allow_http;                 /* a plain-HTTP compute endpoint is accepted */
	long timeout_ms;                 /* per request; 0: 30000 */
};

struct os_client;

/* A new client (no request is made yet), or NULL with err. */
struct os_client *os_client_new(const struct os_client_opts *o, burst_err_t *err);
void os_client_free(struct os_client *c);

struct os_stats {
	unsigned api_calls;      /* HTTP requests sent (Keystone's too) */
	unsigned tokens;         /* tokens asked for */
};
struct os_stats os_client_stats(const struct os_client *c);

/*
 * One compute request: METHOD path (below the compute endpoint, e.g.
 * "/servers/detail?limit=100") with an optional JSON body. Authenticates
 * first when needed. *status gets the HTTP status (0: none) and *answer
 * (caller frees; may be NULL) the body. Returns the class of the answer (2xx
 * is OS_OK); err says what failed. what (e.g. "create server burst-1") is
 * for messages.
 */
enum os_class os_compute(struct os_client *c, const char *method, const char *path,
			 const char *body, const char *what, long *status, char **answer,
			 burst_err_t *err);

/*
 * GET an image-service path (e.g. "/v2/images?name=x") from the catalog's
 * image endpoint; OS_PERMANENT when the catalog has none.
 */
enum os_class os_image_get(struct os_client *c, const char *path, const char *what,
			   char **answer, burst_err_t *err);

/* Get a token now if none is held (or it expires soon). */
enum os_class os_authenticate(struct os_client *c, burst_err_t *err);

struct cfg_provider;
/*
 * The client of a configured openstack provider: its CredentialsFile= (read
 * now), Endpoint=, Interface=, ComputeEndpoint=, CaFile= and Microversion=
 * (microversion, when not NULL, instead), region (NULL: the provider's first
 * of Regions=, else the file's). NULL with err.
 */
struct os_client *os_client_for_provider(const struct cfg_provider *p, const char *region,
					 bool allow_http, const char *microversion, burst_err_t *err);

struct ec2_instance_types;
/*
 * Nova's flavors (GET /flavors/detail, microversion 2.61 or later so that
 * each has its extra_specs) as instance types for the catalog refresh:
 * name, vcpus, memory_mib (ram), storage_gb (disk + ephemeral, storage
 * "disk"), and an accelerator from the extra specs "pci_passthrough:alias"
 * (ALIAS:COUNT, the first) or "resources:VGPU" (alias VGPU), its model
 * through aliases ("ALIAS:MODEL" strings; an alias not there is its own
 * model name). os_parse_flavors parses one answer (appending to *out).
 */
enum os_class os_flavors(struct os_client *c, char *const *aliases, size_t naliases,
			 struct ec2_instance_types *out, burst_err_t *err);
int os_parse_flavors(const char *json, char *const *aliases, size_t naliases,
		     struct ec2_instance_types *out, burst_err_t *err);

/* Nova's message from an error body ({"badRequest": {"message": ...}}), or
 * NULL; its control characters written out (str_escape_ctl). */
char *os_error_message(const char *json);

/* A text of the cloud's (a server's fault message) as it may be logged,
 * stored and shown: control characters written out, blanks trimmed. */
char *os_cloud_text(const char *s);

/* Replace every occurrence of each secret (NULL-terminated list) in msg with
 * "[redacted]". */
void os_redact(char *msg, size_t cap, const char *const *secrets);

#endif

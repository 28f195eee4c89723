/*
 * azure_auth.h - Microsoft Entra ID tokens for Azure Resource Manager.
 *
 * Three ways to a token, all for the scope
 * https://management.azure.com/.default (a managed identity: the resource
 * https://management.azure.com/):
 *  - a service principal's client secret: POST
 *    AUTHORITY/TENANT/oauth2/v2.0/token, grant_type client_credentials;
 *  - its certificate: the same request with a client assertion, a JWT
 *    (RS256, header x5t: the certificate's SHA-1 thumbprint) signed with the
 *    certificate's private key, made here with OpenSSL;
 *  - the VM's managed identity: GET IMDS/metadata/identity/oauth2/token
 *    with the header Metadata: true (IMDS http://169.254.169.254).
 * A token is kept until AZ_TOKEN_MARGIN seconds (at most half its life)
 * before it expires; the driver's calls run on its worker thread, so a new
 * token is asked for off the agent's loop.
 *
 * The credentials file: KEY=VALUE lines (the names Microsoft's SDKs read
 * from the environment), '#' comments:
 *   AZURE_TENANT_ID, AZURE_CLIENT_ID, and AZURE_CLIENT_SECRET or
 *   AZURE_CLIENT_CERTIFICATE_PATH (a PEM file with the private key and the
 *   certificate); AZURE_AUTHORITY_HOST (default
 *   https://login.microsoftonline.com); or AZURE_MANAGED_IDENTITY=yes
 *   (with AZURE_CLIENT_ID: a user-assigned identity). The file and a
 *   certificate file must be the running user's and not readable by group
 *   or others (else refused, saying chmod 600 / chown). No secret, token or
 *   assertion ever appears in a message; https only (an http endpoint only
 *   with allow_http, for IMDS, which is http).
 *
 * Not thread-safe: one per thread.
 */
#ifndef BURST_AZURE_AUTH_H
#define BURST_AZURE_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "burst_err.h"

#define AZ_TOKEN_MARGIN 300
#define AZ_ARM_SCOPE "https://management.azure.com/.default"
#define AZ_ARM_RESOURCE "https://management.azure.com/"
#define AZ_DEFAULT_AUTHORITY "https://login.microsoftonline.com"
#define AZ_DEFAULT_IMDS "http://169.254.169.254"

/* The class of an answer, the ARM client's too (arm.h). */
enum az_class {
	AZ_OK = 0,
	AZ_CAPACITY,       /* AllocationFailed, ZonalAllocationFailed, Overconstrained..., SkuNotAvailable */
	AZ_QUOTA,          /* OperationNotAllowed (a quota), QuotaExceeded */
	AZ_THROTTLED,      /* 429 */
	AZ_TRANSIENT,      /* 5xx, network, timeouts, 409 Conflict of an operation in progress */
	AZ_PERMANENT,      /* 400 and other 4xx */
	AZ_AUTH,           /* 401, 403 (AuthorizationFailed), Entra's refusals */
	AZ_NOT_FOUND,      /* 404 */
};

const char *az_class_name(enum az_class c);

struct az_creds {
	char *tenant, *client_id, *secret, *cert_path;
	char *authority;         /* without a trailing / */
	bool managed;            /* the managed identity (IMDS) */
	char *source;            /* for messages: "file PATH" */
};

/* Read a credentials file (see above). 0, or -1 with err (file:line of a
 * bad line; never a value). */
int az_creds_from_file(const char *path, struct az_creds *out, burst_err_t *err);
/* The VM's managed identity, without a file. */
void az_creds_managed(struct az_creds *out);
void az_creds_free(struct az_creds *c);

/*
 * Parse a token answer (Entra's: expires_in a number; IMDS's: expires_in
 * a string, expires_on seconds since the epoch). *token (caller frees,
 * wiping it) and *expires. 0, or -1 with err.
 */
int az_token_parse(const char *json, time_t now, char **token, time_t *expires, burst_err_t *err);

/*
 * The client assertion of a certificate credential: a signed JWT for
 * token_url (its aud), iss and sub client_id, valid from now for 10
 * minutes. NULL with err (the PEM file unreadable, no key or certificate).
 */
char *az_client_assertion(const char *pem_path, const char *client_id, const char *token_url, time_t now,
			  burst_err_t *err);

struct az_auth_opts {
	const struct az_creds *creds;    /* copied */
	const char *imds;                /* NULL: AZ_DEFAULT_IMDS */
	const char *ca_file;             /* NULL: the system's CA */
	bool allow_http;                 /* an http authority (tests) */
	long timeout_ms;                 /* 0: 30000 */
};

struct az_auth;

struct az_auth *az_auth_new(const struct az_auth_opts *o, burst_err_t *err);
void az_auth_free(struct az_auth *a);
/* A token valid for at least AZ_TOKEN_MARGIN more seconds (kept or new):
 * owned by a, valid until the next call. NULL with err and *cls. */
const char *az_auth_token(struct az_auth *a, enum az_class *cls, burst_err_t *err);
/* Forget the token (ARM refused it: 401). */
void az_auth_invalidate(struct az_auth *a);
/* Tokens asked for so far. */
unsigned az_auth_tokens(const struct az_auth *a);

#endif

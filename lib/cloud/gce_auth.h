/*
 * gce_auth.h - OAuth 2.0 access tokens for Google's Compute Engine API.
 *
 * Two ways, as Google's own client libraries have them:
 *
 *  - a service account's JSON key (CredentialsFile=): the file Google's
 *    console or `gcloud iam service-accounts keys create` writes, with
 *    "type": "service_account", client_email, private_key (PEM, RSA),
 *    private_key_id, token_uri and project_id. A JWT (RFC 7519) signed
 *    with that key (RS256: RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 3.3),
 *    whose claims are iss = client_email, scope, aud = token_uri, iat and
 *    exp (one hour later), is posted to token_uri as
 *    grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (RFC 7523) and
 *    answered with {"access_token", "expires_in", "token_type": "Bearer"}.
 *    The file must be owned by root or by the user reading it and must not
 *    be readable or writable by group or others: refused otherwise, the
 *    message naming the file, its owner or mode and the chmod/chown that
 *    fixes it.
 *
 *  - on a GCE VM, its metadata server: GET
 *    /computeMetadata/v1/instance/service-accounts/default/token with the
 *    header "Metadata-Flavor: Google" (and the answer must carry it too),
 *    the same JSON. The server is GCE_METADATA_HOST (HOST[:PORT], as
 *    Google's libraries read it) when set, else 169.254.169.254.
 *
 * A token is kept until GCE_TOKEN_REFRESH_MARGIN seconds (at most half its
 * life) before it expires. Nothing secret (the private key, an assertion,
 * a token) appears in any message: what the token endpoint says back is
 * quoted with any of them in it replaced by "[redacted]", and its control
 * characters written out (str_escape_ctl).
 *
 * Not thread-safe: one gce_auth per thread (the driver's worker).
 */
#ifndef BURST_GCE_AUTH_H
#define BURST_GCE_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "burst_err.h"

#define GCE_TOKEN_REFRESH_MARGIN 300
/* the scope the driver asks for: Compute Engine, read and write */
#define GCE_SCOPE_COMPUTE "https://www.googleapis.com/auth/compute"
#define GCE_TOKEN_URI_DEFAULT "https://oauth2.googleapis.com/token"
#define GCE_METADATA_DEFAULT "169.254.169.254"

/* A service account's key, as read from its JSON file. */
struct gce_key {
	char *client_email;
	char *private_key;       /* PEM (wiped when freed) */
	char *private_key_id;    /* may be NULL */
	char *token_uri;         /* GCE_TOKEN_URI_DEFAULT when the file has none */
	char *project_id;        /* may be NULL */
	char *source;            /* "key file PATH (CLIENT_EMAIL)", for messages */
};

/*
 * Read and check a service-account key file (see above). 0, or -1 with err
 * (the file, and what is wrong with it: its mode or owner, not JSON, not a
 * service account's key, a field missing; never a value of the key).
 */
int gce_key_from_file(const char *path, struct gce_key *out, burst_err_t *err);
/* The same checks on a key file's text already read (path: for messages). */
int gce_key_parse(const char *json, const char *path, struct gce_key *out, burst_err_t *err);
void gce_key_free(struct gce_key *k);

/*
 * The signed JWT that asks k's token_uri for a token of scope at time now
 * (caller frees, and should wipe it: it is worth a token for an hour), or
 * NULL with err (the key is not an RSA private key OpenSSL reads).
 */
char *gce_jwt_assertion(const struct gce_key *k, const char *scope, time_t now, burst_err_t *err);

/* base64url without padding (RFC 4648 5), as JWTs have it (caller frees). */
char *gce_b64url(const unsigned char *p, size_t n);

/* An access token and when it expires. */
struct gce_token {
	char *access;            /* wiped when freed */
	time_t obtained, expires;
};
void gce_token_free(struct gce_token *t);

/*
 * Parse the token endpoint's (or the metadata server's) answer, received
 * at now: 0, or -1 with err (what is missing or wrong; the value of no
 * field). A token_type other than Bearer is refused.
 */
int gce_token_parse(const char *json, time_t now, struct gce_token *out, burst_err_t *err);
/* Whether t must be replaced at now (GCE_TOKEN_REFRESH_MARGIN). */
bool gce_token_expiring(const struct gce_token *t, time_t now);

struct gce_auth_opts {
	const char *key_file;       /* CredentialsFile=; NULL: the metadata server */
	const char *metadata_host;  /* NULL: GCE_METADATA_HOST, else GCE_METADATA_DEFAULT */
	const char *ca_file;        /* for an https token_uri (NULL: the system's) */
	bool allow_http;            /* a plain-HTTP token_uri is accepted (tests) */
	long timeout_ms;            /* per request; 0: 10000 */
};

struct gce_auth;

/* A new source of tokens (the key file is read now); NULL with err. */
struct gce_auth *gce_auth_new(const struct gce_auth_opts *o, burst_err_t *err);
void gce_auth_free(struct gce_auth *a);

/*
 * The current access token (valid until the next call; NULL with err when
 * none can be had: err says from where and why). A new one is asked for
 * when none is held or it expires soon, or when force is set (the API
 * answered 401).
 */
const char *gce_auth_token(struct gce_auth *a, bool force, burst_err_t *err);

/* The project the credentials name (the key file's project_id, or the
 * metadata server's project/project-id): NULL with err when unknown. */
const char *gce_auth_project(struct gce_auth *a, burst_err_t *err);

/* "key file PATH (EMAIL)" or "the metadata server HOST", for messages. */
const char *gce_auth_source(const struct gce_auth *a);

/* Tokens asked for so far (tests, bench). */
unsigned gce_auth_tokens(const struct gce_auth *a);

/* Replace every occurrence of secret (when 8 bytes or longer) in msg
 * (cap bytes) with "[redacted]". */
void gce_redact(char *msg, size_t cap, const char *secret);

#endif

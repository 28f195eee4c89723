/*
 * aws_creds.h - AWS credentials for the EC2 client.
 *
 * aws_creds_resolve looks, in this order, at:
 *   1. the file the admin named (burst.conf CredentialsFile=), INI format as
 *      ~/.aws/credentials: "[PROFILE]" sections with aws_access_key_id,
 *      aws_secret_access_key and optionally aws_session_token;
 *   2. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 *      optionally AWS_SESSION_TOKEN;
 *   3. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 *      ~/.aws/credentials), section "[PROFILE]";
 *   4. the config file (AWS_CONFIG_FILE, else ~/.aws/config), section
 *      "[profile PROFILE]" (or "[default]");
 *   5. the instance role, through IMDSv2 (endpoint
 *      AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254).
 * PROFILE is the one given, else AWS_PROFILE, else "default". When a file
 * was named by the admin, or a profile was named and is found nowhere,
 * resolution stops with an error rather than falling through.
 *
 * A file from which a secret is taken must not be readable or writable by
 * group or others: such a file is refused (the message names the file, its
 * mode and "chmod 600"). Secrets never appear in any error message.
 */
#ifndef BURST_AWS_CREDS_H
#define BURST_AWS_CREDS_H

#include <stdbool.h>
#include <time.h>

#include "burst_err.h"

/* Refresh temporary credentials this many seconds before they expire. */
#define AWS_CREDS_REFRESH_MARGIN 300

struct aws_creds {
	char *access_key;
	char *secret_key;
	char *session_token;    /* NULL when none */
	time_t expiration;      /* 0 = does not expire */
	char *source;           /* for humans: "environment", "file /x (profile p)", ... */
};

struct aws_creds_opts {
	const char *credentials_file;  /* CredentialsFile=, or NULL */
	const char *profile;           /* NULL: AWS_PROFILE, else "default" */
	const char *imds_endpoint;     /* NULL: AWS_EC2_METADATA_SERVICE_ENDPOINT, else the link-local one */
	bool no_imds;                  /* do not ask the instance metadata service */
	long imds_timeout_ms;          /* 0: 2000 */
};

/*
 * Find credentials as described above. Returns 0 and fills *out (the caller
 * frees it with aws_creds_free), or -1 with err set and *out zeroed.
 */
int aws_creds_resolve(const struct aws_creds_opts *opts, struct aws_creds *out,
		      burst_err_t *err);

/*
 * Read one profile from an INI credentials or config file. is_config: the
 * sections are "[profile NAME]" (and "[default]"). Returns 1 and fills *out
 * (caller frees with aws_creds_free) when the profile holds a key pair, 0
 * when the profile or the keys are absent, -1 with err set on a parse error
 * (naming file:line), an unreadable file or unsafe permissions.
 */
int aws_creds_from_file(const char *path, const char *profile, bool is_config,
			struct aws_creds *out, burst_err_t *err);

/*
 * The instance metadata's answers, as aws_creds_resolve reads them.
 * aws_creds_imds_role: the answer to /latest/meta-data/iam/security-
 * credentials/ (changed in place) is the instance's role name on its first
 * line; returns it, or NULL when there is none. aws_creds_imds_doc: the
 * answer to .../ROLE, a JSON object with AccessKeyId, SecretAccessKey,
 * Token, Expiration and Code; returns 0 and fills *out (the caller frees
 * it; its source is left NULL), or -1 with err naming where (the metadata
 * service's address) and role, and *out zeroed.
 */
char *aws_creds_imds_role(char *answer);
int aws_creds_imds_doc(const char *where, const char *role, const char *doc,
		       struct aws_creds *out, burst_err_t *err);

/* True when c expires within AWS_CREDS_REFRESH_MARGIN seconds of now. */
bool aws_creds_expiring(const struct aws_creds *c, time_t now);

/* Deep copy (dst freed by the caller with aws_creds_free). */
void aws_creds_copy(struct aws_creds *dst, const struct aws_creds *src);

/* Frees the strings (wiping the secrets first) and zeroes c; c may be NULL. */
void aws_creds_free(struct aws_creds *c);

#endif

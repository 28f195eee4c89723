/*
 * aws_creds.c - AWS credentials: admin file, environment, shared files,
 * instance role (IMDSv2). See aws_creds.h.
 */
#include "aws_creds.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "imds.h"
#include "strutil.h"

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void aws_creds_free(struct aws_creds *c)
{
	if (!c)
		return;
	free(c->access_key);
	wipe_free(c->secret_key);
	wipe_free(c->session_token);
	free(c->source);
	memset(c, 0, sizeof(*c));
}

void aws_creds_copy(struct aws_creds *dst, const struct aws_creds *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->access_key = src->access_key ? xstrdup(src->access_key) : NULL;
	dst->secret_key = src->secret_key ? xstrdup(src->secret_key) : NULL;
	dst->session_token = src->session_token ? xstrdup(src->session_token) : NULL;
	dst->source = src->source ? xstrdup(src->source) : NULL;
	dst->expiration = src->expiration;
}

bool aws_creds_expiring(const struct aws_creds *c, time_t now)
{
	return c->expiration != 0 && now + AWS_CREDS_REFRESH_MARGIN >= c->expiration;
}

/* Is this line's section the profile we want? */
static bool section_matches(const char *sec, const char *profile, bool is_config)
{
	if (!is_config)
		return strcmp(sec, profile) == 0;
	if (strcmp(profile, "default") == 0 && strcmp(sec, "default") == 0)
		return true;
	if (strncmp(sec, "profile", 7) == 0 && isspace((unsigned char)sec[7])) {
		const char *n = sec + 7;
		while (isspace((unsigned char)*n))
			n++;
		return strcmp(n, profile) == 0;
	}
	return false;
}

int aws_creds_from_file(const char *path, const char *profile, bool is_config,
			struct aws_creds *out, burst_err_t *err)
{
	FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	bool in_profile = false;
	char *ak = NULL, *sk = NULL, *tok = NULL;
	struct stat st;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "r");
	if (!f) {
		burst_err_set(err, "cannot read AWS credentials file %s: %s", path, strerror(errno));
		goto out;
	}
	if (fstat(fileno(f), &st) != 0) {
		burst_err_set(err, "cannot stat AWS credentials file %s: %s", path, strerror(errno));
		goto out;
	}
	while (getline(&line, &cap, f) >= 0) {
		char *s = line, *eq, *key, *val;
		bool indented;

		lineno++;
		s[strcspn(s, "\r\n")] = '\0';
		indented = (*s == ' ' || *s == '\t');
		str_trim(s);
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');
			if (!end || end[1] != '\0') {
				burst_err_set(err, "%s:%u: a section header must look like [name]",
					      path, lineno);
				goto out;
			}
			*end = '\0';
			in_profile = section_matches(str_trim(s + 1), profile, is_config);
			continue;
		}
		if (indented)      /* a nested value (config "s3 =" blocks): not ours */
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			burst_err_set(err, "%s:%u: expected 'key = value' or '[section]'",
				      path, lineno);
			goto out;
		}
		*eq = '\0';
		key = str_trim(s);
		val = str_trim(eq + 1);
		if (!in_profile)
			continue;
		if (strcmp(key, "aws_access_key_id") == 0) {
			free(ak);
			ak = xstrdup(val);
		} else if (strcmp(key, "aws_secret_access_key") == 0) {
			wipe_free(sk);
			sk = xstrdup(val);
		} else if (strcmp(key, "aws_session_token") == 0) {
			wipe_free(tok);
			tok = xstrdup(val);
		}
	}
	if (!ak || !sk || !*ak || !*sk) {
		rc = 0;
		goto out;
	}
	if (st.st_mode & 077) {
		burst_err_set(err, "AWS credentials file %s has mode %04o: group or others "
			      "can read or change it; refusing to use it. Run: chmod 600 %s",
			      path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	out->access_key = ak;
	out->secret_key = sk;
	out->session_token = (tok && *tok) ? tok : NULL;
	if (!out->session_token)
		wipe_free(tok);
	ak = sk = tok = NULL;
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "file %s (profile %s)", path, profile);
		out->source = sb_take(&sb);
	}
	rc = 1;
out:
	if (line) {
		explicit_bzero(line, cap);
		free(line);
	}
	if (f)
		fclose(f);
	free(ak);
	wipe_free(sk);
	wipe_free(tok);
	return rc;
}

/* ---- IMDSv2 (imds.h) ---- */

/* GET path: the body of a 200 answer (caller frees), else NULL with err. */
static char *imds_ok(struct imds *m, const char *path, burst_err_t *err)
{
	long status;
	size_t len;
	char *body;

	/* metadata answers are small */
	if (imds_get(m, path, 65536, &status, &body, &len, err) < 0)
		return NULL;
	if (status != 200) {
		explicit_bzero(body, len);
		free(body);
		burst_err_set(err, "instance metadata service %s%s: HTTP %ld", imds_base(m), path, status);
		return NULL;
	}
	return body;
}

static time_t parse_iso8601(const char *s)
{
	struct tm tm;
	char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		return 0;
	return timegm(&tm);
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

char *aws_creds_imds_role(char *answer)
{
	answer[strcspn(answer, "\r\n")] = '\0';
	str_trim(answer);
	return *answer && !strchr(answer, '/') ? answer : NULL;
}

int aws_creds_imds_doc(const char *where, const char *role, const char *doc,
		       struct aws_creds *out, burst_err_t *err)
{
	struct json_object *j;
	const char *ak, *sk, *st, *exp, *code;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	j = json_tokener_parse(doc);
	if (!j || !json_object_is_type(j, json_type_object)) {
		burst_err_set(err, "instance metadata service %s: the credentials of role %s "
			      "are not a JSON object", where, role);
		goto out;
	}
	code = jstr(j, "Code");
	ak = jstr(j, "AccessKeyId");
	sk = jstr(j, "SecretAccessKey");
	st = jstr(j, "Token");
	exp = jstr(j, "Expiration");
	if ((code && strcmp(code, "Success") != 0) || !ak || !sk || !*ak || !*sk) {
		burst_err_set(err, "instance metadata service %s: role %s gave no credentials (Code %s)",
			      where, role, code ? code : "missing");
		goto out;
	}
	out->access_key = xstrdup(ak);
	out->secret_key = xstrdup(sk);
	out->session_token = st && *st ? xstrdup(st) : NULL;
	out->expiration = exp ? parse_iso8601(exp) : 0;
	if (exp && out->expiration == 0) {
		aws_creds_free(out);
		burst_err_set(err, "instance metadata service %s: role %s: cannot parse Expiration '%s'",
			      where, role, exp);
		goto out;
	}
	rc = 0;
out:
	json_object_put(j);
	return rc;
}

static int from_imds(const struct aws_creds_opts *o, struct aws_creds *out, burst_err_t *err)
{
	struct imds *m = NULL;
	char *roles = NULL, *doc = NULL, *path = NULL;
	const char *bare;
	int rc = -1;

	m = imds_open(o->imds_endpoint, o->imds_timeout_ms, err);
	if (!m)
		goto out;
	bare = imds_base(m);
	roles = imds_ok(m, "/latest/meta-data/iam/security-credentials/", err);
	if (!roles)
		goto out;
	if (!aws_creds_imds_role(roles)) {
		burst_err_set(err, "instance metadata service %s: this instance has no IAM role "
			      "(attach an instance profile, or give CredentialsFile=)", bare);
		goto out;
	}
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "/latest/meta-data/iam/security-credentials/%s", roles);
		path = sb_take(&sb);
	}
	doc = imds_ok(m, path, err);
	if (!doc)
		goto out;
	if (aws_creds_imds_doc(bare, roles, doc, out, err) < 0)
		goto out;
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "instance role %s", roles);
		out->source = sb_take(&sb);
	}
	rc = 0;
out:
	if (doc) {
		explicit_bzero(doc, strlen(doc));
		free(doc);
	}
	free(roles);
	free(path);
	imds_close(m);
	return rc;
}

static char *home_path(const char *rel)
{
	const char *home = getenv("HOME");
	struct strbuf sb;

	if (!home || !*home)
		return NULL;
	sb_init(&sb);
	sb_addf(&sb, "%s/%s", home, rel);
	return sb_take(&sb);
}

int aws_creds_resolve(const struct aws_creds_opts *opts, struct aws_creds *out,
		      burst_err_t *err)
{
	struct aws_creds_opts none = { 0 };
	const char *profile, *ak, *sk, *env;
	bool named_profile;
	char *shared = NULL, *config = NULL;
	int r, rc = -1;

	memset(out, 0, sizeof(*out));
	if (!opts)
		opts = &none;
	profile = opts->profile;
	if (!profile || !*profile)
		profile = getenv("AWS_PROFILE");
	named_profile = profile && *profile;
	if (!named_profile)
		profile = "default";

	if (opts->credentials_file && *opts->credentials_file) {
		r = aws_creds_from_file(opts->credentials_file, profile, false, out, err);
		if (r == 0)
			burst_err_set(err, "AWS credentials file %s (CredentialsFile=) has no "
				      "[%s] section with aws_access_key_id and "
				      "aws_secret_access_key", opts->credentials_file, profile);
		rc = r == 1 ? 0 : -1;
		goto out;
	}

	ak = getenv("AWS_ACCESS_KEY_ID");
	sk = getenv("AWS_SECRET_ACCESS_KEY");
	if (ak && *ak && sk && *sk) {
		const char *tok = getenv("AWS_SESSION_TOKEN");
		out->access_key = xstrdup(ak);
		out->secret_key = xstrdup(sk);
		out->session_token = tok && *tok ? xstrdup(tok) : NULL;
		out->source = xstrdup("environment");
		rc = 0;
		goto out;
	}

	env = getenv("AWS_SHARED_CREDENTIALS_FILE");
	shared = env && *env ? xstrdup(env) : home_path(".aws/credentials");
	if (shared && access(shared, F_OK) == 0) {
		r = aws_creds_from_file(shared, profile, false, out, err);
		if (r != 0) {
			rc = r == 1 ? 0 : -1;
			goto out;
		}
	}
	env = getenv("AWS_CONFIG_FILE");
	config = env && *env ? xstrdup(env) : home_path(".aws/config");
	if (config && access(config, F_OK) == 0) {
		r = aws_creds_from_file(config, profile, true, out, err);
		if (r != 0) {
			rc = r == 1 ? 0 : -1;
			goto out;
		}
	}
	if (named_profile) {
		burst_err_set(err, "AWS profile %s has no credentials in %s nor %s: add "
			      "aws_access_key_id and aws_secret_access_key, or unset AWS_PROFILE",
			      profile, shared ? shared : "~/.aws/credentials",
			      config ? config : "~/.aws/config");
		goto out;
	}
	if (opts->no_imds) {
		burst_err_set(err, "no AWS credentials: set CredentialsFile= in burst.conf, "
			      "or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a "
			      "[default] profile in %s", shared ? shared : "~/.aws/credentials");
		goto out;
	}
	if (from_imds(opts, out, err) != 0) {
		burst_err_append(err, "no AWS credentials found: set CredentialsFile= in "
				 "burst.conf, the environment, %s, or give the instance an IAM role",
				 shared ? shared : "~/.aws/credentials");
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		aws_creds_free(out);
	free(shared);
	free(config);
	return rc;
}

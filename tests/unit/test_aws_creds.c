/*
 * test_aws_creds.c - lib/cloud/aws_creds.c: file parsing, profiles, permissions,
 * the resolution order, expiry. (IMDSv2 is exercised by
 * tests/integration/test_ec2_faults.sh against a fake metadata service.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aws_creds.h"
#include "strutil.h"
#include "tap.h"

static char dir[] = "/tmp/test_aws_creds.XXXXXX";

static char *put(const char *name, mode_t mode, const char *text)
{
	struct strbuf sb;
	FILE *f;
	char *p;

	sb_init(&sb);
	sb_addf(&sb, "%s/%s", dir, name);
	p = sb_take(&sb);
	f = fopen(p, "w");
	if (!f) {
		printf("Bail out! cannot write %s\n", p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
	return p;
}

static const char creds_text[] =
	"# shared credentials\n"
	"[default]\n"
	"aws_access_key_id = AKIDDEFAULT\n"
	"aws_secret_access_key = secretDEFAULT/abc+def\n"
	"\n"
	"[work]\n"
	"aws_access_key_id=AKIDWORK\n"
	"aws_secret_access_key=secretWORK\n"
	"aws_session_token = tokenWORK\n"
	"region = eu-west-1\n";

static const char config_text[] =
	"[default]\n"
	"region = us-east-1\n"
	"[profile cfg]\n"
	"aws_access_key_id = AKIDCFG\n"
	"aws_secret_access_key = secretCFG\n"
	"s3 =\n"
	"  max_concurrent_requests = 20\n"
	"[cfg]\n"
	"aws_access_key_id = AKIDWRONG\n"
	"aws_secret_access_key = secretWRONG\n";

static void test_files(void)
{
	struct aws_creds c;
	burst_err_t err = { 0 };
	char *cf = put("credentials", 0600, creds_text);
	char *cfg = put("config", 0600, config_text);
	char *bad, *open_file, *msg_want;
	struct strbuf sb;

	is_num(aws_creds_from_file(cf, "default", false, &c, &err), 1, "default profile found");
	is_str(c.access_key, "AKIDDEFAULT", "its access key");
	is_str(c.secret_key, "secretDEFAULT/abc+def", "its secret key");
	ok(c.session_token == NULL, "no session token");
	has_str(c.source, cf, "source names the file");
	aws_creds_free(&c);
	is_num(aws_creds_from_file(cf, "work", false, &c, &err), 1, "work profile found");
	is_str(c.access_key, "AKIDWORK", "key=value without spaces");
	is_str(c.session_token, "tokenWORK", "session token");
	aws_creds_free(&c);
	is_num(aws_creds_from_file(cf, "nope", false, &c, &err), 0, "absent profile: 0");
	ok(c.access_key == NULL, "and nothing filled");

	is_num(aws_creds_from_file(cfg, "cfg", true, &c, &err), 1, "config: [profile cfg]");
	is_str(c.access_key, "AKIDCFG", "not the [cfg] section");
	aws_creds_free(&c);
	is_num(aws_creds_from_file(cfg, "default", true, &c, &err), 0,
	       "config [default] without keys: 0");

	bad = put("bad", 0600, "[default]\naws_access_key_id = A\nthis line is wrong\n");
	is_num(aws_creds_from_file(bad, "default", false, &c, &err), -1, "parse error");
	sb_init(&sb);
	sb_addf(&sb, "%s:3:", bad);
	msg_want = sb_take(&sb);
	has_str(err.msg, msg_want, "error names file:line");
	free(msg_want);
	free(bad);
	bad = put("bad2", 0600, "\n[default\naws_access_key_id = A\n");
	is_num(aws_creds_from_file(bad, "default", false, &c, &err), -1, "bad section header");
	sb_init(&sb);
	sb_addf(&sb, "%s:2:", bad);
	msg_want = sb_take(&sb);
	has_str(err.msg, msg_want, "error names file:line");
	free(msg_want);
	free(bad);

	open_file = put("open", 0644, creds_text);
	is_num(aws_creds_from_file(open_file, "default", false, &c, &err), -1,
	       "world-readable file refused");
	has_str(err.msg, open_file, "message names the file");
	has_str(err.msg, "0644", "message gives the mode");
	has_str(err.msg, "chmod 600", "message says what to do");
	ok(!strstr(err.msg, "secretDEFAULT"), "no secret in the message");
	chmod(open_file, 0640);
	is_num(aws_creds_from_file(open_file, "default", false, &c, &err), -1,
	       "group-readable file refused");
	has_str(err.msg, "0640", "mode 0640 named");
	chmod(open_file, 0400);
	is_num(aws_creds_from_file(open_file, "default", false, &c, &err), 1, "0400 accepted");
	aws_creds_free(&c);
	free(open_file);
	ok(aws_creds_from_file("/nonexistent/creds", "default", false, &c, &err) == -1,
	   "missing file: -1");
	has_str(err.msg, "/nonexistent/creds", "names it");
	free(cf);
	free(cfg);
}

static void test_resolve(void)
{
	struct aws_creds_opts o = { 0 };
	struct aws_creds c;
	burst_err_t err = { 0 };
	char *cf = put("credentials", 0600, creds_text);
	char *cfg = put("config", 0600, config_text);
	char *admin = put("admin", 0600, "[default]\naws_access_key_id = AKIDADMIN\n"
			  "aws_secret_access_key = secretADMIN\n");
	char *open_file = put("open2", 0604, creds_text);

	setenv("HOME", dir, 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", cf, 1);
	setenv("AWS_CONFIG_FILE", cfg, 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secretENV", 1);
	setenv("AWS_SESSION_TOKEN", "tokenENV", 1);
	unsetenv("AWS_PROFILE");
	o.no_imds = true;

	o.credentials_file = admin;
	ok(aws_creds_resolve(&o, &c, &err) == 0, "admin file");
	is_str(c.access_key, "AKIDADMIN", "admin file wins over the environment");
	aws_creds_free(&c);
	o.credentials_file = open_file;
	ok(aws_creds_resolve(&o, &c, &err) == -1, "unsafe admin file: error, no fallback");
	has_str(err.msg, "chmod 600", "says chmod 600");
	o.credentials_file = admin;
	o.profile = "other";
	ok(aws_creds_resolve(&o, &c, &err) == -1, "admin file without the profile: error");
	has_str(err.msg, "[other]", "names the section");
	o.profile = NULL;
	o.credentials_file = NULL;

	ok(aws_creds_resolve(&o, &c, &err) == 0, "environment");
	is_str(c.access_key, "AKIDENV", "environment before shared file");
	is_str(c.session_token, "tokenENV", "with its session token");
	is_str(c.source, "environment", "source");
	aws_creds_free(&c);

	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	ok(aws_creds_resolve(&o, &c, &err) == 0, "shared file");
	is_str(c.access_key, "AKIDDEFAULT", "default profile of the shared file");
	aws_creds_free(&c);
	setenv("AWS_PROFILE", "work", 1);
	ok(aws_creds_resolve(&o, &c, &err) == 0, "AWS_PROFILE=work");
	is_str(c.access_key, "AKIDWORK", "work profile");
	aws_creds_free(&c);
	o.profile = "cfg";
	ok(aws_creds_resolve(&o, &c, &err) == 0, "given profile beats AWS_PROFILE, from config");
	is_str(c.access_key, "AKIDCFG", "config [profile cfg]");
	aws_creds_free(&c);
	o.profile = "ghost";
	ok(aws_creds_resolve(&o, &c, &err) == -1, "named profile nowhere: error");
	has_str(err.msg, "ghost", "names the profile");
	o.profile = NULL;
	unsetenv("AWS_PROFILE");

	setenv("AWS_SHARED_CREDENTIALS_FILE", open_file, 1);
	ok(aws_creds_resolve(&o, &c, &err) == -1, "unsafe shared file refused");
	has_str(err.msg, open_file, "names it");
	ok(!strstr(err.msg, "secret"), "no secret in the message");

	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/x", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/y", 1);
	ok(aws_creds_resolve(&o, &c, &err) == -1, "nothing anywhere (no IMDS): error");
	has_str(err.msg, "CredentialsFile=", "says how to give credentials");
	free(cf);
	free(cfg);
	free(admin);
	free(open_file);
}

static void test_expiry(void)
{
	struct aws_creds c = { 0 }, d;
	time_t now = 1700000000;

	ok(!aws_creds_expiring(&c, now), "no expiration: never expiring");
	c.expiration = now + AWS_CREDS_REFRESH_MARGIN + 1;
	ok(!aws_creds_expiring(&c, now), "301 s left: fine");
	c.expiration = now + AWS_CREDS_REFRESH_MARGIN;
	ok(aws_creds_expiring(&c, now), "300 s left: refresh");
	c.expiration = now - 5;
	ok(aws_creds_expiring(&c, now), "expired: refresh");
	c.access_key = "A";
	c.secret_key = "S";
	aws_creds_copy(&d, &c);
	is_str(d.secret_key, "S", "copy");
	ok(d.session_token == NULL && d.expiration == c.expiration, "copy keeps fields");
	aws_creds_free(&d);
	ok(d.access_key == NULL, "free zeroes");
}

int main(void)
{
	char cmd[256];
	int rc;

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	test_files();
	test_resolve();
	test_expiry();
	rc = done_testing();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}

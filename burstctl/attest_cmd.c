/*
 * attest_cmd.c - burstctl's attestation verbs.
 *
 *   burstctl attest --key KEY --node N --instance I --provenance-id SHA256
 *                   --results RESULTS.json [--verification] ...
 *       a signed DSSE envelope holding an in-toto statement of the
 *       acceptance results (test-result) or of the admission decision
 *       (simple verification result, --verification)
 *   burstctl attest-key --key KEY
 *       the public key (PEM) of KEY, made first if absent
 *   burstctl verify FILE [--key PUBKEY.pem] [--json]
 *       check an envelope, or a JSON array of envelopes (all must verify):
 *       exit 0 verified, 1 not, 2 usage or input error
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "attest.h"
#include "attest_cmd.h"
#include "verb.h"
#include "strutil.h"

#define EXIT_OK 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2

#define DEFAULT_PUBKEY "/etc/slurm/burst-attest.pub"
#define DEFAULT_VERIFIER "urn:slurm-burst:burst-agent:v1"

const char attest_cmd_usage[] =
"  attest --key KEY --node N --instance ID --provenance-id SHA256 --results FILE\n"
"                           a signed in-toto attestation (DSSE) of acceptance results;\n"
"                           --verification: of the admission decision instead\n"
"  attest-key --key KEY     the public key of the attestation key KEY (made if absent)\n"
"  verify FILE [--key PUB]  check a signed attestation: exit 0 verified, 1 not\n";

struct aopts {
	const char *key, *node, *instance, *prov_id, *results, *verifier, *policy;
	const char *decision, *acceptance_conf, *url, *output;
	bool verification, json;
	unsigned attest_only;    /* how many attest-only options were given */
};

static const char *prog = "burstctl";

/* The whole of path ("-": standard input), NUL-terminated. NULL + message. */
static char *slurp(const char *path, size_t *len_out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	struct strbuf sb;
	char buf[65536];
	size_t n;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return NULL;
	}
	sb_init(&sb);
	sb_add(&sb, "");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		char *chunk = xstrndup(buf, n);
		if (strlen(chunk) != n) {
			fprintf(stderr, "%s: %s: contains a NUL byte; not a JSON text\n", prog, path);
			free(chunk);
			sb_free(&sb);
			if (f != stdin)
				fclose(f);
			return NULL;
		}
		sb_add(&sb, chunk);
		free(chunk);
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: %s: read error: %s\n", prog, path, strerror(errno));
		sb_free(&sb);
		if (f != stdin)
			fclose(f);
		return NULL;
	}
	if (f != stdin)
		fclose(f);
	if (len_out)
		*len_out = sb.len;
	return sb_take(&sb);
}

static int write_out(const char *path, const char *text)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	fputs(text, f);
	if (text[0] && text[strlen(text) - 1] != '\n')
		fputc('\n', f);
	if (fflush(f) != 0 || ferror(f) || (f != stdout && fclose(f) != 0)) {
		fprintf(stderr, "%s: %s: write error: %s\n", prog, path ? path : "stdout",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* sha256 hex of a file's bytes into hex[65]. */
static int file_sha256(const char *path, char hex[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	size_t len = 0, i;
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	char buf[65536];
	size_t n;
	int rc = -1;

	if (!f) {
		fprintf(stderr, "%s: --acceptance-conf %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		data = xrealloc(data, len + n + 1);
		memcpy(data + len, buf, n);
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: --acceptance-conf %s: read error\n", prog, path);
		goto out;
	}
	if (EVP_Digest(data ? data : "", len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
		fprintf(stderr, "%s: cannot hash %s\n", prog, path);
		goto out;
	}
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	rc = 0;
out:
	free(data);
	fclose(f);
	return rc;
}

/*
 * The acceptance results: a JSON array of {"name": S, "passed": B,
 * "warned": B (optional)}, or an object holding it as "results".
 * Returns the tests (names point into *doc; free the array, put *doc).
 */
static struct attest_test *load_results(const char *path, size_t *n_out, json_object **doc)
{
	char *text = slurp(path, NULL);
	json_object *root, *arr;
	struct attest_test *t = NULL;
	enum json_tokener_error jerr;
	size_t i, n;

	*doc = NULL;
	if (!text)
		return NULL;
	root = json_tokener_parse_verbose(text, &jerr);
	free(text);
	if (!root) {
		fprintf(stderr, "%s: %s: not JSON: %s\n", prog, path, json_tokener_error_desc(jerr));
		return NULL;
	}
	arr = root;
	if (json_object_is_type(root, json_type_object))
		json_object_object_get_ex(root, "results", &arr);
	if (!arr || !json_object_is_type(arr, json_type_array)) {
		fprintf(stderr, "%s: %s: want a JSON array of {\"name\": ..., \"passed\": true|false}\n",
			prog, path);
		goto fail;
	}
	n = json_object_array_length(arr);
	if (n == 0) {
		fprintf(stderr, "%s: %s: no test results: nothing to attest\n", prog, path);
		goto fail;
	}
	t = xcalloc(n, sizeof(*t));
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *v;
		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "name", &v) || !json_object_is_type(v, json_type_string) ||
		    !*json_object_get_string(v)) {
			fprintf(stderr, "%s: %s: result #%zu: \"name\" must be a non-empty string\n",
				prog, path, i + 1);
			goto fail;
		}
		t[i].name = json_object_get_string(v);
		if (!json_object_object_get_ex(e, "passed", &v) || !json_object_is_type(v, json_type_boolean)) {
			fprintf(stderr, "%s: %s: result #%zu (%s): \"passed\" must be true or false\n",
				prog, path, i + 1, t[i].name);
			goto fail;
		}
		t[i].passed = json_object_get_boolean(v);
		if (json_object_object_get_ex(e, "warned", &v)) {
			if (!json_object_is_type(v, json_type_boolean)) {
				fprintf(stderr, "%s: %s: result #%zu (%s): \"warned\" must be true or false\n",
					prog, path, i + 1, t[i].name);
				goto fail;
			}
			t[i].warned = json_object_get_boolean(v);
		}
	}
	*n_out = n;
	*doc = root;
	return t;
fail:
	free(t);
	json_object_put(root);
	return NULL;
}

static int cmd_attest(const struct aopts *o, int argc)
{
	struct attest_subject subj = { o->node, o->instance, o->prov_id };
	struct attest_test_run run = { NULL, NULL, o->url };
	struct attest_test *t = NULL;
	json_object *doc = NULL;
	EVP_PKEY *key = NULL;
	char *stmt = NULL, *env = NULL, conf_hex[65];
	size_t n = 0, i;
	bool admitted;
	burst_err_t err;
	int rc = EXIT_USAGE;

	if (argc > 0) {
		fprintf(stderr, "%s: attest takes no arguments, only options (see burstctl --help)\n", prog);
		return EXIT_USAGE;
	}
	if (!o->key || !o->node || !o->instance || !o->prov_id || !o->results) {
		fprintf(stderr, "%s: attest needs --key, --node, --instance, --provenance-id and "
			"--results (missing: %s%s%s%s%s)\n", prog, o->key ? "" : "--key ",
			o->node ? "" : "--node ", o->instance ? "" : "--instance ",
			o->prov_id ? "" : "--provenance-id ", o->results ? "" : "--results");
		return EXIT_USAGE;
	}
	if (o->decision && strcmp(o->decision, "admitted") && strcmp(o->decision, "rejected")) {
		fprintf(stderr, "%s: --decision is 'admitted' or 'rejected', not '%s'\n", prog, o->decision);
		return EXIT_USAGE;
	}
	if (!o->verification && (o->decision || o->verifier || o->policy)) {
		fprintf(stderr, "%s: --decision, --verifier and --policy go with --verification\n", prog);
		return EXIT_USAGE;
	}
	if (o->verification && (o->acceptance_conf || o->url)) {
		fprintf(stderr, "%s: --acceptance-conf and --url describe test results; not with "
			"--verification\n", prog);
		return EXIT_USAGE;
	}
	t = load_results(o->results, &n, &doc);
	if (!t)
		goto out;
	if (o->acceptance_conf) {
		const char *base = strrchr(o->acceptance_conf, '/');
		if (file_sha256(o->acceptance_conf, conf_hex) < 0)
			goto out;
		run.config_name = base ? base + 1 : o->acceptance_conf;
		run.config_sha256 = conf_hex;
	}
	if (attest_key_load_or_create(o->key, &key, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	if (o->verification) {
		admitted = true;
		for (i = 0; i < n; i++)
			admitted = admitted && t[i].passed;
		if (o->decision)
			admitted = !strcmp(o->decision, "admitted");
		stmt = attest_statement_verification(&subj, o->verifier ? o->verifier : DEFAULT_VERIFIER,
						     o->policy, admitted, t, n, time(NULL), &err);
	} else
		stmt = attest_statement_test_result(&subj, t, n, &run, &err);
	if (!stmt) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	env = attest_envelope_sign(ATTEST_PAYLOAD_TYPE, stmt, strlen(stmt), key, &err);
	if (!env) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	if (write_out(o->output, env) < 0)
		goto out;
	rc = EXIT_OK;
out:
	EVP_PKEY_free(key);
	free(stmt);
	free(env);
	free(t);
	json_object_put(doc);
	return rc;
}

static int cmd_attest_key(const struct aopts *o, int argc)
{
	EVP_PKEY *key = NULL;
	char keyid[ATTEST_KEYID_LEN + 1], *pem = NULL;
	burst_err_t err;
	int rc = EXIT_USAGE;

	if (argc > 0 || !o->key) {
		fprintf(stderr, "%s: usage: burstctl attest-key --key KEY [--output PUB.pem] [--json]\n", prog);
		return EXIT_USAGE;
	}
	if (attest_key_load_or_create(o->key, &key, &err) < 0 ||
	    attest_key_id(key, keyid, &err) < 0 || !(pem = attest_pubkey_pem(key, &err))) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	if (o->json) {
		json_object *top = json_object_new_object();
		json_object_object_add(top, "keyid", json_object_new_string(keyid));
		json_object_object_add(top, "public_key", json_object_new_string(pem));
		rc = write_out(o->output, json_object_to_json_string_ext(top,
				JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 ?
			EXIT_USAGE : EXIT_OK;
		json_object_put(top);
		goto out;
	}
	rc = write_out(o->output, pem) < 0 ? EXIT_USAGE : EXIT_OK;
	if (rc == EXIT_OK && o->output)
		fprintf(stderr, "%s: public key of %s (key id %s) written to %s\n", prog, o->key, keyid,
			o->output);
out:
	free(pem);
	EVP_PKEY_free(key);
	return rc;
}

/* One line of what a verified statement says, for people. */
static void describe_statement(json_object *st)
{
	json_object *subj, *pred, *v;
	const char *ptype = "";
	size_t i;

	if (json_object_object_get_ex(st, "subject", &subj)) {
		for (i = 0; i < json_object_array_length(subj); i++) {
			json_object *e = json_object_array_get_idx(subj, i), *dg;
			printf("subject:       %s",
			       json_object_object_get_ex(e, "name", &v) ? json_object_get_string(v) : "(unnamed)");
			if (json_object_object_get_ex(e, "digest", &dg)) {
				json_object_object_foreach(dg, alg, hex)
					printf(" %s:%s", alg, json_object_get_string(hex));
			}
			printf("\n");
		}
	}
	if (json_object_object_get_ex(st, "predicateType", &v))
		ptype = json_object_get_string(v);
	printf("predicateType: %s\n", ptype);
	if (!json_object_object_get_ex(st, "predicate", &pred))
		return;
	if (!strcmp(ptype, ATTEST_PRED_TEST_RESULT)) {
		json_object *p = NULL, *w = NULL, *f = NULL;
		json_object_object_get_ex(pred, "passedTests", &p);
		json_object_object_get_ex(pred, "warnedTests", &w);
		json_object_object_get_ex(pred, "failedTests", &f);
		printf("result:        %s (%zu passed, %zu warned, %zu failed)\n",
		       json_object_object_get_ex(pred, "result", &v) ? json_object_get_string(v) : "?",
		       p && json_object_is_type(p, json_type_array) ? json_object_array_length(p) : 0,
		       w && json_object_is_type(w, json_type_array) ? json_object_array_length(w) : 0,
		       f && json_object_is_type(f, json_type_array) ? json_object_array_length(f) : 0);
		if (f && json_object_is_type(f, json_type_array))
			for (i = 0; i < json_object_array_length(f); i++)
				printf("failed:        %s\n",
				       json_object_get_string(json_object_array_get_idx(f, i)));
	} else if (!strcmp(ptype, ATTEST_PRED_SVR)) {
		json_object *ver, *props;
		if (json_object_object_get_ex(pred, "verifier", &ver) &&
		    json_object_object_get_ex(ver, "id", &v))
			printf("verifier:      %s\n", json_object_get_string(v));
		if (json_object_object_get_ex(pred, "timeCreated", &v))
			printf("timeCreated:   %s\n", json_object_get_string(v));
		if (json_object_object_get_ex(pred, "properties", &props) &&
		    json_object_is_type(props, json_type_array)) {
			bool admitted = false;
			for (i = 0; i < json_object_array_length(props); i++) {
				const char *p = json_object_get_string(json_object_array_get_idx(props, i));
				admitted = admitted || !strcmp(p, "SLURM_BURST_NODE_ADMITTED");
				printf("property:      %s\n", p);
			}
			printf("decision:      %s\n", admitted ? "admitted" : "not admitted");
		}
	}
}

/*
 * Verify one envelope (text) with pub: 0 verified (then *st is the statement,
 * caller puts it, and keyid is set), or -1 with err.
 */
static int verify_one(const char *text, EVP_PKEY *pub, json_object **st,
		      char keyid[ATTEST_KEYID_LEN + 1], burst_err_t *err)
{
	char *payload = NULL;

	*st = NULL;
	if (attest_envelope_verify(text, pub, &payload, keyid, err) < 0)
		return -1;
	*st = json_tokener_parse(payload);
	free(payload);
	return 0;
}

/*
 * A JSON array of envelopes (what burstctl provenance --attestation writes):
 * every one must verify. Returns the exit code.
 */
static int verify_array(const struct aopts *o, const char *file, json_object *arr, EVP_PKEY *pub)
{
	size_t n = json_object_array_length(arr), i, bad = 0;
	json_object *top = NULL, *list = NULL;

	if (n == 0) {
		fprintf(stderr, "%s: %s: an empty array: no envelope to verify\n", prog, file);
		return EXIT_USAGE;
	}
	if (o->json) {
		top = json_object_new_object();
		list = json_object_new_array();
		json_object_object_add(top, "file", json_object_new_string(file));
	}
	for (i = 0; i < n; i++) {
		const char *text = json_object_to_json_string_ext(json_object_array_get_idx(arr, i),
								  JSON_C_TO_STRING_PLAIN);
		char keyid[ATTEST_KEYID_LEN + 1];
		json_object *st = NULL;
		burst_err_t err;
		bool ok = verify_one(text, pub, &st, keyid, &err) == 0;

		bad += !ok;
		if (list) {
			json_object *e = json_object_new_object();
			json_object_object_add(e, "index", json_object_new_int64((int64_t)i));
			json_object_object_add(e, "verified", json_object_new_boolean(ok));
			if (ok) {
				json_object_object_add(e, "keyid", json_object_new_string(keyid));
				json_object_object_add(e, "statement", json_object_get(st));
			} else
				json_object_object_add(e, "error", json_object_new_string(err.msg));
			json_object_array_add(list, e);
		} else if (ok) {
			printf("%sverified:      %s[%zu] is signed by key %s\n", i ? "\n" : "", file, i, keyid);
			describe_statement(st);
		} else
			fprintf(stderr, "%s: %s[%zu]: verification FAILED: %s\n", prog, file, i, err.msg);
		json_object_put(st);
	}
	if (top) {
		json_object_object_add(top, "verified", json_object_new_boolean(bad == 0));
		json_object_object_add(top, "envelopes", list);
		printf("%s\n", json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(top);
	} else if (bad)
		fprintf(stderr, "%s: %s: %zu of %zu envelopes FAILED verification\n", prog, file, bad, n);
	return bad ? EXIT_FAILED : EXIT_OK;
}

static int cmd_verify(const struct aopts *o, int argc, char **argv)
{
	const char *keypath = o->key;
	char *text = NULL, *payload = NULL, keyid[ATTEST_KEYID_LEN + 1];
	EVP_PKEY *pub = NULL;
	json_object *st = NULL;
	burst_err_t err;
	int rc = EXIT_USAGE;

	if (argc != 1) {
		fprintf(stderr, "%s: usage: burstctl verify FILE [--key PUBKEY.pem] [--json] (FILE: "
			"an envelope, or a JSON array of envelopes)\n", prog);
		return EXIT_USAGE;
	}
	if (o->attest_only) {
		fprintf(stderr, "%s: verify takes only --key and --json (the others are attest's)\n", prog);
		return EXIT_USAGE;
	}
	if (!keypath) {
		keypath = getenv("BURST_ATTEST_PUBKEY");
		if (!keypath || !*keypath)
			keypath = DEFAULT_PUBKEY;
	}
	if (attest_pubkey_load(keypath, &pub, &err) < 0) {
		fprintf(stderr, "%s: %s\n%s: give the signer's public key with --key PUBKEY.pem "
			"(burstctl attest-key --key KEY prints it)\n", prog, err.msg, prog);
		goto out;
	}
	text = slurp(argv[0], NULL);
	if (!text)
		goto out;
	/* an array of envelopes: each must verify */
	st = json_tokener_parse(text);
	if (st && json_object_is_type(st, json_type_array)) {
		rc = verify_array(o, argv[0], st, pub);
		goto out;
	}
	json_object_put(st);
	st = NULL;
	if (attest_envelope_verify(text, pub, &payload, keyid, &err) == 0) {
		st = json_tokener_parse(payload);
		rc = EXIT_OK;
	} else
		rc = EXIT_FAILED;
	if (o->json) {
		json_object *top = json_object_new_object();
		json_object_object_add(top, "file", json_object_new_string(argv[0]));
		json_object_object_add(top, "verified", json_object_new_boolean(rc == EXIT_OK));
		if (rc == EXIT_OK) {
			json_object_object_add(top, "keyid", json_object_new_string(keyid));
			json_object_object_add(top, "statement", json_object_get(st));
		} else
			json_object_object_add(top, "error", json_object_new_string(err.msg));
		printf("%s\n", json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(top);
	} else if (rc == EXIT_OK) {
		printf("verified:      %s is signed by key %s\n", argv[0], keyid);
		describe_statement(st);
	} else
		fprintf(stderr, "%s: %s: verification FAILED: %s\n", prog, argv[0], err.msg);
out:
	json_object_put(st);
	EVP_PKEY_free(pub);
	free(text);
	free(payload);
	return rc;
}

int attest_cmd_main(const char *verb, int argc, char **argv)
{
	enum { O_NODE = 256, O_INSTANCE, O_PROV, O_RESULTS, O_VERIFICATION, O_VERIFIER, O_POLICY,
		O_DECISION, O_ACONF, O_URL };
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "node", required_argument, NULL, O_NODE },
		{ "instance", required_argument, NULL, O_INSTANCE },
		{ "provenance-id", required_argument, NULL, O_PROV },
		{ "results", required_argument, NULL, O_RESULTS },
		{ "verification", no_argument, NULL, O_VERIFICATION },
		{ "verifier", required_argument, NULL, O_VERIFIER },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "decision", required_argument, NULL, O_DECISION },
		{ "acceptance-conf", required_argument, NULL, O_ACONF },
		{ "url", required_argument, NULL, O_URL },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	/* burstctl's global options: accepted, and of no use here (--json is ours) */
	struct ctl_getopt g;
	struct ctl_globals gl;
	struct aopts o;
	char **av = argv;
	int ac = argc, ch, rc;

	ctl_getopt_init(&g, longopts, "k:o:", CTL_G(CONFIG) | CTL_G(CATALOG_DIR) | CTL_G(PROVIDER) |
			CTL_G(LIMIT) | CTL_G(LIBEXECDIR) | CTL_G(EXPLAIN) | CTL_G(CATALOG) |
			CTL_G(NODES_ONLY) | CTL_G(JSON) | CTL_G(HELP));
	memset(&o, 0, sizeof(o));
	memset(&gl, 0, sizeof(gl));
	optind = 1;
	rc = EXIT_USAGE;
	while ((ch = getopt_long(ac, av, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'k': o.key = optarg; break;
		case O_NODE: o.node = optarg; o.attest_only++; break;
		case O_INSTANCE: o.instance = optarg; o.attest_only++; break;
		case O_PROV: o.prov_id = optarg; o.attest_only++; break;
		case O_RESULTS: o.results = optarg; o.attest_only++; break;
		case O_VERIFICATION: o.verification = true; o.attest_only++; break;
		case O_VERIFIER: o.verifier = optarg; o.attest_only++; break;
		case O_POLICY: o.policy = optarg; o.attest_only++; break;
		case O_DECISION: o.decision = optarg; o.attest_only++; break;
		case O_ACONF: o.acceptance_conf = optarg; o.attest_only++; break;
		case O_URL: o.url = optarg; o.attest_only++; break;
		case 'o': o.output = optarg; break;
		case 'j': o.json = true; break;
		case 'h':
			printf("usage: burstctl VERB [OPTIONS]\n%s"
			       "See burstctl(8), ATTESTATIONS.\n", attest_cmd_usage);
			rc = EXIT_OK;
			goto out;
		default:
			if (ctl_global(ch, optarg, &gl))
				break;
			fprintf(stderr, "Try 'burstctl --help'.\n");
			goto out;
		}
	}
	if (!strcmp(verb, "attest"))
		rc = cmd_attest(&o, ac - optind);
	else if (!strcmp(verb, "attest-key"))
		rc = o.attest_only ? (fprintf(stderr, "%s: attest-key takes --key, --output and --json\n",
					      prog), EXIT_USAGE) : cmd_attest_key(&o, ac - optind);
	else
		rc = cmd_verify(&o, ac - optind, av + optind);
out:
	return rc;
}

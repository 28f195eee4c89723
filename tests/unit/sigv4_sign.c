/*
 * sigv4_sign.c - sign one HTTP request with lib/sigv4 and print the steps
 * (a helper for tests/cli/test_sigv4_botocore.sh, not a test itself).
 *
 *   sigv4_sign ACCESS_KEY SECRET_KEY REGION SERVICE AMZ_DATE [SESSION_TOKEN] < request
 *
 * The request is HTTP request text as in the AWS SigV4 test suite
 * ("METHOD TARGET HTTP/1.1", "Name:value" header lines, an empty line, the
 * body; see sigv4_req.h). Prints
 *   --- canonical request\n...\n--- string to sign\n...\n--- authorization\n...\n
 * Exits 0, or 1 with the error on stderr.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sigv4.h"
#include "sigv4_req.h"

int main(int argc, char **argv)
{
	struct sigv4_creds creds;
	struct sigv4_result res = { 0 };
	struct httpreq r;
	burst_err_t err = { .msg = "" };
	char why[256], *text;
	size_t len = 0;
	int rc = 1;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: %s ACCESS_KEY SECRET_KEY REGION SERVICE AMZ_DATE "
			"[SESSION_TOKEN] < request\n", argv[0]);
		return 2;
	}
	creds.access_key = argv[1];
	creds.secret_key = argv[2];
	creds.session_token = argc == 7 ? argv[6] : NULL;
	text = slurp("-", &len);
	if (!text) {
		fprintf(stderr, "sigv4_sign: cannot read the request from stdin\n");
		return 1;
	}
	if (httpreq_parse(text, len, &r, why, sizeof(why)) != 0) {
		fprintf(stderr, "sigv4_sign: bad request text: %s\n", why);
		free(text);
		return 1;
	}
	if (sigv4_sign(&r.req, &creds, argv[3], argv[4], argv[5], &res, &err) == 0) {
		printf("--- canonical request\n%s\n--- string to sign\n%s\n--- authorization\n%s\n",
		       res.canonical_request, res.string_to_sign, res.authorization);
		rc = 0;
	} else {
		fprintf(stderr, "%s\n", err.msg);
	}
	sigv4_result_free(&res);
	httpreq_free(&r);
	free(text);
	return rc;
}

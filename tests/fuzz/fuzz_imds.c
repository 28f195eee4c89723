/*
 * fuzz_imds.c - libFuzzer target for the instance metadata service's
 * answers: the whole input as the spot interruption notice burst-node
 * watches (imds_notice_parse, as a 200 answer, NUL bytes included), and
 * what the agent reads for its instance role's credentials: the role
 * list, then the role's credentials document. For those the input is the
 * role list, a NUL byte, and the document (no NUL: the input is the
 * document).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aws_creds.h"
#include "fuzz.h"
#include "imds.h"
#include "strutil.h"

FUZZ_TARGET(imds)
{
	const char *nul = memchr(data, '\0', size);
	char *roles = nul ? xstrndup((const char *)data, (size_t)(nul - (const char *)data)) : xstrdup("fuzz-role");
	char *doc = nul ? xstrndup(nul + 1, size - (size_t)(nul + 1 - (const char *)data)) :
		xstrndup((const char *)data, size);
	const char *role = aws_creds_imds_role(roles);
	struct aws_creds c;
	struct imds_notice n;
	char why[512], *body = malloc(size + 1);
	burst_err_t err;

	/* the body as the client hands it over: len bytes and a terminator */
	if (!body)
		abort();
	memcpy(body, data, size);
	body[size] = '\0';
	if (imds_notice_parse(200, body, size, &n, why, sizeof(why)) < 0 && !why[0])
		abort();     /* a refusal says why */
	free(body);

	if (aws_creds_imds_doc("http://imds.invalid", role ? role : "none", doc, &c, &err) == 0) {
		if (!c.access_key || !c.secret_key)
			abort();
		aws_creds_free(&c);
	}
	free(roles);
	free(doc);
	return 0;
}

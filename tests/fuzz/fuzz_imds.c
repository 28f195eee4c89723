/*
 * fuzz_imds.c - libFuzzer target for the instance metadata service's
 * answers the agent reads for its instance role's credentials: the role
 * list, then the role's credentials document. The input is the role list,
 * a NUL byte, and the document (no NUL: the input is the document).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aws_creds.h"
#include "fuzz.h"
#include "strutil.h"

FUZZ_TARGET(imds)
{
	const char *nul = memchr(data, '\0', size);
	char *roles = nul ? xstrndup((const char *)data, (size_t)(nul - (const char *)data)) : xstrdup("fuzz-role");
	char *doc = nul ? xstrndup(nul + 1, size - (size_t)(nul + 1 - (const char *)data)) :
		xstrndup((const char *)data, size);
	const char *role = aws_creds_imds_role(roles);
	struct aws_creds c;
	burst_err_t err;

	if (aws_creds_imds_doc("http://imds.invalid", role ? role : "none", doc, &c, &err) == 0) {
		if (!c.access_key || !c.secret_key)
			abort();
		aws_creds_free(&c);
	}
	free(roles);
	free(doc);
	return 0;
}

/*
 * fuzz_aws_creds.c - libFuzzer target for the AWS credentials and config
 * files (CredentialsFile=, ~/.aws/config): each input is written to a
 * private temporary file (mode 0600) and read for the default profile and
 * another, in both forms.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "aws_creds.h"
#include "fuzz.h"

FUZZ_TARGET(aws_creds)
{
	static const char *const profiles[] = { "default", "burst" };
	const char *path = fuzz_file("credentials", data, size);
	struct aws_creds c;
	burst_err_t err;
	size_t i;

	for (i = 0; i < 4; i++)
		if (aws_creds_from_file(path, profiles[i % 2], i >= 2, &c, &err) == 1) {
			if (!c.access_key || !c.secret_key)
				abort();
			aws_creds_free(&c);
		}
	return 0;
}

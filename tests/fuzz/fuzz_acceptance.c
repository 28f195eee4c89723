/*
 * fuzz_acceptance.c - libFuzzer target for the acceptance.conf parser (what
 * burst-node and burstctl accept read), and the command line each test it
 * defines would run.
 */
#include <stdint.h>
#include <stdlib.h>

#include "acceptance.h"
#include "fuzz.h"
#include "strutil.h"

FUZZ_TARGET(acceptance)
{
	char *text = xstrndup((const char *)data, size);
	burst_err_t err;
	struct acceptance_conf *conf = acceptance_parse(text, "acceptance.conf", &err);
	size_t i;

	if (conf) {
		for (i = 0; i < conf->ntests; i++) {
			const struct acceptance_test *t = &conf->tests[i];
			free(acceptance_command_line(conf, t));
			if (!acceptance_runtime_of(conf, t))
				abort();     /* there is always one: the built-in */
		}
		acceptance_free(conf);
	}
	free(text);
	return 0;
}

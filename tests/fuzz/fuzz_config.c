/*
 * fuzz_config.c - libFuzzer target for the burst.conf parser: each input is
 * written to a private temporary file and loaded.
 */
#include <stdint.h>
#include <stdlib.h>

#include "config.h"
#include "fuzz.h"

FUZZ_TARGET(config)
{
	burst_err_t err;
	struct burst_config *cfg = config_load(fuzz_file("burst.conf", data, size), &err);

	config_free(cfg);
	return 0;
}

/*
 * fuzz_config.c - libFuzzer target for the burst.conf parser: each input is
 * written to a private temporary file and loaded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct burst_config *cfg;
	burst_err_t err;
	FILE *f;

	if (!path[0]) {
		int fd;
		snprintf(path, sizeof(path), "/tmp/fuzz-burst-conf.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
	}
	f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	cfg = config_load(path, &err);
	config_free(cfg);
	return 0;
}

/*
 * fuzz_file.c - the fuzz targets' private temporary files (fuzz.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#define FUZZ_MAX_FILES 8

static char dir[4096];
static char paths[FUZZ_MAX_FILES][4200];

static void cleanup(void)
{
	size_t i;

	for (i = 0; i < FUZZ_MAX_FILES; i++)
		if (paths[i][0])
			unlink(paths[i]);
	if (dir[0])
		rmdir(dir);
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	size_t i;
	int fd;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/burst-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror(dir);
			abort();
		}
		atexit(cleanup);
	}
	for (i = 0; i < FUZZ_MAX_FILES && paths[i][0]; i++) {
		const char *slash = strrchr(paths[i], '/');
		if (!strcmp(slash + 1, name))
			break;
	}
	if (i == FUZZ_MAX_FILES || strchr(name, '/'))
		abort();
	if (!paths[i][0])
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, name);
	fd = open(paths[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(paths[i]);
		abort();
	}
	while (size > 0) {
		ssize_t n = write(fd, data, size);
		if (n <= 0) {
			perror(paths[i]);
			abort();
		}
		data += n;
		size -= (size_t)n;
	}
	close(fd);
	return paths[i];
}

/*
 * test_fuzz_regress.c - every fuzz target (tests/fuzz/) on every input kept
 * for it in tests/fixtures/fuzz-seeds/NAME/: the seeds, the corpus the long
 * fuzzing runs grew (minimized), and each input that once crashed a
 * parser. Built with the normal compiler, without libFuzzer: a parser that
 * crashes, aborts, reads out of bounds or leaks on one of them fails this
 * test under the ASan build or valgrind. The file being run is named on
 * stderr when the test dies on it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fuzz/fuzz.h"
#include "tap.h"

#ifndef BURST_ABS_SRCDIR
#define BURST_ABS_SRCDIR "."
#endif

#define TARGET(name) int fuzz_##name(const uint8_t *data, size_t size);
#define TARGETS \
	TARGET(contract) TARGET(config) TARGET(acceptance) TARGET(join) TARGET(ec2) \
	TARGET(resume) TARGET(imds) TARGET(aws_creds) TARGET(openstack) TARGET(openstack_auth) \
	TARGET(attest) TARGET(elf_notes) TARGET(driver_version) TARGET(blessed) TARGET(spool) \
	TARGET(bless_report) TARGET(gce) TARGET(azure)
TARGETS
#undef TARGET

static const struct {
	const char *name;
	int (*run)(const uint8_t *, size_t);
} targets[] = {
#define TARGET(name) { #name, fuzz_##name },
	TARGETS
#undef TARGET
};

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static char current[4096 + 256 + 2];

/* name the input on a crash, then die of the same signal */
static void on_fatal(int sig)
{
	static const char pre[] = "test_fuzz_regress: died on ";
	if (write(2, pre, sizeof(pre) - 1) < 0 || write(2, current, strlen(current)) < 0 ||
	    write(2, "\n", 1) < 0) {
		/* nothing more to say */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* AddressSanitizer calls this before its report */
void __asan_on_error(void);
void __asan_on_error(void)
{
	fprintf(stderr, "test_fuzz_regress: AddressSanitizer error on %s\n", current);
}

/* The whole file, in a buffer of exactly its size (no terminator to lean on). */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		printf("Bail out! cannot read %s\n", path);
		exit(1);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			printf("Bail out! cannot read %s\n", path);
			exit(1);
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

static int regular(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int main(void)
{
	const char *top = getenv("BURST_TOP_SRCDIR");
	size_t t;

	if (!top || !*top)
		top = BURST_ABS_SRCDIR;
#ifndef UNDER_ASAN
	signal(SIGSEGV, on_fatal);   /* AddressSanitizer reports a SEGV itself */
#endif
	signal(SIGABRT, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGFPE, on_fatal);
	for (t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		char dir[4096];
		struct dirent **names;
		int n, i;
		size_t bytes = 0;

		snprintf(dir, sizeof(dir), "%s/tests/fixtures/fuzz-seeds/%s", top, targets[t].name);
		n = scandir(dir, &names, regular, alphasort);
		if (!ok(n > 0, "%s: inputs kept in %s", targets[t].name, dir))
			continue;
		for (i = 0; i < n; i++) {
			size_t len;
			uint8_t *data;

			snprintf(current, sizeof(current), "%s/%s", dir, names[i]->d_name);
			data = slurp(current, &len);
			targets[t].run(data, len);
			bytes += len;
			free(data);
			free(names[i]);
		}
		free(names);
		ok(1, "%s: %d inputs (%zu bytes) parsed without a crash", targets[t].name, n, bytes);
	}
	return done_testing();
}

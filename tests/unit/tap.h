/*
 * tap.h - a minimal TAP producer for the unit tests (run by automake's
 * tap-driver.sh). Header-only: each test program includes it once.
 *
 *   ok(cond, "name %d", i);          one test point
 *   is_str(got, want, "name");       string equality (NULL-safe), shows both
 *   is_num(got, want, "name");       double equality, shows both
 *   tap_slurp(path, &len)            a whole file (NUL-terminated, free it);
 *                                    bails out when it cannot be read
 *   return done_testing();           prints the plan; exit 1 on any failure
 */
#ifndef BURST_TAP_H
#define BURST_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused))
static int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2), unused))
static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	int c_ = (g_ == NULL && w_ == NULL) || (g_ && w_ && strcmp(g_, w_) == 0); \
	if (!ok(c_, __VA_ARGS__)) \
		diag("got '%s', want '%s'", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#define is_num(got, want, ...) do { \
	double g_ = (got), w_ = (want); \
	int c_ = (isnan(g_) && isnan(w_)) || g_ == w_; \
	if (!ok(c_, __VA_ARGS__)) \
		diag("got %.17g, want %.17g", g_, w_); \
} while (0)

#define has_str(hay, needle, ...) do { \
	const char *h_ = (hay), *n_ = (needle); \
	if (!ok(h_ && strstr(h_, n_) != NULL, __VA_ARGS__)) \
		diag("'%s' not found in '%s'", n_, h_ ? h_ : "(null)"); \
} while (0)

__attribute__((unused))
static char *tap_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n = -1;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		fclose(f);
		if (len)
			*len = (size_t)n;
		return buf;
	}
	printf("Bail out! cannot read %s\n", path);
	exit(1);
}

__attribute__((unused))
static int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif

/*
 * policy_conf.c - the admission policy's words in burst.conf (see policy.h):
 * what config.c needs to parse them. Apart from policy.c, which checks
 * provenance records (json-c), so that reading burst.conf, as the SPANK
 * plugin does in every sbatch and srun, needs no more than libc.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy.h"
#include "strutil.h"

void policy_init(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->memory_tolerance = POLICY_DEFAULT_MEMORY_TOLERANCE;
	p->allowed_taint = POLICY_DEFAULT_TAINT;
}

bool policy_kernel_matches(const char *entry, const char *release, const char *build_id)
{
	const char *colon = strchr(entry, ':');
	size_t rl = colon ? (size_t)(colon - entry) : strlen(entry);

	if (!release || strlen(release) != rl || strncmp(release, entry, rl))
		return false;
	if (colon && (!build_id || strcasecmp(colon + 1, build_id)))
		return false;
	return true;
}

bool policy_valid_kernel(const char *entry)
{
	const char *colon = strchr(entry, ':'), *p;

	if (!*entry || entry == colon)
		return false;
	for (p = entry; *p && p != colon; p++)
		if (isspace((unsigned char)*p) || *p == '#' || *p == ',' || !isprint((unsigned char)*p))
			return false;
	if (colon) {
		if (!colon[1])
			return false;
		for (p = colon + 1; *p; p++)
			if (!isxdigit((unsigned char)*p))
				return false;
	}
	return true;
}

static bool version_char(unsigned char c)
{
	return isalnum(c) || c == '.' || c == '-' || c == '_' || c == '+' || c == '~' || c == ':';
}

bool policy_valid_driver(const char *entry)
{
	const char *eq = strchr(entry, '='), *p;

	if (!eq || eq == entry || !eq[1] || strlen(eq + 1) > POLICY_MAX_DRIVER_VERSION)
		return false;
	for (p = entry; p < eq; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			return false;
	for (p = eq + 1; *p; p++)
		if (!version_char((unsigned char)*p))
			return false;
	return true;
}

int policy_parse_tolerance(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -1;
	if (*end == '%') {
		v /= 100.0;
		end++;
	}
	if (*end || v < 0 || v >= 1)
		return -1;
	*out = v;
	return 0;
}

int policy_parse_taint(const char *s, unsigned long long *out, char *bad)
{
	static const char letters[] = "PFSRMBUDAWCIOELKXTNJ";
	unsigned long long m = 0;
	const char *p;

	*bad = 0;
	if (!*s)
		return -1;
	if (str_ieq(s, "none")) {
		*out = 0;
		return 0;
	}
	if (isdigit((unsigned char)s[0])) {
		char *end;
		errno = 0;
		m = strtoull(s, &end, 0);
		if (errno || *end)
			return -1;
		*out = m;
		return 0;
	}
	for (p = s; *p; p++) {
		const char *l = strchr(letters, *p);
		if (!l) {
			*bad = *p;
			return -1;
		}
		m |= 1ULL << (l - letters);
	}
	*out = m;
	return 0;
}

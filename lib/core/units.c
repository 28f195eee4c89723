/*
 * units.c - parse and format numbers with units.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

static int fail(char *msg, size_t msglen, size_t *errpos, size_t pos,
		const char *text)
{
	snprintf(msg, msglen, "%s", text);
	if (errpos)
		*errpos = pos;
	return -1;
}

int units_parse(const char *s, size_t len, enum unit_class cls, double *out,
		char *msg, size_t msglen, size_t *errpos)
{
	size_t i = 0, digits = 0;
	double v = 0, scale = 1;
	char tmp[160];

	if (len == 0)
		return fail(msg, msglen, errpos, 0, "expected a number");
	if (s[0] == '-')
		return fail(msg, msglen, errpos, 0, "a negative number is not allowed here");
	if (s[0] == '+')
		i++;
	for (; i < len && isdigit((unsigned char)s[i]); i++, digits++) {
		v = v * 10 + (s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		double f = 0.1;
		for (i++; i < len && isdigit((unsigned char)s[i]); i++, digits++) {
			v += (s[i] - '0') * f;
			f /= 10;
		}
	}
	if (digits == 0)
		return fail(msg, msglen, errpos, 0, "expected a number");
	if (!isfinite(v) || v > 1e18)
		return fail(msg, msglen, errpos, 0, "number too large");

	if (i == len) {
		if (cls == UNIT_SIZE && v != 0) {
			snprintf(tmp, sizeof(tmp),
				 "a size needs a unit: K, M, G or T (binary), for example %.*sG",
				 (int)len, s);
			return fail(msg, msglen, errpos, len, tmp);
		}
		*out = v;
		return 0;
	}

	switch (cls) {
	case UNIT_COUNT:
	case UNIT_PRICE:
		snprintf(tmp, sizeof(tmp), "unexpected '%.*s' after the number: %s",
			 (int)(len - i), s + i,
			 cls == UNIT_COUNT ? "a count takes no unit" :
			 "a price is a plain number of US dollars per hour");
		return fail(msg, msglen, errpos, i, tmp);
	case UNIT_SIZE: {
		size_t u = i;
		switch (toupper((unsigned char)s[i])) {
		case 'K': scale = 1024.0; break;
		case 'M': scale = 1024.0 * 1024; break;
		case 'G': scale = 1024.0 * 1024 * 1024; break;
		case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
		default:
			snprintf(tmp, sizeof(tmp),
				 "unknown size unit '%.*s': use K, M, G or T (binary: 1G = 2^30 bytes)",
				 (int)(len - i), s + i);
			return fail(msg, msglen, errpos, i, tmp);
		}
		i++;
		if (i < len && (s[i] == 'i' || s[i] == 'I'))
			i++;
		if (i < len && (s[i] == 'B' || s[i] == 'b'))
			i++;
		if (i != len) {
			snprintf(tmp, sizeof(tmp),
				 "unknown size unit '%.*s': use K, M, G or T (binary: 1G = 2^30 bytes)",
				 (int)(len - u), s + u);
			return fail(msg, msglen, errpos, u, tmp);
		}
		*out = v * scale;
		return 0;
	}
	case UNIT_NET: {
		size_t u = i;
		switch (toupper((unsigned char)s[i])) {
		case 'M': scale = 0.001; break;
		case 'G': scale = 1; break;
		case 'T': scale = 1000; break;
		default:
			snprintf(tmp, sizeof(tmp),
				 "unknown network unit '%.*s': use Gbit/s, e.g. 100G (also M or T)",
				 (int)(len - i), s + i);
			return fail(msg, msglen, errpos, i, tmp);
		}
		i++;
		/* accept G, Gb, Gbit, Gbps, Gbit/s */
		if (len - i == 0 || (len - i == 1 && (s[i] == 'b')) ||
		    (len - i == 3 && strncmp(s + i, "bps", 3) == 0) ||
		    (len - i == 3 && strncmp(s + i, "bit", 3) == 0) ||
		    (len - i == 5 && strncmp(s + i, "bit/s", 5) == 0)) {
			*out = v * scale;
			return 0;
		}
		snprintf(tmp, sizeof(tmp),
			 "unknown network unit '%.*s': use Gbit/s, e.g. 100G (also M or T)",
			 (int)(len - u), s + u);
		return fail(msg, msglen, errpos, u, tmp);
	}
	}
	return fail(msg, msglen, errpos, 0, "internal error: unit class");
}

/* A plain decimal (never an exponent, so that it parses again), trailing
 * zeros dropped, at most 6 decimals. */
static void plain(double v, const char *suffix, char *buf, size_t buflen)
{
	char tmp[64];
	size_t n;

	snprintf(tmp, sizeof(tmp), "%.6f", v);
	n = strlen(tmp);
	while (n > 0 && tmp[n - 1] == '0')
		tmp[--n] = '\0';
	if (n > 0 && tmp[n - 1] == '.')
		tmp[--n] = '\0';
	snprintf(buf, buflen, "%s%s", tmp, suffix);
}

void units_format(double v, enum unit_class cls, char *buf, size_t buflen)
{
	static const char suf[] = "KMGT";
	/* 1024^(k+1), exact: no pow(), so that the SPANK plugin, which formats
	 * sizes in its refusals, needs no libm in every sbatch and srun */
	static const double unit[] = { 1024.0, 1048576.0, 1073741824.0, 1099511627776.0 };
	int k;

	if (isnan(v)) {
		snprintf(buf, buflen, "unknown");
		return;
	}
	switch (cls) {
	case UNIT_SIZE:
		if (v == 0) {
			snprintf(buf, buflen, "0");
			return;
		}
		/* the largest unit that shows the value exactly, else one decimal */
		for (k = 3; k >= 0; k--) {
			double q = v / unit[k];
			if (q >= 1 && q == floor(q)) {
				snprintf(buf, buflen, "%.0f%c", q, suf[k]);
				return;
			}
		}
		for (k = 3; k >= 0; k--) {
			double q = v / unit[k];
			if (q >= 1) {
				snprintf(buf, buflen, "%.1f%c", q, suf[k]);
				return;
			}
		}
		/* under 1K: still with a unit, so that it parses again */
		plain(v / 1024.0, "K", buf, buflen);
		return;
	case UNIT_NET:
		plain(v, "G", buf, buflen);
		return;
	case UNIT_PRICE:
	case UNIT_COUNT:
		plain(v, "", buf, buflen);
		return;
	}
}

/*
 * test_units.c - numbers with units: parsing and canonical formatting.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "units.h"

#define K 1024.0
#define M (1024.0 * 1024)
#define G (1024.0 * 1024 * 1024)
#define T (1024.0 * 1024 * 1024 * 1024)

static const struct {
	const char *text;
	enum unit_class cls;
	double want;
} good[] = {
	{ "256G", UNIT_SIZE, 256 * G },
	{ "256GiB", UNIT_SIZE, 256 * G },
	{ "256GB", UNIT_SIZE, 256 * G },
	{ "256g", UNIT_SIZE, 256 * G },
	{ "512M", UNIT_SIZE, 512 * M },
	{ "4K", UNIT_SIZE, 4 * K },
	{ "1.5T", UNIT_SIZE, 1.5 * T },
	{ "80G", UNIT_SIZE, 80 * G },
	{ "0", UNIT_SIZE, 0 },
	{ ".5G", UNIT_SIZE, 0.5 * G },
	{ "100", UNIT_NET, 100 },
	{ "100G", UNIT_NET, 100 },
	{ "100Gbps", UNIT_NET, 100 },
	{ "100Gb", UNIT_NET, 100 },
	{ "100Gbit/s", UNIT_NET, 100 },
	{ "400M", UNIT_NET, 0.4 },
	{ "1T", UNIT_NET, 1000 },
	{ "12.5", UNIT_NET, 12.5 },
	{ "0", UNIT_COUNT, 0 },
	{ "3", UNIT_COUNT, 3 },
	{ "7", UNIT_COUNT, 7 },
	{ "+8", UNIT_COUNT, 8 },
	{ "1.25", UNIT_PRICE, 1.25 },
	{ "30", UNIT_PRICE, 30 },
};

static const struct {
	const char *text;
	enum unit_class cls;
	size_t pos;            /* where the error points */
	const char *frag;      /* in the message */
} bad[] = {
	{ "256", UNIT_SIZE, 3, "a size needs a unit: K, M, G or T (binary), for example 256G" },
	{ "16X", UNIT_SIZE, 2, "unknown size unit 'X'" },
	{ "16GX", UNIT_SIZE, 2, "unknown size unit 'GX'" },
	{ "-4G", UNIT_SIZE, 0, "negative" },
	{ "", UNIT_SIZE, 0, "expected a number" },
	{ "G", UNIT_SIZE, 0, "expected a number" },
	{ "100Q", UNIT_NET, 3, "unknown network unit 'Q'" },
	{ "100Gbpsx", UNIT_NET, 3, "unknown network unit 'Gbpsx'" },
	{ "4G", UNIT_COUNT, 1, "a count takes no unit" },
	{ "$3", UNIT_PRICE, 0, "expected a number" },
	{ "3$", UNIT_PRICE, 1, "a price is a plain number" },
	{ "1e99", UNIT_COUNT, 1, "a count takes no unit" },
	{ "99999999999999999999", UNIT_COUNT, 0, "number too large" },
};

static const struct {
	double v;
	enum unit_class cls;
	const char *want;
} fmt[] = {
	{ 256 * G, UNIT_SIZE, "256G" },
	{ 1152 * G, UNIT_SIZE, "1152G" },   /* exact in G, not 1.1T */
	{ 1 * T, UNIT_SIZE, "1T" },
	{ 0, UNIT_SIZE, "0" },
	{ 1.5 * T, UNIT_SIZE, "1536G" },
	{ 1.55 * T, UNIT_SIZE, "1.6T" },
	{ 153.6, UNIT_SIZE, "0.15K" },     /* under 1K keeps a unit */
	{ 512, UNIT_SIZE, "0.5K" },
	{ NAN, UNIT_SIZE, "unknown" },
	{ 100, UNIT_NET, "100G" },
	{ 1005000, UNIT_NET, "1005000G" }, /* no exponent */
	{ 0.4, UNIT_NET, "0.4G" },
	{ 3, UNIT_COUNT, "3" },
	{ 5.672, UNIT_PRICE, "5.672" },
	{ 21.957642, UNIT_PRICE, "21.957642" },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		double v = -1;
		char msg[256] = "";
		size_t pos = 99;
		int rc = units_parse(good[i].text, strlen(good[i].text), good[i].cls, &v, msg, sizeof(msg), &pos);
		ok(rc == 0, "'%s' parses", good[i].text);
		is_num(v, good[i].want, "'%s' is %.17g", good[i].text, good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double v = -1;
		char msg[256] = "";
		size_t pos = 99;
		int rc = units_parse(bad[i].text, strlen(bad[i].text), bad[i].cls, &v, msg, sizeof(msg), &pos);
		ok(rc == -1, "'%s' is refused", bad[i].text);
		has_str(msg, bad[i].frag, "'%s': message", bad[i].text);
		ok(pos == bad[i].pos, "'%s': points at %zu (got %zu)", bad[i].text, bad[i].pos, pos);
	}
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		char buf[64];
		units_format(fmt[i].v, fmt[i].cls, buf, sizeof(buf));
		is_str(buf, fmt[i].want, "format %.17g", fmt[i].v);
	}
	/* what units_format prints parses again (sizes exactly when shown exactly) */
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		char buf[64], msg[256];
		double v;
		if (isnan(fmt[i].v))
			continue;
		units_format(fmt[i].v, fmt[i].cls, buf, sizeof(buf));
		ok(units_parse(buf, strlen(buf), fmt[i].cls, &v, msg, sizeof(msg), NULL) == 0,
		   "'%s' parses again", buf);
	}
	return done_testing();
}

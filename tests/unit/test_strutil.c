/*
 * test_strutil.c - str_escape_ctl: text from nodes reaches logs and
 * terminals without raw control characters; str_decimal_fast: the
 * catalog's numbers exactly as strtod reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "tap.h"

static void esc(const char *in, const char *want, const char *name)
{
	char *got = str_escape_ctl(in);
	is_str(got, want, "%s", name);
	free(got);
}

int main(void)
{
	esc("kernel 6.1 not blessed", "kernel 6.1 not blessed", "plain text is kept");
	esc("a\033[2Jb", "a\\x1b[2Jb", "ESC (a terminal's escape sequence) is written out");
	esc("t\033]0;title\007x", "t\\x1b]0;title\\x07x", "an OSC title sequence: ESC and BEL");
	esc("line1\nline2\r\t", "line1\\x0aline2\\x0d\\x09", "newlines (forged log lines), CR and tab");
	esc("del\177", "del\\x7f", "DEL");
	esc("c1 \302\233" "2J", "c1 \\u009b2J", "a UTF-8 C1 CSI");
	esc("caf\303\251 \342\202\254", "caf\303\251 \342\202\254", "other UTF-8 is kept");
	esc(NULL, "", "NULL is the empty string");
	{
		/* in place, in a buffer: cut to fit; nothing done to clean text */
		char b[16] = "plain", c[16] = "a\033[2J\nbcdefghij", d[32] = "a\033[2Jb";
		str_escape_ctl_buf(b, sizeof(b));
		is_str(b, "plain", "in place: clean text is kept");
		str_escape_ctl_buf(d, sizeof(d));
		is_str(d, "a\\x1b[2Jb", "in place: ESC written out");
		str_escape_ctl_buf(c, sizeof(c));
		is_str(c, "a\\x1b[2J\\x0abcd", "in place: cut to the buffer (%zu bytes)", sizeof(c));
	}
	/* bytes that are not UTF-8 (found by the bless_report fuzz target: a
	 * provenance record's driver name quoted in burstctl's message) */
	esc("a\2332Jb", "a\\x9b2Jb", "a lone 0x9b (CSI to an 8-bit terminal) is written out");
	esc("x\377\376y", "x\\xff\\xfey", "bytes that are never UTF-8");
	esc("cut \342\202", "cut \\xe2\\x82", "a sequence cut short by the string's end");
	esc("\342\202x", "\\xe2\\x82x", "a sequence cut short by an ASCII byte");
	esc("overlong \300\257 \340\200\257", "overlong \\xc0\\xaf \\xe0\\x80\\xaf", "overlong forms");
	esc("surrogate \355\240\200", "surrogate \\xed\\xa0\\x80", "a UTF-16 surrogate");
	esc("\364\220\200\200", "\\xf4\\x90\\x80\\x80", "above U+10FFFF");
	esc("emoji \360\237\230\200 max \364\217\277\277", "emoji \360\237\230\200 max \364\217\277\277",
	    "four-byte UTF-8 up to U+10FFFF is kept");
	esc("\302\240nbsp", "\302\240nbsp", "U+00A0, just past the C1 controls, is kept");

	/* str_decimal_fast: the same double as strtod, or no answer */
	{
		static const char *const same[] = { "0", "7", "0.0416", "12.", "0.1", "0.3", "123456789012345",
						    "0.000000000000000000001", "3.14159265358979", "00012.500",
						    "9007199254740.99", "0.0000001234567890123" };
		static const char *const none[] = { "", ".", "-1", "+1", "1e3", "1.2.3", "0x10", " 1", "1 ",
						    "1234567890123456", "nan", "inf", "1,5",
						    "0.00000000000000000000001" };
		char buf[64];
		double v, w;
		int bad = 0, fast = 0;
		unsigned seed = 12345;

		for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
			ok(str_decimal_fast(same[i], &v) && v == strtod(same[i], NULL), "\"%s\" is %.17g, as strtod says", same[i],
			   str_decimal_fast(same[i], &v) ? v : -1.0);
		}
		for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
			v = -7;
			ok(!str_decimal_fast(none[i], &v) && v == -7, "\"%s\": no fast answer (strtod's)", none[i]);
		}
		/* random decimals of up to 15 digits: each must be strtod's to the bit */
		for (int i = 0; i < 200000; i++) {
			unsigned long long m;
			int d, f;
			seed = seed * 1103515245u + 12345u;
			d = 1 + (int)(seed >> 16) % 15;
			seed = seed * 1103515245u + 12345u;
			f = (int)(seed >> 16) % (d + 1);
			m = 0;
			for (int k = 0; k < d; k++) {
				seed = seed * 1103515245u + 12345u;
				m = m * 10 + (seed >> 16) % 10;
			}
			snprintf(buf, sizeof(buf), "%0*llu", d, m);
			if (f) {
				memmove(buf + d - f + 1, buf + d - f, (size_t)f + 1);
				buf[d - f] = '.';
			}
			if (!str_decimal_fast(buf, &v))
				continue;
			fast++;
			w = strtod(buf, NULL);
			if (memcmp(&v, &w, sizeof(v)) && bad++ < 5)
				diag("%s: %.17g, strtod %.17g", buf, v, w);
		}
		ok(fast == 200000 && bad == 0, "200,000 random decimals: all answered, all as strtod to the bit (%d differ)", bad);
	}
	{
		struct strv l = { NULL, 0, 0 };
		char **v, name[32];
		size_t i, n;
		bool all = true;

		v = strv_take(&l);
		ok(v && !v[0], "strv: nothing added is an empty list, not NULL");
		strv_free(v);
		for (i = 0; i < 40; i++) {
			snprintf(name, sizeof(name), "n%zu", i);
			strv_add(&l, xstrdup(name));
			all = all && l.v[l.n] == NULL;
		}
		ok(all, "strv: NULL-terminated after every add, past its growth");
		v = strv_take(&l);
		for (n = 0; v[n]; n++) {
			snprintf(name, sizeof(name), "n%zu", n);
			all = all && !strcmp(v[n], name);
		}
		ok(n == 40 && all, "strv: the 40 names in order");
		ok(l.v == NULL && l.n == 0, "strv: taking leaves the builder empty");
		strv_free(v);
		strv_free(NULL);
	}
	return done_testing();
}

/*
 * test_strutil.c - str_escape_ctl: text from nodes reaches logs and
 * terminals without raw control characters.
 */
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
	return done_testing();
}

/*
 * test_burst_err.c - error messages collected line by line (burst_err_append,
 * as burst.conf's loader reports every error of a file at once) stay one
 * terminated string however full the buffer gets: a message that ended one
 * or two bytes short of the end was given its newline with no room left for
 * the string's end (found by valgrind on the config fuzz target's corpus).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "burst_err.h"
#include "tap.h"

int main(void)
{
	burst_err_t err;
	size_t fill;

	burst_err_clear(&err);
	burst_err_append(&err, "a.conf:%d: %s", 1, "first");
	burst_err_append(&err, "a.conf:%d: %s", 2, "second");
	is_str(err.msg, "a.conf:1: first\na.conf:2: second", "appended errors are one line each");
	ok(err.pos == SIZE_MAX, "and no position");

	/* the message as long as the buffer allows, and a few bytes short of
	 * that; the bytes past its end are not zero (a caller's buffer is not
	 * cleared before its first use) */
	for (fill = BURST_ERR_MAX - 6; fill <= BURST_ERR_MAX - 1; fill++) {
		size_t len;
		memset(&err, 'x', sizeof(err));
		burst_err_set(&err, "%0*d", (int)fill, 7);
		burst_err_append(&err, "next error");
		len = strnlen(err.msg, sizeof(err.msg));
		ok(len < sizeof(err.msg), "a message of %zu bytes, then another: still terminated (%zu)", fill, len);
		ok(len == fill || (len > fill && err.msg[fill] == '\n' && len == fill + 1 + strlen("next error")) ||
		   (len > fill + 1 && err.msg[fill] == '\n' && !strncmp(err.msg + fill + 1, "next error", len - fill - 1)),
		   "  holds the first whole, and the next one or a start of it after a newline");
		ok(len == 0 || err.msg[len - 1] != '\n', "  and does not end in a newline");
	}
	/* a cloud's text in a message: written out */
	burst_err_set(&err, "ec2: %s", "No\033[2J\nforged");
	burst_err_escape_ctl(&err);
	is_str(err.msg, "ec2: No\\x1b[2J\\x0aforged", "burst_err_escape_ctl writes out ESC and the newline");
	return done_testing();
}

/*
 * burst_err.c - error messages for humans.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "burst_err.h"
#include "strutil.h"

void burst_err_set(burst_err_t *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->pos = SIZE_MAX;
}

void burst_err_append(burst_err_t *err, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!err)
		return;
	len = strnlen(err->msg, sizeof(err->msg));
	/* a newline only with room after it for a character and the end of
	 * the string: else the newline would take the end's place */
	if (len > 0) {
		if (len + 2 >= sizeof(err->msg))
			return;
		err->msg[len++] = '\n';
	}
	va_start(ap, fmt);
	vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
	va_end(ap);
}

void burst_err_clear(burst_err_t *err)
{
	if (!err)
		return;
	err->msg[0] = '\0';
	err->pos = SIZE_MAX;
}

void burst_err_escape_ctl(burst_err_t *err)
{
	if (err)
		str_escape_ctl_buf(err->msg, sizeof(err->msg));
}

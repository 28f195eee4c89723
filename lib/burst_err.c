/*
 * burst_err.c - error messages for humans.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "burst_err.h"

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
	if (len > 0 && len + 1 < sizeof(err->msg))
		err->msg[len++] = '\n';
	if (len >= sizeof(err->msg) - 1)
		return;
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

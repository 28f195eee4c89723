/*
 * burst_err.h - error reporting for libburst.
 *
 * Every fallible libburst function takes a burst_err_t * and, on failure,
 * fills it with a message meant for the human who will read it: what went
 * wrong, where (file:line, position, node), and what to do about it.
 */
#ifndef BURST_ERR_H
#define BURST_ERR_H

#include <stddef.h>

#define BURST_ERR_MAX 4096

typedef struct burst_err {
	char msg[BURST_ERR_MAX];
	size_t pos;          /* 0-based character position for parse errors, or SIZE_MAX */
} burst_err_t;

/* Set the message (replaces any previous one); pos becomes SIZE_MAX. */
void burst_err_set(burst_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append a line to the message (for collecting several errors). */
void burst_err_append(burst_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void burst_err_clear(burst_err_t *err);

/* The message with its control characters written out (str_escape_ctl),
 * where text from elsewhere (a cloud's answer) went into it. */
void burst_err_escape_ctl(burst_err_t *err);

#endif

/*
 * contract.h - the contract language.
 *
 *   contract   := item ( (',' | blank)+ item )*
 *   item       := key op value | key 'in' '{' value (',' value)* '}'
 *   op         := '=' | '!=' | '<' | '<=' | '>' | '>='
 *
 * A contract is a conjunction of assumptions over instance features
 * (keys.h), plus options: rank=price|fit, max_price=N (the same as
 * price_per_hour<=N) and spot=yes|no.
 */
#ifndef BURST_CONTRACT_H
#define BURST_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include "burst_err.h"
#include "keys.h"

enum contract_op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN };

enum rank_mode { RANK_PRICE, RANK_FIT };

struct assumption {
	enum key_id key;
	enum contract_op op;
	size_t nvals;
	/* One entry per value (nvals == 1 unless op == OP_IN). */
	char **str;              /* KIND_STRING: the value as written */
	double *num;             /* KIND_NUMBER: canonical value */
	int *arch;               /* KIND_ARCH: index into the arch table */
	char *text;              /* the assumption as written, for messages */
	size_t pos;              /* where it starts in the contract text */
};

struct contract {
	char *text;              /* as given */
	struct assumption *as;
	size_t nas;
	enum rank_mode rank;
	bool spot;
};

/*
 * Parse text into a new contract (caller frees with contract_free).
 * On error returns NULL and err holds a message that quotes the text, points
 * at the offending character with a caret line, says what was expected, and
 * suggests the nearest key, unit or architecture where one is close.
 * err->pos is the 0-based offset of the offending character.
 */
struct contract *contract_parse(const char *text, burst_err_t *err);
void contract_free(struct contract *c);

/* Canonical text of one assumption ("accelerator_count>=4"); caller frees. */
char *contract_assumption_str(const struct assumption *a);

const char *contract_op_str(enum contract_op op);

#endif

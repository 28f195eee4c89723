/*
 * fuzz_contract.c - libFuzzer target for the contract parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "fuzz.h"
#include "strutil.h"

FUZZ_TARGET(contract)
{
	char *text = xstrndup((const char *)data, size);
	burst_err_t err;
	struct contract *c = contract_parse(text, &err);
	size_t i;

	if (c) {
		for (i = 0; i < c->nas; i++) {
			char *s = contract_assumption_str(&c->as[i]);
			/* the canonical form must parse again */
			struct contract *again = contract_parse(s, &err);
			if (!again)
				abort();
			contract_free(again);
			free(s);
		}
		contract_free(c);
	} else if (err.pos > size) {
		abort();    /* an error must point inside the text (or just past it) */
	}
	free(text);
	return 0;
}

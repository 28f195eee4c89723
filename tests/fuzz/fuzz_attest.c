/*
 * fuzz_attest.c - libFuzzer target for attestation documents: DSSE
 * envelopes holding in-toto Statements, as `burstctl attest verify` and
 * the job prolog read them. The input is verified as an envelope with a
 * fixed Ed25519 key (attest_envelope_verify: its JSON, the base64 of the
 * payload and signatures, the signatures), and it is signed with that key
 * as an envelope's payload and verified again, so that the statement
 * checks, which only a good signature reaches, see every input too. A
 * refusal must say why, with the document's strings escaped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "attest.h"
#include "fuzz.h"
#include "strutil.h"

static EVP_PKEY *fixed_key(void)
{
	static EVP_PKEY *key;
	static const unsigned char seed[32] = "slurm-burst fuzz_attest key 0001";

	if (!key && !(key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, sizeof(seed))))
		abort();
	return key;
}

/* a message for a log or a terminal: the document's strings escaped */
static void plain(const char *msg)
{
	for (; *msg; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			abort();
}

FUZZ_TARGET(attest)
{
	EVP_PKEY *key = fixed_key();
	char *text = xstrndup((const char *)data, size), *payload = NULL, *env, *b64;
	char keyid[ATTEST_KEYID_LEN + 1];
	unsigned char *back;
	size_t back_len = 0;
	burst_err_t err;

	/* the input as an envelope */
	if (attest_envelope_verify(text, key, &payload, keyid, &err) == 0) {
		if (!payload || strlen(keyid) != ATTEST_KEYID_LEN)
			abort();
	} else {
		if (!err.msg[0] || payload)
			abort();   /* a refusal says why, and hands nothing out */
		plain(err.msg);
	}
	free(payload);
	payload = NULL;

	/* the input as the payload of a good envelope: only the statement may be wrong */
	env = attest_envelope_sign(ATTEST_PAYLOAD_TYPE, data, size, key, &err);
	if (!env)
		abort();
	if (attest_envelope_verify(env, key, &payload, NULL, &err) == 0) {
		if (!payload || memcmp(payload, data, size))
			abort();
	} else {
		if (strncmp(err.msg, "malformed statement: ", 21))
			abort();
		plain(err.msg);
	}
	free(payload);
	free(env);

	/* base64 both ways gives the bytes back */
	b64 = attest_b64_encode(data, size);
	back = attest_b64_decode(b64, &back_len);
	if (!back || back_len != size || memcmp(back, data, size))
		abort();
	free(back);
	free(b64);
	/* and the input as base64: decoded, or refused */
	back = attest_b64_decode(text, &back_len);
	free(back);
	free(text);
	return 0;
}

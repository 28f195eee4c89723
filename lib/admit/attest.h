/*
 * attest.h - signed attestations of node admission and acceptance.
 *
 * A node's acceptance results and the agent's admission decision are exported
 * as in-toto Statements (v1) in DSSE envelopes signed with the agent's Ed25519
 * key (doc/design.md §8, §10):
 *
 *   envelope  {"payloadType": "application/vnd.in-toto+json",
 *              "payload": base64(statement),
 *              "signatures": [{"keyid": KEYID, "sig": base64(Ed25519(PAE))}]}
 *   statement {"_type": "https://in-toto.io/Statement/v1",
 *              "subject": [{"name": "node:NODE/instance:ID",
 *                           "digest": {"sha256": PROVENANCE_ID}}],
 *              "predicateType": ..., "predicate": {...}}
 *
 * Specifications followed (cited where used in attest.c):
 *   DSSE v1.0.0 protocol (PAE, base64):
 *     https://github.com/secure-systems-lab/dsse/blob/v1.0.0/protocol.md
 *   in-toto Statement v1:
 *     https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md
 *   Test Result predicate v0.1:
 *     https://github.com/in-toto/attestation/blob/main/spec/predicates/test-result.md
 *   Simple Verification Result predicate v0.1:
 *     https://github.com/in-toto/attestation/blob/main/spec/predicates/svr.md
 *
 * Key id: the lowercase hex SHA-256 of the raw 32-byte Ed25519 public key,
 * all 64 digits. DSSE makes the keyid an unauthenticated hint: verification
 * never trusts it, it only names the key in messages.
 */
#ifndef BURST_ATTEST_H
#define BURST_ATTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <openssl/evp.h>

#include "burst_err.h"

#define ATTEST_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define ATTEST_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define ATTEST_PRED_TEST_RESULT "https://in-toto.io/attestation/test-result/v0.1"
#define ATTEST_PRED_SVR "https://in-toto.io/attestation/svr/v0.1"
#define ATTEST_KEYID_LEN 64      /* hex digits, without the NUL */

/* ---- keys ---- */

/*
 * Load the Ed25519 private key in PEM (PKCS#8) at path; when path does not
 * exist, generate one and write it there with mode 0600 (the directory must
 * exist). An existing key file that group or others can read or write is
 * refused (the message says to chmod 0600). On success *key is the key;
 * the caller frees it with EVP_PKEY_free. Returns 0, or -1 with err set.
 */
int attest_key_load_or_create(const char *path, EVP_PKEY **key, burst_err_t *err);

/*
 * Load a key to verify with: a PEM public key (SubjectPublicKeyInfo), or a
 * PEM private key whose public half is used. Must be Ed25519. The caller
 * frees *key with EVP_PKEY_free. Returns 0, or -1 with err set.
 */
int attest_pubkey_load(const char *path, EVP_PKEY **key, burst_err_t *err);

/* The public key as PEM (SubjectPublicKeyInfo). Caller frees; NULL + err. */
char *attest_pubkey_pem(EVP_PKEY *key, burst_err_t *err);

/* The key id (see above) into out[ATTEST_KEYID_LEN + 1]. 0, or -1 + err. */
int attest_key_id(EVP_PKEY *key, char out[ATTEST_KEYID_LEN + 1], burst_err_t *err);

/* ---- statements ---- */

struct attest_subject {
	const char *node;            /* Slurm node name */
	const char *instance_id;     /* the cloud instance id */
	const char *provenance_id;   /* sha256 of the provenance record: 64 hex digits */
};

struct attest_test {
	const char *name;            /* unique test name, e.g. "mpi-pingpong@node1" */
	bool passed;
	bool warned;                 /* passed, with a warning (only when passed) */
};

/* Optional details of the acceptance run (test-result predicate). */
struct attest_test_run {
	const char *config_name;     /* e.g. "acceptance.conf", or NULL: no configuration entry */
	const char *config_sha256;   /* its sha256 (hex), or NULL */
	const char *url;             /* link to the run (logs), or NULL */
};

/*
 * The Statement with a test-result predicate for n acceptance tests (n >= 1):
 * result FAILED if any failed, else WARNED if any warned, else PASSED; the
 * test names go to passedTests / warnedTests / failedTests. run may be NULL.
 * Returns the statement as compact JSON (caller frees), or NULL with err set
 * (bad subject, no tests, a test without a name).
 */
char *attest_statement_test_result(const struct attest_subject *s,
				   const struct attest_test *t, size_t n,
				   const struct attest_test_run *run, burst_err_t *err);

/*
 * The Statement with a Simple Verification Result predicate recording the
 * admission decision: verifier.id = verifier_id (a URI naming the agent),
 * verifier.policy = {"name": policy} (an extension field, as the SVR spec
 * allows; omitted when policy is NULL), timeCreated = when (UTC, RFC 3339),
 * properties = the passing properties only, as SVR defines them:
 * "SLURM_BURST_NODE_ADMITTED" when admitted, and
 * "SLURM_BURST_TEST_PASSED:<name>" for every passed test of t (t may be NULL
 * with n == 0). Returns compact JSON (caller frees), or NULL with err set.
 */
char *attest_statement_verification(const struct attest_subject *s,
				    const char *verifier_id, const char *policy,
				    bool admitted, const struct attest_test *t, size_t n,
				    time_t when, burst_err_t *err);

/* ---- DSSE ---- */

/*
 * PAE(type, body) of DSSE v1: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP
 * body. Returns the bytes (caller frees; NUL-terminated for convenience, not
 * counted in *out_len).
 */
unsigned char *attest_pae(const char *type, const void *body, size_t body_len, size_t *out_len);

/*
 * Base64 (standard alphabet, padded). Returns a NUL-terminated string,
 * caller frees.
 */
char *attest_b64_encode(const void *data, size_t len);

/*
 * Base64 decode, standard or URL-safe alphabet (DSSE verifiers must accept
 * both), padding optional. Returns the bytes (caller frees; NUL-terminated,
 * not counted in *out_len), or NULL when s is not base64.
 */
unsigned char *attest_b64_decode(const char *s, size_t *out_len);

/*
 * Sign payload as a DSSE envelope with one Ed25519 signature by key.
 * Returns the envelope as JSON (caller frees), or NULL with err set.
 */
char *attest_envelope_sign(const char *payload_type, const void *payload, size_t len,
			   EVP_PKEY *key, burst_err_t *err);

/*
 * Verify a DSSE envelope holding an in-toto Statement: the envelope's
 * structure (payloadType, payload, signatures[].sig, all strings, base64),
 * at least one signature that verifies with pub over PAE(payloadType,
 * payload), payloadType == application/vnd.in-toto+json, and a payload that
 * is a Statement v1 (JSON object with _type, subject[] with digests,
 * predicateType, predicate). On success *payload_out (if not NULL) is the
 * decoded statement JSON (caller frees) and, if keyid_out is not NULL, the
 * id of pub goes there.
 *
 * Returns 0 when verified; -1 with err set otherwise, the message saying
 * which: "malformed envelope: <field> ...", "bad signature ...",
 * "wrong key ..." (no signature's keyid names pub), "malformed statement:
 * <field> ...".
 */
int attest_envelope_verify(const char *envelope_json, EVP_PKEY *pub, char **payload_out,
			   char keyid_out[ATTEST_KEYID_LEN + 1], burst_err_t *err);

/* The same, loading the key from a PEM file (see attest_pubkey_load). */
int attest_envelope_verify_file_key(const char *envelope_json, const char *pubkey_path,
				    char **payload_out, burst_err_t *err);

#endif

/*
 * attest.c - in-toto statements in DSSE envelopes, signed with Ed25519
 * through OpenSSL 3. See attest.h for the formats and the specifications.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "attest.h"
#include "strutil.h"

#define ED25519_SIG_LEN 64
#define ED25519_PUB_LEN 32
#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The last OpenSSL error as text (for messages), or "" when there is none. */
static const char *ossl_reason(void)
{
	static char buf[256];
	unsigned long e = ERR_peek_last_error();

	ERR_clear_error();
	if (!e)
		return "";
	ERR_error_string_n(e, buf, sizeof(buf));
	return buf;
}

static bool is_ed25519(EVP_PKEY *key)
{
	return key && EVP_PKEY_is_a(key, "ED25519");
}

/* ---- keys ---- */

static int create_key(const char *path, EVP_PKEY **key, burst_err_t *err)
{
	EVP_PKEY *k = NULL;
	BIO *bio = NULL;
	int fd = -1, rc = -1;
	bool created = false;

	k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	if (!k) {
		burst_err_set(err, "%s: cannot generate an Ed25519 key: %s", path, ossl_reason());
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		burst_err_set(err, "%s: cannot create the attestation key: %s (does the directory exist "
			      "and may this user write there?)", path, strerror(errno));
		goto out;
	}
	created = true;
	if (fchmod(fd, 0600) < 0) {
		burst_err_set(err, "%s: cannot set mode 0600: %s", path, strerror(errno));
		goto out;
	}
	bio = BIO_new_fd(fd, BIO_NOCLOSE);
	/* PEM_write_bio_PrivateKey writes PKCS#8 ("BEGIN PRIVATE KEY") */
	if (!bio || !PEM_write_bio_PrivateKey(bio, k, NULL, NULL, 0, NULL, NULL) ||
	    BIO_flush(bio) != 1) {
		burst_err_set(err, "%s: cannot write the key: %s", path, ossl_reason());
		goto out;
	}
	if (fsync(fd) < 0) {
		burst_err_set(err, "%s: cannot write the key: %s", path, strerror(errno));
		goto out;
	}
	*key = k;
	k = NULL;
	rc = 0;
out:
	BIO_free(bio);
	if (fd >= 0 && close(fd) < 0 && rc == 0) {
		burst_err_set(err, "%s: cannot write the key: %s", path, strerror(errno));
		EVP_PKEY_free(*key);
		*key = NULL;
		rc = -1;
	}
	if (rc < 0 && created)
		unlink(path);
	EVP_PKEY_free(k);
	return rc;
}

int attest_key_load_or_create(const char *path, EVP_PKEY **key, burst_err_t *err)
{
	struct stat st;
	EVP_PKEY *k = NULL;
	BIO *bio = NULL;
	int fd = -1, rc = -1;

	*key = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return create_key(path, key, err);
	if (fd < 0) {
		burst_err_set(err, "%s: cannot open the attestation key: %s", path,
			      errno == ELOOP ? "it is a symbolic link; give the key file itself" :
			      strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		burst_err_set(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		burst_err_set(err, "%s: the attestation key must be a regular file", path);
		goto out;
	}
	if (st.st_mode & 077) {
		burst_err_set(err, "%s: the attestation key has mode %04o: group or others may read "
			      "it; it must be readable by its owner only (chmod 0600 %s)",
			      path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	bio = BIO_new_fd(fd, BIO_NOCLOSE);
	k = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	if (!k) {
		burst_err_set(err, "%s: not a PEM private key (PKCS#8): %s", path, ossl_reason());
		goto out;
	}
	if (!is_ed25519(k)) {
		burst_err_set(err, "%s: the attestation key is %s, not Ed25519 (remove it to have a new "
			      "one made, or give an Ed25519 key)", path, EVP_PKEY_get0_type_name(k));
		goto out;
	}
	*key = k;
	k = NULL;
	rc = 0;
out:
	BIO_free(bio);
	if (fd >= 0)
		close(fd);
	EVP_PKEY_free(k);
	return rc;
}

int attest_pubkey_load(const char *path, EVP_PKEY **key, burst_err_t *err)
{
	BIO *bio = NULL;
	EVP_PKEY *k = NULL;
	int rc = -1;

	*key = NULL;
	bio = BIO_new_file(path, "r");
	if (!bio) {
		burst_err_set(err, "%s: cannot open the public key: %s", path, strerror(errno));
		goto out;
	}
	k = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	if (!k) {
		/* a private key holds its public half */
		ERR_clear_error();
		(void)BIO_reset(bio);
		k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	}
	if (!k) {
		burst_err_set(err, "%s: neither a PEM public key nor a PEM private key: %s", path,
			      ossl_reason());
		goto out;
	}
	if (!is_ed25519(k)) {
		burst_err_set(err, "%s: the key is %s; attestations are signed with Ed25519", path,
			      EVP_PKEY_get0_type_name(k));
		goto out;
	}
	*key = k;
	k = NULL;
	rc = 0;
out:
	BIO_free(bio);
	EVP_PKEY_free(k);
	return rc;
}

char *attest_pubkey_pem(EVP_PKEY *key, burst_err_t *err)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *res = NULL;
	long n;

	if (!bio || !PEM_write_bio_PUBKEY(bio, key)) {
		burst_err_set(err, "cannot export the public key: %s", ossl_reason());
		goto out;
	}
	n = BIO_get_mem_data(bio, &data);
	res = xstrndup(data, (size_t)n);
out:
	BIO_free(bio);
	return res;
}

int attest_key_id(EVP_PKEY *key, char out[ATTEST_KEYID_LEN + 1], burst_err_t *err)
{
	unsigned char raw[ED25519_PUB_LEN], md[32];
	size_t len = sizeof(raw);
	unsigned int mdlen = 0;
	int i;

	if (!is_ed25519(key) || EVP_PKEY_get_raw_public_key(key, raw, &len) != 1 ||
	    len != ED25519_PUB_LEN) {
		burst_err_set(err, "not an Ed25519 key: cannot compute its key id");
		return -1;
	}
	if (EVP_Digest(raw, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
		burst_err_set(err, "cannot hash the public key: %s", ossl_reason());
		return -1;
	}
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* ---- base64 ---- */

static const char b64_std[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *attest_b64_encode(const void *data, size_t len)
{
	const unsigned char *p = data;
	char *out = xmalloc((len + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = b64_std[v >> 18 & 63];
		*o++ = b64_std[v >> 12 & 63];
		*o++ = b64_std[v >> 6 & 63];
		*o++ = b64_std[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
		*o++ = b64_std[v >> 18 & 63];
		*o++ = b64_std[v >> 12 & 63];
		*o++ = i + 1 < len ? b64_std[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/*
 * DSSE protocol.md: "Either standard or URL-safe base64 encodings are
 * allowed. Signers may use either, and verifiers MUST accept either."
 */
unsigned char *attest_b64_decode(const char *s, size_t *out_len)
{
	size_t n = strlen(s), pad = 0, i, nq;
	unsigned char *out, *o;
	uint32_t acc = 0;
	int bits = 0;

	while (n > 0 && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if (n % 4 == 1 || (pad && (n + pad) % 4))
		return NULL;
	nq = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
	out = o = xmalloc(nq + 1);
	for (i = 0; i < n; i++) {
		int v = b64_value(s[i]);
		if (v < 0) {
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			*o++ = (unsigned char)(acc >> bits & 0xff);
		}
	}
	/* the bits left over must be zero (one encoding per byte string) */
	if (bits && (acc & ((1u << bits) - 1))) {
		free(out);
		return NULL;
	}
	*o = '\0';
	*out_len = (size_t)(o - out);
	return out;
}

/* ---- DSSE ---- */

/*
 * DSSE v1.0.0, protocol.md, "Signature Definition":
 *   PAE(type, body) = "DSSEv1" + SP + LEN(type) + SP + type + SP + LEN(body) + SP + body
 *   SP = ASCII space [0x20]; LEN(s) = ASCII decimal byte length of s, no leading zeros
 */
unsigned char *attest_pae(const char *type, const void *body, size_t body_len, size_t *out_len)
{
	size_t tlen = strlen(type);
	char head[64];
	int hn = snprintf(head, sizeof(head), "DSSEv1 %zu ", tlen);
	char mid[32];
	int mn = snprintf(mid, sizeof(mid), " %zu ", body_len);
	size_t total = (size_t)hn + tlen + (size_t)mn + body_len;
	unsigned char *out = xmalloc(total + 1), *p = out;

	memcpy(p, head, (size_t)hn);
	p += hn;
	memcpy(p, type, tlen);
	p += tlen;
	memcpy(p, mid, (size_t)mn);
	p += mn;
	if (body_len)
		memcpy(p, body, body_len);
	out[total] = '\0';
	*out_len = total;
	return out;
}

char *attest_envelope_sign(const char *payload_type, const void *payload, size_t len,
			   EVP_PKEY *key, burst_err_t *err)
{
	unsigned char *pae = NULL, sig[ED25519_SIG_LEN];
	size_t pae_len, sig_len = sizeof(sig);
	EVP_MD_CTX *ctx = NULL;
	char keyid[ATTEST_KEYID_LEN + 1];
	char *p64 = NULL, *s64 = NULL, *res = NULL;
	json_object *env = NULL, *sigs, *so;

	if (!is_ed25519(key)) {
		burst_err_set(err, "attestations are signed with an Ed25519 key");
		goto out;
	}
	if (attest_key_id(key, keyid, err) < 0)
		goto out;
	pae = attest_pae(payload_type, payload, len, &pae_len);
	ctx = EVP_MD_CTX_new();
	/* Ed25519 is a one-shot signature: no digest, the whole message at once */
	if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(ctx, sig, &sig_len, pae, pae_len) != 1 || sig_len != ED25519_SIG_LEN) {
		burst_err_set(err, "cannot sign the attestation: %s", ossl_reason());
		goto out;
	}
	p64 = attest_b64_encode(payload, len);
	s64 = attest_b64_encode(sig, sig_len);
	env = json_object_new_object();
	json_object_object_add(env, "payloadType", json_object_new_string(payload_type));
	json_object_object_add(env, "payload", json_object_new_string(p64));
	sigs = json_object_new_array();
	so = json_object_new_object();
	json_object_object_add(so, "keyid", json_object_new_string(keyid));
	json_object_object_add(so, "sig", json_object_new_string(s64));
	json_object_array_add(sigs, so);
	json_object_object_add(env, "signatures", sigs);
	res = xstrdup(json_object_to_json_string_ext(env, JSON_FLAGS | JSON_C_TO_STRING_PRETTY |
						     JSON_C_TO_STRING_SPACED));
out:
	json_object_put(env);
	EVP_MD_CTX_free(ctx);
	free(pae);
	free(p64);
	free(s64);
	return res;
}

/* Parse exactly the len bytes at s as one JSON value (strict). NULL on error, *why set. */
static json_object *parse_json(const char *s, size_t len, const char **why)
{
	json_tokener *tok = json_tokener_new();
	json_object *o;
	size_t end;

	*why = NULL;
	if (!tok) {
		*why = "out of memory";
		return NULL;
	}
	if (len > INT32_MAX || memchr(s, '\0', len)) {
		*why = "contains a NUL byte or is too large";
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, s, (int)len);
	if (!o) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		*why = e == json_tokener_continue ? "it ends early" : json_tokener_error_desc(e);
		json_tokener_free(tok);
		return NULL;
	}
	end = json_tokener_get_parse_end(tok);
	while (end < len && strchr(" \t\r\n", s[end]))
		end++;
	json_tokener_free(tok);
	if (end != len) {
		*why = "text follows the JSON value";
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* A string member of obj, or NULL when absent or not a string. */
static const char *get_str(json_object *obj, const char *key, bool *present)
{
	json_object *v;

	*present = json_object_object_get_ex(obj, key, &v);
	if (!*present || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Statement v1: https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md */
static int check_statement(const char *payload, size_t len, burst_err_t *err)
{
	json_object *st, *subj, *v;
	const char *why, *s;
	bool present;
	size_t i, n;
	int rc = -1;

	st = parse_json(payload, len, &why);
	if (!st) {
		burst_err_set(err, "malformed statement: the payload is not JSON (%s)", why);
		return -1;
	}
	if (!json_object_is_type(st, json_type_object)) {
		burst_err_set(err, "malformed statement: the payload is not a JSON object");
		goto out;
	}
	s = get_str(st, "_type", &present);
	if (!s || strcmp(s, ATTEST_STATEMENT_TYPE)) {
		char *e = str_escape_ctl(s);
		burst_err_set(err, "malformed statement: _type is %s%s%s, not \"%s\"",
			      s ? "\"" : present ? "not a string" : "missing", e, s ? "\"" : "",
			      ATTEST_STATEMENT_TYPE);
		free(e);
		goto out;
	}
	if (!json_object_object_get_ex(st, "subject", &subj) ||
	    !json_object_is_type(subj, json_type_array) || json_object_array_length(subj) == 0) {
		burst_err_set(err, "malformed statement: subject must be a non-empty array");
		goto out;
	}
	n = json_object_array_length(subj);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(subj, i), *dg;
		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "digest", &dg) ||
		    !json_object_is_type(dg, json_type_object) || json_object_object_length(dg) == 0) {
			burst_err_set(err, "malformed statement: subject[%zu].digest must be a non-empty "
				      "object", i);
			goto out;
		}
		json_object_object_foreach(dg, alg, hex) {
			if (!json_object_is_type(hex, json_type_string)) {
				char *esc = str_escape_ctl(alg);
				burst_err_set(err, "malformed statement: subject[%zu].digest.%s is not a "
					      "string", i, esc);
				free(esc);
				goto out;
			}
		}
		if (json_object_object_get_ex(e, "name", &v) && !json_object_is_type(v, json_type_string)) {
			burst_err_set(err, "malformed statement: subject[%zu].name is not a string", i);
			goto out;
		}
	}
	s = get_str(st, "predicateType", &present);
	if (!s || !*s) {
		burst_err_set(err, "malformed statement: predicateType is %s",
			      present ? "not a non-empty string" : "missing");
		goto out;
	}
	if (json_object_object_get_ex(st, "predicate", &v) && !json_object_is_type(v, json_type_object)) {
		burst_err_set(err, "malformed statement: predicate is not an object");
		goto out;
	}
	rc = 0;
out:
	json_object_put(st);
	return rc;
}

static bool ed25519_verify(EVP_PKEY *pub, const unsigned char *sig, size_t sig_len,
			   const unsigned char *msg, size_t msg_len)
{
	EVP_MD_CTX *ctx;
	int r = 0;

	if (sig_len != ED25519_SIG_LEN)
		return false;
	ctx = EVP_MD_CTX_new();
	if (ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pub) == 1)
		r = EVP_DigestVerify(ctx, sig, sig_len, msg, msg_len);
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return r == 1;
}

int attest_envelope_verify(const char *envelope_json, EVP_PKEY *pub, char **payload_out,
			   char keyid_out[ATTEST_KEYID_LEN + 1], burst_err_t *err)
{
	json_object *env = NULL, *sigs, *v;
	const char *why, *ptype, *p64;
	unsigned char *payload = NULL, *pae = NULL;
	size_t payload_len = 0, pae_len, i, nsig;
	char keyid[ATTEST_KEYID_LEN + 1];
	bool present, verified = false, keyid_matched = false, any_keyid = false, bad_len = false;
	struct strbuf others;
	int rc = -1;

	sb_init(&others);
	if (payload_out)
		*payload_out = NULL;
	if (!is_ed25519(pub)) {
		burst_err_set(err, "the verification key is not an Ed25519 key");
		goto out;
	}
	if (attest_key_id(pub, keyid, err) < 0)
		goto out;
	env = parse_json(envelope_json, strlen(envelope_json), &why);
	if (!env) {
		burst_err_set(err, "malformed envelope: not JSON (%s)", why);
		goto out;
	}
	if (!json_object_is_type(env, json_type_object)) {
		burst_err_set(err, "malformed envelope: not a JSON object");
		goto out;
	}
	ptype = get_str(env, "payloadType", &present);
	if (!ptype) {
		burst_err_set(err, "malformed envelope: payloadType is %s",
			      present ? "not a string" : "missing");
		goto out;
	}
	p64 = get_str(env, "payload", &present);
	if (!p64) {
		burst_err_set(err, "malformed envelope: payload is %s", present ? "not a string" : "missing");
		goto out;
	}
	payload = attest_b64_decode(p64, &payload_len);
	if (!payload) {
		burst_err_set(err, "malformed envelope: payload is not base64");
		goto out;
	}
	if (!json_object_object_get_ex(env, "signatures", &sigs) ||
	    !json_object_is_type(sigs, json_type_array) || json_object_array_length(sigs) == 0) {
		burst_err_set(err, "malformed envelope: signatures must be a non-empty array");
		goto out;
	}
	nsig = json_object_array_length(sigs);
	pae = attest_pae(ptype, payload, payload_len, &pae_len);
	for (i = 0; i < nsig && !verified; i++) {
		json_object *so = json_object_array_get_idx(sigs, i);
		const char *s64, *kid = NULL;
		unsigned char *sig;
		size_t sig_len;

		if (!json_object_is_type(so, json_type_object)) {
			burst_err_set(err, "malformed envelope: signatures[%zu] is not an object", i);
			goto out;
		}
		s64 = get_str(so, "sig", &present);
		if (!s64) {
			burst_err_set(err, "malformed envelope: signatures[%zu].sig is %s", i,
				      present ? "not a string" : "missing");
			goto out;
		}
		if (json_object_object_get_ex(so, "keyid", &v)) {
			if (!json_object_is_type(v, json_type_string)) {
				burst_err_set(err, "malformed envelope: signatures[%zu].keyid is not a string", i);
				goto out;
			}
			kid = json_object_get_string(v);
		}
		sig = attest_b64_decode(s64, &sig_len);
		if (!sig) {
			burst_err_set(err, "malformed envelope: signatures[%zu].sig is not base64", i);
			goto out;
		}
		/* the keyid is an unauthenticated hint: used for the message only */
		if (kid && *kid) {
			any_keyid = true;
			if (!strcmp(kid, keyid))
				keyid_matched = true;
			else {
				char *e = str_escape_ctl(kid);
				sb_addf(&others, "%s%s", others.len ? ", " : "", e);
				free(e);
			}
		}
		if (sig_len != ED25519_SIG_LEN)
			bad_len = true;
		verified = ed25519_verify(pub, sig, sig_len, pae, pae_len);
		free(sig);
	}
	if (!verified) {
		if (keyid_matched || !any_keyid)
			burst_err_set(err, "bad signature: %s over the payload with key %s: the envelope "
				      "was altered after it was signed%s%s",
				      nsig == 1 ? "the signature does not verify" :
				      "none of the signatures verifies",
				      keyid, keyid_matched ? "" : ", or it was signed by another key",
				      bad_len ? " (a signature is not 64 bytes: not Ed25519)" : "");
		else
			burst_err_set(err, "wrong key: the envelope was signed by key %s, not by the key "
				      "given (%s); verify with the signer's public key", others.s, keyid);
		goto out;
	}
	/* DSSE: reject an unsupported type after the signature, then parse */
	if (strcmp(ptype, ATTEST_PAYLOAD_TYPE)) {
		char *e = str_escape_ctl(ptype);
		burst_err_set(err, "malformed envelope: payloadType is \"%s\", not \"%s\"", e,
			      ATTEST_PAYLOAD_TYPE);
		free(e);
		goto out;
	}
	if (check_statement((const char *)payload, payload_len, err) < 0)
		goto out;
	if (keyid_out)
		memcpy(keyid_out, keyid, sizeof(keyid));
	if (payload_out) {
		*payload_out = (char *)payload;
		payload = NULL;
	}
	rc = 0;
out:
	sb_free(&others);
	json_object_put(env);
	free(payload);
	free(pae);
	return rc;
}

int attest_envelope_verify_file_key(const char *envelope_json, const char *pubkey_path,
				    char **payload_out, burst_err_t *err)
{
	EVP_PKEY *pub;
	int rc;

	if (payload_out)
		*payload_out = NULL;
	if (attest_pubkey_load(pubkey_path, &pub, err) < 0)
		return -1;
	rc = attest_envelope_verify(envelope_json, pub, payload_out, NULL, err);
	EVP_PKEY_free(pub);
	return rc;
}

/* ---- statements ---- */

static int check_subject(const struct attest_subject *s, burst_err_t *err)
{
	if (!s || !s->node || !*s->node) {
		burst_err_set(err, "attestation subject: no node name");
		return -1;
	}
	if (!s->instance_id || !*s->instance_id) {
		burst_err_set(err, "attestation subject: node %s has no instance id", s->node);
		return -1;
	}
	if (!s->provenance_id || strlen(s->provenance_id) != 64 ||
	    strspn(s->provenance_id, "0123456789abcdefABCDEF") != 64) {
		burst_err_set(err, "attestation subject: node %s instance %s: the provenance id '%s' "
			      "is not a sha256 (64 hex digits)", s->node, s->instance_id,
			      s->provenance_id ? s->provenance_id : "");
		return -1;
	}
	return 0;
}

/* {"_type": ..., "subject": [...], "predicateType": type} (the predicate is added by the caller) */
static json_object *statement_new(const struct attest_subject *s, const char *type)
{
	json_object *st = json_object_new_object(), *subj = json_object_new_array();
	json_object *e = json_object_new_object(), *dg = json_object_new_object();
	struct strbuf name;
	char hex[65];
	size_t i;

	for (i = 0; i < 64; i++)
		hex[i] = (char)(s->provenance_id[i] >= 'A' && s->provenance_id[i] <= 'F' ?
				s->provenance_id[i] - 'A' + 'a' : s->provenance_id[i]);
	hex[64] = '\0';
	sb_init(&name);
	sb_addf(&name, "node:%s/instance:%s", s->node, s->instance_id);
	json_object_object_add(e, "name", json_object_new_string(name.s));
	sb_free(&name);
	json_object_object_add(dg, "sha256", json_object_new_string(hex));
	json_object_object_add(e, "digest", dg);
	json_object_array_add(subj, e);
	json_object_object_add(st, "_type", json_object_new_string(ATTEST_STATEMENT_TYPE));
	json_object_object_add(st, "subject", subj);
	json_object_object_add(st, "predicateType", json_object_new_string(type));
	return st;
}

static char *statement_finish(json_object *st)
{
	char *res = xstrdup(json_object_to_json_string_ext(st, JSON_FLAGS));

	json_object_put(st);
	return res;
}

static int check_tests(const struct attest_subject *s, const struct attest_test *t, size_t n,
		       burst_err_t *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!t[i].name || !*t[i].name) {
			burst_err_set(err, "node %s instance %s: acceptance test #%zu has no name",
				      s->node, s->instance_id, i + 1);
			return -1;
		}
	}
	return 0;
}

/* https://github.com/in-toto/attestation/blob/main/spec/predicates/test-result.md */
char *attest_statement_test_result(const struct attest_subject *s,
				   const struct attest_test *t, size_t n,
				   const struct attest_test_run *run, burst_err_t *err)
{
	json_object *st, *pred, *conf, *passed, *warned, *failed;
	size_t i;

	if (check_subject(s, err) < 0)
		return NULL;
	if (n == 0 || !t) {
		burst_err_set(err, "node %s instance %s: no acceptance test results to attest "
			      "(an attestation of no tests would prove nothing)", s->node, s->instance_id);
		return NULL;
	}
	if (check_tests(s, t, n, err) < 0)
		return NULL;
	if (run && run->config_sha256 && (strlen(run->config_sha256) != 64 ||
					  strspn(run->config_sha256, "0123456789abcdef") != 64)) {
		burst_err_set(err, "node %s: the configuration digest '%s' is not a sha256 "
			      "(64 lowercase hex digits)", s->node, run->config_sha256);
		return NULL;
	}
	passed = json_object_new_array();
	warned = json_object_new_array();
	failed = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(!t[i].passed ? failed : t[i].warned ? warned : passed,
				      json_object_new_string(t[i].name));
	pred = json_object_new_object();
	json_object_object_add(pred, "result", json_object_new_string(
		json_object_array_length(failed) ? "FAILED" :
		json_object_array_length(warned) ? "WARNED" : "PASSED"));
	/* configuration: a list of ResourceDescriptor, required (may be empty) */
	conf = json_object_new_array();
	if (run && (run->config_name || run->config_sha256)) {
		json_object *rd = json_object_new_object();
		if (run->config_name)
			json_object_object_add(rd, "name", json_object_new_string(run->config_name));
		if (run->config_sha256) {
			json_object *dg = json_object_new_object();
			json_object_object_add(dg, "sha256", json_object_new_string(run->config_sha256));
			json_object_object_add(rd, "digest", dg);
		}
		json_object_array_add(conf, rd);
	}
	json_object_object_add(pred, "configuration", conf);
	if (run && run->url && *run->url)
		json_object_object_add(pred, "url", json_object_new_string(run->url));
	json_object_object_add(pred, "passedTests", passed);
	json_object_object_add(pred, "warnedTests", warned);
	json_object_object_add(pred, "failedTests", failed);
	st = statement_new(s, ATTEST_PRED_TEST_RESULT);
	json_object_object_add(st, "predicate", pred);
	return statement_finish(st);
}

/*
 * Simple Verification Result v0.1:
 * https://github.com/in-toto/attestation/blob/main/spec/predicates/svr.md
 * predicate {"verifier": {"id": URI, ...extension fields}, "timeCreated":
 * TIMESTAMP, "properties": [passing properties]}
 */
char *attest_statement_verification(const struct attest_subject *s,
				    const char *verifier_id, const char *policy,
				    bool admitted, const struct attest_test *t, size_t n,
				    time_t when, burst_err_t *err)
{
	json_object *st, *pred, *ver, *props;
	char ts[32];
	struct tm tm;
	size_t i;

	if (check_subject(s, err) < 0)
		return NULL;
	if (!verifier_id || !*verifier_id) {
		burst_err_set(err, "node %s instance %s: the verification result needs a verifier id "
			      "(a URI naming the agent)", s->node, s->instance_id);
		return NULL;
	}
	if (n && !t) {
		burst_err_set(err, "node %s: %zu tests but no test list", s->node, n);
		return NULL;
	}
	if (check_tests(s, t, n, err) < 0)
		return NULL;
	if (!gmtime_r(&when, &tm) || !strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		burst_err_set(err, "node %s: the verification time %jd is out of range", s->node,
			      (intmax_t)when);
		return NULL;
	}
	ver = json_object_new_object();
	json_object_object_add(ver, "id", json_object_new_string(verifier_id));
	if (policy && *policy) {
		json_object *pol = json_object_new_object();
		json_object_object_add(pol, "name", json_object_new_string(policy));
		json_object_object_add(ver, "policy", pol);
	}
	props = json_object_new_array();
	if (admitted)
		json_object_array_add(props, json_object_new_string("SLURM_BURST_NODE_ADMITTED"));
	for (i = 0; i < n; i++) {
		char *p;
		if (!t[i].passed)
			continue;
		p = xmalloc(strlen(t[i].name) + sizeof("SLURM_BURST_TEST_PASSED:"));
		strcpy(p, "SLURM_BURST_TEST_PASSED:");
		strcat(p, t[i].name);
		json_object_array_add(props, json_object_new_string(p));
		free(p);
	}
	pred = json_object_new_object();
	json_object_object_add(pred, "verifier", ver);
	json_object_object_add(pred, "timeCreated", json_object_new_string(ts));
	json_object_object_add(pred, "properties", props);
	st = statement_new(s, ATTEST_PRED_SVR);
	json_object_object_add(st, "predicate", pred);
	return statement_finish(st);
}

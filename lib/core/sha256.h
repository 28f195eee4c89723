/*
 * sha256.h - SHA-256 (FIPS 180-4) without a crypto library.
 *
 * For the catalog's checksum, which the SPANK plugin computes when it loads
 * the catalog: the plugin loads into sbatch, srun and slurmstepd, so it must
 * not bring OpenSSL with it. Everything else that hashes uses OpenSSL.
 */
#ifndef BURST_SHA256_H
#define BURST_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;           /* bytes hashed so far */
	unsigned char buf[64];  /* a block not yet complete */
	size_t nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, unsigned char digest[32]);
/* lower-case hex of digest into hex (65 bytes with the NUL) */
void sha256_hex(const unsigned char digest[32], char hex[65]);

#endif

/*
 * test_sha256.c - lib/core/sha256.c, the catalog's checksum without OpenSSL:
 * FIPS 180-4's examples, and the same digest as OpenSSL's for every length
 * around the block and padding boundaries, however the input is split.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "sha256.h"
#include "tap.h"

static void hex_of(const void *data, size_t n, char hex[65])
{
	struct sha256 s;
	unsigned char d[32];

	sha256_init(&s);
	sha256_update(&s, data, n);
	sha256_final(&s, d);
	sha256_hex(d, hex);
}

static void openssl_hex(const void *data, size_t n, char hex[65])
{
	unsigned char d[32];
	unsigned int len = 0;

	EVP_Digest(data, n, d, &len, EVP_sha256(), NULL);
	sha256_hex(d, hex);
}

int main(void)
{
	char got[65], want[65];
	unsigned char buf[300];
	char *million;
	struct sha256 s;
	unsigned char d[32];
	size_t n, i, bad_len = 0, bad_split = 0;

	hex_of("", 0, got);
	is_str(got, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "the empty message");
	hex_of("abc", 3, got);
	is_str(got, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "\"abc\"");
	hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, got);
	is_str(got, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	       "the 448-bit message (padding spills into a second block)");

	million = malloc(1000000);
	memset(million, 'a', 1000000);
	sha256_init(&s);
	for (i = 0; i < 1000000; i += 997)   /* pieces that straddle blocks */
		sha256_update(&s, million + i, 1000000 - i < 997 ? 1000000 - i : 997);
	sha256_final(&s, d);
	sha256_hex(d, got);
	is_str(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	       "a million 'a', fed in 997-byte pieces");
	free(million);

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (n = 0; n <= sizeof(buf); n++) {
		openssl_hex(buf, n, want);
		hex_of(buf, n, got);
		if (strcmp(got, want))
			bad_len++;
		for (i = 0; i <= n; i += 13) {
			sha256_init(&s);
			sha256_update(&s, buf, i);
			sha256_update(&s, buf + i, n - i);
			sha256_final(&s, d);
			sha256_hex(d, got);
			if (strcmp(got, want))
				bad_split++;
		}
	}
	ok(bad_len == 0, "OpenSSL's digest for every length 0..300 (%zu differ)", bad_len);
	ok(bad_split == 0, "the same digest in two pieces, split anywhere (%zu differ)", bad_split);
	return done_testing();
}

/*
 * fuzz.h - what the fuzz targets share. Each target defines its entry with
 * FUZZ_TARGET(name): under libFuzzer (bench/fuzz) that is
 * LLVMFuzzerTestOneInput; built with -DFUZZ_REGRESS (tests/unit/
 * test_fuzz_regress, make check) it is fuzz_NAME, so that one program runs
 * every target on its kept seeds (tests/fixtures/fuzz-seeds/NAME/).
 *
 * A target calls the real parser, frees all it got, and touches no file
 * but the ones fuzz_file makes in a private temporary directory.
 */
#ifndef BURST_FUZZ_H
#define BURST_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef FUZZ_REGRESS
#define FUZZ_TARGET(name) \
	int fuzz_##name(const uint8_t *data, size_t size); \
	int fuzz_##name(const uint8_t *data, size_t size)
#else
#define FUZZ_TARGET(name) \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#endif

/*
 * Write data to the file NAME (mode 0600) in this process's private
 * temporary directory (made under $TMPDIR or /tmp on first use, removed
 * with its files at exit) and return its path (static storage, one per
 * name; at most 8 names). Aborts when it cannot.
 */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);

#endif

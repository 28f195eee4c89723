/*
 * fuzz_elf_notes.c - libFuzzer target for the ELF note stream a node's
 * provenance record takes the kernel's build-id from (/sys/kernel/notes,
 * provenance_build_id): the input, exactly its bytes, as the note stream.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "provenance.h"

FUZZ_TARGET(elf_notes)
{
	char *id = provenance_build_id(data, size);

	/* a build-id is lower-case hex of whole bytes, read from the input */
	if (id && (!*id || strlen(id) % 2 || strlen(id) > 2 * size ||
		   strspn(id, "0123456789abcdef") != strlen(id)))
		abort();
	free(id);
	return 0;
}

/*
 * keys.h - the vocabulary of contracts: instance features a contract can
 * state assumptions about (after CloudClusters.jl / PlatformAware.jl where
 * those have a name), with the kind of value each takes.
 */
#ifndef BURST_KEYS_H
#define BURST_KEYS_H

#include <stddef.h>
#include "units.h"

enum key_id {
	KEY_PROVIDER,
	KEY_REGION,
	KEY_MACHINETYPE,
	KEY_VCPUS,
	KEY_MEMORY,
	KEY_ACC_COUNT,
	KEY_ACC_TYPE,
	KEY_ACC_MANUFACTURER,
	KEY_ACC_ARCH,
	KEY_ACC_MODEL,
	KEY_ACC_MEMORY,
	KEY_PROCESSOR,
	KEY_PROC_MANUFACTURER,
	KEY_PROC_UARCH,
	KEY_PROC_ISA,
	KEY_STORAGE_TYPE,
	KEY_STORAGE_SIZE,
	KEY_NETWORK,
	KEY_PRICE,
	KEY_NFEATURES,           /* features end here; options follow */
	KEY_SPOT = KEY_NFEATURES,
	KEY_RANK,
	KEY_MAX_PRICE,
	KEY_COUNT
};

enum key_kind {
	KIND_STRING,     /* names: = != in{} */
	KIND_NUMBER,     /* numbers with a unit class: all operators */
	KIND_ARCH,       /* accelerator architecture: = != in{} and ordered < <= > >= */
	KIND_BOOL,       /* yes/no (spot) */
	KIND_RANK,       /* price | fit */
};

struct key_info {
	enum key_id id;
	const char *name;
	enum key_kind kind;
	enum unit_class unit;    /* for KIND_NUMBER */
	const char *help;        /* one line for --help and the man page */
};

/* Lookup by name (case-insensitive); NULL if unknown. */
const struct key_info *key_lookup(const char *name, size_t len);
const struct key_info *key_info(enum key_id id);
/* All key names, NULL-terminated, for suggestions. */
const char *const *key_names(void);

#endif

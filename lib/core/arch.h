/*
 * arch.h - accelerator architectures, ordered per vendor.
 *
 * Architectures of one vendor form a sequence (NVIDIA: kepler < maxwell <
 * pascal < volta < turing < ampere < ada < hopper < blackwell). Those of
 * different vendors are not comparable: a ">= ampere" assumption is never
 * satisfied by an AMD part.
 */
#ifndef BURST_ARCH_H
#define BURST_ARCH_H

#include <stddef.h>

struct arch_info {
	const char *name;    /* lower case, as in contracts and catalogs */
	const char *vendor;  /* "NVIDIA", "AMD", ... */
	const char *family;  /* product line; ranks compare only within one */
	int family_id;       /* the same family as a small number */
	int rank;            /* order within the family, from 0 */
};

/* The table entry for name (case-insensitive), or NULL. */
const struct arch_info *arch_lookup(const char *name);
const struct arch_info *arch_lookup_n(const char *name, size_t len);
/* All architecture names, NULL-terminated (for suggestions and --help). */
const char *const *arch_names(void);
/* Number of entries and entry i. */
size_t arch_count(void);
const struct arch_info *arch_at(size_t i);

#endif

/*
 * gce_catalog.h - Compute Engine's machine types and accelerator types
 * (machineTypes.aggregatedList, acceleratorTypes.aggregatedList) as the
 * catalog refresh's descriptions of instance types (catalog_refresh.h), for
 * `burstctl catalog refresh` of a gcp provider.
 */
#ifndef BURST_GCE_CATALOG_H
#define BURST_GCE_CATALOG_H

#include <stddef.h>

#include "burst_err.h"
#include "ec2.h"

/* Accelerator types: name (nvidia-tesla-a100) and description (NVIDIA A100 40GB). */
struct gce_accels {
	char **name, **desc;
	size_t n;
};

/*
 * A page of acceleratorTypes.aggregatedList: each type not yet in *out is
 * appended. *next gets nextPageToken (caller frees; NULL at the last page).
 * 0, or -1 with err (not such a listing).
 */
int gce_accels_parse(const char *json, struct gce_accels *out, char **next, burst_err_t *err);
void gce_accels_free(struct gce_accels *a);

/*
 * A page of machineTypes.aggregatedList: each machine type of a zone of
 * region (a zone "REGION-x"; NULL: any zone) that *out does not hold yet is
 * appended as an instance type: guestCpus, memoryMb, its first accelerator
 * (count; its name and manufacturer from acc's description, "NVIDIA A100
 * 40GB" -> NVIDIA, "A100 40GB", 40960 MiB), architecture (X86_64, ARM64).
 * Types deprecated as OBSOLETE or DELETED are left out. *next as above.
 * 0, or -1 with err.
 */
int gce_machine_types_parse(const char *json, const char *region, const struct gce_accels *acc,
			    struct ec2_instance_types *out, char **next, burst_err_t *err);

#endif

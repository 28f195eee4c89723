/*
 * azure_catalog.h - the compute resource provider's Resource SKUs
 * (GET /subscriptions/{id}/providers/Microsoft.Compute/skus?api-version=
 * 2021-07-01, paged by nextLink) as the catalog refresh's descriptions of
 * instance types (catalog_refresh.h), for `burstctl catalog refresh` of an
 * azure provider.
 */
#ifndef BURST_AZURE_CATALOG_H
#define BURST_AZURE_CATALOG_H

#include "burst_err.h"
#include "ec2.h"

#define AZ_SKUS_API "2021-07-01"

/*
 * A page of the Resource SKUs listing: each SKU of resourceType
 * virtualMachines offered in region (its locations, ignoring case) and not
 * restricted there (a restriction of type Location naming the region: not
 * sold to the subscription), that *out does not hold yet, is appended as an
 * instance type: capabilities vCPUs, MemoryGB (GiB, may be fractional: 0.75),
 * GPUs (its model is not in the API: the size name's token naming one,
 * Standard_ND96isr_H100_v5 -> H100, else "GPU"; the caller may know
 * better), CpuArchitectureType (x64 -> x86_64, Arm64 -> arm64); nothing of
 * storage. *next gets nextLink (caller frees; NULL at the last page). 0, or
 * -1 with err (not such a listing).
 */
int az_skus_parse(const char *json, const char *region, struct ec2_instance_types *out, char **next,
		  burst_err_t *err);

#endif

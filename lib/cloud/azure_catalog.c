/*
 * azure_catalog.c - the Resource SKUs listing as the catalog refresh's
 * descriptions (azure_catalog.h).
 */
#include "azure_catalog.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "strutil.h"

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/* The value of capability name (a string, as the API gives them all), or NULL. */
static const char *capability(json_object *sku, const char *name)
{
	json_object *caps;

	if (!json_object_object_get_ex(sku, "capabilities", &caps) || !json_object_is_type(caps, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(caps); i++) {
		json_object *c = json_object_array_get_idx(caps, i);
		const char *n = str_of(c, "name");

		if (n && !strcmp(n, name))
			return str_of(c, "value");
	}
	return NULL;
}

/* 1 if the array key of o holds region (ignoring case). */
static int names_region(json_object *o, const char *key, const char *region)
{
	json_object *a;

	if (!o || !json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *s = json_object_array_get_idx(a, i);

		if (json_object_is_type(s, json_type_string) && !strcasecmp(json_object_get_string(s), region))
			return 1;
	}
	return 0;
}

/* A Location restriction naming region: the SKU is not sold to the subscription there. */
static int restricted(json_object *sku, const char *region)
{
	json_object *r;

	if (!json_object_object_get_ex(sku, "restrictions", &r) || !json_object_is_type(r, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(r); i++) {
		json_object *x = json_object_array_get_idx(r, i), *info = NULL;
		const char *type = str_of(x, "type");

		if (!type || strcmp(type, "Location"))
			continue;
		json_object_object_get_ex(x, "restrictionInfo", &info);
		if (names_region(x, "values", region) || names_region(info, "locations", region))
			return 1;
	}
	return 0;
}

/* A non-negative number of a capability's value, -1 if none or not one. */
static double number(const char *s)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	return *end || !isfinite(v) || v < 0 ? -1 : v;
}

/*
 * The GPU model a size's name carries: the first token after the family's
 * (Standard_NC24ads_A100_v4 -> A100) that starts with a letter, holds a
 * digit and is no version (v4); "GPU" when none (Standard_NC6s_v3).
 */
static char *gpu_from_name(const char *size)
{
	char *s = xstrdup(size), *save = NULL, *tok, *found = NULL;
	int k = 0;

	for (tok = strtok_r(s, "_", &save); tok; tok = strtok_r(NULL, "_", &save), k++) {
		if (k < 2 || !isalpha((unsigned char)tok[0]) || !strpbrk(tok, "0123456789"))
			continue;
		if (tolower((unsigned char)tok[0]) == 'v' && strspn(tok + 1, "0123456789") == strlen(tok + 1))
			continue;
		found = xstrdup(tok);
		break;
	}
	free(s);
	return found ? found : xstrdup("GPU");
}

int az_skus_parse(const char *json, const char *region, struct ec2_instance_types *out, char **next,
		  burst_err_t *err)
{
	json_object *o = json ? json_tokener_parse(json) : NULL, *value;

	*next = NULL;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "value", &value) ||
	    !json_object_is_type(value, json_type_array)) {
		json_object_put(o);
		burst_err_set(err, "not a listing of resource SKUs (no \"value\" array)");
		return -1;
	}
	if (str_of(o, "nextLink") && *str_of(o, "nextLink"))
		*next = xstrdup(str_of(o, "nextLink"));
	for (size_t i = 0; i < json_object_array_length(value); i++) {
		json_object *sku = json_object_array_get_idx(value, i);
		const char *name = str_of(sku, "name"), *rt = str_of(sku, "resourceType"), *arch;
		double vcpus = number(capability(sku, "vCPUs")), mem = number(capability(sku, "MemoryGB"));
		double gpus = number(capability(sku, "GPUs"));
		struct ec2_instance_type *it;
		size_t k;

		if (!name || !rt || strcmp(rt, "virtualMachines") || vcpus < 1 || mem <= 0)
			continue;
		if (region && (!names_region(sku, "locations", region) || restricted(sku, region)))
			continue;
		for (k = 0; k < out->n && strcmp(out->v[k].name, name); k++)
			;
		if (k < out->n)
			continue;
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		it = &out->v[out->n++];
		memset(it, 0, sizeof(*it));
		it->name = str_escape_ctl(name);
		it->vcpus = (int)vcpus;
		it->memory_mib = (long)(mem * 1024 + 0.5);
		it->storage_disk = xstrdup("");   /* the SKU's temporary disk is no instance storage of the catalog's */
		arch = capability(sku, "CpuArchitectureType");
		if (arch && !strcasecmp(arch, "x64"))
			it->arch = xstrdup("x86_64");
		else if (arch && !strcasecmp(arch, "Arm64"))
			it->arch = xstrdup("arm64");
		if (gpus >= 1) {
			it->gpu_count = (int)gpus;
			it->gpu_name = gpu_from_name(it->name);
		}
	}
	json_object_put(o);
	return 0;
}

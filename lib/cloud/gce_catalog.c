/*
 * gce_catalog.c - Compute Engine's machine and accelerator types as the
 * catalog refresh's descriptions (gce_catalog.h).
 */
#include "gce_catalog.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "strutil.h"

static const char *str_of(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
		json_object_get_string(v) : NULL;
}

/* an integer, also as proto3 JSON writes an int64 (a string) */
static long long_of(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_int))
		return (long)json_object_get_int64(v);
	if (json_object_is_type(v, json_type_string))
		return strtol(json_object_get_string(v), NULL, 10);
	return 0;
}

/* The listing's items ({"zones/Z": {KEY: [...]}}) and nextPageToken; NULL with err if not one. */
static json_object *open_listing(const char *json, const char *what, char **next, burst_err_t *err)
{
	json_object *o = json ? json_tokener_parse(json) : NULL, *items;

	*next = NULL;
	if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "items", &items) ||
	    !json_object_is_type(items, json_type_object)) {
		json_object_put(o);
		burst_err_set(err, "not a listing of %s (no \"items\" object of zones)", what);
		return NULL;
	}
	if (str_of(o, "nextPageToken") && *str_of(o, "nextPageToken"))
		*next = xstrdup(str_of(o, "nextPageToken"));
	return o;
}

int gce_accels_parse(const char *json, struct gce_accels *out, char **next, burst_err_t *err)
{
	json_object *o = open_listing(json, "accelerator types", next, err), *items;

	if (!o)
		return -1;
	json_object_object_get_ex(o, "items", &items);
	json_object_object_foreach(items, zone, scoped) {
		json_object *list;
		(void)zone;
		if (!json_object_object_get_ex(scoped, "acceleratorTypes", &list) ||
		    !json_object_is_type(list, json_type_array))
			continue;
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *a = json_object_array_get_idx(list, i);
			const char *name = str_of(a, "name"), *desc = str_of(a, "description");
			size_t k;
			if (!name || !desc)
				continue;
			for (k = 0; k < out->n && strcmp(out->name[k], name); k++)
				;
			if (k < out->n)
				continue;
			out->name = xrealloc(out->name, (out->n + 1) * sizeof(char *));
			out->desc = xrealloc(out->desc, (out->n + 1) * sizeof(char *));
			out->name[out->n] = str_escape_ctl(name);
			out->desc[out->n] = str_escape_ctl(desc);
			out->n++;
		}
	}
	json_object_put(o);
	return 0;
}

void gce_accels_free(struct gce_accels *a)
{
	for (size_t i = 0; a && i < a->n; i++) {
		free(a->name[i]);
		free(a->desc[i]);
	}
	if (a) {
		free(a->name);
		free(a->desc);
		memset(a, 0, sizeof(*a));
	}
}

/* "NVIDIA A100 40GB" -> manufacturer NVIDIA, name "A100 40GB", 40960 MiB;
 * without a description, the type's name: nvidia-tesla-t4 -> NVIDIA, "T4" */
static void accel_name(const char *type, const struct gce_accels *acc, struct ec2_instance_type *it)
{
	const char *desc = NULL, *sp, *gb;
	size_t k;

	for (k = 0; acc && k < acc->n; k++)
		if (!strcmp(acc->name[k], type))
			desc = acc->desc[k];
	if (desc && (sp = strchr(desc, ' ')) && sp[1]) {
		it->gpu_manufacturer = xstrndup(desc, (size_t)(sp - desc));
		it->gpu_name = xstrdup(sp + 1);
		/* a size in the name: "... 40GB", "... 80GB" */
		for (gb = strstr(desc, "GB"); gb; gb = strstr(gb + 2, "GB")) {
			const char *d = gb;
			while (d > desc && isdigit((unsigned char)d[-1]))
				d--;
			if (d < gb && (d == desc || d[-1] == ' ') && (!gb[2] || gb[2] == ' '))
				it->gpu_memory_mib = strtol(d, NULL, 10) * 1024;
		}
		return;
	}
	sp = strchr(type, '-');
	it->gpu_manufacturer = sp ? xstrndup(type, (size_t)(sp - type)) : NULL;
	if (it->gpu_manufacturer)
		for (char *c = it->gpu_manufacturer; *c; c++)
			*c = (char)toupper((unsigned char)*c);
	sp = sp ? sp + 1 : type;
	if (!strncmp(sp, "tesla-", 6))
		sp += 6;
	it->gpu_name = xstrdup(sp);
	for (char *c = it->gpu_name; *c; c++)
		*c = (char)toupper((unsigned char)*c);
}

int gce_machine_types_parse(const char *json, const char *region, const struct gce_accels *acc,
			    struct ec2_instance_types *out, char **next, burst_err_t *err)
{
	json_object *o = open_listing(json, "machine types", next, err), *items;
	size_t rl = region ? strlen(region) : 0;

	if (!o)
		return -1;
	json_object_object_get_ex(o, "items", &items);
	json_object_object_foreach(items, scope, scoped) {
		const char *zone = strncmp(scope, "zones/", 6) ? scope : scope + 6;
		json_object *list;
		if (region && (strncmp(zone, region, rl) || zone[rl] != '-'))
			continue;
		if (!json_object_object_get_ex(scoped, "machineTypes", &list) || !json_object_is_type(list, json_type_array))
			continue;
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *m = json_object_array_get_idx(list, i), *x;
			const char *name = str_of(m, "name"), *arch = str_of(m, "architecture"), *st;
			struct ec2_instance_type *it;
			size_t k;

			if (!name || long_of(m, "guestCpus") <= 0)
				continue;
			if (json_object_object_get_ex(m, "deprecated", &x) && (st = str_of(x, "state")) &&
			    (!strcmp(st, "OBSOLETE") || !strcmp(st, "DELETED")))
				continue;
			for (k = 0; k < out->n && strcmp(out->v[k].name, name); k++)
				;
			if (k < out->n)
				continue;
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			it = &out->v[out->n++];
			memset(it, 0, sizeof(*it));
			it->name = str_escape_ctl(name);
			it->vcpus = (int)long_of(m, "guestCpus");
			it->memory_mib = long_of(m, "memoryMb");
			it->storage_disk = xstrdup("");   /* a machine type says nothing of disks */
			if (arch && !strcmp(arch, "X86_64"))
				it->arch = xstrdup("x86_64");
			else if (arch && !strcmp(arch, "ARM64"))
				it->arch = xstrdup("arm64");
			if (json_object_object_get_ex(m, "accelerators", &x) && json_object_is_type(x, json_type_array) &&
			    json_object_array_length(x) > 0) {
				json_object *a = json_object_array_get_idx(x, 0);
				const char *t = str_of(a, "guestAcceleratorType");
				if (t && long_of(a, "guestAcceleratorCount") > 0) {
					it->gpu_count = (int)long_of(a, "guestAcceleratorCount");
					accel_name(t, acc, it);
				}
			}
		}
	}
	json_object_put(o);
	return 0;
}

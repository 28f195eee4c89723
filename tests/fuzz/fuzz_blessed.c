/*
 * fuzz_blessed.c - libFuzzer target for the blessed lists `burstctl bless`
 * keeps in StateDir and the agent and burst-node read: the input, written to
 * a private temporary file, loaded as blessed-kernels
 * (policy_load_blessed_file) and as blessed-drivers
 * (policy_load_blessed_drivers); each entry taken must be well-formed, and
 * a file with a NUL byte taken not at all; what they take is then matched
 * against a node's kernel and drivers as admission and the health check do.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz.h"
#include "policy.h"

FUZZ_TARGET(blessed)
{
	const char *path = fuzz_file("blessed", data, size);
	json_object *rec = json_tokener_parse("{\"drivers\":{\"nvidia\":{\"version\":\"550.54.15\"},"
					      "\"efa\":{\"version\":\"2.17.3g\"},\"lustre\":{}}}");
	struct policy p;
	burst_err_t err;
	char why[1024];
	size_t i;

	policy_init(&p);
	if (policy_load_blessed_file(path, &p.blessed_extra, &p.nblessed_extra, &err) == 0) {
		if (memchr(data, '\0', size))
			abort();   /* a NUL byte would hide the rest of its line */
		for (i = 0; i < p.nblessed_extra; i++) {
			if (!policy_valid_kernel(p.blessed_extra[i]))
				abort();
			(void)policy_kernel_matches(p.blessed_extra[i], "6.1.0-18-amd64", "3f2a9c");
		}
		if (p.nblessed_extra && p.blessed_extra[p.nblessed_extra])
			abort();   /* the list ends with NULL */
	} else if (!err.msg[0] || p.nblessed_extra)
		abort();   /* a refusal says why and takes nothing */
	if (policy_load_blessed_drivers(path, &p.blessed_drivers_extra, &p.nblessed_drivers_extra,
					&err) == 0) {
		for (i = 0; i < p.nblessed_drivers_extra; i++)
			if (!policy_valid_driver(p.blessed_drivers_extra[i]))
				abort();
		if (policy_check_drivers(&p, rec, why, sizeof(why)) < 0)
			abort();
	} else if (!err.msg[0] || p.nblessed_drivers_extra)
		abort();
	policy_free_state(&p);
	json_object_put(rec);
	return 0;
}

/*
 * fuzz_openstack_auth.c - libFuzzer target for the OpenStack credentials
 * an admin writes: each input is written to a private temporary file
 * (mode 0600) and read as an openrc file and as a clouds.yaml.
 */
#include <stdint.h>

#include "fuzz.h"
#include "openstack_api.h"

FUZZ_TARGET(openstack_auth)
{
	const char *path = fuzz_file("cloud-credentials", data, size);
	struct os_auth a;
	burst_err_t err;

	if (os_auth_from_file(path, &a, &err) == 0)
		os_auth_free(&a);
	if (os_auth_from_clouds_yaml(path, "burst", &a, &err) == 0)
		os_auth_free(&a);
	return 0;
}

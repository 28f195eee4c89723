/*
 * fuzz_openstack.c - libFuzzer target for OpenStack's JSON answers: each
 * input is read as Keystone's token answer (with and without an interface
 * and region to pick), Nova's flavor list and Nova's error body, by the
 * parsers the OpenStack client uses.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ec2.h"
#include "fuzz.h"
#include "openstack_api.h"
#include "strutil.h"

FUZZ_TARGET(openstack)
{
	static char *const aliases[] = { "a100:NVIDIA A100", "t4:Tesla T4" };
	char *json = xstrndup((const char *)data, size);
	struct os_token t = { 0 };
	struct ec2_instance_types types = { 0 };
	burst_err_t err;

	if (os_token_parse(json, size, "subject", NULL, NULL, &t, &err) == 0 && !t.compute_url)
		abort();     /* a token without a compute endpoint is refused */
	os_token_free(&t);
	os_token_parse(json, size, "subject", "internal", "RegionOne", &t, &err);
	os_token_free(&t);
	os_parse_flavors(json, aliases, 2, &types, &err);
	ec2_instance_types_free(&types);
	free(os_error_message(json));
	free(json);
	return 0;
}

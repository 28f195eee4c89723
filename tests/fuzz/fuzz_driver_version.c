/*
 * fuzz_driver_version.c - libFuzzer target for driver version strings: the
 * input as a module's version file (/sys/module/NAME/version,
 * provenance_parse_version), as /proc/driver/nvidia/version
 * (provenance_parse_nvrm), and as a NAME=VERSION an administrator blesses
 * (policy_valid_driver: burstctl bless --driver, BlessedDrivers=). A
 * version the record takes must be one that can be blessed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy.h"
#include "provenance.h"
#include "strutil.h"

/* NAME=v must be a valid blessed-drivers entry */
static void blessable(const char *v)
{
	char entry[8 + PROVENANCE_MAX_VERSION + 1];

	if (!v)
		return;
	if (!*v || strlen(v) > PROVENANCE_MAX_VERSION)
		abort();
	strcpy(entry, "nvidia=");
	strcat(entry, v);
	if (!policy_valid_driver(entry))
		abort();
}

FUZZ_TARGET(driver_version)
{
	char *text = xstrndup((const char *)data, size);
	char *v = provenance_parse_version((const char *)data, size);
	char *nv = provenance_parse_nvrm((const char *)data, size);

	blessable(v);
	blessable(nv);
	if (policy_valid_driver(text) && !strchr(text, '='))
		abort();
	free(v);
	free(nv);
	free(text);
	return 0;
}

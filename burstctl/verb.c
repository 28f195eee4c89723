/*
 * verb.c - finding burstctl's verb among its options (verb.h).
 */
#include <stdbool.h>
#include <string.h>

#include "verb.h"

static bool takes_value(const char *const *names, const char *name)
{
	size_t i;

	for (i = 0; names && names[i]; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int ctl_find_verb(int argc, char **argv, const char *short_valued, const char *const *long_valued)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			return i + 1 < argc ? i + 1 : -1;
		if (a[0] != '-' || a[1] == '\0')
			return i;
		if (a[1] == '-') {
			if (!strchr(a, '=') && takes_value(long_valued, a + 2))
				i++;
			continue;
		}
		/* a cluster of short options: the first that takes a value ends it */
		for (a++; *a; a++)
			if (strchr(short_valued, *a)) {
				if (a[1] == '\0')
					i++;
				break;
			}
	}
	return -1;
}

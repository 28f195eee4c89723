/*
 * node_state.c - the node states' names (node_state.h).
 */
#include <stdio.h>
#include <string.h>

#include "node_state.h"

static const char *const names[NS_COUNT] = {
	[NS_POWERED_DOWN] = "powered_down",
	[NS_REQUESTED] = "requested",
	[NS_LAUNCHING] = "launching",
	[NS_BOOTING] = "booting",
	[NS_ADMITTED] = "admitted",
	[NS_TERMINATING] = "terminating",
	[NS_REJECTED] = "rejected",
	[NS_LOST] = "lost",
};

const char *node_state_name(enum node_state s)
{
	return (int)s >= 0 && s < NS_COUNT ? names[s] : "?";
}

int node_state_parse(const char *name)
{
	int i;

	for (i = 0; name && i < NS_COUNT; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int node_state_sql_list(char *buf, size_t len)
{
	size_t l = 0;
	int i;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < NS_COUNT; i++)
		l += (size_t)snprintf(l < len ? buf + l : NULL, l < len ? len - l : 0, "%s'%s'", i ? "," : "", names[i]);
	return (int)l;
}

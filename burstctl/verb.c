/*
 * verb.c - burstctl's verb found among its options, and the global options
 * every verb's parser shares (verb.h).
 */
#include <stdbool.h>
#include <stdlib.h>
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

/* ---- the global options ---- */

const char ctl_short_valued[] = "cpnokNw";
const char *const ctl_long_valued[] = {
	/* burstctl's own */
	"config", "catalog-dir", "provider", "limit", "libexecdir", "node", "since", "until", "by",
	/* accept */
	"nodes", "partition", "conf", "tap", "junit", "timeout", "mpi-acceptance",
	/* attest, verify */
	"key", "instance", "provenance-id", "results", "verifier", "policy", "decision",
	"acceptance-conf", "url", "output",
	/* bless */
	"state-dir", "kernel", "from", "driver", "from-report", "require-suites", "max-file-mib",
	"max-files", "max-cases",
	/* catalog refresh */
	"region", "output-dir",
	/* provenance */
	"job", "job-nodes", "job-start",
	NULL
};

#define LONG_ONLY(g) (CTL_OPT_LONG + (g))
static const struct option globals[CTL_NGLOBALS] = {
	[CTL_G_CONFIG] = { "config", required_argument, NULL, 'c' },
	[CTL_G_CATALOG_DIR] = { "catalog-dir", required_argument, NULL, LONG_ONLY(CTL_G_CATALOG_DIR) },
	[CTL_G_EXPLAIN] = { "explain", no_argument, NULL, 'e' },
	[CTL_G_PROVIDER] = { "provider", required_argument, NULL, 'p' },
	[CTL_G_CATALOG] = { "catalog", no_argument, NULL, LONG_ONLY(CTL_G_CATALOG) },
	[CTL_G_LIMIT] = { "limit", required_argument, NULL, 'n' },
	[CTL_G_NODES_ONLY] = { "nodes-only", no_argument, NULL, LONG_ONLY(CTL_G_NODES_ONLY) },
	[CTL_G_LIBEXECDIR] = { "libexecdir", required_argument, NULL, LONG_ONLY(CTL_G_LIBEXECDIR) },
	[CTL_G_JSON] = { "json", no_argument, NULL, 'j' },
	[CTL_G_HELP] = { "help", no_argument, NULL, 'h' },
	[CTL_G_VERSION] = { "version", no_argument, NULL, 'V' },
	[CTL_G_FOLLOW] = { "follow", no_argument, NULL, 'f' },
	[CTL_G_NODE] = { "node", required_argument, NULL, LONG_ONLY(CTL_G_NODE) },
	[CTL_G_SINCE] = { "since", required_argument, NULL, LONG_ONLY(CTL_G_SINCE) },
	[CTL_G_UNTIL] = { "until", required_argument, NULL, LONG_ONLY(CTL_G_UNTIL) },
	[CTL_G_BY] = { "by", required_argument, NULL, LONG_ONLY(CTL_G_BY) },
	[CTL_G_BUDGETS] = { "budgets", no_argument, NULL, LONG_ONLY(CTL_G_BUDGETS) },
	[CTL_G_OUTPUT] = { "output", required_argument, NULL, LONG_ONLY(CTL_G_OUTPUT) },
};

static bool names_option(const struct option *own, const char *name)
{
	for (; own && own->name; own++)
		if (!strcmp(own->name, name))
			return true;
	return false;
}

void ctl_getopt_init(struct ctl_getopt *g, const struct option *own, const char *own_short, unsigned mask)
{
	size_t n = 0, k, i;
	char *s;

	while (own && own[n].name)
		n++;
	if (n > CTL_MAX_OWN || strlen(own_short) > 2 * CTL_MAX_OWN + 1)
		abort();   /* a verb with more options than CTL_MAX_OWN: raise it */
	memset(g, 0, sizeof(*g));
	for (k = 0; k < n; k++)
		g->longopts[k] = own[k];
	s = stpcpy(g->shortopts, own_short);
	for (i = 0; i < CTL_NGLOBALS; i++) {
		const struct option *o = &globals[i];
		if (!(mask & (1u << i)) || names_option(own, o->name))
			continue;
		g->longopts[k++] = *o;
		if (o->val < CTL_OPT_LONG && !strchr(own_short, o->val)) {
			*s++ = (char)o->val;
			if (o->has_arg == required_argument)
				*s++ = ':';
		}
	}
	*s = '\0';
}

bool ctl_global(int ch, const char *arg, struct ctl_globals *gl)
{
	switch (ch) {
	case 'c': gl->config = arg; break;
	case LONG_ONLY(CTL_G_CATALOG_DIR): gl->catalog_dir = arg; break;
	case 'e': gl->explain = true; break;
	case 'p': gl->provider = arg; break;
	case LONG_ONLY(CTL_G_CATALOG): gl->catalog = true; break;
	case 'n': gl->limit = arg; break;
	case LONG_ONLY(CTL_G_NODES_ONLY): gl->nodes_only = true; break;
	case LONG_ONLY(CTL_G_LIBEXECDIR): gl->libexecdir = arg; break;
	case 'j': gl->json = true; break;
	case 'f': gl->follow = true; break;
	case LONG_ONLY(CTL_G_NODE): gl->node = arg; break;
	case LONG_ONLY(CTL_G_SINCE): gl->since = arg; break;
	case LONG_ONLY(CTL_G_UNTIL): gl->until = arg; break;
	case LONG_ONLY(CTL_G_BY): gl->by = arg; break;
	case LONG_ONLY(CTL_G_OUTPUT): gl->output = arg; break;
	case LONG_ONLY(CTL_G_BUDGETS): gl->budgets = true; break;
	default: return false;
	}
	return true;
}

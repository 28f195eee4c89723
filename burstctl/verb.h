/*
 * verb.h - burstctl's verbs and global options: finding the verb among the
 * options once, and the global options that every verb's parser shares.
 */
#ifndef BURST_CTL_VERB_H
#define BURST_CTL_VERB_H

#include <getopt.h>
#include <stdbool.h>

/*
 * The index of the verb in argv: the first word that is neither an option
 * nor an option's value (a "--" ends the options); -1 if there is none.
 * The long options named in long_valued (without "--"; NULL-terminated) and
 * the short option letters in short_valued take a value, unless it is
 * attached (--name=VALUE, -cVALUE).
 */
int ctl_find_verb(int argc, char **argv, const char *short_valued, const char *const *long_valued);

/* The options of every verb that take a value (for ctl_find_verb): no
 * option takes a value for one verb and none for another, so one list
 * finds every verb. (accept's --json FILE is the exception; it is not one:
 * before the verb, --json is burstctl's flag.) */
extern const char ctl_short_valued[];
extern const char *const ctl_long_valued[];

/* burstctl's global options (burstctl --help, OPTIONS). */
enum ctl_global {
	CTL_G_CONFIG, CTL_G_CATALOG_DIR, CTL_G_EXPLAIN, CTL_G_PROVIDER, CTL_G_CATALOG, CTL_G_LIMIT,
	CTL_G_NODES_ONLY, CTL_G_LIBEXECDIR, CTL_G_JSON, CTL_G_HELP, CTL_G_VERSION, CTL_G_FOLLOW,
	CTL_G_NODE, CTL_G_SINCE, CTL_G_UNTIL, CTL_G_BY, CTL_G_BUDGETS, CTL_G_OUTPUT,
	CTL_NGLOBALS
};
#define CTL_G(name) (1u << CTL_G_##name)
/* What getopt returns for a global option: its letter when it has one
 * (-c, -e, -p, -n, -j, -h, -V, -f), else CTL_OPT_LONG + its enum ctl_global. */
#define CTL_OPT_LONG 0x1000

/* The global options given, by whichever verb parsed them. */
struct ctl_globals {
	const char *config, *catalog_dir, *provider, *limit, *libexecdir;
	const char *node, *since, *until, *by, *output;
	bool explain, catalog, nodes_only, json, follow, budgets;
};

/* A verb's options for getopt_long: its own (at most CTL_MAX_OWN), then the
 * global ones it takes (a mask of CTL_G()) that it does not name itself
 * (accept's --json FILE shadows the global --json). */
#define CTL_MAX_OWN 32
struct ctl_getopt {
	struct option longopts[CTL_MAX_OWN + CTL_NGLOBALS + 1];
	char shortopts[2 * CTL_MAX_OWN + 2 * CTL_NGLOBALS + 2];
};
void ctl_getopt_init(struct ctl_getopt *g, const struct option *own, const char *own_short, unsigned globals);

/* Records a global option getopt returned as ch (with optarg arg) in gl;
 * false when ch is not a global option. --help and --version are not
 * recorded: each verb answers them itself. */
bool ctl_global(int ch, const char *arg, struct ctl_globals *gl);

#endif

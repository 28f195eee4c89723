/*
 * catref_cmd.h - burstctl's "catalog refresh": rewrite a provider's catalog
 * CSV from EC2's DescribeInstanceTypes (lib/cloud/catalog_refresh.h).
 */
#ifndef BURST_CTL_CATREF_CMD_H
#define BURST_CTL_CATREF_CMD_H

/*
 * If the verb of the burstctl command line argv is "catalog refresh", run it
 * and return its exit code (0 ok, 2 usage, configuration, catalog or EC2
 * error); else return -1 and leave argv alone. Called by burstctl's main
 * before it parses options (the verb has options of its own).
 */
int catref_cmd_main(int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char *const catref_cmd_usage;

#endif

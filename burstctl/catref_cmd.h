/*
 * catref_cmd.h - burstctl's "catalog refresh": rewrite a provider's catalog
 * CSV from EC2's DescribeInstanceTypes (lib/cloud/catalog_refresh.h).
 */
#ifndef BURST_CTL_CATREF_CMD_H
#define BURST_CTL_CATREF_CMD_H

/*
 * Runs burstctl catalog refresh with argv, burstctl's command line without the
 * verb's words (burstctl's verb table finds them; verb is their first);
 * returns its exit code (0 ok, 2 usage, configuration, catalog or EC2
 * error).
 */
int catref_cmd_main(const char *verb, int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char catref_cmd_usage[];

#endif

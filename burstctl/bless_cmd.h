/*
 * bless_cmd.h - burstctl's bless verb: the kernels and driver versions the
 * admission policy admits, kept in StateDir/blessed-kernels and
 * StateDir/blessed-drivers beside BlessedKernels= and BlessedDrivers= of
 * burst.conf.
 */
#ifndef BURST_BLESS_CMD_H
#define BURST_BLESS_CMD_H

/*
 * Runs burstctl bless with argv, burstctl's command line without the
 * verb's words (burstctl's verb table finds them; verb is their first);
 * returns its exit code (0 ok, 1 nothing to bless, 2 usage or input error).
 */
int bless_cmd_main(const char *verb, int argc, char **argv);

/* The usage lines of the verb, for burstctl --help. */
extern const char bless_cmd_usage[];

#endif

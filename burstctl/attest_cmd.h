/*
 * attest_cmd.h - burstctl's attestation verbs: attest, attest-key, verify.
 */
#ifndef BURST_ATTEST_CMD_H
#define BURST_ATTEST_CMD_H

/*
 * If the verb of the burstctl command line argv (the first argument that is
 * neither an option nor an option's value) is one of the attestation verbs,
 * run it and return its exit code (0 ok / verified, 1 verification failed,
 * 2 usage or input error); otherwise return -1 and leave argv as it was.
 * Called by burstctl's main before it parses options, because these verbs
 * have options of their own.
 */
int attest_cmd_main(int argc, char **argv);

/* The usage lines of the verbs, for burstctl --help. */
extern const char attest_cmd_usage[];

#endif

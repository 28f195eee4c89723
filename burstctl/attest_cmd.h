/*
 * attest_cmd.h - burstctl's attestation verbs: attest, attest-key, verify.
 */
#ifndef BURST_ATTEST_CMD_H
#define BURST_ATTEST_CMD_H

/*
 * Runs the attestation verb verb (attest, attest-key or verify) with argv,
 * burstctl's command line without the verb (burstctl's verb table finds
 * it); returns its exit code (0 ok / verified, 1 verification failed, 2
 * usage or input error).
 */
int attest_cmd_main(const char *verb, int argc, char **argv);

/* The usage lines of the verbs, for burstctl --help. */
extern const char attest_cmd_usage[];

#endif

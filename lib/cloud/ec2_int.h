/*
 * ec2_int.h - the EC2 wire format parsers, exposed for the unit tests
 * (tests/unit/test_ec2.c). Not part of the provider API.
 */
#ifndef BURST_EC2_INT_H
#define BURST_EC2_INT_H

#include <stddef.h>

#include "ec2.h"

/*
 * Parse an EC2 error document (<Response><Errors><Error><Code>, <Message>,
 * <RequestID>). Returns 0 and sets *code, *message, *request_id (each
 * allocated, "" when absent; caller frees), or -1 when xml is not one.
 */
int ec2_parse_error(const char *xml, size_t len, char **code, char **message,
		    char **request_id);

/*
 * Parse a RunInstancesResponse or DescribeInstancesResponse, APPENDING its
 * instances to *out (zeroed or from an earlier page). *next_token is set to
 * the page's nextToken (allocated) or NULL. Returns 0, or -1 with err set.
 */
int ec2_parse_instances(const char *xml, size_t len, struct ec2_instances *out,
			char **next_token, burst_err_t *err);

/*
 * The same, keeping only the tags whose key is one of tag_keys (NULL: all),
 * as a DescribeInstances with ec2_describe_params.tag_keys does. Returns 0;
 * -1 when xml is not well-formed XML; -2 when it is XML but no instances
 * answer (err says which). On a failure *out is as it was.
 */
int ec2_parse_instances_keep(const char *xml, size_t len, struct ec2_instances *out,
			     const char *const *tag_keys, size_t ntag_keys, char **next_token,
			     burst_err_t *err);

/* The same for DescribeInstanceTypesResponse. */
int ec2_parse_instance_types(const char *xml, size_t len, struct ec2_instance_types *out,
			     char **next_token, burst_err_t *err);

/*
 * Replace every occurrence of each secret in msg (in place, NUL-terminated,
 * capacity cap) with "[redacted]". secrets is NULL-terminated; NULL/empty
 * entries are skipped.
 */
void ec2_redact(char *msg, size_t cap, const char *const *secrets);

#endif

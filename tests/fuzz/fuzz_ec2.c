/*
 * fuzz_ec2.c - libFuzzer target for EC2's XML answers: each input is read
 * as an error answer, a DescribeInstances/RunInstances answer and a
 * DescribeInstanceTypes answer, by the parsers the EC2 client uses.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ec2_int.h"
#include "fuzz.h"

FUZZ_TARGET(ec2)
{
	const char *xml = (const char *)data;
	char *code = NULL, *message = NULL, *request_id = NULL, *next = NULL;
	struct ec2_instances inst = { 0 };
	struct ec2_instance_types types = { 0 };
	burst_err_t err;

	ec2_parse_error(xml, size, &code, &message, &request_id);
	free(code);
	free(message);
	free(request_id);
	ec2_parse_instances(xml, size, &inst, &next, &err);
	ec2_instances_free(&inst);
	free(next);
	next = NULL;
	ec2_parse_instance_types(xml, size, &types, &next, &err);
	ec2_instance_types_free(&types);
	free(next);
	return 0;
}

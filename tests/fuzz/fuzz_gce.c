/*
 * fuzz_gce.c - libFuzzer target for Compute Engine's JSON answers and a
 * service account's key file: each input is read as an Operation, a
 * listing of operations, a listing of instances, an Instance, an API
 * error body, a token answer and a key file, by the parsers the gcp
 * driver's client uses (lib/cloud/gce.c, gce_auth.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gce.h"
#include "gce_auth.h"
#include "strutil.h"

FUZZ_TARGET(gce)
{
	char *json = xstrndup((const char *)data, size), *next = NULL, r[64], m[512], buf[600];
	struct gce_op op;
	struct gce_ops ops = { 0 };
	struct gce_vms vms = { 0 };
	struct gce_vm vm;
	struct gce_token t;
	struct gce_key k;
	burst_err_t err;

	if (gce_op_parse(json, &op, &err) == 0) {
		if (!op.name || !op.status)
			abort();     /* an operation has both */
		gce_op_class(&op);
		gce_op_errors(&op, buf, sizeof(buf));
	}
	gce_op_free(&op);
	gce_ops_parse(json, &ops, &next, &err);
	gce_ops_free(&ops);
	free(next);
	next = NULL;
	gce_vms_parse(json, &vms, &next, &err);
	gce_vms_free(&vms);
	free(next);
	gce_vm_parse(json, &vm, &err);
	gce_vm_free(&vm);
	gce_error_parse(json, r, sizeof(r), m, sizeof(m));
	if (gce_token_parse(json, 0, &t, &err) == 0 && (!t.access || t.expires <= 0))
		abort();         /* a token has a value and an expiry */
	gce_token_free(&t);
	gce_key_parse(json, "fuzz.json", &k, &err);
	gce_key_free(&k);
	gce_parse_time(json);
	free(json);
	return 0;
}

/*
 * ec2_cli.c - drives lib/cloud/ec2.c and lib/cloud/aws_creds.c from the shell, for
 * tests/integration/test_ec2_moto.sh and test_ec2_faults.sh. Prints one
 * JSON object; exits with the error class (0 = OK), 100 on bad usage.
 *
 *   ec2_cli [--endpoint URL] [--region R] [--max-attempts N] [--base-ms N]
 *           [--cap-ms N] [--max-total-ms N] [--timeout-ms N] [--ca-file F]
 *           [--creds-file F] [--profile P] [--imds] COMMAND ...
 *   run --type T (--image AMI | --lt-name N [--lt-version V]) --token T
 *       [--min N] [--max N] [--tag K=V]... [--user-data S] [--subnet S]
 *       [--sg ID]... [--iam-profile NAME]
 *   describe [--id ID]... [--filter NAME=V1[,V2...]]... [--max-results N]
 *   terminate ID...
 *   tags ID... --tag K=V...
 *   types [TYPE...]
 *   creds             (source, access key id, expiration; never the secret)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "aws_creds.h"
#include "ec2.h"
#include "strutil.h"

#define MAXV 64

static int usage(const char *why)
{
	fprintf(stderr, "ec2_cli: %s (see the comment at the top of tests/unit/ec2_cli.c)\n", why);
	return 100;
}

static struct json_object *instances_json(const struct ec2_instances *l)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct ec2_instance *in = &l->v[i];
		struct json_object *o = json_object_new_object(), *t = json_object_new_object();
#define S(k, v) json_object_object_add(o, k, (v) ? json_object_new_string(v) : NULL)
		S("id", in->id);
		S("type", in->type);
		S("state", in->state);
		S("private_ip", in->private_ip);
		S("launch_time", in->launch_time);
		S("client_token", in->client_token);
		S("image_id", in->image_id);
#undef S
		for (size_t k = 0; k < in->ntags; k++)
			json_object_object_add(t, in->tags[k].key,
					       json_object_new_string(in->tags[k].value));
		json_object_object_add(o, "tags", t);
		json_object_array_add(a, o);
	}
	return a;
}

static int split_tag(char *s, struct ec2_tag *t)
{
	char *eq = strchr(s, '=');

	if (!eq)
		return -1;
	*eq = '\0';
	t->key = s;
	t->value = eq + 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct ec2_client_opts o = { 0 };
	struct aws_creds_opts co = { 0 };
	struct ec2_client *c = NULL;
	struct json_object *out = json_object_new_object();
	burst_err_t err = { 0 };
	enum ec2_class cls = EC2_OK;
	const char *cmd;
	int i = 1, rc = 0;

	o.region = "us-east-1";
	co.no_imds = true;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(k, "--imds") == 0) {
			co.no_imds = false;
			i--;
			continue;
		}
		if (!v)
			return usage("option without a value");
		if (strcmp(k, "--endpoint") == 0) o.endpoint = v;
		else if (strcmp(k, "--region") == 0) o.region = v;
		else if (strcmp(k, "--max-attempts") == 0) o.max_attempts = (unsigned)atoi(v);
		else if (strcmp(k, "--base-ms") == 0) o.backoff_base_ms = atol(v);
		else if (strcmp(k, "--cap-ms") == 0) o.backoff_cap_ms = atol(v);
		else if (strcmp(k, "--max-total-ms") == 0) o.max_total_ms = atol(v);
		else if (strcmp(k, "--timeout-ms") == 0) o.timeout_ms = atol(v);
		else if (strcmp(k, "--ca-file") == 0) o.ca_file = v;
		else if (strcmp(k, "--creds-file") == 0) co.credentials_file = v;
		else if (strcmp(k, "--profile") == 0) co.profile = v;
		else return usage("unknown option");
	}
	if (i >= argc)
		return usage("no command");
	cmd = argv[i++];
	o.creds_opts = &co;

	if (strcmp(cmd, "creds") == 0) {
		struct aws_creds cr;
		if (aws_creds_resolve(&co, &cr, &err) != 0) {
			json_object_object_add(out, "error", json_object_new_string(err.msg));
			rc = 1;
		} else {
			json_object_object_add(out, "source", json_object_new_string(cr.source));
			json_object_object_add(out, "access_key", json_object_new_string(cr.access_key));
			json_object_object_add(out, "has_token", json_object_new_boolean(cr.session_token != NULL));
			json_object_object_add(out, "expiration", json_object_new_int64(cr.expiration));
			aws_creds_free(&cr);
		}
		goto print;
	}

	c = ec2_client_new(&o, &err);
	if (!c) {
		json_object_object_add(out, "class", json_object_new_string("CLIENT"));
		json_object_object_add(out, "error", json_object_new_string(err.msg));
		rc = 1;
		goto print;
	}
	if (strcmp(cmd, "run") == 0) {
		struct ec2_run_params p = { 0 };
		struct ec2_tag tags[MAXV];
		const char *sgs[MAXV];
		struct ec2_instances l = { 0 };
		size_t nt = 0, ns = 0;

		for (; i + 1 < argc; i += 2) {
			const char *k = argv[i];
			char *v = argv[i + 1];
			if (strcmp(k, "--type") == 0) p.instance_type = v;
			else if (strcmp(k, "--image") == 0) p.image_id = v;
			else if (strcmp(k, "--lt-name") == 0) p.launch_template_name = v;
			else if (strcmp(k, "--lt-version") == 0) p.launch_template_version = v;
			else if (strcmp(k, "--token") == 0) p.client_token = v;
			else if (strcmp(k, "--min") == 0) p.min_count = atoi(v);
			else if (strcmp(k, "--max") == 0) p.max_count = atoi(v);
			else if (strcmp(k, "--subnet") == 0) p.subnet_id = v;
			else if (strcmp(k, "--iam-profile") == 0) p.iam_instance_profile_name = v;
			else if (strcmp(k, "--user-data") == 0) {
				p.user_data = v;
				p.user_data_len = strlen(v);
			} else if (strcmp(k, "--sg") == 0 && ns < MAXV) sgs[ns++] = v;
			else if (strcmp(k, "--tag") == 0 && nt < MAXV) {
				if (split_tag(v, &tags[nt++]) != 0)
					return usage("--tag wants K=V");
			} else return usage("unknown run option");
		}
		p.tags = tags;
		p.ntags = nt;
		p.security_group_ids = sgs;
		p.nsecurity_groups = ns;
		cls = ec2_run_instances(c, &p, &l, &err);
		if (cls == EC2_OK) {
			json_object_object_add(out, "instances", instances_json(&l));
			json_object_object_add(out, "reservation_id", l.reservation_id ?
					       json_object_new_string(l.reservation_id) : NULL);
		}
		ec2_instances_free(&l);
	} else if (strcmp(cmd, "describe") == 0) {
		struct ec2_describe_params p = { 0 };
		const char *ids[MAXV];
		struct ec2_filter f[MAXV];
		const char *vals[MAXV][MAXV];
		struct ec2_instances l = { 0 };
		size_t nf = 0, ni = 0;

		for (; i + 1 < argc; i += 2) {
			const char *k = argv[i];
			char *v = argv[i + 1];
			if (strcmp(k, "--id") == 0 && ni < MAXV) ids[ni++] = v;
			else if (strcmp(k, "--max-results") == 0) p.max_results = atoi(v);
			else if (strcmp(k, "--filter") == 0 && nf < MAXV) {
				char *eq = strchr(v, '='), *tok, *save = NULL;
				if (!eq)
					return usage("--filter wants NAME=V1,V2");
				*eq = '\0';
				f[nf].name = v;
				f[nf].values = vals[nf];
				f[nf].nvalues = 0;
				for (tok = strtok_r(eq + 1, ",", &save); tok && f[nf].nvalues < MAXV;
				     tok = strtok_r(NULL, ",", &save))
					vals[nf][f[nf].nvalues++] = tok;
				nf++;
			} else return usage("unknown describe option");
		}
		p.instance_ids = ids;
		p.nids = ni;
		p.filters = f;
		p.nfilters = nf;
		cls = ec2_describe_instances(c, &p, &l, &err);
		if (cls == EC2_OK)
			json_object_object_add(out, "instances", instances_json(&l));
		ec2_instances_free(&l);
	} else if (strcmp(cmd, "terminate") == 0) {
		cls = ec2_terminate_instances(c, (const char *const *)&argv[i], (size_t)(argc - i), &err);
	} else if (strcmp(cmd, "tags") == 0) {
		const char *ids[MAXV];
		struct ec2_tag tags[MAXV];
		size_t ni = 0, nt = 0;

		for (; i < argc; i++) {
			if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc && nt < MAXV) {
				if (split_tag(argv[++i], &tags[nt++]) != 0)
					return usage("--tag wants K=V");
			} else if (ni < MAXV) {
				ids[ni++] = argv[i];
			}
		}
		cls = ec2_create_tags(c, ids, ni, tags, nt, &err);
	} else if (strcmp(cmd, "types") == 0) {
		struct ec2_instance_types l = { 0 };
		cls = ec2_describe_instance_types(c, (const char *const *)&argv[i],
						  (size_t)(argc - i), &l, &err);
		if (cls == EC2_OK) {
			struct json_object *a = json_object_new_array();
			for (size_t k = 0; k < l.n; k++) {
				struct json_object *t = json_object_new_object();
				const struct ec2_instance_type *it = &l.v[k];
				json_object_object_add(t, "name", json_object_new_string(it->name));
				json_object_object_add(t, "vcpus", json_object_new_int(it->vcpus));
				json_object_object_add(t, "memory_mib", json_object_new_int64(it->memory_mib));
				json_object_object_add(t, "gpu_count", json_object_new_int(it->gpu_count));
				json_object_object_add(t, "gpu_name", it->gpu_name ?
						       json_object_new_string(it->gpu_name) : NULL);
				json_object_object_add(t, "gpu_manufacturer", it->gpu_manufacturer ?
						       json_object_new_string(it->gpu_manufacturer) : NULL);
				json_object_object_add(t, "gpu_memory_mib", json_object_new_int64(it->gpu_memory_mib));
				json_object_object_add(t, "network_performance", it->network_performance ?
						       json_object_new_string(it->network_performance) : NULL);
				json_object_object_add(t, "efa_supported", json_object_new_boolean(it->efa_supported));
				json_object_array_add(a, t);
			}
			json_object_object_add(out, "types", a);
		}
		ec2_instance_types_free(&l);
	} else {
		rc = usage("unknown command");
		goto print;
	}
	json_object_object_add(out, "class", json_object_new_string(ec2_class_name(cls)));
	json_object_object_add(out, "error", cls == EC2_OK ? NULL : json_object_new_string(err.msg));
	json_object_object_add(out, "last_code", json_object_new_string(ec2_last_code(c)));
	json_object_object_add(out, "last_request_id", json_object_new_string(ec2_last_request_id(c)));
	{
		struct ec2_stats st = ec2_client_stats(c);
		json_object_object_add(out, "api_calls", json_object_new_int((int)st.api_calls));
		json_object_object_add(out, "retries", json_object_new_int((int)st.retries));
		json_object_object_add(out, "backoff_ms", json_object_new_int64(st.backoff_ms));
		json_object_object_add(out, "budget_exhausted",
				       json_object_new_int((int)st.budget_exhausted));
	}
	rc = (int)cls;
print:
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	ec2_client_free(c);
	return rc;
}

/*
 * gce_cli.c - drives lib/cloud/gce.c and gce_auth.c from the shell, for
 * tests/integration/test_gce_fake.sh.
 *
 *   gce_cli [--endpoint URL] [--project P] [--key FILE | --metadata HOST:PORT]
 *           [--insecure] CMD ARGS...
 *     token                    "token from SOURCE, expires in N s" (never the token)
 *     project                  the project the credentials name
 *     call METHOD PATH [BODY]  the class, then the answer (or the error)
 *     bulk SCOPE TYPE MIN NAME...   a bulkInsert (SCOPE zones/Z or regions/R;
 *                              ZONES=a,b in the environment: its locationPolicy),
 *                              labels burst-cluster=c1, then waits for its
 *                              operation: "op NAME STATUS CLASS", a line
 *                              "loc WHERE created N failed N" per location and
 *                              "error CODE CLASS" per error
 *     list [FILTER]            aggregated list, every page: "NAME ZONE STATUS IP
 *                              NODE" per VM, then "pages N"
 *     delete ZONE NAME         instances.delete and its wait: "op NAME STATUS CLASS"
 * Exits 0, 1 when the API refused (the class and message on stderr), 100 on
 * bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "gce.h"
#include "gce_auth.h"
#include "strutil.h"

static int usage(const char *why)
{
	fprintf(stderr, "gce_cli: %s (see tests/unit/gce_cli.c)\n", why);
	return 100;
}

/* wait for operation op of scope (zones/Z or regions/R) to be DONE */
static int wait_op(struct gce_client *c, const char *scope, struct gce_op *op)
{
	int rounds = 0;

	while (!gce_op_done(op) && rounds++ < 100) {
		char path[600], *ans = NULL;
		burst_err_t err;
		enum gce_class cls;

		snprintf(path, sizeof(path), "%s/operations/%s/wait", scope, op->name);
		cls = gce_call(c, "POST", path, NULL, "wait", &ans, &err);
		if (cls != GCE_OK) {
			fprintf(stderr, "%s %s\n", gce_class_name(cls), err.msg);
			free(ans);
			return -1;
		}
		gce_op_free(op);
		if (gce_op_parse(ans, op, &err) < 0) {
			fprintf(stderr, "PARSE %s\n", err.msg);
			free(ans);
			return -1;
		}
		free(ans);
	}
	return 0;
}

static void print_op(const struct gce_op *op)
{
	size_t i;

	printf("op %s %s %s\n", op->name, op->status, gce_class_name(gce_op_class(op)));
	for (i = 0; i < op->nlocs; i++)
		printf("loc %s created %ld failed %ld\n", op->locs[i].where, op->locs[i].created, op->locs[i].failed);
	for (i = 0; i < op->nerrors; i++)
		printf("error %s %s\n", op->errors[i].code, gce_class_name(op->errors[i].cls));
}

int main(int argc, char **argv)
{
	struct gce_auth_opts ao;
	struct gce_client_opts co;
	struct gce_auth *a;
	struct gce_client *c = NULL;
	const char *endpoint = NULL, *project = NULL;
	burst_err_t err;
	int k = 1, rc = 0;

	memset(&ao, 0, sizeof(ao));
	memset(&co, 0, sizeof(co));
	for (; k < argc && !strncmp(argv[k], "--", 2); k++) {
		if (!strcmp(argv[k], "--endpoint") && k + 1 < argc)
			endpoint = argv[++k];
		else if (!strcmp(argv[k], "--project") && k + 1 < argc)
			project = argv[++k];
		else if (!strcmp(argv[k], "--key") && k + 1 < argc)
			ao.key_file = argv[++k];
		else if (!strcmp(argv[k], "--metadata") && k + 1 < argc)
			ao.metadata_host = argv[++k];
		else if (!strcmp(argv[k], "--insecure"))
			ao.allow_http = co.allow_http = true;
		else
			return usage(argv[k]);
	}
	if (k >= argc)
		return usage("no command");
	a = gce_auth_new(&ao, &err);
	if (!a) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (!strcmp(argv[k], "token")) {
		const char *t = gce_auth_token(a, false, &err);
		if (!t) {
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
		} else
			printf("token from %s, %zu characters\n", gce_auth_source(a), strlen(t));
		goto out;
	}
	if (!project && !(project = gce_auth_project(a, &err))) {
		fprintf(stderr, "%s\n", err.msg);
		rc = 1;
		goto out;
	}
	if (!strcmp(argv[k], "project")) {
		printf("%s\n", project);
		goto out;
	}
	co.endpoint = endpoint;
	co.project = project;
	co.auth = a;
	if (!(c = gce_client_new(&co, &err))) {
		fprintf(stderr, "%s\n", err.msg);
		rc = 1;
		goto out;
	}
	if (!strcmp(argv[k], "call") && k + 2 < argc) {
		char *ans = NULL;
		enum gce_class cls = gce_call(c, argv[k + 1], argv[k + 2], k + 3 < argc ? argv[k + 3] : NULL, "call",
					      &ans, &err);
		printf("%s\n", gce_class_name(cls));
		if (cls == GCE_OK)
			printf("%s\n", ans ? ans : "");
		else {
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
		}
		free(ans);
	} else if (!strcmp(argv[k], "bulk") && k + 4 < argc) {
		const char *scope = argv[k + 1];
		struct gce_bulk b;
		struct gce_kv labels[1] = { { GCE_LABEL_CLUSTER, "c1" } };
		struct gce_kv md[1] = { { "startup-script", "#!/bin/sh\necho hello\n" } };
		char *zl = getenv("ZONES") ? xstrdup(getenv("ZONES")) : NULL, *zs[16], *save = NULL, *z;
		char path[400], *body, *ans = NULL;
		struct gce_op op;
		enum gce_class cls;
		size_t nz = 0;

		memset(&b, 0, sizeof(b));
		for (z = zl ? strtok_r(zl, ",", &save) : NULL; z && nz < 16; z = strtok_r(NULL, ",", &save))
			zs[nz++] = z;
		b.machine_type = argv[k + 2];
		b.min_count = atol(argv[k + 3]);
		b.names = (const char *const *)&argv[k + 4];
		b.n = (size_t)(argc - k - 4);
		b.zones = (const char *const *)zs;
		b.nzones = nz;
		b.image = "projects/debian-cloud/global/images/family/debian-12";
		b.labels = labels;
		b.nlabels = 1;
		b.metadata = md;
		b.nmetadata = 1;
		body = gce_bulk_body(&b);
		snprintf(path, sizeof(path), "%s/instances/bulkInsert?requestId=%s", scope,
			 getenv("REQUEST_ID") ? getenv("REQUEST_ID") : "6ba7b810-9dad-41d1-80b4-00c04fd430c8");
		cls = gce_call(c, "POST", path, body, "bulkInsert", &ans, &err);
		free(body);
		free(zl);
		if (cls != GCE_OK) {
			printf("%s\n", gce_class_name(cls));
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
		} else if (gce_op_parse(ans, &op, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
		} else {
			if (wait_op(c, scope, &op) < 0)
				rc = 1;
			print_op(&op);
			gce_op_free(&op);
		}
		free(ans);
	} else if (!strcmp(argv[k], "list")) {
		struct strbuf path;
		char *page = NULL, *esc = NULL;
		int pages = 0;

		if (k + 1 < argc)
			esc = curl_escape(argv[k + 1], 0);
		do {
			struct gce_vms l = { 0 };
			char *ans = NULL, *next = NULL;
			enum gce_class cls;
			size_t i;

			sb_init(&path);
			sb_addf(&path, "aggregated/instances?maxResults=%s%s%s%s%s", getenv("PAGE") ? getenv("PAGE") : "500",
				esc ? "&filter=" : "", esc ? esc : "", page ? "&pageToken=" : "", page ? page : "");
			cls = gce_call(c, "GET", path.s, NULL, "list", &ans, &err);
			sb_free(&path);
			free(page);
			page = NULL;
			if (cls != GCE_OK) {
				printf("%s\n", gce_class_name(cls));
				fprintf(stderr, "%s\n", err.msg);
				rc = 1;
				break;
			}
			if (gce_vms_parse(ans, &l, &next, &err) < 0) {
				fprintf(stderr, "%s\n", err.msg);
				rc = 1;
				free(ans);
				break;
			}
			free(ans);
			pages++;
			for (i = 0; i < l.n; i++)
				printf("%s %s %s %s %s\n", l.v[i].name, l.v[i].zone ? l.v[i].zone : "-", l.v[i].status,
				       l.v[i].ip ? l.v[i].ip : "-", l.v[i].node ? l.v[i].node : "-");
			gce_vms_free(&l);
			page = next;
		} while (page);
		free(page);
		if (esc)
			curl_free(esc);
		if (!rc)
			printf("pages %d\n", pages);
	} else if (!strcmp(argv[k], "delete") && k + 2 < argc) {
		char path[400], scope[200], *ans = NULL;
		enum gce_class cls;
		struct gce_op op;

		snprintf(path, sizeof(path), "zones/%s/instances/%s", argv[k + 1], argv[k + 2]);
		snprintf(scope, sizeof(scope), "zones/%s", argv[k + 1]);
		cls = gce_call(c, "DELETE", path, NULL, "delete", &ans, &err);
		if (cls != GCE_OK) {
			printf("%s\n", gce_class_name(cls));
			fprintf(stderr, "%s\n", err.msg);
			rc = 1;
		} else if (gce_op_parse(ans, &op, &err) == 0) {
			if (wait_op(c, scope, &op) < 0)
				rc = 1;
			print_op(&op);
			gce_op_free(&op);
		}
		free(ans);
	} else
		rc = usage("unknown command or missing arguments");
out:
	gce_client_free(c);
	gce_auth_free(a);
	return rc;
}

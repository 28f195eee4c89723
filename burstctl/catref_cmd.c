/*
 * catref_cmd.c - burstctl catalog refresh: rewrite a provider's catalog CSV
 * from EC2's DescribeInstanceTypes, Nova's flavors, Compute Engine's
 * machine types or Azure's Resource SKUs (lib/cloud/catalog_refresh.h has
 * the rules).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "arm.h"
#include "azure_auth.h"
#include "azure_catalog.h"
#include "catalog.h"
#include "catalog_refresh.h"
#include "catref_cmd.h"
#include "config.h"
#include "ec2.h"
#include "gce.h"
#include "gce_auth.h"
#include "gce_catalog.h"
#include "openstack_api.h"
#include "strutil.h"
#include "verb.h"

#define EXIT_OK 0
#define EXIT_USAGE 2

static const char *prog = "burstctl catalog refresh";

const char catref_cmd_usage[] =
"  catalog refresh --provider NAME [--region R] [--output FILE | --output-dir DIR]\n"
"                  [--drop-missing]\n"
"                           rewrite the provider's catalog from EC2's DescribeInstanceTypes,\n"
"                           Nova's flavors, Compute Engine's machine types or Azure's\n"
"                           Resource SKUs\n";

static void usage(FILE *f)
{
	fprintf(f, "usage: burstctl [-c burst.conf] [--catalog-dir DIR] catalog refresh --provider NAME\n"
		"         [--region R] [--output FILE | --output-dir DIR] [--drop-missing] [--json]\n"
		"Asks EC2 (with the provider's credentials and endpoint from burst.conf) for every\n"
		"instance type, merges the answer into the catalog <catalog>.csv and writes it\n"
		"atomically (default: over the catalog in use). See burstctl(8).\n");
}

static int sha256_file(const char *path, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[8192];
	unsigned int mdlen = 0, i;
	EVP_MD_CTX *ctx;
	FILE *f = fopen(path, "r");
	size_t n;

	out[0] = '\0';
	if (!f)
		return -1;
	ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		EVP_DigestUpdate(ctx, buf, n);
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	fclose(f);
	for (i = 0; i < mdlen && i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	return 0;
}

/* Copy src to dst through a temporary file and rename (the prices beside the catalog). */
static int copy_file(const char *src, const char *dst, burst_err_t *err)
{
	struct catref_table t;

	/* a prices CSV is a CSV too: read and written as text, atomically */
	if (catref_read(src, &t, err) < 0)
		return -1;
	if (catref_write(dst, &t, err) < 0) {
		catref_table_free(&t);
		return -1;
	}
	catref_table_free(&t);
	return 0;
}

static json_object *diffs_json(const struct catref_diff *d, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "instance_type", json_object_new_string(d[i].type));
		json_object_object_add(o, "column", json_object_new_string(d[i].col));
		json_object_object_add(o, "catalog", json_object_new_string(d[i].old));
		json_object_object_add(o, "ec2", json_object_new_string(d[i].new_));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *strv_json(char **v, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

static void print_report(const struct catref_report *r, const char *out, const char *sum,
			 size_t nrows, bool json, const char *api_name)
{
	size_t i;

	if (json) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "output", json_object_new_string(out));
		json_object_object_add(o, "version", json_object_new_string(r->new_version ? r->new_version : ""));
		json_object_object_add(o, "previous_version", json_object_new_string(r->old_version ? r->old_version : ""));
		json_object_object_add(o, "sha256", json_object_new_string(sum));
		json_object_object_add(o, "types", json_object_new_int64((int64_t)nrows));
		json_object_object_add(o, "added", strv_json(r->added, r->nadded));
		json_object_object_add(o, "changed", diffs_json(r->changed, r->nchanged));
		json_object_object_add(o, "kept", diffs_json(r->kept, r->nkept));
		json_object_object_add(o, "missing", strv_json(r->missing, r->nmissing));
		json_object_object_add(o, "missing_dropped", json_object_new_boolean(r->dropped));
		json_object_object_add(o, "unchanged", json_object_new_int64((int64_t)r->unchanged));
		json_object_object_add(o, "efa_column_added", json_object_new_boolean(r->efa_added));
		json_object_object_add(o, "notes", strv_json(r->notes, r->nnotes));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		return;
	}
	printf("wrote %s: %zu instance types, version %s (was %s), sha256 %s\n", out, nrows,
	       r->new_version ? r->new_version : "-", r->old_version ? r->old_version : "-", sum);
	printf("added: %zu\n", r->nadded);
	for (i = 0; i < r->nadded; i++)
		printf("  + %s\n", r->added[i]);
	printf("changed: %zu values\n", r->nchanged);
	for (i = 0; i < r->nchanged; i++)
		printf("  ~ %s %s: %s -> %s\n", r->changed[i].type, r->changed[i].col,
		       r->changed[i].old[0] ? r->changed[i].old : "(empty)",
		       r->changed[i].new_[0] ? r->changed[i].new_ : "(empty)");
	printf("kept (%s disagrees, the curated value stays): %zu values\n", api_name, r->nkept);
	for (i = 0; i < r->nkept; i++)
		printf("  = %s %s: %s (%s: %s)\n", r->kept[i].type, r->kept[i].col, r->kept[i].old, api_name, r->kept[i].new_);
	printf("missing (not in %s's answer%s): %zu\n", api_name, r->dropped ? ", dropped" : ", kept", r->nmissing);
	for (i = 0; i < r->nmissing; i++)
		printf("  - %s\n", r->missing[i]);
	printf("unchanged: %zu\n", r->unchanged);
	if (r->efa_added)
		printf("efa: a new column (EC2's efaSupported: yes/no), filled for every type %s describes\n", api_name);
	for (i = 0; i < r->nnotes; i++)
		printf("note: %s\n", r->notes[i]);
}

/* An empty catalog of provider catname, with the columns the catalog loader reads. */
static int new_table(const char *path, const char *catname, struct catref_table *t, burst_err_t *err)
{
	static const char *const cols[] = { "instance_type", "vcpus", "memory_mib", "accelerator_count",
		"accelerator", "accelerator_type", "accelerator_manufacturer", "accelerator_architecture",
		"accelerator_memory_mib", "processor", "processor_manufacturer", "processor_microarchitecture",
		"processor_isa", "storage_type", "storage_gib", "network_gbps", "source", NULL };
	struct strbuf sb;
	size_t i;

	(void)path;
	(void)err;
	memset(t, 0, sizeof(*t));
	t->comments = xcalloc(2, sizeof(char *));
	sb_init(&sb);
	sb_addf(&sb, "# slurm-burst instance catalog, provider %s", catname);
	t->comments[t->ncomments++] = sb_take(&sb);
	t->comments[t->ncomments++] = xstrdup("# version=none");
	for (i = 0; cols[i]; i++)
		;
	t->cols = xcalloc(i, sizeof(char *));
	for (i = 0; cols[i]; i++)
		t->cols[t->ncols++] = xstrdup(cols[i]);
	return 0;
}

/* A compute microversion with flavors' extra_specs inline (2.61), or the provider's if later. */
/*
 * A gcp provider's machine types in region: every page of
 * acceleratorTypes.aggregatedList (the accelerators' names), then of
 * machineTypes.aggregatedList, with the provider's key (or the metadata
 * server) as the driver has them. 0, or -1 with err.
 */
static int gcp_types(const struct cfg_provider *p, const char *region, bool allow_http,
		     struct ec2_instance_types *api, burst_err_t *err)
{
	struct gce_auth_opts ao;
	struct gce_client_opts co;
	struct gce_auth *auth = NULL;
	struct gce_client *gc = NULL;
	struct gce_accels acc = { 0 };
	const char *project;
	int rc = -1;

	memset(&ao, 0, sizeof(ao));
	ao.key_file = p->credentials;
	ao.ca_file = p->ca_file;
	ao.allow_http = allow_http;
	if (!(auth = gce_auth_new(&ao, err)))
		return -1;
	if (!(project = p->project) && !(project = gce_auth_project(auth, err)))
		goto out;
	memset(&co, 0, sizeof(co));
	co.endpoint = p->endpoint;
	co.project = project;
	co.auth = auth;
	co.ca_file = p->ca_file;
	co.allow_http = allow_http;
	if (!(gc = gce_client_new(&co, err)))
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		char *page = NULL;
		do {
			char path[600], *ans = NULL, *next = NULL;
			int prc;

			snprintf(path, sizeof(path), "aggregated/%s?maxResults=500%s%s",
				 pass ? "machineTypes" : "acceleratorTypes", page ? "&pageToken=" : "", page ? page : "");
			free(page);
			page = NULL;
			if (gce_call(gc, "GET", path, NULL, pass ? "list the machine types" : "list the accelerator types",
				     &ans, err) != GCE_OK) {
				free(ans);
				goto out;
			}
			prc = pass ? gce_machine_types_parse(ans, region, &acc, api, &next, err) :
				gce_accels_parse(ans, &acc, &next, err);
			free(ans);
			if (prc < 0) {
				free(next);
				goto out;
			}
			page = next;
		} while (page);
	}
	rc = 0;
out:
	gce_accels_free(&acc);
	gce_client_free(gc);
	gce_auth_free(auth);
	return rc;
}

/*
 * An azure provider's VM sizes in region: every page of the Resource SKUs
 * listing, with the provider's credentials (or its managed identity) as the
 * driver has them. The API names no GPU model: a size the catalog has
 * keeps its curated one (model and per-device memory), so that the merge
 * finds it in the model table. 0, or -1 with err.
 */
static int azure_types(const struct cfg_provider *p, const char *region, bool allow_http, const struct catalog *cat,
		       struct ec2_instance_types *api, burst_err_t *err)
{
	struct arm_client_opts o;
	struct arm_client *c = NULL;
	struct az_creds cr;
	char path[300], what[200], *next = NULL;
	unsigned pages = 0;
	int rc = -1;

	if (!p->subscription) {
		burst_err_set(err, "no Subscription= (the Resource SKUs are listed per subscription)");
		return -1;
	}
	if (p->credentials) {
		if (az_creds_from_file(p->credentials, &cr, err) < 0)
			return -1;
	} else
		az_creds_managed(&cr);
	memset(&o, 0, sizeof(o));
	o.creds = &cr;
	o.endpoint = p->endpoint;
	o.imds = p->metadata_endpoint;
	o.ca_file = p->ca_file;
	o.allow_http = allow_http;
	c = arm_client_new(&o, err);
	az_creds_free(&cr);
	if (!c)
		return -1;
	snprintf(path, sizeof(path), "/subscriptions/%s/providers/Microsoft.Compute/skus?api-version=%s&$filter=location%%20eq%%20'%s'",
		 p->subscription, AZ_SKUS_API, region);
	snprintf(what, sizeof(what), "azure %s: list the resource SKUs", p->name);
	do {
		struct arm_answer a;
		enum az_class cls = arm_request(c, "GET", next ? next : path, NULL, ARM_READ, region, what, &a, err);
		int prc;

		free(next);
		next = NULL;
		if (cls != AZ_OK) {
			arm_answer_free(&a);
			if (cls == AZ_AUTH) {
				char *m = xstrdup(err->msg);
				burst_err_set(err, "%s (check the provider's CredentialsFile= and its role: "
					      "Microsoft.Compute/skus/read)", m);
				free(m);
			}
			goto out;
		}
		prc = az_skus_parse(a.body, region, api, &next, err);
		arm_answer_free(&a);
		if (prc < 0)
			goto out;
		if (++pages > 10000) {
			burst_err_set(err, "%s: more than 10,000 pages: given up", what);
			goto out;
		}
	} while (next);
	for (size_t i = 0; i < api->n; i++) {
		struct ec2_instance_type *it = &api->v[i];
		char key[300];
		const struct cat_type *t;
		int model;

		snprintf(key, sizeof(key), "%s:%s", p->catalog ? p->catalog : p->type, it->name);
		if (!it->gpu_count || !(t = catalog_find_type(cat, key)) || (model = t->sid[KEY_ACC_MODEL]) < 0)
			continue;
		free(it->gpu_name);
		it->gpu_name = xstrdup(catalog_str(cat, model));
		if (!isnan(t->num[KEY_ACC_MEMORY]))
			it->gpu_memory_mib = (long)t->num[KEY_ACC_MEMORY];
	}
	rc = 0;
out:
	free(next);
	arm_client_free(c);
	return rc;
}

static const char *os_microversion(const char *mv)
{
	int major = 0, minor = 0;

	if (mv && sscanf(mv, "%d.%d", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 61)))
		return mv;
	return "2.61";
}

int catref_cmd_main(const char *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "output-dir", required_argument, NULL, 'O' },
		{ "drop-missing", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_getopt g;
	struct ctl_globals gl;
	const char *config = NULL, *catdir = NULL, *pname = NULL, *region = NULL;
	const char *output = NULL, *outdir = NULL;
	bool json = false, drop = false, openstack = false, gcp = false, azure = false;
	struct burst_config *cfg = NULL;
	const struct cfg_provider *p = NULL;
	struct catalog *cat = NULL;
	struct ec2_client *c = NULL;
	struct ec2_instance_types api = { 0 };
	struct catref_table t = { 0 };
	struct catref_report rep = { 0 };
	struct catref_merge_opts mo;
	burst_err_t err;
	enum ec2_class ec;
	char in[PATH_MAX], out[PATH_MAX], sum[65];
	const char *dir, *catname;
	int ch, rc = EXIT_USAGE;
	size_t i;

	(void)verb;
	memset(&gl, 0, sizeof(gl));
	/* burstctl's global options: --config, --catalog-dir, --provider and --json are ours */
	ctl_getopt_init(&g, opts, "", CTL_G(CONFIG) | CTL_G(CATALOG_DIR) | CTL_G(PROVIDER) | CTL_G(JSON) |
			CTL_G(HELP));
	optind = 1;
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'r': region = optarg; break;
		case 'o': output = optarg; break;
		case 'O': outdir = optarg; break;
		case 'M': drop = true; break;
		case 'h': usage(stdout); return EXIT_OK;
		default:
			if (ctl_global(ch, optarg, &gl))
				break;
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	config = gl.config;
	catdir = gl.catalog_dir;
	pname = gl.provider;
	json = gl.json;
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return EXIT_USAGE;
	}
	if (!pname) {
		fprintf(stderr, "%s: give --provider NAME (an aws Provider= of burst.conf)\n", prog);
		return EXIT_USAGE;
	}
	if (output && outdir) {
		fprintf(stderr, "%s: give --output FILE or --output-dir DIR, not both\n", prog);
		return EXIT_USAGE;
	}
	if (!config)
		config = getenv("BURST_CONF") && *getenv("BURST_CONF") ? getenv("BURST_CONF") :
			access("/etc/slurm/burst.conf", R_OK) == 0 ? "/etc/slurm/burst.conf" : NULL;
	if (!config) {
		fprintf(stderr, "%s: no burst.conf: give --config FILE or set BURST_CONF (the provider's credentials and endpoint are there)\n", prog);
		return EXIT_USAGE;
	}
	cfg = config_load(config, &err);
	if (!cfg) {
		fprintf(stderr, "%s\n%s: %s has errors (fix them, then run burstctl check-config)\n", err.msg, prog, config);
		return EXIT_USAGE;
	}
	for (i = 0; i < cfg->nproviders; i++)
		if (!strcmp(cfg->providers[i].name, pname))
			p = &cfg->providers[i];
	if (!p) {
		struct strbuf sb;
		sb_init(&sb);
		for (i = 0; i < cfg->nproviders; i++)
			sb_addf(&sb, "%s%s", i ? ", " : "", cfg->providers[i].name);
		fprintf(stderr, "%s: unknown provider '%s' (%s has: %s)\n", prog, pname, config,
			sb.len ? sb.s : "none");
		sb_free(&sb);
		goto out;
	}
	if (strcmp(p->type, "aws") && strcmp(p->type, "openstack") && strcmp(p->type, "gcp") &&
	    strcmp(p->type, "azure")) {
		fprintf(stderr, "%s: provider %s is of type %s: only aws providers (from EC2's "
			"DescribeInstanceTypes), openstack ones (from Nova's flavors), gcp ones (from "
			"Compute Engine's machine types) and azure ones (from Azure's Resource SKUs) can be refreshed\n",
			prog, p->name, p->type);
		goto out;
	}
	openstack = !strcmp(p->type, "openstack");
	gcp = !strcmp(p->type, "gcp");
	azure = !strcmp(p->type, "azure");
	if (!region)
		region = p->nregions ? p->regions[0] : NULL;
	if (!region && !openstack) {
		fprintf(stderr, "%s: provider %s has no Regions=: give --region R\n", prog, p->name);
		goto out;
	}
	catname = p->catalog ? p->catalog : p->type;
	dir = catalog_default_dir(catdir ? catdir : getenv("BURST_CATALOG_DIR") && *getenv("BURST_CATALOG_DIR") ?
				  NULL : cfg->catalog_dir);
	cat = catalog_load(dir, &err);
	if (!cat) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	snprintf(in, sizeof(in), "%s/%s.csv", dir, catname);
	if (openstack && access(in, F_OK) < 0 && errno == ENOENT) {
		/* a site's first catalog of its flavors: the columns of the shipped ones */
		if (new_table(in, catname, &t, &err) < 0) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			goto out;
		}
	} else if (catref_read(in, &t, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	if (output)
		snprintf(out, sizeof(out), "%s", output);
	else if (outdir) {
		if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "%s: cannot make %s: %s\n", prog, outdir, strerror(errno));
			goto out;
		}
		snprintf(out, sizeof(out), "%s/%s.csv", outdir, catname);
	} else
		snprintf(out, sizeof(out), "%s", in);

	if (openstack) {
		struct os_client *oc = os_client_for_provider(p, region, cfg->allow_insecure_endpoint,
							      os_microversion(p->microversion), &err);
		enum os_class oc_cls;
		if (!oc) {
			fprintf(stderr, "%s: provider %s: %s\n", prog, p->name, err.msg);
			goto out;
		}
		oc_cls = os_flavors(oc, p->accelerators, p->naccelerators, &api, &err);
		os_client_free(oc);
		if (oc_cls != OS_OK) {
			fprintf(stderr, "%s: provider %s: %s%s\n", prog, p->name, err.msg,
				oc_cls == OS_AUTH ? " (check the provider's CredentialsFile=)" : "");
			goto out;
		}
		if (!api.n) {
			fprintf(stderr, "%s: provider %s: Nova lists no flavor for the project: nothing written\n",
				prog, p->name);
			goto out;
		}
		goto merge;
	}
	if (gcp) {
		if (gcp_types(p, region, cfg->allow_insecure_endpoint, &api, &err) < 0) {
			fprintf(stderr, "%s: provider %s: %s\n", prog, p->name, err.msg);
			goto out;
		}
		if (!api.n) {
			fprintf(stderr, "%s: provider %s: Compute Engine lists no machine type in a zone of %s: "
				"nothing written\n", prog, p->name, region);
			goto out;
		}
		goto merge;
	}
	if (azure) {
		if (azure_types(p, region, cfg->allow_insecure_endpoint, cat, &api, &err) < 0) {
			fprintf(stderr, "%s: provider %s: %s\n", prog, p->name, err.msg);
			goto out;
		}
		if (!api.n) {
			fprintf(stderr, "%s: provider %s: Azure lists no VM size offered in %s: nothing written\n",
				prog, p->name, region);
			goto out;
		}
		goto merge;
	}
	c = ec2_client_for_provider(region, p->endpoint, p->ca_file, p->credentials, p->profile, &err);
	if (!c) {
		fprintf(stderr, "%s: provider %s: %s\n", prog, p->name, err.msg);
		goto out;
	}
	ec = ec2_describe_instance_types(c, NULL, 0, &api, &err);
	if (ec != EC2_OK) {
		fprintf(stderr, "%s: provider %s: %s%s\n", prog, p->name, err.msg,
			ec == EC2_AUTH ? " (check the provider's credentials: CredentialsFile=/Profile=)" :
			ec == EC2_THROTTLED ? " (EC2 throttled the calls beyond the retry budget: try again later)" : "");
		goto out;
	}
	if (!api.n) {
		fprintf(stderr, "%s: provider %s: EC2 described no instance type in %s: nothing written\n",
			prog, p->name, region);
		goto out;
	}
merge:
	memset(&mo, 0, sizeof(mo));
	if (openstack) {
		mo.source = "openstack-api";
		mo.api = "Nova's flavors";
	} else if (gcp) {
		mo.source = "gcp-api";
		mo.api = "Compute Engine's machineTypes.aggregatedList";
	} else if (azure) {
		mo.source = "azure-api";
		mo.api = "Azure's Resource SKUs";
	}
	mo.drop_missing = drop;
	mo.provider = p->name;
	mo.region = region ? region : "(the credentials')";
	if (catref_merge(&t, &api, cat, &mo, &rep, &err) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, in, err.msg);
		goto out;
	}
	if (catref_write(out, &t, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	if (outdir) {
		/* the prices beside it, so that DIR is a whole catalog of the provider */
		char psrc[PATH_MAX + 16], pdst[PATH_MAX + 16];
		snprintf(psrc, sizeof(psrc), "%s/%s-prices.csv", dir, catname);
		snprintf(pdst, sizeof(pdst), "%s/%s-prices.csv", outdir, catname);
		if (access(psrc, R_OK) == 0 && strcmp(psrc, pdst) && copy_file(psrc, pdst, &err) < 0) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			goto out;
		}
	}
	sha256_file(out, sum);
	print_report(&rep, out, sum, t.nrows, json, openstack ? "Nova" : gcp ? "Compute Engine" : azure ? "Azure" : "EC2");
	rc = EXIT_OK;
out:
	catref_report_free(&rep);
	catref_table_free(&t);
	ec2_instance_types_free(&api);
	ec2_client_free(c);
	catalog_free(cat);
	config_free(cfg);
	return rc;
}

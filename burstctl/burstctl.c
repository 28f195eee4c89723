/*
 * burstctl - look at and check slurm-burst: contracts, catalog, burst.conf.
 *
 * Exit codes: 0 ok, 1 no match, 2 usage or input error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "agentview.h"
#include "arch.h"
#include "accept_cmd.h"
#include "attest_cmd.h"
#include "bless_cmd.h"
#include "provenance_cmd.h"
#include "catref_cmd.h"
#include "verb.h"
#include "catalog.h"
#include "config.h"
#include "contract.h"
#include "keys.h"
#include "decide.h"
#include "resolver.h"
#include "slurm_compat.h"
#include "strutil.h"
#include "syncdir.h"

#define EXIT_OK 0
#define EXIT_NOMATCH 1
#define EXIT_USAGE 2
#define EXIT_WRITE 1     /* slurm-conf --output: the file could not be written */

#ifndef BURST_SYSCONFDIR
#define BURST_SYSCONFDIR "/etc"
#endif
#define DEFAULT_CONF "/etc/slurm/burst.conf"
#ifndef BURST_LIBEXECDIR
#define BURST_LIBEXECDIR "/usr/libexec/slurm-burst"
#endif

struct opts {
	const char *config;      /* --config or $BURST_CONF */
	bool config_explicit;
	const char *catalog_dir;
	const char *provider;
	bool json;
	bool explain;
	bool whole_catalog;
	bool nodes_only;         /* slurm-conf */
	const char *libexecdir;  /* slurm-conf */
	const char *output;      /* slurm-conf: the file to write, atomically */
	int limit;
	struct agentview_opts av; /* status, nodes, events */
};

static const char *prog = "burstctl";

/*
 * A verb: NAME, or NAME SECOND (catalog refresh). A verb with options of its
 * own parses them itself (own: argv without the verb's words); the others
 * take burstctl's options (cmd: their values, and the words after the verb).
 * usage: its lines of burstctl --help (NULL when another verb's say it).
 */
struct verb {
	const char *name, *second;
	int (*own)(const char *verb, int argc, char **argv);
	int (*cmd)(struct opts *o, int argc, char **argv);
	const char *usage;
};

static const struct verb *verbs(void);

static void usage(FILE *f)
{
	const struct verb *v;

	fprintf(f, "usage: burstctl [OPTIONS] VERB [ARGS]\n\nVerbs:\n");
	for (v = verbs(); v->name; v++)
		if (v->usage)
			fputs(v->usage, f);
	fprintf(f,
"\n"
"Options:\n"
"  -c, --config FILE        burst.conf (default: $BURST_CONF, else %s if present)\n"
"      --catalog-dir DIR    instance catalogs (default: $BURST_CATALOG_DIR, the source\n"
"                           tree's share/catalog when run from the build tree, else the\n"
"                           installed one)\n"
"  -e, --explain            with select/resolve: say which assumption excluded each near miss\n"
"  -p, --provider P         only instance types of provider P\n"
"      --catalog            resolve over the whole catalog, not the configured node sets\n"
"  -n, --limit N            show at most N candidates (default: all); with events\n"
"                           and status: the newest N events\n"
"      --nodes-only         with slurm-conf: only the NodeName and PartitionName lines\n"
"      --libexecdir DIR     with slurm-conf: where the power-save programs are\n"
"      --output FILE        with slurm-conf: write FILE whole (or leave it as it was), for slurm.conf's Include\n"
"  -j, --json               machine-readable output\n"
"  -h, --help               this text\n"
"  -V, --version            the version\n"
"\n"
"A contract is a list of assumptions, e.g.\n"
"  'accelerator_count>=2,accelerator_architecture>=ampere'\n"
"  'node_vcpus_count>=64 node_memory_size>=256G network_performance>=100G rank=price'\n"
"Exit codes: 0 ok, 1 no match, 2 usage or input error. See burstctl(8).\n",
		DEFAULT_CONF);
}

/* ---- shared loading ---- */

static struct burst_config *load_config(const struct opts *o, bool required)
{
	burst_err_t err;
	struct burst_config *cfg;

	if (!o->config) {
		if (required) {
			fprintf(stderr, "%s: no burst.conf: give --config FILE or set BURST_CONF\n", prog);
			exit(EXIT_USAGE);
		}
		return NULL;
	}
	cfg = config_load(o->config, &err);
	if (!cfg) {
		fprintf(stderr, "%s\n%s: %s has errors (fix them, then run burstctl check-config)\n",
			err.msg, prog, o->config);
		exit(EXIT_USAGE);
	}
	return cfg;
}

static struct catalog *load_catalog(const struct opts *o, const struct burst_config *cfg)
{
	burst_err_t err;
	const char *dir = catalog_default_dir(o->catalog_dir ? o->catalog_dir :
					      getenv("BURST_CATALOG_DIR") && *getenv("BURST_CATALOG_DIR") ? NULL :
					      cfg ? cfg->catalog_dir : NULL);
	struct catalog *cat = catalog_load(dir, &err);

	if (!cat) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		exit(EXIT_USAGE);
	}
	if (cfg && config_apply_catalog(cfg, cat, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		exit(EXIT_USAGE);
	}
	return cat;
}

static bool looks_like_expr(const char *s)
{
	return strpbrk(s, "=<>!{") != NULL;
}

/* ---- formatting ---- */

static void fmt_size(double v, char *buf, size_t len)
{
	units_format(v, UNIT_SIZE, buf, len);
}

static void fmt_accel(const struct catalog *cat, const struct cat_type *t, char *buf, size_t len)
{
	double n = t->num[KEY_ACC_COUNT];
	char mem[32];

	if (isnan(n)) {
		snprintf(buf, len, "unknown");
		return;
	}
	if (n == 0) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_size(t->num[KEY_ACC_MEMORY], mem, sizeof(mem));
	snprintf(buf, len, "%g x %s (%s, %s)", n,
		 catalog_str(cat, t->sid[KEY_ACC_MODEL]) ? catalog_str(cat, t->sid[KEY_ACC_MODEL]) : "unknown",
		 t->sid[KEY_ACC_ARCH] >= 0 ? arch_at((size_t)t->sid[KEY_ACC_ARCH])->name : "unknown arch",
		 mem);
}

static void fmt_price(double p, char *buf, size_t len)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.4f", p);
}

static const char *str_or(const struct catalog *cat, int id, const char *dflt)
{
	const char *s = id == ARCH_NONE ? "none" : catalog_str(cat, id);
	return s ? s : dflt;
}

static json_object *type_json(const struct catalog *cat, const struct cat_type *t)
{
	json_object *o = json_object_new_object();
	json_object *prices = json_object_new_array();
	size_t k;

	json_object_object_add(o, "provider", json_object_new_string(catalog_str(cat, t->provider)));
	json_object_object_add(o, "instance_type", json_object_new_string(catalog_str(cat, t->name)));
	for (k = 0; k < KEY_NFEATURES; k++) {
		const struct key_info *ki = key_info((enum key_id)k);
		if (k == KEY_PROVIDER || k == KEY_MACHINETYPE || k == KEY_REGION || k == KEY_PRICE)
			continue;
		if (ki->kind == KIND_NUMBER) {
			double v = t->num[k];
			if (isnan(v))
				json_object_object_add(o, ki->name, NULL);
			else if (ki->unit == UNIT_SIZE)
				json_object_object_add(o, ki->name, json_object_new_int64((int64_t)v));
			else
				json_object_object_add(o, ki->name, json_object_new_double(v));
		} else if (ki->kind == KIND_ARCH) {
			int id = t->sid[k];
			json_object_object_add(o, ki->name, id == CATALOG_UNKNOWN ? NULL :
				json_object_new_string(id == ARCH_NONE ? "none" : arch_at((size_t)id)->name));
		} else {
			const char *s = catalog_str(cat, t->sid[k]);
			json_object_object_add(o, ki->name, s ? json_object_new_string(s) : NULL);
		}
	}
	for (k = 0; k < t->nprices; k++) {
		json_object *p = json_object_new_object();
		json_object_object_add(p, "region", json_object_new_string(catalog_str(cat, t->prices[k].region)));
		json_object_object_add(p, "ondemand", isnan(t->prices[k].ondemand) ? NULL :
				       json_object_new_double(t->prices[k].ondemand));
		json_object_object_add(p, "spot", isnan(t->prices[k].spot) ? NULL :
				       json_object_new_double(t->prices[k].spot));
		json_object_array_add(prices, p);
	}
	json_object_object_add(o, "prices", prices);
	json_object_object_add(o, "source", json_object_new_string(t->source ? t->source : ""));
	return o;
}

static void print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* ---- verbs ---- */

static struct contract *parse_or_die(const char *text)
{
	burst_err_t err;
	struct contract *c = contract_parse(text, &err);

	if (!c) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		exit(EXIT_USAGE);
	}
	return c;
}

static void print_notes(const struct resolution *r)
{
	if (r->notes)
		fprintf(stderr, "%s: note: %s", prog, r->notes);
}

static int cmd_select(struct opts *o, int argc, char **argv)
{
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	struct contract *c;
	struct resolution res;
	burst_err_t err;
	const char *provs[2] = { o->provider, NULL };
	char *seen;
	size_t i, shown = 0;
	json_object *arr = NULL;

	if (argc != 1) {
		fprintf(stderr, "%s: select takes one contract expression (quote it)\n", prog);
		return EXIT_USAGE;
	}
	if (!looks_like_expr(argv[0])) {
		fprintf(stderr, "%s: select takes an expression such as 'accelerator_count>=1'; for a named contract use resolve %s\n",
			prog, argv[0]);
		return EXIT_USAGE;
	}
	c = parse_or_die(argv[0]);
	cfg = load_config(o, false);
	cat = load_catalog(o, cfg);
	cs = candset_from_catalog(cat, o->provider ? provs : NULL);
	resolver_run(cat, cs, c, o->explain ? RESOLVE_EXPLAIN : 0, &res, &err);
	print_notes(&res);
	seen = xcalloc(cat->ntypes ? cat->ntypes : 1, 1);
	if (o->json)
		arr = json_object_new_array();
	else if (res.n)
		printf("%-8s %-26s %6s %8s  %-34s %s\n", "PROVIDER", "INSTANCE_TYPE", "VCPUS",
		       "MEMORY", "ACCELERATORS", "$/HOUR@REGION");
	for (i = 0; i < res.n; i++) {
		const struct candidate *cd = &cs->c[res.m[i].cand];
		size_t ti = (size_t)(cd->type - cat->types);
		char mem[32], acc[96], price[32];

		if (seen[ti])
			continue;
		seen[ti] = 1;
		if (o->limit > 0 && shown >= (size_t)o->limit)
			break;
		shown++;
		if (o->json) {
			json_object_array_add(arr, type_json(cat, cd->type));
			continue;
		}
		fmt_size(cd->type->num[KEY_MEMORY], mem, sizeof(mem));
		fmt_accel(cat, cd->type, acc, sizeof(acc));
		fmt_price(res.m[i].price, price, sizeof(price));
		printf("%-8s %-26s %6g %8s  %-34s %s%s%s\n", catalog_str(cat, cd->type->provider),
		       catalog_str(cat, cd->type->name), cd->type->num[KEY_VCPUS], mem, acc, price,
		       cd->region >= 0 ? "@" : "", cd->region >= 0 ? catalog_str(cat, cd->region) : "");
	}
	if (o->json) {
		json_object *top = json_object_new_object();
		json_object_object_add(top, "contract", json_object_new_string(c->text));
		json_object_object_add(top, "catalog_version", json_object_new_string(cat->version));
		json_object_object_add(top, "catalog_sha256", json_object_new_string(cat->checksum));
		json_object_object_add(top, "types", arr);
		print_json(top);
	} else if (res.n == 0) {
		fprintf(stderr, "%s: no instance type satisfies '%s'%s\n", prog, c->text,
			o->explain ? "" : " (add --explain to see the near misses)");
	}
	if (o->explain && !o->json && res.n == 0)
		for (i = 0; i < res.nmiss; i++) {
			char name[256];
			candidate_name(cat, &cs->c[res.miss[i].cand], name, sizeof(name));
			printf("  excluded %s: %s\n", name, res.miss[i].reason);
		}
	{
		int rc = res.n ? EXIT_OK : EXIT_NOMATCH;
		free(seen);
		resolution_free(&res);
		candset_free(cs);
		contract_free(c);
		catalog_free(cat);
		config_free(cfg);
		return rc;
	}
}

static const char *nodeset_name(const struct burst_config *cfg, int ns)
{
	return cfg && ns >= 0 ? cfg->nodesets[ns].name : "-";
}

/* The provider a candidate is shown under: the configured one (two of one
 * catalog, as two AWS accounts, are told apart), else the catalog's. */
static const char *cand_provider(const struct catalog *cat, const struct candidate *cd)
{
	return cd->provider_name ? cd->provider_name : catalog_str(cat, cd->type->provider);
}

/* Is candidate cd of the listing shown (--provider, the configured
 * provider's name or its catalog's, filters the listing only)? */
static bool shown_cand(const struct opts *o, const struct catalog *cat, const struct candidate *cd)
{
	return !o->provider || str_ieq(catalog_str(cat, cd->type->provider), o->provider) ||
		(cd->provider_name && str_ieq(cd->provider_name, o->provider));
}

/*
 * With a burst.conf that has node sets, resolve takes the submission's own
 * decision path (burst_decide_ranked, as the SPANK plugin and the agent's
 * per-job ranking do), so that what it shows is what a job gets.
 */
static int cmd_resolve(struct opts *o, int argc, char **argv)
{
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs = NULL;
	struct contract *c = NULL;
	const struct cfg_contract *named = NULL;
	struct resolution own_res, *resp = &own_res;
	struct burst_decision d;
	struct burst_ranking rk;
	burst_err_t err;
	const char *provs[2] = { o->provider, NULL };
	size_t i, shown = 0;
	bool by_nodeset, decided = false;

	memset(&d, 0, sizeof(d));
	memset(&rk, 0, sizeof(rk));
	memset(&own_res, 0, sizeof(own_res));
	if (argc != 1) {
		fprintf(stderr, "%s: resolve takes one contract name or expression (quote it)\n", prog);
		return EXIT_USAGE;
	}
	if (!looks_like_expr(argv[0]) && !o->config) {
		fprintf(stderr, "%s: '%s' is not an expression, so it names a contract, but no burst.conf was found (give --config FILE)\n",
			prog, argv[0]);
		return EXIT_USAGE;
	}
	cfg = load_config(o, false);
	cat = load_catalog(o, cfg);
	by_nodeset = cfg && cfg->nnodesets && !o->whole_catalog;
	if (by_nodeset) {
		int rc = burst_decide_ranked(cfg, cat, NULL, argv[0],
					     RESOLVE_WHY | (o->explain ? RESOLVE_EXPLAIN : 0), &d, &rk, &err);
		if (rc < 0) {
			fprintf(stderr, "%s: %s\n", prog, err.msg);
			burst_ranking_free(&rk);
			catalog_free(cat);
			config_free(cfg);
			return EXIT_USAGE;
		}
		decided = rc == 0;
		resp = &rk.res;
		named = rk.named;
	} else {
		const struct contract *cc;
		if (cfg) {
			cc = burst_contract_of(cfg, argv[0], &named, &c, &err);
			if (!cc) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				catalog_free(cat);
				config_free(cfg);
				return EXIT_USAGE;
			}
		} else
			cc = c = parse_or_die(argv[0]);
		cs = candset_from_catalog(cat, o->provider ? provs : NULL);
		resolver_run(cat, cs, cc, RESOLVE_WHY | (o->explain ? RESOLVE_EXPLAIN : 0), &own_res, &err);
	}
	{
		const struct contract *cc = by_nodeset ? rk.c : named ? named->c : c;
		const struct candset *rcs = by_nodeset ? rk.cs : cs;
		const struct resolution *res = resp;
		print_notes(res);
		if (o->json) {
			json_object *top = json_object_new_object(), *arr = json_object_new_array();
			json_object *miss = json_object_new_array();
			json_object_object_add(top, "contract", json_object_new_string(cc->text));
			if (named) {
				char where[512];
				snprintf(where, sizeof(where), "%s:%d", named->where.file, named->where.line);
				json_object_object_add(top, "name", json_object_new_string(named->name));
				json_object_object_add(top, "defined_at", json_object_new_string(where));
			}
			json_object_object_add(top, "rank", json_object_new_string(cc->rank == RANK_FIT ? "fit" : "price"));
			json_object_object_add(top, "spot", json_object_new_boolean(cc->spot));
			json_object_object_add(top, "catalog_version", json_object_new_string(cat->version));
			json_object_object_add(top, "catalog_sha256", json_object_new_string(cat->checksum));
			for (i = 0; i < res->n && (o->limit <= 0 || shown < (size_t)o->limit); i++) {
				const struct candidate *cd = &rcs->c[res->m[i].cand];
				json_object *m;
				if (!shown_cand(o, cat, cd))
					continue;
				m = json_object_new_object();
				json_object_object_add(m, "rank", json_object_new_int((int)++shown));
				json_object_object_add(m, "provider", json_object_new_string(cand_provider(cat, cd)));
				json_object_object_add(m, "instance_type", json_object_new_string(catalog_str(cat, cd->type->name)));
				json_object_object_add(m, "region", cd->region >= 0 ?
						       json_object_new_string(catalog_str(cat, cd->region)) : NULL);
				json_object_object_add(m, "nodeset", cd->nodeset >= 0 ?
						       json_object_new_string(nodeset_name(cfg, cd->nodeset)) : NULL);
				json_object_object_add(m, "price_per_hour", isnan(res->m[i].price) ? NULL :
						       json_object_new_double(res->m[i].price));
				json_object_object_add(m, "excess", json_object_new_double(res->m[i].excess));
				json_object_array_add(arr, m);
			}
			json_object_object_add(top, "candidates", arr);
			json_object_object_add(top, "why", res->why ? json_object_new_string(res->why) : NULL);
			if (decided) {
				/* what a job with this contract gets at submission */
				json_object *dj = json_object_new_object();
				json_object_object_add(dj, "nodesets", json_object_new_string(d.nodesets));
				json_object_object_add(dj, "partitions", json_object_new_string(d.partitions));
				json_object_object_add(dj, "features", json_object_new_string(d.features));
				json_object_object_add(dj, "first", json_object_new_string(d.first));
				json_object_object_add(top, "decision", dj);
			}
			for (i = 0; i < res->nmiss; i++) {
				char name[256];
				json_object *m = json_object_new_object();
				candidate_name(cat, &rcs->c[res->miss[i].cand], name, sizeof(name));
				json_object_object_add(m, "candidate", json_object_new_string(name));
				json_object_object_add(m, "failed", json_object_new_int((int)res->miss[i].nfailed));
				json_object_object_add(m, "reason", json_object_new_string(res->miss[i].reason));
				json_object_array_add(miss, m);
			}
			if (o->explain)
				json_object_object_add(top, "near_misses", miss);
			else
				json_object_put(miss);
			print_json(top);
		} else {
			char buf[64];
			if (named)
				printf("contract %s (%s:%d): %s\n", named->name, named->where.file,
				       named->where.line, cc->text);
			else
				printf("contract: %s\n", cc->text);
			printf("ranked by %s%s over %s; catalog %s sha256:%.16s\n",
			       cc->rank == RANK_FIT ? "fit (least excess), then price" : "price, then least excess",
			       cc->spot ? " (spot prices)" : "",
			       by_nodeset ? "the configured node sets" : "the whole catalog",
			       cat->version, cat->checksum);
			if (res->n) {
				printf("\n%4s %-8s %-26s %-14s %-10s %9s %7s  %s\n", "RANK", "PROVIDER",
				       "INSTANCE_TYPE", "REGION", "NODESET", "$/HOUR", "EXCESS", "HARDWARE");
				for (i = 0; i < res->n && (o->limit <= 0 || shown < (size_t)o->limit); i++) {
					const struct candidate *cd = &rcs->c[res->m[i].cand];
					char mem[32], acc[96];
					if (!shown_cand(o, cat, cd))
						continue;
					fmt_size(cd->type->num[KEY_MEMORY], mem, sizeof(mem));
					fmt_accel(cat, cd->type, acc, sizeof(acc));
					fmt_price(res->m[i].price, buf, sizeof(buf));
					printf("%4zu %-8s %-26s %-14s %-10s %9s %7.1f  %g vCPU, %s, %s\n", ++shown,
					       cand_provider(cat, cd), catalog_str(cat, cd->type->name),
					       cd->region >= 0 ? catalog_str(cat, cd->region) : "-",
					       nodeset_name(cfg, cd->nodeset), buf, res->m[i].excess,
					       cd->type->num[KEY_VCPUS], mem, acc);
				}
				{
					size_t k, more = 0;
					for (k = i; k < res->n; k++)
						more += shown_cand(o, cat, &rcs->c[res->m[k].cand]);
					if (more)
						printf("     ... %zu more (drop --limit to see all)\n", more);
				}
				printf("\nchosen: %s\n", res->why);
				if (res->n > 1)
					printf("fallback order: the rest of the list, top to bottom\n");
				if (decided)
					printf("jobs with this contract go to node sets %s (partitions %s, features %s)\n",
					       d.nodesets, d.partitions, d.features);
			} else {
				printf("\nno candidate satisfies the contract%s\n",
				       o->explain ? "" : " (add --explain to see the near misses)");
			}
			if (o->explain) {
				if (res->nmiss) {
					printf("\nnear misses (failing %zu assumption%s):\n", res->miss[0].nfailed,
					       res->miss[0].nfailed == 1 ? "" : "s");
					for (i = 0; i < res->nmiss; i++) {
						char name[256];
						candidate_name(cat, &rcs->c[res->miss[i].cand], name, sizeof(name));
						printf("  %-40s excluded by %s\n", name, res->miss[i].reason);
					}
				} else
					printf("\nno near misses: every other candidate fails more assumptions or none is left\n");
			}
		}
	}
	{
		int rc = resp->n && (!o->provider || shown) ? EXIT_OK : EXIT_NOMATCH;
		resolution_free(&own_res);
		burst_ranking_free(&rk);
		burst_decision_free(&d);
		candset_free(cs);
		contract_free(c);
		catalog_free(cat);
		config_free(cfg);
		return rc;
	}
}

static int cmd_catalog(struct opts *o, int argc, char **argv)
{
	struct burst_config *cfg;
	struct catalog *cat;
	size_t i, k;
	int rc = EXIT_OK;

	if (argc < 1 || (strcmp(argv[0], "list") && strcmp(argv[0], "show"))) {
		fprintf(stderr, "%s: catalog takes 'list', 'show TYPE' or 'refresh --provider NAME'\n", prog);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "show") && argc != 2) {
		fprintf(stderr, "%s: catalog show takes one instance type (or PROVIDER:TYPE)\n", prog);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "list") && argc != 1) {
		fprintf(stderr, "%s: catalog list takes no argument (use --provider P)\n", prog);
		return EXIT_USAGE;
	}
	cfg = load_config(o, false);
	cat = load_catalog(o, cfg);
	if (!strcmp(argv[0], "list")) {
		json_object *arr = o->json ? json_object_new_array() : NULL;
		size_t shown = 0;
		if (!o->json)
			printf("%-8s %-26s %6s %8s  %-34s %s\n", "PROVIDER", "INSTANCE_TYPE", "VCPUS",
			       "MEMORY", "ACCELERATORS", "PRICES");
		for (i = 0; i < cat->ntypes; i++) {
			const struct cat_type *t = &cat->types[i];
			char mem[32], acc[96];
			if (o->provider && !str_ieq(o->provider, catalog_str(cat, t->provider)))
				continue;
			shown++;
			if (o->json) {
				json_object_array_add(arr, type_json(cat, t));
				continue;
			}
			fmt_size(t->num[KEY_MEMORY], mem, sizeof(mem));
			fmt_accel(cat, t, acc, sizeof(acc));
			printf("%-8s %-26s %6g %8s  %-34s", catalog_str(cat, t->provider),
			       catalog_str(cat, t->name), t->num[KEY_VCPUS], mem, acc);
			for (k = 0; k < t->nprices; k++)
				printf(" %s:%.4f", catalog_str(cat, t->prices[k].region), t->prices[k].ondemand);
			printf("\n");
		}
		if (o->json) {
			json_object *top = json_object_new_object();
			json_object_object_add(top, "catalog_version", json_object_new_string(cat->version));
			json_object_object_add(top, "catalog_sha256", json_object_new_string(cat->checksum));
			json_object_object_add(top, "types", arr);
			print_json(top);
		} else
			printf("%zu types; catalog %s sha256:%s (%s)\n", shown, cat->version, cat->checksum, cat->dir);
		if (o->provider && shown == 0) {
			fprintf(stderr, "%s: no instance type of provider '%s' in the catalog\n", prog, o->provider);
			rc = EXIT_NOMATCH;
		}
	} else {
		const struct cat_type *t = catalog_find_type(cat, argv[1]);
		if (!t) {
			const char **names = xcalloc(cat->ntypes + 1, sizeof(char *));
			const char *near;
			for (i = 0; i < cat->ntypes; i++)
				names[i] = catalog_str(cat, cat->types[i].name);
			near = str_suggest(strchr(argv[1], ':') ? strchr(argv[1], ':') + 1 : argv[1],
					   names, cat->ntypes);
			fprintf(stderr, "%s: no instance type '%s' in the catalog%s%s%s\n", prog, argv[1],
				near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			free(names);
			rc = EXIT_NOMATCH;
		} else if (o->json) {
			print_json(type_json(cat, t));
		} else {
			char acc[96];
			fmt_accel(cat, t, acc, sizeof(acc));
			printf("%s %s\n", catalog_str(cat, t->provider), catalog_str(cat, t->name));
			printf("  %-28s %s\n", "accelerators", acc);
			for (k = 0; k < KEY_NFEATURES; k++) {
				const struct key_info *ki = key_info((enum key_id)k);
				char buf[128];
				if (k == KEY_PROVIDER || k == KEY_MACHINETYPE || k == KEY_REGION || k == KEY_PRICE)
					continue;
				if (ki->kind == KIND_NUMBER) {
					units_format(t->num[k], ki->unit, buf, sizeof(buf));
					if (ki->unit == UNIT_NET && !isnan(t->num[k]))
						snprintf(buf, sizeof(buf), "%g Gbit/s", t->num[k]);
				} else if (ki->kind == KIND_ARCH)
					snprintf(buf, sizeof(buf), "%s", t->sid[k] == CATALOG_UNKNOWN ? "unknown" :
						 t->sid[k] == ARCH_NONE ? "none" : arch_at((size_t)t->sid[k])->name);
				else
					snprintf(buf, sizeof(buf), "%s", str_or(cat, t->sid[k], "unknown"));
				printf("  %-28s %s\n", ki->name, buf);
			}
			for (k = 0; k < t->nprices; k++) {
				char od[32], sp[32];
				fmt_price(t->prices[k].ondemand, od, sizeof(od));
				fmt_price(t->prices[k].spot, sp, sizeof(sp));
				printf("  price %-22s on-demand %s%s, spot %s%s\n",
				       catalog_str(cat, t->prices[k].region),
				       isnan(t->prices[k].ondemand) ? "unknown" : od,
				       isnan(t->prices[k].ondemand) ? "" : " USD/h",
				       isnan(t->prices[k].spot) ? "unknown" : sp,
				       isnan(t->prices[k].spot) ? "" : " USD/h");
			}
			if (!t->nprices)
				printf("  price                        unknown in every region\n");
			printf("  %-28s %s\n", "source", t->source ? t->source : "-");
			printf("  %-28s %s sha256:%.16s\n", "catalog", cat->version, cat->checksum);
		}
	}
	catalog_free(cat);
	config_free(cfg);
	return rc;
}

static int cmd_check_config(struct opts *o, int argc, char **argv)
{
	struct burst_config *cfg;
	struct catalog *cat;
	burst_err_t err;
	int problems;
	size_t i, nodes = 0;

	if (argc > 1) {
		fprintf(stderr, "%s: check-config takes at most one file\n", prog);
		return EXIT_USAGE;
	}
	if (argc == 1)
		o->config = argv[0];
	if (!o->config) {
		fprintf(stderr, "%s: no burst.conf to check: give FILE, --config FILE or set BURST_CONF\n", prog);
		return EXIT_USAGE;
	}
	cfg = config_load(o->config, &err);
	if (!cfg) {
		if (o->json) {
			json_object *top = json_object_new_object();
			json_object_object_add(top, "file", json_object_new_string(o->config));
			json_object_object_add(top, "ok", json_object_new_boolean(0));
			json_object_object_add(top, "errors", json_object_new_string(err.msg));
			print_json(top);
		}
		fprintf(stderr, "%s\n%s: %s: not valid\n", err.msg, prog, o->config);
		return EXIT_USAGE;
	}
	cat = load_catalog(o, cfg);
	problems = config_check(cfg, cat, &err);
	if (config_account_budget(cfg)) {
		/* budgets by account need slurmctld to hold accounts to
		 * associations: slurm.conf says whether it does (the file slurmctld
		 * reads when it starts, which AccountingStorageEnforce needs) */
		struct slurm_acct sa;
		burst_err_t warn;
		char path[PATH_MAX];
		const char *sc = getenv("SLURM_CONF"), *slash = strrchr(o->config, '/');

		if (!sc || !*sc) {
			snprintf(path, sizeof(path), "%.*s/slurm.conf", slash ? (int)(slash - o->config) : 1,
				 slash ? o->config : ".");
			sc = access(path, F_OK) == 0 ? path : "/etc/slurm/slurm.conf";
		}
		slurmconf_acct(sc, &sa);
		burst_err_clear(&warn);
		if (problems == 0)
			burst_err_clear(&err);
		problems += config_check_budget_accounts(cfg, &sa, &err, &warn);
		if (warn.msg[0]) {
			char *line = warn.msg, *nl;
			for (; line && *line; line = nl ? nl + 1 : NULL) {
				nl = strchr(line, '\n');
				fprintf(stderr, "%s: warning: %.*s\n", prog, nl ? (int)(nl - line) : (int)strlen(line), line);
			}
		}
	}
	for (i = 0; i < cfg->nnodesets; i++)
		nodes += cfg->nodesets[i].nodes.n;
	for (i = 0; i < cfg->nproviders && cfg->allow_insecure_endpoint; i++)
		if (cfg->providers[i].endpoint && !strncasecmp(cfg->providers[i].endpoint, "http://", 7))
			fprintf(stderr, "%s: warning: %s:%d: Provider %s talks plain HTTP to %s (AllowInsecureEndpoint=yes): for tests only, never in production\n",
				prog, cfg->providers[i].where.file, cfg->providers[i].where.line, cfg->providers[i].name,
				cfg->providers[i].endpoint);
	if (cfg->metrics_listen && strncmp(cfg->metrics_addr, "127.", 4))
		fprintf(stderr, "%s: warning: MetricsListen=%s: the agent's metrics are served unauthenticated beyond "
			"this host: make sure only your Prometheus reaches that address (127.0.0.1 keeps them local)\n",
			prog, cfg->metrics_listen);
	if (o->json) {
		json_object *top = json_object_new_object();
		json_object_object_add(top, "file", json_object_new_string(o->config));
		json_object_object_add(top, "ok", json_object_new_boolean(problems == 0));
		json_object_object_add(top, "providers", json_object_new_int((int)cfg->nproviders));
		json_object_object_add(top, "contracts", json_object_new_int((int)cfg->ncontracts));
		json_object_object_add(top, "nodesets", json_object_new_int((int)cfg->nnodesets));
		json_object_object_add(top, "nodes", json_object_new_int((int)nodes));
		json_object_object_add(top, "errors", problems ? json_object_new_string(err.msg) : NULL);
		print_json(top);
	}
	if (problems) {
		fprintf(stderr, "%s\n%s: %s: %d problem%s\n", err.msg, prog, o->config, problems,
			problems == 1 ? "" : "s");
	} else if (!o->json) {
		printf("%s: ok: %zu provider%s, %zu contract%s, %zu node set%s with %zu node%s; catalog %s\n",
		       o->config, cfg->nproviders, cfg->nproviders == 1 ? "" : "s",
		       cfg->ncontracts, cfg->ncontracts == 1 ? "" : "s",
		       cfg->nnodesets, cfg->nnodesets == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s",
		       cat->version);
	}
	catalog_free(cat);
	config_free(cfg);
	return problems ? EXIT_USAGE : EXIT_OK;
}

/*
 * slurm-conf: the slurm.conf lines for the configured node sets, sized
 * conservatively (the smallest candidate of each node set), and the
 * power-save parameters.
 */
#define REALMEMORY_FRACTION 0.94   /* the kernel keeps some of an instance's memory */

static int slurm_conf_print(struct opts *o, int argc, char **argv)
{
	struct burst_config *cfg;
	struct catalog *cat;
	struct candset *cs;
	burst_err_t err;
	bool nodes_only = o->nodes_only;
	const char *libexec = o->libexecdir ? o->libexecdir : BURST_LIBEXECDIR;
	size_t i, j, k;
	json_object *top = NULL, *sets = NULL;

	if (argc) {
		fprintf(stderr, "%s: slurm-conf takes no argument such as '%s' (options: --nodes-only, --libexecdir DIR, --output FILE)\n",
			prog, argv[0]);
		return EXIT_USAGE;
	}
	cfg = load_config(o, true);
	cat = load_catalog(o, cfg);
	cs = config_candidates(cfg, cat, &err);
	if (!cs) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		catalog_free(cat);
		config_free(cfg);
		return EXIT_USAGE;
	}
	if (o->json) {
		top = json_object_new_object();
		sets = json_object_new_array();
	} else {
		printf("# slurm.conf lines for slurm-burst, made by 'burstctl slurm-conf' from %s\n", cfg->path);
		printf("# catalog %s; node sizes are the smallest candidate of each node set\n", cat->version);
	}
	if (!nodes_only && !o->json) {
		/* a path with a blank must be quoted for slurm.conf's parser */
		const char *q = strpbrk(libexec, " \t#") ? "\"" : "";
		printf("ResumeProgram=%s%s/burst-resume%s\n", q, libexec, q);
		printf("SuspendProgram=%s%s/burst-suspend%s\n", q, libexec, q);
		printf("ResumeFailProgram=%s%s/burst-resume-fail%s\n", q, libexec, q);
		printf("# starts batch jobs the moment their burst nodes are up; runs burst.conf's\n"
		       "# PrologSlurmctld= (the site's own) first\n");
		printf("PrologSlurmctld=%s%s/burst-prolog-slurmctld%s\n", q, libexec, q);
		printf("ResumeTimeout=600\nSuspendTimeout=120\nSuspendTime=300\n");
		printf("ResumeRate=0\nSuspendRate=0\n");
		/* only what this build's Slurm release accepts (lib/core/slurm_compat.h) */
		printf("# for Slurm %s, the release this burstctl was built for\n", BURST_SLURM_VERSION);
#if BURST_SLURM_HAS_CLOUD_REG_ADDRS
		printf("CommunicationParameters=NoAddrCache\n");
		printf("SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs\n");
#else
		printf("SlurmctldParameters=idle_on_node_suspend\n");
#endif
#if BURST_SLURM_NEEDS_PRIVATEDATA_CLOUD
		printf("PrivateData=cloud\n");
#endif
		printf("TreeWidth=65533\nJobSubmitPlugins=lua\n");
	}
	for (i = 0; i < cfg->nnodesets; i++) {
		const struct cfg_nodeset *ns = &cfg->nodesets[i];
		double cpus = INFINITY, mem = INFINITY;
		struct strbuf feat;

		for (j = 0; j < cs->n; j++) {
			const struct cat_type *t = cs->c[j].type;
			if (cs->c[j].nodeset != (int)i)
				continue;
			if (!isnan(t->num[KEY_VCPUS]) && t->num[KEY_VCPUS] < cpus)
				cpus = t->num[KEY_VCPUS];
			if (!isnan(t->num[KEY_MEMORY]) && t->num[KEY_MEMORY] < mem)
				mem = t->num[KEY_MEMORY];
		}
		sb_init(&feat);
		sb_addf(&feat, "burst,%s", ns->name);
		/* the contracts this node set can serve */
		for (k = 0; k < cfg->ncontracts; k++) {
			struct resolution res;
			struct candset sub;
			memset(&sub, 0, sizeof(sub));
			for (j = 0; j < cs->n; j++)
				if (cs->c[j].nodeset == (int)i)
					candset_add(&sub, cs->c[j].type, cs->c[j].region, cs->c[j].ondemand,
						    cs->c[j].spot, cs->c[j].nodeset);
			candset_sort(cat, &sub);
			resolver_run(cat, &sub, cfg->contracts[k].c, 0, &res, &err);
			if (res.n)
				sb_addf(&feat, ",%s", cfg->contracts[k].name);
			resolution_free(&res);
			candset_clear(&sub);
		}
		if (ns->features)
			sb_addf(&feat, ",%s", ns->features);
		if (isinf(cpus))
			cpus = 1;
		if (o->json) {
			json_object *js = json_object_new_object();
			json_object_object_add(js, "nodeset", json_object_new_string(ns->name));
			json_object_object_add(js, "nodes", json_object_new_string(ns->nodes_expr));
			json_object_object_add(js, "partition", json_object_new_string(ns->partition));
			json_object_object_add(js, "cpus", json_object_new_int((int)cpus));
			json_object_object_add(js, "real_memory_mib", isinf(mem) ? NULL :
				json_object_new_int64((int64_t)(mem / 1048576.0 * REALMEMORY_FRACTION)));
			json_object_object_add(js, "features", json_object_new_string(feat.s));
			json_object_array_add(sets, js);
		} else {
			printf("NodeName=%s CPUs=%.0f", ns->nodes_expr, cpus);
			if (!isinf(mem))
				printf(" RealMemory=%.0f", floor(mem / 1048576.0 * REALMEMORY_FRACTION));
			if (ns->weight)
				printf(" Weight=%d", ns->weight);
			printf(" Features=%s State=CLOUD\n", feat.s);
		}
		sb_free(&feat);
	}
	/* partitions: each with the node sets that name it, in file order */
	for (i = 0; i < cfg->nnodesets && !o->json; i++) {
		struct strbuf nodes;
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->nodesets[j].partition, cfg->nodesets[i].partition))
				break;
		if (j < i)
			continue;
		sb_init(&nodes);
		for (j = i; j < cfg->nnodesets; j++)
			if (!strcmp(cfg->nodesets[j].partition, cfg->nodesets[i].partition))
				sb_addf(&nodes, "%s%s", nodes.len ? "," : "", cfg->nodesets[j].nodes_expr);
		printf("PartitionName=%s Nodes=%s State=UP\n", cfg->nodesets[i].partition, nodes.s);
		sb_free(&nodes);
	}
	if (o->json) {
		json_object_object_add(top, "nodesets", sets);
		print_json(top);
	}
	candset_free(cs);
	catalog_free(cat);
	config_free(cfg);
	return EXIT_OK;
}

/*
 * slurm-conf --output FILE: the lines into a file of the same directory,
 * synced, then renamed over FILE, which slurm.conf includes: slurmctld
 * never reads half a file, and FILE is left as it was when anything fails.
 */
static int cmd_slurm_conf(struct opts *o, int argc, char **argv)
{
	struct strbuf sb;
	char *tmp;
	int fd, saved = -1, rc;

	if (!o->output)
		return slurm_conf_print(o, argc, argv);
	sb_init(&sb);
	sb_addf(&sb, "%s.XXXXXX", o->output);
	tmp = sb_take(&sb);
	if ((fd = mkstemp(tmp)) < 0) {
		fprintf(stderr, "%s: --output %s: cannot make a file in its directory: %s\n", prog, o->output, strerror(errno));
		free(tmp);
		return EXIT_WRITE;
	}
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		fprintf(stderr, "%s: --output %s: %s\n", prog, o->output, strerror(errno));
		rc = EXIT_WRITE;
		goto out;
	}
	rc = slurm_conf_print(o, argc, argv);
	if (fflush(stdout) != 0 || ferror(stdout) || fsync(STDOUT_FILENO) < 0) {
		fprintf(stderr, "%s: --output %s: cannot write %s: %s\n", prog, o->output, tmp, strerror(errno));
		if (rc == EXIT_OK)
			rc = EXIT_WRITE;
	}
	dup2(saved, STDOUT_FILENO);
	clearerr(stdout);
	if (rc == EXIT_OK && fchmod(fd, 0644) < 0) {
		fprintf(stderr, "%s: --output %s: %s\n", prog, o->output, strerror(errno));
		rc = EXIT_WRITE;
	}
	if (rc == EXIT_OK && rename(tmp, o->output) < 0) {
		fprintf(stderr, "%s: --output %s: cannot replace it: %s\n", prog, o->output, strerror(errno));
		rc = EXIT_WRITE;
	}
	if (rc == EXIT_OK) {
		(void)sync_parent_dir(o->output);   /* the rename itself, on disk */
		fprintf(stderr, "%s: wrote %s\n", prog, o->output);
	}
out:
	if (saved >= 0)
		close(saved);
	close(fd);
	if (rc != EXIT_OK)
		unlink(tmp);   /* FILE stays as it was */
	free(tmp);
	return rc;
}

static int cmd_keys(const struct opts *o)
{
	size_t i;

	if (o->json) {
		json_object *top = json_object_new_object(), *keys = json_object_new_array();
		json_object *arch = json_object_new_array();
		for (i = 0; i < KEY_COUNT; i++) {
			const struct key_info *ki = key_info((enum key_id)i);
			json_object *k = json_object_new_object();
			json_object_object_add(k, "name", json_object_new_string(ki->name));
			json_object_object_add(k, "help", json_object_new_string(ki->help));
			json_object_array_add(keys, k);
		}
		for (i = 0; i < arch_count(); i++) {
			json_object *a = json_object_new_object();
			json_object_object_add(a, "name", json_object_new_string(arch_at(i)->name));
			json_object_object_add(a, "vendor", json_object_new_string(arch_at(i)->vendor));
			json_object_object_add(a, "family", json_object_new_string(arch_at(i)->family));
			json_object_object_add(a, "rank", json_object_new_int(arch_at(i)->rank));
			json_object_array_add(arch, a);
		}
		json_object_object_add(top, "keys", keys);
		json_object_object_add(top, "architectures", arch);
		print_json(top);
		return EXIT_OK;
	}
	printf("keys:\n");
	for (i = 0; i < KEY_COUNT; i++)
		printf("  %-28s %s\n", key_info((enum key_id)i)->name, key_info((enum key_id)i)->help);
	printf("\noperators: = != < <= > >= and 'in {a,b,c}'\n");
	printf("units: sizes K M G T (binary), network in Gbit/s, prices in USD per hour\n");
	printf("\narchitectures (older to newer, comparable within a family):\n");
	for (i = 0; i < arch_count(); i++) {
		if (i == 0 || strcmp(arch_at(i)->family, arch_at(i - 1)->family))
			printf("  %-18s", arch_at(i)->family);
		printf(" %s%s", arch_at(i)->name,
		       i + 1 < arch_count() && !strcmp(arch_at(i)->family, arch_at(i + 1)->family) ? " <" : "\n");
	}
	return EXIT_OK;
}

static int cmd_keys_verb(struct opts *o, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_keys(o);
}

static int cmd_status(struct opts *o, int argc, char **argv) { return agentview_status(&o->av, argc, argv); }
static int cmd_nodes(struct opts *o, int argc, char **argv) { return agentview_nodes(&o->av, argc, argv); }
static int cmd_events(struct opts *o, int argc, char **argv) { return agentview_events(&o->av, argc, argv); }
static int cmd_cost(struct opts *o, int argc, char **argv) { return agentview_cost(&o->av, argc, argv); }
static int cmd_state(struct opts *o, int argc, char **argv) { return agentview_state(&o->av, argc, argv); }

/* The verbs, in the order burstctl --help lists them. */
static const struct verb verb_table[] = {
	{ "select", NULL, NULL, cmd_select,
	  "  select EXPR              every instance type of the catalog that satisfies EXPR\n" },
	{ "resolve", NULL, NULL, cmd_resolve,
	  "  resolve NAME|EXPR        the ranked candidates for a contract, and why the first won\n" },
	{ "catalog", NULL, NULL, cmd_catalog,
	  "  catalog list             the instance types of the catalog (--provider P to filter)\n"
	  "  catalog show TYPE        everything the catalog knows of TYPE (or PROVIDER:TYPE)\n" },
	{ "check-config", NULL, NULL, cmd_check_config,
	  "  check-config [FILE]      validate burst.conf without touching any cloud\n" },
	{ "keys", NULL, NULL, cmd_keys_verb,
	  "  keys                     the contract keys, operators and architectures\n" },
	{ "slurm-conf", NULL, NULL, cmd_slurm_conf,
	  "  slurm-conf               the slurm.conf lines for the node sets and power saving\n" },
	{ "status", NULL, NULL, cmd_status,
	  "  status                   the burst agent's node sets, active nodes, requests, events\n" },
	{ "nodes", NULL, NULL, cmd_nodes,
	  "  nodes [HOSTLIST]         one line per node of the agent's state\n" },
	{ "events", NULL, NULL, cmd_events,
	  "  events                   the agent's event log (-f/--follow, --node NODE,\n"
	  "                           --since SECONDS, -n COUNT)\n" },
	{ "cost", NULL, NULL, cmd_cost,
	  "  cost                     what burst instances cost, to each job and idle or booting\n"
	  "                           (--since T, --until T, --by job|user|account|partition|\n"
	  "                           nodeset|provider; T: 2h ago, 2026-11-01[T08:00] UTC, @EPOCH;\n"
	  "                           --budgets: each Budget= line's spending in its period)\n" },
	{ "state", NULL, NULL, cmd_state,
	  "  state backup FILE        a consistent copy of the agent's state database, taken\n"
	  "                           while the agent runs (SQLite's online backup; 0600)\n" },
	{ "catalog", "refresh", catref_cmd_main, NULL, catref_cmd_usage },
	{ "attest", NULL, attest_cmd_main, NULL, attest_cmd_usage },
	{ "attest-key", NULL, attest_cmd_main, NULL, NULL },
	{ "verify", NULL, attest_cmd_main, NULL, NULL },
	{ "accept", NULL, accept_cmd_main, NULL, accept_cmd_usage },
	{ "bless", NULL, bless_cmd_main, NULL, bless_cmd_usage },
	{ "provenance", NULL, provenance_cmd_main, NULL, provenance_cmd_usage },
	{ NULL, NULL, NULL, NULL, NULL },
};

static const struct verb *verbs(void)
{
	return verb_table;
}

/* The verb word names (next: the word after it, or NULL); a verb of two
 * words first. NULL when there is none. */
static const struct verb *find_verb(const char *word, const char *next)
{
	const struct verb *v;

	for (v = verb_table; v->name; v++)
		if (v->second && next && !strcmp(v->name, word) && !strcmp(v->second, next))
			return v;
	for (v = verb_table; v->name; v++)
		if (!v->second && !strcmp(v->name, word))
			return v;
	return NULL;
}

/* Runs a verb with options of its own, found at argv[at]: it gets argv
 * without the verb's words. */
static int run_own(const struct verb *v, int at, int argc, char **argv)
{
	int skip = v->second ? 2 : 1, ac = 0, i, rc;
	char **av = xcalloc((size_t)argc + 1, sizeof(*av));

	for (i = 0; i < argc; i++)
		if (i < at || i >= at + skip)
			av[ac++] = argv[i];
	rc = v->own(v->name, ac, av);
	free(av);
	return rc;
}

int main(int argc, char **argv)
{
	struct ctl_globals gl;
	struct ctl_getopt g;
	const struct verb *v;
	struct opts o;
	const char *verb;
	int ch, at, rc = EXIT_USAGE;

	/* the verb, found once: a verb with options of its own parses them */
	at = ctl_find_verb(argc, argv, ctl_short_valued, ctl_long_valued);
	v = at < 0 ? NULL : find_verb(argv[at], at + 1 < argc ? argv[at + 1] : NULL);
	if (v && v->own)
		return run_own(v, at, argc, argv);
	/* the others take burstctl's options, before the verb or after it */
	memset(&o, 0, sizeof(o));
	memset(&gl, 0, sizeof(gl));
	ctl_getopt_init(&g, NULL, "", ~0u);
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'n': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n <= 0 || n > 1000000) {
				fprintf(stderr, "%s: --limit takes a positive number, not '%s'\n", prog, optarg);
				goto out;
			}
			o.limit = (int)n;
			break;
		}
		case 'h': usage(stdout); rc = EXIT_OK; goto out;
		case 'V':
			printf("burstctl (slurm-burst) %s, built for Slurm %s\n", PACKAGE_VERSION, BURST_SLURM_VERSION);
			rc = EXIT_OK;
			goto out;
		default:
			if (ctl_global(ch, optarg, &gl))
				break;
			fprintf(stderr, "Try 'burstctl --help'.\n");
			goto out;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		goto out;
	}
	o.config = gl.config;
	o.config_explicit = gl.config != NULL;
	o.catalog_dir = gl.catalog_dir;
	o.explain = gl.explain;
	o.provider = gl.provider;
	o.whole_catalog = gl.catalog;
	o.nodes_only = gl.nodes_only;
	o.libexecdir = gl.libexecdir;
	o.output = gl.output;
	o.json = gl.json;
	o.av.follow = gl.follow;
	o.av.node = gl.node;
	o.av.since = gl.since;
	o.av.until = gl.until;
	o.av.by = gl.by;
	o.av.budgets = gl.budgets;
	if (!o.config) {
		const char *env = getenv("BURST_CONF");
		if (env && *env) {
			o.config = env;
			o.config_explicit = true;
		} else if (access(DEFAULT_CONF, R_OK) == 0)
			o.config = DEFAULT_CONF;
	}
	o.av.config = o.config;
	o.av.json = o.json;
	o.av.limit = o.limit;
	verb = argv[optind];
	v = find_verb(verb, optind + 1 < argc ? argv[optind + 1] : NULL);
	if (v && v->own)   /* an abbreviated option hid it from the first look */
		rc = run_own(v, optind, argc, argv);
	else if (v)
		rc = v->cmd(&o, argc - optind - 1, argv + optind + 1);
	else {
		const char *names[sizeof(verb_table) / sizeof(verb_table[0])], *near;
		size_t n = 0;
		for (v = verb_table; v->name; v++)
			if (!v->second)
				names[n++] = v->name;
		names[n] = NULL;
		near = str_suggest(verb, names, 0);
		fprintf(stderr, "%s: unknown verb '%s'%s%s%s (see burstctl --help)\n", prog, verb,
			near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
out:
	return rc;
}

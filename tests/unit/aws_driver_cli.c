/*
 * aws_driver_cli.c - drives one of the agent's cloud provider drivers
 * (burst-agent/drivers/driver_aws.c, driver_openstack.c, driver_gcp.c: the
 * Type= of PROVIDER) from the shell, for tests/integration/test_aws_driver.sh,
 * test_openstack_driver.sh and test_gcp_driver.sh.
 *
 *   aws_driver_cli CONF PROVIDER launch --type T [--region R] [--nodeset NS]
 *                  [--join ADDR:PORT] NODE:ATTEMPT:TOKEN...
 *       prints one line per node: NODE INSTANCE|- CLASS [ERROR]
 *       (SHOW_ADDRESS set: NODE INSTANCE ok ADDRESS|- for a launched node)
 *       and exits 0 (the outcomes are in the lines)
 *   aws_driver_cli CONF PROVIDER terminate NODE INSTANCE
 *       prints "ok" (exit 0), or CLASS MESSAGE (exit 1)
 *   aws_driver_cli CONF PROVIDER stop|start NODE INSTANCE
 *       the same for stop and start (a warm pool's instance); "none" (exit 1)
 *       when the driver has no such verb
 *   aws_driver_cli CONF PROVIDER exists NODE INSTANCE
 *       prints 1, 0 or -1
 *   aws_driver_cli CONF PROVIDER list
 *       prints one line per instance: ID CLUSTER NODE ATTEMPT STATE (exit 0),
 *       or CLASS MESSAGE (exit 1)
 *   aws_driver_cli CONF PROVIDER list-steps [AFTER launch ARGS... |
 *                  AFTER terminate NODE INSTANCE]
 *       the same listing one page at a time (list_step, as the agent's
 *       reconciler makes it), then a line "steps N"; with AFTER, the launch
 *       or terminate (as above, its lines first) is made on the same driver
 *       after step AFTER, between two pages
 *   aws_driver_cli CONF PROVIDER console NODE INSTANCE
 *       prints "where HOW" and the end of the instance's console
 *   aws_driver_cli CONF PROVIDER ended NODE INSTANCE
 *       prints 1, 0 or -1
 * With an openstack or gcp provider, the driver's request counters go to stderr
 * at the end: "api_calls N tokens N" (azure: "api_calls N throttled N
 * tokens N"); after a launch, "address NODE ADDR" for each node whose
 * address the driver found (on stderr).
 * Exits 100 on bad usage, 2 when the configuration or the driver fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../burst-agent/provider.h"
#include "config.h"
#include "strutil.h"

static int usage(const char *why)
{
	fprintf(stderr, "aws_driver_cli: %s (see tests/unit/aws_driver_cli.c)\n", why);
	return 100;
}

static int do_launch(const struct provider_ops *ops, struct provider *p, const char *cluster,
		     const char *pname, const char *join, int argc, char **argv)
{
	struct prov_batch b;
	struct prov_node *nodes = xcalloc((size_t)argc + 1, sizeof(*nodes));
	char **own = xcalloc((size_t)argc + 1, sizeof(char *));
	size_t n = 0, i, nown = 0;
	int k;

	memset(&b, 0, sizeof(b));
	b.cluster = cluster;
	b.provider = pname;
	b.nodeset = "ns";
	b.join_addr = join;
	b.munge_socket = "/run/munge/munge.socket.2";
	b.slurm_conf = "/etc/slurm/slurm.conf";
	for (k = 0; k < argc; k++) {
		if (!strcmp(argv[k], "--type") && k + 1 < argc)
			b.instance_type = argv[++k];
		else if (!strcmp(argv[k], "--region") && k + 1 < argc)
			b.region = argv[++k];
		else if (!strcmp(argv[k], "--nodeset") && k + 1 < argc)
			b.nodeset = argv[++k];
		else if (!strcmp(argv[k], "--join") && k + 1 < argc)
			b.join_addr = argv[++k];
		else if (!strcmp(argv[k], "--acceptance") && k + 1 < argc)
			b.acceptance = argv[++k];
		else {
			char *s = xstrdup(argv[k]), *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			own[nown++] = s;
			if (!c1 || !c2) {
				for (i = 0; i < nown; i++)
					free(own[i]);
				free(own);
				free(nodes);
				return usage("a node is NODE:ATTEMPT:TOKEN");
			}
			*c1 = *c2 = '\0';
			nodes[n].node = s;
			nodes[n].attempt = atoi(c1 + 1);
			nodes[n].token = c2 + 1;
			n++;
		}
	}
	b.nodes = nodes;
	b.n = n;
	ops->launch(p, &b);
	for (i = 0; i < n; i++) {
		if (getenv("SHOW_ADDRESS") && !nodes[i].cls)
			printf("%s %s ok %s\n", nodes[i].node, nodes[i].instance[0] ? nodes[i].instance : "-",
			       nodes[i].address[0] ? nodes[i].address : "-");
		else
			printf("%s %s %s%s%s\n", nodes[i].node, nodes[i].instance[0] ? nodes[i].instance : "-",
			       prov_class_name(nodes[i].cls), nodes[i].cls ? " " : "", nodes[i].cls ? nodes[i].error : "");
	}
	for (i = 0; i < n; i++)   /* Slurm's NodeAddr as the driver found it */
		if (nodes[i].address[0])
			fprintf(stderr, "address %s %s\n", nodes[i].node, nodes[i].address);
	for (i = 0; i < nown; i++)
		free(own[i]);
	free(own);
	free(nodes);
	return 0;
}

int main(int argc, char **argv)
{
	struct burst_config *cfg;
	const struct cfg_provider *pc = NULL;
	const struct provider_ops *ops;
	struct provider *p;
	burst_err_t err;
	enum prov_class cls;
	int rc = 2;
	size_t i;

	if (argc < 4)
		return usage("usage: CONF PROVIDER launch|terminate|exists|list ...");
	cfg = config_load(argv[1], &err);
	if (!cfg) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	for (i = 0; i < cfg->nproviders; i++)
		if (!strcmp(cfg->providers[i].name, argv[2]))
			pc = &cfg->providers[i];
	ops = pc ? provider_ops_find(pc->type) : NULL;
	if (!ops) {
		fprintf(stderr, "no provider %s with a driver\n", argv[2]);
		config_free(cfg);
		return 2;
	}
	p = ops->init(pc, cfg, &err);
	if (!p) {
		fprintf(stderr, "%s\n", err.msg);
		config_free(cfg);
		return 2;
	}
	if (!strcmp(argv[3], "launch")) {
		/* where the agent would tell the instances to report (its
		 * JoinAddress= and JoinListen= rules), unless --join says */
		char jbuf[300];
		const char *join = config_join_address(cfg, pc, jbuf, sizeof(jbuf));
		rc = do_launch(ops, p, cfg->cluster_name, pc->name, join ? join : "127.0.0.1:6830",
			       argc - 4, argv + 4);
	} else if ((!strcmp(argv[3], "stop") || !strcmp(argv[3], "start")) && argc == 6) {
		int (*verb)(struct provider *, const char *, const char *, enum prov_class *, burst_err_t *) =
			!strcmp(argv[3], "stop") ? ops->stop : ops->start;
		rc = 1;
		if (!verb)
			printf("none\n");
		else if (verb(p, argv[4], argv[5], &cls, &err) == 0) {
			printf("ok\n");
			rc = 0;
		} else
			printf("%s %s\n", prov_class_name(cls), err.msg);
	} else if (!strcmp(argv[3], "terminate") && argc == 6) {
		if (ops->terminate(p, argv[4], argv[5], &cls, &err) == 0) {
			printf("ok\n");
			rc = 0;
		} else {
			printf("%s %s\n", prov_class_name(cls), err.msg);
			rc = 1;
		}
	} else if (!strcmp(argv[3], "console") && argc == 6 && ops->console) {
		char buf[4096], where[512];
		if (ops->console(p, argv[4], argv[5], buf, sizeof(buf), where, sizeof(where), &cls, &err) == 0) {
			printf("where %s\n%s", where, buf);
			rc = 0;
		} else {
			printf("%s %s\n", prov_class_name(cls), err.msg);
			rc = 1;
		}
	} else if (!strcmp(argv[3], "ended") && argc == 6 && ops->ended) {
		printf("%d\n", ops->ended(p, argv[4], argv[5]));
		rc = 0;
	} else if (!strcmp(argv[3], "exists") && argc == 6) {
		printf("%d\n", ops->exists(p, argv[4], argv[5]));
		rc = 0;
	} else if (!strcmp(argv[3], "list") && argc == 4) {
		struct prov_list l = { 0 };
		if (ops->list(p, &l, &cls, &err) == 0) {
			for (i = 0; i < l.n; i++)
				printf("%s %s %s %d %s\n", l.v[i].id, l.v[i].cluster[0] ? l.v[i].cluster : "-",
				       l.v[i].node[0] ? l.v[i].node : "-", l.v[i].attempt, l.v[i].state);
			rc = 0;
		} else {
			printf("%s %s\n", prov_class_name(cls), err.msg);
			rc = 1;
		}
		prov_list_free(&l);
	} else if (!strcmp(argv[3], "list-steps") && ops->list_step &&
		   (argc == 4 || (argc >= 7 && !strcmp(argv[5], "launch")) ||
		    (argc == 8 && !strcmp(argv[5], "terminate")))) {
		struct prov_list l = { 0 };
		struct prov_list_cursor cur = { 0 };
		unsigned after = argc > 4 ? (unsigned)atoi(argv[4]) : 0;
		int r;
		while ((r = ops->list_step(p, &cur, &l, &cls, &err)) == 1) {
			if (++cur.steps != after)
				continue;
			if (!strcmp(argv[5], "launch")) {
				char jbuf[300];
				const char *join = config_join_address(cfg, pc, jbuf, sizeof(jbuf));
				do_launch(ops, p, cfg->cluster_name, pc->name, join ? join : "127.0.0.1:6830",
					  argc - 6, argv + 6);
			} else {
				enum prov_class tc;
				burst_err_t te;
				if (ops->terminate(p, argv[6], argv[7], &tc, &te) == 0)
					printf("ok\n");
				else
					printf("%s %s\n", prov_class_name(tc), te.msg);
			}
		}
		if (r == 0) {
			cur.steps++;
			for (i = 0; i < l.n; i++)
				printf("%s %s %s %d %s\n", l.v[i].id, l.v[i].cluster[0] ? l.v[i].cluster : "-",
				       l.v[i].node[0] ? l.v[i].node : "-", l.v[i].attempt, l.v[i].state);
			printf("steps %u\n", cur.steps);
			rc = 0;
		} else {
			printf("%s %s\n", prov_class_name(cls), err.msg);
			rc = 1;
		}
		prov_list_free(&l);
		prov_list_cursor_free(&cur);
	} else
		rc = usage("unknown command");
	if (!strcmp(pc->type, "openstack") || !strcmp(pc->type, "gcp")) {
		unsigned calls, tokens;
		if (!strcmp(pc->type, "gcp"))
			gcp_provider_stats(p, &calls, &tokens);
		else
			openstack_provider_stats(p, &calls, &tokens);
		fprintf(stderr, "api_calls %u tokens %u\n", calls, tokens);
		if (!strcmp(pc->type, "gcp"))
			fprintf(stderr, "write_waits %u\n", gcp_provider_write_waits(p));
	}
	if (!strcmp(pc->type, "azure")) {
		unsigned calls, throttled, tokens;
		azure_provider_stats(p, &calls, &throttled, &tokens);
		fprintf(stderr, "api_calls %u throttled %u tokens %u\n", calls, throttled, tokens);
	}
	ops->fini(p);
	config_free(cfg);
	return rc;
}

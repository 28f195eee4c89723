/*
 * health.c - `burst-node health`: is this node still what was admitted?
 *
 *   burst-node health [--node NAME] [--record FILE] [--sysroot DIR]
 *       [--state-dir DIR] [--config FILE] [--pci-table FILE] [--dry-run]
 *
 * Run by slurmd as HealthCheckProgram. Collects the node's provenance record
 * again and compares it with the one it was admitted with
 * (StateDir/nodes/NODE/provenance.json, written at join): a changed kernel
 * (release or build-id), a missing accelerator, memory shrunk beyond the node
 * set's MemoryTolerance, a driver module whose version changed or that is
 * gone; and holds the drivers now against the blessed versions
 * (BlessedDrivers=, StateDir/blessed-drivers). A node that changed is drained with a reason
 * starting "burst: health: "; a node that matches again is resumed, but only
 * when that is the reason it is drained for: a node someone else drained
 * stays drained. --dry-run prints the verdict and leaves Slurm alone.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "config.h"
#include "node_health.h"
#include "policy.h"
#include "provenance.h"
#include "slurm_compat.h"
#include "strutil.h"

#define REASON_PREFIX "burst: health: "
#define MAX_REASON 480

static const char usage[] =
"usage: burst-node health [--node NAME] [--record FILE] [--sysroot DIR]\n"
"         [--state-dir DIR] [--config FILE] [--pci-table FILE] [--dry-run]\n";

/* The Slurm node's drain state and reason; 0, or -1 after a message. */
static int node_reason(const char *node, bool *drained, char *reason, size_t len)
{
	node_info_msg_t *msg = NULL;
	int rc = -1;

	if (slurm_load_node_single(&msg, (char *)node, SHOW_ALL) != SLURM_SUCCESS) {
		fprintf(stderr, "burst-node health: %s: cannot read the node from slurmctld: %s\n", node,
			slurm_strerror(burst_slurm_errno()));
		return -1;
	}
	if (!msg || msg->record_count < 1 || !msg->node_array[0].name) {
		fprintf(stderr, "burst-node health: %s: slurmctld does not know this node\n", node);
		goto out;
	}
	*drained = (msg->node_array[0].node_state & NODE_STATE_DRAIN) != 0;
	snprintf(reason, len, "%s", msg->node_array[0].reason ? msg->node_array[0].reason : "");
	rc = 0;
out:
	slurm_free_node_info_msg(msg);
	return rc;
}

static int update_node(const char *node, uint32_t state, const char *reason)
{
	update_node_msg_t m;

	slurm_init_update_node_msg(&m);
	m.node_names = (char *)node;
	m.node_state = state;
	if (reason) {
		m.reason = (char *)reason;
		m.reason_uid = getuid();
	}
	if (slurm_update_node(&m) != SLURM_SUCCESS) {
		fprintf(stderr, "burst-node health: %s: cannot %s the node: %s\n", node,
			state == NODE_RESUME ? "resume" : "drain", slurm_strerror(burst_slurm_errno()));
		return -1;
	}
	return 0;
}

/* The node set of node in cfg, or NULL. */
static const struct cfg_nodeset *nodeset_of(const struct burst_config *cfg, const char *node)
{
	size_t i;

	for (i = 0; cfg && i < cfg->nnodesets; i++)
		if (hostlist_find(&cfg->nodesets[i].nodes, node) >= 0)
			return &cfg->nodesets[i];
	return NULL;
}

int node_health(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "record", required_argument, NULL, 'r' },
		{ "sysroot", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'c' },
		{ "pci-table", required_argument, NULL, 'T' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *node = NULL, *record = NULL, *sysroot = "/", *sdir = NULL, *config = NULL, *state_dir;
	struct prov_opts po;
	struct burst_config *cfg = NULL;
	struct policy pol;
	json_object *admitted = NULL, *now = NULL;
	char host[256], path[PATH_MAX], why[2048], reason[MAX_REASON + 1], cur[1024];
	bool dry_run = false, drained = false;
	burst_err_t err;
	int ch, rc = 3, cmp;

	memset(&po, 0, sizeof(po));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': node = optarg; break;
		case 'r': record = optarg; break;
		case 's': sysroot = optarg; break;
		case 'S': sdir = optarg; break;
		case 'c': config = optarg; break;
		case 'T': po.pci_table = optarg; break;
		case 'd': dry_run = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (!node) {
		if (gethostname(host, sizeof(host)) < 0) {
			fprintf(stderr, "burst-node health: cannot get the host name: %s; give --node\n", strerror(errno));
			return 2;
		}
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, ".")] = '\0';
		node = host;
	}
	/* burst.conf, when the node has one, for StateDir and the node set's tolerance;
	 * a broken one is no reason to drain a node */
	config = config ? config : config_default_path(NULL);
	if (access(config, R_OK) == 0) {
		cfg = config_load(config, &err);
		if (!cfg)
			fprintf(stderr, "burst-node health: %s: %s has errors; using the defaults:\n%s\n", node,
				config, err.msg);
	}
	if (cfg)
		config_policy(cfg, nodeset_of(cfg, node), &pol);
	else
		policy_init(&pol);
	state_dir = sdir ? sdir : cfg ? cfg->state_dir : BURST_DEFAULT_STATE_DIR;
	if (!record) {
		snprintf(path, sizeof(path), "%s/nodes/%s/provenance.json", state_dir, node);
		record = path;
	}
	if (access(record, F_OK) < 0 && errno == ENOENT) {
		printf("%s: no admitted record (%s): not a burst node, nothing to check\n", node, record);
		rc = 0;
		goto out;
	}
	admitted = json_object_from_file(record);
	if (!admitted) {
		fprintf(stderr, "burst-node health: %s: cannot read the admitted record %s: %s\n", node, record,
			json_util_get_last_err() ? json_util_get_last_err() : "not JSON");
		goto out;
	}
	burst_err_clear(&err);
	if (provenance_collect(sysroot, &po, &now, &err) < 0) {
		fprintf(stderr, "burst-node health: %s: cannot collect the node's record: %s\n", node, err.msg);
		goto out;
	}
	cmp = policy_compare(admitted, now, pol.memory_tolerance, why, sizeof(why));
	if (cmp < 0) {
		fprintf(stderr, "burst-node health: %s: %s (%s)\n", node, why, record);
		goto out;
	}
	/* the drivers now against the blessed versions (burst.conf and
	 * StateDir/blessed-drivers): a driver updated in place, or no longer
	 * blessed since the node joined */
	{
		char dwhy[1024];

		if (policy_load_state(&pol, state_dir, &err) < 0)
			fprintf(stderr, "burst-node health: %s: %s (it blesses nothing more)\n", node, err.msg);
		if (policy_check_drivers(&pol, now, dwhy, sizeof(dwhy)) == 1) {
			size_t used = strlen(why);

			snprintf(why + used, sizeof(why) - used, "%s%s", cmp ? "; " : "", dwhy);
			cmp = 1;
		}
		policy_free_state(&pol);
	}
	/* Slurm keeps the reason whole; a shorter one reads better in sinfo -R */
	snprintf(reason, sizeof(reason), "%s%.*s", REASON_PREFIX,
		 (int)(sizeof(reason) - sizeof(REASON_PREFIX)), why);
	if (cmp == 0)
		printf("%s: healthy: matches its admitted record %s\n", node, record);
	else
		printf("%s: unhealthy: %s\n", node, why);
	if (dry_run) {
		rc = cmp;
		goto out;
	}
	slurm_init(NULL);
	if (node_reason(node, &drained, cur, sizeof(cur)) < 0)
		goto out;
	if (cmp) {
		if (drained && strncmp(cur, REASON_PREFIX, strlen(REASON_PREFIX))) {
			printf("%s: already drained by someone else (%s); reason kept\n", node, cur);
			rc = 1;
		} else if (drained && !strcmp(cur, reason)) {
			rc = 1;
		} else if (update_node(node, NODE_STATE_DRAIN, reason) == 0) {
			printf("%s: drained: %s\n", node, reason);
			rc = 1;
		}
	} else {
		if (drained && !strncmp(cur, REASON_PREFIX, strlen(REASON_PREFIX))) {
			if (update_node(node, NODE_RESUME, NULL) == 0) {
				printf("%s: resumed (was drained: %s)\n", node, cur);
				rc = 0;
			}
		} else
			rc = 0;
	}
	slurm_fini();
out:
	json_object_put(admitted);
	json_object_put(now);
	config_free(cfg);
	return rc;
}

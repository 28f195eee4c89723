/*
 * provenance.c - `burst-node provenance`: print this node's provenance
 * record (lib/admit/provenance.h) as canonical JSON, or only its id.
 *
 *   burst-node provenance [--sysroot DIR] [--node NAME] [--instance ID]
 *       [--instance-type T] [--provider P] [--region R] [--image I]
 *       [--catalog-version V] [--pci-table FILE] [--pretty | --id]
 *   burst-node provenance --admitted [--node NAME] [--record FILE]
 *       [--state-dir DIR] [--config FILE] [--pretty | --id]
 *
 * With --admitted: the record the node was admitted with, as burst-node
 * join saved it (StateDir/nodes/NODE/provenance.json), not collected anew:
 * its id is the provenance id of the agent's admission (CLOUD_PROVENANCE_ID
 * in a job's tasks, checked when set), which burstctl bless --from-report
 * looks up in agent.db. The options of collecting (--sysroot, ...) do not
 * apply to it and are ignored.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "node_provenance.h"
#include "provenance.h"

static const char usage[] =
"usage: burst-node provenance [--sysroot DIR] [--node NAME] [--instance ID]\n"
"         [--instance-type T] [--provider P] [--region R] [--image I]\n"
"         [--catalog-version V] [--pci-table FILE] [--pretty | --id]\n"
"       burst-node provenance --admitted [--node NAME] [--record FILE]\n"
"         [--state-dir DIR] [--config FILE] [--pretty | --id]\n";

/*
 * The record the node was admitted with (--admitted): record, else
 * StateDir/nodes/NODE/provenance.json, StateDir from --state-dir, else
 * burst.conf's (config, else the default path), else the default. A new
 * object, or NULL after a message.
 */
static json_object *admitted_record(const char *node, const char *record, const char *sdir, const char *config)
{
	char host[256], path[PATH_MAX];
	struct burst_config *cfg = NULL;
	const char *want = getenv("CLOUD_PROVENANCE_ID");
	json_object *rec;
	burst_err_t err;

	if (!node) {
		if (gethostname(host, sizeof(host)) < 0) {
			fprintf(stderr, "burst-node provenance: cannot get the host name: %s; give --node\n", strerror(errno));
			return NULL;
		}
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, ".")] = '\0';
		node = host;
	}
	if (!record) {
		if (!sdir) {
			config = config ? config : config_default_path(NULL);
			if (access(config, R_OK) == 0 && !(cfg = config_load(config, &err))) {
				fprintf(stderr, "burst-node provenance: %s has errors (give --state-dir or --record):\n%s\n",
					config, err.msg);
				return NULL;
			}
		}
		snprintf(path, sizeof(path), "%s/nodes/%s/provenance.json",
			 sdir ? sdir : cfg ? cfg->state_dir : BURST_DEFAULT_STATE_DIR, node);
		config_free(cfg);
		record = path;
	}
	rec = json_object_from_file(record);
	if (!rec || !json_object_is_type(rec, json_type_object)) {
		fprintf(stderr, "burst-node provenance: %s: cannot read the record the node was admitted with, %s: %s "
			"(written by burst-node join when the node joins)\n", node, record,
			rec ? "not a JSON object" : json_util_get_last_err() ? json_util_get_last_err() : "not JSON");
		json_object_put(rec);
		return NULL;
	}
	if (want && *want) {
		/* in a job's task: the admission the SPANK plugin names */
		char *id = provenance_id(rec);
		if (strcmp(id, want)) {
			fprintf(stderr, "burst-node provenance: %s: %s is not the record of this node's admission: its id is "
				"%s, the admission's (CLOUD_PROVENANCE_ID) %s\n", node, record, id, want);
			free(id);
			json_object_put(rec);
			return NULL;
		}
		free(id);
	}
	return rec;
}

int node_provenance(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sysroot", required_argument, NULL, 's' },
		{ "node", required_argument, NULL, 'n' },
		{ "instance", required_argument, NULL, 'i' },
		{ "instance-type", required_argument, NULL, 't' },
		{ "provider", required_argument, NULL, 'p' },
		{ "region", required_argument, NULL, 'r' },
		{ "image", required_argument, NULL, 'm' },
		{ "catalog-version", required_argument, NULL, 'c' },
		{ "pci-table", required_argument, NULL, 'T' },
		{ "pretty", no_argument, NULL, 'P' },
		{ "id", no_argument, NULL, 'I' },
		{ "admitted", no_argument, NULL, 'A' },
		{ "record", required_argument, NULL, 'R' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct prov_opts o;
	const char *sysroot = "/";
	const char *record = NULL, *sdir = NULL, *config = NULL;
	bool pretty = false, only_id = false, admitted = false;
	json_object *rec = NULL;
	burst_err_t err;
	char *s;
	int ch;

	memset(&o, 0, sizeof(o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': sysroot = optarg; break;
		case 'n': o.node = optarg; break;
		case 'i': o.instance_id = optarg; break;
		case 't': o.instance_type = optarg; break;
		case 'p': o.provider = optarg; break;
		case 'r': o.region = optarg; break;
		case 'm': o.image = optarg; break;
		case 'c': o.catalog_version = optarg; break;
		case 'T': o.pci_table = optarg; break;
		case 'P': pretty = true; break;
		case 'I': only_id = true; break;
		case 'A': admitted = true; break;
		case 'R': record = optarg; break;
		case 'S': sdir = optarg; break;
		case 'C': config = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc || (pretty && only_id) || (!admitted && (record || sdir || config))) {
		fputs(usage, stderr);
		return 2;
	}
	burst_err_clear(&err);
	if (admitted) {
		rec = admitted_record(o.node, record, sdir, config);
		if (!rec)
			return 1;
	} else if (provenance_collect(sysroot, &o, &rec, &err) < 0) {
		fprintf(stderr, "burst-node provenance: %s\n", err.msg);
		return 1;
	}
	s = only_id ? provenance_id(rec) : provenance_serialize(rec, pretty);
	printf("%s\n", s);
	free(s);
	json_object_put(rec);
	return fflush(stdout) == 0 ? 0 : 1;
}

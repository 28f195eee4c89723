/*
 * provenance.c - `burst-node provenance`: print this node's provenance
 * record (lib/admit/provenance.h) as canonical JSON, or only its id.
 *
 *   burst-node provenance [--sysroot DIR] [--node NAME] [--instance ID]
 *       [--instance-type T] [--provider P] [--region R] [--image I]
 *       [--catalog-version V] [--pci-table FILE] [--pretty | --id]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_provenance.h"
#include "provenance.h"

static const char usage[] =
"usage: burst-node provenance [--sysroot DIR] [--node NAME] [--instance ID]\n"
"         [--instance-type T] [--provider P] [--region R] [--image I]\n"
"         [--catalog-version V] [--pci-table FILE] [--pretty | --id]\n";

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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct prov_opts o;
	const char *sysroot = "/";
	bool pretty = false, only_id = false;
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
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc || (pretty && only_id)) {
		fputs(usage, stderr);
		return 2;
	}
	burst_err_clear(&err);
	if (provenance_collect(sysroot, &o, &rec, &err) < 0) {
		fprintf(stderr, "burst-node provenance: %s\n", err.msg);
		return 1;
	}
	s = only_id ? provenance_id(rec) : provenance_serialize(rec, pretty);
	printf("%s\n", s);
	free(s);
	json_object_put(rec);
	return fflush(stdout) == 0 ? 0 : 1;
}

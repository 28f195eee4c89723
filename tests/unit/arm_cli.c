/*
 * arm_cli.c - drives lib/cloud/arm.c, azure_auth.c and azure_vm.c from the
 * shell, for tests/integration/test_azure_wire.sh. Prints one line of
 * KEY=VALUE words; exits with the class of the answer (az_class: 0 = ok),
 * 100 on bad usage.
 *
 *   arm_cli --endpoint URL --sub S --rg RG [--creds FILE | --managed]
 *           [--imds URL] [--ca-file F] [--timeout S] COMMAND ...
 *   token                       get a token (prints tokens=N, never the token)
 *   create NAME SIZE LOCATION ZONE IMAGE SUBNET [--spot PRICE] [--custom TEXT] [--tag K=V]...
 *                               PUT, then follow its operation (polls=N)
 *   put-only NAME SIZE LOCATION ZONE IMAGE SUBNET
 *                               the PUT alone (async=yes|no)
 *   get NAME                    state=, size=, zone=, ip= (its NIC's private address)
 *   list                        every VM of the group, page by page (pages=N vms=N names=a,b)
 *   delete NAME                 DELETE, then follow its operation
 *   raw METHOD PATH             one request (status=N code=C)
 * The statistics (calls=, throttled=, waited=) close each line; an error
 * goes to stderr as the client wrote it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm.h"
#include "azure_auth.h"
#include "azure_vm.h"
#include "strutil.h"

static int usage(const char *why)
{
	fprintf(stderr, "arm_cli: %s (see the comment at the top of tests/unit/arm_cli.c)\n", why);
	return 100;
}

static void stats(struct arm_client *c)
{
	struct arm_stats s = arm_client_stats(c);

	printf(" calls=%u throttled=%u tokens=%u waited=%.1f\n", s.calls, s.throttled, s.tokens, s.waited);
}

struct names {
	struct strbuf sb;
	long n;
};

static int add_name(const struct az_vm *vm, void *ud)
{
	struct names *nm = ud;

	sb_addf(&nm->sb, "%s%s", nm->n++ ? "," : "", vm->name);
	return 0;
}

int main(int argc, char **argv)
{
	const char *endpoint = NULL, *sub = NULL, *rg = NULL, *credf = NULL, *imds = NULL, *ca = NULL, *cmd;
	bool managed = false;
	double timeout = 60;
	struct az_creds cr;
	struct arm_client_opts o;
	struct arm_client *c;
	burst_err_t err = { 0 };
	enum az_class cls = AZ_OK;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--managed")) {
			managed = true;
			continue;
		}
		if (i + 1 >= argc)
			return usage("an option without its value");
		if (!strcmp(a, "--endpoint"))
			endpoint = argv[++i];
		else if (!strcmp(a, "--sub"))
			sub = argv[++i];
		else if (!strcmp(a, "--rg"))
			rg = argv[++i];
		else if (!strcmp(a, "--creds"))
			credf = argv[++i];
		else if (!strcmp(a, "--imds"))
			imds = argv[++i];
		else if (!strcmp(a, "--ca-file"))
			ca = argv[++i];
		else if (!strcmp(a, "--timeout"))
			timeout = atof(argv[++i]);
		else
			return usage("unknown option");
	}
	if (i >= argc || !sub || !rg)
		return usage("no command, --sub or --rg");
	cmd = argv[i++];
	if (managed)
		az_creds_managed(&cr);
	else if (!credf)
		return usage("--creds FILE or --managed");
	else if (az_creds_from_file(credf, &cr, &err) < 0) {
		fprintf(stderr, "arm_cli: %s\n", err.msg);
		return AZ_AUTH;
	}
	memset(&o, 0, sizeof(o));
	o.creds = &cr;
	o.endpoint = endpoint;
	o.imds = imds;
	o.ca_file = ca;
	c = arm_client_new(&o, &err);
	az_creds_free(&cr);
	if (!c) {
		fprintf(stderr, "arm_cli: %s\n", err.msg);
		return AZ_PERMANENT;
	}
	if (!strcmp(cmd, "token")) {
		cls = arm_authenticate(c, &err);
		printf("class=%s", az_class_name(cls));
	} else if ((!strcmp(cmd, "create") || !strcmp(cmd, "put-only")) && argc - i >= 6) {
		const char *keys[16], *vals[16];
		char *kv[16];
		size_t nt = 0;
		struct az_vm_spec s;
		struct arm_answer a;
		char *body, *path, what[160];
		unsigned polls = 0;

		memset(&s, 0, sizeof(s));
		s.name = argv[i];
		s.size = argv[i + 1];
		s.location = argv[i + 2];
		s.zone = argv[i + 3];
		s.image = argv[i + 4];
		s.subnet_id = argv[i + 5];
		s.max_price = -1;
		s.ssh_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBURSTtestkey burst";
		for (i += 6; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "--spot")) {
				s.spot = true;
				s.max_price = atof(argv[i + 1]);
			} else if (!strcmp(argv[i], "--custom")) {
				s.custom_data = argv[i + 1];
				s.custom_len = strlen(argv[i + 1]);
			} else if (!strcmp(argv[i], "--tag") && nt < 16 && strchr(argv[i + 1], '=')) {
				kv[nt] = xstrdup(argv[i + 1]);
				*strchr(kv[nt], '=') = '\0';
				keys[nt] = kv[nt];
				vals[nt] = kv[nt] + strlen(kv[nt]) + 1;
				nt++;
			} else
				return usage("create: unknown option");
		}
		s.tag_keys = keys;
		s.tag_vals = vals;
		s.ntags = nt;
		body = az_vm_body(&s, &err);
		if (!body) {
			fprintf(stderr, "arm_cli: %s\n", err.msg);
			return AZ_PERMANENT;
		}
		path = az_vm_path(sub, rg, s.name);
		snprintf(what, sizeof(what), "create VM %s", s.name);
		cls = arm_request(c, "PUT", path, body, ARM_VM_PUT, s.location, what, &a, &err);
		printf("class=%s status=%ld async=%s", az_class_name(cls), a.status, a.async_op ? "yes" : "no");
		if (cls == AZ_OK && !strcmp(cmd, "create")) {
			cls = arm_wait(c, &a, s.location, what, timeout, &polls, &err);
			printf(" final=%s polls=%u", az_class_name(cls), polls);
		}
		arm_answer_free(&a);
		free(body);
		free(path);
		while (nt)
			free(kv[--nt]);
	} else if (!strcmp(cmd, "get") && argc - i >= 1) {
		struct arm_answer a;
		struct az_vm vm;
		char *path = az_vm_path(sub, rg, argv[i]), ip[64] = "";

		cls = arm_request(c, "GET", path, NULL, ARM_READ, NULL, "read VM", &a, &err);
		printf("class=%s", az_class_name(cls));
		if (cls == AZ_OK && az_vm_parse(a.body, &vm) == 0) {
			printf(" state=%s size=%s zone=%s node=%s cluster=%s", vm.state, vm.size, vm.zone[0] ? vm.zone : "-",
			       vm.node[0] ? vm.node : "-", vm.cluster[0] ? vm.cluster : "-");
			if (vm.nic_id[0]) {
				struct arm_answer n;
				char np[700];
				snprintf(np, sizeof(np), "%s?api-version=%s", vm.nic_id, ARM_NETWORK_API);
				if (arm_request(c, "GET", np, NULL, ARM_READ, NULL, "read NIC", &n, &err) == AZ_OK &&
				    az_nic_private_ip(n.body, ip, sizeof(ip)) == 0)
					printf(" ip=%s", ip);
				arm_answer_free(&n);
			}
		}
		arm_answer_free(&a);
		free(path);
	} else if (!strcmp(cmd, "list")) {
		char *path = az_vm_path(sub, rg, NULL), *next = NULL;
		struct names nm;
		unsigned pages = 0;

		sb_init(&nm.sb);
		nm.n = 0;
		for (;;) {
			struct arm_answer a;
			cls = arm_request(c, "GET", next ? next : path, NULL, ARM_VM_LIST, "eastus", "list VMs", &a, &err);
			free(next);
			next = NULL;
			if (cls != AZ_OK) {
				arm_answer_free(&a);
				break;
			}
			pages++;
			if (az_vm_list_parse(a.body, add_name, &nm, &next) < 0) {
				cls = AZ_TRANSIENT;
				fprintf(stderr, "arm_cli: page %u is no listing\n", pages);
			}
			arm_answer_free(&a);
			if (!next || cls != AZ_OK)
				break;
		}
		free(next);
		printf("class=%s pages=%u vms=%ld names=%s", az_class_name(cls), pages, nm.n, nm.sb.s ? nm.sb.s : "");
		sb_free(&nm.sb);
		free(path);
	} else if (!strcmp(cmd, "delete") && argc - i >= 1) {
		struct arm_answer a;
		char *path = az_vm_path(sub, rg, argv[i]);
		unsigned polls = 0;

		cls = arm_request(c, "DELETE", path, NULL, ARM_VM_DELETE, "eastus", "delete VM", &a, &err);
		printf("class=%s status=%ld", az_class_name(cls), a.status);
		if (cls == AZ_OK) {
			cls = arm_wait(c, &a, "eastus", "delete VM", timeout, &polls, &err);
			printf(" final=%s polls=%u", az_class_name(cls), polls);
		}
		arm_answer_free(&a);
		free(path);
	} else if (!strcmp(cmd, "raw") && argc - i >= 2) {
		struct arm_answer a;

		cls = arm_request(c, argv[i], argv[i + 1], NULL, ARM_READ, NULL, "raw", &a, &err);
		printf("class=%s status=%ld code=%s", az_class_name(cls), a.status, a.code[0] ? a.code : "-");
		arm_answer_free(&a);
	} else {
		arm_client_free(c);
		return usage("unknown command or missing arguments");
	}
	stats(c);
	if (cls != AZ_OK)
		fprintf(stderr, "arm_cli: %s\n", err.msg);
	arm_client_free(c);
	return (int)cls;
}

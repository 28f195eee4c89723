/*
 * burst-node - what runs on a burst node.
 *
 *   burst-node join --agent ADDR:PORT --node NAME --instance ID --token TOKEN
 *                   --record FILE -- SLURMD [ARG...]
 *
 * Reports to the agent over the node's network, waits for its verdict, and
 * only when the node is admitted writes the admission record to FILE and
 * becomes SLURMD (so a rejected node never registers with Slurm).
 * Exit 1 when rejected, 2 on usage errors, 3 when the agent cannot be reached.
 *
 *   burst-node provenance [--sysroot DIR] [...] [--pretty | --id]
 *
 * Prints the node's provenance record (burst-agent/node/provenance.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <munge.h>

#include "sigv4.h"

#include "accept.h"
#include "node_provenance.h"
#include "node_health.h"

#define CONNECT_TRIES 60          /* one every 0.5 s: the agent may be restarting */
#define REPLY_TIMEOUT_S 120

static int connect_agent(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	struct sockaddr_in sa;
	int i, fd;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -2;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -2;
	for (i = 0; i < CONNECT_TRIES; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		close(fd);
		usleep(500000);
	}
	return -1;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read the first line of a file into buf; NULL if it cannot be read. */
static const char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char *ok;

	if (!f)
		return NULL;
	ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* What the node says of itself: the agent checks it against its policy. */
static json_object *node_record(const char *node)
{
	json_object *rec = json_object_new_object(), *k = json_object_new_object();
	char buf[512];
	const char *v;

	json_object_object_add(rec, "node", json_object_new_string(node));
	v = read_line("/proc/sys/kernel/osrelease", buf, sizeof(buf));
	json_object_object_add(k, "release", v ? json_object_new_string(v) : NULL);
	v = read_line("/proc/sys/kernel/version", buf, sizeof(buf));
	json_object_object_add(k, "version", v ? json_object_new_string(v) : NULL);
	json_object_object_add(rec, "kernel", k);
	return rec;
}

static int join(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "node", required_argument, NULL, 'n' },
		{ "instance", required_argument, NULL, 'i' },
		{ "token", required_argument, NULL, 't' },
		{ "record", required_argument, NULL, 'r' },
		{ "munge-socket", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const char *agent = NULL, *node = NULL, *instance = NULL, *token = NULL, *record = NULL;
	const char *munge_socket = NULL;
	json_object *req, *rep, *v;
	char buf[65536];
	size_t n = 0;
	struct timeval tv = { REPLY_TIMEOUT_S, 0 };
	int ch, fd;

	while ((ch = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (ch) {
		case 'a': agent = optarg; break;
		case 'n': node = optarg; break;
		case 'i': instance = optarg; break;
		case 't': token = optarg; break;
		case 'r': record = optarg; break;
		case 'm': munge_socket = optarg; break;
		default: return 2;
		}
	}
	if (!agent || !node || !instance || !token || !record || optind >= argc) {
		fprintf(stderr, "usage: burst-node join --agent ADDR:PORT --node NAME --instance ID --token T --record FILE [--munge-socket PATH] -- SLURMD [ARG...]\n");
		return 2;
	}
	/* no admission record of an earlier instance survives this join */
	unlink(record);
	fd = connect_agent(agent);
	if (fd < 0) {
		fprintf(stderr, "burst-node: %s: cannot reach the agent at %s: %s\n", node, agent,
			fd == -2 ? "not ADDR:PORT" : strerror(errno));
		return 3;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/*
	 * The report: the record, and a munge credential (the cluster's key, so
	 * only root on a node of this cluster can make it) over the record's
	 * digest, the one-time join token and the instance id.
	 */
	{
		json_object *rec = node_record(node), *pay = json_object_new_object();
		char digest[65], *cred = NULL;
		const char *text = json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN), *p;
		munge_ctx_t ctx = munge_ctx_create();
		munge_err_t me;

		sigv4_sha256_hex(text, strlen(text), digest);
		json_object_object_add(pay, "digest", json_object_new_string(digest));
		json_object_object_add(pay, "token", json_object_new_string(token));
		json_object_object_add(pay, "instance", json_object_new_string(instance));
		json_object_object_add(pay, "node", json_object_new_string(node));
		p = json_object_to_json_string_ext(pay, JSON_C_TO_STRING_PLAIN);
		if (!ctx || (munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS) ||
		    (me = munge_encode(&cred, ctx, p, (int)strlen(p))) != EMUNGE_SUCCESS) {
			fprintf(stderr, "burst-node: %s: cannot make a munge credential for the report (socket %s): %s; is munged running?\n",
				node, munge_socket ? munge_socket : "default",
				ctx ? munge_ctx_strerror(ctx) : "out of memory");
			munge_ctx_destroy(ctx);
			return 3;
		}
		munge_ctx_destroy(ctx);
		req = json_object_new_object();
		json_object_object_add(req, "op", json_object_new_string("join"));
		json_object_object_add(req, "cred", json_object_new_string(cred));
		json_object_object_add(req, "record", json_object_new_string(text));
		free(cred);
		json_object_put(pay);
		json_object_put(rec);
	}
	{
		const char *s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
		if (write_all(fd, s, strlen(s)) < 0 || write_all(fd, "\n", 1) < 0) {
			fprintf(stderr, "burst-node: %s: cannot send the report: %s\n", node, strerror(errno));
			return 3;
		}
	}
	json_object_put(req);
	while (n < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	close(fd);
	buf[n] = '\0';
	rep = json_tokener_parse(buf);
	if (!rep || !json_object_object_get_ex(rep, "admit", &v)) {
		fprintf(stderr, "burst-node: %s: no verdict from the agent (got %zu bytes)\n", node, n);
		return 3;
	}
	if (!json_object_get_boolean(v)) {
		json_object *why;
		json_object_object_get_ex(rep, "reason", &why);
		fprintf(stderr, "burst-node: %s: rejected by the agent: %s; slurmd is not started\n", node,
			why ? json_object_get_string(why) : "no reason given");
		return 1;
	}
	{
		FILE *f = fopen(record, "w");
		json_object *rec;
		if (!f || !json_object_object_get_ex(rep, "record", &rec)) {
			fprintf(stderr, "burst-node: %s: cannot write the admission record %s\n", node, record);
			return 1;
		}
		json_object_object_foreach(rec, key, val)
			fprintf(f, "%s=%s\n", key, json_object_get_string(val));
		if (fclose(f) != 0)
			return 1;
	}
	json_object_put(rep);
	setenv("BURST_ADMISSION", record, 1);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "burst-node: %s: cannot start %s: %s\n", node, argv[optind], strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "join"))
		return join(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "accept"))
		return accept_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "provenance"))
		return node_provenance(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "health"))
		return node_health(argc - 1, argv + 1);
	fprintf(stderr, "usage: burst-node join|accept|provenance|health ... (see burst-node(8))\n");
	return 2;
}

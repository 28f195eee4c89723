/*
 * burst-agent: named crash points, for tests only (crash.h,
 * doc/crash_points.md). One table, in enum order: each point's name and
 * what the agent has done when it ends there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_int.h"
#include "crash.h"

static const struct {
	const char *name;
	const char *desc;
} crash_table[CP_COUNT] = {
#define CP_STATE_ROW(S, s) \
	[CP_STATE_FIRST + 2 * (S)] = { "state." s ".before", "a transition to " s ": not written yet" }, \
	[CP_STATE_FIRST + 2 * (S) + 1] = { "state." s ".after", "a transition to " s ": durable (committed), nothing it leads to done yet" }
	CP_STATE_ROW(NS_POWERED_DOWN, "powered_down"),
	CP_STATE_ROW(NS_REQUESTED, "requested"),
	CP_STATE_ROW(NS_LAUNCHING, "launching"),
	CP_STATE_ROW(NS_BOOTING, "booting"),
	CP_STATE_ROW(NS_ADMITTED, "admitted"),
	CP_STATE_ROW(NS_TERMINATING, "terminating"),
	CP_STATE_ROW(NS_REJECTED, "rejected"),
	CP_STATE_ROW(NS_LOST, "lost"),
#undef CP_STATE_ROW
	[CP_LAUNCH_BEFORE] = { "provider.launch.before", "on the provider's worker: a launch about to be asked (intents durable)" },
	[CP_LAUNCH_AFTER] = { "provider.launch.after", "on the provider's worker: the launch answered, its outcome not recorded" },
	[CP_TERMINATE_BEFORE] = { "provider.terminate.before", "on the provider's worker: a terminate about to be asked" },
	[CP_TERMINATE_AFTER] = { "provider.terminate.after", "on the provider's worker: the terminate answered, its outcome not recorded" },
	[CP_LIST_BEFORE] = { "provider.list.before", "on the provider's worker: a listing (describe; the reconciler's, or a restart's check of its live nodes) about to be asked" },
	[CP_LIST_AFTER] = { "provider.list.after", "on the provider's worker: the listing answered, not compared yet" },
	[CP_EXISTS_BEFORE] = { "provider.exists.before", "on the provider's worker: whether an instance exists, about to be asked" },
	[CP_EXISTS_AFTER] = { "provider.exists.after", "on the provider's worker: whether an instance exists, answered" },
	[CP_CONSOLE_BEFORE] = { "provider.console.before", "on the provider's worker: an instance's console about to be read" },
	[CP_CONSOLE_AFTER] = { "provider.console.after", "on the provider's worker: an instance's console read" },
	[CP_ENDED_BEFORE] = { "provider.ended.before", "on the provider's worker: whether an instance ended, about to be asked" },
	[CP_ENDED_AFTER] = { "provider.ended.after", "on the provider's worker: whether an instance ended, answered" },
	[CP_SPOOL_READ] = { "spool.read", "a spool request read and parsed, its transitions not committed" },
	[CP_SPOOL_TAKEN] = { "spool.taken", "a spool request's transitions committed, its file not removed" },
	[CP_SPOOL_REMOVED] = { "spool.removed", "a spool request taken and its file removed" },
	[CP_JOIN_RECEIVED] = { "join.received", "a join report read, not verified yet" },
	[CP_JOIN_VERIFIED] = { "join.verified", "a join report verified, its record not stored nor decided on" },
	[CP_JOIN_REJECTED] = { "join.rejected", "a node rejected at join: durable, the node not answered" },
	[CP_JOIN_ADMITTED] = { "join.admitted", "a node admitted: durable, neither Slurm nor the node told" },
	[CP_JOIN_ANSWERED] = { "join.answered", "a node admitted and answered with its admission record" },
	[CP_GCP_BULK_SENT] = { "gcp.bulk.sent", "the gcp driver: a bulk insert answered with its operation, not waited for" },
	[CP_GCP_BULK_DONE] = { "gcp.bulk.done", "the gcp driver: a bulk insert's operation DONE, its VMs not listed" },
	[CP_GCP_METADATA] = { "gcp.metadata.set", "the gcp driver: a VM's node and join token set, the batch's other VMs not yet" },
	[CP_AZURE_PUT_SENT] = { "azure.put.sent", "the azure driver: a VM's PUT answered (the VM being made), its operation not polled" },
	[CP_AZURE_OP_DONE] = { "azure.op.done", "the azure driver: a VM's create Succeeded, its address not read" },
};

static const char *const hold_names[HP_COUNT] = {
	[HP_MUNGE_DECODE] = "munge.decode",
	[HP_STATE_SYNC] = "state.sync",
	[HP_PROVIDER_CONSOLE] = "provider.console",
	[HP_PROVIDER_ENDED] = "provider.ended",
};
/* each point's FIFO (NULL: not held), and whether it was reached */
static char *hold_fifo[HP_COUNT];
static atomic_bool hold_done[HP_COUNT];
int hold_armed;

int crash_armed = -1;
static unsigned long crash_at = 1;
static atomic_ulong crash_seen;

const char *crash_point_name(enum crash_point p)
{
	return (int)p >= 0 && p < CP_COUNT ? crash_table[p].name : NULL;
}

const char *crash_point_desc(enum crash_point p)
{
	return (int)p >= 0 && p < CP_COUNT ? crash_table[p].desc : NULL;
}

void crash_points_print(FILE *f)
{
	int p;

	for (p = 0; p < CP_COUNT; p++)
		fprintf(f, "%s\t%s\n", crash_table[p].name, crash_table[p].desc);
}

int crash_init(char *why, size_t len)
{
	const char *v = getenv("BURST_CRASH_POINT");
	size_t n;
	int p;

	/* the state rows name the states as node_state.h does, in its order */
	for (p = 0; p < NS_COUNT; p++) {
		char want[64];
		snprintf(want, sizeof(want), "state.%s.before", node_state_name((enum node_state)p));
		if (!crash_table[CP_STATE(p, false)].name || strcmp(crash_table[CP_STATE(p, false)].name, want)) {
			snprintf(why, len, "crash point table: row %d is not %s (crash.c and node_state.h disagree)",
				 (int)CP_STATE(p, false), want);
			return -1;
		}
	}
	if (!v || !*v)
		return 0;
	n = strcspn(v, ":");
	for (p = 0; p < CP_COUNT; p++)
		if (strlen(crash_table[p].name) == n && !strncmp(crash_table[p].name, v, n))
			break;
	if (p == CP_COUNT) {
		snprintf(why, len, "BURST_CRASH_POINT=%s: no crash point %.*s (burst-agent --list-crash-points lists them; the variable is for tests only: unset it)",
			 v, (int)n, v);
		return -1;
	}
	if (v[n] == ':') {
		char *end;
		unsigned long c = strtoul(v + n + 1, &end, 10);
		if (!v[n + 1] || *end || c < 1 || v[n + 1] == '-') {
			snprintf(why, len, "BURST_CRASH_POINT=%s: the count after ':' must be a whole number from 1 (the how-manieth time the point is reached)",
				 v);
			return -1;
		}
		crash_at = c;
	}
	crash_armed = p;
	return 0;
}

void crash_reached_(enum crash_point p)
{
	unsigned long k;

	if ((int)p != crash_armed)
		return;
	k = atomic_fetch_add(&crash_seen, 1) + 1;
	if (k != crash_at)
		return;
	logmsg("error", "crash point %s reached (time %lu): exiting at once with status %d (BURST_CRASH_POINT, for tests only)",
	       crash_table[p].name, k, CRASH_EXIT);
	_exit(CRASH_EXIT);
}

int hold_init(char *why, size_t len)
{
	const char *v = getenv("BURST_HOLD_POINT");
	char *copy, *item, *save = NULL;
	int p, rc = 0;

	if (!v || !*v)
		return 0;
	copy = strdup(v);
	if (!copy) {
		snprintf(why, len, "BURST_HOLD_POINT: out of memory");
		return -1;
	}
	for (item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		if (colon)
			*colon = '\0';
		for (p = 0; p < HP_COUNT && strcmp(hold_names[p], item); p++)
			;
		if (p == HP_COUNT || !colon || colon[1] != '/') {
			snprintf(why, len, "BURST_HOLD_POINT=%s: each item is NAME:/ABSOLUTE/FIFO, NAME one of "
				 "munge.decode, state.sync, provider.console, provider.ended (for tests only: unset it)", v);
			rc = -1;
			break;
		}
		free(hold_fifo[p]);
		hold_fifo[p] = strdup(colon + 1);
		if (!hold_fifo[p]) {
			snprintf(why, len, "BURST_HOLD_POINT: out of memory");
			rc = -1;
			break;
		}
		hold_armed++;
	}
	free(copy);
	return rc;
}

void hold_reached_(enum hold_point p)
{
	char buf[64];
	int fd;

	if (!hold_fifo[p] || atomic_exchange(&hold_done[p], true))
		return;
	logmsg("info", "hold point %s reached: held until a line is written to %s (BURST_HOLD_POINT, for tests only)",
	       hold_names[p], hold_fifo[p]);
	/* the open waits for the test to open it for writing; the reads, for it to close it */
	while ((fd = open(hold_fifo[p], O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (fd < 0)
		logmsg("error", "hold point %s: cannot open %s: %s; going on", hold_names[p], hold_fifo[p], strerror(errno));
	else {
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));
			if (n <= 0 && !(n < 0 && errno == EINTR))
				break;
		}
		close(fd);
	}
	logmsg("info", "hold point %s released", hold_names[p]);
}

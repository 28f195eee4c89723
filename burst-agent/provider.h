/*
 * provider.h - the interface between the burst agent and a cloud driver
 * (doc/design.md §9). A driver knows its cloud and nothing of Slurm; the agent
 * knows Slurm and the node life and nothing of any cloud's wire format.
 *
 * Every call is synchronous and returns a class for every failure, which
 * decides what the agent does next: capacity and quota errors move to the
 * next candidate of the node set's ranked list (and put the failed type and
 * region on a cooldown), throttled and transient errors are retried later
 * with the same idempotency key, permanent and auth errors fail the nodes
 * with a message an admin can act on.
 *
 * A driver's text is the cloud's (an error message, a fault, a tag, an
 * instance id, a console): the agent writes out its control characters
 * (str_escape_ctl) where it comes back from the worker, before it is
 * logged, stored or sent to Slurm (agent_prov.c, agent_launch.c,
 * agent_reconcile.c, prov_list_add; the console line by line, agent_boot.c).
 */
#ifndef BURST_PROVIDER_H
#define BURST_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"
#include "config.h"

enum prov_class {
	PROV_OK = 0,
	PROV_CAPACITY,           /* no capacity for this type here now: try the next candidate */
	PROV_QUOTA,              /* account limit: try the next candidate */
	PROV_THROTTLED,          /* slow down, then retry with the same key */
	PROV_TRANSIENT,          /* 5xx, timeout: retry with the same key */
	PROV_PERMANENT,          /* bad request, bad image...: fail, tell the admin */
	PROV_AUTH,               /* credentials refused: fail, tell the admin */
};

const char *prov_class_name(enum prov_class c);

/* One node of a launch batch. The agent fills the inputs; the driver the outputs. */
struct prov_node {
	const char *node;        /* Slurm node name */
	int attempt;             /* launches of this node so far, this one included */
	const char *token;       /* its one-time join token */
	int index;               /* the node's stable place (0, 1, ...) among the nodes
				  * this provider may launch: a driver that assigns
				  * addresses itself (local) derives them from it */
	/* out */
	char instance[128];      /* the instance id, empty if none was launched */
	char address[64];        /* the instance's address in its network, where
				  * slurmctld reaches its slurmd (Slurm's NodeAddr);
				  * empty if the provider does not know it yet */
	enum prov_class cls;     /* this node's outcome */
	char error[512];         /* why, when cls != PROV_OK; with PROV_OK a
				  * note for the agent's log, or empty */
};

/* A launch of n nodes of one node set as one (provider, type, region). */
struct prov_batch {
	const char *cluster;
	const char *provider;    /* the configured provider's name */
	const char *nodeset;
	const char *instance_type;
	const char *region;      /* may be NULL (local) */
	const char *join_addr;   /* "ADDR:PORT" where nodes report (config_join_address) */
	const char *munge_socket;
	const char *slurm_conf;
	const char *acceptance;  /* the acceptance.conf nodes run at join, or NULL */
	struct prov_node *nodes;
	size_t n;
};

/*
 * An instance a provider lists (provider_ops.list). Its strings are kept by
 * the list (prov_list_add copies them), valid until prov_list_free: a
 * record is 48 bytes and its strings their own length (a cluster or state
 * repeated from one instance to the next is kept once), where fixed arrays
 * made each ~430 bytes, and a reconciler round over 15,000 instances held
 * them all at once.
 */
struct prov_instance {
	const char *id;
	const char *cluster;     /* its cluster tag ("" when untagged) */
	const char *node;        /* the node it was launched for ("" when unknown) */
	const char *state;       /* pending, running, stopping, stopped */
	double launched;         /* launch time, seconds since the epoch (0 when unknown) */
	int attempt;             /* that node's attempt (0 when unknown) */
};

struct prov_strs;            /* the list's strings (provider.c) */
#define PROV_STRS_SEEN 4

struct prov_list {
	struct prov_instance *v; /* owned: prov_list_free */
	size_t n;
	size_t cap;              /* room in v (prov_list_add grows it by half again) */
	struct prov_strs *strs;  /* the instances' strings, owned */
	const char *seen[2][PROV_STRS_SEEN]; /* clusters, states stored lately (in strs) */
	char note[1024];         /* for the agent's log, or empty (the listing stands) */
};

/*
 * Where a listing made one page at a time (provider_ops.list_step) stands,
 * kept by the caller between the steps: zeroed before the first step,
 * freed with prov_list_cursor_free after the last (or when given up).
 */
struct prov_list_cursor {
	double listed_at;        /* when its first step began (seconds since the epoch;
				  * 0 before it) */
	size_t region;           /* the driver's place: the region being listed */
	char *page;              /* that region's next page (the driver's token; NULL:
				  * its first) */
	unsigned steps;          /* steps made (counted by the caller) */
	void *priv;              /* the driver's own, freed by priv_free */
	void (*priv_free)(void *priv);
};

void prov_list_cursor_free(struct prov_list_cursor *c);

/* Append one instance to l, its strings copied into l (NULL: ""), its
 * numbers zero, and return it. */
struct prov_instance *prov_list_add(struct prov_list *l, const char *id, const char *cluster,
				    const char *node, const char *state);
/* Free l's instances and zero it; l may be zeroed. */
void prov_list_free(struct prov_list *l);

struct provider;

struct provider_ops {
	const char *type;        /* "local", "aws", ... */
	/* Set up the driver for the configured provider. Returns the driver's
	 * state (freed by fini) or NULL with err. */
	struct provider *(*init)(const struct cfg_provider *cfg, const struct burst_config *all,
				 burst_err_t *err);
	/* Launch every node of b; returns how many were launched (each node
	 * carries its own outcome). Idempotent for a repeated (node, attempt). */
	size_t (*launch)(struct provider *p, struct prov_batch *b);
	/* Terminate a node's instance; 0 when it is gone (or never was), -1 with
	 * err and its class (retry later) otherwise. */
	int (*terminate)(struct provider *p, const char *node, const char *instance,
			 enum prov_class *cls, burst_err_t *err);
	/* Optional, with start (NULL: the driver cannot, as config_driver_stops
	 * says, and no node set of its provider keeps a warm pool): stop the
	 * node's instance, keeping it and its disks (EC2 StopInstances; local:
	 * its processes frozen, its namespaces kept). 0 when it is stopped or
	 * stopping (or was already), -1 with err and its class. Its listing
	 * says stopping or stopped from then on. */
	int (*stop)(struct provider *p, const char *node, const char *instance,
		    enum prov_class *cls, burst_err_t *err);
	/* Optional, with stop: start the node's stopped instance again. 0 when
	 * it is starting or running (or was already), -1 with err and its
	 * class (PROV_PERMANENT: it is gone or cannot start; never use it). */
	int (*start)(struct provider *p, const char *node, const char *instance,
		     enum prov_class *cls, burst_err_t *err);
	/* Does the node's instance exist? 1 yes, 0 no, -1 cannot tell now. */
	int (*exists)(struct provider *p, const char *node, const char *instance);
	/* Every instance of this cluster the provider knows (in every region it
	 * is configured for), launched or not by this agent, terminated ones
	 * excepted: *out (zeroed by the caller) is filled, the caller frees it
	 * with prov_list_free. 0, or -1 with err and its class (the listing is
	 * incomplete: the reconciler decides nothing for this provider). */
	int (*list)(struct provider *p, struct prov_list *out, enum prov_class *cls, burst_err_t *err);
	/* Optional: the same listing one page at a time, so that the worker
	 * runs what was queued meanwhile (a launch) between two pages. Each
	 * call makes one page and adds its instances to *out; cur (zeroed
	 * before the first call) keeps the place. 1: more to come (call again
	 * with the same cur and out), 0: *out is the complete listing, -1 with
	 * err and its class (given up: the caller frees cur and out). What the
	 * driver learns from a complete listing (the aws batch journal's
	 * finished batches) counts from the first step's time (cur->listed_at):
	 * an instance launched after that may be missing from it. */
	int (*list_step)(struct provider *p, struct prov_list_cursor *cur, struct prov_list *out,
			 enum prov_class *cls, burst_err_t *err);
	/* The end of the instance's console (what its boot printed): at most
	 * len - 1 bytes, NUL-terminated ("" when it printed nothing yet); where
	 * gets how an admin reads all of it (a file, a command). 0, or -1 with
	 * err and its class. */
	int (*console)(struct provider *p, const char *node, const char *instance, char *buf, size_t len,
		       char *where, size_t wlen, enum prov_class *cls, burst_err_t *err);
	/* Has the instance ended on its own (its boot or its slurmd failed, as
	 * a machine that powers off)? 1 yes, 0 no, -1 cannot tell. NULL when
	 * the driver cannot know; BootTimeout then catches such an instance. */
	int (*ended)(struct provider *p, const char *node, const char *instance);
	/* Optional: this agent has just taken the lease (no call in flight).
	 * What the driver read from StateDir at init is a standby's view from
	 * its start: the agent it takes over from may have written since (the
	 * aws batch journal), so the driver reads it again. */
	void (*activate)(struct provider *p);
	void (*fini)(struct provider *p);
};

/*
 * Set by the agent once it holds the lease (before activate): a driver
 * calls it right before it replaces a file in StateDir that another agent
 * may share (the aws batch journal's compaction). 0: go on; anything else:
 * leave the file as it is. NULL (burstctl, the tests' drivers): no check.
 */
extern int (*provider_fence)(void);

/*
 * Set by the agent (crash.h): a driver calls it at its own crash points
 * (CP_GCP_*, CP_AZURE_*), for tests. NULL (burstctl, the tests' drivers): nothing.
 */
extern void (*provider_crash)(int point);

/* The driver for a provider type, or NULL. */
const struct provider_ops *provider_ops_find(const char *type);

extern const struct provider_ops provider_local;
extern const struct provider_ops provider_aws;
extern const struct provider_ops provider_openstack;
extern const struct provider_ops provider_gcp;
extern const struct provider_ops provider_azure;

/* The azure driver's request counters (bench, the CLI test driver). */
void azure_provider_stats(const struct provider *p, unsigned *calls, unsigned *throttled, unsigned *tokens);

/* The openstack driver's request counters (bench, the CLI test driver). */
void openstack_provider_stats(const struct provider *p, unsigned *api_calls, unsigned *tokens);
/* The gcp driver's: requests sent, tokens asked for. */
void gcp_provider_stats(const struct provider *p, unsigned *api_calls, unsigned *tokens);
/* times a mutation waited for the minute's write quota (WriteQuota=) */
unsigned gcp_provider_write_waits(const struct provider *p);


/*
 * The user data of the cloud drivers (aws, openstack): a shell script for
 * cloud-init that joins the instance to the cluster. ud_head writes its
 * start (the shebang, what, and the variables every driver sets); the
 * driver then sets NODE, TOKEN and BURST_INSTANCE_ID its own way, and
 * ud_join_tail writes the rest (hostname, the node's directory, the token
 * in the environment, exec burst-node join ... -- slurmd; with BURST_IMDS
 * set, as the aws driver sets it, burst-node watches that instance metadata
 * service for an interruption notice). ud_sh_quote
 * single-quotes a value for sh.
 */
struct strbuf;
void ud_sh_quote(struct strbuf *s, const char *v);
void ud_head(struct strbuf *s, const char *what, const char *join, const char *provider,
	     const char *type, const char *region, const char *acceptance);
void ud_join_tail(struct strbuf *s);

#endif

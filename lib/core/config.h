/*
 * config.h - burst.conf: providers, contracts, node sets and catalog
 * overrides, in slurm.conf conventions (Key=Value words, '#' comments,
 * Include, case-insensitive keys, one object per line).
 */
#ifndef BURST_CONFIG_H
#define BURST_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include "ratelimit.h"
#include "burst_err.h"
#include "catalog.h"
#include "contract.h"
#include "hostlist.h"
#include "resolver.h"
#include "slurmconf.h"

#define BURST_DEFAULT_STATE_DIR "/var/lib/slurm-burst"

/*
 * Where burst.conf is: explicit if given, else $BURST_CONF, else beside
 * slurm.conf ($SLURM_CONF's directory; Slurm gives its power-save programs
 * only SLURM_CONF), else /etc/slurm/burst.conf. Returns a static buffer or
 * the argument.
 */
const char *config_default_path(const char *explicit_path);

struct cfg_where {
	char *file;
	int line;
};

/* One address the agent listens on for node reports. */
struct cfg_listen {
	char addr[16];           /* dotted IPv4; "0.0.0.0" every address */
	int port;
};

struct cfg_provider {
	char *name;              /* Provider=NAME */
	char *type;              /* Type=local|aws|openstack|gcp|azure (default: NAME) */
	char *catalog;           /* Catalog= the catalog's provider name (default: Type) */
	char **regions;          /* Regions=a,b (NULL-terminated; may be empty) */
	size_t nregions;
	char *credentials;       /* CredentialsFile= */
	char *endpoint;          /* Endpoint= (tests, private clouds) */
	char *bridge;            /* local: Bridge= the bridge its instances are plugged into */
	char *address;           /* local: Address= the bridge's ADDR/PREFIX; its instances get the rest */
	struct cfg_where where;
	/* aws (all may be NULL) */
	char *image_id;          /* ImageId= the AMI */
	char *launch_template;   /* LaunchTemplate= lt-... id or a name */
	char *subnet_id;         /* SubnetId= */
	char **security_groups;  /* SecurityGroups=sg-a,sg-b (NULL-terminated; may be empty) */
	size_t nsecurity_groups;
	char *iam_instance_profile; /* IamInstanceProfile= a name or an ARN */
	char *profile;           /* Profile= the credentials profile */
	char *ca_file;           /* CaFile= CA bundle for an https Endpoint */
	char *join_address;      /* JoinAddress=ADDR:PORT where this provider's instances reach
				  * the agent's join port (NULL: config_join_address) */
	bool min_count_all;      /* MinCount=all: a batch launches whole or not at all (default 1) */
	/* openstack (all may be NULL/0); ImageId=/Image= is the image's id or name,
	 * CredentialsFile= an openrc-style file, Endpoint= Keystone's v3 URL */
	char **networks;         /* Networks=ID,ID or auto or none */
	size_t nnetworks;
	char *key_name;          /* KeyName= */
	char *availability_zone; /* AvailabilityZone= */
	char **scheduler_hints;  /* SchedulerHints=KEY:VALUE,... */
	size_t nscheduler_hints;
	char *interface;         /* Interface= public|internal|admin (default public) */
	char *cloud;             /* Cloud=NAME: CredentialsFile= is a clouds.yaml, this its entry */
	char *microversion;      /* Microversion= compute API microversion (default 2.52) */
	char *compute_endpoint;  /* ComputeEndpoint= instead of the token catalog's */
	char **accelerators;     /* Accelerators=ALIAS:MODEL,... (catalog refresh: extra specs' aliases) */
	size_t naccelerators;
	int build_wait;          /* BuildWait= seconds a launch waits for servers to leave BUILD (default 30;
				  * azure: for its VMs' create operations, default 60) */
	/* gcp (all may be NULL/0); Image= is the boot image (a family or image
	 * path), CredentialsFile= a service account's JSON key (none: the
	 * metadata server's token), Endpoint= the compute API's root URL */
	char *project;           /* Project= (default: the key's project_id / the metadata server's) */
	char **zones;            /* Zones=a,b: the zones a launch may use (default: the region's;
				  * azure: 1,2,3, tried in order on capacity) */
	size_t nzones;
	char *network;           /* Network= (default: global/networks/default) */
	char *subnetwork;        /* Subnetwork= regions/R/subnetworks/NAME */
	char *service_account;   /* ServiceAccount= the VMs' service account email */
	char **network_tags;     /* NetworkTags=a,b: the VMs' tags (firewall rules) */
	size_t nnetwork_tags;
	char *instance_template; /* InstanceTemplate= global/instanceTemplates/NAME instead of Image= ... */
	char *disk_type;         /* DiskType= pd-balanced, ... */
	int disk_size_gb;        /* DiskSizeGB= (0: the image's) */
	bool external_ip;        /* ExternalIP=yes: an ephemeral external address */
	bool spot;               /* Spot=yes: provisioningModel SPOT (azure: Priority=Spot) */
	double write_quota;      /* WriteQuota=N[/S]: mutation requests per S seconds (default 60) the
				  * gcp driver sends at most; 0: none; -1 (unset): Compute Engine's
				  * default, 1,500 a minute */
	double write_quota_len;
	/* azure (all may be NULL/0); Image= is a URN PUBLISHER:OFFER:SKU:VERSION or an image's
	 * resource id, SubnetId= the subnet's resource id, CredentialsFile= a file of
	 * AZURE_* names (none: the VM's managed identity), Endpoint= ARM's URL */
	char *subscription;      /* Subscription= the subscription id */
	char *resource_group;    /* ResourceGroup= where the VMs go */
	char *admin_user;        /* AdminUser= (default burst) */
	char *ssh_public_key;    /* SshPublicKey= a public key file for AdminUser */
	double max_price;        /* MaxPrice= USD per hour for spot, -1: up to on-demand (default) */
	char *metadata_endpoint; /* MetadataEndpoint= the instance metadata service (tests) */
	char *os_disk_type;      /* OsDiskType= Standard_LRS|StandardSSD_LRS|Premium_LRS (default StandardSSD_LRS) */
	/* rate limits, per region (lib/core/ratelimit.h): the type's documented
	 * ones (rate_limits_default), each overridden by LaunchRate=,
	 * TerminateRate= and RequestRate=launch:..,terminate:.. */
	struct rate_limits rates;
};

struct cfg_contract {
	char *name;
	struct contract *c;
	struct cfg_where where;
};

struct cfg_nodeset {
	char *name;
	char *nodes_expr;        /* Nodes= as written */
	struct hostlist nodes;
	char *partition;         /* Partition= (default: the node set name) */
	char **providers;        /* Providers= (default: all configured) */
	size_t nproviders;
	char **regions;          /* Regions= (default: the provider's) */
	size_t nregions;
	char **types;            /* InstanceTypes= (default: every type allowed by Constraint) */
	size_t ntypes;
	struct contract *constraint; /* Constraint="..." (may be NULL) */
	char *features;          /* Features= extra Slurm features (may be NULL) */
	char **blessed_kernels;  /* BlessedKernels= RELEASE[:BUILDID],... admitted kernels (none: any) */
	size_t nblessed_kernels;
	int weight;              /* Weight= Slurm node weight (0: not set) */
	int early_launch;        /* EarlyLaunch= yes 1, no 0, -1 not set (the global one) */
	char *acceptance;        /* Acceptance= this node set's acceptance.conf (NULL: the global one) */
	struct cfg_where where;
	/* admission policy overrides (config_policy): unset is NAN, NULL, false */
	double memory_tolerance;     /* MemoryTolerance= */
	char **required_modules;     /* RequiredModules=a,b */
	size_t nrequired_modules;
	unsigned long long allowed_taint; /* AllowedTaint= (when allowed_taint_set) */
	bool allowed_taint_set;
	char **blessed_drivers;      /* BlessedDrivers= NAME=VERSION,... (NULL: not set; set and
				      * empty: any driver, whatever the global list and the file say) */
	size_t nblessed_drivers;
	/* warm pool (doc/admin-guide.md, "Warm pools") */
	int warm_pool;           /* WarmPool= admitted instances kept stopped, not terminated (0: none) */
	int warm_pool_max_age;   /* WarmPoolMaxAge= seconds after its admission a member is admitted
				  * again in full, acceptance included (default CONFIG_WARM_POOL_MAX_AGE) */
	double warm_pool_budget; /* WarmPoolBudget= USD per hour the stopped members may cost
				  * together (NAN: not set, WarmPool= alone caps the pool) */
};

/* WarmPoolMaxAge='s default: a day */
#define CONFIG_WARM_POOL_MAX_AGE 86400
/* A stopped instance's price when no Price= line gives it (config_stopped_price):
 * its disk at AWS's published gp3 price in us-east-1, 0.08 USD per GB-month
 * (730 hours), the disk the catalog's storage_size or else this many GB */
#define CONFIG_STOPPED_USD_PER_GB_MONTH 0.08
#define CONFIG_STOPPED_DEFAULT_DISK_GB 30.0

/* Budget=NAME Amount=USD Period=day|week|month|year [NodeSet=NS] [Account=ACCT]:
 * no launch that would take its spending in the period past Amount
 * (doc/admin-guide.md, "Budgets"). Without NodeSet= and Account= it is global. */
struct cfg_budget {
	char *name;
	double amount;           /* US dollars per period */
	int period;              /* enum cost_period (lib/core/cost.h) */
	char *nodeset;           /* NodeSet= (NULL: every node set) */
	char *account;           /* Account= a Slurm account (NULL: every account) */
	struct cfg_where where;
};

/* JoinReportMemory='s default and least: a report is at most 1 MiB */
#define CONFIG_JOIN_REPORT_MEMORY ((size_t)64 << 20)
#define CONFIG_JOIN_REPORT_MEMORY_MIN ((size_t)1 << 20)
#define CONFIG_JOIN_REPORT_MEMORY_MAX ((size_t)64 << 30)

struct burst_config {
	char *path;
	char *cluster_name;      /* ClusterName= (default "slurm") */
	char *catalog_dir;       /* CatalogDir= (may be NULL) */
	bool allow_inline;       /* AllowInlineContracts= (default yes) */
	bool allow_insecure_endpoint; /* AllowInsecureEndpoint= (default no; tests only) */
	char *state_dir;         /* StateDir= (default BURST_DEFAULT_STATE_DIR): database, spool */
	char *socket_path;       /* SocketPath= (default StateDir/agent.sock) */
	int join_port;           /* JoinPort= where nodes report (default 6830) */
	struct cfg_listen *join_listen; /* JoinListen= ADDR[:PORT],... the agent's join sockets;
				  * never empty after config_load (see config_load) */
	size_t njoin_listen;
	bool join_listen_set;    /* JoinListen= was given (else the default above) */
	char *join_address;      /* JoinAddress=ADDR:PORT what instances are told (NULL: not set) */
	size_t join_report_memory; /* JoinReportMemory= bytes all join connections' partial reports
				    * may hold together (default CONFIG_JOIN_REPORT_MEMORY) */
	int boot_timeout;        /* BootTimeout= seconds from launch to join (default 300) */
	int reject_cooldown;     /* RejectCooldown= seconds a failed node stays DOWN (default 60) */
	int interruption_cooldown; /* InterruptionCooldown= seconds a type/region is not launched into
				    * after a spot interruption notice (default 600; doubles on repeats) */
	int reconcile_interval;  /* ReconcileInterval= seconds between reconciler rounds (default 60; 0: off) */
	int cost_note_interval;  /* CostNoteInterval= seconds between a running job's cost notes (default 60; 0: off) */
	int orphan_grace;        /* OrphanGrace= seconds before an orphan instance is terminated (default 300) */
	int vanish_grace;        /* VanishGrace= seconds a node's instance may be missing (default 60) */
	int lease_timeout;       /* LeaseTimeout= seconds a dead active agent's lease lasts (default 5) */
	char *prolog_slurmctld;  /* PrologSlurmctld= the site's own, run first by ours (may be NULL) */
	bool early_launch;       /* EarlyLaunch= launch a job's nodes when it is allocated (default no;
				  * doc/compat.md "Launch at allocation"); NodeSet= lines override it */
	char *munge_socket;      /* MungeSocket= munged's socket for join reports (may be NULL:
				  * Slurm's AuthInfo socket=, else munge's default) */
	char *acceptance;        /* Acceptance= the acceptance.conf nodes run at join (NULL: none) */
	char *log_file;          /* LogFile= the agent's log: a path or "syslog" (may be NULL: stderr) */
	char *metrics_listen;    /* MetricsListen= ADDR:PORT as written (NULL: no metrics server) */
	char metrics_addr[64];   /* its IPv4 address */
	int metrics_port;
	struct cfg_provider *providers;
	size_t nproviders;
	struct cfg_contract *contracts;
	size_t ncontracts;
	struct cfg_nodeset *nodesets;
	size_t nnodesets;
	/* catalog overrides, applied by config_apply_catalog */
	struct cfg_override *overrides;
	size_t noverrides;
	/* the global admission policy (config_policy); NodeSet lines override it
	 * (a NodeSet's empty BlessedKernels= admits any kernel, the file's too) */
	char **blessed_kernels;      /* BlessedKernels= (NULL: not set, any kernel) */
	size_t nblessed_kernels;
	double memory_tolerance;     /* MemoryTolerance= (default 0.05) */
	char **required_modules;     /* RequiredModules= */
	size_t nrequired_modules;
	unsigned long long allowed_taint; /* AllowedTaint= (default POLICY_DEFAULT_TAINT: P, O, E) */
	char **blessed_drivers;      /* BlessedDrivers= NAME=VERSION,... (NULL: none blessed here) */
	size_t nblessed_drivers;
	struct cfg_budget *budgets;  /* Budget= lines */
	size_t nbudgets;
	bool budget_accounts_unenforced; /* BudgetAccountTrust=unenforced: Account= budgets without
					  * Slurm's association enforcement (the risk accepted, the
					  * agent checking each job's account itself) */
};

/*
 * Parse path (and what it includes). Returns a new config (free with
 * config_free) or NULL with err holding one line per error, each starting
 * "file:line: ". Only syntax and self-consistency are checked here;
 * config_check adds what needs the catalog.
 *
 * Without JoinListen=, the agent listens on the address of the first local
 * provider's bridge (Address=) when there is one, else on every address,
 * at JoinPort.
 */
struct burst_config *config_load(const char *path, burst_err_t *err);

/*
 * What one stopped instance of type (of provider, in region; may be NULL)
 * costs per hour: the last Price= line's Stopped= for it, else its disk
 * (the catalog's storage_size, else CONFIG_STOPPED_DEFAULT_DISK_GB) at
 * CONFIG_STOPPED_USD_PER_GB_MONTH. src (may be NULL) says which.
 */
double config_stopped_price(const struct burst_config *cfg, const struct catalog *cat,
			    const char *provider, const char *type, const char *region,
			    char *src, size_t srclen);

/* Whether a provider type's driver can stop and start its instances (a warm pool). */
bool config_driver_stops(const char *type);

/* Whether node set ns launches its nodes at allocation (EarlyLaunch=: its
 * own, else the global one). */
bool config_early_launch(const struct burst_config *cfg, const struct cfg_nodeset *ns);
void config_free(struct burst_config *cfg);

/* Add the local provider's detected local.host type (for each Provider of
 * Type=local), then apply InstanceType= and Price= lines to cat.
 * Returns 0 or -1 with err. */
int config_apply_catalog(const struct burst_config *cfg, struct catalog *cat,
			 burst_err_t *err);

/*
 * The candidates the configuration offers: for each node set, each type of
 * its providers allowed by InstanceTypes/Constraint, in each of its regions.
 * Returns a new candset or NULL with err (a node set with no candidate).
 */
struct candset *config_candidates(const struct burst_config *cfg,
				  const struct catalog *cat, burst_err_t *err);

/*
 * Full validation with the catalog: every contract resolves to at least one
 * candidate, node sets have candidates and do not overlap. Returns the
 * number of problems (0 = fine); each is appended to err as a line.
 */
/*
 * Whether going from the running configuration old to cfg (a reload) would
 * change what the agent's instances and state are known by: ClusterName
 * (the instances' tag), StateDir, SocketPath, JoinPort, a provider removed
 * or of another Type, a region dropped from a provider. The reconciler
 * would take every live instance so hidden for vanished and terminate it,
 * so such a change needs a restart. NULL if none, else why (in buf).
 */
const char *config_identity_change(const struct burst_config *old, const struct burst_config *cfg,
				   char *buf, size_t len);

/*
 * The agent's verdict on cfg, short of asking any cloud (burst-agent
 * refuses to start or reload on any problem; burstctl check-config prints
 * the same): a driver for every provider type, where each provider's
 * instances report (config_join_address) and that the agent listens there,
 * the local provider's bridge on this host, credentials files, instance
 * types, node sets with candidates, satisfiable contracts.
 */
int config_check(const struct burst_config *cfg, const struct catalog *cat,
		 burst_err_t *err);

/* The first Budget= line with an Account= (NULL: none). */
const struct cfg_budget *config_account_budget(const struct burst_config *cfg);

/*
 * Budgets by account against Slurm's accounting as sa says it is: a job's
 * account is the user's choice (sbatch --account), which slurmctld holds to
 * the user's associations only with AccountingStorageEnforce=associations
 * (or limits, qos, safe, wckeys, all) and slurmdbd. Without that (or when
 * sa could not be read), each Account= budget is a problem appended to err
 * ("file:line: Budget NAME: ..."), unless BudgetAccountTrust=unenforced
 * accepts the risk: then a warning is appended to warn instead (the agent
 * checks each job's account against slurmdbd's associations itself). No
 * slurmdbd at all is a problem either way: there is no association to
 * check an account against. Returns the number of problems.
 */
int config_check_budget_accounts(const struct burst_config *cfg, const struct slurm_acct *sa,
				 burst_err_t *err, burst_err_t *warn);

/* Whether burst-agent has a driver for provider type t. */
bool config_has_driver(const char *type);
/* The i-th provider type burst.conf knows (Type=), NULL past the last. */
const char *config_provider_type(size_t i);

/*
 * Where provider p's instances are told to send their join report
 * ("ADDR:PORT" into buf): its own JoinAddress=; for a local provider the
 * address of its bridge (Address=) at the port the agent listens on there;
 * the global JoinAddress=; the first JoinListen= address that is not the
 * wildcard. NULL when none applies (config_check says so).
 */
const char *config_join_address(const struct burst_config *cfg, const struct cfg_provider *p,
				char *buf, size_t len);

struct policy;
/*
 * The effective admission policy of node set ns (NULL: the global one): the
 * node set's BlessedKernels=, BlessedDrivers=, MemoryTolerance=,
 * RequiredModules= and AllowedTaint= where it sets them, else the global
 * ones. out's lists point into cfg (nothing allocated; valid while cfg is);
 * its blessed_extra and blessed_drivers_extra are left empty for the caller
 * (policy_load_state: StateDir/blessed-kernels and blessed-drivers).
 */
void config_policy(const struct burst_config *cfg, const struct cfg_nodeset *ns,
		   struct policy *out);

/* The named contract (case-sensitive, as Slurm feature names are). */
/* Where the on-demand price of type in region of provider (a Provider=
 * name) comes from: a Price= line ("Price= FILE:LINE") or the catalog
 * ("catalog"), into buf. */
const char *config_price_source(const struct burst_config *cfg, const char *provider, const char *type,
				const char *region, char *buf, size_t len);

const struct cfg_contract *config_find_contract(const struct burst_config *cfg,
						const char *name);
/* Nearest contract name to name, or NULL. */
const char *config_suggest_contract(const struct burst_config *cfg, const char *name);

#endif

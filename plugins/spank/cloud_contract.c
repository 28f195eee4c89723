/*
 * cloud_contract.c - the SPANK plugin behind --cloud-contract.
 *
 * plugstack.conf:
 *   required /usr/lib/slurm-burst/spank_cloud_contract.so conf=/etc/slurm/burst.conf
 *
 * Allocator and local contexts (sbatch, salloc, srun): the option's value,
 * a contract name from burst.conf or an inline expression, is matched
 * against the configured node sets before anything reaches slurmctld. A
 * contract no node set can serve fails the submission with a message that
 * says why. On success the decision goes into the job-control environment
 * (CLOUD_CONTRACT, CLOUD_CONTRACT_NAME, CLOUD_NODESETS, CLOUD_FEATURES,
 * CLOUD_PARTITIONS), where contrib/job_submit.lua reads it.
 *
 * Remote context (slurmstepd): CLOUD_CONTRACT and the node's admission
 * record (CLOUD_PROVIDER, CLOUD_INSTANCE_TYPE, CLOUD_INSTANCE_ID,
 * CLOUD_PROVENANCE_ID, ...) are exported into the tasks.
 *
 * Job prolog: the node-side admission check is spank_burst_admission.so's
 * (burst_admission.c), a plugin of its own so that nodes that are not burst
 * nodes do not pay for a job prolog.
 *
 * This file links libc only: the decision itself is the module
 * cloud_contract_decide.so beside it, loaded when the option is given
 * (cloud_contract_decide.h).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "cloud_contract_decide.h"
#include "plugstack_args.h"

SPANK_PLUGIN(cloud_contract, 1);

#define PREFIX "cloud_contract: "

static struct plugstack_args args;
static char *contract_arg;
static struct cloud_contract_decided decision;
static bool decided;
static void *decide_module;               /* dlopen handle of cloud_contract_decide.so */
static cloud_contract_decide_fn decide_fn;

static int opt_contract(int val, const char *optarg, int remote);

static struct spank_option contract_option = {
	"cloud-contract", "NAME|EXPR",
	/* two lines in sbatch --help (Slurm wraps at 50 columns, breaking
	   words; every line is one more write and word-wrapping pass in every
	   --help): the expressions are in burstctl(8) */
	"Run on cloud nodes that satisfy a contract: a name "
	"in burst.conf or an expression (see burstctl(8))",
	1, 0, opt_contract
};

static void decision_free(void)
{
	if (decided) {
		free(decision.contract);
		free(decision.name);
		free(decision.nodesets);
		free(decision.features);
		free(decision.partitions);
	}
	decision = (struct cloud_contract_decided){ 0 };
	decided = false;
}

/* (at slurm_spank_init, with nothing held, it calls no libc function:
 * each first call costs the command a symbol lookup) */
static void reset(void)
{
	plugstack_args_clear(&args);
	if (contract_arg)
		free(contract_arg);
	contract_arg = NULL;
	decision_free();
	if (decide_module)
		dlclose(decide_module);
	decide_module = NULL;
	decide_fn = NULL;
}

/*
 * cloud_contract_decide.so, from the directory this plugin was loaded from
 * (Slurm gives dlopen the full path: plugstack.conf's, or PluginDir's), or
 * from the directory it was installed in when that path has no directory.
 */
static cloud_contract_decide_fn load_decide(void)
{
	union { void *p; cloud_contract_decide_fn fn; } sym;
	char path[4096];
	const char *self = NULL, *slash = NULL;
	Dl_info info;

	if (decide_fn)
		return decide_fn;
	if (dladdr((void *)&opt_contract, &info) && info.dli_fname) {
		self = info.dli_fname;
		slash = strrchr(self, '/');
	}
	if (slash)
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - self), self, CLOUD_CONTRACT_DECIDE_SO);
	else
		snprintf(path, sizeof(path), "%s/%s", BURST_SPANK_PLUGINDIR, CLOUD_CONTRACT_DECIDE_SO);
	decide_module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!decide_module) {
		slurm_error(PREFIX "cannot load %s (%s), so --cloud-contract cannot be checked; tell your administrator: it is installed beside %s, from the same slurm-burst build",
			    path, dlerror(), self ? self : "spank_cloud_contract.so");
		return NULL;
	}
	sym.p = dlsym(decide_module, CLOUD_CONTRACT_DECIDE_SYM);
	if (!sym.p) {
		slurm_error(PREFIX "%s has no %s, so --cloud-contract cannot be checked; tell your administrator: it is not from the same slurm-burst build as %s",
			    path, CLOUD_CONTRACT_DECIDE_SYM, self ? self : "spank_cloud_contract.so");
		dlclose(decide_module);
		decide_module = NULL;
		return NULL;
	}
	return decide_fn = sym.fn;
}

/* Resolve the contract now, so that a bad one fails the submission. */
static int decide(const char *arg)
{
	cloud_contract_decide_fn fn = load_decide();
	char msg[8192];

	decision_free();
	if (!fn)
		return -1;
	if (fn(args.conf, args.catalog_dir, arg, &decision, msg, sizeof(msg)) < 0) {
		slurm_error(PREFIX "%s", msg);
		return -1;
	}
	decided = true;
	if (decision.whole)
		slurm_debug(PREFIX "--cloud-contract=%s: decided over the whole catalog", arg);
	return 0;
}

static int opt_contract(int val, const char *optarg, int remote)
{
	(void)val;
	free(contract_arg);
	if (!(contract_arg = strdup(optarg ? optarg : ""))) {
		slurm_error(PREFIX "out of memory");
		return -1;
	}
	if (remote)
		return 0;
	/*
	 * srun inside an allocation makes a step, not a job: the job's contract
	 * was decided when it was submitted, and the step inherits the option
	 * from the job's environment. Nothing to decide, and nothing to read:
	 * a burst node need not have burst.conf or the catalog.
	 */
	if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID")) {
		slurm_debug(PREFIX "srun in job %s: a step runs on the job's allocation; --cloud-contract=%s not decided again",
			    getenv("SLURM_JOB_ID"), contract_arg);
		return 0;
	}
	/* sbatch, salloc and srun: check it here, before submission */
	if (spank_context() == S_CTX_ALLOCATOR || spank_context() == S_CTX_LOCAL)
		return decide(contract_arg);
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	reset();
	if (plugstack_args_parse(&args, ac, av, 1, PREFIX) < 0)
		return -1;
	if (spank_option_register(sp, &contract_option) != ESPANK_SUCCESS) {
		slurm_error(PREFIX "cannot register --cloud-contract");
		return -1;
	}
	return 0;
}

static int setenv_ctl(spank_t sp, const char *name, const char *value)
{
	if (!value)
		return 0;
	if (spank_job_control_setenv(sp, name, value, 1) != ESPANK_SUCCESS) {
		slurm_error(PREFIX "cannot record %s for the job", name);
		return -1;
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_ALLOCATOR && spank_context() != S_CTX_LOCAL)
		return 0;
	if (!contract_arg || !decided)
		return 0;
	if (setenv_ctl(sp, "CLOUD_CONTRACT", decision.contract) < 0 ||
	    setenv_ctl(sp, "CLOUD_CONTRACT_NAME", decision.name) < 0 ||
	    setenv_ctl(sp, "CLOUD_NODESETS", decision.nodesets) < 0 ||
	    setenv_ctl(sp, "CLOUD_FEATURES", decision.features) < 0 ||
	    setenv_ctl(sp, "CLOUD_PARTITIONS", decision.partitions) < 0)
		return -1;
	return 0;
}

/*
 * The node's admission record (written by burst-node join when the agent
 * admitted the node; its path is in slurmd's environment, which slurmstepd
 * inherits): CLOUD_PROVIDER, CLOUD_INSTANCE_TYPE, CLOUD_INSTANCE_ID, ...
 * Only CLOUD_* keys are exported.
 */
static void export_admission(spank_t sp)
{
	const char *path = getenv("BURST_ADMISSION");
	char line[1024];
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		size_t n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!eq || strncmp(line, "CLOUD_", 6) != 0)
			continue;
		*eq = '\0';
		spank_setenv(sp, line, eq + 1, 1);
	}
	fclose(f);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char buf[4096];

	(void)ac;
	(void)av;
	if (!spank_remote(sp))
		return 0;
	if (spank_getenv(sp, "SLURM_SPANK_CLOUD_CONTRACT", buf, sizeof(buf)) == ESPANK_SUCCESS)
		spank_setenv(sp, "CLOUD_CONTRACT", buf, 1);
	export_admission(sp);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	reset();
	return 0;
}

/*
 * Slurm looks up every SPANK hook (and a plugin's init and fini) with
 * dlsym in each sbatch, salloc, srun, slurmd and slurmstepd that loads the
 * plugin (plugstack.c spank_syms[], plugin.c plugin_load_from_file and
 * plugin_unload, 22.05 to 24.11). A missing one costs a failed lookup,
 * which glibc reports by building an error message: `sbatch --help` with
 * this plugin ran 7.4k fewer instructions (callgrind, of 83k over sbatch
 * without a plugin) once none was missing. So the hooks this plugin has no
 * use for are here, and do nothing. Not the job prolog and epilog: a
 * plugin that has one makes slurmd run a `slurmstepd spank prolog`
 * (epilog) for every job (spank_has_prolog()); burst nodes get theirs from
 * spank_burst_admission.so.
 */
#define SPANK_NOTHING(hook)                                     \
	int hook(spank_t sp, int ac, char **av)                 \
	{                                                       \
		(void)sp;                                       \
		(void)ac;                                       \
		(void)av;                                       \
		return 0;                                       \
	}
SPANK_NOTHING(slurm_spank_local_user_init)
SPANK_NOTHING(slurm_spank_user_init)
SPANK_NOTHING(slurm_spank_task_init_privileged)
SPANK_NOTHING(slurm_spank_task_post_fork)
SPANK_NOTHING(slurm_spank_task_exit)
SPANK_NOTHING(slurm_spank_slurmd_exit)

int init(void);
int fini(void);
int init(void)
{
	return 0;
}
int fini(void)
{
	return 0;
}

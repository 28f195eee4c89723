/*
 * policy.h - the admission policy (doc/design.md §8): is a node, as its provenance
 * record (lib/admit/provenance.h) describes it, one we admit into the cluster?
 *
 * The policy comes from burst.conf (global keys, overridden per NodeSet; see
 * config_policy in config.h) plus StateDir/blessed-kernels, the kernels that
 * `burstctl bless` added. The check is a pure function of the policy, the
 * catalog's promise for the instance type and the RECORDED facts.
 */
#ifndef BURST_POLICY_H
#define BURST_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "burst_err.h"
#include "catalog.h"

/* Kernel taint bits (Documentation/admin-guide/tainted-kernels.rst). */
#define POLICY_TAINT_P (1ULL << 0)    /* proprietary module loaded (NVIDIA's) */
#define POLICY_TAINT_O (1ULL << 12)   /* out-of-tree module loaded (DKMS) */
#define POLICY_TAINT_E (1ULL << 13)   /* unsigned module loaded */
/*
 * The default AllowedTaint: P, O and E, the bits a node gets from loading the
 * NVIDIA driver (proprietary, built out of tree by DKMS, unsigned) or another
 * vendor module (EFA, Lustre). Every other bit says something went wrong
 * (W a kernel warning, D an oops, M a machine check, L a soft lockup...) or
 * that the kernel was forced (F, R), and rejects the node.
 */
#define POLICY_DEFAULT_TAINT (POLICY_TAINT_P | POLICY_TAINT_O | POLICY_TAINT_E)
#define POLICY_DEFAULT_MEMORY_TOLERANCE 0.05
#define POLICY_MAX_DRIVER_VERSION 64      /* = PROVENANCE_MAX_VERSION */

struct policy {
	/* RELEASE[:BUILDID] entries; when both lists are empty any kernel is admitted,
	 * else only a kernel one of them names (release exact, build-id if given,
	 * case-insensitive) */
	char **blessed_kernels;          /* burst.conf BlessedKernels= */
	size_t nblessed;
	double memory_tolerance;         /* recorded MemTotal may be this fraction below the type's memory */
	char **required_modules;         /* kernel modules that must be loaded */
	size_t nrequired;
	unsigned long long allowed_taint; /* taint bits allowed (mask) */
	char **blessed_extra;            /* StateDir/blessed-kernels (may be NULL) */
	size_t nblessed_extra;
	bool any_kernel;                 /* a node set's empty BlessedKernels=: every kernel,
					  * whatever the global list and the file say */
	/* NAME=VERSION entries: a driver module (the record's "drivers") that
	 * has a blessed version in either list must run one of them; a module
	 * without any blessed version runs any */
	char **blessed_drivers;          /* burst.conf BlessedDrivers= */
	size_t nblessed_drivers;
	char **blessed_drivers_extra;    /* StateDir/blessed-drivers (may be NULL) */
	size_t nblessed_drivers_extra;
	bool any_driver;                 /* a node set's empty BlessedDrivers=: every driver */
};

/*
 * How the agent uses it at join, for a node of node set ns launched as type:
 *
 *	struct policy p;
 *	char **extra = NULL, why[1024];
 *	size_t nextra = 0;
 *	config_policy(cfg, ns, &p);
 *	if (policy_load_blessed_file(StateDir "/blessed-kernels", &extra, &nextra, &err) < 0)
 *		... log err.msg (a broken file blesses nothing more) ...
 *	p.blessed_extra = extra;
 *	p.nblessed_extra = nextra;
 *	rc = policy_check(&p, cat, type, record, why, sizeof(why));
 *	policy_free_list(extra, nextra);
 *
 * or, for both files of StateDir (blessed-kernels, blessed-drivers):
 *
 *	config_policy(cfg, ns, &p);
 *	if (policy_load_state(&p, cfg->state_dir, &err) < 0)
 *		... log err.msg ...
 *	rc = policy_check(&p, cat, type, record, why, sizeof(why));
 *	policy_free_state(&p);
 */

/* A policy with the defaults: any kernel, 5% memory tolerance, no required
 * module, taint P, O and E allowed. Nothing allocated. */
void policy_init(struct policy *p);

/*
 * Check a node's record against the policy and against the instance type it
 * was launched as (type may be NULL: no hardware check): the recorded
 * accelerators must include the type's count of its model, the recorded
 * logical CPUs must be at least its vCPUs, and the recorded MemTotal at least
 * its memory less the tolerance. Values the catalog does not know are not
 * checked; a record without the taint value is rejected (unless
 * allowed_taint is ~0), one without the module list only when modules are
 * required. Returns 0 admit, 1 reject (why: every reason, "; "-separated,
 * each naming what was expected and what was found), -1 when the record is
 * malformed (not an object, or no kernel/cpu/memory/accelerators section;
 * why says which).
 */
int policy_check(const struct policy *p, const struct catalog *cat, const struct cat_type *type,
		 json_object *record, char *why, size_t whylen);

/*
 * The driver part of policy_check alone (the health check holds a node's
 * record now against it): every module of the record's "drivers" section
 * that has blessed versions must run one of them. Returns 0 admit, 1 reject
 * (why: "driver NAME VERSION is not blessed (blessed: ...)" per driver,
 * "; "-separated), never -1: a record without a drivers section is
 * rejected only when some driver is blessed.
 */
int policy_check_drivers(const struct policy *p, json_object *record, char *why, size_t whylen);

/*
 * Compare a node now with the record it was admitted with (both provenance
 * records): the kernel release or build-id changed, fewer accelerators of a
 * model than admitted (naming the PCI addresses gone), or MemTotal shrunk by
 * more than tolerance (a fraction) of the admitted one. Returns 0 the same,
 * 1 changed (why: every change, "; "-separated, each starting with what
 * changed: "kernel release ...", "kernel build-id ...", "accelerators ...",
 * "memory ...", "driver NAME V1 admitted, V2 now" or "..., not loaded now"
 * when the admitted record has a drivers section), -1 malformed (why says
 * which record lacks what).
 */
int policy_compare(json_object *admitted, json_object *now, double tolerance, char *why,
		   size_t whylen);

/* Does release/build_id match the entry "RELEASE[:BUILDID]"? */
bool policy_kernel_matches(const char *entry, const char *release, const char *build_id);

/*
 * Parse MemoryTolerance: "5%" or a fraction "0.05", from 0 to below 1.
 * Returns 0, or -1 when s is not one.
 */
int policy_parse_tolerance(const char *s, double *out);

/*
 * Parse AllowedTaint: kernel taint letters ("POE"), "none", or a number
 * (decimal or 0x hex mask). Returns 0, or -1 with *bad the offending letter
 * (0 when the whole word is wrong).
 */
int policy_parse_taint(const char *s, unsigned long long *out, char *bad);

/* Is entry a well-formed RELEASE[:BUILDID] (release: no blanks, ':' or '#';
 * build-id: hex digits)? */
bool policy_valid_kernel(const char *entry);

/*
 * Append the entries of a blessed-kernels file (one RELEASE[:BUILDID] per
 * line; blank lines and '#' comments ignored) to *list / *n, which the caller
 * owns and frees with policy_free_list (start from NULL / 0). A file that
 * does not exist adds nothing. Returns 0, or -1 with err naming file:line
 * (nothing appended then).
 */
int policy_load_blessed_file(const char *path, char ***list, size_t *n, burst_err_t *err);

void policy_free_list(char **list, size_t n);

/* Is entry a well-formed NAME=VERSION (name: a kernel module name, letters,
 * digits, _ and -; version: 1 to 64 letters, digits and ._-+~:)? */
bool policy_valid_driver(const char *entry);

/* As policy_load_blessed_file, for a blessed-drivers file (one NAME=VERSION
 * per line). */
int policy_load_blessed_drivers(const char *path, char ***list, size_t *n, burst_err_t *err);

/*
 * Load StateDir/blessed-kernels and StateDir/blessed-drivers into
 * p->blessed_extra and p->blessed_drivers_extra (release them with
 * policy_free_state). A file that does not exist blesses nothing; a broken
 * one blesses nothing and makes this return -1 with err naming file:line
 * (the other file is still loaded).
 */
int policy_load_state(struct policy *p, const char *state_dir, burst_err_t *err);
void policy_free_state(struct policy *p);

#endif

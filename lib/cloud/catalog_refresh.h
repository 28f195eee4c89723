/*
 * catalog_refresh.h - refresh a provider's catalog CSV (share/catalog/aws.csv)
 * from EC2's DescribeInstanceTypes (burstctl catalog refresh).
 *
 * The CSV is kept as text, row by row, so that what the refresh does not
 * touch is written back byte for byte. Each instance type EC2 describes is
 * mapped to the catalog's canonical cells (catref_map), then merged into the
 * table (catref_merge) under these rules:
 *
 *   - EC2 is authoritative for what it sells: vcpus, memory_mib,
 *     accelerator_count, processor_isa, storage_type, storage_gib,
 *     network_gbps and efa replace the row's value when EC2 gives one.
 *   - The curated facts win where EC2's answer is not canonical: the
 *     accelerator model, type, manufacturer, architecture and per-device
 *     memory, the processor and its microarchitecture and manufacturer are
 *     only filled in when the row has none; a disagreement is reported
 *     ("kept"), not applied. (EC2 names an A100 without its memory size and
 *     gives usable, not installed, GPU memory: 22888 MiB for an A10G.)
 *   - EC2 says nothing of FPGAs and some accelerators: a row with a non-GPU
 *     accelerator keeps it when EC2 reports none.
 *   - A canonical accelerator model is found in the catalog's own model
 *     table (the models of its rows): the name compared without case,
 *     spaces and dashes, else NAME-<variant> picked by per-device memory; its
 *     type, manufacturer, architecture and memory come from the table. A
 *     model the table lacks keeps EC2's name and memory, architecture unknown.
 *   - Types EC2 has and the catalog lacks are added (source "aws-api");
 *     types the catalog has and EC2 lacks are reported as missing and kept,
 *     or dropped with drop_missing. A changed row's source gains "+api".
 *   - EFA support is an extra column "efa" (yes/no), added before "source"
 *     when the file has none; the catalog loader reads columns by name and
 *     ignores it (it is not a contract key).
 *   - When anything changed, the "# version=" line becomes
 *     "# version=YYYY.MM.DD-api" (UTC) and a "# refreshed ..." line says
 *     from what; the catalog's checksum is the sha256 of its files, so it
 *     follows by itself.
 */
#ifndef BURST_CATALOG_REFRESH_H
#define BURST_CATALOG_REFRESH_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"
#include "catalog.h"
#include "ec2.h"

/* The canonical columns a refresh maps (CSV header names in catref_col_name). */
enum catref_col {
	CATREF_VCPUS, CATREF_MEMORY, CATREF_ACC_COUNT, CATREF_ACC, CATREF_ACC_TYPE,
	CATREF_ACC_MANUFACTURER, CATREF_ACC_ARCH, CATREF_ACC_MEMORY, CATREF_PROCESSOR,
	CATREF_PROC_MANUFACTURER, CATREF_PROC_UARCH, CATREF_ISA, CATREF_STORAGE_TYPE,
	CATREF_STORAGE_GIB, CATREF_NETWORK, CATREF_EFA,
	CATREF_NCOLS
};

const char *catref_col_name(enum catref_col c);

/* A catalog CSV as text. */
struct catref_table {
	char **comments;         /* lines before the header, without newline */
	size_t ncomments;
	char **cols;             /* header cells */
	size_t ncols;
	char ***rows;            /* rows[i][k]: cell k of row i */
	size_t nrows;
};

/* Read path into t (free with catref_table_free). 0, or -1 with err (file:line). */
int catref_read(const char *path, struct catref_table *t, burst_err_t *err);
void catref_table_free(struct catref_table *t);

/*
 * Write t to path atomically: a temporary file in path's directory, fsync,
 * rename over path, fsync of the directory. Nothing half-written is ever
 * at path. 0, or -1 with err (and the temporary file removed).
 */
int catref_write(const char *path, const struct catref_table *t, burst_err_t *err);

/*
 * The canonical cells of EC2's description of one type: cells[c] is a
 * malloc'ed string ("" when EC2 says nothing); free with catref_cells_free.
 * cat gives the model table. A remark for the admin (a model the table
 * lacks) goes to note ("" when none).
 */
void catref_map(const struct ec2_instance_type *it, const struct catalog *cat,
		char *cells[CATREF_NCOLS], char *note, size_t notelen);
void catref_cells_free(char *cells[CATREF_NCOLS]);

/* "Up to 12.5 Gigabit" -> "12.5", "4x 100 Gigabit" -> "400", "Low" -> "" (buf). */
const char *catref_network_gbps(const char *perf, char *buf, size_t len);

struct catref_diff {
	char *type, *col, *old, *new_;
};

/* What a merge did. Free with catref_report_free. */
struct catref_report {
	char **added;            /* type names */
	size_t nadded;
	struct catref_diff *changed;   /* applied: old -> new */
	size_t nchanged;
	struct catref_diff *kept;      /* EC2 disagrees; the catalog's value kept (old), EC2's (new_) */
	size_t nkept;
	char **missing;          /* in the catalog, not in EC2's answer */
	size_t nmissing;
	bool dropped;            /* ... and removed (drop_missing) */
	size_t unchanged;        /* rows EC2 describes that did not change */
	bool efa_added;          /* the table had no efa column: added and filled */
	char **notes;            /* remarks (models the table lacks) */
	size_t nnotes;
	char *old_version, *new_version;
};

void catref_report_free(struct catref_report *r);

struct catref_merge_opts {
	bool drop_missing;
	const char *provider;    /* for the "# refreshed" line */
	const char *region;
	const char *version;     /* NULL: today's UTC date + "-api" */
	const char *source;      /* the source cell of added rows (NULL: "aws-api") */
	const char *api;         /* what answered, for the "# refreshed" line (NULL: EC2's DescribeInstanceTypes) */
};

/*
 * Merge EC2's answer into t by the rules above, filling rep. 0, or -1 with
 * err (a table without an instance_type column).
 */
int catref_merge(struct catref_table *t, const struct ec2_instance_types *api,
		 const struct catalog *cat, const struct catref_merge_opts *o,
		 struct catref_report *rep, burst_err_t *err);

#endif

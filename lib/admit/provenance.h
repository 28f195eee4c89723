/*
 * provenance.h - the node provenance record (doc/design.md §8).
 *
 * A JSON object describing what a node is: identity (from the caller),
 * kernel, the versions of the driver modules HPC jobs depend on (GPU,
 * RDMA/fabric, parallel file system clients: "drivers", NAME -> {version,
 * source}), firmware (DMI), OS, CPU, memory, accelerators (PCI, mapped to
 * canonical models by share/pci/accelerators.csv), InfiniBand ports and
 * software versions (packages, the container runtime). Every file is read under a root prefix (the sysroot),
 * so the same code runs on a live node ("/") and on captured trees.
 * A missing file gives null (or an absent list entry), never an error.
 *
 * The canonical serialization has sorted keys and fixed formatting; the
 * provenance id is the sha256 (lower-case hex) of its compact form.
 */
#ifndef BURST_PROVENANCE_H
#define BURST_PROVENANCE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "burst_err.h"

struct prov_opts {
	/* identity: copied into the record, null when NULL */
	const char *node, *instance_id, *instance_type, *provider, *region, *image,
		*catalog_version;
	/* the accelerator table (CSV vendor,device,model,architecture,memory_mib,source);
	 * NULL: $BURST_PCI_TABLE, else the source tree's when running from the
	 * build tree, else BURST_PKGDATADIR/pci/accelerators.csv */
	const char *pci_table;
};

/*
 * Collect the record of the node whose files are under sysroot ("/" or NULL
 * for this machine). Programs (ch-run --version, slurmd -V) are run only when
 * sysroot is "/"; otherwise their entries are null. On success *out is a new
 * object the caller releases with json_object_put(). Fails (-1, err set) when
 * the sysroot or the accelerator table cannot be read.
 */
int provenance_collect(const char *sysroot, const struct prov_opts *o, json_object **out,
		       burst_err_t *err);

/*
 * The canonical serialization of v: object keys sorted bytewise, integers in
 * decimal, strings escaped per RFC 8259 (\" \\ \b \f \n \r \t, other control
 * characters as \u00XX, invalid UTF-8 bytes as \ufffd, everything else as is).
 * pretty: two-space indentation, one member or element per line, ": " after
 * keys; compact: no white space at all. No trailing newline.
 * Returns an allocated string the caller frees.
 */
char *provenance_serialize(json_object *v, bool pretty);

/* The provenance id: sha256 hex (64 lower-case characters) of the compact
 * canonical serialization. Allocated; the caller frees. */
char *provenance_id(json_object *rec);

/*
 * The GNU build-id (NT_GNU_BUILD_ID, name "GNU") found in an ELF note stream
 * such as /sys/kernel/notes, as lower-case hex. Returns an allocated string
 * (caller frees), or NULL when there is none or the stream is malformed.
 */
char *provenance_build_id(const unsigned char *notes, size_t len);

/* Limits on what a driver version file may be (bytes); see below. */
#define PROVENANCE_MAX_VERSION 64           /* a version string */
#define PROVENANCE_MAX_VERSION_FILE 256     /* /sys/module/NAME/version, version.txt */
#define PROVENANCE_MAX_NVRM_FILE 4096       /* /proc/driver/nvidia/version */

/*
 * The version in the contents of a one-line version file
 * (/sys/module/NAME/version: "550.54.15\n", "2.17.3g", "23.10-1.1.9"):
 * one word of letters, digits and ._-+~: at most PROVENANCE_MAX_VERSION
 * long, blanks around it and one line end allowed, nothing else (a second
 * line, a NUL, other bytes, a file over PROVENANCE_MAX_VERSION_FILE: NULL).
 * Returns an allocated string (caller frees) or NULL.
 */
char *provenance_parse_version(const char *data, size_t len);

/*
 * The NVIDIA kernel module's version from /proc/driver/nvidia/version: in
 * the line starting "NVRM version:", the first blank-separated word made of
 * digits and dots ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
 * 550.54.15  Tue Mar  5 ..." gives "550.54.15"). NULL when there is no such
 * line or word, or the line holds a NUL. Allocated; the caller frees.
 */
char *provenance_parse_nvrm(const char *data, size_t len);

/* The kernel modules whose versions the record's "drivers" section holds
 * (NULL-terminated). */
const char *const *provenance_driver_modules(void);

/* The letters of the kernel taint flags set in mask (bit 0 'P', 1 'F', ...,
 * per the kernel's Documentation/admin-guide/tainted-kernels.rst), in bit
 * order, into buf (at least 33 bytes). Returns buf. */
char *provenance_taint_flags(unsigned long long mask, char *buf);

#endif

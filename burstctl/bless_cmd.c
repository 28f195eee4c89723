/*
 * bless_cmd.c - burstctl bless: which kernels and driver versions the
 * admission policy admits.
 *
 *   burstctl bless --kernel RELEASE[:BUILDID]
 *       add the kernel to StateDir/blessed-kernels (atomically; no duplicate)
 *   burstctl bless --driver NAME=VERSION
 *       add the driver version to StateDir/blessed-drivers (the same way):
 *       from then on a node running driver module NAME must run a blessed
 *       version of it
 *   burstctl bless --from NODE
 *       add the kernel (release and build-id) of NODE's latest admitted
 *       record in the agent's database, StateDir/agent.db (read-only)
 *   burstctl bless --from-report DIR [--require-suites LIST] [--unverified]
 *                  [--max-file-mib N] [--max-files N] [--max-cases N]
 *       add the kernels and driver versions of a green CI run: DIR holds
 *       the job's artifacts (contrib/gitlab-ci's node acceptance job: JUnit
 *       reports and provenance-NODE.json); refused when a test failed or
 *       errored, when a record's node did not pass a case of each required
 *       suite (a skipped case is no pass), and when a record is not one the
 *       agent admitted its node with (its provenance id is not in agent.db),
 *       unless --unverified
 *   burstctl bless --list
 *       every blessed kernel and driver: burst.conf's BlessedKernels= and
 *       BlessedDrivers= (global and per node set) and the files
 *
 * StateDir is burst.conf's (--config, $BURST_CONF, else the default path if
 * present), or --state-dir.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "bless_cmd.h"
#include "bless_report.h"
#include "state.h"
#include "views.h"
#include "verb.h"
#include "config.h"
#include "policy.h"
#include "strutil.h"
#include "syncdir.h"

#define EXIT_OK 0
#define EXIT_NONE 1
#define EXIT_USAGE 2

/* what a blessed-* file holds */
struct kind {
	const char *file;        /* in StateDir */
	const char *what;        /* "kernel", "driver" */
	int (*load)(const char *, char ***, size_t *, burst_err_t *);
	int (*cmp)(const char *, const char *);   /* same entry? (0) */
	const char *header;
};

static const struct kind KERNELS = {
	"blessed-kernels", "kernel", policy_load_blessed_file, strcasecmp,
	"# Kernels admitted by slurm-burst besides burst.conf's BlessedKernels=:\n"
	"# RELEASE[:BUILDID], one per line. Written by burstctl bless.\n",
};

static const struct kind DRIVERS = {
	"blessed-drivers", "driver", policy_load_blessed_drivers, strcmp,
	"# Driver versions admitted by slurm-burst besides burst.conf's BlessedDrivers=:\n"
	"# NAME=VERSION, one per line; a node running module NAME must run one of\n"
	"# its blessed versions. Written by burstctl bless.\n",
};

const char bless_cmd_usage[] =
"  bless --kernel RELEASE[:BUILDID] | --driver NAME=VERSION | --from NODE\n"
"        | --from-report DIR [--require-suites LIST] [--unverified] | --list\n"
"                           bless a kernel (StateDir/blessed-kernels) or a driver\n"
"                           version (StateDir/blessed-drivers) for admission: as\n"
"                           given, the kernel NODE's admitted record names, or the\n"
"                           kernels and drivers of a green CI run's artifacts in DIR\n"
"                           (each record's node passed every required suite, and the\n"
"                           record is one the agent admitted, or --unverified)\n";

static const char *prog = "burstctl bless";

/* The state directory: --state-dir, else burst.conf's StateDir. Returns an
 * allocated string, or NULL after a message. *cfg_out gets the config (or
 * NULL when there is no burst.conf). */
static char *state_dir(const char *config, const char *explicit_dir, struct burst_config **cfg_out)
{
	const char *path = config;
	burst_err_t err;

	*cfg_out = NULL;
	if (!path) {
		const char *env = getenv("BURST_CONF");
		path = env && *env ? env : access("/etc/slurm/burst.conf", R_OK) == 0 ?
		       "/etc/slurm/burst.conf" : NULL;
	}
	if (path) {
		*cfg_out = config_load(path, &err);
		if (!*cfg_out) {
			fprintf(stderr, "%s\n%s: %s has errors (fix them, then run burstctl check-config)\n",
				err.msg, prog, path);
			return NULL;
		}
	}
	if (explicit_dir)
		return xstrdup(explicit_dir);
	return xstrdup(*cfg_out ? (*cfg_out)->state_dir : BURST_DEFAULT_STATE_DIR);
}

/* The whole of an existing file (NULL and *missing when there is none). */
static char *slurp(const char *path, bool *missing)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	*missing = false;
	if (!f) {
		*missing = errno == ENOENT;
		return NULL;
	}
	sb_init(&sb);
	sb_add(&sb, "");
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
		buf[n] = '\0';
		sb_add(&sb, buf);
	}
	if (ferror(f)) {
		fclose(f);
		sb_free(&sb);
		return NULL;
	}
	fclose(f);
	return sb_take(&sb);
}

/*
 * Append entry to dir/K->file unless it is there: under an exclusive lock
 * (dir/K->file.lock), write a temporary file with the old contents and the
 * new line, fsync, chmod 0644, rename over the file, fsync the directory.
 * configured: burst.conf blesses some already (for a driver: some version
 * of this driver), so blessing this one restricts nothing new. Returns
 * EXIT_OK (also when already blessed) or EXIT_USAGE.
 */
static int bless_entry(const struct kind *K, const char *dir, const char *entry, const char *note,
		       bool configured)
{
	char path[PATH_MAX], lock[PATH_MAX], why[PATH_MAX + 300];
	struct file_replace fr;
	char **list = NULL, *old = NULL;
	size_t n = 0, i;
	burst_err_t err;
	bool missing;
	int lfd = -1, rc = EXIT_USAGE;

	size_t before = 0, namelen = K == &DRIVERS ? strcspn(entry, "=") + 1 : 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, K->file) >= (int)sizeof(path) ||
	    snprintf(lock, sizeof(lock), "%s/%s.lock", dir, K->file) >= (int)sizeof(lock)) {
		fprintf(stderr, "%s: state directory path too long: %s\n", prog, dir);
		return EXIT_USAGE;
	}
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		fprintf(stderr, "%s: cannot lock %s: %s (is StateDir=%s right, and are you root?)\n",
			prog, lock, strerror(errno), dir);
		goto out;
	}
	if (K->load(path, &list, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (!namelen || !strncmp(list[i], entry, namelen))
			before++;
	for (i = 0; i < n; i++)
		if (!K->cmp(list[i], entry)) {
			printf("%s is already blessed (%s)\n", entry, path);
			rc = EXIT_OK;
			goto out;
		}
	old = slurp(path, &missing);
	if (!old && !missing) {
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	/* a reader (the agent, burstctl) sees the old list or the new one */
	if (replace_open(&fr, path, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, why);
		goto out;
	}
	if (old)
		fputs(old, fr.f);
	else
		fputs(K->header, fr.f);
	if (old && *old && old[strlen(old) - 1] != '\n')
		fputc('\n', fr.f);
	fprintf(fr.f, "%s%s%s\n", entry, note ? "  # " : "", note ? note : "");
	/* readable by all whatever the umask, as the agent's other files */
	if (replace_commit(&fr, ferror(fr.f) || fchmod(fileno(fr.f), 0644) < 0, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, why);
		goto out;
	}
	printf("blessed %s (%s)\n", entry, path);
	if (!before && !configured && K == &KERNELS)
		printf("note: no kernel was blessed before, so any kernel was admitted; from now on only "
		       "blessed kernels are (a node set with an empty BlessedKernels= still admits any)\n");
	else if (!before && !configured)
		printf("note: no version of driver %.*s was blessed before, so any was admitted; from now on "
		       "only blessed versions are (a node set with an empty BlessedDrivers= still admits any)\n",
		       (int)namelen - 1, entry);
	rc = EXIT_OK;
out:
	if (lfd >= 0)
		close(lfd);
	free(old);
	policy_free_list(list, n);
	return rc;
}

/* The kernel of node's latest admitted record in dir/agent.db as
 * RELEASE[:BUILDID] (allocated), or NULL after a message. */
static char *kernel_of(const char *dir, const char *node)
{
	char path[PATH_MAX];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	json_object *rec = NULL, *k;
	char *out = NULL;
	const char *release, *build_id;
	int rc;

	snprintf(path, sizeof(path), "%s/agent.db", dir);
	if (access(path, R_OK) < 0) {
		fprintf(stderr, "%s: cannot read the agent's database %s: %s\n", prog, path, strerror(errno));
		return NULL;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT record FROM records WHERE node=? AND decision='admitted'"
			       " ORDER BY id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, db ? sqlite3_errmsg(db) : "cannot open");
		goto out;
	}
	sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		fprintf(stderr, "%s: %s has no admitted record of node %s (burstctl bless --kernel RELEASE[:BUILDID] blesses one by hand)\n",
			prog, path, node);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, sqlite3_errmsg(db));
		goto out;
	}
	rec = json_tokener_parse((const char *)sqlite3_column_text(st, 0));
	if (!rec || !json_object_object_get_ex(rec, "kernel", &k) ||
	    !json_object_is_type(k, json_type_object)) {
		fprintf(stderr, "%s: %s: the latest admitted record of %s has no kernel section\n",
			prog, path, node);
		goto out;
	}
	{
		json_object *v;
		release = json_object_object_get_ex(k, "release", &v) && json_object_is_type(v, json_type_string) ?
			  json_object_get_string(v) : NULL;
		build_id = json_object_object_get_ex(k, "build_id", &v) && json_object_is_type(v, json_type_string) ?
			   json_object_get_string(v) : NULL;
	}
	if (!release) {
		fprintf(stderr, "%s: the latest admitted record of %s names no kernel release\n", prog, node);
		goto out;
	}
	if (!build_id)
		fprintf(stderr, "%s: warning: the record of %s has no kernel build-id; blessing release %s alone\n",
			prog, node, release);
	{
		struct strbuf sb;
		sb_init(&sb);
		sb_addf(&sb, "%s%s%s", release, build_id ? ":" : "", build_id ? build_id : "");
		out = sb_take(&sb);
	}
	if (!policy_valid_kernel(out)) {
		fprintf(stderr, "%s: the record of %s names a kernel that is not RELEASE[:BUILDID]: %s\n",
			prog, node, out);
		free(out);
		out = NULL;
	}
out:
	json_object_put(rec);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return out;
}

static int list(const struct burst_config *cfg, const char *dir)
{
	char path[PATH_MAX], **file = NULL;
	size_t n = 0, i, j;
	burst_err_t err;

	if (cfg) {
		for (i = 0; i < cfg->nblessed_kernels; i++)
			printf("%s\t%s (global BlessedKernels=)\n", cfg->blessed_kernels[i], cfg->path);
		for (i = 0; i < cfg->nnodesets; i++)
			for (j = 0; j < cfg->nodesets[i].nblessed_kernels; j++)
				printf("%s\t%s:%d (NodeSet %s)\n", cfg->nodesets[i].blessed_kernels[j],
				       cfg->nodesets[i].where.file, cfg->nodesets[i].where.line,
				       cfg->nodesets[i].name);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, KERNELS.file);
	if (policy_load_blessed_file(path, &file, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return EXIT_USAGE;
	}
	for (i = 0; i < n; i++)
		printf("%s\t%s\n", file[i], path);
	policy_free_list(file, n);
	file = NULL;
	n = 0;
	if (cfg) {
		for (i = 0; i < cfg->nblessed_drivers; i++)
			printf("%s\t%s (global BlessedDrivers=)\n", cfg->blessed_drivers[i], cfg->path);
		for (i = 0; i < cfg->nnodesets; i++)
			for (j = 0; j < cfg->nodesets[i].nblessed_drivers; j++)
				printf("%s\t%s:%d (NodeSet %s)\n", cfg->nodesets[i].blessed_drivers[j],
				       cfg->nodesets[i].where.file, cfg->nodesets[i].where.line,
				       cfg->nodesets[i].name);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, DRIVERS.file);
	if (policy_load_blessed_drivers(path, &file, &n, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return EXIT_USAGE;
	}
	for (i = 0; i < n; i++)
		printf("%s\t%s\n", file[i], path);
	policy_free_list(file, n);
	return EXIT_OK;
}

/* Bless a driver version; configured: burst.conf blesses some version of it. */
static int bless_driver(const struct burst_config *cfg, const char *dir, const char *driver, const char *note)
{
	size_t nl = strcspn(driver, "=") + 1, i, j;
	bool configured = false;

	for (i = 0; cfg && i < cfg->nblessed_drivers; i++)
		if (!strncmp(cfg->blessed_drivers[i], driver, nl))
			configured = true;
	for (i = 0; cfg && i < cfg->nnodesets; i++)
		for (j = 0; j < cfg->nodesets[i].nblessed_drivers; j++)
			if (!strncmp(cfg->nodesets[i].blessed_drivers[j], driver, nl))
				configured = true;
	return bless_entry(&DRIVERS, dir, driver, note, configured);
}

/* Bless a kernel; configured: burst.conf blesses some kernel. */
static int bless_kernel(const struct burst_config *cfg, const char *dir, const char *kernel, const char *note)
{
	bool configured = cfg && cfg->nblessed_kernels;
	size_t i;

	for (i = 0; cfg && i < cfg->nnodesets; i++)
		if (cfg->nodesets[i].nblessed_kernels)
			configured = true;
	return bless_entry(&KERNELS, dir, kernel, note, configured);
}

/*
 * Does agent.db in dir hold an admission of each record's node with the
 * record's provenance id (the record the node was admitted with, as the CI
 * job saves it: burst-node provenance --admitted)? Returns how many are
 * not, after a line on stderr for each (warning: when unverified is
 * allowed); -1 when the database cannot be read at all (said).
 */
static int unverified_records(const char *dir, const struct bless_report *r, bool allow)
{
	char path[PATH_MAX];
	struct state_db *db;
	burst_err_t err;
	bool missing = false;
	size_t i, k;
	int bad = 0;

	snprintf(path, sizeof(path), "%s/agent.db", dir);
	db = state_view_open(path, &missing, &err);
	if (!db) {
		fprintf(stderr, "%s: %s: cannot verify the records against the agent's admissions: %s%s\n", prog,
			allow ? "warning" : "refused", err.msg,
			allow ? "" : " (run bless on the agent's host, with its StateDir; or give --unverified to "
			"bless the run all the same, unverified); nothing blessed");
		return allow ? (int)r->nrecords : -1;
	}
	for (i = 0; i < r->nrecords; i++) {
		const struct bless_record *b = &r->records[i];
		struct record_query q = { b->node, 0, true, false };
		struct record_rec *rows = NULL;
		size_t n = 0;
		bool found = false;

		if (state_records(db, &q, &rows, &n, &err) < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, err.msg);
			state_close(db);
			return -1;
		}
		for (k = 0; k < n && !found; k++)
			found = rows[k].provenance_id && !strcmp(rows[k].provenance_id, b->provenance_id);
		state_records_free(rows, n);
		if (found)
			continue;
		bad++;
		{
			char *node = str_escape_ctl(b->node), *file = str_escape_ctl(b->file);
			fprintf(stderr, "%s: %s: cannot verify %s: no admission of node %s in %s has its provenance id %.16s... "
				"(the CI job saves the record the node was admitted with: burst-node provenance "
				"--admitted)%s\n", prog, allow ? "warning" : "refused", file, node, path, b->provenance_id,
				allow ? "" : "; --unverified blesses the run all the same, unverified; nothing blessed");
			free(node);
			free(file);
		}
	}
	state_close(db);
	return bad;
}

/* Bless the kernels and drivers of a green CI run's artifacts in report. */
static int bless_from_report(const struct burst_config *cfg, const char *dir, const char *report,
			     const char *suites, const struct bless_limits *lim, bool allow_unverified)
{
	struct bless_report r;
	char note[300];
	size_t i;
	int rc, unverified;

	rc = bless_report_read(prog, report, suites, lim, &r);
	if (rc)
		return rc == 1 ? EXIT_NONE : EXIT_USAGE;
	unverified = unverified_records(dir, &r, allow_unverified);
	if (unverified < 0 || (unverified && !allow_unverified)) {
		bless_report_free(&r);
		return EXIT_USAGE;
	}
	printf("report %s: green, %zu test cases (%zu passed, %zu skipped) in %zu JUnit files; %zu provenance "
	       "records, %s: %zu kernels, %zu driver versions\n", report, r.ncases, r.npassed, r.nskipped,
	       r.njunit, r.nrecords, unverified ? "UNVERIFIED (not all are the agent's admissions; --unverified)" :
	       "each the record of an admission in agent.db", r.nkernels, r.ndrivers);
	snprintf(note, sizeof(note), "from report %.200s%s", report, unverified ? " (unverified)" : "");
	for (i = 0; note[i]; i++)   /* one line: the note ends the entry's line */
		if ((unsigned char)note[i] < 0x20 || note[i] == 0x7f)
			note[i] = '?';
	for (i = 0; i < r.nkernels && rc == EXIT_OK; i++)
		rc = bless_kernel(cfg, dir, r.kernels[i], note);
	for (i = 0; i < r.ndrivers && rc == EXIT_OK; i++)
		rc = bless_driver(cfg, dir, r.drivers[i], note);
	if (unverified && rc == EXIT_OK)
		fprintf(stderr, "%s: warning: the blessing from %s is UNVERIFIED: %d of %zu records are not the "
			"record of an admission the agent made (--unverified)\n", prog, report, unverified, r.nrecords);
	bless_report_free(&r);
	return rc;
}

/* A positive count from a command line option, or 0 after a message. */
static size_t count_arg(const char *opt, const char *v, size_t max)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!*v || *end || errno || n < 1 || n > max || v[0] == '-') {
		fprintf(stderr, "%s: %s %s: give a whole number from 1 to %zu\n", prog, opt, v, max);
		return 0;
	}
	return (size_t)n;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: burstctl [-c burst.conf] bless [--state-dir DIR] --kernel RELEASE[:BUILDID] | --driver NAME=VERSION\n"
		   "         | --from NODE | --list\n"
		   "         | --from-report DIR [--require-suites LIST] [--unverified]\n"
		   "                [--max-file-mib N] [--max-files N] [--max-cases N]\n");
}

int bless_cmd_main(const char *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state-dir", required_argument, NULL, 'S' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "from", required_argument, NULL, 'f' },
		{ "driver", required_argument, NULL, 'D' },
		{ "from-report", required_argument, NULL, 'R' },
		{ "list", no_argument, NULL, 'l' },
		{ "require-suites", required_argument, NULL, 'Q' },
		{ "unverified", no_argument, NULL, 'U' },
		{ "max-file-mib", required_argument, NULL, 'M' },
		{ "max-files", required_argument, NULL, 'F' },
		{ "max-cases", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *sdir = NULL, *kernel = NULL, *from = NULL, *driver = NULL,
		   *report = NULL, *suites = BLESS_DEFAULT_SUITES;
	struct bless_limits lim;
	bool unverified = false, report_opts = false;
	struct burst_config *cfg = NULL;
	char *dir = NULL, *entry = NULL, note[300];
	int ch, actions, rc = EXIT_USAGE;
	bool do_list = false;
	struct ctl_getopt g;

	(void)verb;
	ctl_getopt_init(&g, opts, "", CTL_G(CONFIG) | CTL_G(HELP));
	bless_limits_default(&lim);
	optind = 1;
	while ((ch = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': config = optarg; break;
		case 'S': sdir = optarg; break;
		case 'k': kernel = optarg; break;
		case 'f': from = optarg; break;
		case 'D': driver = optarg; break;
		case 'R': report = optarg; break;
		case 'l': do_list = true; break;
		case 'Q': suites = optarg; report_opts = true; break;
		case 'U': unverified = true; report_opts = true; break;
		case 'M':
			if (!(lim.max_file_bytes = count_arg("--max-file-mib", optarg, 4096)))
				return EXIT_USAGE;
			lim.max_file_bytes <<= 20;
			report_opts = true;
			break;
		case 'F':
			if (!(lim.max_files = count_arg("--max-files", optarg, 1000000)))
				return EXIT_USAGE;
			report_opts = true;
			break;
		case 'C':
			if (!(lim.max_cases = count_arg("--max-cases", optarg, 100000000)))
				return EXIT_USAGE;
			report_opts = true;
			break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	actions = !!kernel + !!from + !!driver + !!report + do_list;
	if (optind < argc || actions != 1) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		else
			fprintf(stderr, "%s: give one of --kernel, --driver, --from, --from-report, --list\n", prog);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (report_opts && !report) {
		fprintf(stderr, "%s: --require-suites, --unverified and the --max-* limits go with --from-report\n", prog);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (kernel && !policy_valid_kernel(kernel)) {
		fprintf(stderr, "%s: '%s' is not RELEASE[:BUILDID] (e.g. 6.1.0-18-amd64 or 6.1.0-18-amd64:9a3c..., the hex GNU build-id)\n",
			prog, kernel);
		return EXIT_USAGE;
	}
	if (driver && !policy_valid_driver(driver)) {
		fprintf(stderr, "%s: '%s' is not NAME=VERSION (a kernel module and its version as /sys/module/NAME/version or "
			"burstctl provenance shows it, e.g. nvidia=550.54.15 or efa=2.10.0g)\n", prog, driver);
		return EXIT_USAGE;
	}
	dir = state_dir(config, sdir, &cfg);
	if (!dir)
		goto out;
	if (do_list) {
		rc = list(cfg, dir);
		goto out;
	}
	if (from) {
		entry = kernel_of(dir, from);
		if (!entry) {
			rc = EXIT_NONE;
			goto out;
		}
		snprintf(note, sizeof(note), "from %.200s", from);
	}
	if (report) {
		rc = bless_from_report(cfg, dir, report, suites, &lim, unverified);
		goto out;
	}
	if (driver) {
		rc = bless_driver(cfg, dir, driver, NULL);
		goto out;
	}
	rc = bless_kernel(cfg, dir, entry ? entry : kernel, from ? note : NULL);
out:
	free(entry);
	free(dir);
	config_free(cfg);
	return rc;
}

/*
 * bless_report.c - read a CI run's artifacts for burstctl bless --from-report:
 * the JUnit reports must be green and every tested node must have passed
 * each required suite; the provenance records name the kernels and driver
 * versions to bless.
 *
 * Every artifact is a regular file of bounded size, read once into memory
 * (a FIFO, a device or a symbolic link is refused before it is read); the
 * JUnit reports are read as a stream (libxml2's xmlTextReader), keeping of
 * each test case only its suite, whether it passed and its node names: a
 * report's captured output costs nothing to hold (a 48 MB report took
 * 1.12 GB as a tree).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <libxml/xmlreader.h>

#include "bless_report.h"
#include "hostlist.h"
#include "policy.h"
#include "provenance.h"
#include "strutil.h"

#define RED 1
#define BAD 2

/* the most nodes one multi-node test case names (TEST@HOSTLIST) */
#define CASE_MAX_NODES 4096
/* the deepest <testsuite> nesting kept track of */
#define MAX_SUITE_DEPTH 64

struct list {
	char **v;
	size_t n;
};

/*
 * A message on stderr. What it quotes comes from the CI run's artifacts
 * (test case names, a record's node, kernel and driver strings, file
 * names): its control characters are written out (str_escape_ctl), so that
 * an artifact cannot drive the terminal; the format's line end is kept.
 */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	char *msg, *e;
	int n;
	size_t len;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = (size_t)n;
	if (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	e = str_escape_ctl(msg);
	fprintf(stderr, "%s\n", e);
	free(e);
	free(msg);
}

static void list_add(struct list *l, const char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

static void list_add_once(struct list *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return;
	list_add(l, s);
}

static void list_free(struct list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static bool list_has(const struct list *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

void bless_limits_default(struct bless_limits *l)
{
	l->max_file_bytes = (size_t)BLESS_DEFAULT_MAX_FILE_MIB << 20;
	l->max_files = BLESS_DEFAULT_MAX_FILES;
	l->max_cases = BLESS_DEFAULT_MAX_CASES;
}

/* One test case, as much of it as the verdict needs. */
struct tcase {
	size_t suite;            /* index into junit.suites */
	enum { PASSED, SKIPPED, FAILED } st;
	struct hostlist nodes;   /* after the last '@' of its name */
};

struct junit {
	struct list suites;      /* suite names seen */
	struct tcase *c;
	size_t nc, cap;
	struct list failed;      /* "NAME (FILE)", the first few */
	size_t nfailed;
	bool counts_red;         /* a failures=/errors= count above 0 */
};

static void junit_free(struct junit *j)
{
	size_t i;

	for (i = 0; i < j->nc; i++)
		hostlist_free(&j->c[i].nodes);
	free(j->c);
	list_free(&j->suites);
	list_free(&j->failed);
	memset(j, 0, sizeof(*j));
}

static size_t suite_index(struct junit *j, const char *name)
{
	size_t i;

	for (i = 0; i < j->suites.n; i++)
		if (!strcmp(j->suites.v[i], name))
			return i;
	list_add(&j->suites, name);
	return j->suites.n - 1;
}

/* The file's whole content (NUL-terminated; *len bytes), or NULL after a
 * message: not a regular file, over the limit, unreadable. */
static char *slurp_artifact(const char *prog, const char *path, const struct bless_limits *lim, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t n = 0, cap;

	if (fd < 0) {
		if (errno == ELOOP)
			say("%s: %s is a symbolic link: an artifact is a regular file (unpack the job's artifacts "
			    "again); nothing blessed\n", prog, path);
		else
			say("%s: cannot read %s: %s; nothing blessed\n", prog, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		say("%s: cannot read %s: %s; nothing blessed\n", prog, path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		say("%s: %s is not a regular file (%s): an artifact is a file (unpack the job's artifacts "
		    "again); nothing blessed\n", prog, path, S_ISFIFO(st.st_mode) ? "a FIFO" :
		    S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
		    "not a file");
		close(fd);
		return NULL;
	}
	if ((unsigned long long)st.st_size > lim->max_file_bytes)
		goto too_big;
	cap = (size_t)st.st_size + 1;
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			say("%s: cannot read %s: %s; nothing blessed\n", prog, path, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > lim->max_file_bytes)
			goto too_big;
		if (n == cap) {   /* it grew while read */
			cap = cap * 2 > lim->max_file_bytes + 1 ? lim->max_file_bytes + 1 : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
too_big:
	say("%s: %s is over %zu MiB, the limit of one artifact file (a node acceptance report is far "
	    "smaller; --max-file-mib N raises the limit); nothing blessed\n", prog, path, lim->max_file_bytes >> 20);
	free(buf);
	close(fd);
	return NULL;
}

/* a failures= or errors= count above 0 on the reader's element */
static bool count_attr_red(xmlTextReaderPtr r)
{
	static const char *const attrs[] = { "failures", "errors", NULL };
	size_t i;
	bool red = false;

	for (i = 0; attrs[i]; i++) {
		xmlChar *v = xmlTextReaderGetAttribute(r, (const xmlChar *)attrs[i]);

		if (v && strtol((const char *)v, NULL, 10) > 0)
			red = true;
		xmlFree(v);
	}
	return red;
}

/* A case read to its end: kept. 0, or BAD over the limit. */
static int case_end(const char *prog, const char *file, struct junit *j, const char *name, size_t suite,
		    int st, const struct bless_limits *lim)
{
	struct tcase *c;
	const char *at = strrchr(name, '@');
	burst_err_t err;

	if (j->nc == lim->max_cases) {
		say("%s: more than %zu test cases in the reports (at %s): over the limit of a run "
		    "(--max-cases N raises it); nothing blessed\n", prog, lim->max_cases, file);
		return BAD;
	}
	if (j->nc == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 64;
		j->c = xrealloc(j->c, j->cap * sizeof(*j->c));
	}
	c = &j->c[j->nc++];
	memset(c, 0, sizeof(*c));
	c->suite = suite;
	c->st = st;
	/* TEST@NODE, or TEST@HOSTLIST of a multi-node test: its nodes; a name
	 * that is no host list stands for itself */
	if (at && at[1] && hostlist_expand(at + 1, &c->nodes, CASE_MAX_NODES, &err) < 0) {
		c->nodes.names = xcalloc(1, sizeof(char *));
		c->nodes.names[0] = xstrdup(at + 1);
		c->nodes.n = c->nodes.cap = 1;
	}
	if (st == FAILED) {
		if (j->failed.n < 5) {
			struct strbuf sb;
			sb_init(&sb);
			sb_addf(&sb, "%s (%s)", name, file);
			list_add(&j->failed, sb.s);
			sb_free(&sb);
		}
		j->nfailed++;
	}
	return 0;
}

/* Read one *.xml: 0 (a JUnit report, or another XML file: *is_junit says
 * which) or BAD after a message. */
static int read_junit(const char *prog, const char *path, const char *file, struct junit *j,
		      const struct bless_limits *lim, bool *is_junit)
{
	struct { int depth; size_t suite; } stack[MAX_SUITE_DEPTH];
	size_t nstack = 0, len = 0, cur_suite = 0;
	char *buf = slurp_artifact(prog, path, lim, &len), *cname = NULL;
	xmlTextReaderPtr r;
	int ret, case_depth = -1, st = PASSED, rc = 0;

	*is_junit = false;
	if (!buf)
		return BAD;
	r = xmlReaderForMemory(buf, (int)len, path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!r) {
		free(buf);
		say("%s: cannot read %s as XML; nothing blessed\n", prog, path);
		return BAD;
	}
	suite_index(j, "");
	while ((ret = xmlTextReaderRead(r)) == 1) {
		int type = xmlTextReaderNodeType(r), d = xmlTextReaderDepth(r);
		const char *name = (const char *)xmlTextReaderConstName(r);

		if (!name)
			continue;
		if (type == XML_READER_TYPE_ELEMENT) {
			bool empty = xmlTextReaderIsEmptyElement(r) == 1;
			bool suite = !strcmp(name, "testsuite"), suites = !strcmp(name, "testsuites");

			if (d == 0) {
				if (!suite && !suites)
					break;   /* another XML file: not a report */
				*is_junit = true;
			}
			if (suite || suites) {
				if (count_attr_red(r))
					j->counts_red = true;
				if (suite && !empty) {
					xmlChar *sn = xmlTextReaderGetAttribute(r, (const xmlChar *)"name");
					if (nstack == MAX_SUITE_DEPTH) {
						xmlFree(sn);
						say("%s: %s nests test suites more than %d deep; nothing blessed\n", prog,
						    path, MAX_SUITE_DEPTH);
						rc = BAD;
						break;
					}
					stack[nstack].depth = d;
					stack[nstack++].suite = suite_index(j, sn ? (const char *)sn : "");
					xmlFree(sn);
				}
			} else if (!strcmp(name, "testcase") && case_depth < 0) {
				xmlChar *cn = xmlTextReaderGetAttribute(r, (const xmlChar *)"name");
				free(cname);
				cname = xstrdup(cn ? (const char *)cn : "(unnamed)");
				xmlFree(cn);
				cur_suite = nstack ? stack[nstack - 1].suite : 0;
				st = PASSED;
				if (empty) {
					if ((rc = case_end(prog, file, j, cname, cur_suite, st, lim)))
						break;
				} else
					case_depth = d;
			} else if (case_depth >= 0 && d == case_depth + 1) {
				if (!strcmp(name, "failure") || !strcmp(name, "error"))
					st = FAILED;
				else if (!strcmp(name, "skipped") && st != FAILED)
					st = SKIPPED;
			}
		} else if (type == XML_READER_TYPE_END_ELEMENT) {
			if (case_depth >= 0 && d == case_depth) {
				case_depth = -1;
				if ((rc = case_end(prog, file, j, cname, cur_suite, st, lim)))
					break;
			} else if (nstack && stack[nstack - 1].depth == d && !strcmp(name, "testsuite"))
				nstack--;
		}
	}
	if (!rc && ret < 0) {
		say("%s: %s is not well-formed XML (a JUnit report cut short? download the job's "
		    "artifacts again)\n", prog, path);
		rc = BAD;
	}
	free(cname);
	xmlFreeTextReader(r);
	free(buf);
	return rc;
}

static const char *jstr_at(json_object *o, const char *k1, const char *k2)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, k1, &v))
		return NULL;
	if (k2 && (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, k2, &v)))
		return NULL;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* The required suites of node for its record at path: 0 when it passed a
 * case of each (of any suite when none is required), else BAD after a
 * message. */
static int node_tested(const char *prog, const char *path, const char *node, const struct junit *j,
		       const struct list *required)
{
	size_t i, k, any = 0;

	for (i = 0; i < j->nc; i++)
		if (hostlist_find(&j->c[i].nodes, node) >= 0)
			any++;
	if (!any) {
		say("%s: %s is the record of node %s, but no test case of the report ran there "
		    "(none is named TEST@%s): its kernel was not tested; nothing blessed\n",
		    prog, path, node, node);
		return BAD;
	}
	for (k = 0; k < (required->n ? required->n : 1); k++) {
		size_t passed = 0, skipped = 0, cases = 0;
		for (i = 0; i < j->nc; i++) {
			const struct tcase *c = &j->c[i];
			if ((required->n && strcmp(j->suites.v[c->suite], required->v[k])) ||
			    hostlist_find(&c->nodes, node) < 0)
				continue;
			cases++;
			passed += c->st == PASSED;
			skipped += c->st == SKIPPED;
		}
		if (passed)
			continue;
		if (!required->n)
			say("%s: %s is the record of node %s, whose %zu test case%s %s skipped: a skipped case is "
			    "not a pass, and its kernel was not tested; nothing blessed\n", prog, path, node,
			    cases, cases == 1 ? "" : "s", cases == 1 ? "was" : "were all");
		else if (!cases)
			say("%s: %s is the record of node %s, which has no test case of suite %s in the report: "
			    "a node's kernel is blessed only when the node passed every required suite (%s%s); "
			    "nothing blessed\n", prog, path, node, required->v[k],
			    "--require-suites; default ", BLESS_DEFAULT_SUITES);
		else
			say("%s: %s is the record of node %s, which passed no test case of suite %s (%zu skipped): "
			    "a skipped case is not a pass, and a node's kernel is blessed only when the node passed "
			    "every required suite; nothing blessed\n", prog, path, node, required->v[k], skipped);
		return BAD;
	}
	return 0;
}

/* Read one provenance-NODE.json into rec, kernels and drivers: 0 or BAD
 * after a message. */
static int read_record(const char *prog, const char *path, const char *file, const struct junit *j,
		       const struct list *required, const struct bless_limits *lim, struct bless_record *out,
		       struct list *kernels, struct list *drivers)
{
	json_object *rec = NULL, *d;
	json_tokener *tok = NULL;
	const char *release, *build_id, *node;
	char *fnode = NULL, *k = NULL, *buf;
	struct strbuf sb;
	int rc = BAD;
	size_t n, len = 0;

	memset(out, 0, sizeof(*out));
	buf = slurp_artifact(prog, path, lim, &len);
	if (!buf)
		return BAD;
	if (!len) {
		say("%s: %s is empty: burst-node provenance failed on that node in the job "
			"(see the job's log); nothing blessed\n", prog, path);
		goto out;
	}
	tok = json_tokener_new();
	rec = json_tokener_parse_ex(tok, buf, (int)len);
	if (rec && json_tokener_get_error(tok) == json_tokener_success) {
		size_t end = json_tokener_get_parse_end(tok);
		while (end < len && (buf[end] == ' ' || buf[end] == '\n' || buf[end] == '\t' || buf[end] == '\r'))
			end++;
		if (end < len) {   /* more after the object */
			json_object_put(rec);
			rec = json_object_new_array();
		}
	}
	if (!rec || json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(rec, json_type_object)) {
		say("%s: %s is not a JSON object (%s): not a provenance record of burst-node "
			"provenance\n", prog, path, rec && json_tokener_get_error(tok) == json_tokener_success ?
			"another JSON value, or more after it" : json_tokener_get_error(tok) == json_tokener_continue ?
			"cut short" : json_tokener_error_desc(json_tokener_get_error(tok)));
		goto out;
	}
	release = jstr_at(rec, "kernel", "release");
	build_id = jstr_at(rec, "kernel", "build_id");
	node = jstr_at(rec, "identity", "node");
	if (!node) {   /* provenance-NODE.json */
		n = strlen(file) - strlen("provenance-") - strlen(".json");
		fnode = xmalloc(n + 1);
		memcpy(fnode, file + strlen("provenance-"), n);
		fnode[n] = '\0';
		node = fnode;
	}
	if (!release) {
		say("%s: %s names no kernel release (kernel.release): not a provenance record of "
			"burst-node provenance, or one that failed\n", prog, path);
		goto out;
	}
	if (node_tested(prog, path, node, j, required))
		goto out;
	sb_init(&sb);
	sb_addf(&sb, "%s%s%s", release, build_id ? ":" : "", build_id ? build_id : "");
	k = sb_take(&sb);
	if (!policy_valid_kernel(k)) {
		say("%s: %s names a kernel that is not RELEASE[:BUILDID]: %s\n", prog, path, k);
		goto out;
	}
	if (!build_id)
		say("%s: warning: %s has no kernel build-id; blessing release %s alone\n",
			prog, path, release);
	list_add_once(kernels, k);
	if (json_object_object_get_ex(rec, "drivers", &d) && json_object_is_type(d, json_type_object)) {
		json_object_object_foreach(d, name, e) {
			const char *v = jstr_at(e, "version", NULL);
			char *entry;

			if (!v) {
				say("%s: note: %s: driver %s has no recorded version; not blessed\n",
					prog, path, name);
				continue;
			}
			sb_init(&sb);
			sb_addf(&sb, "%s=%s", name, v);
			entry = sb_take(&sb);
			if (!policy_valid_driver(entry)) {
				say("%s: %s names a driver version that is not NAME=VERSION: %s\n",
					prog, path, entry);
				free(entry);
				goto out;
			}
			list_add_once(drivers, entry);
			free(entry);
		}
	}
	out->file = xstrdup(file);
	out->node = xstrdup(node);
	out->provenance_id = provenance_id(rec);
	out->kernel = k;
	k = NULL;
	rc = 0;
out:
	free(k);
	free(fnode);
	free(buf);
	json_object_put(rec);
	if (tok)
		json_tokener_free(tok);
	return rc;
}

static void record_free(struct bless_record *r)
{
	free(r->file);
	free(r->node);
	free(r->provenance_id);
	free(r->kernel);
}

int bless_report_read(const char *prog, const char *dir, const char *suites,
		      const struct bless_limits *limits, struct bless_report *out)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	struct list files = { NULL, 0 }, kernels = { NULL, 0 }, drivers = { NULL, 0 }, required = { NULL, 0 };
	struct bless_limits lim;
	struct bless_record *recs = NULL;
	struct junit j;
	size_t i, njunit = 0, nrecords = 0, npassed = 0, nskipped = 0;
	int rc = BAD;

	memset(out, 0, sizeof(*out));
	memset(&j, 0, sizeof(j));
	if (limits)
		lim = *limits;
	else
		bless_limits_default(&lim);
	if (!dh) {
		say("%s: cannot read the report directory %s: %s (give the directory of the CI "
			"job's artifacts: the JUnit reports and provenance-NODE.json)\n", prog, dir, strerror(errno));
		return BAD;
	}
	if (suites && *suites) {
		char *copy = xstrdup(suites), *save = NULL, *t;
		for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (*t && !list_has(&required, t))
				list_add(&required, t);
		free(copy);
	}
	while ((de = readdir(dh)))
		if (ends_with(de->d_name, ".xml") ||
		    (!strncmp(de->d_name, "provenance-", 11) && ends_with(de->d_name, ".json") &&
		     strlen(de->d_name) > strlen("provenance-.json"))) {
			if (files.n == lim.max_files) {
				say("%s: %s has more than %zu artifact files (*.xml, provenance-*.json): over the "
				    "limit of a run (--max-files N raises it); nothing blessed\n", prog, dir, lim.max_files);
				closedir(dh);
				goto out;
			}
			list_add(&files, de->d_name);
		}
	closedir(dh);
	if (files.n)
		qsort(files.v, files.n, sizeof(*files.v), cmp_str);

	/* the JUnit reports first: the records are checked against them */
	for (i = 0; i < files.n; i++) {
		struct strbuf p;
		bool is_junit;
		int r;

		if (!ends_with(files.v[i], ".xml"))
			continue;
		sb_init(&p);
		sb_addf(&p, "%s/%s", dir, files.v[i]);
		r = read_junit(prog, p.s, files.v[i], &j, &lim, &is_junit);
		sb_free(&p);
		if (r)
			goto out;
		njunit += is_junit;
	}
	if (!njunit || !j.nc) {
		say("%s: %s has %s: not the artifacts of a node acceptance run (the job keeps "
			"report.xml and node-report-NODE.xml; see doc/gitlab-ci.md); nothing blessed\n", prog, dir,
			njunit ? "JUnit reports without any test case" : "no JUnit report (*.xml with <testsuites>)");
		goto out;
	}
	if (j.nfailed || j.counts_red) {
		size_t shown = j.failed.n;
		struct strbuf sb;

		sb_init(&sb);
		sb_add(&sb, "");
		for (i = 0; i < shown; i++)
			sb_addf(&sb, "%s%s", i ? ", " : "", j.failed.v[i]);
		if (j.nfailed > shown)
			sb_addf(&sb, " and %zu more", j.nfailed - shown);
		if (j.nfailed)
			say("%s: the report in %s is red: %zu of %zu test cases failed (%s); a kernel "
				"or driver is blessed only from a green run: nothing blessed\n",
				prog, dir, j.nfailed, j.nc, sb.s);
		else
			say("%s: the report in %s is red: a test suite counts failures or errors; "
				"a kernel or driver is blessed only from a green run: nothing blessed\n", prog, dir);
		sb_free(&sb);
		rc = RED;
		goto out;
	}
	for (i = 0; i < j.nc; i++) {
		npassed += j.c[i].st == PASSED;
		nskipped += j.c[i].st == SKIPPED;
	}
	for (i = 0; i < files.n; i++) {
		struct strbuf p;
		int r;

		if (!ends_with(files.v[i], ".json"))
			continue;
		sb_init(&p);
		sb_addf(&p, "%s/%s", dir, files.v[i]);
		recs = xrealloc(recs, (nrecords + 1) * sizeof(*recs));
		r = read_record(prog, p.s, files.v[i], &j, &required, &lim, &recs[nrecords], &kernels, &drivers);
		sb_free(&p);
		if (r)
			goto out;
		nrecords++;
	}
	if (!nrecords) {
		say("%s: %s has no provenance record (provenance-NODE.json, written by burst-node "
			"provenance in the job): which kernel the run tested is unknown; nothing blessed\n", prog, dir);
		goto out;
	}
	out->njunit = njunit;
	out->ncases = j.nc;
	out->npassed = npassed;
	out->nskipped = nskipped;
	out->records = recs;
	out->nrecords = nrecords;
	out->kernels = kernels.v;
	out->nkernels = kernels.n;
	out->drivers = drivers.v;
	out->ndrivers = drivers.n;
	recs = NULL;
	nrecords = 0;
	kernels.v = drivers.v = NULL;
	kernels.n = drivers.n = 0;
	rc = 0;
out:
	for (i = 0; i < nrecords; i++)
		record_free(&recs[i]);
	free(recs);
	list_free(&files);
	list_free(&kernels);
	list_free(&drivers);
	list_free(&required);
	junit_free(&j);
	return rc;
}

void bless_report_free(struct bless_report *r)
{
	size_t i;

	for (i = 0; i < r->nkernels; i++)
		free(r->kernels[i]);
	for (i = 0; i < r->ndrivers; i++)
		free(r->drivers[i]);
	for (i = 0; i < r->nrecords; i++)
		record_free(&r->records[i]);
	free(r->records);
	free(r->kernels);
	free(r->drivers);
	memset(r, 0, sizeof(*r));
}

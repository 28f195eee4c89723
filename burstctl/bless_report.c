/*
 * bless_report.c - read a CI run's artifacts for burstctl bless --from-report:
 * the JUnit reports must be green, and the provenance records name the
 * kernels and driver versions to bless.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "bless_report.h"
#include "policy.h"
#include "strutil.h"

#define RED 1
#define BAD 2

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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* a failures= or errors= count above 0 on a <testsuite(s)> */
static bool count_attr_red(xmlNode *e)
{
	static const char *const attrs[] = { "failures", "errors", NULL };
	size_t i;
	bool red = false;

	for (i = 0; attrs[i]; i++) {
		xmlChar *v = xmlGetProp(e, (const xmlChar *)attrs[i]);

		if (v && strtol((const char *)v, NULL, 10) > 0)
			red = true;
		xmlFree(v);
	}
	return red;
}

struct junit {
	struct list names;      /* every test case */
	struct list failed;     /* "NAME (FILE)" */
	size_t ncases;
	bool counts_red;        /* a failures=/errors= count above 0 */
};

static void walk(xmlNode *n, const char *file, struct junit *j)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!xmlStrcmp(n->name, (const xmlChar *)"testsuite") ||
		    !xmlStrcmp(n->name, (const xmlChar *)"testsuites")) {
			if (count_attr_red(n))
				j->counts_red = true;
		} else if (!xmlStrcmp(n->name, (const xmlChar *)"testcase")) {
			xmlChar *name = xmlGetProp(n, (const xmlChar *)"name");
			const char *nm = name ? (const char *)name : "(unnamed)";
			xmlNode *c;
			bool failed = false;

			j->ncases++;
			list_add(&j->names, nm);
			for (c = n->children; c; c = c->next)
				if (c->type == XML_ELEMENT_NODE &&
				    (!xmlStrcmp(c->name, (const xmlChar *)"failure") ||
				     !xmlStrcmp(c->name, (const xmlChar *)"error")))
					failed = true;
			if (failed) {
				struct strbuf sb;

				sb_init(&sb);
				sb_addf(&sb, "%s (%s)", nm, file);
				list_add(&j->failed, sb.s);
				sb_free(&sb);
			}
			xmlFree(name);
			continue;
		}
		walk(n->children, file, j);
	}
}

/* Read one *.xml: 0 (a JUnit report, or another XML file: *is_junit says
 * which) or BAD after a message. */
static int read_junit(const char *prog, const char *path, const char *file, struct junit *j, bool *is_junit)
{
	xmlDoc *doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNode *root;

	*is_junit = false;
	if (!doc) {
		say("%s: %s is not well-formed XML (a JUnit report cut short? download the job's "
			"artifacts again)\n", prog, path);
		return BAD;
	}
	root = xmlDocGetRootElement(doc);
	if (root && (!xmlStrcmp(root->name, (const xmlChar *)"testsuites") ||
		     !xmlStrcmp(root->name, (const xmlChar *)"testsuite"))) {
		*is_junit = true;
		walk(root, file, j);
	}
	xmlFreeDoc(doc);
	return 0;
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

/* Read one provenance-NODE.json into kernels and drivers: 0 or BAD after a
 * message. */
static int read_record(const char *prog, const char *path, const char *file, const struct junit *j,
		       struct list *kernels, struct list *drivers)
{
	json_object *rec = json_object_from_file(path), *d;
	const char *release, *build_id, *node;
	char *fnode = NULL, *k = NULL;
	struct strbuf sb;
	struct stat st;
	int rc = BAD;
	size_t i, n;

	if (!rec && stat(path, &st) == 0 && st.st_size == 0) {
		say("%s: %s is empty: burst-node provenance failed on that node in the job "
			"(see the job's log); nothing blessed\n", prog, path);
		goto out;
	}
	if (!rec || !json_object_is_type(rec, json_type_object)) {
		say("%s: %s is not a JSON object (%s): not a provenance record of burst-node "
			"provenance\n", prog, path, rec ? "another JSON value" : json_util_get_last_err());
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
	sb_init(&sb);
	sb_addf(&sb, "@%s", node);
	for (i = 0, n = 0; i < j->names.n; i++)
		if (ends_with(j->names.v[i], sb.s))
			n++;
	sb_free(&sb);
	if (!n) {
		say("%s: %s is the record of node %s, but no test case of the report ran there "
			"(none is named TEST@%s): its kernel was not tested; nothing blessed\n",
			prog, path, node, node);
		goto out;
	}
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
	rc = 0;
out:
	free(k);
	free(fnode);
	json_object_put(rec);
	return rc;
}

int bless_report_read(const char *prog, const char *dir, struct bless_report *out)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	struct list files = { NULL, 0 }, kernels = { NULL, 0 }, drivers = { NULL, 0 };
	struct junit j;
	size_t i, njunit = 0, nrecords = 0;
	int rc = BAD;

	memset(out, 0, sizeof(*out));
	memset(&j, 0, sizeof(j));
	if (!dh) {
		say("%s: cannot read the report directory %s: %s (give the directory of the CI "
			"job's artifacts: the JUnit reports and provenance-NODE.json)\n", prog, dir, strerror(errno));
		return BAD;
	}
	while ((de = readdir(dh)))
		if (ends_with(de->d_name, ".xml") ||
		    (!strncmp(de->d_name, "provenance-", 11) && ends_with(de->d_name, ".json") &&
		     strlen(de->d_name) > strlen("provenance-.json")))
			list_add(&files, de->d_name);
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
		r = read_junit(prog, p.s, files.v[i], &j, &is_junit);
		sb_free(&p);
		if (r)
			goto out;
		njunit += is_junit;
	}
	if (!njunit || !j.ncases) {
		say("%s: %s has %s: not the artifacts of a node acceptance run (the job keeps "
			"report.xml and node-report-NODE.xml; see doc/gitlab-ci.md); nothing blessed\n", prog, dir,
			njunit ? "JUnit reports without any test case" : "no JUnit report (*.xml with <testsuites>)");
		goto out;
	}
	if (j.failed.n || j.counts_red) {
		size_t shown = j.failed.n < 5 ? j.failed.n : 5;
		struct strbuf sb;

		sb_init(&sb);
		sb_add(&sb, "");
		for (i = 0; i < shown; i++)
			sb_addf(&sb, "%s%s", i ? ", " : "", j.failed.v[i]);
		if (j.failed.n > shown)
			sb_addf(&sb, " and %zu more", j.failed.n - shown);
		if (j.failed.n)
			say("%s: the report in %s is red: %zu of %zu test cases failed (%s); a kernel "
				"or driver is blessed only from a green run: nothing blessed\n",
				prog, dir, j.failed.n, j.ncases, sb.s);
		else
			say("%s: the report in %s is red: a test suite counts failures or errors; "
				"a kernel or driver is blessed only from a green run: nothing blessed\n", prog, dir);
		sb_free(&sb);
		rc = RED;
		goto out;
	}
	for (i = 0; i < files.n; i++) {
		struct strbuf p;
		int r;

		if (!ends_with(files.v[i], ".json"))
			continue;
		sb_init(&p);
		sb_addf(&p, "%s/%s", dir, files.v[i]);
		r = read_record(prog, p.s, files.v[i], &j, &kernels, &drivers);
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
	out->ncases = j.ncases;
	out->nrecords = nrecords;
	out->kernels = kernels.v;
	out->nkernels = kernels.n;
	out->drivers = drivers.v;
	out->ndrivers = drivers.n;
	kernels.v = drivers.v = NULL;
	kernels.n = drivers.n = 0;
	rc = 0;
out:
	list_free(&files);
	list_free(&kernels);
	list_free(&drivers);
	list_free(&j.names);
	list_free(&j.failed);
	return rc;
}

void bless_report_free(struct bless_report *r)
{
	size_t i;

	for (i = 0; i < r->nkernels; i++)
		free(r->kernels[i]);
	for (i = 0; i < r->ndrivers; i++)
		free(r->drivers[i]);
	free(r->kernels);
	free(r->drivers);
	memset(r, 0, sizeof(*r));
}

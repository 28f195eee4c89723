/*
 * acceptance.c - acceptance.conf, the sanity and performance checks, and the
 * result writers (TAP, JUnit XML, JSON). See acceptance.h.
 */
#include "acceptance.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confwords.h"
#include "strutil.h"
#include "syncdir.h"

#define MAX_WORDS 64
#define MAX_LINE_LEN 65536

struct parser {
	struct acceptance_conf *conf;
	struct conf_errors errs;
	const char *file;
	int line;
};

static const char *const test_keys[] = { "Test", "Kind", "Command", "Image", "Runtime",
	"Sanity", "Perf", "Reference", "Timeout", "Nodes", NULL };
static const char *const runtime_keys[] = { "Runtime", "Template", "ImageDir", NULL };
static const char *const objects[] = { "Test", "Runtime", NULL };
static const char *const kind_names[] = { "hardware", "container", "mpi", NULL };

static void perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	conf_verror(&p->errs, p->file, p->line, fmt, ap);
	va_end(ap);
}

static void unknown_key(struct parser *p, const char *obj, const char *key,
			const char *const *known)
{
	conf_unknown_key(&p->errs, p->file, p->line, obj, key, known, "acceptance.conf(5)");
}



static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return *s && !*end && !errno && !isnan(*out);
}

/*
 * What a pattern costs glibc's regcomp, which copies a repeated part once
 * per repetition (x+ is xx*, x{2,5} five copies of x): repetitions of
 * repetitions multiply, and "(a{1,50}){1,50}){1,50}" or "x+++++..." take
 * gigabytes. An estimate of the copies (saturating at RE_COST_MAX + 1),
 * or RE_COST_MAX + 1 for two repetition operators in a row (undefined in
 * POSIX EREs; glibc nests them).
 */
#define RE_COST_MAX 20000

struct re_scan {
	const char *s;
	int depth;
};

static size_t re_cost_alt(struct re_scan *r);

static size_t re_sat(size_t a, size_t b, bool mul)
{
	if (mul)
		return b && a > (RE_COST_MAX + 1) / b ? RE_COST_MAX + 1 : a * b;
	return a + b > RE_COST_MAX ? RE_COST_MAX + 1 : a + b;
}

/* The copies of the repetition operator at r->s, or 1 when there is none. */
static size_t re_times(struct re_scan *r, bool *found)
{
	const char *s = r->s;
	unsigned long m, n;
	char *e;

	*found = true;
	if (*s == '*' || *s == '?') {
		r->s++;
		return 1;
	}
	if (*s == '+') {
		r->s++;
		return 2;
	}
	if (*s == '{' && isdigit((unsigned char)s[1])) {
		m = strtoul(s + 1, &e, 10);
		n = m + 1;                       /* {m,}: m copies and a star */
		if (*e == ',' && isdigit((unsigned char)e[1]))
			n = strtoul(e + 1, &e, 10);
		else if (*e == ',')
			e++;
		else
			n = m;
		if (*e == '}') {
			r->s = e + 1;
			return n > RE_COST_MAX ? RE_COST_MAX + 1 : (n ? n : 1);
		}
	}
	*found = false;
	return 1;
}

static size_t re_cost_piece(struct re_scan *r)
{
	size_t c = 1;
	bool rep;

	if (*r->s == '(') {
		r->s++;
		r->depth++;
		c = re_sat(re_cost_alt(r), 1, false);
		if (*r->s == ')') {
			r->s++;
			r->depth--;
		}
	} else if (*r->s == '[') {
		/* a bracket expression: ']' first is literal, [:class:] inside */
		r->s++;
		if (*r->s == '^')
			r->s++;
		if (*r->s == ']')
			r->s++;
		while (*r->s && *r->s != ']') {
			if (*r->s == '[' && (r->s[1] == ':' || r->s[1] == '.' || r->s[1] == '=')) {
				char close = r->s[1];
				const char *e = r->s + 2;
				while (*e && !(e[0] == close && e[1] == ']'))
					e++;
				r->s = *e ? e + 2 : e;
			} else {
				r->s++;
			}
		}
		if (*r->s)
			r->s++;
	} else if (*r->s == '\\' && r->s[1]) {
		r->s += 2;
	} else {
		r->s++;
	}
	c = re_sat(c, re_times(r, &rep), true);
	if (rep) {
		bool again;
		re_times(r, &again);
		if (again)
			return RE_COST_MAX + 1;
	}
	return c;
}

static size_t re_cost_alt(struct re_scan *r)
{
	size_t c = 0;

	while (*r->s && !(*r->s == ')' && r->depth > 0)) {
		if (*r->s == '|') {
			r->s++;
			continue;
		}
		c = re_sat(c, re_cost_piece(r), false);
		if (c > RE_COST_MAX)
			return c;
	}
	return c;
}

/* Compile an ERE; on failure report it naming the key. */
static bool compile(struct parser *p, regex_t *re, const char *key, const char *pat)
{
	struct re_scan scan = { pat, 0 };
	char msg[256];
	int rc;

	if (re_cost_alt(&scan) > RE_COST_MAX) {
		/* found by tests/fuzz/fuzz_acceptance: regcomp took gigabytes */
		perr(p, "%s=\"%s\": repetitions of repetitions (such as '++', '{2}*' or nested "
		     "'{m,n}') would need more than %d states to compile: write the pattern "
		     "without them", key, pat, RE_COST_MAX);
		return false;
	}
	rc = regcomp(re, pat, REG_EXTENDED | REG_NEWLINE);
	if (rc == 0)
		return true;
	regerror(rc, re, msg, sizeof(msg));
	perr(p, "%s=\"%s\": not a valid POSIX extended regular expression: %s", key, pat, msg);
	return false;
}

static void free_test(struct acceptance_test *t)
{
	size_t i;

	free(t->name);
	free(t->command);
	free(t->image);
	free(t->runtime);
	if (t->sanity)
		regfree(&t->sanity_re);
	free(t->sanity);
	for (i = 0; i < t->nperf; i++) {
		free(t->perf[i].name);
		free(t->perf[i].pattern);
		regfree(&t->perf[i].re);
	}
	free(t->perf);
	for (i = 0; i < t->nrefs; i++) {
		free(t->refs[i].target);
		free(t->refs[i].var);
	}
	free(t->refs);
	free(t->file);
}

/* Reference=TARGET:VALUE:LOWER:UPPER or TARGET:VAR:VALUE:LOWER:UPPER */
static bool parse_reference(struct parser *p, const char *val, struct acceptance_ref *r)
{
	char *copy = xstrdup(val), *f[6], *s = copy;
	int n = 0;
	bool ok = false;

	memset(r, 0, sizeof(*r));
	while (n < 6) {
		f[n++] = s;
		s = strchr(s, ':');
		if (!s)
			break;
		*s++ = '\0';
	}
	if (s || (n != 4 && n != 5)) {
		perr(p, "Reference=%s: write TARGET:VALUE:LOWER:UPPER (or TARGET:VAR:VALUE:LOWER:UPPER "
		     "for a test with several Perf=), e.g. Reference=default:1000:-0.1:+0.2", val);
		goto out;
	}
	if (!*f[0]) {
		perr(p, "Reference=%s: the target (an instance type, an accelerator model or "
		     "'default') is empty", val);
		goto out;
	}
	if (n == 5 && !*f[1]) {
		perr(p, "Reference=%s: the Perf variable name is empty", val);
		goto out;
	}
	if (!parse_double(f[n - 3], &r->value) || !isfinite(r->value)) {
		perr(p, "Reference=%s: the reference value '%s' is not a number", val, f[n - 3]);
		goto out;
	}
	if (!parse_double(f[n - 2], &r->lower) || r->lower > 0) {
		perr(p, "Reference=%s: the lower tolerance '%s' must be a number <= 0 (e.g. -0.1 for "
		     "10%% below)", val, f[n - 2]);
		goto out;
	}
	if (!parse_double(f[n - 1], &r->upper) || r->upper < 0) {
		perr(p, "Reference=%s: the upper tolerance '%s' must be a number >= 0 (e.g. +0.2 for "
		     "20%% above, inf for no bound)", val, f[n - 1]);
		goto out;
	}
	r->target = xstrdup(f[0]);
	r->var = n == 5 ? xstrdup(f[1]) : NULL;
	r->line = p->line;
	ok = true;
out:
	free(copy);
	return ok;
}

static void parse_test(struct parser *p, struct conf_word *w, int n)
{
	struct acceptance_test t;
	bool have_kind = false, kind_given = false;
	int nerr0 = p->errs.n, k;
	size_t i, j;

	memset(&t, 0, sizeof(t));
	t.timeout = ACCEPTANCE_DEFAULT_TIMEOUT;
	t.file = xstrdup(p->file);
	t.line = p->line;
	if (!valid_name(w[0].val))
		perr(p, "Test=%s: a test name is letters, digits, '_', '.' and '-'", w[0].val);
	t.name = xstrdup(w[0].val);
	for (i = 0; i < p->conf->ntests; i++)
		if (!strcmp(p->conf->tests[i].name, t.name))
			perr(p, "Test=%s is already defined at %s:%d", t.name, p->conf->tests[i].file,
			     p->conf->tests[i].line);
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		char **dst = NULL;

		if (!key) {
			const char *near = str_suggest(val, test_keys, 0);
			perr(p, "expected Key=Value, found '%s'%s%s%s", val,
			     near ? "; did you mean '" : "", near ? near : "", near ? "=...'?" : "");
			continue;
		}
		if (str_ieq(key, "Kind")) {
			int kd = acceptance_kind_parse(val);
			kind_given = true;
			if (kd < 0) {
				const char *near = str_suggest(val, kind_names, 0);
				perr(p, "Kind=%s: a kind is hardware, container or mpi%s%s%s", val,
				     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			} else {
				t.kind = (enum acceptance_kind)kd;
				have_kind = true;
			}
			continue;
		}
		if (str_ieq(key, "Timeout")) {
			if (!parse_int(val, 1, 86400, &t.timeout))
				perr(p, "Timeout=%s: give seconds (1-86400)", val);
			continue;
		}
		if (str_ieq(key, "Nodes")) {
			if (!parse_int(val, 1, 100000, &t.nodes))
				perr(p, "Nodes=%s: give a node count (1-100000)", val);
			continue;
		}
		if (str_ieq(key, "Perf")) {
			const char *eq = strchr(val, '=');
			struct acceptance_perf pf;
			if (!eq || eq == val || !eq[1]) {
				perr(p, "Perf=%s: write NAME=REGEX, the regex with one capture group around "
				     "the number, e.g. Perf=\"bw=([0-9.]+) MB/s\"", val);
				continue;
			}
			pf.name = xstrndup(val, (size_t)(eq - val));
			if (!valid_name(pf.name)) {
				perr(p, "Perf=%s: the name '%s' is letters, digits, '_', '.' and '-'", val, pf.name);
				free(pf.name);
				continue;
			}
			for (i = 0; i < t.nperf; i++)
				if (!strcmp(t.perf[i].name, pf.name))
					break;
			if (i < t.nperf) {
				perr(p, "Perf=%s: the variable '%s' is given twice", val, pf.name);
				free(pf.name);
				continue;
			}
			if (!compile(p, &pf.re, "Perf", eq + 1)) {
				free(pf.name);
				continue;
			}
			if (pf.re.re_nsub != 1) {
				perr(p, "Perf=%s: the regex has %zu capture groups; it needs exactly one, around "
				     "the number (POSIX EREs have no non-capturing groups: drop the others)",
				     val, (size_t)pf.re.re_nsub);
				regfree(&pf.re);
				free(pf.name);
				continue;
			}
			pf.pattern = xstrdup(eq + 1);
			t.perf = xrealloc(t.perf, (t.nperf + 1) * sizeof(*t.perf));
			t.perf[t.nperf++] = pf;
			continue;
		}
		if (str_ieq(key, "Reference")) {
			struct acceptance_ref r;
			if (parse_reference(p, val, &r)) {
				t.refs = xrealloc(t.refs, (t.nrefs + 1) * sizeof(*t.refs));
				t.refs[t.nrefs++] = r;
			}
			continue;
		}
		if (str_ieq(key, "Command"))
			dst = &t.command;
		else if (str_ieq(key, "Image"))
			dst = &t.image;
		else if (str_ieq(key, "Runtime"))
			dst = &t.runtime;
		else if (str_ieq(key, "Sanity"))
			dst = &t.sanity;
		else if (str_ieq(key, "Test")) {
			perr(p, "Test= given twice on one line (one test per line)");
			continue;
		} else {
			unknown_key(p, "Test", key, test_keys);
			continue;
		}
		if (*dst) {
			perr(p, "%s= given twice for test %s", key, t.name);
			continue;
		}
		if (!*val) {
			perr(p, "%s= needs a value", key);
			continue;
		}
		*dst = xstrdup(val);
	}
	if (!kind_given)
		perr(p, "Test=%s has no Kind= (hardware, container or mpi)", t.name);
	if (!t.command)
		perr(p, "Test=%s has no Command=", t.name);
	if (have_kind && t.kind == ACCEPTANCE_CONTAINER && !t.image)
		perr(p, "Test=%s is Kind=container but has no Image=", t.name);
	if (have_kind && t.kind == ACCEPTANCE_HARDWARE && t.image)
		perr(p, "Test=%s is Kind=hardware but has Image=%s; make it Kind=container", t.name, t.image);
	if (!t.sanity)
		perr(p, "Test=%s has no Sanity= (a regex the output must match)", t.name);
	else if (!compile(p, &t.sanity_re, "Sanity", t.sanity)) {
		free(t.sanity);
		t.sanity = NULL;
	}
	if (t.nrefs && !t.nperf)
		perr(p, "Test=%s has Reference= but no Perf= to compare it with", t.name);
	for (j = 0; j < t.nrefs && t.nperf; j++) {
		struct acceptance_ref *r = &t.refs[j];
		if (!r->var) {
			if (t.nperf > 1) {
				perr(p, "Reference=%s:...: test %s has several Perf= variables; name one "
				     "(TARGET:VAR:VALUE:LOWER:UPPER)", r->target, t.name);
				continue;
			}
			r->var = xstrdup(t.perf[0].name);
			continue;
		}
		for (i = 0; i < t.nperf; i++)
			if (!strcmp(t.perf[i].name, r->var))
				break;
		if (i == t.nperf) {
			const char **names = xcalloc(t.nperf + 1, sizeof(char *));
			const char *near;
			for (i = 0; i < t.nperf; i++)
				names[i] = t.perf[i].name;
			near = str_suggest(r->var, names, 0);
			perr(p, "Reference=%s:%s:...: test %s has no Perf variable '%s'%s%s%s", r->target,
			     r->var, t.name, r->var, near ? "; did you mean '" : "", near ? near : "",
			     near ? "'?" : "");
			free(names);
		}
	}
	for (j = 0; j < t.nrefs; j++)
		for (i = 0; i < j; i++)
			if (t.refs[i].var && t.refs[j].var && !strcmp(t.refs[i].var, t.refs[j].var) &&
			    str_ieq(t.refs[i].target, t.refs[j].target))
				perr(p, "Reference for %s on '%s' is given twice", t.refs[j].var,
				     t.refs[j].target);
	if (p->errs.n != nerr0) {
		free_test(&t);
		return;
	}
	p->conf->tests = xrealloc(p->conf->tests, (p->conf->ntests + 1) * sizeof(t));
	p->conf->tests[p->conf->ntests++] = t;
}

static void parse_runtime(struct parser *p, struct conf_word *w, int n)
{
	struct acceptance_runtime rt = { NULL, NULL, NULL };
	size_t i;
	int k;

	if (!valid_name(w[0].val)) {
		perr(p, "Runtime=%s: a runtime name is letters, digits, '_', '.' and '-'", w[0].val);
		return;
	}
	for (i = 0; i < p->conf->nruntimes; i++)
		if (!strcmp(p->conf->runtimes[i].name, w[0].val)) {
			perr(p, "Runtime=%s is already defined", w[0].val);
			return;
		}
	rt.name = xstrdup(w[0].val);
	for (k = 1; k < n; k++) {
		char **dst;
		if (!w[k].key) {
			perr(p, "expected Key=Value, found '%s'", w[k].val);
			continue;
		}
		if (str_ieq(w[k].key, "Template"))
			dst = &rt.template;
		else if (str_ieq(w[k].key, "ImageDir"))
			dst = &rt.image_dir;
		else {
			unknown_key(p, "Runtime", w[k].key, runtime_keys);
			continue;
		}
		free(*dst);
		*dst = xstrdup(w[k].val);
	}
	if (!rt.template) {
		if (str_ieq(rt.name, ACCEPTANCE_DEFAULT_RUNTIME))
			rt.template = xstrdup(ACCEPTANCE_DEFAULT_TEMPLATE);
		else
			perr(p, "Runtime=%s has no Template= (e.g. Template=\"%s\")", rt.name,
			     ACCEPTANCE_DEFAULT_TEMPLATE);
	}
	if (rt.template && !strstr(rt.template, "{command}"))
		perr(p, "Runtime=%s: Template= has no {command}", rt.name);
	if (rt.image_dir && rt.image_dir[0] != '/')
		perr(p, "Runtime=%s: ImageDir= must be an absolute path, not '%s'", rt.name, rt.image_dir);
	if (!rt.image_dir)
		rt.image_dir = xstrdup(ACCEPTANCE_DEFAULT_IMAGE_DIR);
	p->conf->runtimes = xrealloc(p->conf->runtimes, (p->conf->nruntimes + 1) * sizeof(rt));
	p->conf->runtimes[p->conf->nruntimes++] = rt;
}

static void parse_line(struct parser *p, char *text)
{
	struct conf_word w[MAX_WORDS];
	size_t bad = 0;
	int n;

	conf_strip_comment(text, true);
	n = conf_split_words(text, w, MAX_WORDS, true, &bad);
	if (n < 0) {
		perr(p, "unterminated quote in the word starting at column %zu", bad);
		return;
	}
	if (n == 0)
		return;
	if (n == MAX_WORDS) {
		perr(p, "too many words on one line (at most %d)", MAX_WORDS - 1);
		return;
	}
	if (!w[0].key) {
		const char *near = str_suggest(w[0].val, objects, 0);
		perr(p, "expected Test=NAME or Runtime=NAME, found '%s'%s%s%s", w[0].val,
		     near ? "; did you mean '" : "", near ? near : "", near ? "=...'?" : "");
		return;
	}
	if (!w[0].val[0]) {
		perr(p, "%s= needs a name", w[0].key);
		return;
	}
	if (str_ieq(w[0].key, "Test"))
		parse_test(p, w, n);
	else if (str_ieq(w[0].key, "Runtime"))
		parse_runtime(p, w, n);
	else {
		const char *near = str_suggest(w[0].key, objects, 0);
		if (!near && str_suggest(w[0].key, test_keys, 0))
			perr(p, "a line starts with Test= or Runtime=, not '%s='", w[0].key);
		else
			perr(p, "unknown key '%s'%s%s%s (a line starts with Test= or Runtime=)", w[0].key,
			     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	}
}

struct acceptance_conf *acceptance_parse(const char *text, const char *name, burst_err_t *err)
{
	struct acceptance_conf *conf = xcalloc(1, sizeof(*conf));
	struct parser p = { conf, { err, 0 }, name, 0 };
	const char *s = text;
	size_t i, j;

	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char *line;

		p.line++;
		if (len > MAX_LINE_LEN) {
			perr(&p, "line longer than %d bytes", MAX_LINE_LEN);
		} else {
			line = xstrndup(s, len);
			if (len && line[len - 1] == '\r')
				line[len - 1] = '\0';
			parse_line(&p, line);
			free(line);
		}
		s += len;
		if (*s == '\n')
			s++;
	}
	/* Tests naming a runtime need it defined. */
	for (i = 0; i < conf->ntests; i++) {
		struct acceptance_test *t = &conf->tests[i];
		const char **names;
		const char *near;

		if (!t->runtime)
			continue;
		for (j = 0; j < conf->nruntimes; j++)
			if (!strcmp(conf->runtimes[j].name, t->runtime))
				break;
		if (j < conf->nruntimes || str_ieq(t->runtime, ACCEPTANCE_DEFAULT_RUNTIME))
			continue;
		names = xcalloc(conf->nruntimes + 1, sizeof(char *));
		for (j = 0; j < conf->nruntimes; j++)
			names[j] = conf->runtimes[j].name;
		near = str_suggest(t->runtime, names, 0);
		p.line = t->line;
		perr(&p, "Test=%s: Runtime=%s is not defined by a Runtime= line%s%s%s", t->name,
		     t->runtime, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		free(names);
	}
	if (p.errs.n) {
		acceptance_free(conf);
		return NULL;
	}
	return conf;
}

const char *acceptance_default_path(const char *explicit_path)
{
	static char buf[PATH_MAX];

	return conf_default_path(explicit_path, "BURST_ACCEPTANCE_CONF", "acceptance.conf", buf, sizeof(buf));
}

struct acceptance_conf *acceptance_load(const char *path, burst_err_t *err)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb;
	struct acceptance_conf *conf = NULL;
	char buf[8192];
	size_t n;

	if (!f) {
		burst_err_set(err, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	sb_init(&sb);
	sb_add(&sb, "");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (memchr(buf, '\0', n)) {
			burst_err_set(err, "%s: NUL byte in the file (not a text file?)", path);
			goto out;
		}
		sb_addf(&sb, "%.*s", (int)n, buf);
	}
	if (ferror(f)) {
		burst_err_set(err, "%s: cannot read: %s", path, strerror(errno));
		goto out;
	}
	conf = acceptance_parse(sb.s, path, err);
out:
	sb_free(&sb);
	fclose(f);
	return conf;
}

void acceptance_free(struct acceptance_conf *conf)
{
	size_t i;

	if (!conf)
		return;
	for (i = 0; i < conf->ntests; i++)
		free_test(&conf->tests[i]);
	free(conf->tests);
	for (i = 0; i < conf->nruntimes; i++) {
		free(conf->runtimes[i].name);
		free(conf->runtimes[i].template);
		free(conf->runtimes[i].image_dir);
	}
	free(conf->runtimes);
	free(conf);
}

const char *acceptance_kind_name(enum acceptance_kind kind)
{
	return (unsigned)kind < 3 ? kind_names[kind] : "unknown";
}

int acceptance_kind_parse(const char *s)
{
	int i;

	for (i = 0; kind_names[i]; i++)
		if (str_ieq(s, kind_names[i]))
			return i;
	return -1;
}

static const struct acceptance_runtime builtin_runtime = {
	(char *)ACCEPTANCE_DEFAULT_RUNTIME, (char *)ACCEPTANCE_DEFAULT_TEMPLATE,
	(char *)ACCEPTANCE_DEFAULT_IMAGE_DIR,
};

const struct acceptance_runtime *acceptance_runtime_of(const struct acceptance_conf *conf,
						       const struct acceptance_test *t)
{
	size_t i;

	if (t->runtime) {
		for (i = 0; i < conf->nruntimes; i++)
			if (!strcmp(conf->runtimes[i].name, t->runtime))
				return &conf->runtimes[i];
		return &builtin_runtime;
	}
	return conf->nruntimes ? &conf->runtimes[0] : &builtin_runtime;
}

static void add_shell_quoted(struct strbuf *sb, const char *s)
{
	sb_add(sb, "'");
	for (; *s; s++) {
		if (*s == '\'')
			sb_add(sb, "'\\''");
		else
			sb_addf(sb, "%c", *s);
	}
	sb_add(sb, "'");
}

char *acceptance_command_line(const struct acceptance_conf *conf, const struct acceptance_test *t)
{
	const struct acceptance_runtime *rt;
	struct strbuf sb;
	const char *p;
	char *image;

	if (t->kind != ACCEPTANCE_CONTAINER || !t->image)
		return xstrdup(t->command);
	rt = acceptance_runtime_of(conf, t);
	if (t->image[0] == '/') {
		image = xstrdup(t->image);
	} else {
		sb_init(&sb);
		sb_addf(&sb, "%s/%s", rt->image_dir, t->image);
		image = sb_take(&sb);
	}
	sb_init(&sb);
	sb_add(&sb, "");
	for (p = rt->template; *p; ) {
		if (!strncmp(p, "{image}", 7)) {
			add_shell_quoted(&sb, image);
			p += 7;
		} else if (!strncmp(p, "{command}", 9)) {
			sb_add(&sb, t->command);
			p += 9;
		} else {
			sb_addf(&sb, "%c", *p++);
		}
	}
	free(image);
	return sb_take(&sb);
}

const struct acceptance_ref *acceptance_pick_reference(const struct acceptance_test *t,
						       const char *var,
						       const struct acceptance_node *node)
{
	const char *want[3];
	size_t i;
	int k;

	want[0] = node ? node->instance_type : NULL;
	want[1] = node ? node->accelerator_model : NULL;
	want[2] = "default";
	for (k = 0; k < 3; k++) {
		if (!want[k] || !*want[k])
			continue;
		for (i = 0; i < t->nrefs; i++)
			if (t->refs[i].var && !strcmp(t->refs[i].var, var) &&
			    str_ieq(t->refs[i].target, want[k]))
				return &t->refs[i];
	}
	return NULL;
}

void acceptance_result_init(struct acceptance_result *res, const struct acceptance_test *t,
			    const struct acceptance_node *node)
{
	memset(res, 0, sizeof(*res));
	res->test = xstrdup(t->name);
	res->node = xstrdup(node && node->name ? node->name : "localhost");
	res->classname = xstrdup(node && node->instance_type && *node->instance_type ?
				 node->instance_type : "unknown");
	res->kind = t->kind;
	res->status = ACCEPTANCE_PASS;
}

void acceptance_result_fail(struct acceptance_result *res, enum acceptance_status status,
			    const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (res->status != ACCEPTANCE_PASS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	res->status = status;
	free(res->reason);
	res->reason = xstrdup(msg);
}

bool acceptance_check(const struct acceptance_test *t, const char *output,
		      const struct acceptance_node *node, struct acceptance_result *res)
{
	size_t i;

	if (!output)
		output = "";
	if (res->output != output) {
		free(res->output);
		res->output = xstrdup(output);
	}
	if (t->sanity && regexec(&t->sanity_re, output, 0, NULL, 0) != 0)
		acceptance_result_fail(res, ACCEPTANCE_FAIL, "sanity: the output does not match /%s/",
				       t->sanity);
	if (t->nperf) {
		res->perf = xcalloc(t->nperf, sizeof(*res->perf));
		res->nperf = t->nperf;
	}
	for (i = 0; i < t->nperf; i++) {
		const struct acceptance_perf *pf = &t->perf[i];
		struct acceptance_perf_result *pr = &res->perf[i];
		const struct acceptance_ref *ref;
		regmatch_t m[2];
		double lo, hi;

		pr->name = xstrdup(pf->name);
		if (regexec(&pf->re, output, 2, m, 0) != 0 || m[1].rm_so < 0) {
			acceptance_result_fail(res, ACCEPTANCE_FAIL,
					       "performance: %s: the output does not match /%s/",
					       pf->name, pf->pattern);
			continue;
		}
		{
			char *num = xstrndup(output + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
			bool okn = parse_double(num, &pr->value) && isfinite(pr->value);
			if (!okn)
				acceptance_result_fail(res, ACCEPTANCE_FAIL,
						       "performance: %s: '%s' (captured by /%s/) is not a number",
						       pf->name, num, pf->pattern);
			free(num);
			if (!okn)
				continue;
		}
		pr->have_value = true;
		ref = acceptance_pick_reference(t, pf->name, node);
		if (!ref) {
			acceptance_result_fail(res, ACCEPTANCE_FAIL,
					       "performance: %s = %g but there is no reference for this node "
					       "(instance type %s, accelerator model %s) and no default; add "
					       "Reference=TARGET:VALUE:LOWER:UPPER to test %s",
					       pf->name, pr->value,
					       node && node->instance_type ? node->instance_type : "unknown",
					       node && node->accelerator_model ? node->accelerator_model : "none",
					       t->name);
			continue;
		}
		pr->have_ref = true;
		pr->reference = ref->value;
		pr->lower = ref->lower;
		pr->upper = ref->upper;
		pr->target = xstrdup(ref->target);
		lo = ref->value + fabs(ref->value) * ref->lower;
		hi = ref->value + fabs(ref->value) * ref->upper;
		pr->passed = pr->value >= lo && pr->value <= hi;
		if (!pr->passed)
			acceptance_result_fail(res, ACCEPTANCE_FAIL,
					       "performance: %s = %g is %s the reference %g (%s, %+g/%+g: "
					       "%g..%g)", pf->name, pr->value,
					       pr->value < lo ? "below" : "above", ref->value, ref->target,
					       ref->lower, ref->upper, lo, hi);
	}
	return res->status == ACCEPTANCE_PASS;
}

const char *acceptance_mpi_init_crash(const char *output)
{
	if (!output || !strstr(output, "*** Process received signal ***"))
		return NULL;
	if (!strstr(output, "(MPI_Init+") && !strstr(output, "(ompi_mpi_init+") &&
	    !strstr(output, "(PMPI_Init+"))
		return NULL;
	return "a rank died by a signal inside MPI_Init (Open MPI's backtrace in the output): "
	       "the known start-up failure of Open MPI 5 under srun --mpi=pmix, a message reaching "
	       "a rank before ob1 knows MPI_COMM_WORLD (mca_pml_ob1_recv_frag_callback_match; "
	       "open-mpi/ompi#12495), not a fault of the node as such. The shipped "
	       "mpi_acceptance sets OMPI_MCA_pmix_base_async_modex=1 against it: check that the "
	       "environment does not set it to 0, run the test again, and if it recurs report it "
	       "with the Slurm, PMIx and Open MPI versions";
}

void acceptance_result_free(struct acceptance_result *res)
{
	size_t i;

	if (!res)
		return;
	free(res->test);
	free(res->node);
	free(res->classname);
	free(res->reason);
	free(res->output);
	for (i = 0; i < res->nperf; i++) {
		free(res->perf[i].name);
		free(res->perf[i].target);
	}
	free(res->perf);
	memset(res, 0, sizeof(*res));
}

/* ---- writers ---- */

static void tap_diag_lines(FILE *f, const char *prefix, const char *s, int max)
{
	int n = 0;

	while (*s && n < max) {
		const char *nl = strchr(s, '\n');
		int len = nl ? (int)(nl - s) : (int)strlen(s);
		fprintf(f, "#%s%.*s\n", prefix, len, s);
		n++;
		s += len;
		if (*s)
			s++;
	}
	if (*s)
		fprintf(f, "#%s[...]\n", prefix);
}

int acceptance_write_tap(FILE *f, const struct acceptance_result *r, size_t n)
{
	size_t i, j;

	fprintf(f, "TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		const struct acceptance_result *x = &r[i];
		fprintf(f, "%s %zu - %s@%s", x->status == ACCEPTANCE_FAIL ? "not ok" : "ok", i + 1,
			x->test, x->node);
		if (x->status == ACCEPTANCE_NOT_RUN)
			fprintf(f, " # SKIP %s", x->reason ? x->reason : "not run");
		fprintf(f, "\n");
		if (x->status != ACCEPTANCE_NOT_RUN)
			fprintf(f, "# %s %s, %.3f s\n", acceptance_kind_name(x->kind), x->test, x->duration);
		for (j = 0; j < x->nperf; j++) {
			const struct acceptance_perf_result *p = &x->perf[j];
			if (!p->have_value)
				continue;
			if (p->have_ref)
				fprintf(f, "# perf %s = %g (reference %g for %s, %+g/%+g)\n", p->name,
					p->value, p->reference, p->target, p->lower, p->upper);
			else
				fprintf(f, "# perf %s = %g (no reference)\n", p->name, p->value);
		}
		if (x->status == ACCEPTANCE_FAIL) {
			tap_diag_lines(f, " reason: ", x->reason ? x->reason : "failed", 5);
			if (x->output && *x->output)
				tap_diag_lines(f, " > ", x->output, 20);
		}
	}
	fflush(f);
	return ferror(f) ? -1 : 0;
}

/* XML text/attribute escaping; drops characters XML 1.0 cannot carry. */
static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\t': case '\n': case '\r': fputc(c, f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\x%02x", c);
			else
				fputc(c, f);
		}
	}
}

/* Valid UTF-8 copy of s (str_utf8_len: no overlong form, no surrogate,
 * nothing above U+10FFFF): every other byte becomes '?', so that the XML
 * and the JSON parse. */
static char *utf8_clean(const char *s)
{
	char *out = xstrdup(s), *o = out;
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	while (*p) {
		if (!(len = str_utf8_len(p))) {
			*o++ = '?';
			p++;
			continue;
		}
		memcpy(o, p, len);
		o += len;
		p += len;
	}
	*o = '\0';
	return out;
}

static void xml_text(FILE *f, const char *s)
{
	char *c = utf8_clean(s);
	xml_escape(f, c);
	free(c);
}

int acceptance_write_junit(FILE *f, const char *suite, const struct acceptance_result *r, size_t n)
{
	size_t i, failures = 0, skipped = 0;
	double total = 0;

	for (i = 0; i < n; i++) {
		failures += r[i].status == ACCEPTANCE_FAIL;
		skipped += r[i].status == ACCEPTANCE_NOT_RUN;
		total += r[i].duration;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
		n, failures, skipped, total);
	fprintf(f, "  <testsuite name=\"");
	xml_text(f, suite ? suite : "acceptance");
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
		n, failures, skipped, total);
	for (i = 0; i < n; i++) {
		const struct acceptance_result *x = &r[i];
		fprintf(f, "    <testcase name=\"");
		xml_text(f, x->test);
		fputc('@', f);
		xml_text(f, x->node);
		fprintf(f, "\" classname=\"");
		xml_text(f, x->classname);
		fprintf(f, "\" time=\"%.3f\">\n", x->duration);
		if (x->status == ACCEPTANCE_FAIL) {
			fprintf(f, "      <failure message=\"");
			xml_text(f, x->reason ? x->reason : "failed");
			fprintf(f, "\" type=\"%s\">", acceptance_kind_name(x->kind));
			xml_text(f, x->reason ? x->reason : "failed");
			fprintf(f, "</failure>\n");
		} else if (x->status == ACCEPTANCE_NOT_RUN) {
			fprintf(f, "      <skipped message=\"");
			xml_text(f, x->reason ? x->reason : "not run");
			fprintf(f, "\"/>\n");
		}
		if (x->output && *x->output) {
			fprintf(f, "      <system-out>");
			xml_text(f, x->output);
			fprintf(f, "</system-out>\n");
		}
		fprintf(f, "    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
	fflush(f);
	return ferror(f) ? -1 : 0;
}

static void json_str(FILE *f, const char *s)
{
	char *c = utf8_clean(s ? s : "");
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)c; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
	free(c);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);   /* JSON has no infinity (an unbounded tolerance) */
}

int acceptance_write_json(FILE *f, const struct acceptance_result *r, size_t n)
{
	size_t i, j;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		const struct acceptance_result *x = &r[i];
		fprintf(f, "%s\n {\"name\":", i ? "," : "");
		json_str(f, x->test);
		fputs(",\"kind\":", f);
		json_str(f, acceptance_kind_name(x->kind));
		fputs(",\"node\":", f);
		json_str(f, x->node);
		fprintf(f, ",\"passed\":%s,\"run\":%s,\"reason\":", x->status == ACCEPTANCE_PASS ? "true" : "false",
			x->status == ACCEPTANCE_NOT_RUN ? "false" : "true");
		if (x->reason)
			json_str(f, x->reason);
		else
			fputs("null", f);
		fprintf(f, ",\"duration\":%.3f,\"perf\":{", x->duration);
		for (j = 0; j < x->nperf; j++) {
			const struct acceptance_perf_result *p = &x->perf[j];
			if (j)
				fputc(',', f);
			json_str(f, p->name);
			fputs(":{\"value\":", f);
			if (p->have_value)
				json_num(f, p->value);
			else
				fputs("null", f);
			if (p->have_ref) {
				fputs(",\"reference\":", f);
				json_num(f, p->reference);
				fputs(",\"lower\":", f);
				json_num(f, p->lower);
				fputs(",\"upper\":", f);
				json_num(f, p->upper);
				fputs(",\"target\":", f);
				json_str(f, p->target);
			} else {
				fputs(",\"reference\":null,\"lower\":null,\"upper\":null,\"target\":null", f);
			}
			fprintf(f, ",\"passed\":%s}", p->passed ? "true" : "false");
		}
		fputs("}}", f);
	}
	fputs(n ? "\n]\n" : "]\n", f);
	fflush(f);
	return ferror(f) ? -1 : 0;
}

static int write_format(FILE *f, const char *what, const char *suite,
			const struct acceptance_result *r, size_t n)
{
	if (!strcmp(what, "JUnit"))
		return acceptance_write_junit(f, suite, r, n);
	if (!strcmp(what, "JSON"))
		return acceptance_write_json(f, r, n);
	return acceptance_write_tap(f, r, n);
}

int acceptance_write_file(const char *path, const char *what, const char *suite,
			  const struct acceptance_result *r, size_t n, char *err, size_t errlen)
{
	struct file_replace fr;
	char why[PATH_MAX * 2 + 256];
	struct stat st;
	FILE *f;
	int rc;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(f = fopen(path, "w"))) {
			snprintf(err, errlen, "cannot write the %s report to %s: %s", what, path,
				 strerror(errno));
			return -1;
		}
		rc = write_format(f, what, suite, r, n);
		if (fclose(f) != 0)
			rc = -1;
		if (rc < 0)
			snprintf(err, errlen, "writing the %s report to %s failed: %s", what, path,
				 strerror(errno));
		return rc;
	}
	if (replace_open(&fr, path, why, sizeof(why)) < 0 ||
	    replace_commit(&fr, write_format(fr.f, what, suite, r, n) < 0, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "the %s report: %s", what, why);
		return -1;
	}
	return 0;
}

int acceptance_write_reports(const char *prog, const char *tap, const char *junit,
			     const char *json, const char *suite,
			     const struct acceptance_result *r, size_t n)
{
	const struct {
		const char *path, *what;
	} out[] = { { tap, "TAP" }, { junit, "JUnit" }, { json, "JSON" } };
	char err[PATH_MAX + 256];
	int rc = 0;
	size_t i;

	if (!tap && (acceptance_write_tap(stdout, r, n) < 0 || fflush(stdout) != 0)) {
		fprintf(stderr, "%s: writing the TAP report to standard output failed: %s\n", prog,
			strerror(errno));
		rc = -1;
	}
	for (i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		if (out[i].path &&
		    acceptance_write_file(out[i].path, out[i].what, suite, r, n, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s\n", prog, err);
			rc = -1;
		}
	return rc;
}

/*
 * policy.c - the admission policy on recorded facts (see policy.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy.h"
#include "provenance.h"
#include "strutil.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- the check ---- */

struct reasons {
	char *buf;
	size_t len;
	int n;
};

static void reason(struct reasons *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reason(struct reasons *r, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!r->len) {           /* no room for a reason: only count */
		r->n++;
		return;
	}
	used = strlen(r->buf);
	if (r->n++ && used + 2 < r->len) {
		strcpy(r->buf + used, "; ");
		used += 2;
	}
	if (used + 1 >= r->len)
		return;
	va_start(ap, fmt);
	vsnprintf(r->buf + used, r->len - used, fmt, ap);
	va_end(ap);
}

static json_object *section(json_object *rec, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(rec, key, &v) || !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* An integer member, or -1 when absent, null or not a number. */
static long long jint(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
		return -1;
	return json_object_get_int64(v);
}

static void check_kernel(const struct policy *p, json_object *k, struct reasons *r)
{
	const char *release = jstr(k, "release"), *build_id = jstr(k, "build_id");
	size_t i;

	if (p->any_kernel || (!p->nblessed && !p->nblessed_extra))
		return;
	for (i = 0; i < p->nblessed; i++)
		if (policy_kernel_matches(p->blessed_kernels[i], release, build_id))
			return;
	for (i = 0; i < p->nblessed_extra; i++)
		if (policy_kernel_matches(p->blessed_extra[i], release, build_id))
			return;
	reason(r, "kernel %s (build-id %s) is not blessed (bless it with burstctl bless, or see BlessedKernels=)",
	       release ? release : "unknown", build_id ? build_id : "unknown");
}

static void check_taint(const struct policy *p, json_object *k, struct reasons *r)
{
	json_object *t;
	long long v;
	char bad[40], allowed[40];

	if (!json_object_object_get_ex(k, "taint", &t) || !t) {
		if (p->allowed_taint != ~0ULL)
			reason(r, "kernel taint unknown (no /proc/sys/kernel/tainted in the record)");
		return;
	}
	v = jint(t, "value");
	if (v < 0) {
		reason(r, "kernel taint unreadable in the record");
		return;
	}
	if ((unsigned long long)v & ~p->allowed_taint) {
		provenance_taint_flags((unsigned long long)v & ~p->allowed_taint, bad);
		provenance_taint_flags(p->allowed_taint, allowed);
		reason(r, "kernel tainted with %s (taint %lld; AllowedTaint=%s)", bad, v,
		       allowed[0] ? allowed : "none");
	}
}

static void check_modules(const struct policy *p, json_object *k, struct reasons *r)
{
	json_object *mods;
	size_t i, j, n;

	if (!p->nrequired)
		return;
	if (!json_object_object_get_ex(k, "modules", &mods) || !json_object_is_type(mods, json_type_array)) {
		reason(r, "kernel modules unknown (no /proc/modules in the record); required: %s",
		       p->required_modules[0]);
		return;
	}
	n = json_object_array_length(mods);
	for (i = 0; i < p->nrequired; i++) {
		for (j = 0; j < n; j++) {
			const char *m = json_object_get_string(json_object_array_get_idx(mods, j));
			if (m && !strcmp(m, p->required_modules[i]))
				break;
		}
		if (j == n)
			reason(r, "kernel module %s is required but not loaded", p->required_modules[i]);
	}
}

/* Does entry "NAME=VERSION" name this module? */
static bool driver_named(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(entry, name, n) && entry[n] == '=';
}

/* The blessed versions of module name in p's lists, ", "-separated, into
 * sb; false when it has none (any version runs). */
static bool blessed_versions(const struct policy *p, const char *name, struct strbuf *sb)
{
	char **lists[2] = { p->blessed_drivers, p->blessed_drivers_extra };
	size_t ns[2] = { p->nblessed_drivers, p->nblessed_drivers_extra }, l, i;
	bool any = false;

	sb_init(sb);
	sb_add(sb, "");
	if (p->any_driver)
		return false;
	for (l = 0; l < 2; l++)
		for (i = 0; i < ns[l]; i++)
			if (driver_named(lists[l][i], name)) {
				sb_addf(sb, "%s%s", any ? ", " : "", strchr(lists[l][i], '=') + 1);
				any = true;
			}
	return any;
}

static bool version_blessed(const struct policy *p, const char *name, const char *version)
{
	char **lists[2] = { p->blessed_drivers, p->blessed_drivers_extra };
	size_t ns[2] = { p->nblessed_drivers, p->nblessed_drivers_extra }, l, i;

	for (l = 0; l < 2; l++)
		for (i = 0; i < ns[l]; i++)
			if (driver_named(lists[l][i], name) && !strcmp(strchr(lists[l][i], '=') + 1, version))
				return true;
	return false;
}

static void check_drivers(const struct policy *p, json_object *rec, struct reasons *r)
{
	json_object *d;

	if (p->any_driver || (!p->nblessed_drivers && !p->nblessed_drivers_extra))
		return;
	if (!json_object_object_get_ex(rec, "drivers", &d) || !json_object_is_type(d, json_type_object)) {
		reason(r, "driver versions unknown (the record has no drivers section: a burst-node older than "
		       "BlessedDrivers=?) and some drivers are blessed");
		return;
	}
	json_object_object_foreach(d, name, e) {
		const char *version = jstr(e, "version");
		struct strbuf bl;

		if (!blessed_versions(p, name, &bl)) {
			sb_free(&bl);
			continue;
		}
		if (!version)
			reason(r, "driver %s is loaded but its version is unknown (no readable /sys/module/%s/version); "
			       "blessed: %s", name, name, bl.s);
		else if (!version_blessed(p, name, version))
			reason(r, "driver %s %s is not blessed (blessed: %s; bless it with burstctl bless --driver %s=%s, "
			       "or see BlessedDrivers=)", name, version, bl.s, name, version);
		sb_free(&bl);
	}
}

int policy_check_drivers(const struct policy *p, json_object *record, char *why, size_t whylen)
{
	struct reasons r = { why, whylen, 0 };

	if (whylen)
		why[0] = '\0';
	check_drivers(p, record, &r);
	return r.n ? 1 : 0;
}

/* Does the recorded model name satisfy the catalog's ("A100" takes "A100-40GB")? */
static bool model_matches(const char *recorded, const char *promised)
{
	size_t n = strlen(promised);

	return !strcasecmp(recorded, promised) ||
	       (!strncasecmp(recorded, promised, n) && recorded[n] == '-');
}

static void check_hardware(const struct catalog *cat, const struct cat_type *type,
			   double tolerance, json_object *rec, struct reasons *r)
{
	const char *tname = catalog_str(cat, type->name);
	json_object *acc = section(rec, "accelerators"), *cpu = section(rec, "cpu");
	json_object *mem = section(rec, "memory"), *models;
	double want;

	want = type->num[KEY_ACC_COUNT];
	if (!isnan(want) && want > 0) {
		const char *model = type->sid[KEY_ACC_MODEL] >= 0 &&
				    type->sid[KEY_ACC_MODEL] != cat->none_id ?
				    catalog_str(cat, type->sid[KEY_ACC_MODEL]) : NULL;
		long long found = 0;
		struct strbuf other;

		sb_init(&other);
		sb_add(&other, "");
		if (json_object_object_get_ex(acc, "models", &models) &&
		    json_object_is_type(models, json_type_object)) {
			json_object_object_foreach(models, name, cnt) {
				long long c = json_object_get_int64(cnt);
				if (!model || model_matches(name, model))
					found += c;
				else
					sb_addf(&other, "%s%lld x %s", other.len ? ", " : "", c, name);
			}
		}
		if (found < (long long)want) {
			if (other.len)
				reason(r, "%.0f x %s expected for %s, %lld found (also %s)", want,
				       model ? model : "accelerator", tname, found, other.s);
			else
				reason(r, "%.0f x %s expected for %s, %lld found (missing %lld)", want,
				       model ? model : "accelerator", tname, found, (long long)want - found);
		}
		sb_free(&other);
	}
	want = type->num[KEY_VCPUS];
	if (!isnan(want) && want > 0) {
		long long threads = jint(cpu, "threads");
		if (threads < 0)
			reason(r, "%.0f vCPUs expected for %s, the record has no CPU count", want, tname);
		else if (threads < (long long)want)
			reason(r, "%.0f vCPUs expected for %s, %lld found", want, tname, threads);
	}
	want = type->num[KEY_MEMORY];
	if (!isnan(want) && want > 0) {
		long long total = jint(mem, "total_bytes");
		double floor_ = want * (1.0 - tolerance);
		if (total < 0)
			reason(r, "%.1f GiB memory expected for %s, the record has no MemTotal", want / GIB, tname);
		else if ((double)total < floor_)
			reason(r, "%.1f GiB memory expected for %s, %.1f GiB found (at least %.1f GiB with MemoryTolerance=%g%%)",
			       want / GIB, tname, (double)total / GIB, floor_ / GIB, tolerance * 100);
	}
}

int policy_check(const struct policy *p, const struct catalog *cat, const struct cat_type *type,
		 json_object *record, char *why, size_t whylen)
{
	static const char *const sections[] = { "kernel", "cpu", "memory", "accelerators", NULL };
	struct reasons r = { why, whylen, 0 };
	json_object *k;
	size_t i;

	if (whylen)
		why[0] = '\0';
	if (!record || !json_object_is_type(record, json_type_object)) {
		snprintf(why, whylen, "the record is not a JSON object");
		return -1;
	}
	for (i = 0; sections[i]; i++)
		if (!section(record, sections[i])) {
			snprintf(why, whylen, "the record has no %s section (not a slurm-burst provenance record?)",
				 sections[i]);
			return -1;
		}
	k = section(record, "kernel");
	check_kernel(p, k, &r);
	check_taint(p, k, &r);
	check_modules(p, k, &r);
	check_drivers(p, record, &r);
	if (type && cat)
		check_hardware(cat, type, p->memory_tolerance, record, &r);
	return r.n ? 1 : 0;
}

/* ---- the blessed-kernels file ---- */

void policy_free_list(char **list, size_t n)
{
	size_t i;

	if (!list)
		return;
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

static int load_list(const char *path, bool (*valid)(const char *), const char *what,
		     const char *form, char ***list, size_t *n, burst_err_t *err);

int policy_load_blessed_file(const char *path, char ***list, size_t *n, burst_err_t *err)
{
	return load_list(path, policy_valid_kernel, "kernels",
			 "RELEASE[:BUILDID] (e.g. 6.1.0-18-amd64:3f2a...", list, n, err);
}

int policy_load_blessed_drivers(const char *path, char ***list, size_t *n, burst_err_t *err)
{
	return load_list(path, policy_valid_driver, "drivers",
			 "NAME=VERSION (e.g. nvidia=550.54.15", list, n, err);
}

int policy_load_state(struct policy *p, const char *state_dir, burst_err_t *err)
{
	char path[4096];
	burst_err_t e2;
	int rc = 0;

	p->blessed_extra = NULL;
	p->nblessed_extra = 0;
	p->blessed_drivers_extra = NULL;
	p->nblessed_drivers_extra = 0;
	snprintf(path, sizeof(path), "%s/blessed-kernels", state_dir);
	if (policy_load_blessed_file(path, &p->blessed_extra, &p->nblessed_extra, err) < 0)
		rc = -1;
	snprintf(path, sizeof(path), "%s/blessed-drivers", state_dir);
	if (policy_load_blessed_drivers(path, &p->blessed_drivers_extra, &p->nblessed_drivers_extra,
					rc < 0 ? &e2 : err) < 0)
		rc = -1;
	return rc;
}

void policy_free_state(struct policy *p)
{
	policy_free_list(p->blessed_extra, p->nblessed_extra);
	policy_free_list(p->blessed_drivers_extra, p->nblessed_drivers_extra);
	p->blessed_extra = p->blessed_drivers_extra = NULL;
	p->nblessed_extra = p->nblessed_drivers_extra = 0;
}

static int load_list(const char *path, bool (*valid)(const char *), const char *what,
		     const char *form, char ***list, size_t *n, burst_err_t *err)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, **v = NULL;
	size_t cap = 0, nv = 0, i;
	int lineno = 0, rc = -1;
	ssize_t got;

	if (!f) {
		if (errno == ENOENT)
			return 0;
		burst_err_set(err, "%s: cannot read the blessed %s: %s", path, what, strerror(errno));
		return -1;
	}
	while ((got = getline(&line, &cap, f)) >= 0) {
		const char *nul = memchr(line, '\0', (size_t)got);
		char *s;
		lineno++;
		/* the string functions below would stop at it and take what is
		 * before it: "nvidia=550.54.15\0..." would bless nvidia=550.54.15 */
		if (nul) {
			burst_err_set(err, "%s:%d: a NUL byte at column %zu: the blessed %s file is text, one "
				      "entry a line; fix or remove the line, or use burstctl bless", path, lineno,
				      (size_t)(nul - line) + 1, what);
			goto out;
		}
		s = strchr(line, '#');
		if (s)
			*s = '\0';
		s = str_trim(line);
		if (!*s)
			continue;
		if (!valid(s)) {
			char *e = str_escape_ctl(s);
			burst_err_set(err, "%s:%d: '%s' is not %s; fix or remove the line, or use burstctl bless)",
				      path, lineno, e, form);
			free(e);
			goto out;
		}
		v = xrealloc(v, (nv + 1) * sizeof(*v));
		v[nv++] = xstrdup(s);
	}
	if (ferror(f)) {
		burst_err_set(err, "%s: read error", path);
		goto out;
	}
	*list = xrealloc(*list, (*n + nv + 1) * sizeof(**list));
	for (i = 0; i < nv; i++)
		(*list)[(*n)++] = v[i];
	(*list)[*n] = NULL;
	nv = 0;
	rc = 0;
out:
	policy_free_list(v, nv);
	free(line);
	fclose(f);
	return rc;
}

/* ---- health: the node now against its admitted record ---- */

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcasecmp(a, b));
}

/* Does the device list of rec hold one with this PCI address? */
static bool has_device(json_object *acc, const char *addr)
{
	json_object *devs;
	size_t i;

	if (!json_object_object_get_ex(acc, "devices", &devs) || !json_object_is_type(devs, json_type_array))
		return false;
	for (i = 0; i < json_object_array_length(devs); i++) {
		const char *a = jstr(json_object_array_get_idx(devs, i), "pci_address");
		if (a && !strcmp(a, addr))
			return true;
	}
	return false;
}

static void compare_accelerators(json_object *was, json_object *is, struct reasons *r)
{
	json_object *wm, *im, *devs;

	if (!json_object_object_get_ex(was, "models", &wm) || !json_object_is_type(wm, json_type_object))
		return;
	if (!json_object_object_get_ex(is, "models", &im) || !json_object_is_type(im, json_type_object))
		im = NULL;
	json_object_object_foreach(wm, model, cnt) {
		long long want = json_object_get_int64(cnt), have = 0;
		json_object *c;
		struct strbuf gone;
		size_t i;

		if (im && json_object_object_get_ex(im, model, &c))
			have = json_object_get_int64(c);
		if (have >= want)
			continue;
		sb_init(&gone);
		sb_add(&gone, "");
		if (json_object_object_get_ex(was, "devices", &devs) && json_object_is_type(devs, json_type_array))
			for (i = 0; i < json_object_array_length(devs); i++) {
				json_object *d = json_object_array_get_idx(devs, i);
				const char *m = jstr(d, "model"), *a = jstr(d, "pci_address");
				if (m && a && !strcmp(m, model) && !has_device(is, a))
					sb_addf(&gone, "%s%s", gone.len ? " " : "", a);
			}
		if (gone.len)
			reason(r, "accelerators: %lld x %s admitted, %lld now (missing %s)", want, model, have, gone.s);
		else
			reason(r, "accelerators: %lld x %s admitted, %lld now", want, model, have);
		sb_free(&gone);
	}
}

/* Drivers of the admitted record that changed version or are gone now. */
static void compare_drivers(json_object *admitted, json_object *now, struct reasons *r)
{
	json_object *wd, *id;

	if (!json_object_object_get_ex(admitted, "drivers", &wd) || !json_object_is_type(wd, json_type_object))
		return;   /* admitted by a burst-node that did not record drivers */
	if (!json_object_object_get_ex(now, "drivers", &id) || !json_object_is_type(id, json_type_object))
		id = NULL;
	json_object_object_foreach(wd, name, e) {
		const char *a = jstr(e, "version"), *b;
		json_object *ie;

		if (!id || !json_object_object_get_ex(id, name, &ie)) {
			reason(r, "driver %s %s admitted, not loaded now", name, a ? a : "(version unknown)");
			continue;
		}
		b = jstr(ie, "version");
		if ((a || b) && !(a && b && !strcmp(a, b)))
			reason(r, "driver %s %s admitted, %s now", name, a ? a : "(version unknown)",
			       b ? b : "(version unknown)");
	}
}

int policy_compare(json_object *admitted, json_object *now, double tolerance, char *why,
		   size_t whylen)
{
	static const char *const sections[] = { "kernel", "memory", "accelerators", NULL };
	struct reasons r = { why, whylen, 0 };
	json_object *wk, *ik, *wmem, *imem;
	const char *a, *b;
	long long wt, it;
	size_t i;

	if (whylen)
		why[0] = '\0';
	for (i = 0; sections[i]; i++) {
		if (!admitted || !section(admitted, sections[i])) {
			snprintf(why, whylen, "the admitted record has no %s section", sections[i]);
			return -1;
		}
		if (!now || !section(now, sections[i])) {
			snprintf(why, whylen, "the node's record now has no %s section", sections[i]);
			return -1;
		}
	}
	wk = section(admitted, "kernel");
	ik = section(now, "kernel");
	a = jstr(wk, "release");
	b = jstr(ik, "release");
	if (!same_str(a, b))
		reason(&r, "kernel release %s admitted, %s now", a ? a : "unknown", b ? b : "unknown");
	else {
		a = jstr(wk, "build_id");
		b = jstr(ik, "build_id");
		if (!same_str(a, b))
			reason(&r, "kernel build-id %s admitted, %s now", a ? a : "unknown", b ? b : "unknown");
	}
	compare_accelerators(section(admitted, "accelerators"), section(now, "accelerators"), &r);
	compare_drivers(admitted, now, &r);
	wmem = section(admitted, "memory");
	imem = section(now, "memory");
	wt = jint(wmem, "total_bytes");
	it = jint(imem, "total_bytes");
	if (wt > 0 && it < 0)
		reason(&r, "memory %.1f GiB admitted, unknown now", wt / GIB);
	else if (wt > 0 && (double)it < (double)wt * (1.0 - tolerance))
		reason(&r, "memory %.1f GiB admitted, %.1f GiB now (MemoryTolerance=%g%%)", wt / GIB, it / GIB,
		       tolerance * 100);
	return r.n ? 1 : 0;
}

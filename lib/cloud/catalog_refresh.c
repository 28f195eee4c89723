/*
 * catalog_refresh.c - refresh a catalog CSV from DescribeInstanceTypes
 * (catalog_refresh.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "catalog_refresh.h"
#include "keys.h"
#include "strutil.h"
#include "syncdir.h"

#define MAX_LINE 4096

static const char *const col_names[CATREF_NCOLS] = {
	"vcpus", "memory_mib", "accelerator_count", "accelerator", "accelerator_type",
	"accelerator_manufacturer", "accelerator_architecture", "accelerator_memory_mib",
	"processor", "processor_manufacturer", "processor_microarchitecture", "processor_isa",
	"storage_type", "storage_gib", "network_gbps", "efa",
};

/* EC2 is authoritative for these; the others are curated (filled when empty). */
static const bool api_wins[CATREF_NCOLS] = {
	[CATREF_VCPUS] = true, [CATREF_MEMORY] = true, [CATREF_ACC_COUNT] = true,
	[CATREF_ISA] = true, [CATREF_STORAGE_TYPE] = true, [CATREF_STORAGE_GIB] = true,
	[CATREF_NETWORK] = true, [CATREF_EFA] = true,
};

const char *catref_col_name(enum catref_col c)
{
	return (unsigned)c < CATREF_NCOLS ? col_names[c] : NULL;
}

/* ---- the CSV as text ---- */

static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Split a line at commas into n malloc'ed cells (catalog cells hold no quotes). */
static char **split_cells(const char *line, size_t *n)
{
	char **v = NULL;
	const char *p = line;

	*n = 0;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		v = xrealloc(v, (*n + 1) * sizeof(char *));
		v[(*n)++] = xstrndup(p, len);
		if (!c)
			break;
		p = c + 1;
	}
	return v;
}

void catref_table_free(struct catref_table *t)
{
	size_t i;

	if (!t)
		return;
	free_strv(t->comments, t->ncomments);
	for (i = 0; i < t->nrows; i++)
		free_strv(t->rows[i], t->ncols);
	free(t->rows);
	free_strv(t->cols, t->ncols);
	memset(t, 0, sizeof(*t));
}

int catref_read(const char *path, struct catref_table *t, burst_err_t *err)
{
	FILE *f = fopen(path, "r");
	char line[MAX_LINE];
	size_t lineno = 0;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (!f) {
		burst_err_set(err, "%s: cannot open the catalog: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		lineno++;
		if (n && line[n - 1] != '\n' && !feof(f)) {
			burst_err_set(err, "%s:%zu: line longer than %d bytes", path, lineno, MAX_LINE);
			goto out;
		}
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (!t->cols && (line[0] == '#' || !line[0])) {
			t->comments = xrealloc(t->comments, (t->ncomments + 1) * sizeof(char *));
			t->comments[t->ncomments++] = xstrdup(line);
			continue;
		}
		if (!line[0] || line[0] == '#')
			continue;   /* blank lines and comments among rows are not kept */
		if (!t->cols) {
			t->cols = split_cells(line, &t->ncols);
			continue;
		}
		{
			size_t nc;
			char **cells = split_cells(line, &nc);
			if (nc != t->ncols) {
				burst_err_set(err, "%s:%zu: %zu cells where the header has %zu", path, lineno, nc, t->ncols);
				free_strv(cells, nc);
				goto out;
			}
			t->rows = xrealloc(t->rows, (t->nrows + 1) * sizeof(char **));
			t->rows[t->nrows++] = cells;
		}
	}
	if (ferror(f)) {
		burst_err_set(err, "%s: read error: %s", path, strerror(errno));
		goto out;
	}
	if (!t->cols) {
		burst_err_set(err, "%s: no header line (empty catalog file?)", path);
		goto out;
	}
	rc = 0;
out:
	fclose(f);
	if (rc < 0)
		catref_table_free(t);
	return rc;
}

static void put_cells(FILE *f, char **cells, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		fprintf(f, "%s%s", k ? "," : "", cells[k]);
	fputc('\n', f);
}

int catref_write(const char *path, const struct catref_table *t, burst_err_t *err)
{
	struct file_replace fr;
	char why[3 * PATH_MAX];
	size_t i;

	/* a reader (the agent, burstctl) sees the old catalog or the new one */
	if (replace_open(&fr, path, why, sizeof(why)) < 0) {
		burst_err_set(err, "%s", why);
		return -1;
	}
	for (i = 0; i < t->ncomments; i++)
		fprintf(fr.f, "%s\n", t->comments[i]);
	put_cells(fr.f, t->cols, t->ncols);
	for (i = 0; i < t->nrows; i++)
		put_cells(fr.f, t->rows[i], t->ncols);
	/* readable by all whatever the umask, as the shipped catalog */
	if (replace_commit(&fr, ferror(fr.f) || fchmod(fileno(fr.f), 0644) < 0, why, sizeof(why)) < 0) {
		burst_err_set(err, "%s", why);
		return -1;
	}
	return 0;
}

/* ---- mapping ---- */

const char *catref_network_gbps(const char *perf, char *buf, size_t len)
{
	const char *p = perf;
	char *end;
	double v, mult = 1, unit;

	buf[0] = '\0';
	if (!p)
		return buf;
	while (isspace((unsigned char)*p))
		p++;
	if (!strncasecmp(p, "up to ", 6))
		p += 6;
	errno = 0;
	v = strtod(p, &end);
	if (end == p || errno)
		return buf;   /* Low, Moderate, High: no number */
	p = end;
	if (*p == 'x' || *p == 'X') {
		mult = v;
		p++;
		v = strtod(p, &end);
		if (end == p)
			return buf;
		p = end;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (!strncasecmp(p, "gigabit", 7))
		unit = 1;
	else if (!strncasecmp(p, "megabit", 7))
		unit = 0.001;
	else
		return buf;
	v = v * mult * unit;
	snprintf(buf, len, "%.3f", v);
	/* "12.500" -> "12.5", "400.000" -> "400" (as the catalog writes numbers) */
	end = buf + strlen(buf);
	while (end > buf && end[-1] == '0')
		*--end = '\0';
	if (end > buf && end[-1] == '.')
		*--end = '\0';
	return buf;
}

/* a and b equal when compared without case, spaces, dashes and underscores */
static bool loose_eq(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' || *a == '-' || *a == '_')
			a++;
		while (*b == ' ' || *b == '-' || *b == '_')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
		a++;
		b++;
	}
}

/* The catalog row that best stands for the model EC2 calls name (memory mem MiB). */
static const struct cat_type *model_row(const struct catalog *cat, const char *name, long mem)
{
	const struct cat_type *best = NULL;
	double bestd = INFINITY;
	size_t i, n = strlen(name);

	for (i = 0; i < cat->ntypes; i++) {
		const struct cat_type *t = &cat->types[i];
		const char *m = t->sid[KEY_ACC_MODEL] >= 0 ? catalog_str(cat, t->sid[KEY_ACC_MODEL]) : NULL;
		if (!m || t->sid[KEY_ACC_MODEL] == cat->none_id)
			continue;
		if (loose_eq(m, name))
			return t;
	}
	/* NAME-<variant> (A100-40GB, V100-32GB): the nearest per-device memory */
	for (i = 0; i < cat->ntypes; i++) {
		const struct cat_type *t = &cat->types[i];
		const char *m = t->sid[KEY_ACC_MODEL] >= 0 ? catalog_str(cat, t->sid[KEY_ACC_MODEL]) : NULL;
		double d;
		if (!m || t->sid[KEY_ACC_MODEL] == cat->none_id || strncasecmp(m, name, n) || m[n] != '-')
			continue;
		d = isnan(t->num[KEY_ACC_MEMORY]) ? 1e18 : fabs(t->num[KEY_ACC_MEMORY] / 1048576.0 - (double)mem);
		if (d < bestd) {
			bestd = d;
			best = t;
		}
	}
	return best;
}

static char *fmt_long(long v)
{
	char b[32];

	if (v <= 0)
		return xstrdup("");
	snprintf(b, sizeof(b), "%ld", v);
	return xstrdup(b);
}

static char *fmt_mib(double bytes)
{
	return isnan(bytes) ? xstrdup("") : fmt_long((long)llround(bytes / 1048576.0));
}

/* Spaces -> '-': a model name as the catalog writes them ("Radeon Pro V520"). */
static char *model_name(const char *s)
{
	char *r = xstrdup(s), *p;

	for (p = r; *p; p++)
		if (*p == ' ' || *p == ',')
			*p = '-';
	return r;
}

void catref_map(const struct ec2_instance_type *it, const struct catalog *cat,
		char *cells[CATREF_NCOLS], char *note, size_t notelen)
{
	const char *acc = NULL, *acc_manuf = NULL, *acc_kind = NULL;
	long acc_mem = 0;
	int acc_n = 0;
	char net[32];
	size_t k;

	note[0] = '\0';
	for (k = 0; k < CATREF_NCOLS; k++)
		cells[k] = NULL;
	cells[CATREF_VCPUS] = fmt_long(it->vcpus);
	cells[CATREF_MEMORY] = fmt_long(it->memory_mib);
	if (it->gpu_count > 0 && it->gpu_name) {
		acc = it->gpu_name;
		acc_n = it->gpu_count;
		acc_manuf = it->gpu_manufacturer;
		acc_mem = it->gpu_memory_mib;
		acc_kind = "GPU";
	} else if (it->neuron_count > 0 && it->neuron_name) {
		acc = it->neuron_name;
		acc_n = it->neuron_count;
		acc_manuf = "AWS";
		acc_mem = it->neuron_memory_mib;
		acc_kind = "ASIC";
	}
	if (acc) {
		const struct cat_type *m = model_row(cat, acc, acc_mem);
		char n[16];
		snprintf(n, sizeof(n), "%d", acc_n);
		cells[CATREF_ACC_COUNT] = xstrdup(n);
		if (m) {
			int a = m->sid[KEY_ACC_ARCH];
			cells[CATREF_ACC] = xstrdup(catalog_str(cat, m->sid[KEY_ACC_MODEL]));
			cells[CATREF_ACC_TYPE] = xstrdup(m->sid[KEY_ACC_TYPE] >= 0 ? catalog_str(cat, m->sid[KEY_ACC_TYPE]) : acc_kind);
			cells[CATREF_ACC_MANUFACTURER] = xstrdup(m->sid[KEY_ACC_MANUFACTURER] >= 0 ?
								 catalog_str(cat, m->sid[KEY_ACC_MANUFACTURER]) :
								 acc_manuf ? acc_manuf : "");
			cells[CATREF_ACC_ARCH] = xstrdup(a >= 0 ? arch_at((size_t)a)->name : "");
			cells[CATREF_ACC_MEMORY] = isnan(m->num[KEY_ACC_MEMORY]) ? fmt_long(acc_mem) :
				fmt_mib(m->num[KEY_ACC_MEMORY]);
		} else {
			cells[CATREF_ACC] = model_name(acc);
			cells[CATREF_ACC_TYPE] = xstrdup(acc_kind);
			cells[CATREF_ACC_MANUFACTURER] = xstrdup(acc_manuf ? acc_manuf : "");
			cells[CATREF_ACC_ARCH] = xstrdup("");
			cells[CATREF_ACC_MEMORY] = fmt_long(acc_mem);
			snprintf(note, notelen, "%s: accelerator '%s' is not in the catalog's model table: "
				 "its architecture is left unknown (add the model to a row, or to burst.conf)",
				 it->name ? it->name : "?", acc);
		}
	} else {
		cells[CATREF_ACC_COUNT] = xstrdup("0");
	}
	cells[CATREF_PROC_MANUFACTURER] = xstrdup(it->cpu_manufacturer ? it->cpu_manufacturer : "");
	if (!it->arch)
		cells[CATREF_ISA] = xstrdup("");
	else if (!strncmp(it->arch, "arm64", 5))
		cells[CATREF_ISA] = xstrdup("aarch64");
	else if (!strncmp(it->arch, "x86_64", 6) || !strcmp(it->arch, "i386"))
		cells[CATREF_ISA] = xstrdup("x86_64");
	else
		cells[CATREF_ISA] = xstrdup(it->arch);
	if (it->storage_disk && it->storage_gb > 0) {
		bool ssd = !strcasecmp(it->storage_disk, "ssd");
		cells[CATREF_STORAGE_TYPE] = xstrdup(ssd ? (it->storage_nvme ? "nvme-ssd" : "ssd") :
						     !strcasecmp(it->storage_disk, "hdd") ? "hdd" : it->storage_disk);
		cells[CATREF_STORAGE_GIB] = fmt_long(it->storage_gb);
	} else if (it->storage_disk && !*it->storage_disk) {
		/* the API says nothing of storage (Compute Engine's machine types) */
		cells[CATREF_STORAGE_TYPE] = xstrdup("");
		cells[CATREF_STORAGE_GIB] = xstrdup("");
	} else {
		cells[CATREF_STORAGE_TYPE] = xstrdup("ebs");
		cells[CATREF_STORAGE_GIB] = xstrdup("");
	}
	cells[CATREF_NETWORK] = xstrdup(catref_network_gbps(it->network_performance, net, sizeof(net)));
	cells[CATREF_EFA] = xstrdup(it->efa_supported ? "yes" : "no");
	for (k = 0; k < CATREF_NCOLS; k++)
		if (!cells[k])
			cells[k] = xstrdup("");
}

void catref_cells_free(char *cells[CATREF_NCOLS])
{
	size_t k;

	for (k = 0; k < CATREF_NCOLS; k++) {
		free(cells[k]);
		cells[k] = NULL;
	}
}

/* ---- merging ---- */

void catref_report_free(struct catref_report *r)
{
	size_t i;

	if (!r)
		return;
	free_strv(r->added, r->nadded);
	for (i = 0; i < r->nchanged; i++) {
		free(r->changed[i].type);
		free(r->changed[i].col);
		free(r->changed[i].old);
		free(r->changed[i].new_);
	}
	free(r->changed);
	for (i = 0; i < r->nkept; i++) {
		free(r->kept[i].type);
		free(r->kept[i].col);
		free(r->kept[i].old);
		free(r->kept[i].new_);
	}
	free(r->kept);
	free_strv(r->missing, r->nmissing);
	free_strv(r->notes, r->nnotes);
	free(r->old_version);
	free(r->new_version);
	memset(r, 0, sizeof(*r));
}

static void add_diff(struct catref_diff **v, size_t *n, const char *type, const char *col,
		     const char *old, const char *new_)
{
	struct catref_diff *d;

	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	d = &(*v)[(*n)++];
	d->type = xstrdup(type);
	d->col = xstrdup(col);
	d->old = xstrdup(old);
	d->new_ = xstrdup(new_);
}

static void add_str(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(char *));
	(*v)[(*n)++] = xstrdup(s);
}

static int find_col(const struct catref_table *t, const char *name)
{
	size_t k;

	for (k = 0; k < t->ncols; k++)
		if (!strcmp(t->cols[k], name))
			return (int)k;
	return -1;
}

/* Insert an empty column name at position at. */
static void insert_col(struct catref_table *t, size_t at, const char *name)
{
	size_t i;

	t->cols = xrealloc(t->cols, (t->ncols + 1) * sizeof(char *));
	memmove(&t->cols[at + 1], &t->cols[at], (t->ncols - at) * sizeof(char *));
	t->cols[at] = xstrdup(name);
	for (i = 0; i < t->nrows; i++) {
		t->rows[i] = xrealloc(t->rows[i], (t->ncols + 1) * sizeof(char *));
		memmove(&t->rows[i][at + 1], &t->rows[i][at], (t->ncols - at) * sizeof(char *));
		t->rows[i][at] = xstrdup("");
	}
	t->ncols++;
}

static void set_cell(char **cell, const char *v)
{
	free(*cell);
	*cell = xstrdup(v);
}

static int row_cmp(const void *a, const void *b)
{
	const char *const *ra = *(const char *const *const *)a;
	const char *const *rb = *(const char *const *const *)b;
	return strcmp(ra[0], rb[0]);
}

/* Accelerator columns: cleared together when the count becomes 0. */
static bool is_acc_col(int c)
{
	return c >= CATREF_ACC && c <= CATREF_ACC_MEMORY;
}

int catref_merge(struct catref_table *t, const struct ec2_instance_types *api,
		 const struct catalog *cat, const struct catref_merge_opts *o,
		 struct catref_report *rep, burst_err_t *err)
{
	int name_col = find_col(t, "instance_type"), src_col, idx[CATREF_NCOLS];
	char *seen = NULL;
	size_t i, k, nold;
	bool any = false;

	memset(rep, 0, sizeof(*rep));
	if (name_col < 0) {
		burst_err_set(err, "the catalog's header has no 'instance_type' column");
		return -1;
	}
	if (find_col(t, "efa") < 0) {
		rep->efa_added = true;
		any = true;   /* a new column is a new file: a new version */
		src_col = find_col(t, "source");
		insert_col(t, src_col >= 0 ? (size_t)src_col : t->ncols, "efa");
		name_col = find_col(t, "instance_type");
	}
	for (k = 0; k < CATREF_NCOLS; k++) {
		idx[k] = find_col(t, col_names[k]);
		if (idx[k] < 0) {
			burst_err_set(err, "the catalog's header has no '%s' column", col_names[k]);
			return -1;
		}
	}
	src_col = find_col(t, "source");
	nold = t->nrows;
	seen = xcalloc(nold ? nold : 1, 1);
	for (i = 0; i < api->n; i++) {
		const struct ec2_instance_type *it = &api->v[i];
		char *cells[CATREF_NCOLS], note[512];
		char **row = NULL;
		size_t r;
		bool changed = false, keep_acc = false;

		if (!it->name || !*it->name)
			continue;
		catref_map(it, cat, cells, note, sizeof(note));
		if (note[0])
			add_str(&rep->notes, &rep->nnotes, note);
		for (r = 0; r < nold; r++)
			if (!strcmp(t->rows[r][name_col], it->name)) {
				row = t->rows[r];
				seen[r] = 1;
				break;
			}
		if (!row) {
			row = xcalloc(t->ncols, sizeof(char *));
			for (k = 0; k < t->ncols; k++)
				row[k] = xstrdup("");
			set_cell(&row[name_col], it->name);
			for (k = 0; k < CATREF_NCOLS; k++)
				set_cell(&row[idx[k]], cells[k]);
			if (!strcmp(cells[CATREF_ACC_COUNT], "0"))
				for (k = CATREF_ACC; k <= CATREF_ACC_MEMORY; k++)
					set_cell(&row[idx[k]], "");
			if (src_col >= 0)
				set_cell(&row[src_col], o->source ? o->source : "aws-api");
			t->rows = xrealloc(t->rows, (t->nrows + 1) * sizeof(char **));
			t->rows[t->nrows++] = row;
			add_str(&rep->added, &rep->nadded, it->name);
			catref_cells_free(cells);
			any = true;
			continue;
		}
		/* EC2 reports no accelerator where the catalog has a non-GPU one
		 * (an FPGA): EC2's silence is not a fact */
		if (!strcmp(cells[CATREF_ACC_COUNT], "0") && strcmp(row[idx[CATREF_ACC_COUNT]], "0") &&
		    row[idx[CATREF_ACC_COUNT]][0] && strcasecmp(row[idx[CATREF_ACC_TYPE]], "GPU"))
			keep_acc = true;
		for (k = 0; k < CATREF_NCOLS; k++) {
			char **cell = &row[idx[k]];
			if (is_acc_col((int)k) && !strcmp(cells[CATREF_ACC_COUNT], "0"))
				continue;   /* follows the count, below */
			/* strings compare without case: the catalog interns "AWS" as "aws" */
			if (!cells[k][0] || !strcasecmp(*cell, cells[k]))
				continue;
			if (k == CATREF_EFA && rep->efa_added) {
				set_cell(cell, cells[k]);   /* a new column: filled, not a change */
				continue;
			}
			if (k == CATREF_ACC_COUNT && keep_acc) {
				add_diff(&rep->kept, &rep->nkept, it->name, col_names[k], *cell, cells[k]);
				continue;
			}
			if (!(*cell)[0] || api_wins[k]) {
				add_diff(&rep->changed, &rep->nchanged, it->name, col_names[k], *cell, cells[k]);
				set_cell(cell, cells[k]);
				changed = true;
			} else
				add_diff(&rep->kept, &rep->nkept, it->name, col_names[k], *cell, cells[k]);
		}
		/* no accelerator any more: its cells go with it */
		if (!strcmp(row[idx[CATREF_ACC_COUNT]], "0"))
			for (k = CATREF_ACC; k <= CATREF_ACC_MEMORY; k++)
				if (row[idx[k]][0]) {
					add_diff(&rep->changed, &rep->nchanged, it->name, col_names[k], row[idx[k]], "");
					set_cell(&row[idx[k]], "");
					changed = true;
				}
		if (changed) {
			any = true;
			if (src_col >= 0) {
				const char *s = row[src_col];
				size_t l = strlen(s);
				if (l < 4 || strcmp(s + l - 4, "+api")) {
					char *ns = xmalloc(l + 8);
					sprintf(ns, "%s%s", l ? s : "", l ? "+api" : "api");
					free(row[src_col]);
					row[src_col] = ns;
				}
			}
		} else
			rep->unchanged++;
		catref_cells_free(cells);
	}
	/* in the catalog, not in EC2's answer */
	for (i = 0, k = 0; i < t->nrows; i++) {
		if (i < nold && !seen[i]) {
			add_str(&rep->missing, &rep->nmissing, t->rows[i][name_col]);
			if (o && o->drop_missing) {
				free_strv(t->rows[i], t->ncols);
				any = true;
				continue;
			}
		}
		t->rows[k++] = t->rows[i];
	}
	t->nrows = k;
	rep->dropped = o && o->drop_missing && rep->nmissing;
	free(seen);
	if (name_col == 0)
		qsort(t->rows, t->nrows, sizeof(char **), row_cmp);
	/* the version */
	{
		int vline = -1;
		for (i = 0; i < t->ncomments; i++)
			if (!strncmp(t->comments[i], "# version=", 10)) {
				vline = (int)i;
				rep->old_version = xstrdup(t->comments[i] + 10);
				str_trim(rep->old_version);
			}
		if (!any) {
			rep->new_version = xstrdup(rep->old_version ? rep->old_version : "");
			return 0;
		}
		if (o && o->version)
			rep->new_version = xstrdup(o->version);
		else {
			char d[32];
			time_t now = time(NULL);
			struct tm tm;
			gmtime_r(&now, &tm);
			strftime(d, sizeof(d), "%Y.%m.%d-api", &tm);
			rep->new_version = xstrdup(d);
		}
		/* drop an earlier "# refreshed" line: the new one says it all */
		for (i = 0, k = 0; i < t->ncomments; i++) {
			if (!strncmp(t->comments[i], "# refreshed ", 12)) {
				free(t->comments[i]);
				if ((int)i < vline)
					vline--;
				continue;
			}
			t->comments[k++] = t->comments[i];
		}
		t->ncomments = k;
		{
			struct strbuf sb;
			char stamp[32];
			time_t now = time(NULL);
			struct tm tm;
			size_t at;

			gmtime_r(&now, &tm);
			strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
			sb_init(&sb);
			sb_addf(&sb, "# version=%s", rep->new_version);
			if (vline >= 0)
				set_cell(&t->comments[vline], sb.s);
			sb_free(&sb);
			sb_init(&sb);
			sb_addf(&sb, "# refreshed by burstctl catalog refresh from %s (provider %s, region %s) at %s; was version %s",
				 o && o->api ? o->api : "EC2 DescribeInstanceTypes", o && o->provider ? o->provider : "?", o && o->region ? o->region : "?", stamp,
				 rep->old_version ? rep->old_version : "(none)");
			t->comments = xrealloc(t->comments, (t->ncomments + 2) * sizeof(char *));
			at = vline >= 0 ? (size_t)vline + 1 : t->ncomments;
			if (vline < 0) {
				char *v = xmalloc(strlen(rep->new_version) + 16);
				sprintf(v, "# version=%s", rep->new_version);
				t->comments[t->ncomments++] = v;
				at = t->ncomments;
			}
			memmove(&t->comments[at + 1], &t->comments[at], (t->ncomments - at) * sizeof(char *));
			t->comments[at] = sb_take(&sb);
			t->ncomments++;
		}
	}
	return 0;
}

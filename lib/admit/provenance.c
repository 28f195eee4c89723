/*
 * provenance.c - the node provenance record (see provenance.h).
 *
 * Prefix: provenance_ (public), prov_ (internal).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "confwords.h"
#include "provenance.h"
#include "strutil.h"

#define PROV_FORMAT "slurm-burst-provenance/1"
#define PROV_MAX_FILE (16u << 20)     /* no file we read is near this */
#define PROV_CMD_TIMEOUT_MS 10000
#define NT_GNU_BUILD_ID_TYPE 3
#define PROV_NVIDIA_PROC "/proc/driver/nvidia/version"

/* ---------- reading files under the sysroot ---------- */

static char *prov_path(const char *root, const char *p)
{
	struct strbuf sb;
	size_t n = strlen(root);

	while (n > 0 && root[n - 1] == '/')
		n--;
	sb_init(&sb);
	sb_addf(&sb, "%.*s%s", (int)n, root, p);
	return sb_take(&sb);
}

/* The whole file root/p (NUL-terminated, length in *len), or NULL when it
 * is missing or unreadable. */
static char *prov_read(const char *root, const char *p, size_t *len)
{
	char *path = prov_path(root, p), *buf = NULL;
	size_t n = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	free(path);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r;

		if (cap - n < 4097) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0 || n + (size_t)r > PROV_MAX_FILE)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf)
		buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* A one-value file (sysfs, procfs), trimmed; NULL when missing. */
static char *prov_read_value(const char *root, const char *p)
{
	char *s = prov_read(root, p, NULL), *t;

	if (!s)
		return NULL;
	t = xstrdup(str_trim(s));
	free(s);
	return t;
}

/*
 * At most max bytes of the regular file root/p (NUL-terminated, length in
 * *len; *over set when the file holds more), or NULL when it is missing,
 * unreadable or not a regular file (a FIFO, a device, a directory: a
 * captured tree may hold anything, and a FIFO would block the read).
 */
static char *prov_read_head(const char *root, const char *p, size_t max, size_t *len, bool *over)
{
	char *path = prov_path(root, p), *buf;
	size_t n = 0;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	free(path);
	*len = 0;
	*over = false;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = xmalloc(max + 2);
	while (n < max + 1) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		*over = true;
		n = max;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* A byte a module version may hold: MODULE_VERSION strings in the wild are
 * "550.54.15", "2.17.3g", "23.10-1.1.9", "6.3.6", "1.0.2.0-k", "2.15.4_1". */
static bool prov_version_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '.' || c == '-' || c == '_' || c == '+' || c == '~' || c == ':';
}

char *provenance_parse_version(const char *data, size_t len)
{
	size_t b = 0, e;

	if (!data || len > PROVENANCE_MAX_VERSION_FILE)
		return NULL;
	while (b < len && (data[b] == ' ' || data[b] == '\t'))
		b++;
	e = b;
	while (e < len && prov_version_char((unsigned char)data[e]))
		e++;
	if (e == b || e - b > PROVENANCE_MAX_VERSION)
		return NULL;
	/* only blanks and one line end may follow: a second line, a NUL or
	 * any other byte means this is not a version file */
	{
		size_t i = e;

		while (i < len && (data[i] == ' ' || data[i] == '\t'))
			i++;
		if (i < len && data[i] == '\r')
			i++;
		if (i < len && data[i] == '\n')
			i++;
		if (i != len)
			return NULL;
	}
	return xstrndup(data + b, e - b);
}

char *provenance_parse_nvrm(const char *data, size_t len)
{
	static const char tag[] = "NVRM version:";
	size_t off = 0;

	if (!data)
		return NULL;
	while (off < len) {
		const char *line = data + off, *nl = memchr(line, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - line) : len - off, i = sizeof(tag) - 1;

		off += ll + 1;
		if (ll < sizeof(tag) - 1 || memcmp(line, tag, sizeof(tag) - 1))
			continue;
		if (memchr(line, '\0', ll))
			return NULL;
		/* the first blank-separated word of digits and dots with a dot:
		 * "NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." and
		 * "NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..." */
		while (i < ll) {
			size_t w, j;
			bool digits = true, dot = false;

			while (i < ll && (line[i] == ' ' || line[i] == '\t'))
				i++;
			w = i;
			while (i < ll && line[i] != ' ' && line[i] != '\t')
				i++;
			for (j = w; j < i; j++) {
				if (line[j] == '.')
					dot = true;
				else if (line[j] < '0' || line[j] > '9')
					digits = false;
			}
			if (i > w && digits && dot && line[w] != '.' && line[i - 1] != '.' &&
			    i - w <= PROVENANCE_MAX_VERSION)
				return xstrndup(line + w, i - w);
		}
		return NULL;
	}
	return NULL;
}

static bool prov_exists(const char *root, const char *p)
{
	char *path = prov_path(root, p);
	bool e = access(path, F_OK) == 0;

	free(path);
	return e;
}

/* ---------- JSON helpers ---------- */

/* Add s (may be NULL: null) as a string and free it. */
static void prov_add_str_take(json_object *o, const char *key, char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
	free(s);
}

static void prov_add_str(json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

static int prov_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sorted array of unique strings, from words (modified in place). */
static json_object *prov_sorted_words(char **words, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	qsort(words, n, sizeof(*words), prov_strcmp);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(words[i], words[i - 1]) != 0)
			json_object_array_add(a, json_object_new_string(words[i]));
	return a;
}

/* ---------- canonical serialization ---------- */

static void prov_put_string(struct strbuf *sb, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	sb_add(sb, "\"");
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		switch (c) {
		case '"': sb_add(sb, "\\\""); i++; continue;
		case '\\': sb_add(sb, "\\\\"); i++; continue;
		case '\b': sb_add(sb, "\\b"); i++; continue;
		case '\f': sb_add(sb, "\\f"); i++; continue;
		case '\n': sb_add(sb, "\\n"); i++; continue;
		case '\r': sb_add(sb, "\\r"); i++; continue;
		case '\t': sb_add(sb, "\\t"); i++; continue;
		default: break;
		}
		if (c < 0x20) {
			sb_addf(sb, "\\u%04x", c);
			i++;
			continue;
		}
		/* s is NUL-terminated: the decoder stops at the NUL */
		n = str_utf8_len(s + i);
		if (n > len - i)
			n = 0;
		if (n == 0) {
			sb_add(sb, "\\ufffd");
			i++;
			continue;
		}
		sb_addf(sb, "%.*s", (int)n, (const char *)s + i);
		i += n;
	}
	sb_add(sb, "\"");
}

static void prov_indent(struct strbuf *sb, bool pretty, int depth)
{
	if (!pretty)
		return;
	sb_addf(sb, "\n%*s", depth * 2, "");
}

static void prov_put(struct strbuf *sb, json_object *v, bool pretty, int depth)
{
	size_t i, n;

	switch (json_object_get_type(v)) {
	case json_type_null:
		sb_add(sb, "null");
		break;
	case json_type_boolean:
		sb_add(sb, json_object_get_boolean(v) ? "true" : "false");
		break;
	case json_type_int:
		sb_addf(sb, "%" PRId64, json_object_get_int64(v));
		break;
	case json_type_double:
		sb_addf(sb, "%.17g", json_object_get_double(v));
		break;
	case json_type_string:
		prov_put_string(sb, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		break;
	case json_type_array:
		n = json_object_array_length(v);
		if (n == 0) {
			sb_add(sb, "[]");
			break;
		}
		sb_add(sb, "[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_add(sb, ",");
			prov_indent(sb, pretty, depth + 1);
			prov_put(sb, json_object_array_get_idx(v, i), pretty, depth + 1);
		}
		prov_indent(sb, pretty, depth);
		sb_add(sb, "]");
		break;
	case json_type_object: {
		const char **keys;

		n = (size_t)json_object_object_length(v);
		if (n == 0) {
			sb_add(sb, "{}");
			break;
		}
		keys = xcalloc(n, sizeof(*keys));
		i = 0;
		json_object_object_foreach(v, key, val) {
			(void)val;
			keys[i++] = key;
		}
		qsort(keys, n, sizeof(*keys), prov_strcmp);
		sb_add(sb, "{");
		for (i = 0; i < n; i++) {
			json_object *m = NULL;

			if (i)
				sb_add(sb, ",");
			prov_indent(sb, pretty, depth + 1);
			prov_put_string(sb, keys[i], strlen(keys[i]));
			sb_add(sb, pretty ? ": " : ":");
			json_object_object_get_ex(v, keys[i], &m);
			prov_put(sb, m, pretty, depth + 1);
		}
		free(keys);
		prov_indent(sb, pretty, depth);
		sb_add(sb, "}");
		break;
	}
	}
}

char *provenance_serialize(json_object *v, bool pretty)
{
	struct strbuf sb;

	sb_init(&sb);
	sb_add(&sb, "");
	prov_put(&sb, v, pretty, 0);
	return sb_take(&sb);
}

char *provenance_id(json_object *rec)
{
	char *s = provenance_serialize(rec, false), *hex;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (!EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL)) {
		fprintf(stderr, "provenance: sha256 failed (libcrypto)\n");
		abort();
	}
	free(s);
	hex = xmalloc(2 * mdlen + 1);
	for (i = 0; i < mdlen; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	hex[2 * mdlen] = '\0';
	return hex;
}

/* ---------- kernel ---------- */

static size_t prov_align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

char *provenance_build_id(const unsigned char *notes, size_t len)
{
	size_t off = 0;

	while (len - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name, desc, next;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		name = off + 12;
		if (namesz > len - name)
			return NULL;
		desc = prov_align4(name + namesz);
		if (desc > len || descsz > len - desc)
			return NULL;
		next = prov_align4(desc + descsz);
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    memcmp(notes + name, "GNU", 4) == 0 && descsz > 0) {
			char *hex = xmalloc(2 * (size_t)descsz + 1);
			uint32_t i;

			for (i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", notes[desc + i]);
			hex[2 * (size_t)descsz] = '\0';
			return hex;
		}
		if (next <= off || next > len)
			return NULL;
		off = next;
	}
	return NULL;
}

char *provenance_taint_flags(unsigned long long mask, char *buf)
{
	/* bit i is letters[i]; Documentation/admin-guide/tainted-kernels.rst */
	static const char letters[] = "PFSRMBUDAWCIOELKXTNJ";
	size_t i, n = 0;

	for (i = 0; i < sizeof(letters) - 1; i++)
		if (mask & (1ULL << i))
			buf[n++] = letters[i];
	for (; i < 64 && n < 32; i++)   /* bits the kernel may add later */
		if (mask & (1ULL << i))
			buf[n++] = '?';
	buf[n] = '\0';
	return buf;
}

static json_object *prov_kernel(const char *root)
{
	json_object *k = json_object_new_object();
	char *s, **mods = NULL;
	size_t len, n = 0, cap = 0;

	prov_add_str_take(k, "release", prov_read_value(root, "/proc/sys/kernel/osrelease"));
	prov_add_str_take(k, "version", prov_read_value(root, "/proc/sys/kernel/version"));
	prov_add_str_take(k, "cmdline", prov_read_value(root, "/proc/cmdline"));
	s = prov_read(root, "/sys/kernel/notes", &len);
	prov_add_str_take(k, "build_id", s ? provenance_build_id((unsigned char *)s, len) : NULL);
	free(s);

	s = prov_read_value(root, "/proc/sys/kernel/tainted");
	if (s) {
		char *end, flags[40];
		unsigned long long v;

		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno == 0 && end != s && *end == '\0') {
			json_object *t = json_object_new_object();

			json_object_object_add(t, "value", json_object_new_int64((int64_t)v));
			prov_add_str(t, "flags", provenance_taint_flags(v, flags));
			json_object_object_add(k, "taint", t);
		} else {
			json_object_object_add(k, "taint", NULL);
		}
		free(s);
	} else {
		json_object_object_add(k, "taint", NULL);
	}

	s = prov_read(root, "/proc/modules", NULL);
	if (s) {
		char *save = NULL, *line;

		for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			size_t w = strcspn(line, " \t");

			if (w == 0)
				continue;
			line[w] = '\0';
			if (n == cap)
				mods = xrealloc(mods, (cap = cap ? cap * 2 : 64) * sizeof(*mods));
			mods[n++] = line;
		}
		json_object_object_add(k, "modules", prov_sorted_words(mods, n));
		free(mods);
		free(s);
	} else {
		json_object_object_add(k, "modules", NULL);
	}
	return k;
}

/* ---------- drivers: versions of the kernel modules HPC jobs depend on ---------- */

/* Out-of-tree or vendor-versioned modules whose version decides whether a
 * job runs: GPU and accelerator drivers, RDMA and fabric drivers, parallel
 * file system clients. A module here is recorded when it is loaded
 * (/proc/modules) or present in /sys/module (built in). */
static const char *const prov_driver_modules[] = {
	/* GPUs and accelerators */
	"nvidia", "nvidia_uvm", "nvidia_peermem", "nvidia_fs", "gdrdrv", "amdgpu",
	"habanalabs", "neuron",
	/* InfiniBand, RDMA, fabrics, intra-node transports */
	"ib_core", "ib_uverbs", "rdma_ucm", "mlx5_core", "mlx5_ib", "mlx4_core", "efa",
	"hfi1", "irdma", "bnxt_re", "cxi_ss1", "knem", "xpmem",
	/* parallel file system clients: Lustre, GPFS (Storage Scale), BeeGFS */
	"lustre", "lnet", "ko2iblnd", "mmfs26", "mmfslinux", "tracedev", "beegfs",
	NULL,
};

const char *const *provenance_driver_modules(void)
{
	return prov_driver_modules;
}

static bool prov_in_list(json_object *list, const char *name)
{
	size_t i, n;

	if (!list || !json_object_is_type(list, json_type_array))
		return false;
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		const char *m = json_object_get_string(json_object_array_get_idx(list, i));

		if (m && !strcmp(m, name))
			return true;
	}
	return false;
}

static bool prov_is_dir(const char *root, const char *p)
{
	char *path = prov_path(root, p);
	struct stat st;
	bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);

	free(path);
	return dir;
}

/* The version in the one-line file root/p, or NULL (missing, too big, not
 * a version). */
static char *prov_version_file(const char *root, const char *p)
{
	size_t len;
	bool over;
	char *s = prov_read_head(root, p, PROVENANCE_MAX_VERSION_FILE, &len, &over), *v;

	if (!s)
		return NULL;
	v = over ? NULL : provenance_parse_version(s, len);
	free(s);
	return v;
}

static json_object *prov_drivers(const char *root, json_object *kernel)
{
	json_object *d = json_object_new_object(), *mods = NULL;
	size_t i;

	json_object_object_get_ex(kernel, "modules", &mods);
	for (i = 0; prov_driver_modules[i]; i++) {
		const char *name = prov_driver_modules[i];
		char sys[128], *v;
		const char *src = NULL;
		bool nvproc = !strcmp(name, "nvidia") && prov_exists(root, PROV_NVIDIA_PROC);
		json_object *e;

		snprintf(sys, sizeof(sys), "/sys/module/%s", name);
		if (!prov_in_list(mods, name) && !prov_is_dir(root, sys) && !nvproc)
			continue;
		snprintf(sys, sizeof(sys), "/sys/module/%s/version", name);
		v = prov_version_file(root, sys);
		if (v)
			src = sys;
		if (!v && nvproc) {
			size_t len;
			bool over;
			char *s = prov_read_head(root, PROV_NVIDIA_PROC, PROVENANCE_MAX_NVRM_FILE, &len, &over);

			v = s && !over ? provenance_parse_nvrm(s, len) : NULL;
			free(s);
			if (v)
				src = PROV_NVIDIA_PROC;
		}
		e = json_object_new_object();
		prov_add_str_take(e, "version", v);
		prov_add_str(e, "source", src);
		json_object_object_add(d, name, e);
	}
	return d;
}

/* ---------- firmware, os ---------- */

static json_object *prov_firmware(const char *root)
{
	static const char *const keys[] = {
		"sys_vendor", "product_name", "product_version", "board_vendor",
		"board_name", "bios_vendor", "bios_version", "bios_date", NULL,
	};
	json_object *f = json_object_new_object();
	size_t i;

	for (i = 0; keys[i]; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/sys/class/dmi/id/%s", keys[i]);
		prov_add_str_take(f, keys[i], prov_read_value(root, p));
	}
	return f;
}

/* The value of an os-release assignment: quotes removed, \-escapes undone. */
static char *prov_shell_value(const char *v)
{
	char *out = xmalloc(strlen(v) + 1), *o = out;
	char q = 0;

	if (*v == '"' || *v == '\'')
		q = *v++;
	for (; *v && *v != q; v++) {
		if (*v == '\\' && q != '\'' && v[1])
			v++;
		*o++ = *v;
	}
	*o = '\0';
	return out;
}

static json_object *prov_os(const char *root)
{
	static const char *const keys[] = { "ID", "VERSION_ID", "PRETTY_NAME", "VERSION_CODENAME", NULL };
	json_object *os = json_object_new_object();
	char *vals[4] = { NULL, NULL, NULL, NULL };
	char *s = prov_read(root, "/etc/os-release", NULL);
	size_t i;

	if (!s)
		s = prov_read(root, "/usr/lib/os-release", NULL);
	if (s) {
		char *save = NULL, *line;

		for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *eq = strchr(line, '=');

			if (!eq || *line == '#')
				continue;
			*eq = '\0';
			for (i = 0; keys[i]; i++)
				if (!strcmp(str_trim(line), keys[i])) {
					free(vals[i]);   /* as in the shell, the last one wins */
					vals[i] = prov_shell_value(str_trim(eq + 1));
				}
		}
		free(s);
	}
	for (i = 0; keys[i]; i++) {
		char key[32];
		size_t j;

		for (j = 0; keys[i][j] && j < sizeof(key) - 1; j++)
			key[j] = (char)(keys[i][j] >= 'A' && keys[i][j] <= 'Z' ? keys[i][j] + 32 : keys[i][j]);
		key[j] = '\0';
		prov_add_str_take(os, key, vals[i]);
	}
	return os;
}

/* ---------- cpu, memory ---------- */

/* Number of CPUs in a kernel cpu list ("0-3,8-11"), or -1 if malformed. */
static long prov_cpulist_count(const char *s)
{
	long n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		n += b - a + 1;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

struct prov_cpu_ids {
	long *v;
	size_t n, cap;
};

static void prov_ids_add(struct prov_cpu_ids *ids, long v)
{
	size_t i;

	for (i = 0; i < ids->n; i++)
		if (ids->v[i] == v)
			return;
	if (ids->n == ids->cap)
		ids->v = xrealloc(ids->v, (ids->cap = ids->cap ? ids->cap * 2 : 16) * sizeof(long));
	ids->v[ids->n++] = v;
}

static json_object *prov_cpu(const char *root)
{
	json_object *c = json_object_new_object();
	char *s = prov_read(root, "/proc/cpuinfo", NULL);
	char *model = NULL, *vendor = NULL, *flags = NULL, *cpuarch = NULL, *isa = NULL;
	char *online;
	struct prov_cpu_ids sockets = { NULL, 0, 0 }, cores = { NULL, 0, 0 };
	long processors = 0, phys = -1, threads = -1;
	bool have_phys = false;

	if (s) {
		char *save = NULL, *line;

		for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *colon = strchr(line, ':'), *key, *val;

			if (!colon)
				continue;
			*colon = '\0';
			key = str_trim(line);
			val = str_trim(colon + 1);
			if (!strcmp(key, "processor")) {
				processors++;
				phys = -1;
			} else if (!strcmp(key, "model name") && !model) {
				model = val;
			} else if (!strcmp(key, "vendor_id") && !vendor) {
				vendor = val;
			} else if (!strcmp(key, "CPU implementer") && !vendor) {
				vendor = val;
			} else if ((!strcmp(key, "flags") || !strcmp(key, "Features")) && !flags) {
				flags = val;
			} else if (!strcmp(key, "CPU architecture") && !cpuarch) {
				cpuarch = val;
			} else if (!strcmp(key, "isa") && !isa) {
				isa = val;
			} else if (!strcmp(key, "physical id")) {
				phys = strtol(val, NULL, 10);
				have_phys = true;
				prov_ids_add(&sockets, phys);
			} else if (!strcmp(key, "core id") && phys >= 0) {
				prov_ids_add(&cores, phys * 1000000 + strtol(val, NULL, 10));
			}
		}
	}
	prov_add_str(c, "model", model);
	prov_add_str(c, "vendor", vendor);
	if (flags) {
		char **w = NULL, *save = NULL, *t;
		size_t n = 0, cap = 0;

		for (t = strtok_r(flags, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
			if (n == cap)
				w = xrealloc(w, (cap = cap ? cap * 2 : 128) * sizeof(*w));
			w[n++] = t;
		}
		json_object_object_add(c, "flags", prov_sorted_words(w, n));
		free(w);
	} else {
		json_object_object_add(c, "flags", NULL);
	}

	/* the ISA: the kernel's machine (uname -m) if the sysroot has it;
	 * otherwise inferred from cpuinfo */
	{
		char *arch = prov_read_value(root, "/proc/sys/kernel/arch");
		bool lm = false;

		if (!arch && flags) {
			/* flags was tokenized in place: look through the sorted array */
			json_object *fa = NULL;
			size_t i;

			json_object_object_get_ex(c, "flags", &fa);
			for (i = 0; fa && i < json_object_array_length(fa); i++)
				if (!strcmp(json_object_get_string(json_object_array_get_idx(fa, i)), "lm"))
					lm = true;
		}
		if (arch)
			prov_add_str_take(c, "isa", arch);
		else if (lm)
			prov_add_str(c, "isa", "x86_64");
		else if (vendor && (!strcmp(vendor, "GenuineIntel") || !strcmp(vendor, "AuthenticAMD")))
			prov_add_str(c, "isa", "i686");
		else if (cpuarch && !strcmp(cpuarch, "8"))
			prov_add_str(c, "isa", "aarch64");
		else if (cpuarch && !strcmp(cpuarch, "7"))
			prov_add_str(c, "isa", "armv7l");
		else if (isa && !strncmp(isa, "rv64", 4))
			prov_add_str(c, "isa", "riscv64");
		else
			prov_add_str(c, "isa", NULL);
	}

	online = prov_read_value(root, "/sys/devices/system/cpu/online");
	if (online)
		threads = prov_cpulist_count(online);
	if (threads < 0 && processors > 0)
		threads = processors;
	prov_add_str_take(c, "online", online);
	json_object_object_add(c, "threads", threads > 0 ? json_object_new_int64(threads) : NULL);
	json_object_object_add(c, "sockets", have_phys ? json_object_new_int64((int64_t)sockets.n) : NULL);
	json_object_object_add(c, "cores", have_phys && cores.n ? json_object_new_int64((int64_t)cores.n) : NULL);
	free(sockets.v);
	free(cores.v);
	free(s);
	return c;
}

static json_object *prov_memory(const char *root)
{
	json_object *m = json_object_new_object(), *h;
	char *s = prov_read(root, "/proc/meminfo", NULL);
	long long total = -1, hp_total = -1, hp_size = -1;

	if (s) {
		char *save = NULL, *line;

		for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			long long v;
			char unit[8] = "";

			if (sscanf(line, "MemTotal: %lld %7s", &v, unit) >= 1)
				total = !strcmp(unit, "kB") ? v * 1024 : v;
			else if (sscanf(line, "HugePages_Total: %lld", &v) == 1)
				hp_total = v;
			else if (sscanf(line, "Hugepagesize: %lld %7s", &v, unit) >= 1)
				hp_size = !strcmp(unit, "kB") ? v * 1024 : v;
		}
		free(s);
	}
	json_object_object_add(m, "total_bytes", total >= 0 ? json_object_new_int64(total) : NULL);
	h = json_object_new_object();
	json_object_object_add(h, "total", hp_total >= 0 ? json_object_new_int64(hp_total) : NULL);
	json_object_object_add(h, "size_bytes", hp_size >= 0 ? json_object_new_int64(hp_size) : NULL);
	json_object_object_add(m, "hugepages", h);
	return m;
}

/* ---------- accelerators ---------- */

struct prov_accel {
	unsigned vendor, device;
	char *model, *arch;
	long memory_mib;
};

struct prov_table {
	struct prov_accel *v;
	size_t n;
};

static void prov_table_free(struct prov_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].model);
		free(t->v[i].arch);
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static int prov_table_load(const char *path, struct prov_table *t, burst_err_t *err)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0;
	unsigned lineno = 0;

	t->v = NULL;
	t->n = 0;
	if (!f) {
		burst_err_set(err, "cannot read the accelerator table %s: %s (install share/pci/accelerators.csv or set BURST_PCI_TABLE)",
			      path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fld[6], *p = line, *end;
		int i;
		unsigned long vendor, device;

		lineno++;
		str_trim(line);
		if (!*line || *line == '#' || !strncmp(line, "vendor,", 7))
			continue;
		for (i = 0; i < 6; i++) {
			fld[i] = p;
			p = strchr(p, ',');
			if (!p && i < 5)
				break;
			if (p)
				*p++ = '\0';
		}
		vendor = strtoul(fld[0], &end, 16);
		if (i < 6 || *end || (device = strtoul(fld[1], &end, 16), *end) || !*fld[2]) {
			burst_err_set(err, "%s:%u: expected vendor,device,model,architecture,memory_mib,source (hex ids)",
				      path, lineno);
			fclose(f);
			prov_table_free(t);
			return -1;
		}
		if (t->n == cap)
			t->v = xrealloc(t->v, (cap = cap ? cap * 2 : 64) * sizeof(*t->v));
		t->v[t->n].vendor = (unsigned)vendor;
		t->v[t->n].device = (unsigned)device;
		t->v[t->n].model = xstrdup(fld[2]);
		t->v[t->n].arch = *fld[3] ? xstrdup(fld[3]) : NULL;
		t->v[t->n].memory_mib = *fld[4] ? strtol(fld[4], NULL, 10) : -1;
		t->n++;
	}
	fclose(f);
	return 0;
}

static unsigned long prov_read_hex(const char *root, const char *dir, const char *name, bool *ok)
{
	char p[512], *s, *end;
	unsigned long v = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	s = prov_read_value(root, p);
	*ok = false;
	if (s) {
		v = strtoul(s, &end, 16);
		*ok = end != s && *end == '\0';
		free(s);
	}
	return v;
}

/* Does the device (not in the table) look like an accelerator? */
static bool prov_accel_class(unsigned vendor, unsigned long cls)
{
	unsigned base = (unsigned)(cls >> 16);

	if (base != 0x03 && base != 0x12)
		return false;
	switch (vendor) {
	case 0x10de: case 0x1002: case 0x1da3: case 0x1d0f:
		return true;
	case 0x8086:
		return base == 0x12;   /* Intel display controllers are integrated graphics */
	default:
		return false;
	}
}

static char **prov_list_dir(const char *path, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap)
			v = xrealloc(v, (cap = cap ? cap * 2 : 32) * sizeof(*v));
		v[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (!v)
		v = xmalloc(sizeof(*v));
	qsort(v, *n, sizeof(*v), prov_strcmp);
	return v;
}

static void prov_free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static json_object *prov_accelerators(const char *root, const struct prov_table *t)
{
	char *dir = prov_path(root, "/sys/bus/pci/devices");
	size_t n, i, j;
	char **names = prov_list_dir(dir, &n);
	json_object *a, *devs, *models;
	int64_t count = 0;

	free(dir);
	if (!names)
		return NULL;
	a = json_object_new_object();
	devs = json_object_new_array();
	models = json_object_new_object();
	for (i = 0; i < n; i++) {
		char sub[512], link[512], uevent[sizeof(sub) + 16], *drv = NULL, *lp, *ue;
		const struct prov_accel *hit = NULL;
		unsigned long vendor, device, cls, svendor, sdevice;
		bool okv, okd, okc, oksv, oksd;
		json_object *d, *cnt;
		ssize_t r;

		snprintf(sub, sizeof(sub), "/sys/bus/pci/devices/%s", names[i]);
		vendor = prov_read_hex(root, sub, "vendor", &okv);
		device = prov_read_hex(root, sub, "device", &okd);
		cls = prov_read_hex(root, sub, "class", &okc);
		if (!okv || !okd)
			continue;
		for (j = 0; j < t->n; j++)
			if (t->v[j].vendor == vendor && t->v[j].device == device)
				hit = &t->v[j];
		if (!hit && !(okc && prov_accel_class((unsigned)vendor, cls)))
			continue;
		svendor = prov_read_hex(root, sub, "subsystem_vendor", &oksv);
		sdevice = prov_read_hex(root, sub, "subsystem_device", &oksd);
		lp = prov_path(root, sub);
		snprintf(link, sizeof(link), "%s/driver", lp);
		free(lp);
		/* the driver: the driver link, else DRIVER= of uevent (the same
		 * fact in a regular file: survives copies that drop links) */
		snprintf(uevent, sizeof(uevent), "%s/uevent", sub);
		r = readlink(link, sub, sizeof(sub) - 1);
		if (r > 0) {
			sub[r] = '\0';
			drv = strrchr(sub, '/') ? strrchr(sub, '/') + 1 : sub;
		} else if ((ue = prov_read(root, uevent, NULL))) {
			char *save = NULL, *line;

			for (line = strtok_r(ue, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
				if (!strncmp(line, "DRIVER=", 7) && line[7]) {
					snprintf(sub, sizeof(sub), "%s", line + 7);
					drv = sub;
					break;
				}
			free(ue);
		}

		d = json_object_new_object();
		prov_add_str(d, "pci_address", names[i]);
		snprintf(link, sizeof(link), "%04lx", vendor);
		prov_add_str(d, "vendor", link);
		snprintf(link, sizeof(link), "%04lx", device);
		prov_add_str(d, "device", link);
		if (oksv && oksd) {
			snprintf(link, sizeof(link), "%04lx:%04lx", svendor, sdevice);
			prov_add_str(d, "subsystem", link);
		} else {
			prov_add_str(d, "subsystem", NULL);
		}
		prov_add_str(d, "model", hit ? hit->model : "unknown");
		prov_add_str(d, "architecture", hit ? hit->arch : NULL);
		json_object_object_add(d, "memory_mib", hit && hit->memory_mib >= 0 ?
				       json_object_new_int64(hit->memory_mib) : NULL);
		prov_add_str(d, "driver", drv);
		json_object_array_add(devs, d);
		count++;
		if (json_object_object_get_ex(models, hit ? hit->model : "unknown", &cnt))
			json_object_set_int64(cnt, json_object_get_int64(cnt) + 1);
		else
			json_object_object_add(models, hit ? hit->model : "unknown", json_object_new_int64(1));
	}
	prov_free_list(names, n);
	json_object_object_add(a, "count", json_object_new_int64(count));
	json_object_object_add(a, "devices", devs);
	json_object_object_add(a, "models", models);
	return a;
}

/* ---------- interconnect ---------- */

static int prov_numcmp(const void *a, const void *b)
{
	long x = strtol(*(char *const *)a, NULL, 10), y = strtol(*(char *const *)b, NULL, 10);

	return x < y ? -1 : x > y;
}

static json_object *prov_infiniband(const char *root)
{
	char *dir = prov_path(root, "/sys/class/infiniband");
	size_t n, i, np, k;
	char **devs = prov_list_dir(dir, &n);
	json_object *ports;

	free(dir);
	if (!devs)
		return NULL;
	ports = json_object_new_array();
	for (i = 0; i < n; i++) {
		char p[512], *pd;
		char **pn;

		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports", devs[i]);
		pd = prov_path(root, p);
		pn = prov_list_dir(pd, &np);
		free(pd);
		if (!pn)
			continue;
		qsort(pn, np, sizeof(*pn), prov_numcmp);
		for (k = 0; k < np; k++) {
			json_object *o = json_object_new_object();
			static const char *const files[] = { "state", "rate", "link_layer", NULL };
			size_t f;

			prov_add_str(o, "device", devs[i]);
			json_object_object_add(o, "port", json_object_new_int64(strtol(pn[k], NULL, 10)));
			for (f = 0; files[f]; f++) {
				snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/%s/%s", devs[i], pn[k], files[f]);
				prov_add_str_take(o, files[f], prov_read_value(root, p));
			}
			json_object_array_add(ports, o);
		}
		prov_free_list(pn, np);
	}
	prov_free_list(devs, n);
	return ports;
}

/* ---------- software ---------- */

/* A command started by prov_spawn: its pid (-1: not started), the read
 * end of its output and when it started. */
struct prov_cmd {
	pid_t pid;
	int fd;
	struct timespec t0;
};

/*
 * Start argv with its stdout and stderr into a pipe; prov_reap takes what
 * it printed. The two commands of a live record run while the files are
 * read, not one after the other after them (a node's join waits for its
 * record).
 */
static void prov_spawn(struct prov_cmd *c, char *const argv[])
{
	int fds[2];
	pid_t pid;

	c->pid = -1;
	c->fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		const char *path = getenv("PATH");
		char newpath[4096];

		if (nul >= 0)
			dup2(nul, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		/* slurmd lives in sbin, which a user's PATH may lack */
		snprintf(newpath, sizeof(newpath), "%s:/usr/local/sbin:/usr/sbin:/sbin",
			 path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
		setenv("PATH", newpath, 1);
		if (!getenv("USER"))    /* ch-run refuses to start without it */
			setenv("USER", "nobody", 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	c->pid = pid;
	c->fd = fds[0];
	clock_gettime(CLOCK_MONOTONIC, &c->t0);
}

/* The first line of what a prov_spawn command printed, or NULL when it
 * could not be run, failed or took longer than PROV_CMD_TIMEOUT_MS from
 * its start. */
static char *prov_reap(struct prov_cmd *c)
{
	int status;
	char buf[4096];
	size_t n = 0;
	struct timespec t1;
	bool timed_out = false;

	if (c->pid < 0)
		return NULL;
	for (;;) {
		struct pollfd pfd = { c->fd, POLLIN, 0 };
		long left;
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = PROV_CMD_TIMEOUT_MS - ((t1.tv_sec - c->t0.tv_sec) * 1000 +
					      (t1.tv_nsec - c->t0.tv_nsec) / 1000000);
		if (left <= 0) {
			timed_out = true;
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		r = read(c->fd, buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == sizeof(buf) - 1)
			break;
	}
	close(c->fd);
	if (timed_out)
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = -1;   /* reaped by someone else: its status is not known */
			break;
		}
	c->pid = -1;
	buf[n] = '\0';
	if (timed_out || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	str_trim(buf);
	return *buf ? xstrdup(buf) : NULL;
}

static json_object *prov_packages(const char *root)
{
	static const char *const names[] = {
		"charliecloud-runtime", "libpmix2", "openmpi-bin", "slurmd", NULL,
	};
	json_object *p = json_object_new_object();
	char *s = prov_read(root, "/var/lib/dpkg/status", NULL);
	size_t i;

	for (i = 0; names[i]; i++)
		json_object_object_add(p, names[i], NULL);
	if (s) {
		char *save = NULL, *line, *pkg = NULL, *ver = NULL;
		bool installed = false;

		/* stanzas end at an empty line: the tokenizer drops those, so a
		 * stanza is flushed when the next Package: starts and at the end */
		for (line = strtok_r(s, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
			if (!line || !strncmp(line, "Package:", 8)) {
				for (i = 0; pkg && names[i]; i++)
					if (!strcmp(pkg, names[i]) && installed && ver)
						prov_add_str(p, names[i], ver);
				if (!line)
					break;
				pkg = str_trim(line + 8);
				ver = NULL;
				installed = false;
			} else if (!strncmp(line, "Version:", 8)) {
				ver = str_trim(line + 8);
			} else if (!strncmp(line, "Status:", 7)) {
				char *st = str_trim(line + 7);
				size_t l = strlen(st);

				installed = l >= 10 && !strcmp(st + l - 10, " installed");
			}
		}
		free(s);
	}
	return p;
}

/*
 * The container runtime: Charliecloud. Its version is in
 * LIBDIR/charliecloud/version.txt (installed with ch-image's library by the
 * Debian and Fedora packages and by "make install" from source), read
 * through the sysroot, so a captured or mounted image tells it without
 * running ch-run. NULL when no Charliecloud is installed there.
 */
static json_object *prov_container_runtime(const char *root)
{
	static const char *const files[] = {
		"/usr/lib/charliecloud/version.txt",
		"/usr/lib64/charliecloud/version.txt",
		"/usr/local/lib/charliecloud/version.txt",
		"/usr/local/lib64/charliecloud/version.txt",
		NULL,
	};
	size_t i;

	for (i = 0; files[i]; i++) {
		char *v = prov_version_file(root, files[i]);

		if (v) {
			json_object *c = json_object_new_object();

			prov_add_str(c, "name", "charliecloud");
			prov_add_str_take(c, "version", v);
			prov_add_str(c, "source", files[i]);
			return c;
		}
	}
	return NULL;
}

/* The versions a live record asks the programs themselves for. */
struct prov_versions {
	struct prov_cmd chrun, slurmd;
};

static void prov_versions_start(struct prov_versions *v, bool live)
{
	char *chrun[] = { "ch-run", "--version", NULL };
	char *slurmd[] = { "slurmd", "-V", NULL };

	v->chrun.pid = v->slurmd.pid = -1;
	if (!live)
		return;
	prov_spawn(&v->chrun, chrun);
	prov_spawn(&v->slurmd, slurmd);
}

static json_object *prov_software(const char *root, struct prov_versions *v)
{
	json_object *sw = json_object_new_object();

	prov_add_str_take(sw, "ch_run", prov_reap(&v->chrun));
	prov_add_str_take(sw, "slurmd", prov_reap(&v->slurmd));
	json_object_object_add(sw, "packages", prov_packages(root));
	json_object_object_add(sw, "container_runtime", prov_container_runtime(root));
	return sw;
}

/* ---------- the record ---------- */

/* The accelerator table: explicit, $BURST_PCI_TABLE, the source tree's when
 * the program runs from the build tree (like catalog_default_dir), else the
 * installed one. */
static const char *prov_default_table(const char *explicit_path)
{
	static char buf[PATH_MAX];

	return share_default_path(explicit_path, "BURST_PCI_TABLE", "pci/accelerators.csv", buf, sizeof(buf));
}

int provenance_collect(const char *sysroot, const struct prov_opts *o, json_object **out,
		       burst_err_t *err)
{
	struct prov_table table = { NULL, 0 };
	const char *tpath;
	struct stat st;
	DIR *d;
	json_object *rec = NULL, *id, *ic, *k;
	struct prov_versions ver;
	bool live;
	int rc = -1;

	*out = NULL;
	if (!sysroot || !*sysroot)
		sysroot = "/";
	live = strspn(sysroot, "/") == strlen(sysroot);
	errno = 0;
	if (stat(sysroot, &st) < 0 || !S_ISDIR(st.st_mode) || !(d = opendir(sysroot))) {
		burst_err_set(err, "cannot read the sysroot %s: %s (give --sysroot a directory holding a captured or mounted root file system)",
			      sysroot, errno ? strerror(errno) : "not a directory");
		goto out;
	}
	closedir(d);
	tpath = prov_default_table(o->pci_table);
	if (prov_table_load(tpath, &table, err) < 0)
		goto out;

	prov_versions_start(&ver, live);
	rec = json_object_new_object();
	prov_add_str(rec, "format", PROV_FORMAT);
	id = json_object_new_object();
	prov_add_str(id, "node", o->node);
	prov_add_str(id, "instance_id", o->instance_id);
	prov_add_str(id, "instance_type", o->instance_type);
	prov_add_str(id, "provider", o->provider);
	prov_add_str(id, "region", o->region);
	prov_add_str(id, "image", o->image);
	prov_add_str(id, "catalog_version", o->catalog_version);
	json_object_object_add(rec, "identity", id);
	k = prov_kernel(sysroot);
	json_object_object_add(rec, "kernel", k);
	json_object_object_add(rec, "drivers", prov_drivers(sysroot, k));
	json_object_object_add(rec, "firmware", prov_firmware(sysroot));
	json_object_object_add(rec, "os", prov_os(sysroot));
	json_object_object_add(rec, "cpu", prov_cpu(sysroot));
	json_object_object_add(rec, "memory", prov_memory(sysroot));
	json_object_object_add(rec, "accelerators", prov_accelerators(sysroot, &table));
	ic = json_object_new_object();
	json_object_object_add(ic, "infiniband", prov_infiniband(sysroot));
	json_object_object_add(rec, "interconnect", ic);
	json_object_object_add(rec, "software", prov_software(sysroot, &ver));
	*out = rec;
	rc = 0;
out:
	prov_table_free(&table);
	return rc;
}

/*
 * plugstack_check.c - does this node's plugstack.conf load the admission
 * plugin from a file that is there? (plugstack.conf's format: lines
 * "required|optional PATH [ARGS]" and "include GLOB"; '#' comments.)
 */
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "plugstack_check.h"
#include "slurmconf.h"

#define MAX_INCLUDE_DEPTH 4

struct scan {
	const char *dirs;       /* where relative plugin names are looked for */
	char listed[4096];      /* the admission plugin's line's path, as written */
	char found[4096];       /* the file it names, when it exists */
	bool optional;          /* listed "optional": Slurm ignores its failures */
};

/* Is name (relative) in one of the colon-separated dirs? Fills out. */
static bool in_dirs(const char *dirs, const char *name, char *out, size_t len)
{
	const char *d = dirs;

	while (d && *d) {
		size_t l = strcspn(d, ":");
		snprintf(out, len, "%.*s/%s", (int)l, d, name);
		if (access(out, R_OK) == 0)
			return true;
		d = d[l] ? d + l + 1 : NULL;
	}
	return false;
}

static void scan_file(struct scan *s, const char *path, int depth)
{
	char line[4096];
	FILE *f;

	if (depth > MAX_INCLUDE_DEPTH || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *kind, *p;
		line[strcspn(line, "#\r\n")] = '\0';
		kind = strtok_r(line, " \t", &save);
		p = kind ? strtok_r(NULL, " \t", &save) : NULL;
		if (!p)
			continue;
		if (!strcmp(kind, "include")) {
			/* as Slurm: a relative pattern is relative to this file's directory */
			char pat[8192];
			const char *slash = strrchr(path, '/');
			glob_t g;
			size_t i;
			if (p[0] != '/' && slash)
				snprintf(pat, sizeof(pat), "%.*s/%s", (int)(slash - path), path, p);
			else
				snprintf(pat, sizeof(pat), "%s", p);
			if (glob(pat, 0, NULL, &g) == 0) {
				for (i = 0; i < g.gl_pathc; i++)
					scan_file(s, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
			continue;
		}
		if (strcmp(kind, "required") && strcmp(kind, "optional"))
			continue;
		{
			const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
			if (strcmp(base, ADMISSION_PLUGIN))
				continue;
		}
		snprintf(s->listed, sizeof(s->listed), "%s", p);
		s->optional = !strcmp(kind, "optional");
		if (p[0] == '/') {
			if (access(p, R_OK) == 0)
				snprintf(s->found, sizeof(s->found), "%s", p);
		} else
			if (!in_dirs(s->dirs, p, s->found, sizeof(s->found)))
				s->found[0] = '\0';
		if (s->found[0])
			break;
	}
	fclose(f);
}

const char *plugstack_admission_problem(const char *slurm_conf, const char *plugin_dirs,
					char *why, size_t len)
{
	static const char *const keys[] = { "PlugStackConfig", "PluginDir" };
	struct scan s;
	char stack[4096], dirs[4096], *v[2] = { NULL, NULL }, err[PATH_MAX + 256];

	memset(&s, 0, sizeof(s));
	/* slurm.conf unreadable: the plugstack.conf beside it is looked for
	 * (slurmd would not start; its own error says why) */
	slurmconf_values(slurm_conf, keys, 2, v, err, sizeof(err));
	if (v[0])
		snprintf(stack, sizeof(stack), "%s", v[0]);
	else {
		const char *slash = strrchr(slurm_conf, '/');
		snprintf(stack, sizeof(stack), "%.*s/plugstack.conf",
			 slash ? (int)(slash - slurm_conf) : 1, slash ? slurm_conf : ".");
	}
	snprintf(dirs, sizeof(dirs), "%s", v[1] ? v[1] : plugin_dirs ? plugin_dirs : "");
	s.dirs = v[1] || plugin_dirs ? dirs : NULL;
	free(v[0]);
	free(v[1]);
	if (access(stack, R_OK) != 0) {
		snprintf(why, len, "this node has no plugstack.conf (%.1000s): it would run jobs without the admission check (see the admin guide: plugstack.conf)",
			 stack);
		return why;
	}
	scan_file(&s, stack, 0);
	if (!s.listed[0]) {
		snprintf(why, len, "%.1000s does not load " ADMISSION_PLUGIN ": this node would run jobs without the admission check; install slurm-burst-node in the node's image, or list \"required PATH/" ADMISSION_PLUGIN " conf=...\" in a file plugstack.conf includes (see the admin guide)",
			 stack);
		return why;
	}
	if (s.optional) {
		snprintf(why, len, "%.1000s lists " ADMISSION_PLUGIN " as optional, and Slurm ignores a failing optional plugin: its refusals would not stop a job; list it \"required\"",
			 stack);
		return why;
	}
	if (!s.found[0]) {
		snprintf(why, len, "%.1000s lists %.1000s, which this node does not have: it would run jobs without the admission check; install slurm-burst-node in the node's image",
			 stack, s.listed);
		return why;
	}
	return NULL;
}

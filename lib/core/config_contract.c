/*
 * config_contract.c - Contract= lines.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_int.h"
#include "strutil.h"

/* A contract error message is multi-line; indent its continuation lines. */
void cfg_contract_error(struct loader *ld, const char *file, int line, const char *what,
			   const char *msg)
{
	struct strbuf sb;
	const char *p;

	sb_init(&sb);
	for (p = msg; *p; p++) {
		if (*p == '\n')
			sb_add(&sb, "\n    ");
		else
			sb_addf(&sb, "%c", *p);
	}
	cfg_err(ld, file, line, "%s: %s", what, sb.s);
	sb_free(&sb);
}

void cfg_parse_contract(struct loader *ld, const char *file, int line, char *rest,
			   const char *name)
{
	struct burst_config *cfg = ld->cfg;
	struct cfg_contract cc;
	burst_err_t cerr;
	char what[300];

	if (!cfg_object_open(ld, file, line, "Contract", name, " (it becomes a Slurm feature)",
			     CFG_OBJECTS(cfg->contracts, cfg->ncontracts, struct cfg_contract)))
		return;
	snprintf(what, sizeof(what), "Contract %s", name);
	burst_err_clear(&cerr);
	cc.c = contract_parse(rest, &cerr);
	if (!cc.c) {
		cfg_contract_error(ld, file, line, what, cerr.msg);
		return;
	}
	cc.name = xstrdup(name);
	cc.where = cfg_where_of(file, line);
	cfg->contracts = xrealloc(cfg->contracts, (cfg->ncontracts + 1) * sizeof(cc));
	cfg->contracts[cfg->ncontracts++] = cc;
}

const struct cfg_contract *config_find_contract(const struct burst_config *cfg,
						const char *name)
{
	size_t i;

	for (i = 0; i < cfg->ncontracts; i++)
		if (strcmp(cfg->contracts[i].name, name) == 0)
			return &cfg->contracts[i];
	return NULL;
}

const char *config_suggest_contract(const struct burst_config *cfg, const char *name)
{
	const char **names = xcalloc(cfg->ncontracts + 1, sizeof(char *));
	const char *near;
	size_t i;

	for (i = 0; i < cfg->ncontracts; i++)
		names[i] = cfg->contracts[i].name;
	near = str_suggest(name, names, cfg->ncontracts);
	free(names);
	return near;
}

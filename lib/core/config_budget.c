/*
 * config_budget.c - Budget= lines, and what budgets by account need of Slurm.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cost.h"

#include "config_int.h"
#include "strutil.h"

void cfg_free_budget(struct cfg_budget *b)
{
	free(b->name);
	free(b->nodeset);
	free(b->account);
	free(b->where.file);
}

/* Budget=NAME Amount=USD Period=day|week|month|year [NodeSet=NS] [Account=ACCT] */
void cfg_parse_budget(struct loader *ld, const char *file, int line, struct conf_word *w, int n)
{
	static const char *const keys[] = { "Budget", "Amount", "Period", "NodeSet", "Account", NULL };
	struct cfg_budget b;
	struct burst_config *cfg = ld->cfg;
	bool amount = false;
	int k, before = ld->errs.n;
	size_t i;

	memset(&b, 0, sizeof(b));
	b.period = -1;
	if (!cfg_valid_name(w[0].val)) {
		cfg_err(ld, file, line, "Budget=%s: a budget's name is letters, digits, '_', '.' and '-'", w[0].val);
		return;
	}
	b.name = xstrdup(w[0].val);
	for (k = 1; k < n; k++) {
		const char *key = w[k].key, *val = w[k].val;
		if (!key) {
			cfg_err(ld, file, line, "Budget %s: expected Key=Value, found '%s'", b.name, val);
			continue;
		}
		if (str_ieq(key, "Amount")) {
			char *end;
			double v;
			errno = 0;
			v = strtod(val, &end);
			if (!val[0] || *end || errno || !isfinite(v) || v < 0)
				cfg_err(ld, file, line, "Budget %s: Amount=%s: give US dollars per period, a number >= 0 (e.g. Amount=100 or Amount=12.50)",
				     b.name, val);
			else {
				b.amount = v;
				amount = true;
			}
		} else if (str_ieq(key, "Period")) {
			b.period = cost_period_parse(val);
			if (b.period < 0) {
				static const char *const periods[] = { "day", "week", "month", "year", NULL };
				const char *near = str_suggest(val, periods, 0);
				cfg_err(ld, file, line, "Budget %s: Period=%s: give day, week, month or year%s%s%s", b.name, val,
				     near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
			}
		} else if (str_ieq(key, "NodeSet") || str_ieq(key, "Account")) {
			char **dst = str_ieq(key, "NodeSet") ? &b.nodeset : &b.account;
			if (!val[0])
				cfg_err(ld, file, line, "Budget %s: %s= needs a name", b.name, key);
			else if (*dst)
				cfg_err(ld, file, line, "Budget %s: %s= given twice (a budget has one of each at most)", b.name, key);
			else
				*dst = xstrdup(val);
		} else
			cfg_unknown_key(ld, file, line, "Budget", key, keys);
	}
	if (!amount && ld->errs.n == before)
		cfg_err(ld, file, line, "Budget %s needs Amount= (US dollars per period, e.g. Amount=100)", b.name);
	if (b.period < 0 && ld->errs.n == before)
		cfg_err(ld, file, line, "Budget %s needs Period= (day, week, month or year)", b.name);
	for (i = 0; i < cfg->nbudgets; i++)
		if (str_ieq(cfg->budgets[i].name, b.name)) {
			cfg_err(ld, file, line, "Budget %s is defined twice (first at %s:%d): give each its own name",
			     b.name, cfg->budgets[i].where.file, cfg->budgets[i].where.line);
			cfg_free_budget(&b);
			return;
		}
	/* kept with errors too (the load fails anyway): its NodeSet= is checked
	 * with the other references, so that one run says everything */
	b.where = cfg_where_of(file, line);
	cfg->budgets = xrealloc(cfg->budgets, (cfg->nbudgets + 1) * sizeof(b));
	cfg->budgets[cfg->nbudgets++] = b;
}

const struct cfg_budget *config_account_budget(const struct burst_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nbudgets; i++)
		if (cfg->budgets[i].account)
			return &cfg->budgets[i];
	return NULL;
}

int config_check_budget_accounts(const struct burst_config *cfg, const struct slurm_acct *sa,
				 burst_err_t *err, burst_err_t *warn)
{
	char slurm[PATH_MAX + 600];
	int problems = 0;
	size_t i;

	if (!config_account_budget(cfg))
		return 0;
	if (!sa->known)
		snprintf(slurm, sizeof(slurm), "whether Slurm enforces associations is unknown: %s", sa->why);
	else
		snprintf(slurm, sizeof(slurm), "%s has AccountingStorageEnforce=%s, AccountingStorageType=%s",
			 sa->source, sa->enforce, sa->type);
	for (i = 0; i < cfg->nbudgets; i++) {
		const struct cfg_budget *b = &cfg->budgets[i];
		if (!b->account || (sa->known && sa->associations))
			continue;
		if (sa->known && !sa->dbd) {
			burst_err_append(err, "%s:%d: Budget %s: Account=%s counts the jobs of a Slurm account, and %s: "
					 "without slurmdbd an account is whatever the user types (sbatch --account) and "
					 "nothing can check it; set AccountingStorageType=accounting_storage/slurmdbd and "
					 "AccountingStorageEnforce=associations, or drop Account=",
					 b->where.file, b->where.line, b->name, b->account, slurm);
			problems++;
		} else if (!cfg->budget_accounts_unenforced) {
			burst_err_append(err, "%s:%d: Budget %s: Account=%s counts the jobs of a Slurm account, which the "
					 "user chooses (sbatch --account): %s, so slurmctld does not hold a job's account to "
					 "its user's associations and a user escapes the budget by naming another account. "
					 "Set AccountingStorageEnforce=associations (or limits, qos, safe; slurmctld restarted), "
					 "or accept the risk with BudgetAccountTrust=unenforced (the agent then checks each "
					 "job's account against slurmdbd's associations itself and holds the job when it is "
					 "none of its user's)", b->where.file, b->where.line, b->name, b->account, slurm);
			problems++;
		} else if (warn)
			burst_err_append(warn, "%s:%d: Budget %s: Account=%s: WARNING: Slurm does not enforce associations "
					 "(%s): a job's account is what its user typed. BudgetAccountTrust=unenforced accepts "
					 "that: the agent checks each job's account against slurmdbd's associations before it "
					 "launches for it, and holds a job whose account is none of its user's; a job Slurm "
					 "places on a burst node already up needs no launch and is not checked, and a user of "
					 "several accounts still picks which budget pays",
					 b->where.file, b->where.line, b->name, b->account, slurm);
	}
	return problems;
}

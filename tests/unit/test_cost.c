/*
 * test_cost.c - the cost arithmetic (lib/core/cost.c): an instance's life split
 * into boot, idle and the shares of the jobs that held its node; the
 * periods of budgets; and Budget= lines of burst.conf, accepted and refused
 * with file:line errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cost.h"
#include "strutil.h"
#include "tap.h"

#define EPS 1e-9

static int near(double a, double b)
{
	return fabs(a - b) < EPS;
}

static void split_cases(void)
{
	struct cost_inst in = { .node = (char *)"n1", .price = 3.6, .launched = 100, .joined = 110, .ended = 200 };
	struct cost_hold h[3];
	double boot, idle, share[3], total;

	memset(h, 0, sizeof(h));
	/* no job: 10 s boot, 90 s idle */
	total = cost_split(&in, h, 0, 0, 1000, &boot, &idle, share);
	ok(near(boot, 10) && near(idle, 90) && near(total, 100), "no job: boot %g idle %g total %g", boot, idle, total);

	/* one job from 105 (allocated while booting) to 150: its time starts at the join */
	h[0] = (struct cost_hold){ .job = 1, .node = (char *)"n1", .start = 105, .end = 150 };
	total = cost_split(&in, h, 1, 0, 1000, &boot, &idle, share);
	ok(near(boot, 10) && near(share[0], 40) && near(idle, 50) && near(total, 100),
	   "one job: boot %g, job %g (join to its end), idle %g", boot, share[0], idle);

	/* two jobs sharing 130-150: each gets half of those 20 s */
	h[1] = (struct cost_hold){ .job = 2, .node = (char *)"n1", .start = 130, .end = 170 };
	total = cost_split(&in, h, 2, 0, 1000, &boot, &idle, share);
	ok(near(share[0], 20 + 10) && near(share[1], 10 + 20) && near(idle, 30) && near(total, 100),
	   "two jobs sharing 20 s: %g and %g, idle %g", share[0], share[1], idle);

	/* a window: [140, 160) */
	total = cost_split(&in, h, 2, 140, 160, &boot, &idle, share);
	ok(near(boot, 0) && near(share[0], 5) && near(share[1], 15) && near(idle, 0) && near(total, 20),
	   "window 140-160: job 1 %g, job 2 %g", share[0], share[1]);

	/* still running (ended 0) and a hold still open: both counted to until */
	in.ended = 0;
	h[2] = (struct cost_hold){ .job = 3, .node = (char *)"n1", .start = 180, .end = 0 };
	total = cost_split(&in, h, 3, 0, 250, &boot, &idle, share);
	ok(near(share[2], 70) && near(idle, 10) && near(total, 150),
	   "running instance, open hold: job 3 %g, idle %g, total %g", share[2], idle, total);

	/* never joined: all boot, jobs get nothing */
	in.joined = 0;
	in.ended = 200;
	total = cost_split(&in, h, 3, 0, 1000, &boot, &idle, share);
	ok(near(boot, 100) && near(share[0], 0) && near(share[1], 0) && near(idle, 0),
	   "never joined: %g s boot, nothing to the jobs", boot);

	/* a window before its launch: nothing */
	total = cost_split(&in, h, 3, 0, 50, &boot, &idle, share);
	ok(near(total, 0) && near(boot, 0), "a window before the launch counts nothing");
}

static void items_cases(void)
{
	struct cost_inst in[2] = {
		{ .node = (char *)"a", .price = 3.6, .launched = 0, .joined = 10, .ended = 110 },
		{ .node = (char *)"b", .price = NAN, .launched = 0, .joined = 5, .ended = 50 },
	};
	struct cost_hold h[2] = {
		{ .job = 7, .node = (char *)"a", .start = 20, .end = 60 },
		{ .job = 8, .node = (char *)"b", .start = 5, .end = 50 },
	};
	struct cost_item *it;
	size_t n, i;
	double job7 = 0, idle_a = 0, boot_a = 0, job8s = 0;
	int nan8 = 0;

	cost_items(in, 2, h, 2, 0, 1000, &it, &n);
	for (i = 0; i < n; i++) {
		if (it[i].kind == COST_JOB && h[it[i].hold].job == 7)
			job7 += it[i].dollars;
		if (it[i].kind == COST_JOB && h[it[i].hold].job == 8) {
			job8s += it[i].seconds;
			nan8 += isnan(it[i].dollars);
		}
		if (it[i].inst == 0 && it[i].kind == COST_IDLE)
			idle_a += it[i].dollars;
		if (it[i].inst == 0 && it[i].kind == COST_BOOT)
			boot_a += it[i].dollars;
	}
	/* 3.60 USD/h is 0.001 USD/s */
	ok(near(job7, 0.040), "job 7: 40 s at 3.60 USD/h is 0.040 USD (%g)", job7);
	/* idle: 10-20 and 60-110 */
	ok(near(idle_a, 0.060) && near(boot_a, 0.010), "node a: idle 0.060, boot 0.010 (%g, %g)", idle_a, boot_a);
	ok(near(job8s, 45) && nan8 == 1, "an unknown price: its seconds counted, its dollars NAN (%g s)", job8s);
	ok(near(boot_a + idle_a + job7, 0.11), "instance a's items add up to its life (110 s: 0.11 USD)");
	free(it);
}

/* what budgets count: by node set, by account, both, everything */
static void spent_cases(void)
{
	struct cost_inst in[3] = {
		{ .node = (char *)"a", .nodeset = (char *)"cpu", .price = 3.6, .launched = 0, .joined = 10, .ended = 110 },
		{ .node = (char *)"b", .nodeset = (char *)"gpu", .price = 36, .launched = 0, .joined = 20, .ended = 80 },
		{ .node = (char *)"c", .nodeset = (char *)"gpu", .price = NAN, .launched = 0, .joined = 5, .ended = 50 },
	};
	struct cost_hold h[4] = {
		{ .job = 7, .node = (char *)"a", .start = 20, .end = 60, .account = (char *)"phys" },
		{ .job = 8, .node = (char *)"a", .start = 40, .end = 80, .account = (char *)"chem" },
		{ .job = 9, .node = (char *)"b", .start = 0, .end = 70, .account = (char *)"phys" },
		{ .job = 10, .node = (char *)"c", .start = 10, .end = 50, .account = (char *)"phys" },
	};
	struct cost_item *it;
	size_t n;
	double all, cpu, gpu, phys, chem, physgpu, none;

	cost_items(in, 3, h, 4, 0, 1000, &it, &n);
	all = cost_spent(in, h, it, n, NULL, NULL);
	cpu = cost_spent(in, h, it, n, "cpu", NULL);
	gpu = cost_spent(in, h, it, n, "gpu", NULL);
	phys = cost_spent(in, h, it, n, NULL, "phys");
	chem = cost_spent(in, h, it, n, NULL, "chem");
	physgpu = cost_spent(in, h, it, n, "gpu", "phys");
	none = cost_spent(in, h, it, n, "nope", NULL);
	/* a: 0.110 (boot 0.010, jobs 0.030 + 0.030, idle 0.040); b: 0.800 (boot 0.2, job 9 0.5, idle 0.1); c: unknown */
	ok(near(all, 0.91) && near(cpu, 0.11) && near(gpu, 0.8), "global 0.91, node set cpu 0.11, gpu 0.8 (%g %g %g)", all, cpu, gpu);
	ok(near(phys, 0.53) && near(chem, 0.03), "account phys: its jobs' time only, 0.53; chem 0.03 (%g %g)", phys, chem);
	ok(near(physgpu, 0.5) && near(none, 0), "phys in gpu 0.5; an unknown node set 0 (%g %g)", physgpu, none);
	free(it);
}

static void period_cases(void)
{
	/* 2026-11-25T13:45:10Z is a Wednesday */
	double t = 1795614310;

	ok(cost_period_parse("Month") == PERIOD_MONTH && cost_period_parse("fortnight") < 0, "period words");
	ok(near(cost_period_start(PERIOD_DAY, t), 1795564800), "day: 2026-11-25T00:00Z (%.0f)", cost_period_start(PERIOD_DAY, t));
	ok(near(cost_period_start(PERIOD_WEEK, t), 1795392000), "week: Monday 2026-11-23T00:00Z (%.0f)", cost_period_start(PERIOD_WEEK, t));
	ok(near(cost_period_start(PERIOD_MONTH, t), 1793491200), "month: 2026-11-01T00:00Z (%.0f)", cost_period_start(PERIOD_MONTH, t));
	ok(near(cost_period_start(PERIOD_YEAR, t), 1767225600), "year: 2026-01-01T00:00Z (%.0f)", cost_period_start(PERIOD_YEAR, t));
	/* a Sunday goes back six days */
	ok(near(cost_period_start(PERIOD_WEEK, 1795959910), 1795392000), "week of Sunday 2026-11-29: Monday the 23rd");
}

static char dir[256];

static struct burst_config *load(const char *text, burst_err_t *err)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/burst.conf", dir);
	f = fopen(p, "w");
	fputs("NodeSet=gpu Nodes=g-[1-2] InstanceTypes=g.x\nNodeSet=cpu Nodes=c-[1-2] InstanceTypes=c.x\n", f);
	fputs(text, f);
	fclose(f);
	return config_load(p, err);
}

static void refused(const char *text, int line, const char *frag)
{
	burst_err_t err;
	struct burst_config *cfg = load(text, &err);
	char want[600];

	ok(cfg == NULL, "refused: %.*s", (int)strcspn(text, "\n"), text);
	config_free(cfg);
	snprintf(want, sizeof(want), "%s/burst.conf:%d: %s", dir, line, frag);
	ok(cfg == NULL && strstr(err.msg, want) != NULL, "... with '%s' (%s)", want, cfg ? "" : err.msg);
}

static void budget_cases(void)
{
	burst_err_t err;
	struct burst_config *cfg;

	cfg = load("Budget=all Amount=1000 Period=month\n"
		   "Budget=gpu Amount=12.50 Period=Week NodeSet=gpu\n"
		   "Budget=physics Amount=0 Period=day Account=physics NodeSet=cpu\n", &err);
	ok(cfg && cfg->nbudgets == 3, "three budgets parse (%s)", cfg ? "" : err.msg);
	if (cfg && cfg->nbudgets == 3) {
		ok(!strcmp(cfg->budgets[0].name, "all") && near(cfg->budgets[0].amount, 1000) &&
		   cfg->budgets[0].period == PERIOD_MONTH && !cfg->budgets[0].nodeset && !cfg->budgets[0].account,
		   "a global budget");
		ok(near(cfg->budgets[1].amount, 12.5) && cfg->budgets[1].period == PERIOD_WEEK &&
		   !strcmp(cfg->budgets[1].nodeset, "gpu"), "a node set's budget");
		ok(near(cfg->budgets[2].amount, 0) && !strcmp(cfg->budgets[2].account, "physics") &&
		   cfg->budgets[2].where.line == 5, "an account's budget in a node set, at line 5");
	}
	config_free(cfg);
	refused("Budget=x Period=month\n", 3, "Budget x needs Amount= (US dollars per period");
	refused("Budget=x Amount=100\n", 3, "Budget x needs Period= (day, week, month or year)");
	refused("Budget=x Amount=lots Period=month\n", 3, "Budget x: Amount=lots: give US dollars per period");
	refused("Budget=x Amount=-5 Period=month\n", 3, "Budget x: Amount=-5: give US dollars");
	refused("Budget=x Amount=5 Period=mnth\n", 3, "Budget x: Period=mnth: give day, week, month or year (did you mean 'month'?)");
	refused("Budget=x Amount=5 Period=day NodeSet=gpus\n", 3, "Budget x: NodeSet=gpus names no NodeSet= line; did you mean 'gpu'?");
	refused("Budget=x Amount=5 Period=day Acccount=a\n", 3, "unknown Budget key 'Acccount'; did you mean 'Account'?");
	refused("Budget=x Amount=5 Period=day\nBudget=x Amount=6 Period=day\n", 4, "Budget x is defined twice (first at ");
	refused("Budget=a/b Amount=5 Period=day\n", 3, "Budget=a/b: a budget's name is letters, digits");
	refused("Budget=x Amount=5 Period=day Account=a Account=b\n", 3, "Budget x: Account= given twice");
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_cost.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a temporary directory\n");
		return 1;
	}
	split_cases();
	items_cases();
	spent_cases();
	period_cases();
	budget_cases();
	{
		char p[600];
		snprintf(p, sizeof(p), "%s/burst.conf", dir);
		unlink(p);
		rmdir(dir);
	}
	return done_testing();
}

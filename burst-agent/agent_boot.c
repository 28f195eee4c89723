/*
 * burst-agent: instances that fail to boot. When an instance ends on its own
 * or misses BootTimeout, or its slurmd never comes up, the end of its
 * console (local: the node log; aws: GetConsoleOutput) goes into the event
 * log, one event "console" per line, and the node's DOWN reason says where
 * to read it (node_life.c: LX_BOOT_FAIL, LX_SLURMD_FAIL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "node_life.h"
#include "strutil.h"

#define CONSOLE_BYTES 4096       /* read from the end of the console */
#define CONSOLE_LINES 15         /* of which the last lines go into the event log */

/*
 * The last lines of the console of r's instance into the event log; last
 * gets its last non-empty line ("" if none) and where how to read it all.
 */
void boot_console_record(const char *node, const struct node_rec *r, char *last, size_t lastlen,
			 char *where, size_t wlen)
{
	struct aprov *p = prov_by_name(r->provider);
	char buf[CONSOLE_BYTES], *lines[CONSOLE_LINES], *s, *save = NULL;
	enum prov_class cls = PROV_OK;
	burst_err_t err;
	size_t n = 0, i;

	last[0] = '\0';
	snprintf(where, wlen, "the console of %s", r->instance ? r->instance : "the instance");
	if (!p || !p->ops->console || !r->instance)
		return;
	burst_err_clear(&err);
	if (prov_console(p, node, r->instance, buf, sizeof(buf), where, wlen, &cls, &err) < 0) {
		char detail[600];
		snprintf(detail, sizeof(detail), "%s: cannot read its console (%s): %.400s", r->instance,
			 prov_class_name(cls), err.msg);
		if (state_event(A.db, node, "console", detail, &err) < 0)
			ERR("%s: %s", node, err.msg);
		return;
	}
	/* the last CONSOLE_LINES non-empty lines, oldest first */
	for (s = strtok_r(buf, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		s[strcspn(s, "\r")] = '\0';
		if (!*s)
			continue;
		if (n == CONSOLE_LINES) {
			memmove(lines, lines + 1, (CONSOLE_LINES - 1) * sizeof(*lines));
			n--;
		}
		lines[n++] = s;
	}
	if (!n) {
		char detail[300];
		snprintf(detail, sizeof(detail), "%s: its console is empty", r->instance);
		if (state_event(A.db, node, "console", detail, &err) < 0)
			ERR("%s: %s", node, err.msg);
		return;
	}
	/* what the instance wrote (escape sequences, a bell, bytes that are
	 * not UTF-8) is written out before it is stored or shown */
	{
		char *e = str_escape_ctl(lines[n - 1]);
		snprintf(last, lastlen, "%s", e);
		free(e);
	}
	for (i = 0; i < n; i++) {
		char detail[700], *e = str_escape_ctl(lines[i]);
		snprintf(detail, sizeof(detail), "%s: %.600s", r->instance, e);
		free(e);
		if (state_event(A.db, node, "console", detail, &err) < 0) {
			ERR("%s: %s", node, err.msg);
			break;
		}
	}
	INFO("%s: the last %zu line%s of %s are in the event log (burstctl events --node %s)", node, n,
	     n == 1 ? "" : "s", where, node);
}

/*
 * Instances that ended on their own: before joining (their boot failed) or
 * after their admission, before their slurmd registered (it could not start).
 */
void ended_check(void)
{
	static const enum node_state states[] = { NS_BOOTING, NS_ADMITTED };
	static double last;
	burst_err_t err;
	size_t s, i;
	bool *may_end;

	if (now() - last < 1.0)
		return;
	last = now();
	/* the node sets whose providers can tell (local): the others' nodes
	 * (aws, openstack) are not read every second, thousands booting at
	 * once in a burst */
	may_end = xcalloc(A.cfg->nnodesets + 1, sizeof(*may_end));
	for (s = 0; s < A.cfg->nnodesets; s++) {
		const struct cfg_nodeset *ns = &A.cfg->nodesets[s];
		for (i = 0; i < A.nprovs && !may_end[s]; i++) {
			bool allowed = !ns->nproviders;
			size_t k;
			for (k = 0; k < ns->nproviders && !allowed; k++)
				allowed = !strcmp(ns->providers[k], A.provs[i].cfg->name);
			may_end[s] = allowed && A.provs[i].ops && A.provs[i].ops->ended;
		}
	}
	for (s = 0; s < A.cfg->nnodesets && !may_end[s]; s++)
		;
	if (s == A.cfg->nnodesets) {
		/* none: no listing either */
		free(may_end);
		return;
	}
	for (s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		char **names = state_nodes_in(A.db, states[s], &err);

		for (i = 0; names && names[i]; i++) {
			struct bnode *ni = node_find(names[i]);
			/* zeroed: a node skipped before state_node_get is cleared too */
			struct node_rec r = { 0 };
			struct aprov *p;

			memset(&r, 0, sizeof(r));   /* cleared below even when not read */
			if (!ni || ni->nodeset < 0 || !may_end[ni->nodeset] || (s == 1 && ni->registered) ||
			    state_node_get(A.db, names[i], &r, &err) != 1) {
				state_node_clear(&r);
				continue;
			}
			p = prov_by_name(r.provider);
			if (p && p->ops->ended && r.instance && r.state == states[s] &&
			    prov_ended(p, names[i], r.instance) == 1) {
				char why[300];
				if (s == 0)
					snprintf(why, sizeof(why), "instance %s ended before it joined", r.instance);
				else
					snprintf(why, sizeof(why), "instance %s ended after its admission: its slurmd did not start",
						 r.instance);
				node_life_apply(names[i], &r, LE_INSTANCE_ENDED, why);
			}
			state_node_clear(&r);
		}
		state_names_free(names);
	}
	free(may_end);
}

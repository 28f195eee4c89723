/*
 * test_node_life.c - the edges of a node's life (burst-agent/node_life_table.c)
 * against the table of doc/design.md §7: the same edges in the same order,
 * each with its effect, so that neither drifts from the other; and the
 * table itself: one edge at most per state and event, every event with an
 * edge, every edge found by its lookup and nothing else. No agent needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_life.h"
#include "tap.h"

#ifndef BURST_ABS_SRCDIR
#define BURST_ABS_SRCDIR "."
#endif

struct doc_edge {
	char from[32], to[32], ev[64], fx[64];
	int line;
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* The table of §7 of design.md, each row's "from" list expanded: how many. */
static size_t doc_edges(const char *text, struct doc_edge *out, size_t max)
{
	const char *sec = strstr(text, "\n## 7. ");
	const char *end = sec ? strstr(sec + 1, "\n## ") : NULL;
	const char *p;
	size_t n = 0;
	int line = 1, in_table = 0;

	if (!sec)
		return 0;
	for (p = text; p < sec; p++)
		line += *p == '\n';
	for (p = sec + 1; p && (!end || p < end) && *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char row[1024], *cell[5], *s, *save = NULL;
		int k = 0;

		if (len >= sizeof(row))
			len = sizeof(row) - 1;
		memcpy(row, p, len);
		row[len] = '\0';
		p = nl ? nl + 1 : NULL;
		if (!strncmp(row, "| from | to | event | effect |", 30)) {
			in_table = 1;
			continue;
		}
		if (!in_table || !strncmp(row, "| ---", 5))
			continue;
		if (row[0] != '|')
			break;   /* the table's end */
		for (s = strtok_r(row + 1, "|", &save); s && k < 5; s = strtok_r(NULL, "|", &save))
			cell[k++] = trim(s);
		if (k < 4)
			continue;
		{
			char froms[512], *f, *fs = NULL;
			char *ev = cell[2];
			size_t el = strlen(ev);
			if (el >= 2 && ev[0] == '`' && ev[el - 1] == '`') {
				ev[el - 1] = '\0';
				ev++;
			}
			snprintf(froms, sizeof(froms), "%s", cell[0]);
			for (f = strtok_r(froms, ",", &fs); f && n < max; f = strtok_r(NULL, ",", &fs)) {
				f = trim(f);
				snprintf(out[n].from, sizeof(out[n].from), "%s", f);
				snprintf(out[n].to, sizeof(out[n].to), "%s", !strcmp(cell[1], "(same)") ? f : cell[1]);
				snprintf(out[n].ev, sizeof(out[n].ev), "%s", ev);
				snprintf(out[n].fx, sizeof(out[n].fx), "%s", cell[3]);
				out[n].line = line;
				n++;
			}
		}
	}
	return n;
}

int main(void)
{
	const char *top = getenv("BURST_TOP_SRCDIR");
	char path[4096];
	struct doc_edge doc[256];
	const struct life_edge *e;
	size_t n, nd, i;
	char *text;

	if (!top || !*top)
		top = BURST_ABS_SRCDIR;
	e = node_life_edges(&n);
	ok(n > 0, "the table has edges (%zu)", n);

	/* every event and effect has a name; every event has an edge */
	for (int ev = 0; ev < LE_COUNT; ev++) {
		size_t uses = 0;
		for (i = 0; i < n; i++)
			uses += e[i].ev == (enum life_event)ev;
		ok(life_event_name((enum life_event)ev) && uses > 0, "event %d (%s) is named and has %zu edge(s)", ev,
		   life_event_name((enum life_event)ev) ? life_event_name((enum life_event)ev) : "?", uses);
	}
	ok(!life_event_name(LE_COUNT) && !life_effect_name(LX_COUNT), "no name past the end");
	for (int fx = 0; fx < LX_COUNT; fx++)
		ok(life_effect_name((enum life_effect)fx) != NULL, "effect %d is named", fx);

	/* at most one edge per state and event; the lookup finds exactly the table's */
	{
		size_t bad = 0;
		for (int s = 0; s < NS_COUNT; s++)
			for (int ev = 0; ev < LE_COUNT; ev++) {
				const struct life_edge *want = NULL;
				size_t count = 0;
				for (i = 0; i < n; i++)
					if (e[i].from == (enum node_state)s && e[i].ev == (enum life_event)ev) {
						want = want ? want : &e[i];
						count++;
					}
				if (count > 1 || node_life_edge((enum node_state)s, (enum life_event)ev) != want) {
					diag("%s in state %s: %zu edges, the lookup %s", life_event_name((enum life_event)ev),
					     node_state_name((enum node_state)s), count,
					     node_life_edge((enum node_state)s, (enum life_event)ev) == want ? "right" : "wrong");
					bad++;
				}
			}
		ok(bad == 0, "every state and event: at most one edge, the one the lookup finds (%zu wrong)", bad);
	}
	ok(node_life_edge(NS_POWERED_DOWN, LE_ADMIT) == NULL && node_life_edge(NS_ADMITTED, LE_RESUME) == NULL,
	   "no edge: admit while powered down, resume while admitted");
	ok(node_life_edge(NS_BOOTING, LE_ADMIT) && node_life_edge(NS_BOOTING, LE_ADMIT)->to == NS_ADMITTED,
	   "admit while booting: admitted");

	/* the doc's table, the same edges in the same order */
	snprintf(path, sizeof(path), "%s/doc/design.md", top);
	text = tap_slurp(path, NULL);
	nd = doc_edges(text, doc, sizeof(doc) / sizeof(doc[0]));
	ok(nd == n, "doc/design.md §7 lists %zu edges, the agent's table %zu", nd, n);
	for (i = 0; i < n && i < nd; i++) {
		char want[256], got[256];
		snprintf(want, sizeof(want), "%s -> %s on %s: %s", node_state_name(e[i].from), node_state_name(e[i].to),
			 life_event_name(e[i].ev), life_effect_name(e[i].effect));
		snprintf(got, sizeof(got), "%.31s -> %.31s on %.63s: %.63s", doc[i].from, doc[i].to, doc[i].ev, doc[i].fx);
		if (strcmp(want, got)) {
			ok(0, "edge %zu: design.md line %d says '%s', the table '%s'", i + 1, doc[i].line, got, want);
			continue;
		}
		ok(1, "edge %zu: %s", i + 1, want);
	}
	free(text);
	return done_testing();
}

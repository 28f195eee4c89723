/*
 * test_imds.c - reading the spot interruption notice (lib/cloud/imds.c,
 * imds_notice_parse): EC2's answers understood, anything else refused
 * with a reason that says what was wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imds.h"
#include "tap.h"

static int parse(long status, const char *body, struct imds_notice *n, char *why, size_t wl)
{
	why[0] = '\0';
	return imds_notice_parse(status, body, body ? strlen(body) : 0, n, why, wl);
}

/* a body that is refused: -1, the notice cleared, why containing want */
static void refused(long status, const char *body, const char *want, const char *name)
{
	struct imds_notice n;
	char why[300];
	int rc;

	memset(&n, 0x55, sizeof(n));
	rc = parse(status, body, &n, why, sizeof(why));
	ok(rc == -1 && n.action_name[0] == '\0' && n.at == 0, "%s: refused (rc %d)", name, rc);
	ok(strstr(why, want) != NULL, "%s: the reason says '%s' (%s)", name, want, why);
}

int main(void)
{
	struct imds_notice n;
	char why[300];
	enum imds_action a;

	/* EC2's own examples (the EC2 user guide, "Instance metadata: spot/instance-action") */
	ok(parse(200, "{\"action\": \"terminate\", \"time\": \"2017-09-18T08:22:00Z\"}", &n, why, sizeof(why)) == 1,
	   "a terminate notice");
	ok(n.action == IMDS_ACTION_TERMINATE && !strcmp(n.action_name, "terminate"), "... its action");
	is_str(n.time, "2017-09-18T08:22:00Z", "... its time as given");
	ok(n.at == 1505722920, "... and in seconds since the epoch, UTC (%lld)", (long long)n.at);
	ok(parse(200, "{\"action\":\"stop\",\"time\":\"2026-11-27T17:00:00Z\"}\n", &n, why, sizeof(why)) == 1 &&
	   n.action == IMDS_ACTION_STOP, "a stop notice (a trailing newline is fine)");
	ok(parse(200, "{\"time\":\"2026-11-27T17:00:00Z\",\"action\":\"hibernate\",\"extra\":1}", &n, why, sizeof(why)) == 1 &&
	   n.action == IMDS_ACTION_HIBERNATE, "a hibernate notice, fields in any order, others ignored");
	ok(parse(404, "<?xml version=\"1.0\"?><html>404 - Not Found</html>", &n, why, sizeof(why)) == 0,
	   "404: no notice (whatever the body)");
	ok(imds_action_from_name("terminate", &a) && a == IMDS_ACTION_TERMINATE && !imds_action_from_name("Terminate", &a) &&
	   !imds_action_from_name("", &a), "action names are EC2's, exactly");

	refused(500, "", "HTTP 500", "HTTP 500");
	refused(401, "", "HTTP 401", "HTTP 401");
	refused(200, "", "not a JSON object", "an empty answer");
	refused(200, "{\"action\": \"terminate\", ", "not a JSON object", "cut-off JSON");
	refused(200, "terminate at 17:00", "not a JSON object: 'terminate at 17:00'", "plain text");
	refused(200, "[\"terminate\"]", "not a JSON object", "a JSON array");
	refused(200, "{\"action\":\"stop\",\"time\":\"2026-11-27T17:00:00Z\"} {}", "not a JSON object",
		"an object with more after it");
	refused(200, "{\"time\":\"2026-11-27T17:00:00Z\"}", "no \"action\"", "no action");
	refused(200, "{\"action\":7,\"time\":\"2026-11-27T17:00:00Z\"}", "no \"action\"", "an action that is no string");
	refused(200, "{\"action\":\"terminate\"}", "no \"time\"", "no time");
	refused(200, "{\"action\":\"terminate\",\"time\":null}", "no \"time\"", "a null time");
	refused(200, "{\"action\":\"reboot\",\"time\":\"2026-11-27T17:00:00Z\"}",
		"unknown action 'reboot' (terminate, stop and hibernate are known)", "an unknown action");
	refused(200, "{\"action\":\"x\\u001b[2Jy\",\"time\":\"2026-11-27T17:00:00Z\"}", "unknown action 'x\\x1b[2Jy'",
		"an action with a control character: escaped in the reason");
	refused(200, "{\"action\":\"terminate\",\"time\":\"tomorrow\"}", "time 'tomorrow' is not YYYY-MM-DDTHH:MM:SSZ",
		"a time that is not one");
	refused(200, "{\"action\":\"terminate\",\"time\":\"2026-11-27T17:00:00+01:00\"}", "is not YYYY-MM-DDTHH:MM:SSZ",
		"a time not in UTC");
	refused(200, "{\"action\":\"terminate\",\"time\":\"2026-13-27T17:00:00Z\"}", "is not YYYY-MM-DDTHH:MM:SSZ",
		"month 13");
	{
		/* a huge answer: refused by its size, not read as JSON */
		size_t big = 1 << 20;
		char *s = malloc(big + 1);
		memset(s, ' ', big);
		static const char head[] = "{\"action\":\"terminate\",\"time\":\"2026-11-27T17:00:00Z\"";
		memcpy(s, head, sizeof(head) - 1);
		s[big - 1] = '}';
		s[big] = '\0';
		refused(200, s, "an answer of 1048576 bytes (a notice is at most 1024)", "a 1 MiB answer");
		free(s);
		/* a long action is cut short in the reason */
		s = malloc(600);
		snprintf(s, 600, "{\"action\":\"%0500d\",\"time\":\"2026-11-27T17:00:00Z\"}", 0);
		refused(200, s, "unknown action '0000", "a 500-character action");
		parse(200, s, &n, why, sizeof(why));
		ok(strlen(why) < 200 && strstr(why, "...'"), "... quoted 64 characters long at most (%zu)", strlen(why));
		free(s);
	}
	{
		/* a NUL byte inside the answer */
		static const char body[] = "{\"action\":\"terminate\",\"time\":\"2026-11-27T17:00:00Z\"}\0junk";
		ok(imds_notice_parse(200, body, sizeof(body) - 1, &n, why, sizeof(why)) == -1 && strstr(why, "NUL"),
		   "a NUL byte in the answer: refused (%s)", why);
	}
	/* Compute Engine's instance/preempted: FALSE, then TRUE about 30 s ahead */
	ok(imds_gce_preempted_parse(200, "FALSE", 5, 1505722920, &n, why, sizeof(why)) == 0, "gce: FALSE is no notice");
	ok(imds_gce_preempted_parse(200, "TRUE\n", 5, 1505722920, &n, why, sizeof(why)) == 1 &&
	   n.action == IMDS_ACTION_TERMINATE && !strcmp(n.action_name, "terminate") && n.at == 1505722950 &&
	   !strcmp(n.time, "2017-09-18T08:22:30Z"), "gce: TRUE is a terminate notice 30 s from its reading (%s)", n.time);
	ok(imds_gce_preempted_parse(200, "maybe", 5, 0, &n, why, sizeof(why)) == -1 && strstr(why, "'maybe'"),
	   "gce: another word refused, quoted (%s)", why);
	ok(imds_gce_preempted_parse(404, "", 0, 0, &n, why, sizeof(why)) == -1 && strstr(why, "HTTP 404"),
	   "gce: another status refused (%s)", why);
	ok(imds_gce_preempted_parse(200, "TRUETRUETRUETRUETRUE", 20, 0, &n, why, sizeof(why)) == -1,
	   "gce: a longer answer refused");
	return done_testing();
}

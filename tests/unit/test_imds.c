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
	/* Azure's Scheduled Events: a Preempt naming this VM is a notice */
	{
		static const char vm[] = "c-burst-3-a1z1";
		static const char preempt[] =
			"{\"DocumentIncarnation\": 2, \"Events\": ["
			"{\"EventId\": \"A1\", \"EventStatus\": \"Scheduled\", \"EventType\": \"Freeze\", \"ResourceType\": \"VirtualMachine\","
			" \"Resources\": [\"c-burst-3-a1z1\"], \"NotBefore\": \"Mon, 19 Sep 2016 18:29:47 GMT\"},"
			"{\"EventId\": \"B2\", \"EventStatus\": \"Scheduled\", \"EventType\": \"Preempt\", \"ResourceType\": \"VirtualMachine\","
			" \"Resources\": [\"other-vm\", \"C-Burst-3-A1Z1\"], \"NotBefore\": \"Mon, 19 Sep 2016 18:30:17 GMT\","
			" \"Description\": \"\", \"EventSource\": \"Platform\", \"DurationInSeconds\": -1}]}";
		static const char other_vm[] =
			"{\"DocumentIncarnation\": 3, \"Events\": [{\"EventType\": \"Preempt\", \"Resources\": [\"c-burst-4-a1z1\"],"
			" \"NotBefore\": \"Mon, 19 Sep 2016 18:30:17 GMT\"}]}";
		static const char other_events[] =
			"{\"DocumentIncarnation\": 4, \"Events\": [{\"EventType\": \"Reboot\", \"Resources\": [\"c-burst-3-a1z1\"]},"
			" {\"EventType\": \"Terminate\", \"Resources\": [\"c-burst-3-a1z1\"]}]}";
		static const char started[] =
			"{\"Events\": [{\"EventType\": \"Preempt\", \"EventStatus\": \"Started\", \"Resources\": [\"c-burst-3-a1z1\"], \"NotBefore\": \"\"}]}";
		static const char nul[] = "{\"Events\": []}\0x";

		ok(imds_azure_events_parse(200, preempt, sizeof(preempt) - 1, vm, 0, &n, why, sizeof(why)) == 1 &&
		   n.action == IMDS_ACTION_TERMINATE && !strcmp(n.action_name, "terminate") && n.at == 1474309817 &&
		   !strcmp(n.time, "2016-09-19T18:30:17Z"),
		   "azure: a Preempt naming this VM (in another case, among other events) is a terminate notice at its NotBefore (%s)", n.time);
		ok(imds_azure_events_parse(200, other_vm, sizeof(other_vm) - 1, vm, 0, &n, why, sizeof(why)) == 0,
		   "azure: another VM's Preempt is no notice");
		ok(imds_azure_events_parse(200, other_events, sizeof(other_events) - 1, vm, 0, &n, why, sizeof(why)) == 0,
		   "azure: this VM's Reboot and Terminate events are no notice");
		ok(imds_azure_events_parse(200, "{\"DocumentIncarnation\": 0, \"Events\": []}", 40, vm, 0, &n, why, sizeof(why)) == 0,
		   "azure: no events, no notice");
		ok(imds_azure_events_parse(200, started, sizeof(started) - 1, vm, 1505722920, &n, why, sizeof(why)) == 1 &&
		   n.at == 1505722920, "azure: a started Preempt without NotBefore is a notice for now (%s)", n.time);
		ok(imds_azure_events_parse(200, "{\"Events\": [", 12, vm, 0, &n, why, sizeof(why)) == -1 &&
		   strstr(why, "not a JSON object"), "azure: bad JSON refused (%s)", why);
		ok(imds_azure_events_parse(200, "[]", 2, vm, 0, &n, why, sizeof(why)) == -1 && strstr(why, "not a JSON object"),
		   "azure: a JSON array refused (%s)", why);
		ok(imds_azure_events_parse(200, "{\"Events\": {}}", 14, vm, 0, &n, why, sizeof(why)) == -1 && strstr(why, "\"Events\""),
		   "azure: Events not an array refused (%s)", why);
		ok(imds_azure_events_parse(200, "{\"Events\": [7]}", 15, vm, 0, &n, why, sizeof(why)) == -1 &&
		   strstr(why, "event 1 is not an object"), "azure: an event that is not an object refused (%s)", why);
		ok(imds_azure_events_parse(200, "{\"Events\": [{\"EventType\": 1}]}", 30, vm, 0, &n, why, sizeof(why)) == -1 &&
		   strstr(why, "EventType"), "azure: an EventType that is not a string refused (%s)", why);
		ok(imds_azure_events_parse(200, "{\"Events\": [{\"EventType\": \"Preempt\", \"Resources\": \"c-burst-3-a1z1\"}]}", 69,
					   vm, 0, &n, why, sizeof(why)) == -1 && strstr(why, "Resources"),
		   "azure: a Preempt whose Resources is not an array refused (%s)", why);
		ok(imds_azure_events_parse(500, "{}", 2, vm, 0, &n, why, sizeof(why)) == -1 && strstr(why, "HTTP 500"),
		   "azure: another status refused (%s)", why);
		ok(imds_azure_events_parse(200, nul, sizeof(nul) - 1, vm, 0, &n, why, sizeof(why)) == -1 && strstr(why, "NUL"),
		   "azure: a NUL byte refused (%s)", why);
		ok(imds_azure_events_parse(200, preempt, AZURE_EVENTS_MAX + 1, vm, 0, &n, why, sizeof(why)) == -1 &&
		   strstr(why, "bytes"), "azure: an answer over AZURE_EVENTS_MAX refused (%s)", why);
	}
	return done_testing();
}

/*
 * test_wire.c - the codecs of lib/core/wire.h: the spool request made by
 * one side is what the other reads, and a job's notes keep each note whole
 * whatever its text holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strutil.h"
#include "tap.h"
#include "wire.h"

static void spool_round_trip(void)
{
	struct wire_spool w = { .count = -1 }, r;
	burst_err_t err = { .msg = "" };
	char *text;

	w.op = WIRE_OP_RESUME;
	w.nodes = xstrdup("burst-[1-3],gpu-7");
	w.count = 4;
	w.time = 1780000000.25;
	w.pid = 4242;
	wire_spool_add_job(&w, 12, "burst-[1-2]");
	wire_spool_add_job(&w, 13, "burst-3");
	wire_spool_add_diagnostic(&w, "warning: a line with \"quotes\" and \x1b[31m");
	text = wire_spool_encode(&w);
	ok(text && strstr(text, "\"version\":1") && strstr(text, "\"op\":\"resume\""), "encoded: version and op (%s)", text ? text : "(none)");
	ok(wire_spool_decode(text, strlen(text), 100, &r, &err) == 0, "decoded (%s)", err.msg);
	ok(r.op == WIRE_OP_RESUME && !strcmp(r.nodes, w.nodes) && r.names.n == 4 && !strcmp(r.names.names[3], "gpu-7"),
	   "op, host list and its 4 names");
	ok(r.count == 4 && r.pid == 4242 && r.time == 1780000000.25 && r.slurm_job_id == 0, "count, pid, time; no job id");
	ok(r.njobs == 2 && r.jobs[0].job_id == 12 && !strcmp(r.jobs[1].nodes, "burst-3"), "the two jobs");
	ok(r.ndiagnostics == 1 && !strcmp(r.diagnostics[0], w.diagnostics[0]), "the diagnostic, byte for byte");
	wire_spool_free(&r);
	free(text);
	wire_spool_free(&w);

	/* a prolog's early request: the job id travels as the string it always was */
	memset(&w, 0, sizeof(w));
	w.count = -1;
	w.op = WIRE_OP_EARLY;
	w.nodes = xstrdup("burst-9");
	w.slurm_job_id = 77;
	text = wire_spool_encode(&w);
	ok(strstr(text, "\"slurm_job_id\":\"77\"") != NULL, "early: slurm_job_id as a string (%s)", text);
	ok(wire_spool_decode(text, strlen(text), 100, &r, &err) == 0 && r.op == WIRE_OP_EARLY && r.slurm_job_id == 77,
	   "early: decoded with job 77");
	wire_spool_free(&r);
	free(text);
	wire_spool_free(&w);

	/* what an older writer wrote is read; a newer one is refused clearly */
	text = "{\"op\":\"suspend\",\"nodes\":\"n1\",\"slurm_job_id\":5}";
	ok(wire_spool_decode(text, strlen(text), 100, &r, &err) == 0 && r.version == 1 && r.slurm_job_id == 5 &&
	   r.count == -1, "no version: version 1; a numeric job id read too");
	wire_spool_free(&r);
	text = "{\"version\":2,\"op\":\"suspend\",\"nodes\":\"n1\"}";
	ok(wire_spool_decode(text, strlen(text), 100, &r, &err) < 0 && strstr(err.msg, "\"version\" is 2") &&
	   strstr(err.msg, "upgrade the agent"), "version 2: refused, saying to upgrade the agent (%s)", err.msg);
	text = "{\"op\":\"resume\",\"nodes\":\"n1\",\"jobs\":{}}";
	ok(wire_spool_decode(text, strlen(text), 100, &r, &err) < 0 && strstr(err.msg, "\"jobs\" is object"),
	   "jobs not an array: refused (%s)", err.msg);
	text = "{\"op\":\"resume\",\"nodes\":\"n1\",\"jobs\":[{\"job_id\":0,\"nodes\":\"n1\"},{\"job_id\":\"8\",\"nodes\":\"n1\"},"
	       "{\"job_id\":9},{\"job_id\":4294967296,\"nodes\":\"n1\"}]}";
	ok(wire_spool_decode(text, strlen(text), 100, &r, &err) == 0 && r.njobs == 1 && r.jobs[0].job_id == 8,
	   "jobs without a usable id or nodes are left out (%zu kept)", r.njobs);
	wire_spool_free(&r);
	ok(wire_spool_op_from_name("resume-fail") == WIRE_OP_RESUME_FAIL && wire_spool_op_from_name("reboot") < 0,
	   "ops by name");
}

static const char *kind_name(enum wire_note_kind k)
{
	static const char *const n[] = { "contract", "cost", "budget", "held", "refused", "job-refused",
		"released", "other" };
	return n[k];
}

/* the notes of comment as "kind[node]=text|..." */
static char *notes_str(const char *comment)
{
	struct wire_notes notes;
	struct strbuf sb;
	size_t i;

	wire_notes_decode(comment, &notes);
	sb_init(&sb);
	for (i = 0; i < notes.n; i++)
		sb_addf(&sb, "%s%s%s%s%s=%s", i ? "|" : "", kind_name(notes.v[i].kind), notes.v[i].node[0] ? "[" : "",
			notes.v[i].node, notes.v[i].node[0] ? "]" : "", notes.v[i].text);
	wire_notes_free(&notes);
	if (!sb.len)
		sb_add(&sb, "");
	return sb_take(&sb);
}

static void is_notes(const char *comment, const char *want, const char *what)
{
	char *got = notes_str(comment);
	is_str(got, want, "%s", what);
	free(got);
}

static void notes(void)
{
	char *c, *c2, *n;

	/* what today's writers wrote reads as before */
	is_notes("burst: contract=gpu4-ampere; burst: cost=1.2000 USD (3.0 instance-seconds so far)",
		 "contract=gpu4-ampere|cost=1.2000 USD (3.0 instance-seconds so far)", "a contract and a cost note");
	is_notes("burst: refused on burst-3: node burst-3 has no admission record",
		 "refused[burst-3]=node burst-3 has no admission record", "a refusal names its node");
	is_notes("burst: job refused on gpu-1: its contract does not allow node set x",
		 "job-refused[gpu-1]=its contract does not allow node set x", "a job's own refusal");
	is_notes("burst: held: job refused on gpu-1: why", "held=job refused on gpu-1: why", "a hold");
	is_notes("site: audit 7; burst: contract=x", "other=site: audit 7|contract=x", "another's note is kept");
	is_notes("", "", "no comment, no notes");
	is_notes(NULL, "", "NULL, no notes");

	/* a contract text that tries to make notes of its own stays one note */
	n = wire_note_encode(WIRE_NOTE_CONTRACT, NULL, "x; burst: budget=free; 100%");
	is_str(n, "burst: contract=x%3B burst: budget=free%3B 100%25", "';' and '%%' are escaped in a note");
	is_notes(n, "contract=x; burst: budget=free; 100%", "... and decode to the text, one note");
	c = wire_notes_put(n, WIRE_NOTE_COST, NULL, "0.5000 USD (1.0 instance-seconds, some at an unknown price)");
	is_notes(c, "contract=x; burst: budget=free; 100%|cost=0.5000 USD (1.0 instance-seconds, some at an unknown price)",
		 "a cost note added beside it");
	c2 = wire_notes_put(c, WIRE_NOTE_COST, NULL, "0.7000 USD (2.0 instance-seconds)");
	is_notes(c2, "contract=x; burst: budget=free; 100%|cost=0.7000 USD (2.0 instance-seconds)",
		 "the cost note replaced where it stands, no duplicate");
	free(c);
	c = wire_notes_put(c2, WIRE_NOTE_COST, NULL, NULL);
	is_notes(c, "contract=x; burst: budget=free; 100%", "text NULL removes the notes of the kind");
	free(c);
	free(c2);
	free(n);

	/* control characters never reach the comment raw */
	n = wire_note_encode(WIRE_NOTE_REFUSED, "burst-1", "bad\nline\x1b[0m");
	ok(!strchr(n, '\n') && !strchr(n, 0x1b), "control characters are escaped (%s)", n);
	is_notes(n, "refused[burst-1]=bad\nline\x1b[0m", "... and decode back");
	free(n);

	/* merge: one encoded note put into a comment */
	c = wire_notes_merge("burst: contract=a; burst: cost=1", "burst: cost=2");
	is_str(c, "burst: contract=a; burst: cost=2", "merge replaces the note of the same kind");
	free(c);
	c = wire_notes_merge("burst: contract=a", "burst: budget=b would be crossed");
	is_str(c, "burst: contract=a; burst: budget=b would be crossed", "merge appends a new kind");
	free(c);
	c = wire_notes_merge(NULL, "burst: held: h");
	is_str(c, "burst: held: h", "merge into no comment");
	free(c);
}

static void join_messages(void)
{
	struct wire_join_claim c = { "burst-1", "i-0abc", "tok", "d1g" }, c2;
	struct wire_join_request rq = { .op = WIRE_JOIN_REPORT, .cred = "MUNGE:x", .record = "{\"a\":1}",
					.provenance_s = 0.5, .acceptance_s = -1 }, r2;
	struct wire_join_answer a = { .decision = WIRE_JOIN_ADMIT, .margin_ms = -1 }, a2;
	struct wire_notice_answer n = { false, "unknown node" }, n2;
	burst_err_t err = { .msg = "" };
	char *t;

	t = wire_join_claim_encode(&c);
	wire_join_claim_decode(t, &c2);
	ok(!strcmp(c2.node, "burst-1") && !strcmp(c2.instance, "i-0abc") && !strcmp(c2.token, "tok") &&
	   !strcmp(c2.digest, "d1g"), "a report's claim reads back (%s)", t);
	wire_join_claim_free(&c2);
	free(t);
	wire_join_claim_decode("{\"node\":1}", &c2);
	ok(!c2.node && !c2.token, "a claim that is not a string is absent");
	wire_join_claim_free(&c2);

	t = wire_join_request_encode(&rq);
	ok(strstr(t, "\"op\":\"join\"") && strstr(t, "\"provenance_s\":0.5") && !strstr(t, "acceptance_s"),
	   "a report: op join, the time said, the one not said left out (%s)", t);
	ok(wire_join_request_decode(t, strlen(t), &r2, &err) == 0 && r2.op == WIRE_JOIN_REPORT &&
	   !strcmp(r2.cred, "MUNGE:x") && !strcmp(r2.record, rq.record) && r2.provenance_s == 0.5 &&
	   r2.acceptance_s == -1, "... and reads back");
	wire_join_request_free(&r2);
	free(t);
	t = "{\"op\":\"notice\",\"cred\":\"MUNGE:y\"}";
	ok(wire_join_request_decode(t, strlen(t), &r2, &err) == 0 && r2.op == WIRE_JOIN_NOTICE && !r2.record &&
	   !strcmp(r2.cred, "MUNGE:y"), "a notice");
	wire_join_request_free(&r2);
	t = "{\"cred\":\"c\",\"record\":\"r\"}";
	ok(wire_join_request_decode(t, strlen(t), &r2, &err) == 0 && r2.op == WIRE_JOIN_REPORT,
	   "no op: a report, as the oldest nodes sent it");
	wire_join_request_free(&r2);
	ok(wire_join_request_decode("[1]", 3, &r2, &err) < 0 && strstr(err.msg, "not a JSON object"),
	   "not an object: refused (%s)", err.msg);

	wire_join_answer_add(&a, "CLOUD_INSTANCE_ID", "i-0abc");
	wire_join_answer_add(&a, "CLOUD_NODE", "burst-1");
	a.window = true;
	a.window_boot = true;
	a.margin_ms = 250;
	a.not_before = 1780000001;
	t = wire_join_answer_encode(&a);
	ok(wire_join_answer_decode(t, &a2, &err) == 0 && a2.decision == WIRE_JOIN_ADMIT && a2.has_record &&
	   a2.nrecord == 2 && !strcmp(a2.record[0].key, "CLOUD_INSTANCE_ID") && !strcmp(a2.record[1].value, "burst-1") &&
	   a2.window && a2.window_boot && a2.margin_ms == 250 && a2.not_before == 1780000001,
	   "an admission reads back: its record in order, the window, the second (%s)", t);
	is_str(wire_answer_verdict(t), "admit", "its verdict: admit");
	wire_join_answer_free(&a2);
	free(t);
	wire_join_answer_free(&a);
	t = "{\"admit\":false,\"retry\":true,\"reason\":\"not ready\"}";
	ok(wire_join_answer_decode(t, &a2, &err) == 0 && a2.decision == WIRE_JOIN_RETRY && !strcmp(a2.reason, "not ready"),
	   "a retry, the reason apart");
	is_str(wire_answer_verdict(t), "retry", "its verdict: retry");
	wire_join_answer_free(&a2);
	is_str(wire_answer_verdict("{\"admit\":false}"), "reject", "a rejection without a reason: reject");
	ok(wire_answer_verdict("{\"admit\":\"yes\"}") == NULL && wire_answer_verdict("nonsense") == NULL,
	   "no verdict in what is not an answer");

	t = wire_notice_answer_encode(&n);
	ok(wire_notice_answer_decode(t, &n2, &err) == 0 && !n2.ok && !strcmp(n2.reason, "unknown node"),
	   "a notice's refusal reads back (%s)", t);
	is_str(wire_answer_verdict(t), "refused", "its verdict: refused");
	wire_notice_answer_free(&n2);
	free(t);
	is_str(wire_answer_verdict("{\"ok\":true}"), "taken", "a notice taken: taken");
}

/* the admission record file: what burst-node writes is what the admission
 * plugin reads; nothing that would forge a line is written */
static void admission_record(void)
{
	char dir[] = "/tmp/test_wire.XXXXXX", path[128], buf[128], why[512], big[3000];
	struct wire_kv kv[] = {
		{ "CLOUD_NODE", "burst-1" }, { "CLOUD_INSTANCE_ID", "i-0abc=def" },
		{ "CLOUD_EMPTY", "" }, { "CLOUD_NODE", "second" }, { "CLOUD_BIG", big },
	};
	struct wire_kv forged[] = { { "CLOUD_NODE", "burst-1\nCLOUD_NODESET=gpu" } };
	struct wire_kv badkey[] = { { "CLOUD NODE", "x" } };
	FILE *f;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + 1013, "CLOUD_NODESET=gpu", 17);   /* at the start of fgets's second 1023 bytes */
	if (!ok(mkdtemp(dir) != NULL, "a scratch directory"))
		return;
	snprintf(path, sizeof(path), "%s/admission.env", dir);
	ok(wire_record_write(path, kv, 5, why, sizeof(why)) == 0, "a record is written");
	ok(wire_record_get(path, "CLOUD_NODE", buf, sizeof(buf)) && !strcmp(buf, "burst-1"),
	   "a key reads back, its first line: %s", buf);
	ok(wire_record_get(path, "CLOUD_INSTANCE_ID", buf, sizeof(buf)) && !strcmp(buf, "i-0abc=def"),
	   "a value with '=' in it whole: %s", buf);
	ok(wire_record_get(path, "CLOUD_EMPTY", buf, sizeof(buf)) && !strcmp(buf, ""), "an empty value");
	ok(!wire_record_get(path, "CLOUD_NOD", buf, sizeof(buf)) &&
	   !wire_record_get(path, "CLOUD_NODESET", buf, sizeof(buf)),
	   "a key's prefix is no key; a long value's tail is no line of its own");
	ok(!wire_record_get("/nonexistent/admission.env", "CLOUD_NODE", buf, sizeof(buf)),
	   "no file: no value");
	ok(wire_record_write(path, forged, 1, why, sizeof(why)) == -1 && strstr(why, "line break"),
	   "a value with a line break is refused: %s", why);
	ok(wire_record_write(path, badkey, 1, why, sizeof(why)) == -1 && strstr(why, "CLOUD NODE"),
	   "a key that is not a name is refused: %s", why);
	ok(wire_record_get(path, "CLOUD_NODE", buf, sizeof(buf)) && !strcmp(buf, "burst-1"),
	   "and the record written before is whole");
	f = fopen(path, "r");
	ok(f && fgetc(f) == 'C', "the file is KEY=VALUE text");
	if (f)
		fclose(f);
	unlink(path);
	ok(rmdir(dir) == 0, "nothing left beside it (no temporary file)");
}

int main(int argc, char **argv)
{
	/* with a file: decode each line as a job's admin comment and print its
	 * notes, one "kind[node]=text|..." line each (tests/cli/test_wire_lua.sh
	 * decodes what job_submit.lua writes) */
	if (argc == 2) {
		FILE *f = fopen(argv[1], "r");
		char line[8192];
		if (!f) {
			perror(argv[1]);
			return 2;
		}
		while (fgets(line, sizeof(line), f)) {
			char *s;
			line[strcspn(line, "\n")] = '\0';
			s = notes_str(line);
			printf("%s\n", s);
			free(s);
		}
		fclose(f);
		return 0;
	}
	spool_round_trip();
	notes();
	join_messages();
	admission_record();
	return done_testing();
}

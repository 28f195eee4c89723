/*
 * wire.h - one codec per message that crosses a process boundary: a struct,
 * and its encoder and decoder, here and nowhere else (doc/design.md §2).
 *
 *   the spool request   burst-resume, burst-suspend, burst-resume-fail and
 *                       burst-prolog-slurmctld -> the agent (a JSON file in
 *                       StateDir/spool, lib/state/spool.c moves it)
 *   the job's notes     job_submit.lua, the SPANK admission plugin and the
 *                       agent -> the agent, sacct and the admin (a job's
 *                       admin comment or comment: "burst: contract=NAME;
 *                       burst: cost=...")
 *   the join exchange   burst-node <-> the agent's join port: the report and
 *                       the claim its munge credential carries, the notice
 *                       of a spot interruption and its claim, the agent's
 *                       answers (wire_join.c). lib/admit/join_auth.h wraps
 *                       them in the authenticated envelope (hello, signed
 *                       answer): what travels inside it is made and read
 *                       here.
 *
 * The notes need nothing but libc (the SPANK admission plugin writes one);
 * the spool request is JSON (json-c, linked by the programs that use it).
 */
#ifndef BURST_WIRE_H
#define BURST_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "burst_err.h"
#include "hostlist.h"

/* ---- the spool request ---- */

#define WIRE_SPOOL_VERSION 1

enum wire_spool_op {
	WIRE_OP_RESUME,          /* ResumeProgram: launch these nodes */
	WIRE_OP_SUSPEND,         /* SuspendProgram: terminate them */
	WIRE_OP_RESUME_FAIL,     /* ResumeFailProgram: Slurm gave up on them */
	WIRE_OP_EARLY,           /* burst-prolog-slurmctld: a job was allocated them */
};
#define WIRE_SPOOL_OPS "resume, suspend, resume-fail or early"

/* A job a resume is for and its nodes (SLURM_RESUME_FILE, normalized:
 * lib/state/resume_file.h). */
struct wire_job {
	uint32_t job_id;
	char *nodes;             /* a Slurm host list */
};

struct wire_spool {
	int version;             /* WIRE_SPOOL_VERSION when encoded here */
	enum wire_spool_op op;
	char *nodes;             /* the host list as Slurm gave it */
	long count;              /* how many names it holds (-1: not said) */
	double time;             /* when it was written (wall clock, s; 0: not said) */
	long pid;                /* the writer's (0: not said) */
	uint32_t slurm_job_id;   /* the job of a prolog's request (0: none) */
	struct wire_job *jobs;   /* the jobs a resume is for */
	size_t njobs;
	char **diagnostics;      /* what the writer said meanwhile, for the agent's log */
	size_t ndiagnostics;
	struct hostlist names;   /* decoded only: nodes, expanded */
};

/* The name of op, as the request carries it ("resume", ...). */
const char *wire_spool_op_name(enum wire_spool_op op);
/* The op of a program's role (its name without "burst-"); -1 if none. */
int wire_spool_op_from_name(const char *name);

/* add a job (copied) or a diagnostic line (copied) to a request being made */
void wire_spool_add_job(struct wire_spool *r, uint32_t job_id, const char *nodes);
/* add the jobs of a JSON array of {"job_id", "nodes"} (lib/state/resume_file.h's
 * normalized jobs; a job id may be a number or a string of one), leaving out
 * an entry without a positive job id or nodes */
struct json_object;
void wire_spool_add_jobs_json(struct wire_spool *r, struct json_object *jobs);
void wire_spool_add_diagnostic(struct wire_spool *r, const char *line);

/* The request as the one line of JSON text that goes into the spool (a new
 * string). */
char *wire_spool_encode(const struct wire_spool *r);

/*
 * A request's text (len bytes, as spool_read gives them): one JSON object,
 * blanks after it allowed; "op" a string naming one of WIRE_SPOOL_OPS,
 * "nodes" a Slurm host list of at most max_nodes names, and what else it
 * carries of the right type ("version" a number no newer than this
 * program's, "jobs" an array of {"job_id","nodes"}, "diagnostics" an array
 * of strings, "slurm_job_id" a job id as a string or a number). Entries of
 * "jobs" without a positive job id or nodes are left out (Slurm's own file
 * has such). On success r holds the request; release it with
 * wire_spool_free. Returns 0, or -1 with err saying what is wrong and where
 * (r then holds nothing).
 */
int wire_spool_decode(const char *text, size_t len, size_t max_nodes, struct wire_spool *r,
		      burst_err_t *err);
void wire_spool_free(struct wire_spool *r);

/* ---- the job's notes ---- */

/*
 * A job's admin comment (or comment) is a list of notes joined by "; ",
 * each "burst: " and a kind and its text:
 *   burst: contract=NAME|EXPR            job_submit.lua, at submission
 *   burst: cost=TEXT                     the agent, when the job ended
 *   burst: budget=TEXT                   the agent, on a held job's comment
 *   burst: held: TEXT                    the agent
 *   burst: refused on NODE: TEXT         the admission plugin (the node's fault)
 *   burst: job refused on NODE: TEXT     the admission plugin (the job's fault)
 *   burst: released TEXT                 the agent
 * and notes of others (not "burst: ...") kept as they are. In a note's text
 * '%' is written "%25" and ';' "%3B", so that no text can end its note or
 * start another; control characters are written as \xNN.
 */
enum wire_note_kind {
	WIRE_NOTE_CONTRACT,
	WIRE_NOTE_COST,
	WIRE_NOTE_BUDGET,
	WIRE_NOTE_HELD,
	WIRE_NOTE_REFUSED,
	WIRE_NOTE_JOB_REFUSED,
	WIRE_NOTE_RELEASED,
	WIRE_NOTE_OTHER,         /* not one of ours: kept as it is */
};

struct wire_note {
	enum wire_note_kind kind;
	char node[256];          /* REFUSED, JOB_REFUSED: the node */
	char *text;              /* the note's text, decoded (OTHER: the whole note) */
};

struct wire_notes {
	struct wire_note *v;
	size_t n;
};

/* The notes of a comment (NULL or "": none). Never fails: what is not one
 * of ours is an OTHER note. */
void wire_notes_decode(const char *comment, struct wire_notes *out);
void wire_notes_free(struct wire_notes *notes);
/* The comment the notes make (a new string; "" for none). */
char *wire_notes_encode(const struct wire_notes *notes);
/* One note as its text in a comment (a new string). */
char *wire_note_encode(enum wire_note_kind kind, const char *node, const char *text);
/* The first note of kind, or NULL. */
const struct wire_note *wire_notes_find(const struct wire_notes *notes, enum wire_note_kind kind);

/*
 * comment with a note of kind whose text is text: a note of the same kind is
 * replaced where it stands (the first; any others are removed), else the note
 * is added at the end; text NULL removes the notes of kind. Every other note
 * stays as it was. A new string.
 */
char *wire_notes_put(const char *comment, enum wire_note_kind kind, const char *node, const char *text);

/* ---- the join exchange (wire_join.c) ---- */

/* The claim a node's munge credential carries over its report (the
 * credential's payload, which only root may decode: it holds the token):
 * {"digest","token","instance","node"}. */
struct wire_join_claim {
	char *node, *instance;
	char *token;             /* the one-time join token of the launch */
	char *digest;            /* sha256 hex of the record text */
};
char *wire_join_claim_encode(const struct wire_join_claim *c);
/* The claims of a payload: each NULL where absent or not a string (the
 * agent's checks say which is missing). Never fails. */
void wire_join_claim_decode(const char *payload, struct wire_join_claim *c);
void wire_join_claim_free(struct wire_join_claim *c);

/* The claim of a spot interruption notice: {"node","instance","action","time"}. */
struct wire_notice_claim {
	char *node, *instance;
	char *action;            /* terminate, stop, hibernate (EC2's words) */
	char *time;              /* YYYY-MM-DDTHH:MM:SSZ */
};
char *wire_notice_claim_encode(const struct wire_notice_claim *c);
void wire_notice_claim_decode(const char *payload, struct wire_notice_claim *c);
void wire_notice_claim_free(struct wire_notice_claim *c);

/* What a node asks on the join port (after its hello): a report of its
 * provenance ({"op":"join","cred","record","timing"}) or a notice
 * ({"op":"notice","cred"}). */
enum wire_join_op { WIRE_JOIN_REPORT, WIRE_JOIN_NOTICE };
struct wire_join_request {
	enum wire_join_op op;
	char *cred;              /* the munge credential over the claim */
	char *record;            /* REPORT: the provenance record's text */
	double provenance_s;     /* REPORT: how long the node took (-1: not said) */
	double acceptance_s;
};
char *wire_join_request_encode(const struct wire_join_request *r);
/*
 * A request's text: 0 and r filled (cred and record NULL where absent or
 * not strings: the agent's checks refuse them, saying so); -1 with err when
 * it is not a JSON object. An "op" other than "notice" is a report (the
 * oldest nodes said none).
 */
int wire_join_request_decode(const char *text, size_t len, struct wire_join_request *r, burst_err_t *err);
void wire_join_request_free(struct wire_join_request *r);

/* The agent's decision on a report, and its answer (the reason apart). */
enum wire_join_decision {
	WIRE_JOIN_ADMIT,         /* admitted: the record to write, when slurmd may start */
	WIRE_JOIN_REJECT,        /* refused: reason */
	WIRE_JOIN_RETRY,         /* not ready for this instance yet: ask again */
};
const char *wire_join_decision_name(enum wire_join_decision d);   /* "admit", "reject", "retry" */

struct wire_kv {
	char *key, *value;
};

struct wire_join_answer {
	enum wire_join_decision decision;
	char *reason;            /* REJECT, RETRY: why (NULL: none given) */
	struct wire_kv *record;  /* ADMIT: the admission record, KEY=VALUE (CLOUD_*) in order */
	size_t nrecord;
	bool has_record;         /* decoded: the answer had a record (encoded: always) */
	bool window;             /* ADMIT: slurmd starts in the safe window of a second... */
	bool window_boot;        /* ... of the boot clock (false: the wall clock) */
	long margin_ms;          /* ... this many ms before its tick (-1: not said) */
	long long not_before;    /* ADMIT: or from this epoch second on (0: not said) */
};
void wire_join_answer_add(struct wire_join_answer *a, const char *key, const char *value);
char *wire_join_answer_encode(const struct wire_join_answer *a);
/* An answer's text: 0 and a filled; -1 with err (not an answer to a report) */
int wire_join_answer_decode(const char *text, struct wire_join_answer *a, burst_err_t *err);
void wire_join_answer_free(struct wire_join_answer *a);

/*
 * The admission record file (StateDir/nodes/NODE/admission.env): an
 * answer's record as KEY=VALUE lines in order, which burst-node writes when
 * the node is admitted and the SPANK admission plugin reads in each job's
 * prolog. wire_record_write refuses a key that is not [A-Za-z0-9_] or a
 * value with a line break (it would forge a line) and writes beside path,
 * then renames (a reader sees the old record or the new one, never half):
 * 0, or -1 with why. wire_record_get: the value of key (the first line
 * that sets it) copied into buf, or false (no such key, no file).
 */
int wire_record_write(const char *path, const struct wire_kv *kv, size_t n, char *why,
		      size_t whylen);
bool wire_record_get(const char *path, const char *key, char *buf, size_t len);

/* The agent's answer to a notice: taken, or refused with a reason. */
struct wire_notice_answer {
	bool ok;
	char *reason;
};
char *wire_notice_answer_encode(const struct wire_notice_answer *a);
int wire_notice_answer_decode(const char *text, struct wire_notice_answer *a, burst_err_t *err);
void wire_notice_answer_free(struct wire_notice_answer *a);

/*
 * The verdict an answer's text carries, as the envelope signs it: "admit",
 * "reject", "retry" (to a report), "taken", "refused" (to a notice); NULL
 * when the text is neither answer.
 */
const char *wire_answer_verdict(const char *text);

/* wire_notes_put with the note that note is (one note as wire_note_encode
 * makes it, e.g. handed to a worker thread as text): the kind it is
 * replaces its like. A new string. */
char *wire_notes_merge(const char *comment, const char *note);

#endif

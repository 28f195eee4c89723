/*
 * wire_note.c - the notes of a job's admin comment (wire.h). libc only: the
 * SPANK admission plugin writes one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "wire.h"

#define SEP "; "

/* what each kind's note starts with (after it: the node and ": " for the
 * refusals, the text for the others) */
static const struct {
	enum wire_note_kind kind;
	const char *head;
} heads[] = {
	/* "job refused on" before "refused on": neither is a prefix of the
	 * other's note, but the longer is looked for first all the same */
	{ WIRE_NOTE_JOB_REFUSED, "burst: job refused on " },
	{ WIRE_NOTE_REFUSED, "burst: refused on " },
	{ WIRE_NOTE_CONTRACT, "burst: contract=" },
	{ WIRE_NOTE_COST, "burst: cost=" },
	{ WIRE_NOTE_BUDGET, "burst: budget=" },
	{ WIRE_NOTE_HELD, "burst: held: " },
	{ WIRE_NOTE_RELEASED, "burst: released " },
};
#define NHEADS (sizeof(heads) / sizeof(heads[0]))

static const char *head_of(enum wire_note_kind kind)
{
	size_t i;

	for (i = 0; i < NHEADS; i++)
		if (heads[i].kind == kind)
			return heads[i].head;
	return "";
}

static bool needs_escape(unsigned char c)
{
	return c == '%' || c == ';' || c < 0x20 || c == 0x7f;
}

/* text with '%', ';' and control characters as %XX */
static void add_escaped(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (needs_escape((unsigned char)*s))
			sb_addf(sb, "%%%02X", (unsigned char)*s);
		else
			sb_addc(sb, *s);
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* n bytes of s with %XX decoded (a '%' not followed by two hex digits is
 * itself) */
static char *unescape(const char *s, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;
	size_t i;

	for (i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else
			*o++ = s[i];
	}
	*o = '\0';
	return out;
}

static void decode_one(const char *p, size_t len, struct wire_note *note)
{
	size_t i;

	memset(note, 0, sizeof(*note));
	note->kind = WIRE_NOTE_OTHER;
	for (i = 0; i < NHEADS; i++) {
		size_t hl = strlen(heads[i].head);
		const char *t;
		if (len < hl || strncmp(p, heads[i].head, hl))
			continue;
		t = p + hl;
		if (heads[i].kind == WIRE_NOTE_REFUSED || heads[i].kind == WIRE_NOTE_JOB_REFUSED) {
			/* the node, up to ": " (a node's name has no ':') */
			const char *c = memchr(t, ':', len - hl);
			if (!c || c == t || (size_t)(c - t) >= sizeof(note->node))
				continue;
			snprintf(note->node, sizeof(note->node), "%.*s", (int)(c - t), t);
			t = c + 1;
			if (t < p + len && *t == ' ')
				t++;
		}
		note->kind = heads[i].kind;
		note->text = unescape(t, len - (size_t)(t - p));
		return;
	}
	note->text = xstrndup(p, len);
}

void wire_notes_decode(const char *comment, struct wire_notes *out)
{
	const char *p = comment ? comment : "";
	size_t cap = 0;

	out->v = NULL;
	out->n = 0;
	while (*p) {
		size_t len = strcspn(p, ";");
		if (len) {
			if (out->n == cap) {
				cap = cap ? 2 * cap : 4;
				out->v = xrealloc(out->v, cap * sizeof(*out->v));
			}
			decode_one(p, len, &out->v[out->n++]);
		}
		p += len;
		if (*p == ';')
			p++;
		while (*p == ' ')
			p++;
	}
}

void wire_notes_free(struct wire_notes *notes)
{
	size_t i;

	for (i = 0; i < notes->n; i++)
		free(notes->v[i].text);
	free(notes->v);
	notes->v = NULL;
	notes->n = 0;
}

static void add_note(struct strbuf *sb, enum wire_note_kind kind, const char *node, const char *text)
{
	if (sb->len)
		sb_add(sb, SEP);
	if (kind == WIRE_NOTE_OTHER) {
		/* not ours: as it was (it had no ';', or it would be two) */
		sb_add(sb, text ? text : "");
		return;
	}
	sb_add(sb, head_of(kind));
	if (kind == WIRE_NOTE_REFUSED || kind == WIRE_NOTE_JOB_REFUSED) {
		add_escaped(sb, node ? node : "");
		sb_add(sb, ": ");
	}
	add_escaped(sb, text ? text : "");
}

char *wire_note_encode(enum wire_note_kind kind, const char *node, const char *text)
{
	struct strbuf sb;

	sb_init(&sb);
	add_note(&sb, kind, node, text);
	return sb_take(&sb);
}

char *wire_notes_encode(const struct wire_notes *notes)
{
	struct strbuf sb;
	size_t i;

	sb_init(&sb);
	for (i = 0; i < notes->n; i++)
		add_note(&sb, notes->v[i].kind, notes->v[i].node, notes->v[i].text);
	return sb_take(&sb);
}

const struct wire_note *wire_notes_find(const struct wire_notes *notes, enum wire_note_kind kind)
{
	size_t i;

	for (i = 0; i < notes->n; i++)
		if (notes->v[i].kind == kind)
			return &notes->v[i];
	return NULL;
}

char *wire_notes_put(const char *comment, enum wire_note_kind kind, const char *node, const char *text)
{
	struct wire_notes notes;
	struct strbuf sb;
	bool put = false;
	size_t i;

	wire_notes_decode(comment, &notes);
	sb_init(&sb);
	for (i = 0; i < notes.n; i++) {
		const struct wire_note *n = &notes.v[i];
		if (n->kind == kind && kind != WIRE_NOTE_OTHER) {
			if (!put && text)
				add_note(&sb, kind, node, text);
			put = true;
		} else
			add_note(&sb, n->kind, n->node, n->text);
	}
	if (!put && text)
		add_note(&sb, kind, node, text);
	wire_notes_free(&notes);
	return sb_take(&sb);
}

char *wire_notes_merge(const char *comment, const char *note)
{
	struct wire_notes one;
	char *out;

	wire_notes_decode(note, &one);
	if (!one.n)
		out = xstrdup(comment ? comment : "");
	else if (one.v[0].kind == WIRE_NOTE_OTHER) {
		/* not one of ours: added as it is */
		struct strbuf sb;
		sb_init(&sb);
		sb_add(&sb, comment ? comment : "");
		if (sb.len)
			sb_add(&sb, SEP);
		sb_add(&sb, one.v[0].text);
		out = sb_take(&sb);
	} else
		out = wire_notes_put(comment, one.v[0].kind, one.v[0].node, one.v[0].text);
	wire_notes_free(&one);
	return out;
}

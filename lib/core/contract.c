/*
 * contract.c - lexer and parser of the contract language (see contract.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch.h"
#include "contract.h"
#include "strutil.h"

struct parser {
	const char *text;
	size_t len, i;
	burst_err_t *err;
	struct contract *c;
	bool have_rank, have_spot;
};

/* Record an error at [pos, pos+span) with a caret line under the text. */
static void perr(struct parser *p, size_t pos, size_t span, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void perr(struct parser *p, size_t pos, size_t span, const char *fmt, ...)
{
	char what[1024];
	struct strbuf sb;
	size_t k;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (pos > p->len)
		pos = p->len;
	if (span == 0)
		span = 1;
	sb_init(&sb);
	sb_addf(&sb, "bad contract at character %zu: %s\n  ", pos + 1, what);
	for (k = 0; k < p->len && k < 400; k++)
		sb_addf(&sb, "%c", isprint((unsigned char)p->text[k]) ? p->text[k] : ' ');
	sb_add(&sb, "\n  ");
	for (k = 0; k < pos && k < 400; k++)
		sb_add(&sb, " ");
	sb_add(&sb, "^");
	for (k = 1; k < span && pos + k < 400; k++)
		sb_add(&sb, "~");
	burst_err_set(p->err, "%s", sb.s);
	p->err->pos = pos;
	sb_free(&sb);
}

static bool is_sep(char ch)
{
	return ch == ',' || isspace((unsigned char)ch);
}

static bool is_value_char(char ch)
{
	return ch && !isspace((unsigned char)ch) && !strchr(",{}=<>!", ch);
}

static void skip_blank(struct parser *p)
{
	while (p->i < p->len && isspace((unsigned char)p->text[p->i]))
		p->i++;
}

static const char *const op_names[] = { "=", "!=", "<", "<=", ">", ">=", "in" };

const char *contract_op_str(enum contract_op op)
{
	return op_names[op];
}

/* Read an operator at p->i. Returns 0 and sets *op, or -1 with an error. */
static int read_op(struct parser *p, const char *key, enum contract_op *op)
{
	const char *s = p->text + p->i;
	size_t start = p->i, n = 0;

	while (p->i + n < p->len && strchr("=<>!", s[n]))
		n++;
	if (n == 0) {
		if (p->len - p->i >= 2 && strncasecmp(s, "in", 2) == 0 &&
		    (p->i + 2 == p->len || s[2] == '{' || isspace((unsigned char)s[2]))) {
			p->i += 2;
			*op = OP_IN;
			return 0;
		}
		if (p->i >= p->len)
			perr(p, start, 1, "expected an operator (= != < <= > >= in{...}) after '%s'", key);
		else
			perr(p, start, 1, "expected an operator (= != < <= > >= in{...}) after '%s', found '%c'",
			     key, *s);
		return -1;
	}
	if (n == 1 && s[0] == '=') *op = OP_EQ;
	else if (n == 2 && s[0] == '!' && s[1] == '=') *op = OP_NE;
	else if (n == 1 && s[0] == '<') *op = OP_LT;
	else if (n == 2 && s[0] == '<' && s[1] == '=') *op = OP_LE;
	else if (n == 1 && s[0] == '>') *op = OP_GT;
	else if (n == 2 && s[0] == '>' && s[1] == '=') *op = OP_GE;
	else {
		const char *hint = "";
		if (n == 2 && s[0] == '=' && s[1] == '>') hint = "; did you mean '>='?";
		else if (n == 2 && s[0] == '=' && s[1] == '<') hint = "; did you mean '<='?";
		else if (n == 2 && s[0] == '=' && s[1] == '=') hint = "; did you mean '='?";
		else if (n == 2 && s[0] == '<' && s[1] == '>') hint = "; did you mean '!='?";
		else if (n == 2 && s[0] == '=' && s[1] == '!') hint = "; did you mean '!='?";
		perr(p, start, n, "unknown operator '%.*s'%s (operators: = != < <= > >= in{...})",
		     (int)n, s, hint);
		return -1;
	}
	p->i += n;
	return 0;
}

static bool ordered(enum contract_op op)
{
	return op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE;
}

/* Check and store one value of assumption a (index k). */
static int add_value(struct parser *p, struct assumption *a, const struct key_info *ki,
		     size_t vpos, size_t vlen)
{
	const char *v = p->text + vpos;
	size_t k = a->nvals;

	a->str = xrealloc(a->str, (k + 1) * sizeof(*a->str));
	a->num = xrealloc(a->num, (k + 1) * sizeof(*a->num));
	a->arch = xrealloc(a->arch, (k + 1) * sizeof(*a->arch));
	a->str[k] = xstrndup(v, vlen);
	a->num[k] = 0;
	a->arch[k] = -1;
	a->nvals = k + 1;

	switch (ki->kind) {
	case KIND_STRING:
		return 0;
	case KIND_NUMBER: {
		char msg[256];
		size_t epos = 0;
		if (units_parse(v, vlen, ki->unit, &a->num[k], msg, sizeof(msg), &epos) < 0) {
			/* at the offending character; a missing unit is just after the number */
			perr(p, vpos + (epos <= vlen ? epos : 0),
			     epos < vlen ? vlen - epos : 1, "%s: %s", ki->name, msg);
			return -1;
		}
		return 0;
	}
	case KIND_ARCH: {
		const struct arch_info *ai = arch_lookup_n(v, vlen);
		if (!ai) {
			const char *near = str_suggest(a->str[k], arch_names(), 0);
			struct strbuf known;
			const char *const *n;
			sb_init(&known);
			for (n = arch_names(); *n; n++)
				sb_addf(&known, "%s%s", n == arch_names() ? "" : " ", *n);
			if (near)
				perr(p, vpos, vlen, "unknown accelerator architecture '%s'; did you mean '%s'? (known: %s)",
				     a->str[k], near, known.s);
			else
				perr(p, vpos, vlen, "unknown accelerator architecture '%s' (known: %s)",
				     a->str[k], known.s);
			sb_free(&known);
			return -1;
		}
		a->arch[k] = (int)(ai - arch_at(0));
		return 0;
	}
	case KIND_BOOL:
	case KIND_RANK:
		break;
	}
	return 0;
}

static int parse_item(struct parser *p)
{
	size_t kpos = p->i, klen = 0, vpos, vlen;
	const struct key_info *ki;
	struct assumption a;
	enum contract_op op;
	char key[128];

	while (p->i < p->len &&
	       (isalnum((unsigned char)p->text[p->i]) || p->text[p->i] == '_'))
		p->i++, klen++;
	if (klen == 0) {
		perr(p, kpos, 1, "expected a key such as accelerator_count, found '%c'", p->text[kpos]);
		return -1;
	}
	snprintf(key, sizeof(key), "%.*s", (int)(klen < 100 ? klen : 100), p->text + kpos);
	ki = key_lookup(p->text + kpos, klen);
	if (!ki) {
		const char *near = str_suggest(key, key_names(), 0);
		if (near)
			perr(p, kpos, klen, "unknown key '%s'; did you mean '%s'?", key, near);
		else
			perr(p, kpos, klen, "unknown key '%s' (see burstctl --help-keys or burst.conf(5) for the keys)", key);
		return -1;
	}
	skip_blank(p);
	size_t opos = p->i;
	if (read_op(p, ki->name, &op) < 0)
		return -1;
	skip_blank(p);

	memset(&a, 0, sizeof(a));
	a.key = ki->id;
	a.op = op;
	a.pos = kpos;

	if (op == OP_IN) {
		if (p->i >= p->len || p->text[p->i] != '{') {
			perr(p, p->i, 1, "expected '{' after 'in' (in {a,b,c})");
			return -1;
		}
		p->i++;
		for (;;) {
			while (p->i < p->len && is_sep(p->text[p->i]))
				p->i++;
			if (p->i < p->len && p->text[p->i] == '}') {
				if (a.nvals == 0) {
					perr(p, p->i, 1, "empty set: write at least one value between { and }");
					goto fail;
				}
				p->i++;
				break;
			}
			vpos = p->i;
			while (p->i < p->len && is_value_char(p->text[p->i]))
				p->i++;
			vlen = p->i - vpos;
			if (vlen == 0) {
				if (p->i >= p->len)
					perr(p, p->i, 1, "missing '}' to close the set opened at character %zu", opos + 1);
				else
					perr(p, p->i, 1, "expected a value or '}', found '%c'", p->text[p->i]);
				goto fail;
			}
			if (add_value(p, &a, ki, vpos, vlen) < 0)
				goto fail;
		}
	} else {
		vpos = p->i;
		while (p->i < p->len && is_value_char(p->text[p->i]))
			p->i++;
		vlen = p->i - vpos;
		if (vlen == 0) {
			perr(p, vpos, 1, "expected a value after '%s%s'", ki->name, contract_op_str(op));
			goto fail;
		}
		if (ki->kind == KIND_BOOL || ki->kind == KIND_RANK) {
			char val[64];
			snprintf(val, sizeof(val), "%.*s", (int)(vlen < 60 ? vlen : 60), p->text + vpos);
			if (op != OP_EQ) {
				perr(p, opos, 1, "%s takes only '=' (%s=%s)", ki->name, ki->name,
				     ki->kind == KIND_RANK ? "price|fit" : "yes|no");
				goto fail;
			}
			if (ki->kind == KIND_RANK) {
				if (p->have_rank) {
					perr(p, kpos, klen, "rank is given twice");
					goto fail;
				}
				if (str_ieq(val, "price")) p->c->rank = RANK_PRICE;
				else if (str_ieq(val, "fit")) p->c->rank = RANK_FIT;
				else {
					perr(p, vpos, vlen, "rank is 'price' or 'fit', not '%s'", val);
					goto fail;
				}
				p->have_rank = true;
			} else {
				if (p->have_spot) {
					perr(p, kpos, klen, "spot is given twice");
					goto fail;
				}
				if (str_ieq(val, "yes") || str_ieq(val, "true") || str_ieq(val, "1"))
					p->c->spot = true;
				else if (str_ieq(val, "no") || str_ieq(val, "false") || str_ieq(val, "0"))
					p->c->spot = false;
				else {
					perr(p, vpos, vlen, "spot is 'yes' or 'no', not '%s'", val);
					goto fail;
				}
				p->have_spot = true;
			}
			return 0;
		}
		if (add_value(p, &a, ki, vpos, vlen) < 0)
			goto fail;
	}

	/* operator fits the kind of value? */
	if (ki->kind == KIND_STRING && ordered(op)) {
		perr(p, opos, strlen(contract_op_str(op)),
		     "'%s' compares numbers or architectures, but %s is a name: use =, != or in{...}",
		     contract_op_str(op), ki->name);
		goto fail;
	}
	if (ki->id == KEY_MAX_PRICE) {
		if (op != OP_EQ) {
			perr(p, opos, 1, "max_price takes only '=' (max_price=N means price_per_hour<=N)");
			goto fail;
		}
		a.key = KEY_PRICE;
		a.op = OP_LE;
	}
	a.text = xstrndup(p->text + kpos, p->i - kpos);
	p->c->as = xrealloc(p->c->as, (p->c->nas + 1) * sizeof(a));
	p->c->as[p->c->nas++] = a;
	/* the next thing must be a separator or the end */
	if (p->i < p->len && !is_sep(p->text[p->i])) {
		perr(p, p->i, 1, "expected ',' or a blank between assumptions, found '%c'", p->text[p->i]);
		return -1;
	}
	return 0;
fail:
	{
		size_t k;
		for (k = 0; k < a.nvals; k++)
			free(a.str[k]);
		free(a.str);
		free(a.num);
		free(a.arch);
		free(a.text);
	}
	return -1;
}

struct contract *contract_parse(const char *text, burst_err_t *err)
{
	struct parser p;

	memset(&p, 0, sizeof(p));
	p.text = text ? text : "";
	p.len = strlen(p.text);
	p.err = err;
	p.c = xcalloc(1, sizeof(*p.c));
	p.c->text = xstrdup(p.text);
	p.c->rank = RANK_PRICE;

	for (;;) {
		while (p.i < p.len && is_sep(p.text[p.i]))
			p.i++;
		if (p.i >= p.len)
			break;
		if (parse_item(&p) < 0) {
			contract_free(p.c);
			return NULL;
		}
	}
	if (p.c->nas == 0 && !p.have_rank && !p.have_spot) {
		perr(&p, 0, 1, "empty contract: give at least one assumption, e.g. accelerator_count>=1");
		contract_free(p.c);
		return NULL;
	}
	return p.c;
}

void contract_free(struct contract *c)
{
	size_t i, k;

	if (!c)
		return;
	for (i = 0; i < c->nas; i++) {
		for (k = 0; k < c->as[i].nvals; k++)
			free(c->as[i].str[k]);
		free(c->as[i].str);
		free(c->as[i].num);
		free(c->as[i].arch);
		free(c->as[i].text);
	}
	free(c->as);
	free(c->text);
	free(c);
}

char *contract_assumption_str(const struct assumption *a)
{
	struct strbuf sb;
	const struct key_info *ki = key_info(a->key);
	size_t k;

	sb_init(&sb);
	sb_addf(&sb, "%s", ki->name);
	if (a->op == OP_IN)
		sb_add(&sb, " in {");
	else
		sb_add(&sb, contract_op_str(a->op));
	for (k = 0; k < a->nvals; k++) {
		if (k)
			sb_add(&sb, ",");
		if (ki->kind == KIND_NUMBER) {
			char buf[64];
			units_format(a->num[k], ki->unit, buf, sizeof(buf));
			sb_add(&sb, buf);
		} else if (ki->kind == KIND_ARCH) {
			sb_add(&sb, arch_at((size_t)a->arch[k])->name);
		} else {
			sb_add(&sb, a->str[k]);
		}
	}
	if (a->op == OP_IN)
		sb_add(&sb, "}");
	return sb_take(&sb);
}

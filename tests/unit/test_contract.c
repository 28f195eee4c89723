/*
 * test_contract.c - the contract lexer and parser: valid contracts and what
 * they parse to; invalid ones and where and how they are refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "contract.h"
#include "strutil.h"
#include "tap.h"

#define G (1024.0 * 1024 * 1024)

/* The canonical form of every assumption, joined by " ". */
static char *canon(const struct contract *c)
{
	struct strbuf sb;
	size_t i;

	sb_init(&sb);
	for (i = 0; i < c->nas; i++) {
		char *s = contract_assumption_str(&c->as[i]);
		sb_addf(&sb, "%s%s", i ? " " : "", s);
		free(s);
	}
	return sb_take(&sb);
}

static const struct {
	const char *text;
	const char *canon;       /* canonical assumptions */
	int rank;                /* RANK_PRICE or RANK_FIT */
	int spot;
} good[] = {
	{ "accelerator_count>=4,accelerator_architecture=ampere",
	  "accelerator_count>=4 accelerator_architecture=ampere", RANK_PRICE, 0 },
	{ "accelerator_count>=4 accelerator_architecture=ampere",
	  "accelerator_count>=4 accelerator_architecture=ampere", RANK_PRICE, 0 },
	{ "  accelerator_count >= 4 ,  accelerator_architecture = ampere  ",
	  "accelerator_count>=4 accelerator_architecture=ampere", RANK_PRICE, 0 },
	{ "ACCELERATOR_COUNT=2", "accelerator_count=2", RANK_PRICE, 0 },
	{ "accelerator_count=0", "accelerator_count=0", RANK_PRICE, 0 },
	{ "accelerator_count>=3", "accelerator_count>=3", RANK_PRICE, 0 },
	{ "node_vcpus_count>7 node_vcpus_count<100", "node_vcpus_count>7 node_vcpus_count<100", RANK_PRICE, 0 },
	{ "node_memory_size<=256G", "node_memory_size<=256G", RANK_PRICE, 0 },
	{ "accelerator_memory_size>=80G", "accelerator_memory_size>=80G", RANK_PRICE, 0 },
	{ "network_performance>=100Gbps", "network_performance>=100G", RANK_PRICE, 0 },
	{ "accelerator_count in {1,2,4}", "accelerator_count in {1,2,4}", RANK_PRICE, 0 },
	{ "accelerator in{A100-80GB, H100}", "accelerator in {A100-80GB,H100}", RANK_PRICE, 0 },
	{ "node_provider!=gcp", "node_provider!=gcp", RANK_PRICE, 0 },
	{ "accelerator_architecture>=ampere", "accelerator_architecture>=ampere", RANK_PRICE, 0 },
	{ "accelerator_architecture<hopper", "accelerator_architecture<hopper", RANK_PRICE, 0 },
	{ "accelerator_architecture in {ada, hopper}", "accelerator_architecture in {ada,hopper}", RANK_PRICE, 0 },
	{ "accelerator_architecture=AMPERE", "accelerator_architecture=ampere", RANK_PRICE, 0 },
	{ "max_price=3", "price_per_hour<=3", RANK_PRICE, 0 },
	{ "rank=fit accelerator_count>=1", "accelerator_count>=1", RANK_FIT, 0 },
	{ "rank=price spot=yes node_vcpus_count>=2", "node_vcpus_count>=2", RANK_PRICE, 1 },
	{ "spot=no node_region=us-east-1", "node_region=us-east-1", RANK_PRICE, 0 },
	{ "storage_size>.15K", "storage_size>0.15K", RANK_PRICE, 0 },
	{ "accelerator_architecture=ultrascale+", "accelerator_architecture=ultrascale+", RANK_PRICE, 0 },
};

static const struct {
	const char *text;
	size_t pos;              /* err.pos, 0-based */
	const char *frag;
} bad[] = {
	{ "acelerator_count>=4", 0, "unknown key 'acelerator_count'; did you mean 'accelerator_count'?" },
	{ "accelerator_count>=4,acelerator_architecture=ampere", 21,
	  "did you mean 'accelerator_architecture'?" },
	{ "vcpus>=4", 0, "did you mean 'node_vcpus_count'?" },
	{ "frobnicate=1", 0, "unknown key 'frobnicate' (see" },
	{ "node_memory_size>=16X", 20, "unknown size unit 'X'" },
	{ "node_memory_size>=256", 21, "a size needs a unit" },
	{ "accelerator_count=>4", 17, "unknown operator '=>'; did you mean '>='?" },
	{ "accelerator_count==4", 17, "unknown operator '=='; did you mean '='?" },
	{ "accelerator_count<>4", 17, "unknown operator '<>'; did you mean '!='?" },
	{ "accelerator_count 4", 18, "expected an operator" },
	{ "accelerator_architecture>=amprere", 26,
	  "unknown accelerator architecture 'amprere'; did you mean 'ampere'?" },
	{ "accelerator_architecture=volta2", 25, "did you mean 'volta'?" },
	{ "accelerator>=A100", 11, "'>=' compares numbers or architectures, but accelerator is a name" },
	{ "accelerator_count>=", 19, "expected a value after 'accelerator_count>='" },
	{ "accelerator_count in {}", 22, "empty set" },
	{ "accelerator_count in {1,2", 25, "missing '}'" },
	{ "accelerator_count in 1,2", 21, "expected '{' after 'in'" },
	{ "", 0, "empty contract" },
	{ " , ", 0, "empty contract" },
	{ "rank=fit rank=price", 9, "rank is given twice" },
	{ "rank=cheap", 5, "rank is 'price' or 'fit', not 'cheap'" },
	{ "spot=maybe", 5, "spot is 'yes' or 'no'" },
	{ "rank>=fit", 4, "rank takes only '='" },
	{ "max_price<3", 9, "max_price takes only '='" },
	{ "accelerator_count=4}", 19, "expected ',' or a blank between assumptions, found '}'" },
	{ "=4", 0, "expected a key" },
	{ "accelerator_count=4G", 19, "a count takes no unit" },
};

int main(void)
{
	burst_err_t err;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct contract *c = contract_parse(good[i].text, &err);
		if (!ok(c != NULL, "parses: %s", good[i].text)) {
			diag("%s", err.msg);
			continue;
		}
		{
			char *got = canon(c);
			is_str(got, good[i].canon, "canonical: %s", good[i].text);
			free(got);
		}
		ok((int)c->rank == good[i].rank, "rank of %s", good[i].text);
		ok(c->spot == (good[i].spot != 0), "spot of %s", good[i].text);
		is_str(c->text, good[i].text, "text kept as given");
		contract_free(c);
	}

	/* canonical numbers */
	{
		struct contract *c = contract_parse(
			"node_memory_size<=256G accelerator_count in {1, 2, 4} network_performance>=400M "
			"accelerator_architecture>=ampere", &err);
		if (ok(c != NULL, "a mixed contract parses")) {
			ok(c->nas == 4, "four assumptions");
			ok(c->as[0].key == KEY_MEMORY && c->as[0].op == OP_LE, "memory <=");
			is_num(c->as[0].num[0], 256 * G, "256G in bytes");
			ok(c->as[1].op == OP_IN && c->as[1].nvals == 3, "in{} with three values");
			is_num(c->as[1].num[2], 4, "third value 4");
			is_num(c->as[2].num[0], 0.4, "400M is 0.4 Gbit/s");
			ok(c->as[3].key == KEY_ACC_ARCH && c->as[3].op == OP_GE, "arch >=");
			is_str(arch_at((size_t)c->as[3].arch[0])->name, "ampere", "arch index of ampere");
			ok(c->as[3].pos == 80, "assumption position recorded (%zu)", c->as[3].pos);
			is_str(c->as[1].text, "accelerator_count in {1, 2, 4}", "assumption text as written");
			contract_free(c);
		}
	}

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct contract *c = contract_parse(bad[i].text, &err);
		ok(c == NULL, "refused: '%s'", bad[i].text);
		contract_free(c);
		if (c)
			continue;
		has_str(err.msg, bad[i].frag, "'%s': message", bad[i].text);
		ok(err.pos == bad[i].pos, "'%s': at character %zu (got %zu)", bad[i].text,
		   bad[i].pos, err.pos);
	}

	/* the caret line is under the offending character */
	{
		const char *text = "accelerator_count>=4 node_memory_size>=16X";
		struct contract *c = contract_parse(text, &err);
		char *line2, *line3;
		ok(c == NULL, "bad unit refused");
		line2 = strchr(err.msg, '\n');
		line3 = line2 ? strchr(line2 + 1, '\n') : NULL;
		if (ok(line2 && line3, "message has the text and a caret line")) {
			ok(strncmp(line2 + 1, "  accelerator_count>=4 node_memory_size>=16X", 44) == 0,
			   "second line quotes the contract");
			ok(line3[1 + 2 + 41] == '^', "caret under the 'X' (column 42)");
		}
		has_str(err.msg, "bad contract at character 42:", "1-based character in the message");
	}
	return done_testing();
}

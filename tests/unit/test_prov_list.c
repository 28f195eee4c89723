/*
 * test_prov_list.c - burst-agent/provider.c's listing: an instance's
 * strings are the list's own copies, stay where they are while the list
 * grows (a record points into them), and a cluster or state repeated from
 * one instance to the next is kept once; their control characters are
 * written out. And its table of drivers is the one config_has_driver
 * (lib/core) speaks for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../burst-agent/provider.h"
#include "config.h"
#include "tap.h"

int main(void)
{
	struct prov_list l = { 0 };
	const char *first_id, *first_cluster;
	char id[64], node[64], cluster[8] = "lab";
	size_t bad = 0, i;
	struct prov_instance *in;

	ok(sizeof(struct prov_instance) <= 48, "a record is at most 48 bytes (%zu)",
	   sizeof(struct prov_instance));
	in = prov_list_add(&l, "i-0", cluster, NULL, "running");
	first_id = in->id;
	first_cluster = in->cluster;
	cluster[0] = 'X';
	is_str(l.v[0].cluster, "lab", "the cluster is copied, not borrowed");
	is_str(l.v[0].node, "", "no node: \"\"");
	ok(l.v[0].attempt == 0 && l.v[0].launched == 0, "numbers zero");
	cluster[0] = 'l';
	/* 20,000 more: many blocks of strings, the array moved many times */
	for (i = 1; i <= 20000; i++) {
		snprintf(id, sizeof(id), "i-%017zx", i);
		snprintf(node, sizeof(node), "burst-%zu", i);
		in = prov_list_add(&l, id, "lab", node, i % 2 ? "pending" : "running");
		in->attempt = (int)i;
	}
	is_num(l.n, 20001, "20,001 instances");
	ok(l.v[0].id == first_id && !strcmp(first_id, "i-0"), "the first id did not move");
	for (i = 1; i <= 20000; i++) {
		snprintf(id, sizeof(id), "i-%017zx", i);
		snprintf(node, sizeof(node), "burst-%zu", i);
		bad += strcmp(l.v[i].id, id) || strcmp(l.v[i].node, node) ||
			strcmp(l.v[i].state, i % 2 ? "pending" : "running") ||
			strcmp(l.v[i].cluster, "lab") || l.v[i].attempt != (int)i;
	}
	is_num(bad, 0, "every instance's strings and numbers as added");
	ok(l.v[20000].cluster == first_cluster, "one cluster kept once for all");
	ok(l.v[20000].state == l.v[19998].state, "a state repeated is kept once");
	/* what a cloud lists is anyone's with access to the account (a tag): its
	 * control characters are written out as it enters the agent */
	in = prov_list_add(&l, "i-\033[2J", "lab", "burst-1\n[forged] line", "caf\303\251");
	is_str(in->id, "i-\\x1b[2J", "a listed id's ESC is written out");
	is_str(in->node, "burst-1\\x0a[forged] line", "a node tag's newline is written out");
	is_str(in->state, "caf\303\251", "UTF-8 is kept");
	prov_list_free(&l);
	ok(l.n == 0 && !l.v && !l.strs, "freed and zeroed");
	/* burstctl check-config says which types have a driver without
	 * linking the drivers: what it says must be what the agent has */
	{
		const char *t;
		size_t drivers = 0;
		for (i = 0; (t = config_provider_type(i)); i++) {
			ok(config_has_driver(t) == (provider_ops_find(t) != NULL),
			   "type %s: config_has_driver says %s, and the agent %s", t,
			   config_has_driver(t) ? "a driver" : "none", provider_ops_find(t) ? "has one" : "has none");
			drivers += provider_ops_find(t) != NULL;
		}
		for (i = 0; (t = config_provider_type(i)); i++) {
			const struct provider_ops *ops = provider_ops_find(t);
			bool both = ops && ops->stop && ops->start;
			ok(config_driver_stops(t) == both && (!ops || !ops->stop == !ops->start),
			   "type %s: config_driver_stops says %s, and its driver %s", t,
			   config_driver_stops(t) ? "it stops and starts" : "it cannot",
			   both ? "has both verbs" : ops && (ops->stop || ops->start) ? "has one of them" : "has neither");
		}
		ok(config_driver_stops("local") && config_driver_stops("aws") && !config_driver_stops("nosuch"),
		   "local and aws stop and start their instances");
		ok(drivers >= 3 && !config_has_driver("nosuch") && !provider_ops_find("nosuch"),
		   "local, aws and openstack at least; no driver for an unknown type (%zu)", drivers);
	}
	return done_testing();
}

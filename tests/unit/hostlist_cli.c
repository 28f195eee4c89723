/*
 * hostlist_cli.c - lib/hostlist.c from the shell, for
 * tests/integration/test_hostlist_slurm.sh: one host list expression per
 * line on standard input; for each, one line on standard output: "ok" and
 * its names, or "refused" and why, separated by tabs.
 */
#include <stdio.h>
#include <string.h>

#include "hostlist.h"

int main(void)
{
	char line[65536];

	while (fgets(line, sizeof(line), stdin)) {
		struct hostlist hl = { NULL, 0, 0 };
		burst_err_t err;
		size_t i;

		line[strcspn(line, "\n")] = '\0';
		if (hostlist_expand(line, &hl, 1 << 20, &err) < 0) {
			printf("refused\t%s\n", err.msg);
			continue;
		}
		fputs("ok", stdout);
		for (i = 0; i < hl.n; i++)
			printf("\t%s", hl.names[i]);
		putchar('\n');
		hostlist_free(&hl);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

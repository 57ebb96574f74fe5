/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost: what a Lima VM really costs the host. Subcommands live in host/cmd_*.c. */
#include "log.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: vmcost [--version] COMMAND [ARGS...]\n");
}

int main(int argc, char **argv)
{
	vmc_log_init(argv[0]);
	if (argc < 2) {
		usage(stderr);
		return VMC_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("vmcost %s\n", VMCOST_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	die(VMC_EXIT_USAGE, "unknown command \"%s\": see vmcost --help", argv[1]);
}

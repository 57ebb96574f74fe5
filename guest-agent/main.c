/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost-agent: the guest half of vmcost (trim, checks, wakeups, balloon, HTTP API). */
#include "log.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: vmcost-agent [--version] COMMAND [ARGS...]\n");
}

int main(int argc, char **argv)
{
	vmc_log_init(argv[0]);
	if (argc < 2) {
		usage(stderr);
		return VMC_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("vmcost-agent %s\n", VMCOST_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	die(VMC_EXIT_USAGE, "unknown command \"%s\": see vmcost-agent --help", argv[1]);
}

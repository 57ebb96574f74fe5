/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholder until the subcommand lands: it says so and fails, it never pretends. */
#include "commands.h"
#include "log.h"

int cmd_disk(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die(VMC_EXIT_FAILURE, "vmcost disk is not implemented yet");
}

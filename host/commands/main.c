/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost: what a Lima VM really costs the host. Subcommands live in host/commands/cmd_*.c. */
#include "commands/commands.h"
#include "log.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"list", cmd_list, "every instance: status, RAM-holding pid, footprint, ratchet gap"},
    {"footprint", cmd_footprint, "footprint of the process holding the VM's RAM"},
    {"idle", cmd_idle, "idle CPU of the VM process per interval (min/median/max)"},
    {"disk", cmd_disk, "bytes written by the VM process, the guest, and ha.stderr.log"},
    {"wakeups", cmd_wakeups, "who wakes the guest (through vmcost-agent)"},
    {"doctor", cmd_doctor, "idle checks of the guest plus host checks"},
    {"trim", cmd_trim, "trim guest page cache now; host footprint before and after"},
    {"balloon", cmd_balloon, "query or set the balloon target (qemu)"},
    {"env", cmd_env, "DOCKER_HOST and testcontainers exports for an instance"},
    {"memtest", cmd_memtest, "the real RAM cost: load, trim, pressure, stop"},
    {"load", cmd_load, "the published load table: pgbench through the Docker API"},
    {"autostop", cmd_autostop, "a Docker socket that stops the VM when idle, starts it on use"},
    {"selftest", cmd_selftest, "prove every reading on this machine against known workloads"},
    {"report", cmd_report, "one shareable results file of an instance's runs on this machine"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: vmcost [--version] [-v] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nEvery command takes --json. Instances are found in $LIMA_HOME (default "
		   "~/.lima).\nRun 'vmcost COMMAND --help' for its options.\n");
}

int main(int argc, char **argv)
{
	vmc_log_init("vmcost");
	/* A closed pipe (vmcost list | head) or a vanished socket peer is an error we report, not
	 * a reason to die silently. */
	signal(SIGPIPE, SIG_IGN);
	int first = 1;
	while (first < argc && argv[first][0] == '-') {
		const char *opt = argv[first];
		if (strcmp(opt, "--version") == 0) {
			printf("vmcost %s\n", VMCOST_VERSION);
			return VMC_EXIT_OK;
		} else if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
			usage(stdout);
			return VMC_EXIT_OK;
		} else if (strcmp(opt, "-v") == 0 || strcmp(opt, "--verbose") == 0) {
			vmc_log_set_level(vmc_log_level() < VMC_LOG_INFO ? VMC_LOG_INFO
									 : VMC_LOG_DEBUG);
		} else {
			usage(stderr);
			vmc_die(VMC_EXIT_USAGE, "unknown option \"%s\"", opt);
		}
		first++;
	}
	if (first >= argc) {
		usage(stderr);
		return VMC_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[first], commands[i].name) == 0)
			return commands[i].run(argc - first, argv + first);
	vmc_die(VMC_EXIT_USAGE, "unknown command \"%s\": see vmcost --help", argv[first]);
}

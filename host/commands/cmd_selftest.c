/* SPDX-License-Identifier: Apache-2.0 */
/* vmcost selftest [--size SIZE] [--dir DIR]: every reading vmcost reports, proven here. */
#include "commands/cli.h"
#include "commands/commands.h"
#include "log.h"
#include "measure/selftest.h"

#include <stdio.h>

static uint64_t touch_size;
static bool touch_size_given;
static const char *write_dir;
static bool write_dir_given;

static const struct cli_option options[] = {
    {.name = "--size", .kind = CLI_SIZE, .size = &touch_size, .given = &touch_size_given},
    {.name = "--dir", .kind = CLI_TEXT, .text = &write_dir, .given = &write_dir_given},
    {0},
};

static const struct cli_spec spec = {
    .name = "selftest",
    .synopsis = "[--size SIZE] [--dir DIR] [--json]",
    .help =
	"Proves every reading vmcost reports on this machine: a child process does one\n"
	"thing of known size and vmcost reads it back the way its commands read a VM.\n"
	"  footprint         a child touches SIZE, then releases it (macOS: MADV_FREE_REUSABLE)\n"
	"  cpu time          a child spins for 0.5 s of CPU time\n"
	"  disk written      a child writes and fsyncs 16 MiB in DIR\n"
	"  host free memory  a child holds 8 x SIZE (512 MiB by default), then exits\n"
	"  tick clock        macOS: Mach ticks through vmcost's timebase against wall time\n"
	"  vz helper search  macOS: a dry run listing every Virtualization helper it finds\n"
	"Run it first on a new machine; if a line fails, send its output (with --json).\n\n"
	"  --size SIZE  memory the footprint child touches (default 64MiB, 4..1024 MiB)\n"
	"  --dir DIR    a directory on disk for the write check (default $TMPDIR or /var/tmp)\n"
	"  --json       machine-readable output\n\n"
	"Exit status: 0 when nothing failed, 1 when a reading failed.\n"
	"Example: vmcost selftest\n",
    .min_args = 0,
    .max_args = 0,
    .options = options,
};

static void progress(const char *what)
{
	cli_progress("selftest: %s ...", what);
}

int cmd_selftest(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct selftest_env env;
	selftest_env_defaults(&env);
	if (touch_size_given) {
		if (touch_size < (4ull << 20) || touch_size > (1024ull << 20))
			return cli_usage_error(&spec, &o, "--size must be between 4MiB and 1GiB");
		env.touch_bytes = touch_size;
		env.hold_bytes = 8 * touch_size;
	}
	if (write_dir_given)
		env.write_dir = write_dir;
	env.progress = progress;
	struct selftest_report rep;
	selftest_run(&env, &rep);
	cli_progress_done();
	if (o.json) {
		if (cli_print_json(selftest_json(&rep)) != VMC_EXIT_OK)
			return VMC_EXIT_FAILURE;
	} else {
		selftest_print(stdout, &rep, vmc_use_color(stdout));
	}
	return rep.failed ? VMC_EXIT_FAILURE : VMC_EXIT_OK;
}

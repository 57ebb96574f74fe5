/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost env NAME: the shell lines that point Docker clients and testcontainers at an
 * instance's forwarded docker.sock. testcontainers' Ryuk bind-mounts the socket as the daemon
 * sees it (/var/run/docker.sock in the guest), and Lima forwards published ports to 127.0.0.1.
 */
#include "commands/cli.h"
#include "commands/commands.h"
#include "log.h"
#include "message.h"

#include <string.h>
#include <sys/stat.h>

static const struct cli_spec spec = {
    .name = "env",
    .synopsis = "NAME [--json]",
    .help = "Prints the exports that make docker, docker compose and testcontainers use instance\n"
	    "NAME's Docker (its socket forwarded to $LIMA_HOME/NAME/sock/docker.sock), and the\n"
	    "docker context line for a permanent setup. Use it as:  eval \"$(vmcost env dev)\"\n"
	    "The instance does not need to run; a warning says when the socket is missing.\n\n"
	    "  --json  machine-readable output\n\n"
	    "Example: vmcost env dev\n",
    .min_args = 1,
    .max_args = 1,
};

/* Single-quoted for POSIX shells: ' becomes '\''. */
static void print_quoted(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

static void print_export(const char *name, const char *value)
{
	printf("export %s=", name);
	print_quoted(value);
	putchar('\n');
}

int cmd_env(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	char err[1024], sock[4200], host[4300], context[300];
	if ((rc = lima_instance_load(o.args[0], &inst, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	lima_instance_path(&inst, "sock/docker.sock", sock, sizeof sock);
	textf(host, sizeof host, "unix://%s", sock);
	textf(context, sizeof context, "lima-%s", inst.name);
	struct stat st;
	if (stat(sock, &st) < 0 || !S_ISSOCK(st.st_mode))
		fprintf(stderr,
			"vmcost: warning: %s does not exist yet: %s (Docker's portForwards entry "
			"creates it while the instance runs)\n",
			sock,
			inst.status == LIMA_STATUS_RUNNING ? "is Docker running in the guest?"
							   : "start the instance first");
	if (o.json) {
		char create[4600];
		textf(create, sizeof create, "docker context create %s --docker \"host=%s\"",
		      context, host);
		return cli_print_json(
		    json_pack("{s:s,s:{s:s,s:s,s:s},s:s,s:s}", "instance", inst.name, "env",
			      "DOCKER_HOST", host, "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE",
			      "/var/run/docker.sock", "TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1",
			      "docker_context", context, "docker_context_create", create));
	}
	print_export("DOCKER_HOST", host);
	print_export("TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE", "/var/run/docker.sock");
	print_export("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1");
	printf("# or, once, instead of DOCKER_HOST:\n# docker context create %s --docker ",
	       context);
	char arg[4400];
	textf(arg, sizeof arg, "host=%s", host);
	print_quoted(arg);
	printf(" && docker context use %s\n", context);
	return VMC_EXIT_OK;
}

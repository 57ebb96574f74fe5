/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost env NAME: the shell lines that point Docker clients and testcontainers at an
 * instance's forwarded docker.sock, or at vmcost autostop's socket when one serves the instance
 * (so that clients start the VM instead of failing). testcontainers' Ryuk bind-mounts the
 * socket as the daemon sees it (/var/run/docker.sock in the guest), and Lima forwards published
 * ports to 127.0.0.1.
 */
#include "autostop/daemon.h"
#include "autostop/status.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const struct cli_spec spec = {
    .name = "env",
    .synopsis = "NAME [--direct] [--json]",
    .help = "Prints the exports that make docker, docker compose and testcontainers use instance\n"
	    "NAME's Docker (its socket forwarded to $LIMA_HOME/NAME/sock/docker.sock), and the\n"
	    "docker context line for a permanent setup. Use it as:  eval \"$(vmcost env dev)\"\n"
	    "When vmcost autostop serves NAME (it runs, or a service manager holds its socket\n"
	    "sock/docker-autostop.sock), the lines name that socket instead: the first call then\n"
	    "starts a stopped VM. The instance does not need to run; a warning says when the\n"
	    "socket is missing.\n\n"
	    "  --direct  docker.sock itself, even when vmcost autostop serves NAME\n"
	    "  --json    machine-readable output\n\n"
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

/* A connect() that says nothing: true when someone listens on path (no request is sent, so
 * vmcost autostop does not start the VM for it). */
static bool socket_answers(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return ok;
}

/*
 * The socket vmcost autostop serves for inst into buf, "" when none: the running daemon says
 * where it listens; a service manager holding the default socket (socket activation) counts too.
 */
static void autostop_socket(const struct lima_instance *inst, char *buf, size_t size)
{
	buf[0] = '\0';
	json_t *doc;
	char err[512], path[4200];
	if (autostop_status_fetch(inst->dir, &doc, err, sizeof err) == 0) {
		const char *listen = vmc_json_get_str(doc, "listen");
		if (listen)
			vmc_textf(buf, size, "%s", listen);
		json_decref(doc);
		return;
	}
	if (autostop_sock_path(inst->dir, AUTOSTOP_SOCKET_NAME, path, sizeof path) &&
	    socket_answers(path))
		vmc_textf(buf, size, "%s", path);
}

int cmd_env(int argc, char **argv)
{
	bool direct = false;
	const struct cli_option options[] = {
	    {.name = "--direct", .kind = CLI_FLAG, .flag = &direct},
	    {0},
	};
	struct cli_spec env_spec = spec;
	env_spec.options = options;
	struct cli_opts o;
	int rc = cli_parse(&env_spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	char err[1024], sock[4200], host[4300], context[300];
	if ((rc = lima_instance_load(o.args[0], &inst, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	if (!direct)
		autostop_socket(&inst, sock, sizeof sock);
	bool via_autostop = !direct && sock[0];
	if (!via_autostop)
		lima_instance_path(&inst, "sock/docker.sock", sock, sizeof sock);
	vmc_textf(host, sizeof host, "unix://%s", sock);
	vmc_textf(context, sizeof context, "lima-%s%s", inst.name, via_autostop ? "-autostop" : "");
	struct stat st;
	if (!via_autostop && (stat(sock, &st) < 0 || !S_ISSOCK(st.st_mode)))
		fprintf(stderr,
			"vmcost: warning: %s does not exist yet: %s (Docker's portForwards entry "
			"creates it while the instance runs)\n",
			sock,
			inst.status == LIMA_STATUS_RUNNING ? "is Docker running in the guest?"
							   : "start the instance first");
	if (o.json) {
		char create[4600];
		vmc_textf(create, sizeof create, "docker context create %s --docker \"host=%s\"",
			  context, host);
		return cli_print_json(
		    json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:s,s:s}", "instance", inst.name, "via",
			      via_autostop ? "vmcost autostop" : "docker.sock", "env",
			      "DOCKER_HOST", host, "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE",
			      "/var/run/docker.sock", "TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1",
			      "docker_context", context, "docker_context_create", create));
	}
	if (via_autostop)
		printf("# through vmcost autostop: the first call starts %s when it is stopped "
		       "(--direct for docker.sock itself)\n",
		       inst.name);
	print_export("DOCKER_HOST", host);
	print_export("TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE", "/var/run/docker.sock");
	print_export("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1");
	printf("# or, once, instead of DOCKER_HOST:\n# docker context create %s --docker ",
	       context);
	char arg[4400];
	vmc_textf(arg, sizeof arg, "host=%s", host);
	print_quoted(arg);
	printf(" && docker context use %s\n", context);
	return VMC_EXIT_OK;
}

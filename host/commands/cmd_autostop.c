/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost autostop NAME: a Docker socket of its own that starts the instance on the first API
 * call and stops it when Docker has been idle for a whole period — the only way a VM on
 * Virtualization.framework gives its RAM back. The daemon lives in host/autostop/.
 */
#include "autostop/daemon.h"
#include "autostop/status.h"
#include "clients/lima.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "platform/platform.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#define DEFAULT_IDLE_S		(5 * 60.0)
#define DEFAULT_START_TIMEOUT_S (10 * 60.0) /* Lima's own default for limactl start */
#define DEFAULT_STOP_TIMEOUT_S	(5 * 60.0)
/* Deep idle: the engine is frozen after this long idle, unless --idle is not longer. */
#define DEFAULT_FREEZE_AFTER_S 30.0

static const struct cli_spec autostop_spec = {
    .name = "autostop",
    .synopsis = "NAME [--idle DURATION] [--freeze-after DURATION] [--listen PATH]\n"
		"                            [--start-timeout DURATION] [--wake-on-any] [--status] "
		"[--json]",
    .help =
	"Serves a Docker socket for instance NAME that starts the VM on the first API call and\n"
	"stops it once, for a whole idle period, no client was at work and Docker reported no\n"
	"running container. Polls do not count as work: HEAD, and GET of /_ping, /version, /info,\n"
	"/containers/json, /images/json, /volumes, /networks, /system/df; nor does a connection\n"
	"kept open between requests. Any other request, an open stream (logs -f, events,\n"
	"attach) or a running container does. Every connection is relayed byte for byte to\n"
	"NAME's sock/docker.sock (read with an HTTP parser, never changed; attach, exec -it and\n"
	"BuildKit go raw); a client that arrives while the VM is stopped is held while `limactl\n"
	"start NAME` runs, until Docker answers /_ping. If docker.sock refuses, or accepts and\n"
	"then answers nothing (not even /_ping), while Lima says NAME runs, its forward is\n"
	"re-created (ssh -O forward) instead; so is vmcost-agent.sock's when a freeze or thaw\n"
	"gets no answer.\n"
	"While NAME is stopped by autostop, the polls are answered from a snapshot of Docker's\n"
	"answers taken just before the stop (kept in NAME's directory; each answer carries an\n"
	"X-Vmcost-Snapshot header); any other request, or a poll it cannot answer faithfully\n"
	"(a filter, HEAD of anything but /_ping...), starts NAME.\n"
	"It never stops an instance it did not see running and healthy, and never during a start.\n"
	"Runs in the foreground and prints one line per decision; SIGTERM closes the socket and\n"
	"leaves the VM as it is. Point clients at it with:  eval \"$(vmcost env NAME)\"\n\n"
	"  --idle DURATION           idle period before a stop (default 5m; 30s, 1h...)\n"
	"  --freeze-after DURATION   deep idle: freeze the guest's Docker engine after this long\n"
	"                            idle (vmcost-agent's POST /v1/engine/freeze); polls are\n"
	"                            answered from a snapshot meanwhile, and autostop thaws it\n"
	"                            before it relays any other request or stops the VM.\n"
	"                            Shorter than --idle; 0 turns it off (default 30s, off when\n"
	"                            --idle is not longer)\n"
	"  --listen PATH             the socket clients use (default\n"
	"                            $LIMA_HOME/NAME/sock/docker-autostop.sock)\n"
	"  --start-timeout DURATION  how long held clients wait for a start (default 10m)\n"
	"  --wake-on-any             no snapshot: every request starts a stopped NAME (or\n"
	"                            thaws a frozen engine)\n"
	"  --status                  ask the running daemon instead: state, idle time, the engine\n"
	"                            (running, frozen) and its freezes, last start duration, RAM\n"
	"                            the last stop gave back (the other options are ignored)\n"
	"  --json                    decisions (or the status) as JSON\n\n"
	"Socket activation: started by systemd (.socket) or launchd (Sockets: Listener), it\n"
	"takes the socket it is given instead of making one.\n\n"
	"Example: vmcost autostop dev --idle 10m\n",
    .min_args = 1,
    .max_args = 1,
};

struct autostop_opts {
	const char *name;
	const char *listen;
	const char *freeze_after; /* NULL: the default */
	double idle_s, start_timeout_s, freeze_after_s;
	bool status, wake_on_any;
};

/* --freeze-after: a duration, 0 for off; not given: the default, off when --idle is shorter. */
static int parse_freeze_after(const struct cli_spec *spec, const struct cli_opts *co,
			      struct autostop_opts *o)
{
	if (!o->freeze_after) {
		o->freeze_after_s = DEFAULT_FREEZE_AFTER_S < o->idle_s ? DEFAULT_FREEZE_AFTER_S : 0;
		return CLI_CONTINUE;
	}
	if (vmc_parse_duration(o->freeze_after, &o->freeze_after_s) != 0 || o->freeze_after_s < 0)
		return cli_usage_error(spec, co,
				       "--freeze-after needs a duration (\"30s\", \"2m\") or 0 "
				       "for off, not \"%s\"",
				       o->freeze_after);
	if (o->freeze_after_s > 0 && o->freeze_after_s >= o->idle_s)
		return cli_usage_error(
		    spec, co,
		    "--freeze-after (%.0f s) must be shorter than --idle (%.0f s): "
		    "the engine is frozen within the idle period, before the stop",
		    o->freeze_after_s, o->idle_s);
	return CLI_CONTINUE;
}

/* autostop's command line into co and o: CLI_CONTINUE, or the exit code to return. */
static int parse_args(int argc, char **argv, struct cli_opts *co, struct autostop_opts *o)
{
	*o = (struct autostop_opts){.idle_s = DEFAULT_IDLE_S,
				    .start_timeout_s = DEFAULT_START_TIMEOUT_S};
	const struct cli_option options[] = {
	    {.name = "--idle", .kind = CLI_SECONDS, .seconds = &o->idle_s},
	    {.name = "--listen", .kind = CLI_TEXT, .text = &o->listen},
	    {.name = "--start-timeout", .kind = CLI_SECONDS, .seconds = &o->start_timeout_s},
	    {.name = "--freeze-after", .kind = CLI_TEXT, .text = &o->freeze_after},
	    {.name = "--wake-on-any", .kind = CLI_FLAG, .flag = &o->wake_on_any},
	    {.name = "--status", .kind = CLI_FLAG, .flag = &o->status},
	    {0},
	};
	struct cli_spec spec = autostop_spec;
	spec.options = options;
	int rc = cli_parse(&spec, argc, argv, co);
	if (rc == CLI_CONTINUE)
		o->name = co->args[0];
	if (rc == CLI_CONTINUE && !o->status)
		rc = parse_freeze_after(&spec, co, o);
	return rc;
}

static int show_status(const struct cli_opts *co, const struct lima_instance *inst)
{
	json_t *doc;
	char err[1024];
	if (autostop_status_fetch(inst->dir, &doc, err, sizeof err) != 0)
		return cli_fail(co, VMC_EXIT_FAILURE, "%s: %s (start one with: vmcost autostop %s)",
				inst->name, err, inst->name);
	if (co->json)
		return cli_print_json(doc);
	autostop_status_print(doc, stdout);
	json_decref(doc);
	return VMC_EXIT_OK;
}

/*
 * Started by systemd (.socket) or launchd (Sockets: Listener), the listening socket is already
 * made: use it, and name its path in messages.
 */
static int take_activated_socket(const struct cli_opts *co, struct autostop_config *cfg)
{
	cfg->listen_fd = platform_activated_socket("Listener");
	if (cfg->listen_fd < 0) {
		if (errno == EINVAL)
			return cli_fail(
			    co, VMC_EXIT_USAGE,
			    "the service manager passed a socket that is not a listening "
			    "unix stream socket: check the .socket unit or the plist's "
			    "Sockets entry");
		return VMC_EXIT_OK; /* started by hand */
	}
	struct sockaddr_un sa;
	socklen_t len = sizeof sa;
	memset(&sa, 0, sizeof sa);
	if (getsockname(cfg->listen_fd, (struct sockaddr *)&sa, &len) == 0 && sa.sun_path[0])
		vmc_textf(cfg->listen, sizeof cfg->listen, "%.*s", (int)sizeof sa.sun_path,
			  sa.sun_path);
	return VMC_EXIT_OK;
}

static int fill_config(const struct cli_opts *co, const struct autostop_opts *o,
		       const struct lima_instance *inst, struct autostop_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	vmc_textf(cfg->instance, sizeof cfg->instance, "%s", inst->name);
	vmc_textf(cfg->instance_dir, sizeof cfg->instance_dir, "%s", inst->dir);
	if (!autostop_sock_path(inst->dir, "docker.sock", cfg->upstream, sizeof cfg->upstream) ||
	    !autostop_sock_path(inst->dir, AUTOSTOP_STATUS_SOCKET_NAME, cfg->status,
				sizeof cfg->status))
		return cli_fail(co, VMC_EXIT_USAGE, "instance directory %s: path too long",
				inst->dir);
	if (o->listen)
		vmc_textf(cfg->listen, sizeof cfg->listen, "%s", o->listen);
	else
		autostop_sock_path(inst->dir, AUTOSTOP_SOCKET_NAME, cfg->listen,
				   sizeof cfg->listen);
	cfg->idle_s = o->idle_s;
	cfg->start_timeout_s = o->start_timeout_s;
	cfg->stop_timeout_s = DEFAULT_STOP_TIMEOUT_S;
	cfg->freeze_after_s = o->freeze_after_s;
	cfg->wake_on_any = o->wake_on_any;
	cfg->instance_running = inst->status == LIMA_STATUS_RUNNING;
	cfg->json = co->json;
	return take_activated_socket(co, cfg);
}

int cmd_autostop(int argc, char **argv)
{
	struct cli_opts co;
	struct autostop_opts o;
	int rc = parse_args(argc, argv, &co, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	char err[1024];
	if ((rc = lima_instance_load(o.name, &inst, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&co, rc, "%s", err);
	if (o.status)
		return show_status(&co, &inst);
	struct autostop_config *cfg = malloc(sizeof *cfg);
	if (!cfg)
		return cli_fail(&co, VMC_EXIT_FAILURE, "out of memory");
	if ((rc = fill_config(&co, &o, &inst, cfg)) == VMC_EXIT_OK) {
		rc = autostop_daemon_run(cfg, err, sizeof err);
		if (rc != VMC_EXIT_OK)
			rc = cli_fail(&co, rc, "%s", err);
	}
	free(cfg);
	return rc;
}

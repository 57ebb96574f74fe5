/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lima's forwarded host sockets, sock/docker.sock and sock/vmcost-agent.sock: whether each
 * answers end to end, and re-creating a dead one. Lima forwards a guest socket once, with
 * `ssh -O forward` over its SSH ControlMaster, and never again: the forward dies with the
 * master (host sleep on vz, lima-vm/lima#5420) or with a first boot, leaving a socket file
 * that refuses or hangs (docs/autostop.md#forwards-that-heal). Healing is what Lima did at
 * start: remove the stale file (ssh will not bind over it), then ask the master, through the
 * instance's own ssh.config, to forward again; a dead master is started again first.
 * Blocking calls (ssh, libcurl): the daemon runs them on libuv's thread pool.
 */
#ifndef VMC_AUTOSTOP_FORWARD_H
#define VMC_AUTOSTOP_FORWARD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* How long a socket may take to answer before it counts as hung, and ssh to do its part. */
#define FORWARD_PROBE_TIMEOUT_MS 5000
#define FORWARD_SSH_TIMEOUT_MS	 20000
/* An instance's lima.yaml with the templates embedded is about 480 KB. */
#define FORWARD_YAML_MAX (8u << 20)

enum forward_socket { FORWARD_DOCKER, FORWARD_AGENT, FORWARD_COUNT };

struct forward {
	const char *label;   /* "docker.sock" */
	const char *probe;   /* the request that must answer: "/_ping", "/v1/status" */
	char host[PATH_MAX]; /* <dir>/sock/docker.sock */
	const char *guest;   /* /var/run/docker.sock */
};

/* The forward of one of the two sockets of the instance in dir. */
void forward_get(const char *dir, enum forward_socket which, struct forward *f);

enum forward_health {
	FORWARD_ANSWERS, /* its probe got HTTP 200 within the timeout */
	FORWARD_ABSENT,	 /* no socket file, and lima.yaml does not forward it */
	FORWARD_DEAD,	 /* a file that refuses, hangs, is not a socket, or answers an error */
};

/* How the host socket does, and when not FORWARD_ANSWERS why ("... refuses connections (a
 * stale socket file: nobody listens)", "... timed out (the forward accepts but nothing
 * answers)"). */
enum forward_health forward_check(const struct forward *f, long timeout_ms, char *why,
				  size_t whysize);

/* The commands that heal f, for a person to run: "rm -f HOST && ssh -F DIR/ssh.config -O
 * forward -L HOST:GUEST lima-NAME". */
void forward_heal_command(const char *dir, const char *name, const struct forward *f, char *buf,
			  size_t size);

/*
 * Heals f: cancels what is left of the forward, removes the socket file, makes sure the SSH
 * master runs (Lima's ssh.config starts one when none answers), forwards again, and checks that
 * the socket answers. Returns 0, or -1 with a line in err.
 */
int forward_heal(const char *dir, const char *name, const struct forward *f, char *err,
		 size_t errsize);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `vmcost autostop` daemon: one libuv loop owns the listening socket, the status socket,
 * every relayed connection, the idle timer, the limactl children and SIGTERM/SIGINT. Blocking
 * questions to the Docker API (probe.c) run on libuv's thread pool. Decisions come from
 * state.c; this file only carries them out.
 *
 * With nothing connected and nothing to decide, no timer is armed: the loop sleeps in the
 * kernel until a client connects, or once per idle period while the VM runs.
 *
 * Just before a stop it takes a snapshot of the Docker API's answers to polls (snapshot.h) and,
 * once limactl stop succeeded, keeps it in the instance directory: until the VM answers again,
 * polls are answered from it and only other requests start the VM (not with wake_on_any).
 */
#ifndef VMC_AUTOSTOP_DAEMON_H
#define VMC_AUTOSTOP_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define AUTOSTOP_SOCKET_NAME "docker-autostop.sock"
/* limactl's own output goes here, in the instance directory, one run at a time. */
#define AUTOSTOP_LIMACTL_LOG "autostop-limactl.log"

struct autostop_config {
	char instance[256];
	char instance_dir[PATH_MAX];
	char upstream[PATH_MAX]; /* <dir>/sock/docker.sock */
	char listen[PATH_MAX];	 /* where clients connect */
	char status[PATH_MAX];	 /* <dir>/sock/autostop-status.sock, "" for none */
	double idle_s;
	double start_timeout_s;
	double stop_timeout_s;
	double freeze_after_s; /* deep idle: freeze the engine after this long idle; 0: never */
	int listen_fd;	       /* an already listening socket (socket activation), else -1 */
	bool instance_running; /* Lima's status at start-up */
	bool wake_on_any;      /* no snapshot: every request starts a stopped VM */
	bool json;	       /* decision log as JSON Lines */
};

/*
 * Prepares the sockets (refusing a live one, replacing a stale one) and runs until SIGTERM or
 * SIGINT. Returns an exit code, with a one-line message in err when it could not start; the
 * VM is left as it is.
 */
int autostop_daemon_run(const struct autostop_config *cfg, char *err, size_t errsize);

#endif

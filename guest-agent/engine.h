/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Deep idle: freezing and thawing the Docker engine (dockerd, and the containerd it uses) on the
 * cgroup v2 freezer, exactly the cgroups its init system made for it, and only when no
 * container runs and nothing but the engine lives in them. While the engine is frozen a guard
 * process owns the docker.sock path (dockerd's socket set aside), so a client that connects
 * thaws the engine and is relayed to it instead of hanging. What is frozen is recorded under
 * /run, so an agent that was killed thaws the engine when it starts again.
 *
 * Every path goes through the fs root (lib/procfs.h): the suites run on fake trees.
 */
#ifndef VMC_AGENT_ENGINE_H
#define VMC_AGENT_ENGINE_H

#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Where the record of a freeze lives (below the fs root). */
#define ENGINE_STATE_FILE "/run/vmcost-agent/engine.json"
#define ENGINE_LOCK_FILE  "/run/vmcost-agent/engine.lock"
/* dockerd's socket while the guard holds the path, and the guard's socket before it does. */
#define ENGINE_SET_ASIDE_SUFFIX ".vmcost-frozen"
#define ENGINE_GUARD_SUFFIX	".vmcost-guard"

/* One cgroup of the plan, relative to /sys/fs/cgroup ("openrc.docker"). */
struct engine_cgroup {
	char path[128];
};

struct engine_plan {
	struct engine_cgroup cg[AGENT_MAX_ENGINE_CGROUPS];
	size_t n;
};

/* ---- parsers (buffers, no I/O) ------------------------------------------------------------- */

/* The value of "frozen" or "populated" in a cgroup.events buffer: 0, 1, or -1 when absent. */
int engine_events_value(const char *events, const char *key);

/* What a process found in an engine cgroup is to the engine, by its comm (15 characters). */
enum engine_member {
	ENGINE_MEMBER_ENGINE,	  /* dockerd, containerd, docker-proxy, the service supervisor */
	ENGINE_MEMBER_SHIM,	  /* containerd-shim*: a container runs (or is paused) */
	ENGINE_MEMBER_LIMA_AGENT, /* lima-guestagent: only with engine-freeze-lima-agent */
	ENGINE_MEMBER_FOREIGN,	  /* anything else: sshd, a shell, ... */
};
enum engine_member engine_classify(const char *comm);

/*
 * The cgroups to freeze: engine-cgroups from the config, or, for "auto", those the init system
 * made (systemd docker.service, OpenRC openrc.docker; containerd's when dockerd's holds no
 * containerd of its own; lima-guestagent's with engine-freeze-lima-agent). 0, or -1 with err
 * and errno ENOENT when there is none.
 */
int engine_find(const struct agent_config *cfg, struct engine_plan *plan, char *err,
		size_t errsize);

/* ---- the core builders (agent.h conventions: a document, or NULL with err and errno) ------- */

/* GET /v1/engine: state of every engine cgroup, its processes, whether a freeze would work. */
json_t *engine_status(const struct agent_config *cfg, char *err, size_t errsize);
/*
 * POST /v1/engine/freeze. Refuses (NULL, errno EBUSY) while a container runs or the cgroups hold
 * processes that are not the engine's (named in err); ENOTSUP without a cgroup v2 freezer;
 * ENOENT without an engine; ENOTSOCK when the guard is in use (engine_use_guard_process) and
 * docker-socket is no socket it can guard (missing, a symlink): unguarded, its clients would
 * hang; ETIMEDOUT when frozen 1 did not come within engine-freeze-timeout (the engine is thawed
 * again). Already frozen: the status, "action": "already-frozen".
 */
json_t *engine_freeze(const struct agent_config *cfg, char *err, size_t errsize);
/* POST /v1/engine/thaw: thaws, puts dockerd's socket back, lets the guard go. Idempotent. */
json_t *engine_thaw(const struct agent_config *cfg, char *err, size_t errsize);
/* The same with who asked, for the log ("API", "client", "start-up", "shutdown"). */
json_t *engine_thaw_for(const struct agent_config *cfg, const char *origin, char *err,
			size_t errsize);

/* Daemon start and stop: a freeze left behind (the agent killed) is undone. Logs what it did. */
void engine_recover(const struct agent_config *cfg, const char *origin);
/* True when a freeze is recorded. */
bool engine_recorded_frozen(void);

void engine_print(FILE *f, const json_t *doc);

/* ---- the docker.sock guard (engine_guard.c) ------------------------------------------------- */

/*
 * Puts a listening socket of ours at the docker socket path, with the same owner and mode, and
 * dockerd's socket under ENGINE_SET_ASIDE_SUFFIX: link, then rename over, so the path never
 * disappears. Returns the listening fd, -2 when there is no socket at the path (nothing to
 * guard), -1 with err.
 */
int engine_guard_install(const char *docker_socket, char *err, size_t errsize);
/* Puts dockerd's socket back at the path (rename over ours). 0 also when nothing was aside. */
int engine_guard_restore(const char *docker_socket);

/*
 * The guard itself: sleeps until a client connects to listen_fd or wake_fd is readable (a thaw
 * elsewhere). A client thaws the engine first. Then it accepts every connection still queued,
 * closes the listener and relays each to the docker socket until both sides are done.
 */
int engine_guard_run(const struct agent_config *cfg, int listen_fd, int wake_fd);

/* How a guard is started and told to finish; the suites run it as a thread instead. */
struct engine_guard_hooks {
	/* Starts the guard on listen_fd (the callee owns it from then on); its pid, or -1. */
	pid_t (*spawn)(const struct agent_config *cfg, int listen_fd, char *err, size_t errsize);
	/* The engine was thawed by someone else: the guard relays what it accepted and exits. */
	void (*stop)(pid_t pid);
};
void engine_set_guard_hooks(const struct engine_guard_hooks *hooks);
/* The real hooks: `vmcost-agent engine guard` as a process, SIGTERM to stop it. Until this is
 * called a freeze leaves docker.sock alone (no guard). */
void engine_use_guard_process(void);

/* A /proc/PID/cmdline (blanks between the arguments) of a guard: "ANY engine guard ...". */
bool engine_is_guard_cmdline(const char *cmdline);

/* `vmcost-agent engine guard` (spawned by a freeze): the guard on fd 3. */
int engine_guard_main(const struct agent_config *cfg);

#endif

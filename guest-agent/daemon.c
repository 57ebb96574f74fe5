/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vmcost-agent run`: the trim policy timer and the API server in one process. The main thread
 * sleeps in sigtimedwait() until the next trim decision or a signal, with generous timer slack,
 * so an idle guest sees this process wake up once per interval and never in between. The
 * server's threads sleep in poll() without a timeout until a client connects.
 */
#include "agent.h"
#include "clock.h"
#include "config.h"
#include "engine.h"
#include "log.h"
#include "server.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

const struct server_ops server_core_ops = {
    .status = agent_status,
    .checks = agent_checks,
    .wakeups = agent_wakeups,
    .trim = agent_trim,
    .balloon = agent_balloon,
    .balloon_set_order = agent_balloon_set_order,
    .engine_status = engine_status,
    .engine_freeze = engine_freeze,
    .engine_thaw = engine_thaw,
};

/* A request still running at SIGTERM (a long wakeups) gets this long before we exit anyway. */
#define SHUTDOWN_GRACE_S 2.0
/* Timer slack: a tenth of the interval, at most a minute; the kernel may batch our one wakeup
 * with others instead of waking an idle CPU just for us. */
#define SLACK_FRACTION 0.1
#define SLACK_MAX_S    60.0

static void set_timer_slack(double interval_s)
{
	double slack = interval_s * SLACK_FRACTION;
	if (slack > SLACK_MAX_S)
		slack = SLACK_MAX_S;
	/* PR_SET_TIMERSLACK takes an unsigned long: cap for 32-bit guests. */
	double ns = slack * 1e9;
	if (ns > 4.0e9 && sizeof(unsigned long) < 8)
		ns = 4.0e9;
	if (prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0) < 0)
		vmc_warn("cannot set timer slack:");
}

static void timed_trim(struct agent_state *st, const struct agent_config *cfg)
{
	char err[256] = "";
	json_t *doc = agent_trim(st, cfg, false, false, err, sizeof err);
	if (!doc) {
		vmc_warn("trim failed: %s", err[0] ? err : "unknown error");
		return;
	}
	server_log_trim(doc, "timer");
	json_decref(doc);
}

/*
 * Sleeps until the next trim decision is due or a signal arrives. Returns the signal, or 0 when
 * the deadline passed.
 */
static int wait_until(const sigset_t *signals, double deadline, bool forever)
{
	for (;;) {
		int sig;
		if (forever) {
			sig = sigwaitinfo(signals, NULL);
		} else {
			double left = deadline - vmc_monotonic_s();
			if (left <= 0)
				return 0;
			struct timespec ts = vmc_timespec_s(left);
			sig = sigtimedwait(signals, NULL, &ts);
			if (sig < 0 && errno == EAGAIN)
				return 0;
		}
		if (sig > 0)
			return sig;
		if (errno != EINTR)
			return -1;
	}
}

static void block_signals(sigset_t *signals)
{
	sigemptyset(signals);
	sigaddset(signals, SIGTERM);
	sigaddset(signals, SIGINT);
	sigaddset(signals, SIGHUP);
	/* Before any thread exists, so every server thread inherits the mask and the signals
	 * reach this thread's sigtimedwait(). */
	pthread_sigmask(SIG_BLOCK, signals, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The docker.sock guard a freeze starts is our child: reaped by the kernel when it ends. */
	signal(SIGCHLD, SIG_IGN);
}

static int policy_loop(struct agent_state *st, const struct agent_config *cfg,
		       const sigset_t *signals)
{
	double next = vmc_monotonic_s() + cfg->interval_s;
	for (;;) {
		int sig = wait_until(signals, next, !cfg->trim_enabled);
		if (sig < 0) {
			vmc_warn("waiting for the next trim failed:");
			return VMC_EXIT_FAILURE;
		}
		if (sig == SIGTERM || sig == SIGINT) {
			vmc_info("%s: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
			return VMC_EXIT_OK;
		}
		if (sig == SIGHUP) {
			vmc_info(
			    "SIGHUP: the configuration is read at start; restart the service to "
			    "apply changes (rc-service cache-trim restart)");
			continue;
		}
		timed_trim(st, cfg);
		/* Never more often than the interval, however long the trim itself took. */
		next = vmc_monotonic_s() + cfg->interval_s;
	}
}

int agent_run(const struct agent_config *cfg)
{
	vmc_log_set_level((enum vmc_level)cfg->log_level);
#ifdef M_ARENA_MAX
	/* One malloc arena: per-thread arenas would cost RSS for a handful of small requests. */
	mallopt(M_ARENA_MAX, 1);
#endif
	sigset_t signals;
	block_signals(&signals);

	struct agent_state *st = agent_state_new();
	if (!st) {
		vmc_warn("out of memory");
		return VMC_EXIT_FAILURE;
	}
	/* A freeze recorded by an agent that was killed: nobody would thaw the engine. */
	engine_use_guard_process();
	engine_recover(cfg, "left by an agent that stopped: start-up");
	struct server_ctx ctx = {&server_core_ops, st, cfg};
	char err[512];
	/* Start-up problems (no socket, a missing group) go to stderr, where whoever started us
	 * looks (the service's error_logger hands it to syslog). */
	struct agent_server *srv = server_open(&ctx, err, sizeof err);
	if (!srv) {
		agent_state_free(st);
		vmc_die(VMC_EXIT_FAILURE, "%s", err);
	}
	/* Once serving: syslog (logread), never a file on the guest's disk; a terminal keeps its
	 * messages for interactive runs. Switched before the server's threads exist, since they
	 * log too and the switch is not synchronised with them. */
	vmc_log_use_syslog(!isatty(STDERR_FILENO));
	if (server_serve(srv, err, sizeof err) < 0) {
		vmc_log_use_syslog(false); /* no server thread is left */
		agent_state_free(st);
		vmc_die(VMC_EXIT_FAILURE, "%s", err);
	}
	set_timer_slack(cfg->interval_s);
	if (cfg->trim_enabled)
		vmc_info("serving %s; trim decision every %.0f s", cfg->socket_path,
			 cfg->interval_s);
	else
		vmc_info("serving %s; timed trims off (trim: false)", cfg->socket_path);

	int rc = policy_loop(st, cfg, &signals);
	/* The slack was for the idle timer; the shutdown's short waits would stretch up to it
	 * (a minute with interval: 1h). 0 restores the default. */
	prctl(PR_SET_TIMERSLACK, 0UL, 0, 0, 0);
	/* Before the engine's own service is stopped: a frozen dockerd ignores SIGTERM. */
	engine_recover(cfg, "shutdown");
	int running = server_stop(srv, SHUTDOWN_GRACE_S);
	if (running > 0) {
		/* Their threads still use st: leave it to the exit. */
		vmc_info("exiting with %d API request(s) still running", running);
		return rc;
	}
	agent_state_free(st);
	return rc;
}

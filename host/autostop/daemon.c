/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/daemon.h"

#include "autostop/forward.h"
#include "autostop/probe.h"
#include "autostop/relay.h"
#include "autostop/snapshot.h"
#include "autostop/sockfile.h"
#include "autostop/state.h"
#include "autostop/status.h"
#include "clients/http.h"
#include "clients/lima.h"
#include "clients/process.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "platform/platform.h"
#include "units.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

/* How often a start asks /_ping: the first answer reaches held clients at most this late. */
#define PING_INTERVAL_MS 250
/* Of libuv's 4 pool threads: one stays free for a check. */
#define PINGS_AT_ONCE 3
/* The tail of limactl's log read for the decision line. */
#define LIMACTL_TAIL 4096
/*
 * A unix socket whose accept backlog is full answers EAGAIN: docker.sock is there and busy,
 * not gone. Such clients are retried every BUSY_RETRY_MS, for at most BUSY_RETRIES times.
 */
#define BUSY_RETRY_MS 50
/* The agent waits up to engine-freeze-timeout (default 5 s) for the cgroups to freeze. */
#define FREEZE_TIMEOUT_MS 30000
/* A thaw is a few writes in the guest: held clients wait at most this long for its answer. */
#define THAW_TIMEOUT_MS 10000
#define BUSY_RETRIES	200
/* The snapshot before a stop: all its requests together (the stop waits for it). */
#define SNAPSHOT_BUDGET_MS 30000L

struct child {
	uv_process_t proc;
	bool running;
	double began;
	const char *verb; /* "start" | "stop" */
};

struct daemon {
	uv_loop_t loop;
	const struct autostop_config *cfg;
	struct autostop st;
	uv_pipe_t listener;
	bool listener_open;
	bool unlink_listen; /* we made this file */
	struct autostop_status_server status;
	uv_timer_t idle_timer, ping_timer, start_deadline, stop_deadline, settle_timer, busy_timer;
	uv_timer_t silence_timer; /* armed only while a relayed client waits for docker.sock */
	uint64_t answered_at;	  /* uv_now when the last probe docker.sock answered was sent */
	uv_signal_t sigterm, sigint;
	struct relay *relays;
	struct child start, stop;
	bool check_in_flight, check_again;
	unsigned pings_in_flight;
	bool shutting_down;
	int exit_code;
	/* polls are answered from snap while stopped, or while frozen (snap_frozen: taken before
	 * the freeze, never stored); snap_new is taken before a stop */
	struct snapshot *snap, *snap_new;
	bool snap_frozen;
	char versions[SNAPSHOT_VERSIONS_MAX][16]; /* API versions clients used, latest first */
	size_t nversions;
	char miss_why[300]; /* why the snapshot did not answer the last request offered */
};

enum job_kind {
	JOB_PING,
	JOB_CHECK,
	JOB_HEAL,
	JOB_FREEZE,
	JOB_THAW,
	JOB_SNAPSHOT,	     /* before a stop */
	JOB_FREEZE_SNAPSHOT, /* before a freeze */
	JOB_HANG
};

struct probe_job {
	uv_work_t req;
	struct daemon *d;
	enum job_kind kind;
	bool ping_ok;
	struct autostop_check check;
	enum autostop_heal heal;
	char heal_why[600];
	enum autostop_freeze_result freeze;
	bool thaw_ok;
	uint64_t queued; /* uv_now when the job was queued */
	int agent_heal;	 /* vmcost-agent.sock's forward: 1 re-created, -1 could not be, 0 left */
	char agent_heal_why[800];
	struct snapshot *snap;
	char versions[SNAPSHOT_VERSIONS_MAX][16];
	size_t nversions;
	char sock[PATH_MAX];
	char instance[256];
	char instance_dir[PATH_MAX];
};

static const char *job_name(enum job_kind k)
{
	return k == JOB_PING		  ? "ping"
	       : k == JOB_HANG		  ? "ping on a new connection"
	       : k == JOB_CHECK		  ? "check"
	       : k == JOB_HEAL		  ? "heal of docker.sock"
	       : k == JOB_SNAPSHOT	  ? "snapshot"
	       : k == JOB_FREEZE_SNAPSHOT ? "snapshot before the freeze"
	       : k == JOB_FREEZE	  ? "engine freeze"
					  : "engine thaw";
}

/* One POST path through the agent's socket f: the HTTP status (0: no answer), and when not 200
 * why in job->heal_why (the agent's error message, or what failed). */
static long agent_post_once(struct probe_job *job, const struct forward *f, const char *path,
			    long timeout_ms)
{
	struct http_request req = {
	    .socket_path = f->host, .method = "POST", .path = path, .timeout_ms = timeout_ms};
	struct http_response resp;
	long status = http_do(&req, &resp) == 0 ? resp.status : 0;
	if (status != 200) {
		json_t *j = resp.body ? json_loads(resp.body, 0, NULL) : NULL;
		const char *msg = j ? vmc_json_get_str(j, "error") : NULL;
		if (msg)
			vmc_textf(job->heal_why, sizeof job->heal_why, "%s", msg);
		else if (status)
			vmc_textf(job->heal_why, sizeof job->heal_why, "HTTP %ld", status);
		else
			vmc_textf(job->heal_why, sizeof job->heal_why, "%s: %s", f->host,
				  resp.error);
		json_decref(j);
	}
	http_response_free(&resp);
	return status;
}

/*
 * A request to the agent got no answer at all: is its forward dead (refuses, hangs, a stale
 * file)? Then it is re-created as docker.sock's is (forward.h). True when it was, and the
 * request is worth sending once more; a socket that answers its GET /v1/status, or that Lima
 * does not forward (no agent in this guest), is left alone.
 */
static bool heal_agent_forward(struct probe_job *job, const struct forward *f)
{
	char why[512], err[512];
	if (forward_check(f, PROBE_PING_TIMEOUT_MS, why, sizeof why) != FORWARD_DEAD)
		return false;
	double t0 = (double)uv_hrtime() / 1e9;
	if (forward_heal(job->instance_dir, job->instance, f, err, sizeof err) < 0) {
		job->agent_heal = -1;
		vmc_textf(job->agent_heal_why, sizeof job->agent_heal_why,
			  "its forward is dead (%s) and re-creating it failed: %s", why, err);
		return false;
	}
	job->agent_heal = 1;
	vmc_textf(
	    job->agent_heal_why, sizeof job->agent_heal_why,
	    "%s; removed the socket file and forwarded it again with ssh -O forward in %.1f s", why,
	    (double)uv_hrtime() / 1e9 - t0);
	return true;
}

/*
 * POST path to the agent; a dead forward of vmcost-agent.sock is healed and the request sent
 * once more (a freeze or a thaw asked twice is done once: the agent answers 200 to both).
 * Returns the HTTP status (0: no answer); why in job->heal_why.
 */
static long agent_post(struct probe_job *job, const char *path, long timeout_ms)
{
	struct forward f;
	forward_get(job->instance_dir, FORWARD_AGENT, &f);
	long status = agent_post_once(job, &f, path, timeout_ms);
	if (status == 0 && heal_agent_forward(job, &f))
		status = agent_post_once(job, &f, path, timeout_ms);
	if (status == 0 && job->agent_heal < 0) {
		char first[sizeof job->heal_why];
		vmc_textf(first, sizeof first, "%s", job->heal_why);
		vmc_textf(job->heal_why, sizeof job->heal_why, "%s; %s", first,
			  job->agent_heal_why);
	}
	return status;
}

/* 409 and the like are a refusal for this idle period; 503 is a busy agent, asked again. */
static void freeze_work(struct probe_job *job)
{
	long status = agent_post(job, "/v1/engine/freeze", FREEZE_TIMEOUT_MS);
	job->freeze = status == 200   ? AUTOSTOP_FREEZE_OK
		      : status == 503 ? AUTOSTOP_FREEZE_BUSY
		      : status != 0   ? AUTOSTOP_FREEZE_REFUSED
				      : AUTOSTOP_FREEZE_FAILED;
}

static void thaw_work(struct probe_job *job)
{
	job->thaw_ok = agent_post(job, "/v1/engine/thaw", THAW_TIMEOUT_MS) == 200;
}

/* Lima first: a VM that is not running has no forward to heal. */
static void heal_work(struct probe_job *job)
{
	struct lima_instance inst;
	char err[512];
	if (lima_instance_load(job->instance, &inst, err, sizeof err) == VMC_EXIT_OK &&
	    inst.status != LIMA_STATUS_RUNNING) {
		job->heal = AUTOSTOP_NOT_RUNNING;
		return;
	}
	struct forward f;
	forward_get(job->instance_dir, FORWARD_DOCKER, &f);
	/* Short: a refused one says so at once, a hung one is what is being asked about. */
	char why[512];
	if (forward_check(&f, PROBE_PING_TIMEOUT_MS, why, sizeof why) == FORWARD_ANSWERS) {
		job->heal = AUTOSTOP_HEALED;
		vmc_textf(job->heal_why, sizeof job->heal_why, "it answered again by itself");
		return;
	}
	double t0 = (double)uv_hrtime() / 1e9;
	if (forward_heal(job->instance_dir, job->instance, &f, err, sizeof err) == 0) {
		job->heal = AUTOSTOP_HEALED;
		vmc_textf(
		    job->heal_why, sizeof job->heal_why,
		    "its forward was dead: removed the socket file and forwarded it again with "
		    "ssh -O forward in %.1f s",
		    (double)uv_hrtime() / 1e9 - t0);
	} else {
		job->heal = AUTOSTOP_HEAL_FAILED;
		vmc_textf(job->heal_why, sizeof job->heal_why, "%s", err);
	}
}

static void snapshot_work(struct probe_job *job)
{
	const char *versions[SNAPSHOT_VERSIONS_MAX];
	for (size_t i = 0; i < job->nversions; i++)
		versions[i] = job->versions[i];
	job->snap = snapshot_take(job->sock, job->instance, versions, job->nversions,
				  SNAPSHOT_BUDGET_MS, job->heal_why, sizeof job->heal_why);
}

static const struct relay_hooks hooks;
static void apply(struct daemon *d, struct autostop_actions act);
static void stop_now(struct daemon *d);
static void queue_probe(struct daemon *d, enum job_kind kind);
static void silence_scan(struct daemon *d);

static double now_s(void)
{
	return (double)uv_hrtime() / 1e9;
}

/* ---- the decision log ------------------------------------------------------------------- */

static void log_line(struct daemon *d, const char *kind, const char *message)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", &tm);
	if (d->cfg->json) {
		json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s}", "time", stamp, "instance",
				      d->cfg->instance, "event", kind, "state",
				      autostop_state_name(d->st.state), "message", message);
		char *s = j ? vmc_json_compact(j) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
	} else {
		printf("%s %s\n", stamp, message);
	}
	fflush(stdout);
}

static unsigned count_held(const struct daemon *d)
{
	unsigned n = 0;
	for (const struct relay *r = d->relays; r; r = relay_next(r))
		n += relay_phase(r) == RELAY_HELD;
	return n;
}

/* ---- checks and pings on the thread pool ------------------------------------------------ */

static void probe_work(uv_work_t *req)
{
	struct probe_job *job = req->data;
	if (job->kind == JOB_PING)
		job->ping_ok = probe_ping(job->sock, PROBE_PING_TIMEOUT_MS);
	else if (job->kind == JOB_HANG)
		job->ping_ok = probe_ping_why(job->sock, PROBE_PING_TIMEOUT_MS, job->heal_why,
					      sizeof job->heal_why);
	else if (job->kind == JOB_CHECK)
		probe_check(job->sock, job->instance, PROBE_CHECK_TIMEOUT_MS, &job->check);
	else if (job->kind == JOB_FREEZE)
		freeze_work(job);
	else if (job->kind == JOB_THAW)
		thaw_work(job);
	else if (job->kind == JOB_SNAPSHOT || job->kind == JOB_FREEZE_SNAPSHOT)
		snapshot_work(job);
	else
		heal_work(job);
}

static void queue_check(struct daemon *d);

/* ---- the snapshot -------------------------------------------------------------------------- */

/* An API version a client used ("1.41"), latest first, for the next snapshot. */
static void note_version(struct daemon *d, const char *v)
{
	if (!v || !*v || strlen(v) >= sizeof d->versions[0])
		return;
	size_t i = 0;
	while (i < d->nversions && strcmp(d->versions[i], v) != 0)
		i++;
	if (i == d->nversions && d->nversions < SNAPSHOT_VERSIONS_MAX)
		d->nversions++;
	if (i == SNAPSHOT_VERSIONS_MAX)
		i = SNAPSHOT_VERSIONS_MAX - 1;
	memmove(d->versions[1], d->versions[0], i * sizeof d->versions[0]);
	vmc_textf(d->versions[0], sizeof d->versions[0], "%s", v);
}

/* The VM answers again: what the snapshot says is no longer so. */
static void forget_snapshot(struct daemon *d)
{
	if (!d->snap)
		return;
	snapshot_free(d->snap);
	d->snap = NULL;
	if (!d->snap_frozen)
		snapshot_remove(d->cfg->instance_dir);
	d->snap_frozen = false;
	autostop_snapshot_set(&d->st, NULL);
}

/* The snapshot before the freeze (NULL: none could be taken), served while the engine is
 * frozen; then the freeze itself. */
static void freeze_snapshot_taken(struct daemon *d, struct snapshot *s, const char *why)
{
	if (d->st.engine != AUTOSTOP_ENGINE_FREEZING) {
		snapshot_free(s); /* the VM went away meanwhile: no freeze either */
		return;
	}
	if (s) {
		forget_snapshot(d);
		d->snap = s;
		d->snap_frozen = true;
		autostop_snapshot_set(&d->st, snapshot_taken(s));
	} else {
		char msg[800];
		vmc_textf(msg, sizeof msg,
			  "no snapshot of %s's Docker API before the freeze (%s): while it is "
			  "frozen, every client thaws it",
			  d->cfg->instance, why);
		log_line(d, "snapshot", msg);
	}
	queue_probe(d, JOB_FREEZE);
}

/* limactl stop succeeded: the snapshot taken before it holds until the VM answers again. */
static void keep_snapshot(struct daemon *d)
{
	struct snapshot *s = d->snap_new;
	d->snap_new = NULL;
	if (!s)
		return;
	char err[600];
	if (snapshot_store(s, d->cfg->instance_dir, err, sizeof err) < 0)
		vmc_warn("the snapshot is kept in memory only: %s", err);
	snapshot_free(d->snap);
	d->snap = s;
	autostop_snapshot_set(&d->st, snapshot_taken(s));
}

static void probe_done(uv_work_t *req, int status)
{
	struct probe_job *job = req->data;
	struct daemon *d = job->d;
	if (job->kind == JOB_FREEZE_SNAPSHOT) {
		if (d->shutting_down)
			snapshot_free(job->snap);
		else
			freeze_snapshot_taken(d, job->snap,
					      status == 0 ? job->heal_why : uv_strerror(status));
	} else if (job->kind == JOB_SNAPSHOT) {
		if (d->shutting_down) {
			snapshot_free(job->snap);
		} else {
			if (!job->snap) {
				char msg[800];
				vmc_textf(msg, sizeof msg,
					  "no snapshot of %s's Docker API (%s): while it is "
					  "stopped, every request starts it",
					  d->cfg->instance,
					  status == 0 ? job->heal_why : uv_strerror(status));
				log_line(d, "snapshot", msg);
			}
			snapshot_free(d->snap_new);
			d->snap_new = job->snap;
			stop_now(d);
		}
	} else if (job->kind == JOB_HANG) {
		if (!d->shutting_down) {
			bool ok = status == 0 && job->ping_ok;
			if (ok && job->queued > d->answered_at)
				d->answered_at = job->queued;
			apply(d, autostop_hang_probed(&d->st, now_s(), ok,
						      status == 0 ? job->heal_why
								  : uv_strerror(status)));
			silence_scan(d);
		}
	} else if (job->kind == JOB_FREEZE) {
		if (!d->shutting_down && job->agent_heal > 0)
			apply(d, autostop_agent_healed(&d->st, now_s(), "engine freeze",
						       job->agent_heal_why));
		if (!d->shutting_down)
			apply(d, autostop_freeze_done(&d->st, now_s(),
						      status == 0 ? job->freeze
								  : AUTOSTOP_FREEZE_FAILED,
						      job->heal_why));
	} else if (job->kind == JOB_THAW) {
		if (!d->shutting_down && job->agent_heal > 0)
			apply(d, autostop_agent_healed(&d->st, now_s(), "engine thaw",
						       job->agent_heal_why));
		if (!d->shutting_down)
			apply(d, autostop_thaw_done(&d->st, now_s(), status == 0 && job->thaw_ok,
						    job->heal_why, count_held(d)));
	} else if (job->kind == JOB_HEAL) {
		if (!d->shutting_down)
			apply(d, autostop_heal_done(&d->st, now_s(),
						    status == 0 ? job->heal : AUTOSTOP_HEAL_FAILED,
						    job->heal_why, count_held(d)));
	} else if (job->kind == JOB_PING) {
		d->pings_in_flight--;
		if (status == 0 && job->ping_ok && !d->shutting_down) {
			forget_snapshot(d);
			apply(d, autostop_ping_answered(&d->st, now_s(), count_held(d)));
		}
	} else {
		d->check_in_flight = false;
		if (status == 0 && !d->shutting_down) {
			if (job->check.api_ok) {
				forget_snapshot(d);
				if (job->queued > d->answered_at)
					d->answered_at = job->queued;
			}
			apply(d, autostop_check_done(&d->st, now_s(), &job->check));
			if (d->check_again) {
				d->check_again = false;
				if (d->st.clients == 0)
					queue_check(d);
			}
		}
	}
	free(job);
}

/* A job that could not be queued still gets its answer: nothing may wait for it forever. */
static void job_not_queued(struct daemon *d, enum job_kind kind, const char *why)
{
	if (kind == JOB_HEAL)
		apply(d, autostop_heal_done(&d->st, now_s(), AUTOSTOP_HEAL_FAILED, why,
					    count_held(d)));
	else if (kind == JOB_FREEZE)
		apply(d, autostop_freeze_done(&d->st, now_s(), AUTOSTOP_FREEZE_FAILED, why));
	else if (kind == JOB_THAW)
		apply(d, autostop_thaw_done(&d->st, now_s(), false, why, count_held(d)));
	else if (kind == JOB_SNAPSHOT)
		stop_now(d); /* no snapshot: the stop goes on without one */
	else if (kind == JOB_FREEZE_SNAPSHOT)
		freeze_snapshot_taken(d, NULL, why);
	else if (kind == JOB_HANG)
		apply(d, autostop_hang_probed(&d->st, now_s(), true, why)); /* nothing learned */
}

static void queue_probe(struct daemon *d, enum job_kind kind)
{
	struct probe_job *job = calloc(1, sizeof *job);
	if (!job) {
		vmc_warn("out of memory: skipping a Docker API %s", job_name(kind));
		job_not_queued(d, kind, "out of memory");
		return;
	}
	job->req.data = job;
	job->d = d;
	job->kind = kind;
	job->queued = uv_now(&d->loop);
	memcpy(job->versions, d->versions, sizeof job->versions);
	job->nversions = d->nversions;
	vmc_textf(job->sock, sizeof job->sock, "%s", d->cfg->upstream);
	vmc_textf(job->instance, sizeof job->instance, "%s", d->cfg->instance);
	vmc_textf(job->instance_dir, sizeof job->instance_dir, "%s", d->cfg->instance_dir);
	int rc = uv_queue_work(&d->loop, &job->req, probe_work, probe_done);
	if (rc < 0) {
		vmc_warn("cannot queue a Docker API %s: %s", job_name(kind), uv_strerror(rc));
		free(job);
		job_not_queued(d, kind, uv_strerror(rc));
		return;
	}
	if (kind == JOB_PING)
		d->pings_in_flight++;
	else if (kind == JOB_CHECK)
		d->check_in_flight = true;
}

static void queue_check(struct daemon *d)
{
	if (d->check_in_flight) {
		d->check_again = true;
		return;
	}
	queue_probe(d, JOB_CHECK);
}

static void on_ping_timer(uv_timer_t *t)
{
	struct daemon *d = t->data;
	/* A ping sent while dockerd was still starting can wait out its whole timeout (a
	 * socket-activated docker.socket accepts at once): the next ones do not wait for it. */
	if (d->pings_in_flight < PINGS_AT_ONCE)
		queue_probe(d, JOB_PING);
}

/* ---- limactl start / stop ---------------------------------------------------------------- */

static void limactl_log_path(const struct daemon *d, char *buf, size_t size)
{
	vmc_textf(buf, size, "%s/%s", d->cfg->instance_dir, AUTOSTOP_LIMACTL_LOG);
}

/* The last line limactl wrote ("level=fatal msg=..."), for the decision log. */
static void limactl_last_output(const struct daemon *d, char *buf, size_t size)
{
	char path[PATH_MAX + 64], tail[LIMACTL_TAIL + 1];
	buf[0] = '\0';
	limactl_log_path(d, path, sizeof path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > LIMACTL_TAIL ? end - LIMACTL_TAIL : 0;
	ssize_t n = pread(fd, tail, LIMACTL_TAIL, from);
	close(fd);
	if (n <= 0)
		return;
	tail[n] = '\0';
	process_last_line(tail, buf, size);
}

static void on_child_closed(uv_handle_t *h)
{
	(void)h;
}

static void on_child_exit(uv_process_t *proc, int64_t exit_status, int term_signal)
{
	struct child *c = proc->data;
	c->running = false;
	uv_close((uv_handle_t *)proc, on_child_closed);
	int code = term_signal ? 128 + term_signal : (int)exit_status;
	struct daemon *owner = proc->loop->data;
	if (owner->shutting_down)
		return;
	char last[300];
	limactl_last_output(owner, last, sizeof last);
	double took = now_s() - c->began;
	if (c == &owner->start) {
		apply(owner,
		      autostop_start_exited(&owner->st, now_s(), code, last, count_held(owner)));
	} else {
		uv_timer_stop(&owner->stop_deadline);
		if (code == 0) {
			keep_snapshot(owner);
		} else {
			snapshot_free(owner->snap_new);
			owner->snap_new = NULL;
		}
		apply(owner, autostop_stop_exited(&owner->st, now_s(), code, last, took));
	}
}

/*
 * limactl runs detached (its own session) with its output in the instance directory: a
 * SIGTERM to the daemon or a Ctrl-C on its terminal must not kill a start or stop half-way,
 * and a Go program whose stderr pipe closes would die of SIGPIPE.
 */
static int spawn_limactl(struct daemon *d, struct child *c, const char *verb)
{
	char log_path[PATH_MAX + 64];
	limactl_log_path(d, log_path, sizeof log_path);
	int log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log_fd < 0)
		log_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	/* limactl start waits 10 min by default; a start is given as long as held clients wait,
	 * so that limactl does not give up on a slow boot that autostop still waits for. */
	char timeout[32];
	vmc_textf(timeout, sizeof timeout, "--timeout=%.0fs", d->cfg->start_timeout_s);
	char *start_args[] = {"limactl", "start", "--tty=false", timeout, (char *)d->cfg->instance,
			      NULL};
	char *stop_args[] = {"limactl", "stop", "--tty=false", (char *)d->cfg->instance, NULL};
	char **args = strcmp(verb, "start") == 0 ? start_args : stop_args;
	uv_stdio_container_t stdio[3] = {
	    {.flags = UV_IGNORE},
	    {.flags = UV_INHERIT_FD, .data.fd = log_fd},
	    {.flags = UV_INHERIT_FD, .data.fd = log_fd},
	};
	uv_process_options_t opts = {
	    .exit_cb = on_child_exit,
	    .file = "limactl",
	    .args = args,
	    .flags = UV_PROCESS_DETACHED,
	    .stdio_count = 3,
	    .stdio = stdio,
	};
	c->proc.data = c;
	c->verb = verb;
	c->began = now_s();
	int rc = uv_spawn(&d->loop, &c->proc, &opts);
	if (log_fd >= 0)
		close(log_fd);
	if (rc < 0) {
		uv_close((uv_handle_t *)&c->proc, on_child_closed);
		return rc;
	}
	c->running = true;
	return 0;
}

static void on_start_deadline(uv_timer_t *t)
{
	struct daemon *d = t->data;
	if (d->start.running)
		uv_process_kill(&d->start.proc, SIGTERM);
	apply(d, autostop_start_timed_out(&d->st, now_s(), d->cfg->start_timeout_s, count_held(d)));
}

static void on_stop_deadline(uv_timer_t *t)
{
	struct daemon *d = t->data;
	if (d->stop.running) {
		vmc_warn("limactl stop %s still runs after %.0f s: terminating it",
			 d->cfg->instance, d->cfg->stop_timeout_s);
		uv_process_kill(&d->stop.proc, SIGTERM);
	}
}

static void why_spawn_failed(int rc, char *buf, size_t size)
{
	if (rc == UV_ENOENT)
		vmc_textf(buf, size,
			  "limactl is not on PATH (install Lima, or put limactl on PATH)");
	else
		vmc_textf(buf, size, "cannot run limactl: %s", uv_strerror(rc));
}

static void begin_start(struct daemon *d)
{
	if (d->start.running) {
		/* A timed-out start is still being terminated: ping and wait for it. */
		uv_timer_start(&d->ping_timer, on_ping_timer, 0, PING_INTERVAL_MS);
		return;
	}
	int rc = spawn_limactl(d, &d->start, "start");
	if (rc < 0) {
		char why[200];
		why_spawn_failed(rc, why, sizeof why);
		apply(d, autostop_start_failed(&d->st, now_s(), why, count_held(d)));
		return;
	}
	uv_timer_start(&d->ping_timer, on_ping_timer, 0, PING_INTERVAL_MS);
	uv_timer_start(&d->start_deadline, on_start_deadline,
		       (uint64_t)(d->cfg->start_timeout_s * 1000.0), 0);
}

static uint64_t host_free(void)
{
	struct platform_host_memory hm;
	return platform_host_memory(&hm) == 0 ? hm.free : 0;
}

/* Connections kept alive between requests would meet a VM that is going: close them first, as
 * an HTTP server closes an idle connection. A client that waits for a start is held instead. */
static void close_quiet_clients(struct daemon *d)
{
	struct relay *r = d->relays;
	while (r) {
		struct relay *next = relay_next(r);
		if (relay_phase(r) != RELAY_HELD && relay_activity(r) == AUTOSTOP_QUIET)
			relay_close(r, "the VM stops: idle connection closed");
		r = next;
	}
}

/* First the snapshot (the engine still answers), then the freeze (freeze_snapshot_taken). */
static void begin_freeze(struct daemon *d)
{
	if (d->cfg->wake_on_any) {
		queue_probe(d, JOB_FREEZE);
		return;
	}
	for (struct relay *r = d->relays; r; r = relay_next(r))
		note_version(d, relay_api_version(r));
	queue_probe(d, JOB_FREEZE_SNAPSHOT);
}

/* First the snapshot (the VM still answers), then limactl stop (stop_now). */
static void begin_stop(struct daemon *d)
{
	close_quiet_clients(d);
	if (d->cfg->wake_on_any) {
		stop_now(d);
		return;
	}
	for (struct relay *r = d->relays; r; r = relay_next(r))
		note_version(d, relay_api_version(r));
	queue_probe(d, JOB_SNAPSHOT);
}

static void stop_now(struct daemon *d)
{
	autostop_stop_began(&d->st, host_free());
	int rc = spawn_limactl(d, &d->stop, "stop");
	if (rc < 0) {
		char why[200];
		why_spawn_failed(rc, why, sizeof why);
		apply(d, autostop_stop_exited(&d->st, now_s(), -1, why, 0));
		return;
	}
	uv_timer_start(&d->stop_deadline, on_stop_deadline,
		       (uint64_t)(d->cfg->stop_timeout_s * 1000.0), 0);
}

static void on_settle_timer(uv_timer_t *t)
{
	struct daemon *d = t->data;
	apply(d, autostop_free_sampled(&d->st, now_s(), host_free()));
}

/* ---- carrying out decisions -------------------------------------------------------------- */

static void on_idle_timer(uv_timer_t *t)
{
	struct daemon *d = t->data;
	apply(d, autostop_timer_fired(&d->st, now_s()));
}

static void for_each_held(struct daemon *d, bool connect)
{
	struct relay *r = d->relays;
	while (r) {
		/* relay_close may end a relay (and unlink it) before this returns. */
		struct relay *next = relay_next(r);
		if (relay_phase(r) == RELAY_HELD) {
			if (connect)
				relay_connect(r, d->cfg->upstream);
			else
				relay_close(r, "the start failed");
		}
		r = next;
	}
}

/* ---- a docker.sock that accepts and hangs --------------------------------------------------- */

#define SILENT_MS ((uint64_t)(AUTOSTOP_SILENT_S * 1000.0))

static void on_silence_timer(uv_timer_t *t)
{
	silence_scan(t->data);
}

/*
 * The relayed clients docker.sock has not answered since they sent something: one silent for
 * AUTOSTOP_SILENT_S goes to the state machine (which may ask /_ping on a new connection), and
 * the timer waits for the next one to be due. A silence that began before docker.sock last
 * answered a probe is a slow request (docker stop, a long build step), not a hung forward.
 */
static void silence_scan(struct daemon *d)
{
	if (d->shutting_down)
		return;
	uint64_t now = uv_now(&d->loop), next = 0;
	bool due = false;
	for (const struct relay *r = d->relays; r; r = relay_next(r)) {
		uint64_t since = relay_silent_since(r);
		if (since == 0 || since <= d->answered_at)
			continue;
		if (now - since >= SILENT_MS)
			due = true;
		else if (next == 0 || since + SILENT_MS < next)
			next = since + SILENT_MS;
	}
	if (next)
		uv_timer_start(&d->silence_timer, on_silence_timer, next - now, 0);
	else
		uv_timer_stop(&d->silence_timer);
	if (due)
		apply(d, autostop_upstream_silent(&d->st, now_s()));
}

/* A relayed client began to wait for docker.sock: time it, unless one already is timed. */
static void relay_waiting(struct relay *r, void *ctx)
{
	(void)r;
	struct daemon *d = ctx;
	if (!uv_is_active((uv_handle_t *)&d->silence_timer))
		uv_timer_start(&d->silence_timer, on_silence_timer, SILENT_MS, 0);
}

/* docker.sock hangs: the clients it has not answered at all that sent only polls are held
 * again for the heal, their bytes kept; the others are left as they are (relay_rehold). */
static void hold_silent(struct daemon *d)
{
	unsigned held = 0, left = 0;
	for (struct relay *r = d->relays; r; r = relay_next(r)) {
		if (relay_phase(r) != RELAY_RELAYING)
			continue;
		if (relay_rehold(r))
			held++;
		else if (relay_silent_since(r))
			left++;
	}
	vmc_debug("docker.sock hangs: %u client%s held again for the heal, %u left as %s", held,
		  held == 1 ? "" : "s", left, left == 1 ? "it is" : "they are");
}

static void apply(struct daemon *d, struct autostop_actions act)
{
	if (d->shutting_down)
		return;
	if (act.todo & AUTOSTOP_DO_LOG)
		log_line(d, d->st.decision_kind, d->st.decision);
	if (act.todo & AUTOSTOP_DO_DISARM_TIMER)
		uv_timer_stop(&d->idle_timer);
	if (act.todo & AUTOSTOP_DO_ARM_TIMER)
		uv_timer_start(&d->idle_timer, on_idle_timer,
			       (uint64_t)(act.timer_s * 1000.0 + 0.5), 0);
	if (act.todo & AUTOSTOP_DO_END_START) {
		uv_timer_stop(&d->ping_timer);
		uv_timer_stop(&d->start_deadline);
	}
	if (act.todo & AUTOSTOP_DO_CONNECT_HELD)
		for_each_held(d, true);
	if (act.todo & AUTOSTOP_DO_CLOSE_HELD)
		for_each_held(d, false);
	if (act.todo & AUTOSTOP_DO_CHECK)
		queue_check(d);
	if (act.todo & AUTOSTOP_DO_STOP)
		begin_stop(d);
	if (act.todo & AUTOSTOP_DO_END_SETTLE)
		uv_timer_stop(&d->settle_timer);
	if (act.todo & AUTOSTOP_DO_SETTLE)
		uv_timer_start(&d->settle_timer, on_settle_timer, 0,
			       (uint64_t)(AUTOSTOP_SETTLE_INTERVAL_S * 1000.0));
	if (act.todo & AUTOSTOP_DO_START)
		begin_start(d);
	if (act.todo & AUTOSTOP_DO_HOLD_SILENT)
		hold_silent(d);
	if (act.todo & AUTOSTOP_DO_HEAL)
		queue_probe(d, JOB_HEAL);
	if (act.todo & AUTOSTOP_DO_PROBE_HANG)
		queue_probe(d, JOB_HANG);
	if (act.todo & AUTOSTOP_DO_FREEZE)
		begin_freeze(d);
	if (act.todo & AUTOSTOP_DO_THAW)
		queue_probe(d, JOB_THAW);
	/* What the engine said while frozen holds no longer once it thaws (or goes away). */
	if (d->snap_frozen && d->st.engine != AUTOSTOP_ENGINE_FROZEN &&
	    d->st.engine != AUTOSTOP_ENGINE_FREEZING)
		forget_snapshot(d);
}

/* ---- clients ------------------------------------------------------------------------------ */

/* Held clients that met a busy docker.sock try again, unless a start or stop holds them. */
static void on_busy_timer(uv_timer_t *t)
{
	struct daemon *d = t->data;
	if (d->st.state == AUTOSTOP_STOPPING || d->st.state == AUTOSTOP_HEALING ||
	    (d->st.state == AUTOSTOP_STARTING && !d->st.ping_answered) ||
	    d->st.engine == AUTOSTOP_ENGINE_FREEZING || d->st.engine == AUTOSTOP_ENGINE_THAWING)
		return;
	struct relay *r = d->relays;
	while (r) {
		struct relay *next = relay_next(r);
		if (relay_phase(r) == RELAY_HELD && relay_connect_failures(r) > 0)
			relay_connect(r, d->cfg->upstream);
		r = next;
	}
}

static void relay_upstream_failed(struct relay *r, int status, void *ctx)
{
	struct daemon *d = ctx;
	char why[200];
	if (status == UV_EAGAIN) {
		if (relay_connect_failures(r) >= BUSY_RETRIES) {
			vmc_textf(why, sizeof why, "docker.sock stayed busy (%s) for %d s",
				  uv_strerror(status), BUSY_RETRIES * BUSY_RETRY_MS / 1000);
			vmc_warn("closing a client: %s", why);
			relay_close(r, why);
		} else if (!uv_is_active((uv_handle_t *)&d->busy_timer)) {
			uv_timer_start(&d->busy_timer, on_busy_timer, BUSY_RETRY_MS, 0);
		}
		return;
	}
	/* Only a missing or refusing socket means the VM is not there; anything else (a
	 * permission problem, a path that is not a socket) a start would not cure. */
	if (status != UV_ENOENT && status != UV_ECONNREFUSED) {
		vmc_textf(why, sizeof why, "cannot connect to %s: %s", d->cfg->upstream,
			  uv_strerror(status));
		vmc_warn("closing a client: %s", why);
		relay_close(r, why);
		return;
	}
	if (d->st.state == AUTOSTOP_STARTING && d->st.ping_answered) {
		relay_close(r, "docker.sock refused right after the start answered");
		return;
	}
	/* Stopped by autostop: polls are answered from the snapshot, the rest starts it. */
	if (d->snap && autostop_snapshot_answers(&d->st)) {
		relay_serve_locally(r);
		return;
	}
	/* A client that has said nothing yet may only be probing (or leaving): it starts the VM
	 * with its first bytes, see relay_spoke. */
	if (relay_held_bytes(r) == 0)
		return;
	apply(d, autostop_upstream_refused(&d->st, now_s(), uv_strerror(status)));
}

/* A held client whose connect was refused spoke: now it wants Docker. */
static void relay_spoke(struct relay *r, void *ctx)
{
	struct daemon *d = ctx;
	int e = relay_connect_error(r);
	if (relay_phase(r) == RELAY_HELD && (e == UV_ENOENT || e == UV_ECONNREFUSED))
		apply(d, autostop_upstream_refused(&d->st, now_s(), uv_strerror(e)));
}

static void relay_connected(struct relay *r, void *ctx)
{
	(void)r;
	struct daemon *d = ctx;
	forget_snapshot(d);
	apply(d, autostop_upstream_connected(&d->st, now_s()));
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A poll of a client served locally, answered from the snapshot if it can be, faithfully. */
static bool relay_answer(struct relay *r, const char *method, const char *target, bool keep_alive,
			 char **out, size_t *len, void *ctx)
{
	(void)r;
	struct daemon *d = ctx;
	d->miss_why[0] = '\0';
	if (!d->snap || !autostop_snapshot_answers(&d->st)) {
		vmc_textf(d->miss_why, sizeof d->miss_why, "no snapshot holds any more");
		return false;
	}
	if (snapshot_answer(d->snap, method, target, keep_alive, wall_s(), out, len, d->miss_why,
			    sizeof d->miss_why) < 0)
		return false;
	autostop_snapshot_answered(&d->st);
	return true;
}

/* A client served locally sent what the snapshot does not answer: it needs the VM. */
static void relay_wake(struct relay *r, const char *what, void *ctx)
{
	(void)r;
	struct daemon *d = ctx;
	char why[sizeof d->miss_why];
	vmc_textf(why, sizeof why, "%s", d->miss_why[0] ? d->miss_why : "not a poll");
	d->miss_why[0] = '\0';
	apply(d, autostop_snapshot_missed(&d->st, now_s(), what, why));
}

static void relay_activity_changed(struct relay *r, enum autostop_activity was,
				   enum autostop_activity is, void *ctx)
{
	struct daemon *d = ctx;
	if (relay_serving_locally(r))
		apply(d, autostop_local_activity(&d->st, now_s(), was, is));
	else
		apply(d, autostop_client_activity(&d->st, now_s(), was, is));
}

static void relay_closed(struct relay *r, const char *why, void *ctx)
{
	struct daemon *d = ctx;
	note_version(d, relay_api_version(r));
	relay_list_remove(&d->relays, r);
	if (why && *why)
		vmc_debug("client connection ended: %s", why);
	apply(d, autostop_client_closed(&d->st, now_s()));
}

static const struct relay_hooks hooks = {
    .upstream_failed = relay_upstream_failed,
    .waiting = relay_waiting,
    .connected = relay_connected,
    .spoke = relay_spoke,
    .activity = relay_activity_changed,
    .closed = relay_closed,
    .answer = relay_answer,
    .wake = relay_wake,
};

static void on_client(uv_stream_t *server, int status)
{
	struct daemon *d = server->data;
	if (status < 0) {
		vmc_warn("accepting a client on %s failed: %s", d->cfg->listen,
			 uv_strerror(status));
		return;
	}
	int err = 0;
	struct relay *r = relay_accept(server, &hooks, d, &err);
	if (!r) {
		vmc_warn("accepting a client on %s failed: %s", d->cfg->listen, uv_strerror(err));
		return;
	}
	relay_list_add(&d->relays, r);
	struct autostop_actions act;
	bool connect = autostop_client_opened(&d->st, now_s(), &act);
	apply(d, act);
	if (connect)
		relay_connect(r, d->cfg->upstream);
	else if (d->snap && autostop_snapshot_answers(&d->st))
		relay_serve_locally(r); /* starting, or the engine frozen: held, polls answered */
}

/* ---- listening ------------------------------------------------------------------------- */

static json_t *status_document(void *ctx)
{
	const struct daemon *d = ctx;
	return autostop_status_document(&d->st, d->cfg->listen, d->cfg->upstream, now_s());
}

static int open_listeners(struct daemon *d, char *err, size_t errsize)
{
	const struct autostop_config *cfg = d->cfg;
	int rc;
	size_t max;
	/* A path that can never work is a usage error, whatever else is going on. */
	if (cfg->listen_fd < 0 && !sockfile_path_fits(cfg->listen, &max))
		return sockfile_prepare(cfg->listen, "listen socket", err, errsize);
	if (cfg->status[0] &&
	    (rc = sockfile_prepare(cfg->status, "status socket", err, errsize)) != VMC_EXIT_OK)
		return rc;
	if (cfg->listen_fd >= 0) {
		uv_pipe_init(&d->loop, &d->listener, 0);
		d->listener.data = d;
		int e = uv_pipe_open(&d->listener, cfg->listen_fd);
		if (e == 0)
			e = uv_listen((uv_stream_t *)&d->listener, SOCKFILE_BACKLOG, on_client);
		if (e < 0) {
			uv_close((uv_handle_t *)&d->listener, NULL);
			vmc_errorf(
			    err, errsize,
			    "cannot use the listening socket passed by the service manager (fd "
			    "%d): %s",
			    cfg->listen_fd, uv_strerror(e));
			return VMC_EXIT_FAILURE;
		}
	} else {
		if ((rc = sockfile_prepare(cfg->listen, "listen socket", err, errsize)) !=
		    VMC_EXIT_OK)
			return rc;
		if ((rc = sockfile_listen(&d->loop, &d->listener, cfg->listen, d, on_client, err,
					  errsize)) != VMC_EXIT_OK)
			return rc;
		d->unlink_listen = true;
	}
	d->listener_open = true;
	if (cfg->status[0]) {
		d->status.document = status_document;
		d->status.ctx = d;
		return autostop_status_serve(&d->loop, &d->status, cfg->status, err, errsize);
	}
	return VMC_EXIT_OK;
}

/* ---- shutdown ----------------------------------------------------------------------------- */

static void close_listeners(struct daemon *d)
{
	if (d->listener_open) {
		uv_close((uv_handle_t *)&d->listener, NULL);
		d->listener_open = false;
		/* A socket-activated listener belongs to the service manager: leave its file. */
		if (d->unlink_listen)
			unlink(d->cfg->listen);
	}
	autostop_status_close(&d->status);
}

static void on_signal(uv_signal_t *sig, int signum)
{
	struct daemon *d = sig->data;
	if (d->shutting_down)
		return;
	char msg[400];
	vmc_textf(msg, sizeof msg, "%s: listener closed, %s left %s%s; exiting",
		  signum == SIGTERM ? "SIGTERM" : "SIGINT", d->cfg->instance,
		  d->st.state == AUTOSTOP_STARTING ? "starting" : "as it is",
		  d->start.running || d->stop.running ? " (limactl keeps running)" : "");
	log_line(d, "exit", msg);
	d->shutting_down = true;
	close_listeners(d);
	struct relay *r = d->relays;
	while (r) {
		struct relay *next = relay_next(r);
		relay_close(r, "vmcost autostop is exiting");
		r = next;
	}
	uv_close((uv_handle_t *)&d->idle_timer, NULL);
	uv_close((uv_handle_t *)&d->ping_timer, NULL);
	uv_close((uv_handle_t *)&d->start_deadline, NULL);
	uv_close((uv_handle_t *)&d->stop_deadline, NULL);
	uv_close((uv_handle_t *)&d->settle_timer, NULL);
	uv_close((uv_handle_t *)&d->busy_timer, NULL);
	uv_close((uv_handle_t *)&d->silence_timer, NULL);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sigint, NULL);
	/* limactl runs detached: let go of it without waiting. */
	if (d->start.running)
		uv_close((uv_handle_t *)&d->start.proc, on_child_closed);
	if (d->stop.running)
		uv_close((uv_handle_t *)&d->stop.proc, on_child_closed);
	d->start.running = d->stop.running = false;
}

/* At start-up: a stopped instance may have the snapshot of autostop's last stop. */
static struct autostop_actions load_snapshot(struct daemon *d)
{
	const struct autostop_config *cfg = d->cfg;
	struct autostop_actions none = {0};
	if (cfg->instance_running) {
		snapshot_remove(cfg->instance_dir); /* it runs: whatever is there is stale */
		return none;
	}
	if (cfg->wake_on_any)
		return none;
	char path[PATH_MAX + 64], err[PATH_MAX + 200], msg[PATH_MAX + 300];
	vmc_textf(path, sizeof path, "%s/%s", cfg->instance_dir, SNAPSHOT_FILE_NAME);
	if (access(path, F_OK) != 0)
		return none;
	d->snap = snapshot_load(cfg->instance_dir, cfg->instance, err, sizeof err);
	if (!d->snap) {
		vmc_textf(msg, sizeof msg, "not answering polls from a snapshot: %s", err);
		log_line(d, "snapshot", msg);
		return none;
	}
	const char *versions[SNAPSHOT_VERSIONS_MAX];
	size_t n = snapshot_versions(d->snap, versions, SNAPSHOT_VERSIONS_MAX);
	for (size_t i = n; i > 0; i--)
		note_version(d, versions[i - 1]);
	return autostop_snapshot_loaded(&d->st, now_s(), snapshot_taken(d->snap));
}

static void init_handles(struct daemon *d)
{
	uv_timer_t *timers[] = {&d->idle_timer,	   &d->ping_timer,   &d->start_deadline,
				&d->stop_deadline, &d->settle_timer, &d->busy_timer,
				&d->silence_timer};
	for (size_t i = 0; i < sizeof timers / sizeof timers[0]; i++) {
		uv_timer_init(&d->loop, timers[i]);
		timers[i]->data = d;
	}
	uv_signal_init(&d->loop, &d->sigterm);
	uv_signal_init(&d->loop, &d->sigint);
	d->sigterm.data = d->sigint.data = d;
	uv_signal_start(&d->sigterm, on_signal, SIGTERM);
	uv_signal_start(&d->sigint, on_signal, SIGINT);
}

static void close_all(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

int autostop_daemon_run(const struct autostop_config *cfg, char *err, size_t errsize)
{
	err[0] = '\0';
	struct daemon *d = calloc(1, sizeof *d);
	if (!d) {
		vmc_errorf(err, errsize, "out of memory");
		return VMC_EXIT_FAILURE;
	}
	d->cfg = cfg;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	uv_loop_init(&d->loop);
	d->loop.data = d;
	int rc = open_listeners(d, err, errsize);
	if (rc != VMC_EXIT_OK) {
		close_listeners(d);
		uv_walk(&d->loop, close_all, NULL);
		uv_run(&d->loop, UV_RUN_DEFAULT);
		uv_loop_close(&d->loop);
		free(d);
		curl_global_cleanup();
		return rc;
	}
	init_handles(d);
	char period[32], freeze[80] = "", msg[PATH_MAX * 2 + 300];
	vmc_format_duration(cfg->idle_s, period, sizeof period);
	if (cfg->freeze_after_s > 0 && cfg->freeze_after_s < cfg->idle_s) {
		char after[32];
		vmc_format_duration(cfg->freeze_after_s, after, sizeof after);
		vmc_textf(freeze, sizeof freeze, ", the engine frozen after %s of it", after);
	}
	vmc_textf(msg, sizeof msg, "%s: listening on %s%s, relaying to %s; idle period %s%s",
		  cfg->instance, cfg->listen, cfg->listen_fd >= 0 ? " (socket activation)" : "",
		  cfg->upstream, period, freeze);
	log_line(d, "listen", msg);
	struct autostop_actions first =
	    autostop_init(&d->st, cfg->instance, cfg->idle_s, cfg->instance_running, now_s());
	autostop_set_freeze_after(&d->st, cfg->freeze_after_s);
	autostop_set_wake_on_any(&d->st, cfg->wake_on_any);
	first.todo |= load_snapshot(d).todo; /* one line: the state it found */
	apply(d, first);
	uv_run(&d->loop, UV_RUN_DEFAULT);
	rc = uv_loop_close(&d->loop);
	if (rc < 0)
		vmc_debug("uv_loop_close: %s", uv_strerror(rc));
	snapshot_free(d->snap);
	snapshot_free(d->snap_new);
	free(d);
	curl_global_cleanup();
	return VMC_EXIT_OK;
}

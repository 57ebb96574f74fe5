/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Freezing the Docker engine on the cgroup v2 freezer (engine.h). The freeze is refused unless
 * it is safe: Docker Desktop's freezer once stopped unrelated processes with the engine
 * (microsoft/WSL #12991), so every process in the engine's cgroups is named and checked first.
 * Freeze and thaw hold a lock file, so the daemon, the command line and the guard never
 * interleave.
 */
#include "engine.h"

#include "clock.h"
#include "log.h"
#include "procfs.h"
#include "procpid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
/* A cgroup subtree deeper than this is not an init system's service cgroup. */
#define MAX_DEPTH 8
/* Processes named in a refusal or a status; more are counted, not listed. */
#define MAX_LISTED 32
/* How often the freeze looks at cgroup.events while it waits for "frozen 1". */
#define FREEZE_POLL_S 0.005

static const char *const dockerd_cgroups[] = {"system.slice/docker.service", "openrc.docker"};
static const char *const containerd_cgroups[] = {"system.slice/containerd.service",
						 "openrc.containerd"};
static const char *const lima_agent_cgroups[] = {"system.slice/lima-guestagent.service",
						 "openrc.lima-guestagent"};
/* Where containers' own cgroups are: cgroupfs driver, systemd driver. */
static const char *const container_parents[] = {"docker", "system.slice"};

static void set_err(char *err, size_t errsize, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_err(char *err, size_t errsize, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	errno = errnum;
}

int engine_events_value(const char *events, const char *key)
{
	char k[32];
	uint64_t v;
	snprintf(k, sizeof k, "%s ", key);
	if (vmc_key_u64(events, k, &v) < 0 || v > 1)
		return -1;
	return (int)v;
}

enum engine_member engine_classify(const char *comm)
{
	static const char *const engine[] = {"dockerd", "containerd", "docker-proxy",
					     /* supervise-daemon, cut to 15 characters */
					     "supervise-daemo", "log_proxy"};
	if (strncmp(comm, "containerd-shim", 15) == 0)
		return ENGINE_MEMBER_SHIM;
	if (strcmp(comm, "lima-guestagent") == 0)
		return ENGINE_MEMBER_LIMA_AGENT;
	for (size_t i = 0; i < sizeof engine / sizeof engine[0]; i++)
		if (strcmp(comm, engine[i]) == 0)
			return ENGINE_MEMBER_ENGINE;
	return ENGINE_MEMBER_FOREIGN;
}

static bool cgroup_dir_exists(const char *rel)
{
	char path[512];
	struct stat sb;
	return vmc_fs_path(path, sizeof path, CGROUP_ROOT "/%s", rel) && stat(path, &sb) == 0 &&
	       S_ISDIR(sb.st_mode);
}

static int read_cgroup_file(const char *rel, const char *file, char **buf)
{
	char path[512];
	size_t len;
	if (snprintf(path, sizeof path, CGROUP_ROOT "/%s/%s", rel, file) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return vmc_fs_read(path, buf, &len, 1 << 20);
}

/* ---- the processes of a cgroup subtree ---------------------------------------------------- */

struct member {
	pid_t pid;
	char name[64];
	char cgroup[160]; /* where it is, below /sys/fs/cgroup */
	enum engine_member kind;
};

struct members {
	struct member *list;
	size_t n, cap;
};

static void members_free(struct members *m)
{
	free(m->list);
	*m = (struct members){0};
}

static int members_add(struct members *m, pid_t pid, const char *rel)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct member *grown = realloc(m->list, cap * sizeof *grown);
		if (!grown)
			return -1;
		m->list = grown;
		m->cap = cap;
	}
	struct member *it = &m->list[m->n];
	struct vmc_proc_status st;
	it->pid = pid;
	/* A process that exited between the two reads is simply gone. */
	if (vmc_proc_status_read(pid, &st) < 0)
		return 0;
	snprintf(it->name, sizeof it->name, "%s", st.name);
	snprintf(it->cgroup, sizeof it->cgroup, "%s", rel);
	it->kind = engine_classify(it->name);
	m->n++;
	return 0;
}

static int collect_procs(const char *rel, struct members *m)
{
	char *buf;
	if (read_cgroup_file(rel, "cgroup.procs", &buf) < 0)
		return errno == ENOENT ? 0 : -1;
	int rc = 0;
	for (const char *p = buf; *p && rc == 0;) {
		uint64_t pid;
		if (vmc_parse_u64(&p, &pid) == 0 && pid > 0 && pid < (uint64_t)1 << 31)
			rc = members_add(m, (pid_t)pid, rel);
		while (*p && *p != '\n')
			p++;
		while (*p == '\n')
			p++;
	}
	free(buf);
	return rc;
}

/* Every process in rel and the cgroups below it (a freeze stops them all). */
static int collect_subtree(const char *rel, int depth, struct members *m)
{
	if (collect_procs(rel, m) < 0)
		return -1;
	if (depth >= MAX_DEPTH)
		return 0;
	char path[512];
	if (!vmc_fs_path(path, sizeof path, CGROUP_ROOT "/%s", rel))
		return -1;
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' || e->d_type != DT_DIR)
			continue;
		char child[512];
		if (snprintf(child, sizeof child, "%s/%s", rel, e->d_name) >= (int)sizeof child)
			continue;
		rc = collect_subtree(child, depth + 1, m);
	}
	closedir(d);
	return rc;
}

static bool holds_containerd(const char *rel)
{
	struct members m = {0};
	bool found = false;
	if (collect_subtree(rel, 0, &m) == 0)
		for (size_t i = 0; i < m.n; i++)
			found = found || strcmp(m.list[i].name, "containerd") == 0;
	members_free(&m);
	return found;
}

/* ---- which cgroups -------------------------------------------------------------------------- */

static void plan_add(struct engine_plan *plan, const char *rel)
{
	if (plan->n < AGENT_MAX_ENGINE_CGROUPS)
		snprintf(plan->cg[plan->n++].path, sizeof plan->cg[0].path, "%s", rel);
}

static int plan_from_list(const char *list, struct engine_plan *plan, char *err, size_t errsize)
{
	char copy[512];
	snprintf(copy, sizeof copy, "%s", list);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!cgroup_dir_exists(tok)) {
			set_err(err, errsize, ENOENT,
				"cgroup %s/%s does not exist (engine-cgroups in "
				"/etc/vmcost/agent.yaml; is the engine running?)",
				CGROUP_ROOT, tok);
			return -1;
		}
		plan_add(plan, tok);
	}
	return 0;
}

int engine_find(const struct agent_config *cfg, struct engine_plan *plan, char *err, size_t errsize)
{
	*plan = (struct engine_plan){0};
	if (strcmp(cfg->engine_cgroups, "auto") != 0)
		return plan_from_list(cfg->engine_cgroups, plan, err, errsize);
	bool own_containerd = false;
	for (size_t i = 0; i < 2; i++)
		if (cgroup_dir_exists(dockerd_cgroups[i])) {
			plan_add(plan, dockerd_cgroups[i]);
			own_containerd = own_containerd || holds_containerd(dockerd_cgroups[i]);
		}
	if (plan->n == 0) {
		set_err(err, errsize, ENOENT,
			"no Docker engine cgroup: looked for %s/%s and %s/%s (is docker running? "
			"otherwise name its cgroups in engine-cgroups in /etc/vmcost/agent.yaml)",
			CGROUP_ROOT, dockerd_cgroups[0], CGROUP_ROOT, dockerd_cgroups[1]);
		return -1;
	}
	/* dockerd uses a standalone containerd (Debian's docker.io) when it runs none itself. */
	if (!own_containerd)
		for (size_t i = 0; i < 2; i++)
			if (cgroup_dir_exists(containerd_cgroups[i]))
				plan_add(plan, containerd_cgroups[i]);
	if (cfg->engine_freeze_lima_agent)
		for (size_t i = 0; i < 2; i++)
			if (cgroup_dir_exists(lima_agent_cgroups[i]))
				plan_add(plan, lima_agent_cgroups[i]);
	return 0;
}

/* ---- is a freeze safe? ---------------------------------------------------------------------- */

/* A running (or paused) container: a populated cgroup of its own. Its id in id, or false. */
static bool container_running(char *id, size_t size)
{
	for (size_t i = 0; i < sizeof container_parents / sizeof container_parents[0]; i++) {
		char path[512];
		if (!vmc_fs_path(path, sizeof path, CGROUP_ROOT "/%s", container_parents[i]))
			continue;
		DIR *d = opendir(path);
		if (!d)
			continue;
		struct dirent *e;
		bool found = false;
		while (!found && (e = readdir(d))) {
			const char *name = e->d_name;
			bool systemd_scope = i == 1;
			if (name[0] == '.' || e->d_type != DT_DIR)
				continue;
			if (systemd_scope &&
			    (strncmp(name, "docker-", 7) != 0 || !strstr(name, ".scope")))
				continue;
			char rel[512], *events;
			snprintf(rel, sizeof rel, "%s/%s", container_parents[i], name);
			if (read_cgroup_file(rel, "cgroup.events", &events) < 0)
				continue;
			if (engine_events_value(events, "populated") == 1) {
				const char *short_id = systemd_scope ? name + 7 : name;
				snprintf(id, size, "%.12s", short_id);
				found = true;
			}
			free(events);
		}
		closedir(d);
		if (found)
			return true;
	}
	return false;
}

static void append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len >= size - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/*
 * Why the plan cannot be frozen now, in err (errno EBUSY or ENOTSUP); 0 when it can. Checks the
 * freezer, running containers, and every process of every cgroup.
 */
static int freeze_refusal(const struct agent_config *cfg, const struct engine_plan *plan, char *err,
			  size_t errsize)
{
	char path[512];
	for (size_t i = 0; i < plan->n; i++) {
		snprintf(path, sizeof path, CGROUP_ROOT "/%s/cgroup.freeze", plan->cg[i].path);
		if (!vmc_fs_exists(path)) {
			set_err(
			    err, errsize, ENOTSUP,
			    "no cgroup v2 freezer: %s/%s has no cgroup.freeze (needs Linux 5.2 or "
			    "later with cgroup2 mounted at %s)",
			    CGROUP_ROOT, plan->cg[i].path, CGROUP_ROOT);
			return -1;
		}
	}
	char id[16];
	if (container_running(id, sizeof id)) {
		set_err(err, errsize, EBUSY,
			"container %s is running: a running container is never frozen (docker ps; "
			"docker stop it first)",
			id);
		return -1;
	}
	pid_t self = getpid();
	char foreign[400] = "";
	size_t n_foreign = 0;
	int rc = 0;
	for (size_t i = 0; i < plan->n && rc == 0; i++) {
		struct members m = {0};
		if (collect_subtree(plan->cg[i].path, 0, &m) < 0) {
			set_err(err, errsize, errno, "cannot list the processes of %s/%s: %s",
				CGROUP_ROOT, plan->cg[i].path, strerror(errno));
			members_free(&m);
			return -1;
		}
		for (size_t j = 0; j < m.n; j++) {
			const struct member *it = &m.list[j];
			if (it->kind == ENGINE_MEMBER_SHIM) {
				set_err(err, errsize, EBUSY,
					"%s (pid %d) in %s is running: a container runs or is "
					"paused (docker ps -a)",
					it->name, (int)it->pid, it->cgroup);
				rc = -1;
				break;
			}
			bool ok = it->pid != self && (it->kind == ENGINE_MEMBER_ENGINE ||
						      (it->kind == ENGINE_MEMBER_LIMA_AGENT &&
						       cfg->engine_freeze_lima_agent));
			if (ok)
				continue;
			if (n_foreign++ < MAX_LISTED / 4)
				append(foreign, sizeof foreign, "%s%d (%s%s) in %s",
				       n_foreign > 1 ? ", " : "", (int)it->pid, it->name,
				       it->pid == self ? ", this agent" : "", it->cgroup);
		}
		members_free(&m);
	}
	if (rc == 0 && n_foreign > 0) {
		set_err(
		    err, errsize, EBUSY,
		    "the engine's cgroups hold %zu process(es) that are not the engine's: %s%s; "
		    "a freeze would stop them too (move them out, or set engine-cgroups in "
		    "/etc/vmcost/agent.yaml)",
		    n_foreign, foreign, n_foreign > MAX_LISTED / 4 ? ", ..." : "");
		rc = -1;
	}
	return rc;
}

/* ---- the record of a freeze, and the lock ---------------------------------------------------- */

struct engine_record {
	struct engine_plan plan;
	char docker_socket[108];
	bool socket_aside;
	pid_t guard_pid;
	double since; /* wall clock, seconds since the epoch */
};

static int state_path(char *buf, size_t size, const char *file)
{
	return vmc_fs_path(buf, size, "%s", file) ? 0 : -1;
}

static int ensure_run_dir(void)
{
	char dir[512];
	static const char *const levels[] = {"/run", "/run/vmcost-agent"};
	for (size_t i = 0; i < 2; i++)
		if (!vmc_fs_path(dir, sizeof dir, "%s", levels[i]) ||
		    (mkdir(dir, 0755) < 0 && errno != EEXIST))
			return -1;
	return 0;
}

static int lock_engine(void)
{
	char path[512];
	if (ensure_run_dir() < 0 || state_path(path, sizeof path, ENGINE_LOCK_FILE) < 0)
		return -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

static void unlock_engine(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* Written before the first cgroup.freeze, so a kill at any point leaves enough to undo it. */
static int record_write(const struct engine_record *rec)
{
	json_t *cgs = json_array();
	for (size_t i = 0; cgs && i < rec->plan.n; i++)
		json_array_append_new(cgs, json_string(rec->plan.cg[i].path));
	json_t *doc = json_pack("{s:o?,s:s,s:b,s:i,s:f}", "cgroups", cgs, "docker_socket",
				rec->docker_socket, "socket_aside", rec->socket_aside, "guard_pid",
				(int)rec->guard_pid, "since", rec->since);
	if (!doc)
		return -1;
	char path[512], tmp[520];
	if (ensure_run_dir() < 0 || state_path(path, sizeof path, ENGINE_STATE_FILE) < 0) {
		json_decref(doc);
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int rc = json_dump_file(doc, tmp, JSON_COMPACT);
	json_decref(doc);
	if (rc == 0)
		rc = rename(tmp, path);
	return rc;
}

/* 1 with the record, 0 when there is none, -1 when it is unreadable (then it is removed). */
static int record_read(struct engine_record *rec)
{
	char path[512];
	*rec = (struct engine_record){0};
	if (state_path(path, sizeof path, ENGINE_STATE_FILE) < 0)
		return -1;
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr);
	if (!doc)
		return access(path, F_OK) == 0 ? -1 : 0;
	json_t *cgs = json_object_get(doc, "cgroups");
	size_t i;
	json_t *v;
	json_array_foreach(cgs, i, v)
	{
		const char *p = json_string_value(v);
		if (p && !strstr(p, "..") && p[0] != '/')
			plan_add(&rec->plan, p);
	}
	const char *sock = json_string_value(json_object_get(doc, "docker_socket"));
	snprintf(rec->docker_socket, sizeof rec->docker_socket, "%s", sock ? sock : "");
	rec->socket_aside = json_is_true(json_object_get(doc, "socket_aside"));
	rec->guard_pid = (pid_t)json_integer_value(json_object_get(doc, "guard_pid"));
	rec->since = json_number_value(json_object_get(doc, "since"));
	json_decref(doc);
	return 1;
}

static void record_remove(void)
{
	char path[512];
	if (state_path(path, sizeof path, ENGINE_STATE_FILE) == 0)
		unlink(path);
}

bool engine_recorded_frozen(void)
{
	char path[512];
	return state_path(path, sizeof path, ENGINE_STATE_FILE) == 0 && access(path, F_OK) == 0;
}

/* ---- the guard's hooks ------------------------------------------------------------------------
 */

static struct engine_guard_hooks guard_hooks;
static bool guard_enabled;

void engine_set_guard_hooks(const struct engine_guard_hooks *hooks)
{
	guard_hooks = *hooks;
	guard_enabled = true;
}

/* ---- freeze and thaw ---------------------------------------------------------------------- */

static int write_freeze(const char *rel, const char *value)
{
	char path[512];
	if (snprintf(path, sizeof path, CGROUP_ROOT "/%s/cgroup.freeze", rel) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return vmc_fs_write(path, value);
}

static int frozen_state(const char *rel)
{
	char *events;
	if (read_cgroup_file(rel, "cgroup.events", &events) < 0)
		return -1;
	int v = engine_events_value(events, "frozen");
	free(events);
	return v;
}

/* cgroup.freeze says 1: someone froze it (frozen 1 in cgroup.events may still be coming). */
static bool freeze_requested(const char *rel)
{
	char *buf;
	if (read_cgroup_file(rel, "cgroup.freeze", &buf) < 0)
		return false;
	bool requested = buf[0] == '1';
	free(buf);
	return requested;
}

/* Thaws in the reverse order of the freeze: containerd is back before dockerd looks for it. */
static void thaw_plan(const struct engine_plan *plan)
{
	for (size_t i = plan->n; i-- > 0;)
		if (write_freeze(plan->cg[i].path, "0") < 0 && errno != ENOENT)
			vmc_warn("cannot thaw %s/%s:", CGROUP_ROOT, plan->cg[i].path);
}

/* Waits for frozen 1 in every cgroup; the first that did not freeze, or NULL. */
static const char *wait_frozen(const struct engine_plan *plan, double timeout_s)
{
	double deadline = vmc_monotonic_s() + timeout_s;
	for (;;) {
		const char *pending = NULL;
		for (size_t i = 0; i < plan->n && !pending; i++)
			if (frozen_state(plan->cg[i].path) != 1)
				pending = plan->cg[i].path;
		if (!pending || vmc_monotonic_s() >= deadline)
			return pending;
		vmc_sleep_s(FREEZE_POLL_S);
	}
}

static json_t *status_doc(const struct agent_config *cfg, const struct engine_record *rec,
			  bool recorded);

static json_t *with_action(json_t *doc, const char *action, double t0)
{
	if (doc) {
		json_object_set_new(doc, "action", json_string(action));
		json_object_set_new(doc, "took_ms", json_real((vmc_monotonic_s() - t0) * 1000.0));
	}
	return doc;
}

static void undo_freeze(const struct engine_record *rec, int guard_fd)
{
	thaw_plan(&rec->plan);
	if (rec->socket_aside)
		engine_guard_restore(rec->docker_socket);
	if (rec->guard_pid > 0 && guard_enabled)
		guard_hooks.stop(rec->guard_pid);
	else if (guard_fd >= 0)
		close(guard_fd);
	record_remove();
}

/* Why engine_guard_install found nothing to guard at path: "missing", "a symlink"... */
static const char *guard_missing_why(const char *path)
{
	char full[512];
	struct stat sb;
	if (!vmc_fs_path(full, sizeof full, "%s", path) || lstat(full, &sb) < 0)
		return "it does not exist";
	if (S_ISLNK(sb.st_mode))
		return "it is a symbolic link";
	if (S_ISDIR(sb.st_mode))
		return "it is a directory";
	if (!S_ISSOCK(sb.st_mode))
		return "it is not a socket";
	return "it went away meanwhile";
}

static json_t *freeze_locked(const struct agent_config *cfg, char *err, size_t errsize)
{
	double t0 = vmc_monotonic_s();
	struct engine_record rec;
	if (record_read(&rec) == 1)
		return with_action(status_doc(cfg, &rec, true), "already-frozen", t0);
	if (engine_find(cfg, &rec.plan, err, errsize) < 0)
		return NULL;
	if (freeze_refusal(cfg, &rec.plan, err, errsize) < 0)
		return NULL;
	snprintf(rec.docker_socket, sizeof rec.docker_socket, "%s", cfg->docker_socket);
	rec.since = (double)time(NULL);
	int guard_fd = guard_enabled ? engine_guard_install(cfg->docker_socket, err, errsize) : -2;
	if (guard_fd == -1)
		return NULL;
	if (guard_fd == -2 && guard_enabled) {
		/* Unguarded, every client of docker.sock would hang on the frozen dockerd. */
		set_err(err, errsize, ENOTSOCK,
			"%s is not a socket the agent can guard (%s): a frozen engine would leave "
			"its clients hanging, so it stays thawed (docker-socket in "
			"/etc/vmcost/agent.yaml names dockerd's socket)",
			cfg->docker_socket, guard_missing_why(cfg->docker_socket));
		return NULL;
	}
	rec.socket_aside = guard_fd >= 0;
	if (guard_fd >= 0) {
		char serr[256] = "";
		rec.guard_pid = guard_hooks.spawn(cfg, guard_fd, serr, sizeof serr);
		if (rec.guard_pid < 0) {
			engine_guard_restore(cfg->docker_socket);
			set_err(err, errsize, EIO, "cannot start the docker.sock guard: %s", serr);
			return NULL;
		}
	}
	if (record_write(&rec) < 0) {
		int e = errno;
		undo_freeze(&rec, -1);
		set_err(err, errsize, e, "cannot record the freeze in %s: %s", ENGINE_STATE_FILE,
			strerror(e));
		return NULL;
	}
	for (size_t i = 0; i < rec.plan.n; i++)
		if (write_freeze(rec.plan.cg[i].path, "1") < 0) {
			int e = errno;
			undo_freeze(&rec, -1);
			set_err(err, errsize, e, "cannot freeze %s/%s: %s (thawed again)",
				CGROUP_ROOT, rec.plan.cg[i].path, strerror(e));
			return NULL;
		}
	const char *pending = wait_frozen(&rec.plan, cfg->engine_freeze_timeout_s);
	if (pending) {
		undo_freeze(&rec, -1);
		set_err(err, errsize, ETIMEDOUT,
			"%s/%s did not report frozen 1 in cgroup.events within %.1f s: thawed the "
			"engine again (engine-freeze-timeout in /etc/vmcost/agent.yaml)",
			CGROUP_ROOT, pending, cfg->engine_freeze_timeout_s);
		return NULL;
	}
	vmc_info("engine frozen (%zu cgroup(s)%s) in %.0f ms", rec.plan.n,
		 rec.socket_aside ? ", docker.sock guarded" : "",
		 (vmc_monotonic_s() - t0) * 1000.0);
	return with_action(status_doc(cfg, &rec, true), "froze", t0);
}

json_t *engine_freeze(const struct agent_config *cfg, char *err, size_t errsize)
{
	int lock = lock_engine();
	if (lock < 0) {
		set_err(err, errsize, errno, "cannot lock %s (run as root): %s", ENGINE_LOCK_FILE,
			strerror(errno));
		return NULL;
	}
	json_t *doc = freeze_locked(cfg, err, errsize);
	int e = errno;
	unlock_engine(lock);
	errno = e;
	return doc;
}

json_t *engine_thaw_for(const struct agent_config *cfg, const char *origin, char *err,
			size_t errsize)
{
	double t0 = vmc_monotonic_s();
	int lock = lock_engine();
	if (lock < 0) {
		set_err(err, errsize, errno, "cannot lock %s (run as root): %s", ENGINE_LOCK_FILE,
			strerror(errno));
		return NULL;
	}
	struct engine_record rec;
	int recorded = record_read(&rec);
	const char *action = "not-frozen";
	if (recorded == 1) {
		thaw_plan(&rec.plan);
		if (rec.socket_aside)
			engine_guard_restore(rec.docker_socket);
		if (rec.guard_pid > 0 && rec.guard_pid != getpid() && guard_enabled)
			guard_hooks.stop(rec.guard_pid);
		record_remove();
		action = "thawed";
		vmc_info("engine thawed (%s) after %.0f s frozen, in %.1f ms", origin,
			 (double)time(NULL) - rec.since, (vmc_monotonic_s() - t0) * 1000.0);
	} else {
		/* Nothing of ours is recorded; a cgroup frozen by hand is thawed all the same. */
		char ferr[256];
		if (engine_find(cfg, &rec.plan, ferr, sizeof ferr) == 0) {
			bool any = false;
			for (size_t i = 0; i < rec.plan.n; i++)
				any = any || freeze_requested(rec.plan.cg[i].path);
			if (any) {
				thaw_plan(&rec.plan);
				action = "thawed";
				vmc_info("engine thawed (%s): it was frozen outside the agent",
					 origin);
			}
		}
		if (recorded < 0)
			record_remove();
	}
	unlock_engine(lock);
	return with_action(status_doc(cfg, NULL, false), action, t0);
}

json_t *engine_thaw(const struct agent_config *cfg, char *err, size_t errsize)
{
	return engine_thaw_for(cfg, "API", err, errsize);
}

void engine_recover(const struct agent_config *cfg, const char *origin)
{
	if (!engine_recorded_frozen())
		return;
	vmc_warn("the engine is frozen (%s): thawing it", origin);
	char err[256] = "";
	json_t *doc = engine_thaw_for(cfg, origin, err, sizeof err);
	if (!doc)
		vmc_warn("cannot thaw the engine: %s", err);
	json_decref(doc);
}

/* ---- status ------------------------------------------------------------------------------- */

static json_t *cgroup_doc(const char *rel)
{
	struct members m = {0};
	json_t *procs = json_array();
	collect_subtree(rel, 0, &m);
	for (size_t i = 0; procs && i < m.n && i < MAX_LISTED; i++)
		json_array_append_new(procs, json_pack("{s:i,s:s}", "pid", (int)m.list[i].pid,
						       "name", m.list[i].name));
	int frozen = frozen_state(rel);
	json_t *doc = json_pack("{s:s,s:b,s:i,s:o?}", "path", rel, "frozen", frozen == 1,
				"processes_total", (int)m.n, "processes", procs);
	members_free(&m);
	return doc;
}

static json_t *status_doc(const struct agent_config *cfg, const struct engine_record *rec,
			  bool recorded)
{
	struct engine_plan found;
	char ferr[400] = "", rerr[600] = "";
	const struct engine_plan *plan = recorded ? &rec->plan : &found;
	int found_rc = recorded ? 0 : engine_find(cfg, &found, ferr, sizeof ferr);
	json_t *cgs = json_array();
	size_t frozen = 0;
	for (size_t i = 0; found_rc == 0 && i < plan->n; i++) {
		json_t *cg = cgroup_doc(plan->cg[i].path);
		frozen += json_is_true(json_object_get(cg, "frozen"));
		json_array_append_new(cgs, cg);
	}
	const char *state = found_rc < 0	? "absent"
			    : frozen == 0	? "running"
			    : frozen == plan->n ? "frozen"
						: "partly-frozen";
	bool can_freeze =
	    found_rc == 0 && frozen == 0 && freeze_refusal(cfg, plan, rerr, sizeof rerr) == 0;
	json_t *doc =
	    json_pack("{s:s,s:o?,s:s,s:b}", "state", state, "cgroups", cgs, "docker_socket",
		      cfg->docker_socket, "socket_guarded", recorded && rec->socket_aside);
	if (!doc)
		return NULL;
	if (recorded)
		json_object_set_new(doc, "frozen_since", json_real(rec->since));
	if (frozen == 0) {
		json_object_set_new(doc, "can_freeze", json_boolean(can_freeze));
		if (!can_freeze)
			json_object_set_new(doc, "refusal",
					    json_string(found_rc < 0 ? ferr : rerr));
	}
	return doc;
}

json_t *engine_status(const struct agent_config *cfg, char *err, size_t errsize)
{
	struct engine_record rec;
	(void)err;
	(void)errsize;
	int recorded = record_read(&rec) == 1;
	return status_doc(cfg, &rec, recorded);
}

void engine_print(FILE *f, const json_t *doc)
{
	const char *state = json_string_value(json_object_get(doc, "state"));
	const char *action = json_string_value(json_object_get(doc, "action"));
	json_t *took = json_object_get(doc, "took_ms");
	if (action)
		fprintf(f, "%s in %.1f ms\n", action, json_number_value(took));
	fprintf(f, "engine: %s\n", state ? state : "?");
	size_t i;
	json_t *cg;
	json_array_foreach(json_object_get(doc, "cgroups"), i, cg)
	{
		fprintf(f, "  %-36s %s", json_string_value(json_object_get(cg, "path")),
			json_is_true(json_object_get(cg, "frozen")) ? "frozen " : "running");
		size_t j;
		json_t *p;
		json_array_foreach(json_object_get(cg, "processes"), j, p) fprintf(
		    f, "%s%s %lld", j ? ", " : "  ", json_string_value(json_object_get(p, "name")),
		    json_integer_value(json_object_get(p, "pid")));
		fputc('\n', f);
	}
	if (json_is_true(json_object_get(doc, "socket_guarded")))
		fprintf(f, "%s: guarded (the first client thaws the engine)\n",
			json_string_value(json_object_get(doc, "docker_socket")));
	const char *refusal = json_string_value(json_object_get(doc, "refusal"));
	if (refusal)
		fprintf(f, "cannot freeze: %s\n", refusal);
}

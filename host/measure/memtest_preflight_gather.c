/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The facts memtest's pre-flight judges, gathered without leaving anything behind: one read-only
 * `limactl shell` call for the guest's directories, GET requests to Docker, stat/access/kill(0)
 * on the host, the canary's mechanism tried on one page, and the results directory made and
 * written to (then removed again as far as it was new).
 */
#include "measure/memtest_preflight.h"

#include "clients/docker.h"
#include "clients/process.h"
#include "log.h"
#include "measure/pressure.h"
#include "measure/workload.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A guest that does not answer a `cat` in this long will not run a memtest either. */
#define PROBE_TIMEOUT_MS    30000
#define DOCKER_TIMEOUT_MS   5000
#define REGISTRY_TIMEOUT_MS 10000

static void gather_guest(const struct preflight_request *req, const struct lima_instance *inst,
			 struct preflight_guest_facts *g)
{
	memset(g, 0, sizeof *g);
	const char *argv[12];
	size_t n = 0;
	argv[n++] = "limactl";
	argv[n++] = "shell";
	argv[n++] = inst->name;
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = preflight_probe_script;
	argv[n++] = "vmcost-preflight";
	argv[n++] = req->tmpfs_dir ? req->tmpfs_dir : PREFLIGHT_DEFAULT_TMPFS_DIR;
	argv[n++] = req->fill_dir ? req->fill_dir : PREFLIGHT_DEFAULT_FILL_DIR;
	if (!req->fill_dir)
		argv[n++] = "/tmp/vmcost-fill";
	argv[n] = NULL;
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = PROBE_TIMEOUT_MS}, &r) != 0) {
		g->exit_code = VMC_EXIT_FAILURE;
		vmc_errorf(g->error, sizeof g->error, "cannot run limactl (is Lima on PATH?):");
		return;
	}
	char last[300];
	process_last_line(r.err_len ? r.err : r.out, last, sizeof last);
	g->exit_code = VMC_EXIT_FAILURE;
	if (r.timed_out) {
		vmc_textf(g->error, sizeof g->error, "limactl shell %s did not answer in %d s",
			  inst->name, PROBE_TIMEOUT_MS / 1000);
	} else if (r.exit_code != 0) {
		vmc_textf(g->error, sizeof g->error, "limactl shell %s failed (exit %d): %s",
			  inst->name, r.exit_code, *last ? last : "no output");
	} else if (preflight_parse_probe(r.out, g) != 0) {
		g->exit_code = VMC_EXIT_MALFORMED;
		vmc_textf(g->error, sizeof g->error,
			  "limactl shell %s ran the probe, but its output is not the probe's (last "
			  "line: %s)",
			  inst->name, *last ? last : "none");
	}
	process_result_free(&r);
}

static void gather_docker(const struct preflight_request *req, const struct lima_instance *inst,
			  struct preflight_docker_facts *f)
{
	memset(f, 0, sizeof *f);
	struct docker d;
	docker_init_instance(&d, inst);
	d.timeout_ms = DOCKER_TIMEOUT_MS;
	struct stat st;
	f->socket_exists = stat(d.socket_path, &st) == 0;
	if (!f->socket_exists)
		return;
	json_t *version = NULL;
	f->ping_rc = docker_version(&d, &version, f->ping_error, sizeof f->ping_error);
	if (f->ping_rc != VMC_EXIT_OK)
		return;
	const char *v = json_string_value(json_object_get(version, "Version"));
	snprintf(f->version, sizeof f->version, "%s", v ? v : "?");
	json_decref(version);
	const char *image = req->image ? req->image : WORKLOAD_PG_IMAGE;
	f->present_rc =
	    docker_image_present(&d, image, &f->present, f->present_error, sizeof f->present_error);
	if (f->present_rc != VMC_EXIT_OK || f->present || req->no_pull)
		return;
	f->registry_checked = true;
	f->registry_rc = docker_registry_has_image(&d, image, REGISTRY_TIMEOUT_MS,
						   f->registry_error, sizeof f->registry_error);
}

static void gather_host_memory(const struct preflight_request *req,
			       struct preflight_host_memory_facts *h)
{
	memset(h, 0, sizeof *h);
	if (req->pressure_none)
		return;
	h->has_memory = platform_host_memory(&h->hm) == 0;
	if (platform_memory_limit(&h->limit) != 0)
		h->limit.limited = false;
	long ps = sysconf(_SC_PAGESIZE);
	h->page_size = ps > 0 ? (size_t)ps : 4096;
	h->canary_ok = pressure_canary_probe(h->canary_error, sizeof h->canary_error) == 0;
}

static void gather_stop(const struct lima_instance *inst, pid_t vm_pid,
			struct preflight_stop_facts *s)
{
	memset(s, 0, sizeof *s);
	char path[PATH_MAX];
	s->limactl_found = process_find_on_path("limactl", path, sizeof path);
	vmc_textf(s->dir, sizeof s->dir, "%s", inst->dir);
	s->euid = geteuid();
	struct stat st;
	if (stat(inst->dir, &st) == 0) {
		s->has_dir_owner = true;
		s->dir_owner = st.st_uid;
	}
	s->dir_writable = access(inst->dir, W_OK | X_OK) == 0;
	s->ha_pid = inst->ha_pid;
	if (s->ha_pid > 0 && kill(s->ha_pid, 0) != 0)
		s->ha_signal_errno = errno;
	uid_t uid;
	if (vm_pid > 0 && platform_proc_uid(vm_pid, &uid) == 0) {
		s->has_vm_owner = true;
		s->vm_owner = uid;
	}
}

/* at minus its last component; false when there is none left ("/" or "."). */
static bool parent(char *at, size_t size)
{
	char *slash = strrchr(at, '/');
	if (!slash) {
		if (strcmp(at, ".") == 0)
			return false;
		snprintf(at, size, ".");
	} else if (slash == at) {
		if (at[1] == '\0')
			return false;
		at[1] = '\0';
	} else {
		*slash = '\0';
	}
	return true;
}

/* Records why the results directory cannot be written: the path that failed and errno. */
static void results_failed(struct preflight_results_facts *r, const char *path, int err)
{
	r->access_errno = err ? err : EIO;
	vmc_textf(r->failed_at, sizeof r->failed_at, "%s", path);
}

/*
 * mkdir -p of path, as results_ensure_dir does at the end of a run. *first_made is the length of
 * the first prefix it made (0: none): every deeper one is new too, and goes again afterwards.
 */
static int make_dirs(char *path, size_t *first_made, struct preflight_results_facts *r)
{
	size_t len = strlen(path);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char kept = path[i];
		path[i] = '\0';
		int rc = mkdir(path, 0755);
		int err = errno;
		if (rc == 0 && !*first_made)
			*first_made = i;
		else if (rc != 0 && err != EEXIST)
			results_failed(r, path, err);
		path[i] = kept;
		if (r->access_errno)
			return -1;
	}
	return 0;
}

/* Removes what make_dirs made, deepest first; a directory someone filled meanwhile stays. */
static void remove_made(char *path, size_t first_made)
{
	if (!first_made)
		return;
	size_t len = strlen(path);
	while (len >= first_made) {
		path[len] = '\0';
		if (rmdir(path) != 0)
			return;
		char *slash = strrchr(path, '/');
		if (!slash)
			return;
		len = (size_t)(slash - path);
	}
}

/* A file created, written and removed in dir: what writing the results will do. */
static void write_probe(const char *dir, struct preflight_results_facts *r)
{
	char probe[PATH_MAX];
	if (snprintf(probe, sizeof probe, "%s/.vmcost-preflight.%ld", dir, (long)getpid()) >=
	    (int)sizeof probe) {
		results_failed(r, dir, ENAMETOOLONG);
		return;
	}
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		results_failed(r, probe, errno);
		return;
	}
	static const char line[] = "vmcost memtest pre-flight\n";
	bool written = write(fd, line, sizeof line - 1) == (ssize_t)(sizeof line - 1);
	int err = errno;
	if (close(fd) != 0 && written) {
		written = false;
		err = errno;
	}
	unlink(probe);
	if (!written)
		results_failed(r, probe, err);
}

void preflight_gather_results(const char *dir, struct preflight_results_facts *r)
{
	memset(r, 0, sizeof *r);
	r->none = strcmp(dir, "none") == 0;
	if (r->none)
		return;
	char path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
		vmc_textf(r->at, sizeof r->at, "%s", dir);
		r->is_dir = true;
		results_failed(r, dir, ENAMETOOLONG);
		return;
	}
	/* The directory, or its nearest existing parent: where mkdir -p starts. */
	vmc_textf(r->at, sizeof r->at, "%s", dir);
	struct stat st;
	bool found;
	while (!(found = stat(r->at, &st) == 0) && parent(r->at, sizeof r->at))
		;
	r->exists = found && strcmp(r->at, dir) == 0;
	r->is_dir = found && S_ISDIR(st.st_mode);
	if (!r->is_dir)
		return;
	for (size_t len = strlen(path); len > 1 && path[len - 1] == '/'; len--)
		path[len - 1] = '\0';
	size_t first_made = 0;
	if (make_dirs(path, &first_made, r) == 0)
		write_probe(path, r);
	remove_made(path, first_made);
}

int preflight_run(const struct preflight_request *req, const struct lima_instance *inst,
		  pid_t vm_pid, struct preflight *pf)
{
	struct preflight_guest_facts g = {0};
	struct preflight_docker_facts d = {0};
	struct preflight_host_memory_facts h;
	struct preflight_stop_facts s;
	struct preflight_results_facts r;
	preflight_gather_results(req->results_dir ? req->results_dir : ".", &r);
	gather_host_memory(req, &h);
	gather_stop(inst, vm_pid, &s);
	preflight_judge_host_only(req, &h, &s, &r, pf);
	if (pf->exit_code != VMC_EXIT_OK)
		return pf->exit_code;
	if (req->fill)
		gather_guest(req, inst, &g);
	else
		gather_docker(req, inst, &d);
	preflight_judge(req, req->fill ? &g : NULL, req->fill ? NULL : &d, &h, &s, &r, pf);
	preflight_guest_facts_free(&g);
	return pf->exit_code;
}

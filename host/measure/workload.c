/* SPDX-License-Identifier: Apache-2.0 */
/* Workloads for memtest and load: fill (limactl shell) and pgbench (Docker Engine API). */
#include "measure/workload.h"

#include "clients/process.h"
#include "clock.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "procfs.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- fill ----------------------------------------------------------------------------------- */

/*
 * One 64 MiB block of /dev/urandom is written over and over: every page is incompressible (a
 * compressor works page by page), and the guest spends its time writing memory, not in its
 * entropy pool (urandom runs at ~45 MiB/s under TCG).
 *
 * Killing `limactl shell` does not kill the script in the guest (no terminal, no SIGHUP), so an
 * interrupted run's script can outlive its cleanup. Every name carries the run's id, so such a
 * script never touches the next run's files, and it stops as soon as it finds its seed removed.
 */
const char workload_fill_script[] =
    "set -eu\n"
    "mib=$1 shm=$2 dir=$3 run=$4\n"
    "blk=64\n"
    "[ \"$mib\" -lt $blk ] && blk=$mib\n"
    "n=$(( (mib + blk - 1) / blk ))\n"
    "seed=$shm/vmcost-fill.$run.seed\n"
    "mkdir -p \"$dir\"\n"
    "dd if=/dev/urandom of=\"$seed\" bs=1048576 count=$blk 2>/dev/null\n"
    "[ -e \"$seed\" ] || exit 1\n"
    "i=0\n"
    "while [ $i -lt $n ]; do cat \"$seed\"; i=$((i + 1)); done >\"$shm/vmcost-fill.$run.tmp\"\n"
    "rm -f \"$shm/vmcost-fill.$run.tmp\"\n"
    "i=0\n"
    "while [ $i -lt $n ] && [ -e \"$seed\" ]; do\n"
    "\tcat \"$seed\" >\"$dir/vmcost-fill.$run.$i\"; i=$((i + 1))\n"
    "done\n"
    "[ -e \"$seed\" ] || exit 1\n"
    "rm -f \"$seed\"\n"
    "sync\n"
    "cat \"$dir\"/vmcost-fill.$run.* >/dev/null\n"
    "echo \"vmcost-fill tmpfs_mib=$((n * blk)) cache_mib=$((n * blk))\"\n";

const char workload_fill_cleanup_script[] =
    "rm -f \"$1/vmcost-fill.$3.seed\" \"$1/vmcost-fill.$3.tmp\"; rm -rf \"$2\"\n";

/* The run's id in the guest's file names: this process, which runs the fill and its cleanup. */
static void fill_run_id(char *buf, size_t size)
{
	snprintf(buf, size, "%ld", (long)getpid());
}

void workload_fill_bytes(uint64_t size, uint64_t *tmpfs_peak, uint64_t *files)
{
	uint64_t mib = (size + VMC_MIB - 1) / VMC_MIB;
	if (mib == 0)
		mib = 1;
	uint64_t blk = mib < WORKLOAD_FILL_BLOCK / VMC_MIB ? mib : WORKLOAD_FILL_BLOCK / VMC_MIB;
	uint64_t n = (mib + blk - 1) / blk;
	*tmpfs_peak = (n + 1) * blk * VMC_MIB;
	*files = n * blk * VMC_MIB;
}

int workload_fill_parse(const char *out, struct workload_fill_result *res)
{
	const char *line = vmc_find_key(out, "vmcost-fill ");
	if (!line)
		return -1;
	const char *t = strstr(line, "tmpfs_mib="), *c = strstr(line, "cache_mib=");
	if (!t || !c)
		return -1;
	t += strlen("tmpfs_mib=");
	c += strlen("cache_mib=");
	uint64_t tm, cm;
	if (vmc_parse_u64(&t, &tm) != 0 || vmc_parse_u64(&c, &cm) != 0)
		return -1;
	res->tmpfs_bytes = tm * VMC_MIB;
	res->cache_bytes = cm * VMC_MIB;
	return 0;
}

static const char *fill_dir(const struct workload_fill_plan *plan)
{
	return plan->dir && *plan->dir ? plan->dir : "/var/tmp/vmcost-fill";
}

static const char *fill_tmpfs(const struct workload_fill_plan *plan)
{
	return plan->tmpfs_dir && *plan->tmpfs_dir ? plan->tmpfs_dir : "/dev/shm";
}

static void shell_error(const char *what, const char *name, const struct process_result *r,
			char *err, size_t errsize)
{
	char last[300];
	process_last_line(r->err_len ? r->err : r->out, last, sizeof last);
	if (r->timed_out)
		snprintf(err, errsize, "%s in instance \"%s\" timed out", what, name);
	else
		snprintf(err, errsize, "%s in instance \"%s\" failed (exit %d): %s", what, name,
			 r->exit_code, *last ? last : "no output");
}

int workload_fill(const struct lima_instance *inst, const struct workload_fill_plan *plan,
		  volatile sig_atomic_t *stop, struct workload_fill_result *res, char *err,
		  size_t errsize)
{
	memset(res, 0, sizeof *res);
	char mib[32];
	uint64_t m = (plan->size + VMC_MIB - 1) / VMC_MIB;
	snprintf(mib, sizeof mib, "%" PRIu64, m ? m : 1);
	char run[24];
	fill_run_id(run, sizeof run);
	const char *argv[] = {
	    "limactl",	   "shell", inst->name,	      "sh",	      "-c", workload_fill_script,
	    "vmcost-fill", mib,	    fill_tmpfs(plan), fill_dir(plan), run,  NULL};
	/* Generous: TCG writes about 200 MiB/s, a Mac several GiB/s. */
	long timeout_ms = 600000 + (long)(m / 1024 + 1) * 120000;
	double t0 = vmc_monotonic_s();
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = timeout_ms, .stop = stop},
			&r) != 0) {
		vmc_errorf(err, errsize, "cannot run limactl (is Lima installed and on PATH?):");
		return VMC_EXIT_FAILURE;
	}
	res->seconds = vmc_monotonic_s() - t0;
	int rc = VMC_EXIT_OK;
	if (r.interrupted) {
		snprintf(err, errsize, "interrupted");
		rc = VMC_EXIT_INTERRUPTED;
	} else if (r.exit_code != 0 || workload_fill_parse(r.out, res) != 0) {
		shell_error("the fill workload", inst->name, &r, err, errsize);
		rc = VMC_EXIT_FAILURE;
	}
	process_result_free(&r);
	return rc;
}

int workload_fill_cleanup(const struct lima_instance *inst, const struct workload_fill_plan *plan,
			  char *err, size_t errsize)
{
	char run[24];
	fill_run_id(run, sizeof run);
	const char *argv[] = {"limactl",
			      "shell",
			      inst->name,
			      "sh",
			      "-c",
			      workload_fill_cleanup_script,
			      "vmcost-fill",
			      fill_tmpfs(plan),
			      fill_dir(plan),
			      run,
			      NULL};
	struct process_result r;
	if (process_run(argv, &(struct process_options){.timeout_ms = 120000}, &r) != 0) {
		vmc_errorf(err, errsize, "cannot run limactl:");
		return VMC_EXIT_FAILURE;
	}
	int rc = VMC_EXIT_OK;
	if (r.exit_code != 0) {
		shell_error("removing the fill files", inst->name, &r, err, errsize);
		rc = VMC_EXIT_FAILURE;
	}
	process_result_free(&r);
	return rc;
}

/* ---- pgbench -------------------------------------------------------------------------------- */

/* "tps = 812.409877 (without initial connection time)": lib's plain decimal, no locale. */
static int key_double(const char *buf, const char *key, double *v)
{
	const char *p = vmc_find_key(buf, key);
	return p ? vmc_parse_decimal(&p, v) : -1;
}

int workload_pgbench_parse(const char *out, struct workload_pg_run *run)
{
	if (!out || key_double(out, "tps =", &run->tps) != 0)
		return -1;
	run->has_latency = key_double(out, "latency average =", &run->latency_ms) == 0;
	uint64_t n = 0;
	if (vmc_key_u64(out, "number of transactions actually processed:", &n) == 0)
		run->transactions = n;
	return 0;
}

json_t *workload_pg_run_json(const struct workload_pg_run *run)
{
	json_t *j = json_pack("{s:i, s:i, s:f, s:f}", "clients", run->clients, "threads",
			      run->threads, "duration_s", run->duration, "tps", run->tps);
	json_object_set_new(j, "latency_ms",
			    run->has_latency ? json_real(run->latency_ms) : json_null());
	json_object_set_new(j, "transactions", vmc_json_u64(run->transactions));
	return j;
}

static void note(struct workload_pg_session *pg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct workload_pg_session *pg, const char *fmt, ...)
{
	if (!pg->note)
		return;
	char text[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	pg->note(text, pg->note_ctx);
}

static bool stopped(const struct workload_pg_session *pg)
{
	return pg->stop && *pg->stop;
}

/* Sums the layers' download progress for one status line. */
struct pull_progress {
	struct workload_pg_session *pg;
	char ids[64][80];
	uint64_t current[64], total[64];
	size_t n;
};

static void on_pull(const struct docker_pull_event *ev, void *ctx)
{
	struct pull_progress *pp = ctx;
	if (!ev->id || !ev->status || strcmp(ev->status, "Downloading") != 0 || !ev->total)
		return;
	size_t i = 0;
	while (i < pp->n && strcmp(pp->ids[i], ev->id) != 0)
		i++;
	if (i == pp->n) {
		if (pp->n == 64)
			return;
		snprintf(pp->ids[pp->n++], sizeof pp->ids[0], "%s", ev->id);
	}
	pp->current[i] = ev->current;
	pp->total[i] = ev->total;
	uint64_t cur = 0, tot = 0;
	for (size_t k = 0; k < pp->n; k++) {
		cur += pp->current[k];
		tot += pp->total[k];
	}
	char a[32], b[32];
	note(pp->pg, "pulling %s: %s of %s", pp->pg->image, vmc_format_bytes(cur, a, sizeof a),
	     vmc_format_bytes(tot, b, sizeof b));
}

static int ensure_image(struct workload_pg_session *pg, bool pull, char *err, size_t errsize)
{
	bool present = false;
	int rc = docker_image_present(&pg->docker, pg->image, &present, err, errsize);
	if (rc != VMC_EXIT_OK || present)
		return rc;
	if (!pull) {
		snprintf(
		    err, errsize,
		    "image %s is not in the Docker of instance \"%s\" and --no-pull was given: "
		    "docker pull %s (or docker load it) first",
		    pg->image, pg->docker.instance, pg->image);
		return VMC_EXIT_DOCKER;
	}
	note(pg, "pulling %s", pg->image);
	struct pull_progress *pp = calloc(1, sizeof *pp);
	if (!pp) {
		snprintf(err, errsize, "out of memory");
		return VMC_EXIT_FAILURE;
	}
	pp->pg = pg;
	rc = docker_image_pull(&pg->docker, pg->image, on_pull, pp, err, errsize);
	free(pp);
	if (rc == VMC_EXIT_OK)
		pg->pulled = true;
	return rc;
}

static const char *const PG_TCP[] = {"-h", "127.0.0.1", "-U", "postgres"};

/* Keeps the last complete line of exec output for the status line. */
struct exec_lines {
	struct workload_pg_session *pg;
	const char *prefix;
	char line[200];
	size_t len;
};

static void on_exec_output(int stream, const char *data, size_t len, void *ctx)
{
	(void)stream;
	struct exec_lines *el = ctx;
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n' || data[i] == '\r') {
			if (el->len > 0) {
				el->line[el->len] = '\0';
				note(el->pg, "%s: %s", el->prefix, el->line);
			}
			el->len = 0;
		} else if (el->len + 1 < sizeof el->line) {
			el->line[el->len++] = data[i];
		}
	}
}

static int exec_pg(struct workload_pg_session *pg, const char *const *argv, long timeout_ms,
		   const char *prefix, struct docker_exec_result *res, char *err, size_t errsize)
{
	struct exec_lines el = {.pg = pg, .prefix = prefix};
	return docker_exec_stream(&pg->docker, pg->id, argv, NULL, timeout_ms, on_exec_output, &el,
				  res, err, errsize);
}

static int wait_ready(struct workload_pg_session *pg, double t0, double timeout_s, char *err,
		      size_t errsize)
{
	const char *const argv[] = {"pg_isready", PG_TCP[0], PG_TCP[1], PG_TCP[2], PG_TCP[3], NULL};
	for (;;) {
		if (stopped(pg)) {
			snprintf(err, errsize, "interrupted");
			return VMC_EXIT_INTERRUPTED;
		}
		struct docker_exec_result res;
		int rc = docker_exec(&pg->docker, pg->id, argv, NULL, 30000, &res, err, errsize);
		long code = res.exit_code;
		docker_exec_result_free(&res);
		if (rc == VMC_EXIT_OK && code == 0)
			return VMC_EXIT_OK;
		bool running = false;
		if (docker_container_running(&pg->docker, pg->id, &running, err, errsize) ==
			VMC_EXIT_OK &&
		    !running) {
			snprintf(
			    err, errsize,
			    "the postgres container exited before it was ready: docker logs %s "
			    "shows why (vmcost keeps it until the next run)",
			    WORKLOAD_PG_CONTAINER);
			pg->id[0] = '\0'; /* keep it for docker logs */
			return VMC_EXIT_DOCKER;
		}
		if (vmc_monotonic_s() - t0 > timeout_s) {
			snprintf(err, errsize,
				 "postgres was not ready after %.0f s (pg_isready): "
				 "docker logs %s shows why",
				 timeout_s, WORKLOAD_PG_CONTAINER);
			return VMC_EXIT_DOCKER;
		}
		note(pg, "waiting for postgres (%.0f s)", vmc_monotonic_s() - t0);
		sleep(1);
	}
}

int workload_pg_start(struct workload_pg_session *pg, const struct lima_instance *inst,
		      const char *image, bool pull, double timeout_s, char *err, size_t errsize)
{
	docker_init_instance(&pg->docker, inst);
	snprintf(pg->image, sizeof pg->image, "%s", image ? image : WORKLOAD_PG_IMAGE);
	pg->id[0] = '\0';
	json_t *version = NULL;
	int rc = docker_version(&pg->docker, &version, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	snprintf(pg->server_version, sizeof pg->server_version, "%s",
		 vmc_json_get_str(version, "Version"));
	json_decref(version);
	rc = ensure_image(pg, pull, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	double t0 = vmc_monotonic_s();
	/* A container left by an interrupted run would make the name conflict. */
	rc = docker_container_remove(&pg->docker, WORKLOAD_PG_CONTAINER, err, errsize);
	if (rc != VMC_EXIT_OK)
		return rc;
	json_t *config = json_pack("{s:s, s:[s, s], s:{s:s}, s:{s:I}}", "Image", pg->image, "Env",
				   "POSTGRES_HOST_AUTH_METHOD=trust", "POSTGRES_PASSWORD=vmcost",
				   "Labels", "org.vmcost.run", "pgbench", "HostConfig", "ShmSize",
				   (json_int_t)(256 << 20));
	note(pg, "starting %s", pg->image);
	rc = docker_container_create(&pg->docker, WORKLOAD_PG_CONTAINER, config, pg->id,
				     sizeof pg->id, err, errsize);
	json_decref(config);
	if (rc == VMC_EXIT_OK)
		rc = docker_container_start(&pg->docker, pg->id, err, errsize);
	if (rc == VMC_EXIT_OK)
		rc = wait_ready(pg, t0, timeout_s, err, errsize);
	pg->ready_seconds = vmc_monotonic_s() - t0;
	return rc;
}

static void exec_failure(const char *what, const struct docker_exec_result *res, char *err,
			 size_t errsize)
{
	char last[300];
	process_last_line(res->errout_len ? res->errout : res->out, last, sizeof last);
	snprintf(err, errsize, "%s exited with %ld: %s", what, res->exit_code,
		 *last ? last : "no output");
}

int workload_pg_init(struct workload_pg_session *pg, int scale, char *err, size_t errsize)
{
	char s[16];
	snprintf(s, sizeof s, "%d", scale);
	const char *const argv[] = {"pgbench", PG_TCP[0], PG_TCP[1], PG_TCP[2],	 PG_TCP[3], "-i",
				    "-s",      s,	  "-q",	     "postgres", NULL};
	double t0 = vmc_monotonic_s();
	note(pg, "pgbench -i -s %d", scale);
	struct docker_exec_result res;
	int rc = exec_pg(pg, argv, 0, "pgbench -i", &res, err, errsize);
	if (rc == VMC_EXIT_OK && res.exit_code != 0) {
		exec_failure("pgbench -i", &res, err, errsize);
		rc = VMC_EXIT_DOCKER;
	}
	docker_exec_result_free(&res);
	pg->init_seconds = vmc_monotonic_s() - t0;
	pg->scale = scale;
	return stopped(pg) ? VMC_EXIT_INTERRUPTED : rc;
}

int workload_pg_bench(struct workload_pg_session *pg, int clients, double seconds,
		      struct workload_pg_run *run, char *err, size_t errsize)
{
	memset(run, 0, sizeof *run);
	run->clients = run->threads = clients;
	run->duration = seconds;
	char c[16], t[16];
	snprintf(c, sizeof c, "%d", clients);
	snprintf(t, sizeof t, "%.0f", seconds);
	/* -P 5: progress every 5 s keeps the stream alive, so an interrupt is seen promptly. */
	const char *const argv[] = {"pgbench", PG_TCP[0], PG_TCP[1], PG_TCP[2],	 PG_TCP[3],
				    "-c",      c,	  "-j",	     c,		 "-T",
				    t,	       "-P",	  "5",	     "postgres", NULL};
	note(pg, "pgbench -c %d -T %s", clients, t);
	struct docker_exec_result res;
	/* The run itself plus a vacuum that may take long under emulation. */
	long timeout_ms = (long)(seconds * 1000) + 30L * 60 * 1000;
	int rc = exec_pg(pg, argv, timeout_ms, "pgbench", &res, err, errsize);
	if (rc == VMC_EXIT_OK && res.exit_code != 0) {
		exec_failure("pgbench", &res, err, errsize);
		rc = VMC_EXIT_DOCKER;
	} else if (rc == VMC_EXIT_OK && workload_pgbench_parse(res.out, run) != 0) {
		snprintf(err, errsize, "pgbench printed no \"tps =\" line");
		rc = VMC_EXIT_DOCKER;
	}
	docker_exec_result_free(&res);
	return stopped(pg) ? VMC_EXIT_INTERRUPTED : rc;
}

int workload_pg_remove(struct workload_pg_session *pg, char *err, size_t errsize)
{
	if (!pg->id[0])
		return VMC_EXIT_OK;
	note(pg, "removing the postgres container");
	int rc = docker_container_remove(&pg->docker, pg->id, err, errsize);
	if (rc == VMC_EXIT_OK)
		pg->id[0] = '\0';
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost disk NAME [DURATION]: what an idle VM writes, seen three ways: bytes the VM process
 * wrote on the host, bytes the guest wrote to its disks, and the growth of the instance's
 * ha.stderr.log (Lima's hostagent log, DEBUG level, never rotated: docs/lima.md#host-side-logs).
 */
#include "clients/agent_client.h"
#include "clients/process.h"
#include "clock.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "diskstats.h"
#include "jsonutil.h"
#include "log.h"
#include "measure/vm_sample.h"
#include "message.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DISK_DEFAULT_DURATION 60.0
#define GUEST_READ_TIMEOUT_MS 30000

static const struct cli_spec spec = {
    .name = "disk",
    .synopsis = "NAME [DURATION] [--pid PID] [--json]",
    .help = "Measures for DURATION (default 60 s; 180, 3m...) what instance NAME writes:\n"
	    "  host   bytes the VM process wrote to the host's disks (on macOS also the logical\n"
	    "         writes: the physical count misses write-back done by the kernel later)\n"
	    "  guest  bytes the guest wrote to its own disks (/proc/diskstats, through\n"
	    "         vmcost-agent, else limactl shell)\n"
	    "  log    growth of $LIMA_HOME/NAME/ha.stderr.log, which Lima never rotates\n"
	    "and projects each to a day. An idle, tuned guest writes 0 bytes.\n\n"
	    "  --pid PID  measure this process (when several vz helpers run)\n"
	    "  --json     machine-readable output\n\n"
	    "Example: vmcost disk dev 180\n",
    .flags = CLI_PID,
    .min_args = 1,
    .max_args = 2,
};

struct guest_disks {
	struct vmc_diskstats ds;
	const char *source; /* "vmcost-agent" or "limactl shell" */
	bool ok;
	char error[512];
};

/* The agent's status may carry "disks": [{"name": "vda", "written_bytes": N}, ...]. */
static int disks_from_agent(const struct lima_instance *inst, struct vmc_diskstats *ds)
{
	json_t *doc;
	char err[512];
	if (agent_call(inst, "GET", "/v1/status", NULL, 5000, &doc, err, sizeof err) != VMC_EXIT_OK)
		return -1;
	json_t *disks = json_object_get(doc, "disks");
	if (!json_is_array(disks)) {
		json_decref(doc);
		return -1;
	}
	memset(ds, 0, sizeof *ds);
	size_t i;
	json_t *d;
	json_array_foreach(disks, i, d)
	{
		const char *name = vmc_json_get_str(d, "name");
		uint64_t written;
		if (!name || vmc_json_get_u64(d, "written_bytes", &written) < 0 ||
		    ds->n >= VMC_DISKSTATS_MAX)
			continue;
		vmc_textf(ds->disk[ds->n].name, sizeof ds->disk[ds->n].name, "%s", name);
		ds->disk[ds->n++].written_bytes = written;
	}
	json_decref(doc);
	return 0;
}

static int disks_from_shell(const struct lima_instance *inst, struct vmc_diskstats *ds, char *err,
			    size_t errsize)
{
	const char *argv[] = {"limactl", "shell", inst->name, "cat", "/proc/diskstats", NULL};
	struct process_result res;
	if (process_run(argv, &(struct process_options){.timeout_ms = GUEST_READ_TIMEOUT_MS},
			&res) < 0) {
		vmc_textf(err, errsize, "limactl is not on PATH, and the agent reports no disks");
		return -1;
	}
	int rc = -1;
	if (res.timed_out || res.exit_code != 0)
		vmc_textf(err, errsize, "limactl shell %s cat /proc/diskstats failed (exit %d)",
			  inst->name, res.exit_code);
	else if (vmc_diskstats_parse(res.out, ds) < 0)
		vmc_textf(err, errsize, "the guest's /proc/diskstats is malformed");
	else
		rc = 0;
	process_result_free(&res);
	return rc;
}

static void read_guest(const struct lima_instance *inst, struct guest_disks *g)
{
	g->ok = false;
	if (disks_from_agent(inst, &g->ds) == 0) {
		g->source = "vmcost-agent";
		g->ok = true;
	} else if (disks_from_shell(inst, &g->ds, g->error, sizeof g->error) == 0) {
		g->source = "limactl shell";
		g->ok = true;
	}
}

/* Size of ha.stderr.log, or -1 if it does not exist (foreground start, vz in a GUI...). */
static long long log_size(const struct lima_instance *inst)
{
	char path[4200];
	struct stat st;
	if (lima_instance_path(inst, "ha.stderr.log", path, sizeof path) < 0 || stat(path, &st) < 0)
		return -1;
	return (long long)st.st_size;
}

struct disk_run {
	double seconds;
	struct vm_sample a, b;
	struct guest_disks ga, gb;
	long long log_a, log_b;
};

static uint64_t delta(uint64_t before, uint64_t after)
{
	return after > before ? after - before : 0;
}

static double per_day(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double)bytes / seconds * 86400.0 : 0;
}

static json_t *rate_json(uint64_t bytes, double seconds)
{
	return json_pack("{s:o,s:f,s:f}", "bytes", vmc_json_u64(bytes), "per_s",
			 seconds > 0 ? (double)bytes / seconds : 0.0, "per_day",
			 per_day(bytes, seconds));
}

static json_t *guest_json(const struct disk_run *r)
{
	if (!r->ga.ok || !r->gb.ok)
		return json_pack("{s:n,s:s}", "source", "error",
				 r->ga.ok ? r->gb.error : r->ga.error);
	json_t *disks = json_array();
	uint64_t total = 0;
	for (size_t i = 0; i < r->gb.ds.n; i++) {
		const struct vmc_disk_io *after = &r->gb.ds.disk[i];
		const struct vmc_disk_io *before = vmc_diskstats_find(&r->ga.ds, after->name);
		uint64_t d = delta(before ? before->written_bytes : 0, after->written_bytes);
		total += d;
		json_t *j = rate_json(d, r->seconds);
		json_object_set_new(j, "name", json_string(after->name));
		json_array_append_new(disks, j);
	}
	json_t *g = rate_json(total, r->seconds);
	json_object_set_new(g, "source", json_string(r->gb.source));
	json_object_set_new(g, "disks", disks);
	return g;
}

static json_t *run_json(const struct lima_instance *inst, const struct vmproc *vp,
			const struct disk_run *r)
{
	json_t *host = json_object();
	json_t *vm = rate_json(delta(r->a.vm.disk_written, r->b.vm.disk_written), r->seconds);
	json_object_set_new(vm, "pid", json_integer(vp->pid));
	if (r->b.vm.has_logical_writes)
		json_object_set_new(
		    vm, "logical",
		    rate_json(delta(r->a.vm.logical_written, r->b.vm.logical_written), r->seconds));
	json_object_set_new(host, "vm_process", vm);
	if (r->a.has_ha && r->b.has_ha) {
		json_t *ha =
		    rate_json(delta(r->a.ha.disk_written, r->b.ha.disk_written), r->seconds);
		json_object_set_new(ha, "pid", json_integer(vp->hostagent_pid));
		json_object_set_new(host, "hostagent", ha);
	} else {
		json_object_set_new(host, "hostagent", json_null());
	}
	json_t *log = json_null();
	if (r->log_a >= 0 && r->log_b >= 0) {
		/* Lima recreates the log at every start: a shrink means a restart happened. */
		uint64_t growth = r->log_b >= r->log_a ? (uint64_t)(r->log_b - r->log_a) : 0;
		log = rate_json(growth, r->seconds);
		json_object_set_new(log, "size", json_integer(r->log_b));
	}
	json_t *j = json_object();
	json_object_set_new(j, "instance", json_string(inst->name));
	json_object_set_new(j, "vm_type", json_string(inst->vm_type));
	json_object_set_new(j, "method", json_string(vp->method));
	json_object_set_new(j, "duration_s", json_real(r->seconds));
	json_object_set_new(j, "host", host);
	json_object_set_new(j, "guest", guest_json(r));
	json_object_set_new(j, "ha_stderr_log", log);
	return j;
}

static void print_rate(const char *label, uint64_t bytes, double seconds)
{
	char a[32], b[32];
	printf("  %-22s %12s   %s/day\n", label, vmc_format_bytes(bytes, a, sizeof a),
	       vmc_format_bytes((uint64_t)per_day(bytes, seconds), b, sizeof b));
}

static void print_human(const struct lima_instance *inst, const struct vmproc *vp,
			const struct disk_run *r)
{
	char a[32], label[64];
	printf("Writes by %s over %s\n\n", inst->name,
	       vmc_format_duration(r->seconds, a, sizeof a));
	printf("%shost%s\n", cli_bold(), cli_reset());
	print_rate(vmc_textf(label, sizeof label, "VM process (pid %ld)", (long)vp->pid),
		   delta(r->a.vm.disk_written, r->b.vm.disk_written), r->seconds);
	if (r->b.vm.has_logical_writes)
		print_rate("  logical writes",
			   delta(r->a.vm.logical_written, r->b.vm.logical_written), r->seconds);
	if (r->a.has_ha && r->b.has_ha)
		print_rate(
		    vmc_textf(label, sizeof label, "hostagent (pid %ld)", (long)vp->hostagent_pid),
		    delta(r->a.ha.disk_written, r->b.ha.disk_written), r->seconds);
	printf("%sguest%s", cli_bold(), cli_reset());
	if (!r->ga.ok || !r->gb.ok) {
		printf("  not measured: %s\n", r->ga.ok ? r->gb.error : r->ga.error);
	} else {
		printf(" (through %s)\n", r->gb.source);
		for (size_t i = 0; i < r->gb.ds.n; i++) {
			const struct vmc_disk_io *after = &r->gb.ds.disk[i];
			const struct vmc_disk_io *before =
			    vmc_diskstats_find(&r->ga.ds, after->name);
			print_rate(after->name,
				   delta(before ? before->written_bytes : 0, after->written_bytes),
				   r->seconds);
		}
		if (r->gb.ds.n == 0)
			printf("  no disks found in the guest's /proc/diskstats\n");
	}
	printf("%slog%s\n", cli_bold(), cli_reset());
	if (r->log_a >= 0 && r->log_b >= 0) {
		print_rate("ha.stderr.log growth",
			   r->log_b >= r->log_a ? (uint64_t)(r->log_b - r->log_a) : 0, r->seconds);
		printf(
		    "  %-22s %12s   (Lima never rotates it; it restarts empty with the instance)\n",
		    "ha.stderr.log size", vmc_format_bytes((uint64_t)r->log_b, a, sizeof a));
	} else {
		printf("  no ha.stderr.log in %s\n", inst->dir);
	}
}

int cmd_disk(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	double duration = DISK_DEFAULT_DURATION;
	if (o.nargs >= 2 && cli_duration(o.args[1], &duration) < 0)
		return cli_fail(&o, VMC_EXIT_USAGE,
				"DURATION \"%s\" is not a duration such as 180, 3m or 500ms",
				o.args[1]);
	struct lima_instance inst;
	struct vmproc vp;
	if ((rc = cli_vm_process(&o, o.args[0], &inst, &vp)) != VMC_EXIT_OK)
		return rc;
	cli_catch_signals();
	struct disk_run r;
	memset(&r, 0, sizeof r);
	char err[1024];
	/* The guest is read first and last, outside the measured host window's edges, so the
	 * reads' own cost lands before and after it. */
	cli_progress("reading the guest's disk counters");
	read_guest(&inst, &r.ga);
	r.log_a = log_size(&inst);
	if ((rc = measure_vm(&vp, &r.a, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	double end = r.a.vm.taken_at + duration;
	while (vmc_monotonic_s() < end) {
		cli_progress("measuring writes, %.0f s left", end - vmc_monotonic_s());
		if (!cli_sleep(end - vmc_monotonic_s() > 1 ? 1 : end - vmc_monotonic_s())) {
			cli_progress_done();
			return cli_fail(&o, VMC_EXIT_INTERRUPTED, "interrupted: nothing measured");
		}
	}
	if ((rc = measure_vm(&vp, &r.b, err, sizeof err)) != VMC_EXIT_OK)
		return cli_fail(&o, rc, "%s", err);
	r.log_b = log_size(&inst);
	if (r.ga.ok)
		read_guest(&inst, &r.gb);
	else
		r.gb = r.ga;
	cli_progress_done();
	r.seconds = r.b.vm.taken_at - r.a.vm.taken_at;
	if (o.json)
		return cli_print_json(run_json(&inst, &vp, &r));
	print_human(&inst, &vp, &r);
	return VMC_EXIT_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The trim policy on a fake /proc and /sys, with a fake kernel behind the write seam: it
 * answers memory.reclaim like 6.18 (takes "swappiness=0") or 6.1 (EINVAL for it), can return
 * EAGAIN or ENOENT, and shrinks the fake page cache in /proc/meminfo as a real reclaim would.
 */
#include "agent.h"
#include "check.h"
#include "config.h"
#include "fakeroot.h"
#include "golden.h"
#include "jsonutil.h"
#include "print_capture.h"
#include "state.h"
#include "trim.h"
#include "trim_pass.h"
#include "trim_policy.h"
#include "units.h"

#include <inttypes.h>

#define KIB 1024ull
#define MIB (1024ull * KIB)

/* ---- the fake kernel ------------------------------------------------------------------ */

struct fake_kernel {
	double clock;
	double slept;
	bool kernel_61;		    /* EINVAL for "swappiness=" */
	int reclaim_errno;	    /* forced errno for every memory.reclaim write (0 = behave) */
	int drop_errno;		    /* the same for drop_caches */
	unsigned overshoot_percent; /* reclaims this much more than asked, as 6.1 does */
	bool eagain_when_short;	    /* EAGAIN when less than asked could be reclaimed */
	uint64_t file_kb;	    /* Inactive(file), what reclaim takes */
	uint64_t free_kb;
	uint64_t total_kb;
	uint64_t swap_kb;
	uint64_t unreclaimable_kb; /* cache the kernel refuses to give up (hot pages) */
	int nwrites;
	char writes[40][96];	     /* "path <- data" */
	struct agent_state *reenter; /* call agent_trim from inside the first write */
	const struct agent_config *reenter_cfg;
	char reenter_decision[32];
};

static struct fake_kernel fk;

static void write_meminfo(void)
{
	char buf[1024];
	snprintf(buf, sizeof buf,
		 "MemTotal:       %" PRIu64 " kB\n"
		 "MemFree:        %" PRIu64 " kB\n"
		 "MemAvailable:   %" PRIu64 " kB\n"
		 "Buffers:             0 kB\n"
		 "Cached:         %" PRIu64 " kB\n"
		 "Active(file):    10240 kB\n"
		 "Inactive(file): %" PRIu64 " kB\n"
		 "Shmem:            1024 kB\n"
		 "SReclaimable:    20480 kB\n"
		 "SwapTotal:      %" PRIu64 " kB\n"
		 "SwapFree:       %" PRIu64 " kB\n",
		 fk.total_kb, fk.free_kb, fk.free_kb + fk.file_kb, fk.file_kb + 10240, fk.file_kb,
		 fk.swap_kb, fk.swap_kb);
	fakeroot_write("/proc/meminfo", buf);
}

static int fake_write(void *ctx, const char *path, const char *data)
{
	(void)ctx;
	if (fk.nwrites < 40)
		snprintf(fk.writes[fk.nwrites++], sizeof fk.writes[0], "%s <- %s", path, data);
	if (fk.reenter) {
		struct agent_state *st = fk.reenter;
		fk.reenter = NULL;
		char err[128];
		json_t *doc = agent_trim(st, fk.reenter_cfg, false, true, err, sizeof err);
		snprintf(fk.reenter_decision, sizeof fk.reenter_decision, "%s",
			 doc ? json_string_value(json_object_get(doc, "decision")) : "NULL");
		json_decref(doc);
	}
	if (strcmp(path, TRIM_RECLAIM_PATH) == 0) {
		if (fk.reclaim_errno) {
			errno = fk.reclaim_errno;
			return -1;
		}
		if (fk.kernel_61 && strstr(data, "swappiness")) {
			errno = EINVAL;
			return -1;
		}
		uint64_t ask_kb = strtoull(data, NULL, 10) / 1024;
		uint64_t take_kb = ask_kb + ask_kb * fk.overshoot_percent / 100;
		uint64_t can =
		    fk.file_kb > fk.unreclaimable_kb ? fk.file_kb - fk.unreclaimable_kb : 0;
		uint64_t got = take_kb < can ? take_kb : can;
		fk.file_kb -= got;
		fk.free_kb += got;
		write_meminfo();
		if (got < ask_kb && fk.eagain_when_short) {
			errno = EAGAIN;
			return -1;
		}
		return 0;
	}
	if (strcmp(path, TRIM_DROP_CACHES_PATH) == 0) {
		if (fk.drop_errno) {
			errno = fk.drop_errno;
			return -1;
		}
		fk.free_kb += fk.file_kb;
		fk.file_kb = 0;
		write_meminfo();
		return 0;
	}
	if (strcmp(path, TRIM_COMPACT_PATH) == 0)
		return 0;
	errno = ENOENT;
	return -1;
}

static double fake_now(void *ctx)
{
	(void)ctx;
	return fk.clock;
}

static void fake_sleep(void *ctx, double s)
{
	(void)ctx;
	fk.slept += s;
	fk.clock += s;
}

/* ---- fake trees ------------------------------------------------------------------------- */

static uint64_t stat_busy, stat_idle;

static void write_stat(void)
{
	char buf[256];
	snprintf(buf, sizeof buf, "cpu  %" PRIu64 " 0 0 %" PRIu64 " 0 0 0 0 0 0\nctxt 100\n",
		 stat_busy, stat_idle);
	fakeroot_write("/proc/stat", buf);
}

/* Advances the fake clock and /proc/stat by seconds with busy_percent of 2 CPUs busy. */
static void advance(double seconds, double busy_percent)
{
	uint64_t ticks = (uint64_t)(seconds * 100 * 2);
	uint64_t busy = (uint64_t)((double)ticks * busy_percent / 100.0);
	stat_busy += busy;
	stat_idle += ticks - busy;
	write_stat();
	fk.clock += seconds;
}

static void write_psi(const char *resource, uint64_t total_us)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/pressure/%s", resource);
	snprintf(buf, sizeof buf,
		 "some avg10=0.00 avg60=0.00 avg300=0.00 total=%" PRIu64 "\n"
		 "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		 total_us);
	fakeroot_write(path, buf);
}

static const char features_reporting[] =
    "0100110000000000000000000000010010000000100000000000000000000000\n";
static const char features_no_reporting[] =
    "0100100000000000000000000000010010000000100000000000000000000000\n";

static void make_balloon(const char *features)
{
	fakeroot_remove("/sys/bus");
	fakeroot_remove("/sys/devices");
	if (!features)
		return;
	fakeroot_write("/sys/devices/pci0000:00/0000:00:04.0/virtio1/device", "0x0005\n");
	fakeroot_write("/sys/devices/pci0000:00/0000:00:04.0/virtio1/features", features);
	fakeroot_symlink("../../../../bus/virtio/drivers/virtio_balloon",
			 "/sys/devices/pci0000:00/0000:00:04.0/virtio1/driver");
	fakeroot_symlink("../../../devices/pci0000:00/0000:00:04.0/virtio1",
			 "/sys/bus/virtio/devices/virtio1");
}

static struct agent_config cfg;

/* A 2 GiB guest with 900 MiB of cold page cache, idle, a 6.18 kernel, reporting on. */
static void reset_world(void)
{
	memset(&fk, 0, sizeof fk);
	fk.clock = 1000;
	fk.total_kb = 2 * 1024 * 1024;
	fk.free_kb = 800 * 1024;
	fk.file_kb = 900 * 1024;
	fk.eagain_when_short = true;
	write_meminfo();
	stat_busy = 1000;
	stat_idle = 100000;
	write_stat();
	fakeroot_write("/proc/loadavg", "0.02 0.05 0.01 1/80 999\n");
	fakeroot_remove("/proc/pressure");
	write_psi("cpu", 0);
	write_psi("io", 0);
	write_psi("memory", 0);
	fakeroot_write("/proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
	fakeroot_write("/proc/sys/kernel/osrelease", "6.18.44-0-virt\n");
	fakeroot_write(TRIM_RECLAIM_PATH, "");
	fakeroot_remove(AGENT_STATE_DIR);
	fakeroot_mkdir("/run");
	make_balloon(features_reporting);
	agent_config_defaults(&cfg);
}

static struct agent_state *new_state(void)
{
	struct agent_state *st = agent_state_new();
	struct trim_io io = {fake_write, fake_now, fake_sleep, NULL};
	agent_state_set_io(st, &io);
	return st;
}

/* What GET /v1/status shows of the trim history. */
static json_t *history(struct agent_state *st)
{
	struct agent_state_snapshot snap;
	agent_state_snapshot(st, &snap);
	return agent_state_history_json(&snap);
}

static json_t *trim(struct agent_state *st, bool dry_run, bool force)
{
	char err[256] = "";
	json_t *doc = agent_trim(st, &cfg, dry_run, force, err, sizeof err);
	if (!doc)
		fprintf(stderr, "  agent_trim: %s\n", err);
	return doc;
}

static const char *decision(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "decision"));
}

static const char *reason(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "reason"));
}

static bool wrote(const char *needle)
{
	for (int i = 0; i < fk.nwrites; i++)
		if (strstr(fk.writes[i], needle))
			return true;
	return false;
}

/* ---- pure policy ---------------------------------------------------------------------- */

TEST(idle_needs_every_signal)
{
	agent_config_defaults(&cfg);
	struct trim_idle_inputs in = {
	    .window_s = 600, .cpu_busy_percent = 0.1, .load1 = 0.05, .psi_enabled = true};
	struct trim_idle_verdict v;
	trim_judge_idle(&cfg, &in, &v);
	CHECK(v.idle);
	CHECK_CONTAINS(v.reason, "idle: cpu 0.10 % <= 0.50 % over 600 s");

	struct trim_idle_inputs cpu = in;
	cpu.cpu_busy_percent = 0.6;
	trim_judge_idle(&cfg, &cpu, &v);
	CHECK(!v.idle && v.cpu_busy && !v.load_busy && !v.psi_busy);
	CHECK_CONTAINS(v.reason, "busy: cpu 0.60 % > 0.50 %");

	struct trim_idle_inputs load = in;
	load.load1 = 0.21;
	trim_judge_idle(&cfg, &load, &v);
	CHECK(!v.idle && !v.cpu_busy && v.load_busy);
	CHECK_CONTAINS(v.reason, "load1 0.21 > 0.20");

	struct trim_idle_inputs psi = in;
	psi.psi_io = 1.5;
	trim_judge_idle(&cfg, &psi, &v);
	CHECK(!v.idle && v.psi_busy);
	CHECK_CONTAINS(v.reason, "PSI some cpu/io/memory 0.00/1.50/0.00 %");

	/* PSI disabled: its values are not looked at */
	psi.psi_enabled = false;
	trim_judge_idle(&cfg, &psi, &v);
	CHECK(v.idle);

	struct trim_idle_inputs unknown = in;
	unknown.cpu_busy_percent = -1;
	trim_judge_idle(&cfg, &unknown, &v);
	CHECK(!v.idle && v.cpu_busy);
}

TEST(step_and_floor)
{
	agent_config_defaults(&cfg);
	CHECK_U64(trim_step_bytes(&cfg, 2 * VMC_GIB), 256 * VMC_MIB);  /* 64 MiB -> clamp */
	CHECK_U64(trim_step_bytes(&cfg, 16 * VMC_GIB), 512 * VMC_MIB); /* MemTotal/32 */
	CHECK_U64(trim_step_bytes(&cfg, 64 * VMC_GIB), VMC_GIB);       /* 2 GiB -> clamp */
	cfg.step_bytes = 100 * VMC_MIB;
	CHECK_U64(trim_step_bytes(&cfg, 64 * VMC_GIB), 100 * VMC_MIB);
	struct vmc_meminfo mi = {.active_file = 100 * VMC_MIB,
				 .inactive_file = 200 * VMC_MIB,
				 .sreclaimable = 28 * VMC_MIB};
	CHECK_U64(trim_reclaimable(&mi), 328 * VMC_MIB);
	CHECK_U64(trim_target_bytes(&mi, 128 * VMC_MIB), 200 * VMC_MIB);
	CHECK_U64(trim_target_bytes(&mi, 400 * VMC_MIB), 0);
}

/* ---- passes on the fake tree ------------------------------------------------------------- */

TEST(busy_cpu_skips_without_writing)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 5.0);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "skipped");
	CHECK_CONTAINS(reason(doc), "busy: cpu 5.00 % > 0.50 % over 600 s");
	CHECK_INT(fk.nwrites, 0);
	CHECK(json_is_false(json_object_get(doc, "ran")));
	char *text = print_capture(trim_print, doc);
	CHECK_GOLDEN(text, "agent-trim-skipped-busy");
	free(text);
	json_decref(doc);
	agent_state_free(st);
}

TEST(busy_load_skips)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.1);
	fakeroot_write("/proc/loadavg", "0.45 0.30 0.20 2/80 999\n");
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "skipped");
	CHECK_CONTAINS(reason(doc), "load1 0.45 > 0.20");
	CHECK_INT(fk.nwrites, 0);
	json_decref(doc);
	agent_state_free(st);
}

TEST(busy_psi_over_the_whole_interval_skips)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.1);
	/* 12 s of io stall in 600 s = 2 %: the 60 s average could have forgotten it */
	write_psi("io", 12 * 1000000ull);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "skipped");
	CHECK_CONTAINS(reason(doc), "0.00/2.00/0.00 %");
	CHECK_INT(fk.nwrites, 0);
	json_decref(doc);
	agent_state_free(st);

	/* Without PSI (psi=0 on Alpine) the same guest is judged by cpu and load alone. */
	reset_world();
	fakeroot_remove("/proc/pressure");
	st = new_state();
	advance(600, 0.1);
	doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK(json_is_null(json_object_get(json_object_get(doc, "idle"), "psi_some_percent")));
	json_decref(doc);
	agent_state_free(st);
}

TEST(idle_618_reclaims_in_steps_to_the_floor_then_compacts)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK(json_is_true(json_object_get(doc, "ran")));
	/* reclaimable 900 + 10 + 20 MiB, floor 128 -> 802 MiB: 256, 256, then half of what is
	 * left (145, 72.5 ...) down to 2 MiB from the floor */
	CHECK_INT(fk.nwrites, 10);
	CHECK_STR(fk.writes[0], TRIM_RECLAIM_PATH " <- 268435456 swappiness=0");
	CHECK_STR(fk.writes[1], TRIM_RECLAIM_PATH " <- 268435456 swappiness=0");
	CHECK_STR(fk.writes[2], TRIM_RECLAIM_PATH " <- 152043520 swappiness=0");
	CHECK_STR(fk.writes[3], TRIM_RECLAIM_PATH " <- 76021760 swappiness=0");
	CHECK_STR(fk.writes[8], TRIM_RECLAIM_PATH " <- 2375680 swappiness=0");
	CHECK_STR(fk.writes[9], TRIM_COMPACT_PATH " <- 1");
	/* 128 MiB floor = 98 inactive + 10 active + 20 slab, reached within 2 x TRIM_MIN_ASK */
	CHECK(fk.file_kb >= 98 * 1024 && fk.file_kb < 102 * 1024);
	CHECK_STR(json_string_value(json_object_get(doc, "reclaim_format")),
		  "<bytes> swappiness=0");
	CHECK(json_is_true(json_object_get(doc, "compacted")));
	uint64_t v = 0;
	vmc_json_get_u64(doc, "reclaimed_bytes", &v);
	CHECK(v > 798 * MIB && v <= 802 * MIB);
	vmc_json_get_u64(doc, "freed_bytes", &v);
	CHECK(v > 798 * MIB && v <= 802 * MIB);
	json_decref(doc);
	agent_state_free(st);
}

TEST(configured_floor_and_step)
{
	reset_world();
	cfg.floor_bytes = 500 * MIB;
	cfg.step_bytes = 300 * MIB;
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	/* 930 - 500 = 430 MiB left: within two steps of 300 MiB, so half of it first */
	CHECK_STR(fk.writes[0], TRIM_RECLAIM_PATH " <- 225443840 swappiness=0");
	CHECK(fk.file_kb + 30 * 1024 >= 500 * 1024 && fk.file_kb + 30 * 1024 < 504 * 1024);
	for (int i = 0; i < fk.nwrites - 1; i++)
		CHECK(strtoull(strstr(fk.writes[i], "<- ") + 3, NULL, 10) <= 300 * MIB);
	json_decref(doc);
	agent_state_free(st);
}

TEST(overshooting_kernel_keeps_the_floor)
{
	reset_world();
	fk.overshoot_percent = 65; /* 6.1 in the lab: asked 128 MiB, reclaimed 212 */
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	/* reclaimable = file + 30 MiB (active + slab) must stay at or above the 128 MiB floor */
	CHECK(fk.file_kb + 30 * 1024 >= 128 * 1024);
	CHECK(fk.file_kb + 30 * 1024 < 136 * 1024);
	json_decref(doc);
	agent_state_free(st);
}

TEST(next_ask_halves_near_the_floor)
{
	CHECK_U64(trim_next_ask(1000 * MIB, 256 * MIB), 256 * MIB);
	CHECK_U64(trim_next_ask(512 * MIB, 256 * MIB), 256 * MIB);
	CHECK_U64(trim_next_ask(300 * MIB, 256 * MIB), 150 * MIB);
	CHECK_U64(trim_next_ask(5 * MIB, 256 * MIB), 2.5 * MIB);
	CHECK_U64(trim_next_ask(3 * MIB, 256 * MIB), 2 * MIB);
}

TEST(below_floor_nothing_to_do)
{
	reset_world();
	fk.file_kb = 50 * 1024;
	write_meminfo();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "nothing-to-do");
	CHECK_CONTAINS(reason(doc), "within the 128 MiB floor");
	CHECK_INT(fk.nwrites, 0);
	json_decref(doc);
	agent_state_free(st);
}

TEST(kernel_61_bytes_only_after_einval_and_remembered)
{
	reset_world();
	fk.kernel_61 = true;
	fakeroot_write("/proc/sys/kernel/osrelease", "6.1.0-57-cloud-amd64\n");
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(fk.writes[0], TRIM_RECLAIM_PATH " <- 268435456 swappiness=0");
	CHECK_STR(fk.writes[1], TRIM_RECLAIM_PATH " <- 268435456");
	CHECK_STR(json_string_value(json_object_get(doc, "reclaim_format")), "<bytes>");
	CHECK(fk.file_kb >= 98 * 1024 && fk.file_kb < 102 * 1024);
	json_decref(doc);
	/* next pass: straight to the byte format */
	fk.file_kb = 600 * 1024;
	write_meminfo();
	fk.nwrites = 0;
	advance(600, 0.2);
	doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(fk.writes[0], TRIM_RECLAIM_PATH " <- 263192576"); /* 502 MiB left: half */
	CHECK(!wrote("swappiness"));
	json_decref(doc);
	agent_state_free(st);
}

TEST(kernel_61_with_swap_uses_drop_caches)
{
	reset_world();
	fk.kernel_61 = true;
	fk.swap_kb = 1024 * 1024;
	write_meminfo();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(json_string_value(json_object_get(doc, "method")), "drop_caches");
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "fallback")), "swap is on");
	CHECK(wrote(TRIM_DROP_CACHES_PATH " <- 1"));
	CHECK_INT(fk.nwrites, 3); /* EINVAL probe, drop_caches, compact */
	json_decref(doc);
	agent_state_free(st);
}

TEST(eagain_stops_and_counts_as_success)
{
	reset_world();
	fk.unreclaimable_kb = 500 * 1024; /* hot pages: only 400 MiB give */
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK(json_is_true(json_object_get(doc, "eagain")));
	CHECK_CONTAINS(reason(doc), "EAGAIN");
	/* 256 ok, then 256 asked / 144 got -> EAGAIN, stop; compact still follows */
	CHECK_INT(fk.nwrites, 3);
	CHECK_STR(fk.writes[2], TRIM_COMPACT_PATH " <- 1");
	const json_t *steps = json_object_get(doc, "steps");
	CHECK_U64(json_array_size(steps), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(steps, 1), "result")), "EAGAIN");
	json_decref(doc);
	agent_state_free(st);
}

TEST(no_memory_reclaim_falls_back_to_drop_caches)
{
	reset_world();
	fakeroot_remove(TRIM_RECLAIM_PATH);
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(json_string_value(json_object_get(doc, "method")), "drop_caches");
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "fallback")),
		       "no " TRIM_RECLAIM_PATH);
	CHECK_STR(fk.writes[0], TRIM_DROP_CACHES_PATH " <- 1");
	json_decref(doc);
	agent_state_free(st);
}

TEST(reclaim_error_falls_back_or_fails_by_method)
{
	reset_world();
	fk.reclaim_errno = EACCES;
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(json_string_value(json_object_get(doc, "method")), "drop_caches");
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "fallback")), "Permission denied");
	json_decref(doc);
	agent_state_free(st);

	/* method: reclaim means no fallback: a clear error instead */
	reset_world();
	fk.reclaim_errno = EACCES;
	cfg.method = TRIM_METHOD_RECLAIM;
	st = new_state();
	advance(600, 0.2);
	char err[256] = "";
	errno = 0;
	doc = agent_trim(st, &cfg, false, false, err, sizeof err);
	CHECK(doc == NULL);
	CHECK_INT(errno, EACCES);
	CHECK_CONTAINS(err, "set method: auto");
	CHECK(!wrote(TRIM_DROP_CACHES_PATH));
	/* the failed pass does not block the next one */
	fk.reclaim_errno = 0;
	advance(600, 0.2);
	doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	json_decref(doc);
	agent_state_free(st);
}

/* The cause comes back as errno (the CLI's exit code 7 for EACCES/EPERM), not only as text. */
TEST(a_failed_trim_says_why_in_errno)
{
	static const int causes[] = {EPERM, EACCES, EROFS};
	for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++) {
		reset_world();
		cfg.method = TRIM_METHOD_DROP_CACHES;
		fk.drop_errno = causes[i];
		struct agent_state *st = new_state();
		advance(600, 0.2);
		char err[256] = "";
		errno = 0;
		json_t *doc = agent_trim(st, &cfg, false, false, err, sizeof err);
		CHECK(doc == NULL);
		CHECK_INT(errno, causes[i]);
		CHECK_CONTAINS(err, strerror(causes[i]));
		if (causes[i] != EROFS)
			CHECK_CONTAINS(err, "run as root");
		agent_state_free(st);
	}
	fk.drop_errno = 0;
}

TEST(drop_caches_method)
{
	reset_world();
	cfg.method = TRIM_METHOD_DROP_CACHES;
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(fk.writes[0], TRIM_DROP_CACHES_PATH " <- 1");
	CHECK(!wrote(TRIM_RECLAIM_PATH));
	json_decref(doc);
	agent_state_free(st);
}

TEST(no_compaction_without_reporting)
{
	reset_world();
	make_balloon(features_no_reporting);
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK(!wrote(TRIM_COMPACT_PATH));
	CHECK(json_is_false(json_object_get(doc, "compacted")));
	CHECK_CONTAINS(json_string_value(json_object_get(doc, "compact_note")), "not active");
	json_decref(doc);
	agent_state_free(st);

	reset_world();
	make_balloon(NULL); /* no balloon at all */
	st = new_state();
	advance(600, 0.2);
	doc = trim(st, false, false);
	CHECK(!wrote(TRIM_COMPACT_PATH));
	json_decref(doc);
	agent_state_free(st);
}

TEST(never_more_often_than_the_interval_unless_forced)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	json_decref(doc);
	fk.file_kb = 900 * 1024;
	write_meminfo();
	fk.nwrites = 0;
	advance(120, 0.0);
	doc = trim(st, false, false);
	CHECK_STR(decision(doc), "skipped");
	CHECK_CONTAINS(reason(doc), "last trim 2 min");
	CHECK_INT(fk.nwrites, 0);
	json_decref(doc);
	doc = trim(st, false, true);
	CHECK_STR(decision(doc), "trimmed");
	CHECK(json_is_true(json_object_get(doc, "forced")));
	json_decref(doc);
	agent_state_free(st);
}

TEST(force_trims_a_busy_guest)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(30, 80.0);
	json_t *doc = trim(st, false, true);
	CHECK_STR(decision(doc), "trimmed");
	CHECK(json_is_false(json_object_get(json_object_get(doc, "idle"), "idle")));
	CHECK(fk.slept == 0);
	json_decref(doc);
	agent_state_free(st);
}

TEST(fresh_process_watches_the_cpu_first)
{
	reset_world();
	struct agent_state *st = new_state();
	json_t *doc = trim(st, false, false);
	CHECK_DBL(fk.slept, TRIM_MIN_WINDOW_S, 1e-9);
	json_decref(doc);
	agent_state_free(st);
}

TEST(dry_run_changes_nothing)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, true, false);
	CHECK_STR(decision(doc), "dry-run");
	CHECK_CONTAINS(reason(doc), "would trim 802 MiB via memory.reclaim in 9 steps of at most "
				    "256 MiB, then compact");
	CHECK_INT(fk.nwrites, 0);
	json_decref(doc);
	/* and it left no history that would rate-limit the real pass */
	doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	json_decref(doc);
	agent_state_free(st);
}

TEST(one_pass_at_a_time)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	fk.reenter = st;
	fk.reenter_cfg = &cfg;
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	CHECK_STR(fk.reenter_decision, "skipped");
	json_decref(doc);
	agent_state_free(st);
}

/*
 * Whatever ends a decision ends the pass: each next call below would be "another trim pass is
 * running" if one of them kept the claim.
 */
TEST(every_end_of_a_decision_releases_the_pass)
{
	reset_world();
	cfg.method = TRIM_METHOD_DROP_CACHES;
	struct agent_state *st = new_state();
	advance(600, 50);
	json_t *doc = trim(st, false, false);
	CHECK_CONTAINS(reason(doc), "busy: cpu");
	json_decref(doc);
	advance(600, 0.2);
	doc = trim(st, true, false);
	CHECK_STR(decision(doc), "dry-run");
	json_decref(doc);
	fk.drop_errno = EACCES;
	char err[256];
	CHECK(agent_trim(st, &cfg, false, false, err, sizeof err) == NULL);
	fk.drop_errno = 0;
	doc = trim(st, false, false);
	CHECK_STR(decision(doc), "trimmed");
	json_decref(doc);
	doc = trim(st, false, false);
	CHECK_CONTAINS(reason(doc), "force it to trim sooner");
	json_decref(doc);
	doc = trim(st, false, true);
	CHECK_STR(decision(doc), "nothing-to-do");
	json_decref(doc);
	doc = trim(st, false, true);
	CHECK_STR(decision(doc), "nothing-to-do");
	json_decref(doc);
	agent_state_free(st);
	cfg.method = TRIM_METHOD_AUTO;
}

TEST(history_is_shared_through_run_and_survives_restart)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_decref(trim(st, false, false));
	agent_state_free(st);
	/* a CLI process (new state, same boot) sees the daemon's trim and its rate limit */
	struct agent_state *cli = new_state();
	json_t *h = history(cli);
	CHECK_U64(json_array_size(json_object_get(h, "history")), 1);
	const json_t *last = json_object_get(h, "last_trim");
	CHECK_STR(json_string_value(json_object_get(last, "method")), "memory.reclaim");
	CHECK_STR(json_string_value(json_object_get(h, "reclaim_format")), "<bytes> swappiness=0");
	CHECK_STR(
	    json_string_value(json_object_get(json_object_get(h, "last_decision"), "outcome")),
	    "trimmed");
	json_decref(h);
	advance(60, 0.0);
	json_t *doc = trim(cli, false, false);
	CHECK_STR(decision(doc), "skipped");
	json_decref(doc);
	agent_state_free(cli);
	/* a different boot: the old times mean nothing */
	fakeroot_write("/proc/sys/kernel/random/boot_id", "99999999-2222-3333-4444-555555555555\n");
	cli = new_state();
	h = history(cli);
	CHECK_U64(json_array_size(json_object_get(h, "history")), 0);
	CHECK(json_is_null(json_object_get(h, "last_trim")));
	json_decref(h);
	agent_state_free(cli);
}

TEST(daemon_sees_a_cli_trim)
{
	reset_world();
	struct agent_state *daemon = new_state();
	advance(600, 0.1);
	json_decref(trim(daemon, false, false)); /* the daemon trims at t0 */
	fk.file_kb = 900 * 1024;
	write_meminfo();
	advance(600, 0.1);
	/* a CLI process forces a trim one interval later */
	struct agent_state *cli = new_state();
	json_t *doc = trim(cli, false, true);
	CHECK_STR(decision(doc), "trimmed");
	json_decref(doc);
	agent_state_free(cli);
	fk.file_kb = 900 * 1024;
	write_meminfo();
	advance(120, 0.1);
	/* the daemon's next decision respects the CLI's trim and keeps both in its history */
	doc = trim(daemon, false, false);
	CHECK_STR(decision(doc), "skipped");
	CHECK_CONTAINS(reason(doc), "last trim 2 min");
	json_decref(doc);
	json_t *h = history(daemon);
	CHECK_U64(json_array_size(json_object_get(h, "history")), 2);
	CHECK(json_is_true(json_object_get(json_object_get(h, "last_trim"), "forced")));
	json_decref(h);
	agent_state_free(daemon);
}

TEST(history_keeps_the_newest)
{
	reset_world();
	struct agent_state *st = new_state();
	for (int i = 0; i < AGENT_STATE_HISTORY_MAX + 3; i++) {
		fk.file_kb = (uint64_t)(300 + i) * 1024;
		write_meminfo();
		advance(600, 0.1);
		json_decref(trim(st, false, false));
	}
	json_t *h = history(st);
	CHECK_U64(json_array_size(json_object_get(h, "history")), AGENT_STATE_HISTORY_MAX);
	uint64_t newest = 0;
	vmc_json_get_u64(json_array_get(json_object_get(h, "history"), 0), "target_bytes", &newest);
	/* newest first: (300 + 10) + 10 + 20 - 128 MiB */
	CHECK_U64(newest, (310ull + 30 - 128) * MIB);
	json_decref(h);
	agent_state_free(st);
}

TEST(missing_proc_files)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	fakeroot_remove("/proc/loadavg");
	json_t *doc = trim(st, false, false);
	CHECK_STR(decision(doc), "skipped");
	CHECK_CONTAINS(reason(doc), "load1 unknown");
	json_decref(doc);
	fakeroot_remove("/proc/meminfo");
	char err[256] = "";
	doc = agent_trim(st, &cfg, false, true, err, sizeof err);
	CHECK(doc == NULL);
	CHECK_CONTAINS(err, "/proc/meminfo");
	agent_state_free(st);
}

TEST(human_output)
{
	reset_world();
	struct agent_state *st = new_state();
	advance(600, 0.2);
	json_t *doc = trim(st, false, false);
	char *text = print_capture(trim_print, doc);
	CHECK_GOLDEN(text, "agent-trim-trimmed");
	free(text);
	json_decref(doc);
	agent_state_free(st);
}

/* Missing members never reach %s: glibc printed "(null)", other libcs crash. */
TEST(documents_with_members_missing_print_without_null)
{
	CHECK_INT(print_odd_failures(trim_print), 0);
}

int main(void)
{
	fakeroot_init();
	RUN(idle_needs_every_signal);
	RUN(step_and_floor);
	RUN(busy_cpu_skips_without_writing);
	RUN(busy_load_skips);
	RUN(busy_psi_over_the_whole_interval_skips);
	RUN(idle_618_reclaims_in_steps_to_the_floor_then_compacts);
	RUN(configured_floor_and_step);
	RUN(overshooting_kernel_keeps_the_floor);
	RUN(next_ask_halves_near_the_floor);
	RUN(below_floor_nothing_to_do);
	RUN(kernel_61_bytes_only_after_einval_and_remembered);
	RUN(kernel_61_with_swap_uses_drop_caches);
	RUN(eagain_stops_and_counts_as_success);
	RUN(no_memory_reclaim_falls_back_to_drop_caches);
	RUN(reclaim_error_falls_back_or_fails_by_method);
	RUN(a_failed_trim_says_why_in_errno);
	RUN(drop_caches_method);
	RUN(no_compaction_without_reporting);
	RUN(never_more_often_than_the_interval_unless_forced);
	RUN(force_trims_a_busy_guest);
	RUN(fresh_process_watches_the_cpu_first);
	RUN(dry_run_changes_nothing);
	RUN(one_pass_at_a_time);
	RUN(every_end_of_a_decision_releases_the_pass);
	RUN(history_is_shared_through_run_and_survives_restart);
	RUN(daemon_sees_a_cli_trim);
	RUN(history_keeps_the_newest);
	RUN(missing_proc_files);
	RUN(human_output);
	RUN(documents_with_members_missing_print_without_null);
	fakeroot_cleanup();
	return check_done();
}

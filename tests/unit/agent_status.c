/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/status on fake 6.1 and 6.18 guests, with and without PSI, and its human form. */
#include "agent.h"
#include "check.h"
#include "fakeroot.h"
#include "golden.h"
#include "jsonutil.h"
#include "print_capture.h"
#include "state.h"
#include "status.h"

static void guest_61(void)
{
	fakeroot_remove("/");
	fakeroot_write("/proc/sys/kernel/osrelease", "6.1.0-57-cloud-amd64\n");
	fakeroot_write("/proc/sys/kernel/random/boot_id", "abc\n");
	fakeroot_write("/proc/meminfo", "MemTotal:        2027036 kB\n"
					"MemFree:         1200000 kB\n"
					"MemAvailable:    1700000 kB\n"
					"Buffers:            1000 kB\n"
					"Cached:           600000 kB\n"
					"Active(file):     200000 kB\n"
					"Inactive(file):   390000 kB\n"
					"Shmem:              8000 kB\n"
					"SReclaimable:      30000 kB\n"
					"AnonPages:         50000 kB\n"
					"SwapTotal:             0 kB\n"
					"SwapFree:              0 kB\n");
	fakeroot_write("/proc/vmstat", "nr_free_pages 300000\nballoon_inflate 1024\n"
				       "balloon_deflate 0\n");
	fakeroot_write("/proc/loadavg", "0.00 0.01 0.05 1/60 300\n");
	fakeroot_write("/proc/stat", "cpu  1 0 1 100 0 0 0 0\nctxt 5\n");
	fakeroot_mkdir("/run");
}

TEST(status_61_without_psi_or_balloon_device)
{
	guest_61();
	char err[128];
	json_t *doc = agent_status(NULL, err, sizeof err);
	CHECK(doc != NULL);
	CHECK_STR(vmc_json_get_str(doc, "kernel"), "6.1.0-57-cloud-amd64");
	const json_t *m = json_object_get(doc, "memory");
	uint64_t v;
	vmc_json_get_u64(m, "file_cache", &v);
	CHECK_U64(v, 590000ull * 1024);
	vmc_json_get_u64(m, "balloon", &v); /* 6.1: from vmstat counters */
	CHECK_U64(v, 1024ull * (uint64_t)sysconf(_SC_PAGESIZE));
	CHECK(json_is_null(json_object_get(doc, "psi")));
	CHECK(json_is_false(json_object_get(json_object_get(doc, "page_reporting"), "active")));
	const json_t *trim = json_object_get(doc, "trim");
	CHECK(json_is_null(json_object_get(trim, "last_trim")));
	char *text = print_capture(status_print, doc);
	CHECK_GOLDEN(text, "agent-status-61");
	free(text);
	json_decref(doc);
}

TEST(status_counts_bytes_written_per_whole_disk)
{
	guest_61();
	/* vda and vdb are disks, vda1 a partition (not counted twice). */
	fakeroot_write("/proc/diskstats",
		       " 254       0 vda 100 0 800 5 40 0 96 7 0 10 12 0 0 0 0 0 0\n"
		       " 254       1 vda1 90 0 700 5 40 0 96 7 0 10 12 0 0 0 0 0 0\n"
		       " 254      16 vdb 3 0 24 1 2 0 16 1 0 2 2 0 0 0 0 0 0\n");
	char err[128];
	json_t *doc = agent_status(NULL, err, sizeof err);
	const json_t *disks = json_object_get(doc, "disks");
	CHECK_INT(json_array_size(disks), 2);
	uint64_t v = 0;
	CHECK_STR(vmc_json_get_str(json_array_get(disks, 0), "name"), "vda");
	vmc_json_get_u64(json_array_get(disks, 0), "written_bytes", &v);
	CHECK_U64(v, 96 * 512);
	vmc_json_get_u64(json_array_get(disks, 1), "written_bytes", &v);
	CHECK_U64(v, 16 * 512);
	json_decref(doc);
	fakeroot_remove("/proc/diskstats");
	doc = agent_status(NULL, err, sizeof err);
	CHECK(json_is_null(json_object_get(doc, "disks")));
	json_decref(doc);
}

TEST(status_shows_psi_and_the_daemons_history)
{
	guest_61();
	fakeroot_write("/proc/pressure/cpu", "some avg10=0.00 avg60=1.25 avg300=0.00 total=10\n");
	fakeroot_write("/proc/pressure/io", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
					    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	fakeroot_write("/proc/pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
						"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	/* what the daemon left in /run */
	struct agent_state *daemon = agent_state_new();
	struct agent_state_trim r = {.when = 1700000000,
				     .at = 0,
				     .method = "memory.reclaim",
				     .format = "<bytes>",
				     .reclaimed_bytes = 600ull << 20,
				     .steps = 3,
				     .compacted = true};
	struct agent_state_pass pass;
	CHECK(agent_state_begin_pass(daemon, &pass));
	struct agent_state_pass_end end = {.outcome = AGENT_STATE_OUTCOME_SKIPPED,
					   .reason = "busy: load1 0.45 > 0.20",
					   .trim = &r};
	agent_state_end_pass(daemon, &end);
	agent_state_free(daemon);

	char err[128];
	json_t *doc = agent_status(NULL, err, sizeof err);
	const json_t *psi = json_object_get(doc, "psi");
	CHECK(json_is_object(psi));
	CHECK_DBL(json_number_value(json_object_get(
		      json_object_get(json_object_get(psi, "cpu"), "some"), "avg60")),
		  1.25, 1e-9);
	CHECK(json_is_null(json_object_get(json_object_get(psi, "cpu"), "full")));
	const json_t *trim = json_object_get(doc, "trim");
	CHECK_STR(vmc_json_get_str(json_object_get(trim, "last_trim"), "method"), "memory.reclaim");
	CHECK_STR(vmc_json_get_str(json_object_get(trim, "last_decision"), "reason"),
		  "busy: load1 0.45 > 0.20");
	char *text = print_capture(status_print, doc);
	text = golden_mask(text, "last trim     ", " ago", "T");
	text = golden_mask(text, "last decision ", " ago", "T");
	CHECK_GOLDEN(text, "agent-status-psi-history");
	free(text);
	json_decref(doc);
}

TEST(status_without_meminfo_is_an_error)
{
	guest_61();
	fakeroot_remove("/proc/meminfo");
	char err[128] = "";
	CHECK(agent_status(NULL, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "cannot read /proc/meminfo");
}

/* Missing members never reach %s: glibc printed "(null)", other libcs crash. */
TEST(documents_with_members_missing_print_without_null)
{
	CHECK_INT(print_odd_failures(status_print), 0);
}

int main(void)
{
	fakeroot_init();
	RUN(status_61_without_psi_or_balloon_device);
	RUN(status_counts_bytes_written_per_whole_disk);
	RUN(status_shows_psi_and_the_daemons_history);
	RUN(status_without_meminfo_is_an_error);
	RUN(documents_with_members_missing_print_without_null);
	fakeroot_cleanup();
	return check_done();
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memtest's pre-flight tries --results DIR for real, in a temporary directory here: the directory
 * is made as mkdir -p makes it and a file is written in it, then both go again, so a refused run
 * (or --check) leaves nothing; what cannot be made is refused before the baseline, even for root,
 * whom permission bits do not stop (/proc/nope), and without asking the guest.
 */
#include "check.h"
#include "log.h"
#include "measure/memtest_preflight.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[PATH_MAX];

/* CHECK_STR for PATH_MAX-sized fields: quotes at most 200 characters of each side. */
#define CHECK_PATH(actual, expected)                                                               \
	do {                                                                                       \
		char m_[512];                                                                      \
		snprintf(m_, sizeof m_, "%s == \"%.200s\", expected \"%.200s\"", #actual,          \
			 (actual), (expected));                                                    \
		check_report(strcmp((actual), (expected)) == 0, __FILE__, __LINE__, m_);           \
	} while (0)

static bool contains(const char *s, const char *part)
{
	return strstr(s, part) != NULL;
}

/* Entries of dir besides . and ..; -1 when it cannot be read. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* The verdict the pure check gives on the gathered facts. */
static struct preflight_verdict judged(const char *dir, const struct preflight_results_facts *r)
{
	struct preflight_request req = {.name = "dev", .fill = true, .results_dir = dir};
	struct preflight_verdict v;
	preflight_check_results(&req, r, &v);
	return v;
}

TEST(an_existing_directory_is_written_and_left_as_it_was)
{
	char dir[PATH_MAX + 8];
	snprintf(dir, sizeof dir, "%s/here", top);
	CHECK(mkdir(dir, 0755) == 0);
	struct preflight_results_facts r;
	preflight_gather_results(dir, &r);
	CHECK(r.exists);
	CHECK(r.is_dir);
	CHECK_INT(r.access_errno, 0);
	CHECK_PATH(r.failed_at, "");
	CHECK_INT(entries(dir), 0); /* the probe is gone */
	struct preflight_verdict v = judged(dir, &r);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK(contains(v.message, "is writable"));
}

TEST(a_new_directory_is_made_tried_and_removed_again)
{
	char dir[PATH_MAX + 32], first[PATH_MAX + 8];
	snprintf(first, sizeof first, "%s/new", top);
	snprintf(dir, sizeof dir, "%s/new/a/b/", top);
	struct preflight_results_facts r;
	preflight_gather_results(dir, &r);
	CHECK(!r.exists);
	CHECK(r.is_dir);
	CHECK_PATH(r.at, top);
	CHECK_INT(r.access_errno, 0);
	CHECK(!exists(first)); /* every directory it made went again */
	CHECK_INT(entries(top), 0);
	struct preflight_verdict v = judged(dir, &r);
	CHECK_INT(v.status, PREFLIGHT_PASS);
	CHECK(contains(v.message, "will be created"));
}

TEST(a_relative_directory_under_the_working_directory)
{
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK(chdir(top) == 0);
	struct preflight_results_facts r;
	preflight_gather_results("results/run", &r);
	CHECK_INT(r.access_errno, 0);
	CHECK(!exists("results"));
	preflight_gather_results(".", &r);
	CHECK(r.exists);
	CHECK_INT(r.access_errno, 0);
	CHECK_INT(entries("."), 0);
	CHECK(chdir(cwd) == 0);
}

TEST(what_exists_already_is_not_removed)
{
	char dir[PATH_MAX + 32], kept[PATH_MAX + 8];
	snprintf(kept, sizeof kept, "%s/kept", top);
	snprintf(dir, sizeof dir, "%s/kept/new", top);
	CHECK(mkdir(kept, 0755) == 0);
	struct preflight_results_facts r;
	preflight_gather_results(dir, &r);
	CHECK_INT(r.access_errno, 0);
	CHECK(exists(kept));
	CHECK(!exists(dir));
}

TEST(a_file_in_the_way_is_not_a_directory)
{
	char file[PATH_MAX + 8], dir[PATH_MAX + 32];
	snprintf(file, sizeof file, "%s/a-file", top);
	snprintf(dir, sizeof dir, "%s/a-file/x", top);
	FILE *f = fopen(file, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	struct preflight_results_facts r;
	preflight_gather_results(dir, &r);
	CHECK(!r.is_dir);
	CHECK_PATH(r.at, file);
	struct preflight_verdict v = judged(dir, &r);
	CHECK_INT(v.exit_code, VMC_EXIT_USAGE);
	CHECK(contains(v.message, "a-file is not a directory"));
}

/* /proc lets root search and write its root directory, and makes nothing there. */
TEST(proc_nope_is_refused_even_for_root)
{
	struct stat st;
	if (stat("/proc/self", &st) != 0)
		SKIP("no /proc here");
	struct preflight_results_facts r;
	preflight_gather_results("/proc/nope", &r);
	CHECK(r.is_dir);
	CHECK_PATH(r.at, "/proc");
	CHECK(r.access_errno != 0);
	CHECK_PATH(r.failed_at, "/proc/nope");
	struct preflight_verdict v = judged("/proc/nope", &r);
	CHECK_INT(v.status, PREFLIGHT_FAIL);
	CHECK(v.exit_code != VMC_EXIT_OK);
	CHECK(contains(v.message, "--results /proc/nope is not writable (/proc/nope: "));
	CHECK(contains(v.message, "pass --results DIR"));
	preflight_gather_results("/proc/nope/deeper/still", &r);
	CHECK(r.access_errno != 0);
	CHECK_PATH(r.failed_at, "/proc/nope");
}

TEST(a_read_only_directory)
{
	char dir[PATH_MAX + 8], sub[PATH_MAX + 32];
	snprintf(dir, sizeof dir, "%s/ro", top);
	snprintf(sub, sizeof sub, "%s/ro/new", top);
	CHECK(mkdir(dir, 0555) == 0);
	struct preflight_results_facts r;
	preflight_gather_results(sub, &r);
	if (geteuid() == 0) {
		/* Root writes there anyway, and so would the results: the check must agree. */
		CHECK_INT(r.access_errno, 0);
	} else {
		CHECK_INT(r.access_errno, EACCES);
		CHECK_PATH(r.failed_at, sub);
		CHECK_INT(judged(sub, &r).exit_code, VMC_EXIT_PERMISSION);
	}
	CHECK(!exists(sub));
	CHECK(chmod(dir, 0755) == 0);
}

TEST(none_touches_nothing)
{
	struct preflight_results_facts r;
	preflight_gather_results("none", &r);
	CHECK(r.none);
	CHECK_INT(judged("none", &r).status, PREFLIGHT_SKIP);
}

/* A run this host refuses by itself (here: /proc/nope) is judged without asking the guest. */
TEST(a_host_refusal_leaves_the_guest_unasked)
{
	struct preflight_request req = {.name = "dev",
					.fill = true,
					.pressure_none = true,
					.size = 1ull << 30,
					.results_dir = "/proc/nope"};
	struct preflight_host_memory_facts h = {0};
	struct preflight_stop_facts s = {
	    .limactl_found = true, .dir_writable = true, .dir = "/l/dev"};
	struct preflight_results_facts r = {.is_dir = true, .at = "/proc", .access_errno = ENOENT};
	snprintf(r.failed_at, sizeof r.failed_at, "/proc/nope");
	struct preflight pf;
	preflight_judge_host_only(&req, &h, &s, &r, &pf);
	CHECK_INT(pf.exit_code, VMC_EXIT_FAILURE);
	CHECK_INT(pf.verdicts[PREFLIGHT_TMPFS].status, PREFLIGHT_SKIP);
	CHECK(contains(pf.verdicts[PREFLIGHT_TMPFS].message, "so the guest was not asked"));
	CHECK_INT(pf.verdicts[PREFLIGHT_FILL_DIR].status, PREFLIGHT_SKIP);
	CHECK_INT(pf.verdicts[PREFLIGHT_PGBENCH].status, PREFLIGHT_SKIP);
	CHECK(contains(pf.verdicts[PREFLIGHT_PGBENCH].message, "not used"));
	CHECK_INT(pf.verdicts[PREFLIGHT_STOP].status, PREFLIGHT_PASS);
	CHECK_INT(pf.verdicts[PREFLIGHT_RESULTS].status, PREFLIGHT_FAIL);
	CHECK(contains(pf.verdicts[PREFLIGHT_RESULTS].message, "/proc/nope"));
	/* The pgbench workload: Docker is the one not asked; the first failure decides. */
	req.fill = false;
	s.limactl_found = false;
	preflight_judge_host_only(&req, &h, &s, &r, &pf);
	CHECK_INT(pf.verdicts[PREFLIGHT_PGBENCH].status, PREFLIGHT_SKIP);
	CHECK(contains(pf.verdicts[PREFLIGHT_PGBENCH].message, "so Docker was not asked"));
	CHECK(contains(pf.verdicts[PREFLIGHT_TMPFS].message, "not used"));
	CHECK_INT(pf.verdicts[PREFLIGHT_STOP].status, PREFLIGHT_FAIL);
	CHECK_INT(pf.exit_code, pf.verdicts[PREFLIGHT_STOP].exit_code);
	/* Nothing refused: the verdict is the guest's to complete, so the exit code is 0. */
	s.limactl_found = true;
	memset(&r, 0, sizeof r);
	r.is_dir = true;
	r.exists = true;
	snprintf(r.at, sizeof r.at, ".");
	preflight_judge_host_only(&req, &h, &s, &r, &pf);
	CHECK_INT(pf.exit_code, VMC_EXIT_OK);
}

/* Removes what a test left in top (files and directories, one level of nesting is enough). */
static void empty_top(void)
{
	DIR *d = opendir(top);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char path[PATH_MAX + 300];
		snprintf(path, sizeof path, "%s/%s", top, e->d_name);
		chmod(path, 0755);
		if (remove(path) != 0) {
			char inner[PATH_MAX + 600];
			DIR *sub = opendir(path);
			for (struct dirent *f; sub && (f = readdir(sub));) {
				snprintf(inner, sizeof inner, "%s/%s", path, f->d_name);
				if (f->d_name[0] != '.')
					remove(inner);
			}
			if (sub)
				closedir(sub);
			remove(path);
		}
	}
	closedir(d);
}

#define RUN_IN_TOP(name)                                                                           \
	do {                                                                                       \
		RUN(name);                                                                         \
		empty_top();                                                                       \
	} while (0)

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(top, sizeof top, "%s/vmcost-results-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_IN_TOP(an_existing_directory_is_written_and_left_as_it_was);
	RUN_IN_TOP(a_new_directory_is_made_tried_and_removed_again);
	RUN_IN_TOP(a_relative_directory_under_the_working_directory);
	RUN_IN_TOP(what_exists_already_is_not_removed);
	RUN_IN_TOP(a_file_in_the_way_is_not_a_directory);
	RUN_IN_TOP(proc_nope_is_refused_even_for_root);
	RUN_IN_TOP(a_read_only_directory);
	RUN_IN_TOP(none_touches_nothing);
	RUN(a_host_refusal_leaves_the_guest_unasked);
	rmdir(top);
	return check_done();
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake filesystem root in a temp directory for the guest-side readers: files and symlinks are
 * created with their parent directories, the tree is removed at the end. Header-only.
 */
#ifndef VMC_FAKEROOT_H
#define VMC_FAKEROOT_H

#include "procfs.h"
#include "scratch.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fakeroot_dir[] = "/tmp/vmc-fakeroot-XXXXXX";

static void fakeroot_mkdirs(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST) {
			perror(tmp);
			exit(2);
		}
		*p = '/';
	}
}

/* Creates the fake root and points vmc_fs_set_root() at it. */
static inline void fakeroot_init(void)
{
	if (!mkdtemp(fakeroot_dir)) {
		perror("mkdtemp");
		exit(2);
	}
	vmc_fs_set_root(fakeroot_dir);
}

static inline void fakeroot_write(const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s", fakeroot_dir, rel);
	fakeroot_mkdirs(path);
	scratch_write(path, text);
}

static inline void fakeroot_symlink(const char *target, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s", fakeroot_dir, rel);
	fakeroot_mkdirs(path);
	unlink(path);
	if (symlink(target, path) < 0) {
		perror(path);
		exit(2);
	}
}

static inline void fakeroot_mkdir(const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s/", fakeroot_dir, rel);
	fakeroot_mkdirs(path);
}

static int fakeroot_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void fakeroot_remove(const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s", fakeroot_dir, rel);
	nftw(path, fakeroot_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Reads a file of the fake tree back (what a writer left there). Static buffer. */
static inline const char *fakeroot_read(const char *rel)
{
	static char buf[8192];
	char path[4096];
	snprintf(path, sizeof path, "%s%s", fakeroot_dir, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static inline void fakeroot_cleanup(void)
{
	nftw(fakeroot_dir, fakeroot_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	vmc_fs_set_root("");
}

#endif

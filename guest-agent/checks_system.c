/* SPDX-License-Identifier: Apache-2.0 */
/* The userland checks of the idle doctor: disk writes, respawning gettys, boot, Docker. */
#include "check_groups.h"

#include "mounts.h"
#include "procfs.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static bool in_ram(const char *fstype)
{
	return strcmp(fstype, "tmpfs") == 0 || strcmp(fstype, "ramfs") == 0 ||
	       strcmp(fstype, "rootfs") == 0;
}

static bool mount_of(const struct doctor *d, const char *path, struct vmc_mount *m)
{
	return d->mounts && vmc_mount_for(d->mounts, path, m) == 0;
}

static void check_var_log(const struct doctor *d, struct check *c)
{
	struct vmc_mount m;
	c->id = "var-log-tmpfs";
	c->title = "/var/log in RAM";
	if (!mount_of(d, "/var/log", &m)) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "cannot read /proc/mounts");
		check_why(c, "unknown");
		return;
	}
	check_observed(c, "/var/log on %s (%s)", m.target, m.fstype);
	if (in_ram(m.fstype)) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "log lines never reach the disk");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "every log line becomes disk writes: lima-guestagent's SyncTime line every "
		     "10 s alone is ~600 B/min of log and ~25 KB/min of ext4 journal writes");
	check_fix(c, "mount a tmpfs on /var/log in a Lima 'mode: boot' provision script (before "
		     "the guest agent opens its log)");
}

static void check_commit(const struct doctor *d, struct check *c)
{
	struct vmc_mount m;
	char value[32];
	c->id = "root-commit";
	c->title = "ext4 journal commit interval of /";
	if (!mount_of(d, "/", &m)) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "cannot read /proc/mounts");
		check_why(c, "unknown");
		return;
	}
	if (strcmp(m.fstype, "ext4") != 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "/ is %s", m.fstype);
		check_why(c, in_ram(m.fstype) ? "the root is in RAM: nothing to commit"
					      : "only ext4's commit= is checked");
		return;
	}
	long commit = 5;
	if (vmc_mount_option(m.options, "commit", value, sizeof value) == 1)
		commit = strtol(value, NULL, 10);
	check_observed(c, "ext4 %s, commit=%ld s%s", m.source, commit,
		       commit == 5 ? " (default)" : "");
	if (commit >= 60) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "stray writes are batched into one journal commit a minute at most");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c,
		  "the journal commits every %ld s whenever anything is dirty, so each small "
		  "write wakes the disk (0 B in 180-240 s of idle only with commit=60 and "
		  "/var/log on tmpfs in the write-up)",
		  commit);
	check_fix(c, "mount / with commit=60 (mount -o remount,commit=60 / and the same option in "
		     "/etc/fstab)");
}

static void check_syslogd(const struct doctor *d, struct check *c)
{
	c->id = "syslogd-ring-buffer";
	c->title = "busybox syslogd to a ring buffer";
	const struct doctor_proc *p = doctor_find_proc(d, "syslogd");
	if (!p) {
		const struct doctor_proc *other = doctor_find_proc(d, "rsyslogd");
		c->status = CHECK_STATUS_NA;
		check_observed(c, "%s", other ? "rsyslogd running" : "no syslogd running");
		check_why(c, "only busybox syslogd's -C ring buffer is checked");
		return;
	}
	check_observed(c, "pid %d: %s", (int)p->pid, p->cmdline);
	/* -C or -C<size>, possibly bundled with other flags ("-tC64") */
	bool ring = false;
	const char *s = p->cmdline;
	while ((s = strstr(s, " -"))) {
		s += 2;
		size_t len = strcspn(s, " ");
		if (memchr(s, 'C', len) && s[0] != '-')
			ring = true;
	}
	struct vmc_mount m;
	bool log_in_ram = mount_of(d, "/var/log", &m) && in_ram(m.fstype);
	if (ring || log_in_ram) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "%s",
			  ring ? "messages stay in a RAM ring buffer (read with logread)"
			       : "it writes /var/log/messages, but /var/log is in RAM");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "every message is appended to /var/log/messages on disk and journaled");
	check_fix(c, "SYSLOGD_OPTS=\"-t -C64\" in /etc/conf.d/syslog (a 64 KiB ring buffer; "
		     "rc-update del syslog does not stick because sshd's 'use logger' brings it "
		     "back)");
}

/* A tty exists when the kernel has it and, for UARTs, knows its type (8250 stubs say 0). */
static bool tty_exists(const char *name)
{
	char path[192], type[16];
	snprintf(path, sizeof path, "/sys/class/tty/%s", name);
	if (!vmc_fs_exists(path))
		return false;
	snprintf(path, sizeof path, "/sys/class/tty/%s/type", name);
	if (vmc_fs_read_line(path, type, sizeof type) == 0 && strcmp(type, "0") == 0)
		return false;
	return true;
}

/* Names of ttys on an inittab line: the busybox id field and getty arguments. */
static size_t inittab_ttys(const char *line, char names[][32], size_t max)
{
	size_t n = 0;
	const char *p = line;
	while (*p && n < max) {
		size_t len = strcspn(p, " \t:");
		if (len > 0 && len < 32 &&
		    (strncmp(p, "tty", 3) == 0 || strncmp(p, "hvc", 3) == 0)) {
			bool dup = false;
			for (size_t i = 0; i < n; i++)
				if (strlen(names[i]) == len && strncmp(names[i], p, len) == 0)
					dup = true;
			if (!dup) {
				memcpy(names[n], p, len);
				names[n++][len] = '\0';
			}
		}
		p += len;
		while (*p == ' ' || *p == '\t' || *p == ':')
			p++;
	}
	return n;
}

static void check_gettys(const struct doctor *d, struct check *c)
{
	(void)d;
	char *buf;
	c->id = "inittab-gettys";
	c->title = "gettys on ttys that exist";
	if (vmc_fs_read("/etc/inittab", &buf, NULL, 1u << 20) < 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no /etc/inittab");
		check_why(c, "not a busybox/sysvinit guest");
		return;
	}
	char missing[160] = "", present[160] = "";
	char *save = NULL;
	/* strtok_r: API requests run checks on several threads at once. */
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '#' || !strstr(line, "respawn") || !strstr(line, "getty"))
			continue;
		char names[4][32];
		size_t n = inittab_ttys(line, names, 4);
		for (size_t i = 0; i < n; i++) {
			char *list = tty_exists(names[i]) ? present : missing;
			if (strstr(list, names[i]))
				continue;
			size_t used = strlen(list);
			snprintf(list + used, 160 - used, "%s%s", used ? " " : "", names[i]);
		}
	}
	free(buf);
	if (!missing[0]) {
		c->status = CHECK_STATUS_OK;
		check_observed(c, "%s%s", present[0] ? "gettys on " : "no respawning getty",
			       present);
		check_why(c, "each getty sleeps on a terminal that exists");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_observed(c, "getty respawns on missing %s", missing);
	check_why(c, "init respawns a getty on a tty that does not exist forever: removing the "
		     "ttyAMA0 getty took the VM from 1.27 to 1.00 %% of a host core, the largest "
		     "single drop in the write-up");
	check_fix(c, "comment out the %s line(s) in /etc/inittab, then kill -HUP 1", missing);
}

static bool runlevel_has(const char *service)
{
	static const char *const levels[] = {"boot", "default", "sysinit"};
	char path[128];
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "/etc/runlevels/%s/%s", levels[i], service);
		if (vmc_fs_exists(path))
			return true;
	}
	return false;
}

static void check_hotplugd(const struct doctor *d, struct check *c)
{
	c->id = "cloud-init-hotplugd";
	c->title = "cloud-init-hotplugd";
	const struct doctor_proc *p = doctor_find_proc(d, "cloud-init-hotplugd");
	bool enabled = runlevel_has("cloud-init-hotplugd");
	if (!p && !enabled) {
		c->status = CHECK_STATUS_OK;
		check_observed(c, "not running");
		check_why(c, "no daemon waiting for hotplug events");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_observed(c, "%s%s", p ? "running" : "enabled", p && enabled ? " and enabled" : "");
	check_why(c, "it waits for network hotplug events a Lima VM never sends; turning it off "
		     "together with syslogd's ring buffer took the VM from 1.28 to 1.27 %% of a "
		     "host core");
	check_fix(c, "rc-update del cloud-init-hotplugd default; rc-service cloud-init-hotplugd "
		     "stop");
}

/* GRUB_TIMEOUT from /etc/default/grub, else the largest "set timeout=" of grub.cfg. */
static long grub_timeout(char *source, size_t size)
{
	char *buf;
	long timeout = -1;
	if (vmc_fs_read("/etc/default/grub", &buf, NULL, 1u << 20) == 0) {
		const char *v = vmc_find_key(buf, "GRUB_TIMEOUT=");
		if (v) {
			timeout = strtol(v + (*v == '"' || *v == '\''), NULL, 10);
			snprintf(source, size, "/etc/default/grub");
		}
		free(buf);
		if (timeout >= 0)
			return timeout;
	}
	if (vmc_fs_read("/boot/grub/grub.cfg", &buf, NULL, 4u << 20) == 0) {
		for (const char *p = buf; (p = strstr(p, "set timeout="));) {
			p += 12;
			long v = strtol(p + (*p == '"'), NULL, 10);
			if (v > timeout)
				timeout = v;
		}
		if (timeout >= 0)
			snprintf(source, size, "/boot/grub/grub.cfg");
		free(buf);
	}
	return timeout;
}

static void check_grub(const struct doctor *d, struct check *c)
{
	(void)d;
	char source[64] = "";
	c->id = "grub-timeout";
	c->title = "GRUB menu timeout";
	long timeout = grub_timeout(source, sizeof source);
	if (timeout < 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no GRUB configuration");
		check_why(c, "the kernel is booted directly");
		return;
	}
	check_observed(c, "timeout %ld s (%s)", timeout, source);
	if (timeout == 0) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "no wait at boot");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c,
		  "every boot and limactl restart waits %ld s in the boot menu (10 s in the "
		  "Alpine cloud image)",
		  timeout);
	check_fix(c, "GRUB_TIMEOUT=0 in /etc/default/grub, then grub-mkconfig -o "
		     "/boot/grub/grub.cfg");
}

/* "vda1" -> "vda", "nvme0n1p2" -> "nvme0n1", "mmcblk0p1" -> "mmcblk0" */
static void disk_of(const char *source, char *disk, size_t size)
{
	const char *base = strrchr(source, '/');
	base = base ? base + 1 : source;
	size_t len = strlen(base);
	if (strncmp(base, "nvme", 4) == 0 || strncmp(base, "mmcblk", 6) == 0) {
		const char *p = strrchr(base, 'p');
		if (p && p > base + 4 && p[1] >= '0' && p[1] <= '9')
			len = (size_t)(p - base);
	} else {
		while (len > 0 && base[len - 1] >= '0' && base[len - 1] <= '9')
			len--;
	}
	snprintf(disk, size, "%.*s", (int)len, base);
}

static bool file_mentions(const char *abs_path, const char *needle)
{
	char *buf;
	if (vmc_fs_read(abs_path, &buf, NULL, 1u << 20) < 0)
		return false;
	bool found = strstr(buf, needle) != NULL;
	free(buf);
	return found;
}

static bool dir_mentions(const char *abs_dir, const char *suffix, const char *needle)
{
	char path[4096];
	if (!vmc_fs_path(path, sizeof path, "%s", abs_dir))
		return false;
	DIR *dir = opendir(path);
	if (!dir)
		return false;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(dir))) {
		size_t len = strlen(de->d_name), slen = strlen(suffix);
		if (de->d_name[0] == '.' || len < slen ||
		    strcmp(de->d_name + len - slen, suffix) != 0)
			continue;
		char file[512];
		snprintf(file, sizeof file, "%s/%s", abs_dir, de->d_name);
		found = file_mentions(file, needle);
	}
	closedir(dir);
	return found;
}

static void check_fstrim(const struct doctor *d, struct check *c)
{
	struct vmc_mount m;
	char disk[256], path[320], value[32];
	c->id = "fstrim-at-boot";
	c->title = "fstrim at boot";
	if (!mount_of(d, "/", &m) || in_ram(m.fstype)) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "root not on a block device");
		check_why(c, "nothing to trim");
		return;
	}
	disk_of(m.source, disk, sizeof disk);
	snprintf(path, sizeof path, "/sys/block/%s/queue/discard_max_bytes", disk);
	if (vmc_fs_read_line(path, value, sizeof value) < 0 || strtoull(value, NULL, 10) == 0) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "%s does not support discard", disk);
		check_why(c, "the disk cannot give blocks back");
		return;
	}
	bool online = vmc_mount_option(m.options, "discard", value, sizeof value) == 2;
	bool at_boot = dir_mentions("/etc/local.d", ".start", "fstrim") || runlevel_has("fstrim") ||
		       dir_mentions("/etc/periodic/daily", "", "fstrim") ||
		       file_mentions("/etc/crontabs/root", "fstrim");
	check_observed(c, "%s supports discard; %s", disk,
		       online	 ? "/ mounted with discard"
		       : at_boot ? "fstrim runs at boot or periodically"
				 : "no fstrim found");
	if (online || at_boot) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "freed blocks go back to the host's disk image");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "deleted files keep their blocks allocated in the host's disk image until "
		     "trimmed: fstrim -a once returned 2 GB at once in the write-up");
	check_fix(c, "run fstrim -a at boot: an executable /etc/local.d/fstrim.start and "
		     "rc-update add local default");
}

static bool docker_installed(const struct doctor *d)
{
	return doctor_find_proc(d, "dockerd") || vmc_fs_exists("/usr/bin/dockerd") ||
	       vmc_fs_exists("/usr/sbin/dockerd") || vmc_fs_exists("/usr/local/bin/dockerd");
}

/* daemon.json: NULL when absent; *bad set when it does not parse as a JSON object. */
static json_t *daemon_json(bool *bad, char *why, size_t size)
{
	char *buf;
	size_t len;
	*bad = false;
	if (vmc_fs_read("/etc/docker/daemon.json", &buf, &len, 1u << 20) < 0)
		return NULL;
	json_error_t e;
	json_t *doc = json_loadb(buf, len, 0, &e);
	free(buf);
	if (!json_is_object(doc)) {
		*bad = true;
		snprintf(why, size, "line %d: %s", e.line, doc ? "not an object" : e.text);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/*
 * Both dockerd checks start the same way: n/a without Docker, and a daemon.json that does not
 * parse reported once (by the log check, with parse_status) and pointed to by the other.
 * Returns true with *cfg (NULL when there is no daemon.json) when the check should go on.
 */
static bool docker_config(const struct doctor *d, struct check *c, enum check_status parse_status,
			  json_t **cfg)
{
	char why[200];
	bool bad;
	if (!docker_installed(d)) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no dockerd");
		check_why(c, "Docker is not installed");
		return false;
	}
	*cfg = daemon_json(&bad, why, sizeof why);
	if (!bad)
		return true;
	c->status = parse_status;
	if (parse_status == CHECK_STATUS_FAIL) {
		check_observed(c, "/etc/docker/daemon.json does not parse: %s", why);
		check_why(c, "dockerd refuses to start with an invalid daemon.json");
		check_fix(c, "fix the JSON (python3 -m json.tool /etc/docker/daemon.json)");
	} else {
		check_observed(c, "daemon.json does not parse");
		check_why(c, "see docker-log-limits");
	}
	return false;
}

static void check_docker_logs(const struct doctor *d, struct check *c)
{
	json_t *cfg;
	c->id = "docker-log-limits";
	c->title = "dockerd container log limits";
	if (!docker_config(d, c, CHECK_STATUS_FAIL, &cfg))
		return;
	const char *driver = cfg ? json_string_value(json_object_get(cfg, "log-driver")) : NULL;
	const json_t *opts = cfg ? json_object_get(cfg, "log-opts") : NULL;
	const char *max_size = json_string_value(json_object_get(opts, "max-size"));
	bool rotating =
	    driver && (strcmp(driver, "local") == 0 || strcmp(driver, "journald") == 0 ||
		       strcmp(driver, "syslog") == 0 || strcmp(driver, "none") == 0);
	check_observed(c, "%s: log-driver %s, max-size %s", cfg ? "daemon.json" : "no daemon.json",
		       driver ? driver : "json-file (default)", max_size ? max_size : "unset");
	json_decref(cfg);
	if (rotating || max_size) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "container logs are rotated");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "json-file logs grow without limit on the guest disk: /var/lib/docker took "
		     "11.2 of 11.8 GB in the write-up, more than any OS trimming saves");
	check_fix(c, "\"log-driver\": \"local\" or \"log-opts\": {\"max-size\": \"10m\", "
		     "\"max-file\": \"3\"} in /etc/docker/daemon.json");
}

static void check_docker_gc(const struct doctor *d, struct check *c)
{
	json_t *cfg;
	c->id = "docker-builder-gc";
	c->title = "BuildKit cache garbage collection";
	if (!docker_config(d, c, CHECK_STATUS_NA, &cfg))
		return;
	const json_t *gc = json_object_get(json_object_get(cfg, "builder"), "gc");
	const json_t *enabled = json_object_get(gc, "enabled");
	const char *keep = json_string_value(json_object_get(gc, "defaultKeepStorage"));
	bool on = json_is_object(gc) && !json_is_false(enabled) &&
		  (keep || json_object_get(gc, "policy"));
	check_observed(c, "builder.gc %s%s%s",
		       !gc  ? "not configured"
		       : on ? "on"
			    : "off",
		       keep ? ", keep " : "", keep ? keep : "");
	json_decref(cfg);
	if (on) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "the build cache is capped");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "without an explicit cap the BuildKit cache keeps growing on the guest disk "
		     "(/var/lib/docker took 11.2 of 11.8 GB in the write-up)");
	check_fix(c, "\"builder\": {\"gc\": {\"enabled\": true, \"defaultKeepStorage\": \"5GB\"}} "
		     "in /etc/docker/daemon.json");
}

/* output_log="/var/log/lima-guestagent.log" in the OpenRC service, when it says so. */
static void guestagent_log_path(char *path, size_t size)
{
	char *buf;
	snprintf(path, size, "/var/log/lima-guestagent.log");
	if (vmc_fs_read("/etc/init.d/lima-guestagent", &buf, NULL, 1u << 20) < 0)
		return;
	const char *v = vmc_find_key(buf, "output_log=");
	if (v) {
		v += (*v == '"' || *v == '\'');
		size_t len = strcspn(v, "\"'\n ");
		if (len > 0 && len < size)
			snprintf(path, size, "%.*s", (int)len, v);
	}
	free(buf);
}

static void check_guestagent_log(const struct doctor *d, struct check *c)
{
	char path[256];
	struct vmc_mount m;
	c->id = "lima-guestagent-log";
	c->title = "lima-guestagent log location";
	bool present = doctor_find_proc(d, "lima-guestagent") ||
		       vmc_fs_exists("/etc/init.d/lima-guestagent") ||
		       vmc_fs_exists("/usr/local/bin/lima-guestagent");
	if (!present) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "no lima-guestagent");
		check_why(c, "not a Lima guest");
		return;
	}
	guestagent_log_path(path, sizeof path);
	if (!mount_of(d, path, &m)) {
		c->status = CHECK_STATUS_NA;
		check_observed(c, "log %s, mounts unreadable", path);
		check_why(c, "unknown");
		return;
	}
	check_observed(c, "%s on %s (%s)", path, m.target, m.fstype);
	if (in_ram(m.fstype)) {
		c->status = CHECK_STATUS_OK;
		check_why(c, "its SyncTime line every 10 s stays in RAM");
		return;
	}
	c->status = CHECK_STATUS_WARN;
	check_why(c, "lima-guestagent logs 'SyncTime: system time synchronized' every 10 s (not "
		     "configurable): ~600 B/min of log, ~25 KB/min of ext4 journal writes");
	check_fix(c, "put /var/log on tmpfs in a 'mode: boot' provision (mode: system is too late: "
		     "the agent keeps writing to the old inode)");
}

static void (*const system_checks[])(const struct doctor *, struct check *) = {
    check_var_log, check_commit, check_syslogd,	    check_gettys,    check_hotplugd,
    check_grub,	   check_fstrim, check_docker_logs, check_docker_gc, check_guestagent_log};
_Static_assert(sizeof system_checks / sizeof system_checks[0] == CHECK_GROUP_SYSTEM_COUNT,
	       "CHECK_GROUP_SYSTEM_COUNT is the length of system_checks");

void check_group_system(const struct doctor *d, struct check out[CHECK_GROUP_SYSTEM_COUNT])
{
	for (size_t i = 0; i < CHECK_GROUP_SYSTEM_COUNT; i++)
		system_checks[i](d, &out[i]);
}

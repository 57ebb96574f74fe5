/* SPDX-License-Identifier: Apache-2.0 */
#include "autostop/forward.h"

#include "autostop/sockfile.h"
#include "clients/http.h"
#include "clients/process.h"
#include "message.h"
#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void forward_get(const char *dir, enum forward_socket which, struct forward *f)
{
	bool docker = which == FORWARD_DOCKER;
	f->label = docker ? "docker.sock" : "vmcost-agent.sock";
	f->probe = docker ? "/_ping" : "/v1/status";
	f->guest = docker ? "/var/run/docker.sock" : "/run/vmcost-agent.sock";
	vmc_textf(f->host, sizeof f->host, "%s/sock/%s", dir, f->label);
}

/* Does the instance's lima.yaml forward this socket ("{{.Dir}}/sock/docker.sock")? Lima
 * creates the file when it forwards, so a missing one is only news when it is configured. */
static bool configured(const struct forward *f)
{
	char yaml[PATH_MAX + 16], want[64];
	vmc_textf(yaml, sizeof yaml, "%.*s/lima.yaml",
		  (int)(strlen(f->host) - strlen("/sock/") - strlen(f->label)), f->host);
	vmc_textf(want, sizeof want, "/sock/%s", f->label);
	char *text = NULL;
	size_t len = 0;
	if (vmc_read_file(yaml, FORWARD_YAML_MAX, &text, &len) < 0)
		return false;
	bool found = strstr(text, want) != NULL;
	free(text);
	return found;
}

enum forward_health forward_check(const struct forward *f, long timeout_ms, char *why,
				  size_t whysize)
{
	why[0] = '\0';
	struct stat st;
	if (lstat(f->host, &st) < 0) {
		bool forwarded = configured(f);
		vmc_textf(why, whysize, "%s does not exist%s", f->host,
			  forwarded ? " although lima.yaml forwards it (the forward is gone)" : "");
		return forwarded ? FORWARD_DEAD : FORWARD_ABSENT;
	}
	if (!S_ISSOCK(st.st_mode)) {
		vmc_textf(why, whysize, "%s is not a socket", f->host);
		return FORWARD_DEAD;
	}
	struct http_request req = {
	    .socket_path = f->host, .method = "GET", .path = f->probe, .timeout_ms = timeout_ms};
	struct http_response resp;
	bool ok = http_do(&req, &resp) == 0 && resp.status == 200;
	if (!ok && resp.status)
		vmc_textf(why, whysize, "GET %s on %s answered HTTP %ld", f->probe, f->host,
			  resp.status);
	else if (!ok && sockfile_probe(f->host) == SOCKFILE_STALE)
		vmc_textf(why, whysize,
			  "%s refuses connections (a stale socket file: nobody listens)", f->host);
	else if (!ok)
		vmc_textf(why, whysize,
			  "GET %s on %s: %s (the forward accepts but nothing answers)", f->probe,
			  f->host, resp.error[0] ? resp.error : "no answer");
	http_response_free(&resp);
	return ok ? FORWARD_ANSWERS : FORWARD_DEAD;
}

void forward_heal_command(const char *dir, const char *name, const struct forward *f, char *buf,
			  size_t size)
{
	vmc_textf(buf, size, "rm -f %s && ssh -F %s/ssh.config -O forward -L %s:%s lima-%s",
		  f->host, dir, f->host, f->guest, name);
}

/* Runs ssh with Lima's configuration; 0 when it exited 0, else -1 with its last line in err. */
static int ssh(const char *dir, const char *name, const char *op, const char *spec, char *err,
	       size_t errsize)
{
	char config[PATH_MAX + 16], host[300];
	vmc_textf(config, sizeof config, "%s/ssh.config", dir);
	vmc_textf(host, sizeof host, "lima-%s", name);
	const char *with_op[] = {"ssh", "-F", config, "-O", op, "-L", spec, host, NULL};
	const char *check[] = {"ssh", "-F", config, "-O", "check", host, NULL};
	/* A command over a new connection: with Lima's ControlMaster=auto and ControlPersist it
	 * leaves a new master behind. */
	const char *master[] = {"ssh", "-F", config, "-o", "BatchMode=yes", host, "true", NULL};
	const char *const *argv = spec ? with_op : strcmp(op, "check") == 0 ? check : master;
	struct process_options opt = {.timeout_ms = FORWARD_SSH_TIMEOUT_MS};
	struct process_result res;
	if (process_run(argv, &opt, &res) < 0) {
		vmc_errorf(err, errsize, "cannot run ssh:");
		return -1;
	}
	int rc = res.exit_code == 0 && !res.timed_out ? 0 : -1;
	if (rc < 0) {
		char last[256];
		process_last_line(res.err ? res.err : "", last, sizeof last);
		vmc_textf(err, errsize, "ssh %s%s%s: %s", spec ? "-O " : "", op,
			  spec ? "" : " (Lima's SSH master)",
			  res.timed_out ? "no answer in 20 s"
			  : last[0]	? last
					: "failed");
	}
	process_result_free(&res);
	return rc;
}

int forward_heal(const char *dir, const char *name, const struct forward *f, char *err,
		 size_t errsize)
{
	char spec[2 * PATH_MAX + 2], ignored[256];
	vmc_textf(spec, sizeof spec, "%s:%s", f->host, f->guest);
	if (ssh(dir, name, "check", NULL, ignored, sizeof ignored) < 0 &&
	    ssh(dir, name, "master", NULL, err, errsize) < 0)
		return -1;
	ssh(dir, name, "cancel", spec, ignored, sizeof ignored);
	if (unlink(f->host) < 0 && errno != ENOENT) {
		vmc_errorf(err, errsize, "cannot remove %s:", f->host);
		return -1;
	}
	if (ssh(dir, name, "forward", spec, err, errsize) < 0)
		return -1;
	char why[512];
	if (forward_check(f, FORWARD_PROBE_TIMEOUT_MS, why, sizeof why) != FORWARD_ANSWERS) {
		vmc_textf(err, errsize, "forwarded again, but %s", why);
		return -1;
	}
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmcost doctor NAME: the guest's idle checks (GET /v1/checks) after the host's own: the Lima
 * version, what the vmType can give back, the hostagent log Lima never rotates, socket path
 * lengths, and whether Lima's two forwarded sockets answer end to end (--heal re-creates a dead
 * one).
 */
#include "autostop/forward.h"
#include "clients/agent_client.h"
#include "clients/process.h"
#include "color.h"
#include "commands/cli.h"
#include "commands/commands.h"
#include "jsonutil.h"
#include "log.h"
#include "message.h"
#include "units.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DOCTOR_AGENT_TIMEOUT_MS 20000
/* A day of DEBUG time-sync lines is ~1 MB; this much means weeks of uptime or a noisy agent. */
#define HA_LOG_WARN_BYTES (50 * VMC_MIB)
/* macOS's sun_path is 104 bytes; Lima's longest socket name is ssh.sock.1234567890123456. */
#define MACOS_SUN_PATH	    104
#define LIMA_LONGEST_SOCKET "ssh.sock.1234567890123456"

static const struct cli_spec doctor_spec = {
    .name = "doctor",
    .synopsis = "NAME [--heal] [--json]",
    .help =
	"Checks what makes instance NAME cost more than it must while idle.\n"
	"Host checks: the Lima version (2.2.0 fixes the guest agent's port-forward fd leak),\n"
	"what the vmType can return to the host (vz: nothing until the VM stops; krunkit:\n"
	"automatic free-page reporting, lost with init_on_free=1; qemu: only with a balloon\n"
	"device), the size of ha.stderr.log (never rotated), and socket path lengths (104\n"
	"bytes on macOS), and whether sock/docker.sock and sock/vmcost-agent.sock answer end\n"
	"to end (GET /_ping, GET /v1/status): Lima forwards them once over its SSH master, and\n"
	"a forward that died leaves a socket file that refuses or hangs. Guest checks come\n"
	"from vmcost-agent: each with its status, why it costs something, and the fix.\n\n"
	"Exit status: 0 when nothing fails (warnings allowed), 1 when a check fails, 5 when\n"
	"the agent cannot be reached (host checks are still printed).\n\n"
	"  --heal  re-create a dead forward (remove the stale socket file, then ssh -O forward\n"
	"          through the instance's ssh.config) and check it again\n"
	"  --json  machine-readable output\n\n"
	"Example: vmcost doctor dev --heal\n",
    .min_args = 1,
    .max_args = 1,
};

struct check {
	char id[48];
	const char *status; /* ok, warn, fail, n/a */
	char title[96];
	char observed[256];
	char why[512];
	char fix[512];
};

#define MAX_HOST_CHECKS 8
_Static_assert(MAX_HOST_CHECKS >= 4 + FORWARD_COUNT, "room for every host check");

struct host_checks {
	struct check c[MAX_HOST_CHECKS];
	size_t n;
};

static struct check *add(struct host_checks *h, const char *id, const char *title)
{
	struct check *c = &h->c[h->n++];
	memset(c, 0, sizeof *c);
	vmc_textf(c->id, sizeof c->id, "%s", id);
	vmc_textf(c->title, sizeof c->title, "%s", title);
	c->status = "ok";
	return c;
}

/* "limactl version 2.2.0", "v2.1.4", "2.2.0-12-gabc" -> major, minor, patch. */
static int parse_version(const char *s, int v[3])
{
	while (*s && !isdigit((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	for (int i = 0; i < 3; i++) {
		char *end;
		long x = strtol(s, &end, 10);
		if (end == s || x < 0 || x > 100000)
			return -1;
		v[i] = (int)x;
		s = end;
		if (i < 2) {
			if (*s != '.')
				return i >= 1 ? 0 : -1;
			s++;
		}
	}
	return 0;
}

static void check_lima_version(struct host_checks *h, const struct lima_instance *inst)
{
	struct check *c = add(h, "lima-version", "Lima version");
	char version[64] = "";
	const char *source = "limactl --version";
	const char *argv[] = {"limactl", "--version", NULL};
	process_first_line(argv, 10000, version, sizeof version);
	if (!version[0] && inst->lima_version[0]) {
		vmc_textf(version, sizeof version, "%s", inst->lima_version);
		source = "the Lima that created the instance";
	}
	int v[3] = {0, 0, 0};
	if (!version[0] || parse_version(version, v) < 0) {
		c->status = "n/a";
		vmc_textf(c->observed, sizeof c->observed, "unknown (no limactl on PATH%s)",
			  version[0] ? ", unparseable version" : "");
		vmc_textf(
		    c->why, sizeof c->why,
		    "Lima before 2.2.0 leaks one socket per forwarded connection in the guest "
		    "agent "
		    "(#5210) until port forwarding silently dies");
		return;
	}
	vmc_textf(c->observed, sizeof c->observed, "%s (%s)", version, source);
	bool old = v[0] < 2 || (v[0] == 2 && v[1] < 2);
	vmc_textf(c->why, sizeof c->why,
		  "Lima before 2.2.0 leaks one socket per forwarded connection in the guest agent "
		  "(#5210, fixed by #5216 in 2.2.0) until port forwarding silently dies");
	if (old) {
		c->status = "warn";
		vmc_textf(c->fix, sizeof c->fix,
			  "upgrade Lima to 2.2.0 or later (brew upgrade lima), "
			  "then restart the instance");
	}
}

/* The guest's check with this id, or NULL. */
static const json_t *guest_check(const json_t *checks, const char *id)
{
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(checks, "checks"), i, c)
	{
		const char *cid = vmc_json_get_str(c, "id");
		if (cid && strcmp(cid, id) == 0)
			return c;
	}
	return NULL;
}

static bool guest_init_on_free(const json_t *checks)
{
	const char *obs = vmc_json_get_str(guest_check(checks, "init-on-free"), "observed");
	return obs && strncmp(obs, "on", 2) == 0;
}

static bool guest_reporting(const json_t *checks)
{
	const char *st = vmc_json_get_str(guest_check(checks, "free-page-reporting"), "status");
	return st && strcmp(st, "ok") == 0;
}

static void check_vm_type(struct host_checks *h, const struct lima_instance *inst,
			  const json_t *checks)
{
	struct check *c = add(h, "vm-type", "What the vmType returns to the host");
	vmc_textf(c->observed, sizeof c->observed, "vmType %s%s", inst->vm_type,
		  inst->vm_type_defaulted ? " (Lima's default)" : "");
	if (strcmp(inst->vm_type, "vz") == 0) {
		c->status = "warn";
		vmc_textf(
		    c->why, sizeof c->why,
		    "vz has no memory-return path: Lima attaches a balloon but never drives it, "
		    "Virtualization.framework releases nothing when it inflates, and no free-page "
		    "reporting exists, so the footprint keeps the high-water mark until the VM "
		    "stops");
		vmc_textf(
		    c->fix, sizeof c->fix,
		    "keep the guest small (memory:), let vmcost-agent trim the page cache, and "
		    "stop "
		    "the VM when idle; init_on_free=1 halves what the stopped-VM test frees "
		    "(zeroed pages compress)");
	} else if (strcmp(inst->vm_type, "krunkit") == 0) {
		vmc_textf(c->why, sizeof c->why,
			  "krunkit's libkrun reports freed guest pages to the host on its own "
			  "(MADV_FREE), but the guest switches reporting off when it boots with "
			  "init_on_free=1");
		if (checks && guest_init_on_free(checks)) {
			c->status = "fail";
			vmc_textf(c->fix, sizeof c->fix,
				  "remove init_on_free=1 from the guest's kernel command line and "
				  "restart");
		} else if (!checks) {
			c->status = "n/a";
		}
	} else if (strcmp(inst->vm_type, "qemu") == 0) {
		vmc_textf(
		    c->why, sizeof c->why,
		    "Lima's qemu driver adds no balloon device, so freed guest memory stays with "
		    "QEMU unless a virtio-balloon with free-page-reporting=on is added");
		if (checks && !guest_reporting(checks)) {
			c->status = "warn";
			vmc_textf(c->fix, sizeof c->fix,
				  "start the instance with QEMU_SYSTEM_%s=\"qemu-system-%s -device "
				  "virtio-balloon-pci,free-page-reporting=on\"",
				  strcmp(inst->arch, "aarch64") == 0 ? "AARCH64" : "X86_64",
				  inst->arch[0] ? inst->arch : "x86_64");
		} else if (!checks) {
			c->status = "n/a";
		}
	} else {
		c->status = "n/a";
		vmc_textf(c->why, sizeof c->why, "vmcost measures qemu, vz and krunkit instances");
	}
}

static void check_ha_log(struct host_checks *h, const struct lima_instance *inst)
{
	struct check *c = add(h, "ha-stderr-log", "Size of ha.stderr.log");
	char path[4200], a[32];
	struct stat st;
	vmc_textf(
	    c->why, sizeof c->why,
	    "the hostagent logs at DEBUG level (a time-sync line every 10 s) into a file Lima "
	    "never rotates; it is recreated only when the instance starts");
	if (lima_instance_path(inst, "ha.stderr.log", path, sizeof path) < 0 ||
	    stat(path, &st) < 0) {
		c->status = "n/a";
		vmc_textf(c->observed, sizeof c->observed, "no %s", path);
		return;
	}
	vmc_textf(c->observed, sizeof c->observed, "%s",
		  vmc_format_bytes((uint64_t)st.st_size, a, sizeof a));
	if ((uint64_t)st.st_size >= HA_LOG_WARN_BYTES) {
		c->status = "warn";
		vmc_textf(
		    c->fix, sizeof c->fix,
		    "restart the instance (limactl restart %s) to start a new log; vmcost disk %s "
		    "shows how fast it grows",
		    inst->name, inst->name);
	}
}

static void check_socket_paths(struct host_checks *h, const struct lima_instance *inst)
{
	struct check *c = add(h, "socket-paths", "Unix socket path lengths");
	char longest[4300], agent[4300];
	vmc_textf(longest, sizeof longest, "%s/%s", inst->dir, LIMA_LONGEST_SOCKET);
	agent_socket_path(inst, agent, sizeof agent);
	size_t limit = agent_socket_path_max();
	size_t mac = MACOS_SUN_PATH - 1;
	size_t worst = strlen(longest) > strlen(agent) ? strlen(longest) : strlen(agent);
	vmc_textf(c->observed, sizeof c->observed,
		  "longest socket path %zu bytes (%zu allowed here, %zu on macOS)", worst, limit,
		  mac);
	vmc_textf(c->why, sizeof c->why,
		  "unix socket paths must fit sun_path (104 bytes on macOS with the NUL); Lima's "
		  "longest is %s and vmcost's is sock/vmcost-agent.sock",
		  LIMA_LONGEST_SOCKET);
	if (worst > limit || worst > mac) {
		c->status = worst > limit ? "fail" : "warn";
		vmc_textf(c->fix, sizeof c->fix, "use a shorter LIMA_HOME (now %.*s)",
			  (int)(strlen(inst->dir) - strlen(inst->name) - 1), inst->dir);
	}
}

/*
 * One forwarded socket, end to end; with heal, a dead one is re-created and checked again.
 * answered: the agent's checks just came through it, which is the end-to-end test.
 */
static void check_forward(struct host_checks *h, const struct lima_instance *inst,
			  enum forward_socket which, bool heal, bool answered)
{
	struct forward f;
	forward_get(inst->dir, which, &f);
	char id[48], title[96], why[512];
	vmc_textf(id, sizeof id, "%s", which == FORWARD_DOCKER ? "docker-sock" : "agent-sock");
	vmc_textf(title, sizeof title, "Host socket %s", f.label);
	struct check *c = add(h, id, title);
	vmc_textf(
	    c->why, sizeof c->why,
	    "Lima forwards %s once over its SSH master (ssh -O forward) and never again: after "
	    "host sleep or a first boot the forward can be gone while the instance runs, and "
	    "clients on sock/%s hang or are refused",
	    f.guest, f.label);
	if (answered) {
		vmc_textf(c->observed, sizeof c->observed, "GET /v1/checks answered through it");
		return;
	}
	enum forward_health health = forward_check(&f, FORWARD_PROBE_TIMEOUT_MS, why, sizeof why);
	if (health == FORWARD_ANSWERS) {
		vmc_textf(c->observed, sizeof c->observed, "GET %s answers", f.probe);
		return;
	}
	if (health == FORWARD_ABSENT) {
		c->status = "n/a";
		vmc_textf(c->observed, sizeof c->observed, "not forwarded (%s)", why);
		return;
	}
	char healed[512] = "";
	if (heal) {
		cli_progress("re-creating the forward of %s", f.label);
		int rc = forward_heal(inst->dir, inst->name, &f, healed, sizeof healed);
		cli_progress_done();
		if (rc == 0) {
			vmc_textf(c->observed, sizeof c->observed,
				  "was dead (%s); healed: GET %s answers again", why, f.probe);
			return;
		}
	}
	c->status = "fail";
	vmc_textf(c->observed, sizeof c->observed, "dead: %s%s%s", why,
		  heal ? "; healing failed: " : "", healed);
	char cmd[sizeof c->fix];
	forward_heal_command(inst->dir, inst->name, &f, cmd, sizeof cmd);
	vmc_textf(c->fix, sizeof c->fix, "%s (or vmcost doctor %s --heal)", cmd, inst->name);
}

static json_t *check_json(const struct check *c)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "id", c->id, "title", c->title, "status",
			 c->status, "observed", c->observed, "why", c->why, "fix",
			 c->fix[0] ? json_string(c->fix) : json_null());
}

static void print_check(const char *status, const char *title, const char *observed,
			const char *why, const char *fix)
{
	bool color = vmc_use_color(stdout);
	printf("%s%-4s%s  %s: %s\n", vmc_status_color(status, color), status,
	       vmc_color_reset(color), title, observed ? observed : "");
	if (strcmp(status, "ok") != 0 && strcmp(status, "n/a") != 0) {
		if (why && *why)
			printf("      why: %s\n", why);
		if (fix && *fix)
			printf("      fix: %s\n", fix);
	}
}

static int count_fails(const struct host_checks *h, const json_t *checks)
{
	int fails = 0;
	for (size_t i = 0; i < h->n; i++)
		fails += strcmp(h->c[i].status, "fail") == 0;
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(checks, "checks"), i, c)
	{
		const char *st = vmc_json_get_str(c, "status");
		fails += st && strcmp(st, "fail") == 0;
	}
	return fails;
}

static void print_human(const struct lima_instance *inst, const struct host_checks *h,
			const json_t *checks, const char *agent_err)
{
	printf("%sHost%s (%s, vmType %s)\n", cli_bold(), cli_reset(), inst->name, inst->vm_type);
	for (size_t i = 0; i < h->n; i++)
		print_check(h->c[i].status, h->c[i].title, h->c[i].observed, h->c[i].why,
			    h->c[i].fix);
	printf("\n%sGuest%s", cli_bold(), cli_reset());
	if (!checks) {
		printf("\nfail  vmcost-agent: %s\n", agent_err);
		return;
	}
	const char *vmm = vmc_json_get_str(json_object_get(checks, "vmm"), "guess");
	printf(" (VMM as the guest sees it: %s)\n", vmm ? vmm : "unknown");
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(checks, "checks"), i, c)
	{
		/* The agent may be older or newer than vmcost: any field may be missing. */
		print_check(vmc_json_get_str_or(c, "status", "?"),
			    vmc_json_get_str_or(c, "title", vmc_json_get_str_or(c, "id", "?")),
			    vmc_json_get_str(c, "observed"), vmc_json_get_str(c, "why"),
			    vmc_json_get_str(c, "fix"));
	}
}

int cmd_doctor(int argc, char **argv)
{
	struct cli_opts o;
	bool heal = false;
	const struct cli_option options[] = {
	    {.name = "--heal", .kind = CLI_FLAG, .flag = &heal},
	    {0},
	};
	struct cli_spec spec = doctor_spec;
	spec.options = options;
	int rc = cli_parse(&spec, argc, argv, &o);
	if (rc != CLI_CONTINUE)
		return rc;
	struct lima_instance inst;
	if ((rc = cli_running_instance(&o, o.args[0], &inst)) != VMC_EXIT_OK)
		return rc;
	/* Healing comes first: the guest's checks are asked through the agent's socket. */
	struct host_checks sockets = {.n = 0};
	if (heal)
		for (int i = 0; i < FORWARD_COUNT; i++)
			check_forward(&sockets, &inst, (enum forward_socket)i, true, false);
	char agent_err[1024] = "";
	json_t *checks = NULL;
	cli_progress("asking vmcost-agent for its checks");
	int agent_rc = agent_call(&inst, "GET", "/v1/checks", NULL, DOCTOR_AGENT_TIMEOUT_MS,
				  &checks, agent_err, sizeof agent_err);
	cli_progress_done();
	if (!heal)
		for (int i = 0; i < FORWARD_COUNT; i++)
			check_forward(&sockets, &inst, (enum forward_socket)i, false,
				      i == FORWARD_AGENT && agent_rc == VMC_EXIT_OK);
	struct host_checks h = {.n = 0};
	check_lima_version(&h, &inst);
	check_vm_type(&h, &inst, checks);
	check_ha_log(&h, &inst);
	check_socket_paths(&h, &inst);
	for (size_t i = 0; i < sockets.n; i++)
		h.c[h.n++] = sockets.c[i];
	int fails = count_fails(&h, checks);
	if (o.json) {
		json_t *host = json_array();
		for (size_t i = 0; i < h.n; i++)
			json_array_append_new(host, check_json(&h.c[i]));
		json_t *j = json_pack("{s:s,s:s,s:o}", "instance", inst.name, "vm_type",
				      inst.vm_type, "host", host);
		json_object_set_new(j, "guest", checks ? json_incref(checks) : json_null());
		json_object_set_new(j, "agent_error",
				    checks ? json_null() : json_string(agent_err));
		json_object_set_new(j, "failed", json_integer(fails));
		cli_print_json(j);
	} else {
		print_human(&inst, &h, checks, agent_err);
	}
	json_decref(checks);
	if (agent_rc != VMC_EXIT_OK) {
		fprintf(stderr, "vmcost: error: %s\n", agent_err);
		return agent_rc;
	}
	return fails > 0 ? VMC_EXIT_FAILURE : VMC_EXIT_OK;
}

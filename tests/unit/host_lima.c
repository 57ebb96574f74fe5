/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host/clients/lima.c: instance directories (qemu, vz, krunkit; running, stopped, broken; merged
 * _config layers; malformed lima.yaml) and limactl list --json in every key variant, through
 * the parser and through a fake limactl on PATH.
 */
#include "check.h"
#include "clients/lima.h"
#include "clients/lima_dir.h"
#include "clients/limactl.h"
#include "host_testlib.h"
#include "log.h"
#include "units.h"

static char err[1024];

/* Lima 2.2 on a Mac, running vz: the full key set including deprecated PascalCase fields. */
static const char line_vz_running[] =
    "{\"name\":\"dev\",\"hostname\":\"lima-dev\",\"status\":\"Running\",\"dir\":\"/Users/u/.lima/"
    "dev\","
    "\"vmType\":\"vz\",\"arch\":\"aarch64\",\"cpus\":4,\"memory\":6442450944,\"disk\":107374182400,"
    "\"message\":\"To run `docker` "
    "...\\n\",\"network\":[{\"lima\":\"shared\"}],\"sshLocalPort\":50123,"
    "\"sshConfigFile\":\"/Users/u/.lima/dev/ssh.config\",\"hostAgentPID\":4242,\"driverPID\":4242,"
    "\"config\":{\"vmType\":\"vz\",\"memory\":\"6GiB\",\"cpus\":4},\"sshAddress\":\"127.0.0.1\","
    "\"protected\":false,\"limaVersion\":\"v2.2.0\",\"param\":{\"a\":\"b\"},"
    "\"HostOS\":\"darwin\",\"HostArch\":\"aarch64\",\"LimaHome\":\"/Users/u/.lima\","
    "\"IdentityFile\":\"/Users/u/.lima/_config/user\"}\n";

/* Stopped: omitempty drops hostAgentPID, driverPID, sshLocalPort. */
static const char line_qemu_stopped[] =
    "{\"name\":\"q\",\"hostname\":\"lima-q\",\"status\":\"Stopped\",\"dir\":\"/home/u/.lima/q\","
    "\"vmType\":\"qemu\",\"arch\":\"x86_64\",\"cpus\":2,\"memory\":2147483648,\"disk\":10737418240,"
    "\"config\":{},\"sshAddress\":\"127.0.0.1\",\"protected\":true,\"limaVersion\":\"v2.1.4\","
    "\"HostOS\":\"linux\",\"HostArch\":\"x86_64\",\"LimaHome\":\"/home/u/.lima\","
    "\"IdentityFile\":\"/home/u/.lima/_config/user\"}\n";

/* Lima 3.0 shape: no PascalCase keys; krunkit running. */
static const char line_krunkit_30[] =
    "{\"name\":\"k\",\"status\":\"Running\",\"dir\":\"/Users/u/.lima/k\",\"vmType\":\"krunkit\","
    "\"arch\":\"aarch64\",\"cpus\":4,\"memory\":4294967296,\"hostAgentPID\":500,\"driverPID\":501,"
    "\"protected\":false,\"limaVersion\":\"v3.0.0\"}\n";

TEST(limactl_json_every_key_variant)
{
	struct lima_instance *list;
	size_t n;
	char all[4096];
	snprintf(all, sizeof all, "%s%s%s", line_vz_running, line_qemu_stopped, line_krunkit_30);
	CHECK_INT(limactl_parse_list_json(all, strlen(all), NULL, &list, &n, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(n, 3);
	if (n != 3)
		return;
	CHECK_STR(list[0].name, "dev");
	CHECK_INT(list[0].status, LIMA_STATUS_RUNNING);
	CHECK_STR(list[0].vm_type, "vz");
	CHECK_STR(list[0].arch, "aarch64");
	CHECK_INT(list[0].cpus, 4);
	CHECK_U64(list[0].memory, 6 * VMC_GIB);
	CHECK_U64(list[0].disk, 100 * VMC_GIB);
	CHECK_INT(list[0].ha_pid, 4242);
	CHECK_INT(list[0].driver_pid, 4242);
	CHECK_STR(list[0].lima_version, "v2.2.0");
	CHECK_STR(list[0].host_os, "darwin");
	CHECK_PATH(list[0].dir, "/Users/u/.lima/dev");
	CHECK_STR(list[0].source, "limactl");
	CHECK(!list[0].vm_type_defaulted);

	CHECK_INT(list[1].status, LIMA_STATUS_STOPPED);
	CHECK_INT(list[1].ha_pid, 0);
	CHECK_INT(list[1].driver_pid, 0);
	CHECK_STR(list[1].vm_type, "qemu");

	CHECK_STR(list[2].vm_type, "krunkit");
	CHECK_INT(list[2].ha_pid, 500);
	CHECK_INT(list[2].driver_pid, 501);
	CHECK_STR(list[2].lima_version, "v3.0.0");
	free(list);

	/* Only the named one. */
	CHECK_INT(limactl_parse_list_json(all, strlen(all), "k", &list, &n, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(list[0].name, "k");
	free(list);
	CHECK_INT(limactl_parse_list_json(all, strlen(all), "nope", &list, &n, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(n, 0);
	free(list);
}

TEST(limactl_json_statuses_and_defaults)
{
	static const char text[] =
	    "{\"name\":\"a\",\"status\":\"Broken\",\"vmType\":\"qemu\"}\n"
	    "{\"name\":\"b\",\"status\":\"Installing\",\"config\":{\"vmType\":\"krunkit\"}}\n"
	    "{\"name\":\"c\",\"status\":\"Uninitialized\",\"HostOS\":\"darwin\",\"arch\":\"x86_"
	    "64\"}\n"
	    "{\"name\":\"d\",\"status\":\"\",\"HostOS\":\"darwin\"}\n"
	    "{\"name\":\"e\",\"status\":\"SomethingNew\",\"HostOS\":\"linux\",\"future\":[1,2]}\n";
	struct lima_instance *l;
	size_t n;
	CHECK_INT(limactl_parse_list_json(text, strlen(text), NULL, &l, &n, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(n, 5);
	if (n != 5)
		return;
	CHECK_INT(l[0].status, LIMA_STATUS_BROKEN);
	CHECK_INT(l[1].status, LIMA_STATUS_INSTALLING);
	CHECK_STR(l[1].vm_type, "krunkit"); /* from config.vmType */
	CHECK_INT(l[2].status, LIMA_STATUS_UNINITIALIZED);
	/* An empty status is how real Lima 2.2 lists an instance it cannot load. */
	CHECK(l[3].unreadable);
	CHECK(!l[3].vm_type_defaulted);
	CHECK_STR(l[3].vm_type, "?");
	CHECK_INT(l[3].status, LIMA_STATUS_BROKEN);
	CHECK_INT(l[4].status, LIMA_STATUS_UNKNOWN);
	CHECK_STR(l[4].vm_type, "qemu");
	/* No dir key: $LIMA_HOME/NAME. */
	char want[4200];
	snprintf(want, sizeof want, "%s/e", getenv("LIMA_HOME"));
	CHECK_PATH(l[4].dir, want);
	free(l);
}

TEST(limactl_json_pretty_form)
{
	/* What limactl prints on a TTY (indent 4), minus colours. */
	static const char text[] = "{\n    \"name\": \"dev\",\n    \"status\": \"Running\",\n"
				   "    \"vmType\": \"qemu\",\n    \"hostAgentPID\": 7,\n"
				   "    \"driverPID\": 8\n}\n{\n    \"name\": \"x\"\n}\n";
	struct lima_instance *l;
	size_t n;
	CHECK_INT(limactl_parse_list_json(text, strlen(text), NULL, &l, &n, err, sizeof err),
		  VMC_EXIT_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_INT(l[0].driver_pid, 8);
		CHECK_STR(l[1].name, "x");
	}
	free(l);
	CHECK_INT(limactl_parse_list_json("", 0, NULL, &l, &n, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(n, 0);
	CHECK_INT(limactl_parse_list_json("\n  \n", 4, NULL, &l, &n, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(n, 0);
}

TEST(limactl_json_malformed)
{
	static const char *const bad[] = {
	    "not json\n",
	    "[1,2]\n",
	    "{\"name\":\"a\",\"memory\":\"4GiB\"}\n",
	    "{\"name\":\"a\",\"hostAgentPID\":-5}\n",
	    "{\"name\":\"a\",\"driverPID\":9999999999}\n",
	    "{\"status\":\"Running\"}\n",
	    "{\"name\":\"\"}\n",
	    "{\"name\":7}\n",
	    "{\"name\":\"a\",\"cpus\":\"four\"}\n",
	    "{\"name\":\"a\",\"vmType\":{}}\n",
	    "{\"name\":\"a\",\"config\":[]}\n",
	    "{\"name\":\"a\"}\n{\"name\":\"b\",\"status\":",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct lima_instance *l = (void *)1;
		size_t n = 9;
		err[0] = '\0';
		int rc =
		    limactl_parse_list_json(bad[i], strlen(bad[i]), NULL, &l, &n, err, sizeof err);
		CHECK_INT(rc, VMC_EXIT_MALFORMED);
		CHECK(l == NULL && n == 0);
		CHECK_CONTAINS(err, "limactl list --json: line ");
	}
	struct lima_instance *l;
	size_t n;
	limactl_parse_list_json("{\"name\":\"a\"}\n{\"name\":\"b\",\"memory\":\"x\"}\n", 42, NULL,
				&l, &n, err, sizeof err);
	CHECK_CONTAINS(err, "line 2");
	CHECK_CONTAINS(err, "\"memory\"");
}

TEST(names)
{
	CHECK(lima_name_valid("default"));
	CHECK(lima_name_valid("dev-2.docker_x"));
	CHECK(!lima_name_valid(""));
	CHECK(!lima_name_valid("../etc"));
	CHECK(!lima_name_valid("a/b"));
	CHECK(!lima_name_valid("_config"));
	CHECK(!lima_name_valid("a--b"));
	CHECK(!lima_name_valid("a-"));
	CHECK(!lima_name_valid(".hidden"));
}

TEST(default_vm_type)
{
	CHECK_STR(lima_default_vm_type("darwin", "aarch64", "aarch64"), "vz");
	CHECK_STR(lima_default_vm_type("darwin", "aarch64", ""), "vz");
	CHECK_STR(lima_default_vm_type("darwin", "aarch64", "x86_64"), "qemu");
	CHECK_STR(lima_default_vm_type("linux", "x86_64", "x86_64"), "qemu");
	CHECK_STR(lima_default_vm_type("windows", "x86_64", NULL), "qemu");
}

TEST(yaml_fields_and_errors)
{
	struct lima_yaml_config c;
	static const char ok[] = "# a comment\nvmType: krunkit\narch: aarch64\ncpus: 4\n"
				 "memory: 6GiB\ndisk: \"100GiB\"\nmounts:\n- location: \"~\"\n"
				 "unknownKey: fine\n";
	CHECK_INT(lima_parse_yaml(ok, strlen(ok), "lima.yaml", &c, err, sizeof err), VMC_EXIT_OK);
	CHECK(c.has_vm_type && c.has_arch && c.has_cpus && c.has_memory && c.has_disk);
	CHECK_STR(c.vm_type, "krunkit");
	CHECK_INT(c.cpus, 4);
	CHECK_U64(c.memory, 6 * VMC_GIB);
	CHECK_U64(c.disk, 100 * VMC_GIB);

	CHECK_INT(
	    lima_parse_yaml("vmType: null\narch: default\ncpus: ~\n", 33, "f", &c, err, sizeof err),
	    VMC_EXIT_OK);
	CHECK(!c.has_vm_type && !c.has_arch && !c.has_cpus);
	CHECK_INT(lima_parse_yaml("", 0, "f", &c, err, sizeof err), VMC_EXIT_OK);
	CHECK(!c.has_memory);

	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"vmType: hyperv\n", "lima.yaml: line 1: vmType: expected qemu, vz"},
	    {"cpus: 4\nmemory: lots\n", "lima.yaml: line 2: memory: expected a size"},
	    {"cpus: many\n", "line 1: cpus:"},
	    {"cpus: 0\n", "cpus:"},
	    {"cpus: [1]\n", "cpus:"},
	    {"disk: {a: 1}\n", "disk:"},
	    {"vmType: [\n", "lima.yaml: line"},
	    {"- a\n- b\n", "not a mapping"},
	    {"just a scalar\n", "not a mapping"},
	    {"a: b\n\tc: d\n", "lima.yaml: line"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CHECK_INT(lima_parse_yaml(bad[i].text, strlen(bad[i].text), "lima.yaml", &c, err,
					  sizeof err),
			  VMC_EXIT_MALFORMED);
		CHECK_CONTAINS(err, bad[i].want);
	}
}

/* ---- instance directories --------------------------------------------------------------- */

TEST(qemu_directory_running)
{
	pid_t qemu = t_live_child();
	t_write("vmType: qemu\narch: x86_64\ncpus: 2\nmemory: 2GiB\ndisk: 8GiB\n",
		"lima/q1/lima.yaml");
	t_write_pid(getpid(), "lima/q1", "ha.pid");
	t_write_pid(qemu, "lima/q1", "qemu.pid");
	t_write("v2.2.0\n", "lima/q1/lima-version");
	struct lima_instance inst;
	CHECK_INT(lima_instance_load("q1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(inst.source, "directory");
	CHECK_INT(inst.status, LIMA_STATUS_RUNNING);
	CHECK_STR(inst.vm_type, "qemu");
	CHECK_INT(inst.cpus, 2);
	CHECK_U64(inst.memory, 2 * VMC_GIB);
	CHECK_U64(inst.disk, 8 * VMC_GIB);
	CHECK_INT(inst.ha_pid, getpid());
	CHECK_INT(inst.driver_pid, qemu);
	CHECK_STR(inst.lima_version, "v2.2.0");
	CHECK_INT(lima_instance_require_running("q1", &inst, err, sizeof err), VMC_EXIT_OK);
	char p[4200];
	CHECK_INT(lima_instance_path(&inst, "qmp.sock", p, sizeof p), 0);
	CHECK_CONTAINS(p, "/lima/q1/qmp.sock");

	/* QEMU gone, hostagent still there: Broken, and the stale pid file is named. */
	t_kill(qemu);
	CHECK_INT(lima_instance_load("q1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(inst.status, LIMA_STATUS_BROKEN);
	CHECK_CONTAINS(inst.problem, "qemu.pid");
	CHECK_INT(lima_instance_require_running("q1", &inst, err, sizeof err), VMC_EXIT_STOPPED);
	CHECK_CONTAINS(err, "limactl stop -f q1");
}

TEST(vz_directory_defaults)
{
	/* vz.pid == ha.pid: the VM runs inside the hostagent. */
	t_write("vmType: vz\n", "lima/v1/lima.yaml");
	t_write_pid(getpid(), "lima/v1", "ha.pid");
	t_write_pid(getpid(), "lima/v1", "vz.pid");
	struct lima_instance inst;
	CHECK_INT(lima_instance_load("v1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(inst.status, LIMA_STATUS_RUNNING);
	CHECK_STR(inst.vm_type, "vz");
	CHECK_INT(inst.driver_pid, inst.ha_pid);
	CHECK_U64(inst.disk, 100 * VMC_GIB);
	CHECK(inst.memory > 0 && inst.memory <= 4 * VMC_GIB);
	CHECK(inst.cpus >= 1 && inst.cpus <= 4);
	CHECK_STR(inst.lima_version, "");
}

TEST(krunkit_directory_and_stale_files)
{
	t_write("vmType: krunkit\nmemory: 4GiB\n", "lima/k1/lima.yaml");
	t_write_pid(getpid(), "lima/k1", "ha.pid");
	t_write_pid(getpid(), "lima/k1", "krunkit.pid");
	struct lima_instance inst;
	CHECK_INT(lima_instance_load("k1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(inst.status, LIMA_STATUS_RUNNING);
	CHECK_STR(inst.vm_type, "krunkit");

	/* Both pid files stale or garbage: Stopped (Lima removes them; we only read). */
	t_write_pid(t_dead_pid(), "lima/k1", "ha.pid");
	t_write("not a pid\n", "lima/k1/krunkit.pid");
	CHECK_INT(lima_instance_load("k1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(inst.status, LIMA_STATUS_STOPPED);
	CHECK_INT(lima_instance_require_running("k1", &inst, err, sizeof err), VMC_EXIT_STOPPED);
	CHECK_CONTAINS(err, "start it with limactl start k1");
}

TEST(stopped_unknown_and_malformed)
{
	struct lima_instance inst;
	t_write("vmType: qemu\n", "lima/s1/lima.yaml");
	CHECK_INT(lima_instance_load("s1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(inst.status, LIMA_STATUS_STOPPED);
	CHECK_INT(lima_instance_require_running("s1", &inst, err, sizeof err), VMC_EXIT_STOPPED);
	CHECK_CONTAINS(err, "instance \"s1\" is Stopped: start it with limactl start s1");

	CHECK_INT(lima_instance_load("nosuch", &inst, err, sizeof err), VMC_EXIT_NO_INSTANCE);
	CHECK_CONTAINS(err, "unknown instance \"nosuch\"");
	CHECK_INT(lima_instance_load("../etc", &inst, err, sizeof err), VMC_EXIT_NO_INSTANCE);
	t_write("x\n", "lima/empty/notes.txt");
	CHECK_INT(lima_instance_load("empty", &inst, err, sizeof err), VMC_EXIT_NO_INSTANCE);
	CHECK_CONTAINS(err, "no lima.yaml");

	t_write("vmType: qemu\nmemory: 4 parsecs\n", "lima/bad/lima.yaml");
	CHECK_INT(lima_instance_load("bad", &inst, err, sizeof err), VMC_EXIT_MALFORMED);
	CHECK_CONTAINS(err, "bad/lima.yaml: line 2: memory");
}

/* lima_instance_load of NAME as user nobody when we are root (CI), else as ourselves. */
static int load_as_unprivileged(const char *name)
{
	struct lima_instance inst;
	if (geteuid() != 0)
		return lima_instance_load(name, &inst, err, sizeof err);
	chmod(t_root, 0755);
	pid_t child = fork();
	if (child == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(99);
		_exit(lima_instance_load(name, &inst, err, sizeof err));
	}
	int status = 0;
	waitpid(child, &status, 0);
	chmod(t_root, 0700);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(unreadable_lima_yaml_is_a_permission_error)
{
	t_write("vmType: qemu\n", "lima/priv/lima.yaml");
	t_chmod("lima/priv/lima.yaml", 0);
	CHECK_INT(load_as_unprivileged("priv"), VMC_EXIT_PERMISSION);
	t_chmod("lima/priv/lima.yaml", 0644);
}

/* The reason the system gave survives into the message (issue 10 item 3). */
TEST(read_errors_keep_their_reason)
{
	struct lima_instance inst;
	t_write("x\n", "lima/dirc/lima.yaml/inside");
	CHECK_INT(lima_instance_load("dirc", &inst, err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "dirc/lima.yaml: Is a directory");

	/* A LIMA_HOME that is a file: listing says why it cannot be opened. */
	char home[4200], file[4200];
	snprintf(home, sizeof home, "%s", getenv("LIMA_HOME"));
	snprintf(file, sizeof file, "%s/lima/dirc/lima.yaml/inside", t_root);
	setenv("LIMA_HOME", file, 1);
	struct lima_instance *list;
	size_t n;
	CHECK_INT(lima_instance_list(&list, &n, err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "inside: Not a directory");
	setenv("LIMA_HOME", home, 1);
	snprintf(file, sizeof file, "/bin/rm -rf '%s/lima/dirc'", t_root);
	CHECK_INT(system(file), 0);
}

TEST(config_layers_merge_like_lima)
{
	/* override.yaml beats lima.yaml, which beats default.yaml. */
	t_write("memory: 3GiB\n", "lima/_config/override.yaml");
	t_write("cpus: 3\nmemory: 1GiB\ndisk: 20GiB\n", "lima/_config/default.yaml");
	t_write("vmType: qemu\nmemory: 2GiB\ndisk: 30GiB\n", "lima/m1/lima.yaml");
	struct lima_instance inst;
	CHECK_INT(lima_instance_load("m1", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_U64(inst.memory, 3 * VMC_GIB);
	CHECK_INT(inst.cpus, 3);
	CHECK_U64(inst.disk, 30 * VMC_GIB);
	t_write("cpus: nope\n", "lima/_config/default.yaml");
	CHECK_INT(lima_instance_load("m1", &inst, err, sizeof err), VMC_EXIT_MALFORMED);
	CHECK_CONTAINS(err, "_config/default.yaml: line 1: cpus");
	char p[4200];
	snprintf(p, sizeof p, "%s/lima/_config", t_root);
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", p);
	CHECK_INT(system(cmd), 0);
}

TEST(list_from_directories)
{
	/* _config and hidden entries are skipped; a malformed one shows up Broken with why. */
	struct lima_instance *l;
	size_t n;
	CHECK_INT(lima_instance_list(&l, &n, err, sizeof err), VMC_EXIT_OK);
	size_t bad = n, k1 = n;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(l[i].name, "bad") == 0)
			bad = i;
		if (strcmp(l[i].name, "k1") == 0)
			k1 = i;
		CHECK(l[i].name[0] != '_' && l[i].name[0] != '.');
		if (i > 0)
			CHECK(strcmp(l[i - 1].name, l[i].name) < 0);
	}
	CHECK(bad < n && k1 < n);
	if (bad < n) {
		CHECK_INT(l[bad].status, LIMA_STATUS_BROKEN);
		CHECK_CONTAINS(l[bad].problem, "memory");
	}
	free(l);
}

/* ---- a fake limactl on PATH ------------------------------------------------------------- */

static void install_fake_limactl(const char *json)
{
	t_write(json, "limactl.jsonl");
	char script[16384];
	snprintf(script, sizeof script,
		 "#!/bin/sh\n"
		 "# fake limactl: list --format '{{json .}}' [NAME]\n"
		 "[ \"$1 $2 $3\" = \"list --format {{json .}}\" ] || { echo \"unexpected: $*\" "
		 ">&2; exit 2; }\n"
		 "shift\n"
		 "[ -n \"${_LIMA_OUTPUT_IS_TTY:-}\" ] && { echo 'tty env leaked' >&2; exit 3; }\n"
		 "if [ -z \"${3:-}\" ]; then /bin/cat '%s/limactl.jsonl'; exit 0; fi\n"
		 "/bin/grep \"\\\"name\\\":\\\"$3\\\"\" '%s/limactl.jsonl' && exit 0\n"
		 "echo 'time=\"x\" level=warning msg=\"No instance matching '$3' found.\"' >&2\n"
		 "echo 'time=\"x\" level=fatal msg=\"unmatched instances\"' >&2\n"
		 "exit 1\n",
		 t_root, t_root);
	t_write(script, "bin/limactl");
	t_chmod("bin/limactl", 0755);
}

TEST(fake_limactl_on_path)
{
	char both[4096];
	snprintf(both, sizeof both, "%s%s", line_vz_running, line_qemu_stopped);
	install_fake_limactl(both);
	setenv("_LIMA_OUTPUT_IS_TTY", "1", 1);
	struct lima_instance inst;
	CHECK_INT(lima_instance_load("dev", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_STR(inst.source, "limactl");
	CHECK_STR(inst.vm_type, "vz");
	CHECK_INT(inst.ha_pid, 4242);
	CHECK_INT(lima_instance_load("q", &inst, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(lima_instance_require_running("q", &inst, err, sizeof err), VMC_EXIT_STOPPED);
	CHECK_INT(lima_instance_load("ghost", &inst, err, sizeof err), VMC_EXIT_NO_INSTANCE);
	CHECK_CONTAINS(err, "unknown instance \"ghost\"");

	struct lima_instance *l;
	size_t n;
	CHECK_INT(lima_instance_list(&l, &n, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(l[0].name, "dev");
		CHECK_STR(l[1].name, "q");
	}
	free(l);

	/* A malformed lima.yaml, as the real limactl 2.2.0 reports it: exit 0, an empty status,
	 * and the reason in a warning on stderr (recorded by tests/lima/commands.sh). */
	t_write(
	    "#!/bin/sh\n"
	    "echo '{\"name\":\"bad\",\"hostname\":\"lima-bad\",\"status\":\"\",\"dir\":\"/l/bad\","
	    "\"vmType\":\"\",\"arch\":\"\",\"errors\":[],\"protected\":false,\"limaVersion\":\"\","
	    "\"HostOS\":\"linux\",\"HostArch\":\"x86_64\",\"LimaHome\":\"/l\"}'\n"
	    "printf '%s\\n' 'time=\"2026-12-02T16:41:20Z\" level=warning msg=\"instance `bad` has "
	    "errors\" errors=\"[failed to unmarshal YAML (main file `/l/bad/lima.yaml`): [2:1] , "
	    "must be specified\\n   1 | vmType: [qemu\\n]\"' >&2\n",
	    "bin/limactl");
	CHECK_INT(lima_instance_load("bad", &inst, err, sizeof err), VMC_EXIT_MALFORMED);
	CHECK_CONTAINS(err, "Lima cannot load /l/bad/lima.yaml: failed to unmarshal YAML");
	CHECK(strstr(err, "vmType: [qemu") == NULL);
	CHECK_INT(lima_instance_list(&l, &n, err, sizeof err), VMC_EXIT_OK);
	CHECK_INT(n, 1);
	if (n == 1) {
		CHECK_INT(l[0].status, LIMA_STATUS_BROKEN);
		CHECK_CONTAINS(l[0].problem, "[2:1]");
	}
	free(l);

	install_fake_limactl("{\"name\":\"dev\",\"memory\":\"4GiB\"}\n");
	CHECK_INT(lima_instance_load("dev", &inst, err, sizeof err), VMC_EXIT_MALFORMED);
	CHECK_INT(lima_instance_list(&l, &n, err, sizeof err), VMC_EXIT_MALFORMED);

	/* limactl failing for another reason is not "unknown instance". */
	t_write("#!/bin/sh\necho 'level=fatal msg=\"disk full\"' >&2\nexit 1\n", "bin/limactl");
	CHECK_INT(lima_instance_load("dev", &inst, err, sizeof err), VMC_EXIT_FAILURE);
	CHECK_CONTAINS(err, "disk full");
	unsetenv("_LIMA_OUTPUT_IS_TTY");
	char path[4200];
	snprintf(path, sizeof path, "%s/bin/limactl", t_root);
	unlink(path);
}

int main(void)
{
	t_setup("host-lima");
	RUN(limactl_json_every_key_variant);
	RUN(limactl_json_statuses_and_defaults);
	RUN(limactl_json_pretty_form);
	RUN(limactl_json_malformed);
	RUN(names);
	RUN(default_vm_type);
	RUN(yaml_fields_and_errors);
	RUN(qemu_directory_running);
	RUN(vz_directory_defaults);
	RUN(krunkit_directory_and_stale_files);
	RUN(stopped_unknown_and_malformed);
	RUN(unreadable_lima_yaml_is_a_permission_error);
	RUN(read_errors_keep_their_reason);
	RUN(config_layers_merge_like_lima);
	RUN(list_from_directories);
	RUN(fake_limactl_on_path);
	t_cleanup();
	return check_done();
}

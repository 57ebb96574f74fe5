/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Lima templates in templates/ checked by the template linter (tests/tools/template_lint.c,
 * whose own suite is lib_template_lint.c) and for the facts they state. Then vmcost-agent is built
 * on this machine from exactly the files a template embeds, by running the template's own provision
 * script with apk and OpenRC stubbed (tests/sh/provision-stubs).
 */
#include "check.h"
#include "template_lint.h"
#include "yamlutil.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIXTURES "tests/unit/fixtures/templates"

__attribute__((format(printf, 1, 2))) static int shell(const char *fmt, ...);

/* A shell command's status, checked without quoting the command (too long for a message). */
#define CHECK_OK(status)                                                                           \
	do {                                                                                       \
		int status_ = (status);                                                            \
		CHECK_INT(status_, 0);                                                             \
	} while (0)

/* ---- the repository's templates ----------------------------------------------------------- */

static const char *const templates[] = {"templates/minimal-docker.yaml",
					"templates/minimal-docker-iso.yaml", NULL};
#define FRAGMENT "templates/vmcost-agent.yaml"

TEST(repository_templates_pass_every_check)
{
	for (const char *const *path = templates; *path; path++) {
		struct template_problems p;
		template_lint_file(*path, false, &p);
		if (p.count)
			template_problems_print(*path, &p);
		CHECK_INT(p.count, 0);
	}
}

/* Loads a template for the fact checks below. */
static yaml_node_t *load(struct vmc_yaml *y, const char *path)
{
	char err[256];
	memset(y, 0, sizeof *y);
	char *text = template_lint_read(path);
	if (!text || vmc_yaml_load(y, text, strlen(text), err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", path, text ? err : strerror(errno));
		free(text);
		return NULL;
	}
	free(text);
	return vmc_yaml_root(y);
}

static const char *at(struct vmc_yaml *y, yaml_node_t *node, const char *dotted)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", dotted);
	for (char *key = strtok(buf, "."); key && node; key = strtok(NULL, "."))
		node = vmc_yaml_get(y, node, key);
	return vmc_yaml_scalar(node);
}

/* Number of provision entries of a mode whose `file` is the given path. */
static int provision_count(struct vmc_yaml *y, yaml_node_t *root, const char *mode,
			   const char *file)
{
	yaml_node_t *seq = vmc_yaml_get(y, root, "provision");
	int n = 0;
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(y, seq, i);
		const char *m = vmc_yaml_scalar(vmc_yaml_get(y, item, "mode"));
		const char *f = vmc_yaml_scalar(vmc_yaml_get(y, item, "file"));
		if (strcmp(m ? m : "system", mode) == 0 && f && strcmp(f, file) == 0)
			n++;
	}
	return n;
}

/* Index of a provision entry among those of its mode (-1 if absent); *count gets how many. */
static int provision_index(struct vmc_yaml *y, yaml_node_t *root, const char *mode,
			   const char *file, int *count)
{
	yaml_node_t *seq = vmc_yaml_get(y, root, "provision");
	int n = 0, found = -1;
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(y, seq, i);
		const char *m = vmc_yaml_scalar(vmc_yaml_get(y, item, "mode"));
		const char *f = vmc_yaml_scalar(vmc_yaml_get(y, item, "file"));
		if (strcmp(m ? m : "system", mode) != 0)
			continue;
		if (f && strcmp(f, file) == 0)
			found = n;
		n++;
	}
	*count = n;
	return found;
}

static bool forwards(struct vmc_yaml *y, yaml_node_t *root, const char *guest, const char *host)
{
	yaml_node_t *seq = vmc_yaml_get(y, root, "portForwards");
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(y, seq, i);
		const char *g = vmc_yaml_scalar(vmc_yaml_get(y, item, "guestSocket"));
		const char *h = vmc_yaml_scalar(vmc_yaml_get(y, item, "hostSocket"));
		if (g && h && strcmp(g, guest) == 0 && strcmp(h, host) == 0)
			return true;
	}
	return false;
}

static bool takes_base(struct vmc_yaml *y, yaml_node_t *root, const char *url)
{
	yaml_node_t *base = vmc_yaml_get(y, root, "base");
	for (size_t i = 0; i < vmc_yaml_seq_size(base); i++) {
		const char *b = vmc_yaml_scalar(vmc_yaml_seq_item(y, base, i));
		if (b && strcmp(b, url) == 0)
			return true;
	}
	return false;
}

TEST(the_fragment_delivers_the_agent)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, FRAGMENT);
	CHECK(root != NULL);
	if (!root)
		return;
	CHECK(vmc_yaml_get(&y, root, "images") == NULL); /* the template brings the image */
	CHECK(vmc_yaml_get(&y, root, "base") == NULL);
	CHECK(forwards(&y, root, "/run/vmcost-agent.sock", "{{.Dir}}/sock/vmcost-agent.sock"));
	CHECK_INT(provision_count(&y, root, "system", "provision/vmcost-agent.sh"), 1);
	/* The configuration: written once, the API socket the Lima user's (Lima renders it). */
	yaml_node_t *seq = vmc_yaml_get(&y, root, "provision");
	int configs = 0;
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(&y, seq, i);
		const char *path = at(&y, item, "path");
		if (!path || strcmp(path, "/etc/vmcost/agent.yaml") != 0)
			continue;
		configs++;
		CHECK_STR(at(&y, item, "mode"), "data");
		CHECK_STR(at(&y, item, "overwrite"), "false");
		CHECK_CONTAINS(at(&y, item, "content"), "\nsocket-owner: \"{{.User}}\"\n");
	}
	CHECK_INT(configs, 1);
	/*
	 * The sources are a download (or a checkout): its URL names the tarball by the sha256
	 * pinned beside it, and nothing sets the checkout by default.
	 */
	const char *sha = at(&y, root, "param.vmcostAgentSha256");
	const char *url = at(&y, root, "param.vmcostAgentURL");
	CHECK(sha && strlen(sha) == 64 && strspn(sha, "0123456789abcdef") == 64);
	CHECK(url && strncmp(url, "https://", 8) == 0);
	if (sha && url) {
		char name[128];
		snprintf(name, sizeof name, "/vmcost-agent-src-%s.tar.gz", sha);
		CHECK(strlen(url) > strlen(name) &&
		      strcmp(url + strlen(url) - strlen(name), name) == 0);
	}
	CHECK_STR(at(&y, root, "param.vmcostAgentSrc"), "");
	yaml_node_t *probes = vmc_yaml_get(&y, root, "probes");
	CHECK_INT((int)vmc_yaml_seq_size(probes), 1);
	CHECK_CONTAINS(at(&y, vmc_yaml_seq_item(&y, probes, 0), "script"),
		       "/run/vmcost-agent.sock");
	vmc_yaml_free(&y);
	struct template_problems p;
	memset(&p, 0, sizeof p);
	char *text = template_lint_read(FRAGMENT);
	CHECK(text != NULL);
	if (text)
		template_lint_text(text, "templates", true, &p);
	free(text);
	template_problems_print(FRAGMENT, &p);
	CHECK_INT(p.count, 0);
}

TEST(both_templates_have_the_measured_host_setup)
{
	for (const char *const *path = templates; *path; path++) {
		struct vmc_yaml y;
		yaml_node_t *root = load(&y, *path);
		CHECK(root != NULL);
		if (!root)
			continue;
		long v[3];
		const char *min = at(&y, root, "minimumLimaVersion");
		CHECK(min && template_lint_semver(min, v) == 0 &&
		      template_lint_semver_cmp(v, (long[3]){2, 2, 0}) >= 0);
		CHECK(at(&y, root, "vmType") ==
		      NULL); /* Lima's default: vz on macOS, qemu on Linux */
		CHECK_STR(at(&y, root, "cpus"), "4");
		CHECK_STR(at(&y, root, "memory"), "6GiB");
		CHECK_STR(at(&y, root, "mountType"), "virtiofs");
		CHECK_STR(at(&y, root, "vmOpts.vz.rosetta.enabled"), "true");
		CHECK_STR(at(&y, root, "containerd.system"), "false");
		CHECK_STR(at(&y, root, "containerd.user"), "false");
		yaml_node_t *hosts =
		    vmc_yaml_get(&y, vmc_yaml_get(&y, root, "hostResolver"), "hosts");
		CHECK_STR(vmc_yaml_scalar(vmc_yaml_get(&y, hosts, "host.docker.internal")),
			  "host.lima.internal");
		CHECK(forwards(&y, root, "/var/run/docker.sock", "{{.Dir}}/sock/docker.sock"));
		CHECK_INT(provision_count(&y, root, "system", "provision/idle-tunings.sh"), 1);
		CHECK_INT(provision_count(&y, root, "system", "provision/docker.sh"), 1);
		/* The agent comes only from the fragment: one copy. */
		CHECK(takes_base(&y, root, "vmcost-agent.yaml"));
		CHECK(!forwards(&y, root, "/run/vmcost-agent.sock",
				"{{.Dir}}/sock/vmcost-agent.sock"));
		CHECK_INT(provision_count(&y, root, "system", "provision/vmcost-agent.sh"), 0);
		CHECK_INT(provision_count(&y, root, "data", "provision/vmcost-agent.yaml"), 0);
		const char *message = at(&y, root, "message");
		CHECK_CONTAINS(message, "docker context create lima-{{.Name}} --docker "
					"\"host=unix://{{.Dir}}/sock/docker.sock\"");
		CHECK_CONTAINS(message, "export DOCKER_HOST=unix://{{.Dir}}/sock/docker.sock");
		CHECK_CONTAINS(message,
			       "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=/var/run/docker.sock");
		CHECK_CONTAINS(message, "TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1");
		/* The first start can outlast Lima's 10-minute default
		 * (results/provision-delivery-*). */
		CHECK_CONTAINS(message, "limactl start --timeout 30m");
		yaml_node_t *probes = vmc_yaml_get(&y, root, "probes");
		CHECK(vmc_yaml_seq_size(probes) >= 1);
		CHECK_CONTAINS(at(&y, vmc_yaml_seq_item(&y, probes, 0), "script"),
			       "/var/run/docker.sock");
		vmc_yaml_free(&y);
	}
}

/*
 * The kernel command line and the docker group come from boot scripts, which run before the first
 * boot's reboot and before the Lima user's first login: no restart asked. The reboot is the last
 * boot script's (boot-first-reboot.sh), before the Lima user exists, so that Lima's own reboot,
 * late in a boot its SSH master may already have logged in to, never runs.
 * (tests/sh/templates_provision.sh runs that first boot on a fake root.)
 */
TEST(cloud_template_needs_no_restart)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, "templates/minimal-docker.yaml");
	CHECK(root != NULL);
	if (!root)
		return;
	yaml_node_t *base = vmc_yaml_get(&y, root, "base");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_seq_item(&y, base, 0)), "template:_images/alpine-3.23");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_seq_item(&y, base, 1)), "template:_default/mounts");
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-quiet-disk.sh"), 1);
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-kernel-args.sh"), 1);
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-docker-group.sh"), 1);
	int boot_scripts = 0;
	int reboot =
	    provision_index(&y, root, "boot", "provision/boot-first-reboot.sh", &boot_scripts);
	CHECK_INT(reboot, boot_scripts - 1);
	CHECK(provision_index(&y, root, "boot", "provision/boot-kernel-args.sh", &boot_scripts) <
	      reboot);
	CHECK(strstr(at(&y, root, "message"), "limactl restart") == NULL);
	CHECK_CONTAINS(at(&y, root, "message"), "vmcost doctor {{.Name}}");
	vmc_yaml_free(&y);
}

TEST(iso_template_says_its_command_line_cannot_change)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, "templates/minimal-docker-iso.yaml");
	CHECK(root != NULL);
	if (!root)
		return;
	yaml_node_t *base = vmc_yaml_get(&y, root, "base");
	CHECK_STR(vmc_yaml_scalar(vmc_yaml_seq_item(&y, base, 0)), "template:_images/alpine-iso");
	/* lima-init on the ISO runs no cloud-init bootcmd; /var/log is on the tmpfs root anyway. */
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-quiet-disk.sh"), 0);
	CHECK(at(&y, root, "param.dockerVersion") != NULL);
	CHECK_CONTAINS(at(&y, root, "message"), "cannot change");
	/* No boot scripts on the ISO: the docker group reaches Lima's login only after a restart.
	 */
	CHECK_INT(provision_count(&y, root, "boot", "provision/boot-docker-group.sh"), 0);
	CHECK_CONTAINS(at(&y, root, "message"), "limactl restart {{.Name}}");
	vmc_yaml_free(&y);
}

/*
 * Facts the template comments state (issue 11 item 7): which ISO the ISO template boots, that the
 * templates work only from a local checkout, and when boot-quiet-disk.sh runs before the guest
 * agent (the first boot only; the fstab line covers the others).
 */
TEST(template_comments_state_the_facts)
{
	char *iso = template_lint_read("templates/minimal-docker-iso.yaml");
	CHECK_CONTAINS(iso, "alpine-lima v0.2.49 (Alpine 3.23.0)");
	CHECK_CONTAINS(iso, "v0.2.50 (Alpine 3.24.1");
	free(iso);
	static const char *const files[] = {"templates/minimal-docker.yaml",
					    "templates/minimal-docker-iso.yaml", FRAGMENT, NULL};
	for (const char *const *f = files; *f; f++) {
		char *text = template_lint_read(*f);
		CHECK_CONTAINS(text, "only from a local checkout");
		free(text);
	}
	char *boot = template_lint_read("provision/boot-quiet-disk.sh");
	CHECK(boot &&
	      strstr(boot, "on every\n# boot before Lima's boot scripts start lima-guestagent") ==
		  NULL);
	CHECK_CONTAINS(boot, "what protects\n# those boots is the fstab line");
	free(boot);
	/* GRUB_TIMEOUT=10: what the Lima write-up found on the 3.23.4 image; image builds vary. */
	char *kargs = template_lint_read("provision/boot-kernel-args.sh");
	CHECK(kargs && strstr(kargs, "the cloud image waits 10 s") == NULL);
	CHECK_CONTAINS(kargs, "found GRUB_TIMEOUT=10 on Alpine's 3.23.4 cloud image");
	CHECK_CONTAINS(kargs, "(docs/published-measurements.md#the-lima-write-up)");
	free(kargs);
	char *cloud = template_lint_read("templates/minimal-docker.yaml");
	CHECK(cloud && strstr(cloud, "GRUB_TIMEOUT=0 (10 s per boot)") == NULL);
	CHECK_CONTAINS(cloud, "(A saw GRUB_TIMEOUT=10 on the 3.23.4 image: 10 s per boot)");
	free(cloud);
}

/* ---- the embedded agent sources ------------------------------------------------------------ */

/*
 * The agent's sources as provision/vmcost-agent-sources.sh lists them: every .c and .h of
 * guest-agent/, and the lib/ modules the agent includes.
 */
static int agent_sources(char **out, int max)
{
	FILE *p = popen("sh provision/vmcost-agent-sources.sh .", "r");
	if (!p)
		return 0;
	int n = 0;
	char line[PATH_MAX];
	while (n < max && fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = '\0';
		out[n++] = strdup(line);
	}
	if (pclose(p) != 0) {
		while (n > 0)
			free(out[--n]);
	}
	return n;
}

/* Whether name is one of the n paths of list. */
static bool listed(char *const *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* Repository file of a tarball path: the agent's sources as they are, the rest from provision/. */
static const char *tarball_source(const char *name)
{
	static const char *const extras[][2] = {
	    {"build.sh", "provision/build-vmcost-agent.sh"},
	    {"install.sh", "provision/install-vmcost-agent.sh"},
	    {"init.d/cache-trim", "provision/init.d/cache-trim"},
	    {"systemd/cache-trim.service", "provision/systemd/cache-trim.service"},
	    {"systemd/vmcost-engine-thaw.service", "provision/systemd/vmcost-engine-thaw.service"},
	    {"idle-sysctls.sh", "provision/idle-sysctls.sh"},
	    {"containerd-quiet.sh", "provision/containerd-quiet.sh"},
	    {"agent.yaml", "provision/vmcost-agent.yaml"}};
	for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++)
		if (strcmp(name, extras[i][0]) == 0)
			return extras[i][1];
	return name;
}

/* The fragment's param, as Lima passes it to the provision script (PARAM_NAME). */
static char *fragment_param(const char *name)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, FRAGMENT);
	if (!root)
		return NULL;
	char key[64];
	snprintf(key, sizeof key, "param.%s", name);
	const char *v = at(&y, root, key);
	char *out = v ? strdup(v) : NULL;
	vmc_yaml_free(&y);
	return out;
}

/*
 * templates/update-embedded --out writes the tarball the fragment pins; unpacked as the guest
 * unpacks it, it holds every agent source and the provision files, byte for byte the
 * repository's, and nothing else; its sha256 is the pinned one.
 */
TEST(the_fragment_pins_the_tarball_of_exactly_the_agent_sources)
{
	/* One data entry (the configuration), written inline: no sources inlined by Lima. */
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, FRAGMENT);
	CHECK(root != NULL);
	if (!root)
		return;
	int data = 0, files = 0;
	yaml_node_t *seq = vmc_yaml_get(&y, root, "provision");
	for (size_t i = 0; i < vmc_yaml_seq_size(seq); i++) {
		yaml_node_t *item = vmc_yaml_seq_item(&y, seq, i);
		const char *mode = at(&y, item, "mode");
		if (mode && strcmp(mode, "data") == 0) {
			data++;
			files += at(&y, item, "file") != NULL;
		}
	}
	vmc_yaml_free(&y);
	CHECK_INT(data, 1);
	CHECK_INT(files, 0);

	char tmp[] = "/tmp/vmcost-agent-src.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	char *sha = fragment_param("vmcostAgentSha256");
	CHECK(sha != NULL);
	CHECK_OK(shell("templates/update-embedded --check --out %s/dist >%s/out 2>&1 || "
		       "sed 's/^/    /' %s/out >&2",
		       tmp, tmp, tmp));
	CHECK_OK(shell("mkdir %s/x && tar -xzf %s/dist/vmcost-agent-src-%s.tar.gz -C %s/x", tmp,
		       tmp, sha ? sha : "none", tmp));
	CHECK_OK(
	    shell("test \"$(sha256sum <%s/dist/vmcost-agent-src-%s.tar.gz | cut -d' ' -f1)\" = %s",
		  tmp, sha ? sha : "none", sha ? sha : "none"));

	char *want[256];
	int nwant = agent_sources(want, 256);
	CHECK(nwant > 10);
	/*
	 * Every file of guest-agent/ is in the list, and of lib/ what the agent uses, not the lib/
	 * code only vmcost uses on the host (its statistics, the memory-settle rule): the real
	 * builds from the tarball below show the list is enough.
	 */
	CHECK(listed(want, nwant, "guest-agent/main.c"));
	CHECK(listed(want, nwant, "guest-agent/engine.h"));
	CHECK(listed(want, nwant, "lib/log.c"));
	CHECK(listed(want, nwant, "lib/procfs.h"));
	static const char *const host_only[] = {"lib/settle.c", "lib/settle.h", "lib/stats.c",
						"lib/stats.h"};
	for (size_t i = 0; i < sizeof host_only / sizeof host_only[0]; i++) {
		CHECK(access(host_only[i], F_OK) == 0);
		CHECK(!listed(want, nwant, host_only[i]));
		CHECK_OK(shell("test ! -e %s/x/%s", tmp, host_only[i]));
	}
	/* Every agent source is in it, byte for byte. */
	for (int i = 0; i < nwant; i++) {
		int same = shell("cmp -s %s %s/x/%s", want[i], tmp, want[i]);
		if (same != 0)
			fprintf(stderr, "  the tarball's %s differs from the repository's\n",
				want[i]);
		CHECK_INT(same, 0);
		free(want[i]);
	}
	static const char *const extras[] = {"build.sh",
					     "install.sh",
					     "init.d/cache-trim",
					     "systemd/cache-trim.service",
					     "systemd/vmcost-engine-thaw.service",
					     "idle-sysctls.sh",
					     "containerd-quiet.sh",
					     "agent.yaml",
					     NULL};
	for (const char *const *e = extras; *e; e++)
		CHECK_OK(shell("cmp -s %s %s/x/%s", tarball_source(*e), tmp, *e));
	/* And nothing else. */
	CHECK_OK(shell("test \"$(find %s/x -type f | wc -l)\" -eq %d", tmp, nwant + 8));
	free(sha);
	shell("rm -rf %s", tmp);
}

TEST(update_embedded_finds_nothing_stale)
{
	CHECK_INT(shell("templates/update-embedded --check"), 0);
}

/* In a copy of the tree: a source or a `file:` whose name Lima refuses fails --check. */
TEST(update_embedded_refuses_names_lima_rejects)
{
	char tmp[] = "/tmp/vmcost-update-embedded.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	/*
	 * A copy with other times and modes: the tarball is the same bytes (the pin names the
	 * sources, not the checkout).
	 */
	CHECK_OK(shell("cp -R templates provision guest-agent lib %s/ && "
		       "find %s -type f -name '*.[ch]' -exec chmod 0600 {} + && "
		       "find %s -exec touch -d '2031-05-06 07:08' {} +",
		       tmp, tmp, tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check", tmp));
	/* A new source makes the pin stale (its name is no `file:`: Lima never sees it). */
	CHECK_OK(shell("touch %s/guest-agent/_x.c", tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		       "grep -q 'is stale' %s/out && grep -q 'make agent-src' %s/out",
		       tmp, tmp, tmp, tmp));
	/* Pinning it again (what make agent-src does) makes --check pass, with the new sha256. */
	CHECK_OK(shell(
	    "%s/templates/update-embedded --out %s/dist >/dev/null && "
	    "%s/templates/update-embedded --check && "
	    "! cmp -s templates/vmcost-agent.yaml %s/templates/vmcost-agent.yaml && "
	    "grep -q \"vmcostAgentSha256: \\\"$(sha256sum %s/dist/*.tar.gz | cut -d' ' -f1)\\\"\" "
	    "%s/templates/vmcost-agent.yaml",
	    tmp, tmp, tmp, tmp, tmp, tmp));
	CHECK_OK(shell("rm %s/guest-agent/_x.c && %s/templates/update-embedded >/dev/null && "
		       "%s/templates/update-embedded --check",
		       tmp, tmp, tmp));
	/* A changed provision file in the tarball makes it stale too. */
	CHECK_OK(shell("echo '# changed' >>%s/provision/install-vmcost-agent.sh && "
		       "%s/templates/update-embedded --check 2>/dev/null; test $? = 1",
		       tmp, tmp));
	CHECK_OK(shell("%s/templates/update-embedded >/dev/null", tmp));
	/* Any template's own `file:`: a..b.sh (two separators in a row), 77 characters, then 76. */
	CHECK_OK(shell("printf -- '- mode: system\\n  file: provision/a..b.sh\\n' >>"
		       "%s/templates/minimal-docker.yaml",
		       tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		       "grep -q 'minimal-docker.yaml: file: provision/a..b.sh' %s/out",
		       tmp, tmp, tmp));
	CHECK_OK(shell("sed -i 's/a\\.\\.b/%074d/' %s/templates/minimal-docker.yaml", 0, tmp));
	CHECK_OK(shell("%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		       "grep -q 'file: provision/0000' %s/out",
		       tmp, tmp, tmp));
	CHECK_OK(shell("sed -i 's/provision\\/0\\(0*\\)\\.sh/provision\\/\\1.sh/' "
		       "%s/templates/minimal-docker.yaml && %s/templates/update-embedded --check",
		       tmp, tmp));
	/* A tab in an embedded script: Lima would store it as base64, a third larger. */
	CHECK_OK(
	    shell("printf 'if true; then\\n\\ttrue\\nfi\\n' >>%s/provision/boot-first-reboot.sh && "
		  "%s/templates/update-embedded --check 2>%s/out; test $? = 1 && "
		  "grep -q 'boot-first-reboot.sh: line [0-9]* has a tab' %s/out",
		  tmp, tmp, tmp, tmp));
	shell("rm -rf %s", tmp);
}

/* ---- vmcost-agent built from exactly what the template embeds ------------------------------ */

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int write_file(const char *path, const char *text, unsigned mode)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	if (mkdirs(dir) != 0)
		return -1;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0)
		return -1;
	return chmod(path, mode);
}

/* Lima's guest-template fields, as they would be rendered for user "tester". */
static char *render(const char *text)
{
	static const char *const from[] = {"{{.User}}", "{{.UID}}", "{{.Home}}", NULL};
	static const char *const to[] = {"tester", "1000", "/home/tester.linux", NULL};
	size_t cap = strlen(text) * 2 + 64;
	char *out = malloc(cap), *o = out;
	while (*text) {
		int k;
		for (k = 0; from[k]; k++)
			if (strncmp(text, from[k], strlen(from[k])) == 0)
				break;
		if (from[k]) {
			o += sprintf(o, "%s", to[k]);
			text += strlen(from[k]);
		} else {
			*o++ = *text++;
		}
	}
	*o = '\0';
	return out;
}

/*
 * Writes the template's data entries into root (as Lima's boot.sh does before the system
 * scripts), and the system script that comes from file_wanted into script_out (rendered).
 */
static int extract(const char *template_path, const char *root, const char *file_wanted,
		   const char *script_out)
{
	struct vmc_yaml y;
	yaml_node_t *top = load(&y, template_path);
	if (!top)
		return -1;
	int written = 0, rc = 0;
	yaml_node_t *seq = vmc_yaml_get(&y, top, "provision");
	for (size_t i = 0; i < vmc_yaml_seq_size(seq) && rc == 0; i++) {
		yaml_node_t *item = vmc_yaml_seq_item(&y, seq, i);
		const char *mode = vmc_yaml_scalar(vmc_yaml_get(&y, item, "mode"));
		const char *file = vmc_yaml_scalar(vmc_yaml_get(&y, item, "file"));
		const char *path = vmc_yaml_scalar(vmc_yaml_get(&y, item, "path"));
		const char *perm = vmc_yaml_scalar(vmc_yaml_get(&y, item, "permissions"));
		if (!file)
			continue;
		char src[PATH_MAX];
		snprintf(src, sizeof src, "templates/%s", file); /* through templates/'s symlinks */
		char *text = template_lint_read(src);
		if (!text) {
			fprintf(stderr, "  cannot read %s\n", src);
			rc = -1;
			break;
		}
		char dest[PATH_MAX * 2];
		if (mode && strcmp(mode, "data") == 0 && path) {
			snprintf(dest, sizeof dest, "%s%s", root, path);
			rc = write_file(dest, text, perm ? (unsigned)strtoul(perm, NULL, 8) : 0644);
			written++;
		} else if (strcmp(file, file_wanted) == 0) {
			char *rendered = render(text);
			rc = write_file(script_out, rendered, 0755);
			free(rendered);
		}
		free(text);
	}
	vmc_yaml_free(&y);
	return rc == 0 ? written : -1;
}

/* Runs a formatted shell command; its exit status, or -1. */
__attribute__((format(printf, 1, 2))) static int shell(const char *fmt, ...)
{
	char cmd[PATH_MAX * 4];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof cmd)
		return -1;
	int status = system(cmd);
	return status == -1 || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
}

/*
 * Runs the fragment's provision script on a fake root shaped like an Alpine (apk, OpenRC) or a
 * Debian (apt, systemd) guest, with the package manager and the init system stubbed and the real
 * compiler, and checks the agent it builds and the service it sets up.
 */
static void build_from(const char *template_path, bool debian)
{
	char tmp[] = "/tmp/vmcost-template-build.XXXXXX";
	char root[64], script[96], cwd[PATH_MAX];
	CHECK(mkdtemp(tmp) != NULL);
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	snprintf(root, sizeof root, "%s/root", tmp);
	snprintf(script, sizeof script, "%s/provision.system/vmcost-agent.sh", tmp);
	/* No data `file:` (Lima would inline it): the sources come through the script's params. */
	int written = extract(template_path, root, "provision/vmcost-agent.sh", script);
	CHECK_INT(written, 0);
	CHECK(access(script, X_OK) == 0);
	/*
	 * Alpine: the pinned tarball from a URL (what `make agent-src` writes; curl reads file://).
	 * Debian: this checkout, as param vmcostAgentSrc names it.
	 */
	char params[PATH_MAX * 2];
	char *sha = fragment_param("vmcostAgentSha256");
	CHECK(sha != NULL);
	if (debian) {
		snprintf(params, sizeof params, "PARAM_vmcostAgentSrc=%s", cwd);
	} else {
		CHECK_OK(shell("templates/update-embedded --check --out %s/dist >/dev/null", tmp));
		snprintf(params, sizeof params,
			 "PARAM_vmcostAgentURL=file://%s/dist/vmcost-agent-src-%s.tar.gz "
			 "PARAM_vmcostAgentSha256=%s",
			 tmp, sha ? sha : "", sha ? sha : "");
	}
	free(sha);
	CHECK_OK(
	    shell("mkdir -p %s/usr/bin %s/usr/local/bin %s/sbin %s/etc", root, root, root, root));
	if (debian) /* every build dependency installed, as in an image that has them */
		CHECK_OK(shell("mkdir -p %s/run/systemd/system %s/var/lib/dpkg && echo 12.8 "
			       ">%s/etc/debian_version && printf '%%s\\n' gcc libc6-dev "
			       "pkg-config libyaml-dev libjansson-dev libmicrohttpd-dev "
			       ">%s/var/lib/dpkg/installed",
			       root, root, root, root));
	else
		CHECK_OK(shell("mkdir -p %s/etc/runlevels/default %s/etc/apk "
			       "%s/run/openrc/started && echo 3.23.4 >%s/etc/alpine-release && "
			       "printf '#!/bin/sh\\n' >%s/sbin/openrc-run",
			       root, root, root, root, root));
	/* The provision script as Lima runs it, packages and services stubbed, the real compiler.
	 */
	int rc = shell("env PATH=%s/tests/sh/provision-stubs:\"$PATH\" VMCOST_ROOT=%s "
		       "STUB_LOG=%s/stub.log %s sh %s >%s/provision.out 2>&1",
		       cwd, root, tmp, params, script, tmp);
	CHECK_INT(rc, 0);
	if (rc != 0)
		shell("sed 's/^/    /' %s/provision.out >&2", tmp);
	CHECK_OK(shell("%s/usr/local/bin/vmcost-agent --version | "
		       "grep -qx 'vmcost-agent src-[0-9a-f]*'",
		       root));
	if (debian) {
		CHECK_OK(shell("! grep -q '^apt-get' %s/stub.log", tmp));
		CHECK_OK(shell("cmp -s provision/systemd/cache-trim.service "
			       "%s/etc/systemd/system/cache-trim.service",
			       root));
		CHECK_OK(shell("test -L %s/etc/systemd/system/multi-user.target.wants/"
			       "cache-trim.service",
			       root));
		CHECK_OK(shell("grep -qx 'systemctl start cache-trim.service' %s/stub.log", tmp));
	} else {
		CHECK_OK(shell("grep -qx 'apk del .vmcost-agent-build' %s/stub.log", tmp));
		CHECK_OK(
		    shell("cmp -s provision/init.d/cache-trim %s/etc/init.d/cache-trim", root));
		CHECK_OK(shell("test -L %s/etc/runlevels/default/cache-trim", root));
	}
	shell("rm -rf %s", tmp);
}

/* ---- probes as Lima runs them --------------------------------------------------------------- */

/*
 * Lima runs a probe over SSH in a non-login shell (pkg/hostagent/requirements.go), so its PATH is
 * sshd's compiled-in default, which on Alpine lacks /usr/local/bin, where the ISO's static Docker
 * lives. Each probe runs here in a private mount namespace shaped like that guest: docker only in
 * /usr/local/bin (a /usr/bin/docker, if the test machine has one, answers "no"), the sockets the
 * probes wait for present in /run, and PATH=/usr/bin:/bin:/usr/sbin:/sbin. A probe that finds its
 * commands only through a login PATH loops until the time limit and fails.
 */
static const char probe_guest[] =
    "set -e\n"
    "mount -t tmpfs tmpfs /usr/local/bin\n"
    "printf '#!/bin/sh\\nexit 0\\n' >/usr/local/bin/docker\n"
    "chmod 755 /usr/local/bin/docker\n"
    "if [ -e /usr/bin/docker ]; then mount --bind /bin/false /usr/bin/docker; fi\n"
    "mount -t tmpfs tmpfs /run\n"
    "for s in /run/docker.sock /run/vmcost-agent.sock; do\n"
    "  socat -u UNIX-LISTEN:$s,unlink-close=0 /dev/null & pid=$!\n"
    "  i=0; until [ -S $s ] || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done\n"
    "  kill $pid; wait $pid || true\n"
    "done\n"
    "exec env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin /usr/bin/timeout 15 /bin/sh \"$1\"\n";

static int run_probe(const char *dir, const char *script)
{
	char probe[PATH_MAX], guest[PATH_MAX];
	snprintf(probe, sizeof probe, "%s/probe.sh", dir);
	snprintf(guest, sizeof guest, "%s/guest.sh", dir);
	char *rendered = render(script);
	int rc = write_file(probe, rendered, 0755) == 0 && write_file(guest, probe_guest, 0755) == 0
		     ? shell("unshare %s sh %s %s >%s/probe.out 2>&1", getuid() == 0 ? "-m" : "-rm",
			     guest, probe, dir)
		     : -1;
	free(rendered);
	if (rc != 0)
		shell("sed 's/^/    /' %s/probe.out >&2", dir);
	return rc;
}

static void check_probes_of(const char *path, const char *dir)
{
	struct vmc_yaml y;
	yaml_node_t *root = load(&y, path);
	CHECK(root != NULL);
	if (!root)
		return;
	yaml_node_t *probes = vmc_yaml_get(&y, root, "probes");
	CHECK(vmc_yaml_seq_size(probes) > 0);
	for (size_t i = 0; i < vmc_yaml_seq_size(probes); i++) {
		yaml_node_t *probe = vmc_yaml_seq_item(&y, probes, i);
		const char *script = at(&y, probe, "script");
		CHECK(script != NULL);
		if (!script)
			continue;
		int rc = run_probe(dir, script);
		if (rc != 0)
			fprintf(stderr, "  %s: probe \"%s\" failed with sshd's default PATH\n",
				path, at(&y, probe, "description"));
		CHECK_INT(rc, 0);
	}
	vmc_yaml_free(&y);
}

TEST(probes_find_their_commands_with_sshds_default_path)
{
	if (shell("unshare %s true 2>/dev/null", getuid() == 0 ? "-m" : "-rm") != 0 ||
	    shell("command -v socat >/dev/null") != 0)
		SKIP("needs unshare (a mount namespace) and socat");
	char dir[] = "/tmp/vmcost-probe.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	for (const char *const *path = templates; *path; path++)
		check_probes_of(*path, dir);
	check_probes_of(FRAGMENT, dir);
	shell("rm -rf %s", dir);
}

TEST(agent_builds_from_the_fragments_embedded_sources_on_alpine)
{
	build_from(FRAGMENT, false);
}

TEST(agent_builds_from_the_fragments_embedded_sources_on_debian)
{
	build_from(FRAGMENT, true);
}

int main(void)
{
	RUN(repository_templates_pass_every_check);
	RUN(the_fragment_delivers_the_agent);
	RUN(both_templates_have_the_measured_host_setup);
	RUN(cloud_template_needs_no_restart);
	RUN(iso_template_says_its_command_line_cannot_change);
	RUN(template_comments_state_the_facts);
	RUN(the_fragment_pins_the_tarball_of_exactly_the_agent_sources);
	RUN(update_embedded_finds_nothing_stale);
	RUN(update_embedded_refuses_names_lima_rejects);
	RUN(probes_find_their_commands_with_sshds_default_path);
	RUN(agent_builds_from_the_fragments_embedded_sources_on_alpine);
	RUN(agent_builds_from_the_fragments_embedded_sources_on_debian);
	return check_done();
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lima's forwarded host sockets (host/autostop/forward.c) as vmcost doctor and autostop see
 * them: missing, stale, hung, answering; the command that heals one; a heal through a fake ssh
 * that records what Lima's ssh would be asked.
 */
#include "autostop/forward.h"
#include "autostop/sockfile.h"
#include "check.h"
#include "host_testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static const char pong[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK";

static void stale_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
}

TEST(the_two_forwards_and_their_probes)
{
	struct forward f;
	forward_get("/h/.lima/dev", FORWARD_DOCKER, &f);
	CHECK_PATH(f.host, "/h/.lima/dev/sock/docker.sock");
	CHECK_STR(f.guest, "/var/run/docker.sock");
	CHECK_STR(f.probe, "/_ping");
	forward_get("/h/.lima/dev", FORWARD_AGENT, &f);
	CHECK_PATH(f.host, "/h/.lima/dev/sock/vmcost-agent.sock");
	CHECK_STR(f.guest, "/run/vmcost-agent.sock");
	CHECK_STR(f.probe, "/v1/status");
	char cmd[4096];
	forward_get("/h/.lima/dev", FORWARD_DOCKER, &f);
	forward_heal_command("/h/.lima/dev", "dev", &f, cmd, sizeof cmd);
	CHECK_PATH(cmd, "rm -f /h/.lima/dev/sock/docker.sock && ssh -F /h/.lima/dev/ssh.config -O "
			"forward -L /h/.lima/dev/sock/docker.sock:/var/run/docker.sock lima-dev");
}

TEST(missing_stale_hung_and_answering)
{
	t_setup("forward");
	char dir[4200];
	snprintf(dir, sizeof dir, "%s/lima/dev", t_root);
	t_write("", "lima/dev/sock/.keep");
	struct forward f;
	forward_get(dir, FORWARD_DOCKER, &f);
	char why[512];
	CHECK_INT(forward_check(&f, 1000, why, sizeof why), FORWARD_ABSENT);
	/* Missing although lima.yaml forwards it: the forward died and took its file along. */
	t_write("portForwards:\n- guestSocket: /var/run/docker.sock\n"
		"  hostSocket: \"{{.Dir}}/sock/docker.sock\"\n",
		"lima/dev/lima.yaml");
	CHECK_INT(forward_check(&f, 1000, why, sizeof why), FORWARD_DEAD);
	CHECK_CONTAINS(why, "although lima.yaml forwards it");
	stale_socket(f.host);
	CHECK_INT(forward_check(&f, 1000, why, sizeof why), FORWARD_DEAD);
	CHECK_CONTAINS(why, "a stale socket file");
	unlink(f.host);
	/* Accepts and says nothing: what a forward whose far end is gone can do. */
	int lfd = t_listen_unix(f.host);
	CHECK_INT(forward_check(&f, 300, why, sizeof why), FORWARD_DEAD);
	CHECK_CONTAINS(why, "nothing answers");
	close(lfd);
	unlink(f.host);
	pid_t peer = t_fake_peer(f.host, pong, 1, false);
	CHECK_INT(forward_check(&f, 5000, why, sizeof why), FORWARD_ANSWERS);
	waitpid(peer, NULL, 0);
	unlink(f.host);
	peer = t_fake_peer(f.host, "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", 1, false);
	CHECK_INT(forward_check(&f, 5000, why, sizeof why), FORWARD_DEAD);
	CHECK_CONTAINS(why, "HTTP 500");
	waitpid(peer, NULL, 0);
	t_cleanup();
}

/* ssh that records its arguments; -O forward makes the socket answer once (a fake peer). */
static const char fake_ssh[] = "#!/bin/sh\n"
			       "echo \"$*\" >>'%s/ssh-calls'\n"
			       "case \"$*\" in\n"
			       "*'-O check '*) exit %d ;;\n"
			       "*'-O forward '*) exec '%s' --answer-once '%s' ;;\n"
			       "esac\n"
			       "exit 0\n";

static char t_self[4200];

static bool t_file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char buf[16384] = "";
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

TEST(a_heal_removes_the_stale_file_then_forwards_again)
{
	for (int master_alive = 1; master_alive >= 0; master_alive--) {
		t_setup("forward");
		char dir[4200], calls[4300], script[16384];
		snprintf(dir, sizeof dir, "%s/lima/dev", t_root);
		t_write("", "lima/dev/sock/.keep");
		struct forward f;
		forward_get(dir, FORWARD_DOCKER, &f);
		snprintf(script, sizeof script, fake_ssh, t_root, master_alive ? 0 : 255, t_self,
			 f.host);
		t_write(script, "bin/ssh");
		t_chmod("bin/ssh", 0755);
		stale_socket(f.host);
		char err[512] = "";
		CHECK_INT(forward_heal(dir, "dev", &f, err, sizeof err), 0);
		CHECK(err[0] == 0);
		snprintf(calls, sizeof calls, "%s/ssh-calls", t_root);
		char want[9000];
		snprintf(want, sizeof want,
			 "-F %s/ssh.config -O forward -L %s:/var/run/docker.sock lima-dev", dir,
			 f.host);
		CHECK(t_file_has(calls, want));
		/* A dead master is started again first, by a command over Lima's configuration. */
		CHECK(t_file_has(calls, "BatchMode=yes lima-dev true") == !master_alive);
		t_cleanup();
	}
}

int main(int argc, char **argv)
{
	/* --answer-once PATH: the forwarded socket, as ssh would serve it, for one request. */
	if (argc == 3 && strcmp(argv[1], "--answer-once") == 0) {
		int lfd = t_listen_unix(argv[2]);
		if (fork() == 0) {
			/* Let go of ssh's output pipes: its caller reads them to the end. */
			int null = open("/dev/null", O_RDWR);
			dup2(null, 1);
			dup2(null, 2);
			int c = accept(lfd, NULL, NULL);
			char req[4096];
			t_read_request(c, req, sizeof req);
			if (write(c, pong, strlen(pong)) < 0)
				_exit(1);
			_exit(0);
		}
		return 0;
	}
	if (!realpath(argv[0], t_self))
		return 2;
	RUN(the_two_forwards_and_their_probes);
	RUN(missing_stale_hung_and_answering);
	RUN(a_heal_removes_the_stale_file_then_forwards_again);
	return check_done();
}

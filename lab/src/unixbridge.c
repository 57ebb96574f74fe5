/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unixbridge -l PORT SOCKET: listens on TCP PORT and relays each connection to the unix stream
 * socket SOCKET, until both sides are done, in a child of its own: the role Lima's ssh socket
 * forward plays, for the lab guest's agent and docker.sock. (busybox has no unix-socket client,
 * and the guest has no socat.)
 *
 * The listening mode replaced busybox `nc -ll -e unixbridge SOCKET`: nc listens with a backlog
 * of 1, and when ten Docker clients arrived at once (vmcost autostop relaying the clients it
 * held during a start) QEMU's user networking lost a request now and then: its bytes went into
 * slirp and never reached dockerd (tests/lab/autostop.sh; 3 of 5 such bursts before, none of 6
 * after; docs/lab-guide.md).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_unix(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path) {
		fprintf(stderr, "unixbridge: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		fprintf(stderr, "unixbridge: connect %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Copies what is readable on from to to; returns bytes moved, 0 at EOF, -1 on error. */
static ssize_t pump(int from, int to)
{
	char buf[16384];
	ssize_t n;
	do
		n = read(from, buf, sizeof buf);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += w;
	}
	return n;
}

/* Relays the TCP client conn and the unix socket at path until both are done. */
static int bridge(int conn, const char *path)
{
	int sock = connect_unix(path);
	if (sock < 0)
		return 1;
	struct pollfd fds[2] = {{.fd = conn, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
	while (fds[1].fd >= 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = pump(conn, sock);
			if (n <= 0) {
				/* Client finished sending: half-close so the server sees EOF. */
				shutdown(sock, SHUT_WR);
				fds[0].fd = -1;
			}
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (pump(sock, conn) <= 0)
				fds[1].fd = -1;
		}
	}
	return 0;
}

static int listen_tcp(const char *port_text)
{
	char *end;
	long port = strtol(port_text, &end, 10);
	if (*port_text == '\0' || *end != '\0' || port < 1 || port > 65535) {
		fprintf(stderr, "unixbridge: not a TCP port: %s\n", port_text);
		return -1;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in addr = {.sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_ANY)};
	/* SOMAXCONN: a burst of clients waits in the kernel's queue instead of being dropped. */
	if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, SOMAXCONN) < 0) {
		fprintf(stderr, "unixbridge: listen on port %ld: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int serve(const char *port_text, const char *path)
{
	int lfd = listen_tcp(port_text);
	if (lfd < 0)
		return 1;
	signal(SIGCHLD, SIG_IGN); /* no zombies */
	for (;;) {
		int conn = accept(lfd, NULL, NULL);
		if (conn < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fprintf(stderr, "unixbridge: accept: %s\n", strerror(errno));
			return 1;
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(lfd);
			signal(SIGCHLD, SIG_DFL);
			_exit(bridge(conn, path));
		}
		if (pid < 0)
			fprintf(stderr, "unixbridge: fork: %s\n", strerror(errno));
		close(conn);
	}
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[1], "-l") == 0)
		return serve(argv[2], argv[3]);
	fprintf(stderr, "usage: unixbridge -l PORT SOCKET\n");
	return 2;
}

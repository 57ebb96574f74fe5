/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unixbridge SOCKET: relays stdin/stdout to a unix stream socket until both sides are done.
 * In the lab guest, busybox `nc -ll -p PORT -e unixbridge /run/vmcost-agent.sock` turns it
 * into a forking TCP -> unix forwarder: the role Lima's ssh socket forward plays. (busybox has
 * no unix-socket client, and the guest has no socat.)
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: unixbridge SOCKET\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	int sock = connect_unix(argv[1]);
	if (sock < 0)
		return 1;
	struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
	while (fds[1].fd >= 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = pump(0, sock);
			if (n <= 0) {
				/* Client finished sending: half-close so the server sees EOF. */
				shutdown(sock, SHUT_WR);
				fds[0].fd = -1;
			}
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (pump(sock, 1) <= 0)
				fds[1].fd = -1;
		}
	}
	return 0;
}

/* `agent-sandbox mcp-bridge NAME`, inside a session of the daemon: the MCP
 * server NAME for an agent, which starts it as a stdio server (the
 * workspace's .mcp.json names it). It relays stdin to the session's
 * /run/agent-sandbox/mcp/NAME.sock and that socket to stdout, untouched:
 * the daemon's end filters. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "cli/verbs.h"
#include "inside/inside.h"
#include "serve/mcp.h"
#include "serve/mcp_filter.h"

/* Bytes held for each direction: a side that does not read stops the
 * other being read. */
#define BRIDGE_BUF 65536

struct pipe_buf {
	char data[BRIDGE_BUF];
	size_t len;
};

static int connect_server(const char *name, struct error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s/%s.sock", SANDBOX_DIR, MCP_RUN_NAME,
		 name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_errno(err, ERROR_SETUP, errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		if (e == ENOENT || e == ENOTDIR)
			return error_set(err, ERROR_SETUP, "no MCP server %s in this session",
					 name);
		return error_errno(err, ERROR_SETUP, e, "connecting to the MCP server %s", name);
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		int e = errno;
		close(fd);
		return error_errno(err, ERROR_SETUP, e, "fcntl");
	}
	return fd;
}

/* Reads what fits into b. Returns 1, 0 at end of input, or -errno. */
static int fill(int fd, struct pipe_buf *b)
{
	ssize_t n = read(fd, b->data + b->len, sizeof(b->data) - b->len);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	b->len += (size_t)n;
	return n > 0;
}

/* Writes from b, at most a pipe's atomic size at a time: stdout is left
 * blocking (it is the agent's pipe) and poll promised that much. */
static int drain(int fd, struct pipe_buf *b)
{
	size_t chunk = b->len < PIPE_BUF ? b->len : PIPE_BUF;
	ssize_t n = write(fd, b->data, chunk);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	memmove(b->data, b->data + n, b->len - (size_t)n);
	b->len -= (size_t)n;
	return 0;
}

int verb_mcp_bridge(const struct cli *cli, char **envp, const struct cli_io *io, struct error *err)
{
	const char *name = cli->command[0];
	if (!name || cli->command[1])
		return error_set(err, ERROR_USAGE, "usage: agent-sandbox mcp-bridge NAME");
	if (!mcp_name_ok(name))
		return error_set(err, ERROR_USAGE, "%s is not an MCP server name", name);
	_cleanup_close_ int sock = connect_server(name, err);
	if (sock < 0)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	static struct pipe_buf to_sock, to_out;
	bool in_eof = false, sock_eof = false, shut = false;
	for (;;) {
		if (in_eof && !to_sock.len && !shut) {
			shutdown(sock, SHUT_WR);
			shut = true;
		}
		if (sock_eof && !to_out.len)
			return 0;
		struct pollfd p[3] = {
		    {.fd = !in_eof && to_sock.len < BRIDGE_BUF ? io->in : -1, .events = POLLIN},
		    {.fd = sock,
		     .events = (short)((!sock_eof && to_out.len < BRIDGE_BUF ? POLLIN : 0) |
				       (to_sock.len ? POLLOUT : 0))},
		    {.fd = to_out.len ? io->out : -1, .events = POLLOUT},
		};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return error_errno(err, ERROR_SETUP, errno, "poll");
		}
		int r = 0;
		if (p[0].revents) {
			r = fill(io->in, &to_sock);
			in_eof = r <= 0;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR) && !sock_eof &&
		    to_out.len < BRIDGE_BUF) {
			r = fill(sock, &to_out);
			sock_eof = r <= 0;
		}
		if (p[1].revents & POLLOUT && to_sock.len && drain(sock, &to_sock) < 0)
			return error_set(err, ERROR_SETUP, "the MCP server %s went away", name);
		if (p[2].revents && to_out.len && drain(io->out, &to_out) < 0)
			return 0; /* the agent stopped reading: done */
	}
}

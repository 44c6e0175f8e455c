/* agent-sandbox: run a command in a least-privilege bwrap sandbox. */
#include <fcntl.h>
#include <unistd.h>

#include "cli/dispatch.h"

extern char **environ;

int main(int argc, char **argv)
{
	/* Descriptors 0-2 must be open, or the pipes and files we create
	 * could take their numbers and be mistaken for stdio. */
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			return 1;
	return run(argc, argv, environ, STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO);
}

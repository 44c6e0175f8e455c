/* Times what a run spends on seccomp: loading the sandbox filter (the
 * sandbox's init, seccomp_filter_load_sandbox) and the command filter
 * (seccomp_filter_load_command) into a thread, in a fresh child each time
 * since a filter cannot be removed. Prints the median and mean of each in
 * microseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "sandbox/seccomp.h"

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, double *samples, int runs)
{
	double sum = 0;
	for (int i = 0; i < runs; i++)
		sum += samples[i];
	qsort(samples, (size_t)runs, sizeof(*samples), compare);
	printf("%-44s median %7.1f us  mean %7.1f us  (%d runs)\n", what, samples[runs / 2],
	       sum / runs, runs);
}

/* The child times its own load and sends the figure back. */
/* flags: the command filter's, or SANDBOX for the sandbox filter. */
#define SANDBOX (~0u)

static double time_load(unsigned flags)
{
	int pipefd[2];
	if (pipe(pipefd) < 0) {
		perror("pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		struct error err = ERROR_INIT;
		double start = now_us();
		int r = flags == SANDBOX ? seccomp_filter_load_sandbox(&err)
					 : seccomp_filter_load_command(flags, &err);
		double took = now_us() - start;
		if (r < 0) {
			fprintf(stderr, "loading a filter: %s\n", err.msg);
			_exit(1);
		}
		_exit(write(pipefd[1], &took, sizeof(took)) == sizeof(took) ? 0 : 1);
	}
	close(pipefd[1]);
	double took = -1;
	ssize_t n = read(pipefd[0], &took, sizeof(took));
	close(pipefd[0]);
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    n != sizeof(took)) {
		fprintf(stderr, "the loading child failed\n");
		exit(1);
	}
	return took;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 1000;
	if (runs < 1) {
		fprintf(stderr, "usage: %s [RUNS]\n", argv[0]);
		return 2;
	}
	double *samples = calloc((size_t)runs, sizeof(*samples));
	if (!samples)
		return 1;
	for (int i = 0; i < runs; i++)
		samples[i] = time_load(SANDBOX);
	report("sandbox filter loaded (the init)", samples, runs);
	for (int i = 0; i < runs; i++)
		samples[i] = time_load(SECCOMP_COMMAND_SANDBOX_RULES);
	report("command filter loaded (sandbox rules)", samples, runs);
	for (int i = 0; i < runs; i++)
		samples[i] = time_load(SECCOMP_COMMAND_SANDBOX_RULES | SECCOMP_COMMAND_NO_INET);
	report("command filter loaded (sandbox rules, no IP)", samples, runs);
	free(samples);
	return 0;
}

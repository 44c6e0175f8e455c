/* Start-up benchmark: runs two or more commands alternately (A B A B ...)
 * so that drift on the machine affects them alike, and prints the median,
 * mean and 90th percentile wall time of each and each one's ratio to the
 * first.
 *
 *   startup RUNS NAME CMD ARGS... ::: NAME CMD ARGS... [::: ...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_COMMANDS 8

struct command {
	const char *name;
	char **argv;
	double *ms;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double run_once(const struct command *c)
{
	double start = now_ms();
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
			_exit(127);
		execvp(c->argv[0], c->argv);
		fprintf(stderr, "startup: %s: %s\n", c->argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		exit(1);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "startup: %s failed (status %#x)\n", c->name, status);
		exit(1);
	}
	return now_ms() - start;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: startup RUNS NAME CMD... [::: NAME CMD...]\n");
		return 2;
	}
	int runs = atoi(argv[1]);
	if (runs < 1)
		return 2;
	struct command cmds[MAX_COMMANDS];
	int n = 0;
	for (int i = 2; i < argc && n < MAX_COMMANDS;) {
		cmds[n].name = argv[i++];
		cmds[n].argv = &argv[i];
		while (i < argc && strcmp(argv[i], ":::"))
			i++;
		if (i < argc)
			argv[i++] = NULL;
		cmds[n].ms = calloc(runs, sizeof(double));
		if (!cmds[n].ms)
			return 1;
		n++;
	}
	/* Warm the page cache and bwrap's own start-up paths. */
	for (int w = 0; w < 5; w++)
		for (int c = 0; c < n; c++)
			run_once(&cmds[c]);
	for (int r = 0; r < runs; r++)
		for (int c = 0; c < n; c++)
			cmds[c].ms[r] = run_once(&cmds[c]);

	double base = 0;
	printf("%-28s %9s %9s %9s %8s %10s\n", "command", "median", "mean", "p90", "ratio",
	       "overhead");
	for (int c = 0; c < n; c++) {
		double sum = 0;
		for (int r = 0; r < runs; r++)
			sum += cmds[c].ms[r];
		qsort(cmds[c].ms, runs, sizeof(double), compare_double);
		double median = cmds[c].ms[runs / 2];
		double p90 = cmds[c].ms[runs * 9 / 10];
		if (c == 0)
			base = median;
		printf("%-28s %7.2fms %7.2fms %7.2fms %7.2fx %+8.2fms\n", cmds[c].name, median,
		       sum / runs, p90, median / base, median - base);
		free(cmds[c].ms);
	}
	printf("(%d alternating runs each, after 5 warm-up rounds; ratio and overhead "
	       "of the medians against the first line)\n",
	       runs);
	return 0;
}

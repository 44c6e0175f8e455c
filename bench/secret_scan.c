/* Times the secret scan (secrets_scan, as every run does it) on a tree and
 * `find` with the same patterns, skip list and allow list, alternately, and
 * prints the medians and their ratio. With a cache directory, also the scan
 * with the scan cache of an earlier scan of the unchanged tree (warm), as a
 * run plans it: reading and checking the cache file included. Used by
 * bench/secret-scan. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "policy/secrets.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One scan; returns its time in ms, or -1. */
static double scan_once(const struct config *cfg, const char *dir, const char *cache_dir, bool save,
			size_t *files, size_t *masked, size_t *cached)
{
	struct error err = ERROR_INIT;
	struct secrets s;
	double start = now_ms();
	if (secrets_scan(&s, cfg, dir, cache_dir, &err) < 0) {
		fprintf(stderr, "scan: %s\n", err.msg);
		return -1;
	}
	double ms = now_ms() - start;
	*files = s.found.files;
	*masked = s.found.len;
	*cached = s.found.cached_dirs;
	if (save && secrets_save_cache(&s, &err) < 0) {
		fprintf(stderr, "saving the scan cache: %s\n", err.msg);
		ms = -1;
	}
	secrets_release(&s);
	return ms;
}

static double run_find(const char *dir)
{
	double start = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execlp("find", "find", dir, "(", "-name", ".git", "-o", "-name", "node_modules",
		       "-o", "-name", "site-packages", "-o", "-name", "dist-packages", ")",
		       "-prune", "-o", "(", "-type", "f", "-o", "-type", "l", ")", "(", "-iname",
		       ".env", "-o", "-iname", ".env.*", "-o", "-iname", "*.pem", "-o", "-iname",
		       "*.key", "-o", "-iname", "*.p12", "-o", "-iname", "*.pfx", "-o", "-iname",
		       "id_rsa*", "-o", "-iname", "id_ed25519*", "-o", "-iname", "*credentials*",
		       "-o", "-iname", "*secret*", "-o", "-iname", ".netrc", ")", "!", "-iname",
		       ".env.example", "!", "-iname", ".env.sample", "!", "-iname", ".env.template",
		       "-print", (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "find failed\n");
		exit(1);
	}
	return now_ms() - start;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s DIR RUNS [CACHE_DIR]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	int runs = atoi(argv[2]);
	const char *cache_dir = argc == 4 ? argv[3] : NULL;
	if (runs < 1)
		runs = 1;
	double *scan = calloc((size_t)runs, sizeof(double));
	double *warm = calloc((size_t)runs, sizeof(double));
	double *find = calloc((size_t)runs, sizeof(double));
	struct config cfg;
	config_init(&cfg);
	size_t files = 0, masked = 0, cached = 0, dirs_files, dirs_masked;
	/* The cache a run would leave: written once, read by every warm scan. */
	if (cache_dir &&
	    scan_once(&cfg, dir, cache_dir, true, &dirs_files, &dirs_masked, &cached) < 0)
		return 1;
	for (int i = -1; i < runs; i++) { /* the first round warms the caches */
		double ms = scan_once(&cfg, dir, NULL, false, &files, &masked, &cached);
		double w = cache_dir ? scan_once(&cfg, dir, cache_dir, false, &dirs_files,
						 &dirs_masked, &cached)
				     : 0;
		if (ms < 0 || w < 0)
			return 1;
		if (cache_dir && (dirs_files != files || dirs_masked != masked)) {
			fprintf(stderr,
				"the warm scan found %zu files, %zu masked; the cold one %zu, "
				"%zu\n",
				dirs_files, dirs_masked, files, masked);
			return 1;
		}
		double f = run_find(dir);
		if (i >= 0) {
			scan[i] = ms;
			warm[i] = w;
			find[i] = f;
		}
	}
	qsort(scan, (size_t)runs, sizeof(double), compare);
	qsort(warm, (size_t)runs, sizeof(double), compare);
	qsort(find, (size_t)runs, sizeof(double), compare);
	double s = scan[runs / 2], f = find[runs / 2], w = warm[runs / 2];
	printf("tree: %s (%zu files seen by the scan, %zu masked)\n", dir, files, masked);
	printf("secret scan (median of %d):        %8.2f ms\n", runs, s);
	printf("find -iname ... (same patterns):   %8.2f ms\n", f);
	printf("ratio scan/find: %.3f (the scan takes %.1f%% of find's time)\n", s / f,
	       100.0 * s / f);
	if (cache_dir) {
		printf("secret scan with its scan cache:   %8.2f ms (%zu directories from the "
		       "cache)\n",
		       w, cached);
		printf("ratio cached/uncached: %.3f (%.1f%% of the scan without the cache)\n",
		       w / s, 100.0 * w / s);
	}
	config_release(&cfg);
	free(scan);
	free(warm);
	free(find);
	return 0;
}

/* The whole command line program, with every input passed in, so that tests
 * can drive it without mocks. */
#pragma once

int run(int argc, char **argv, char **envp, int in, int out, int err);

/* idle_holder's command line.
 *
 * Owns: struct idle_options, the flags' defaults and ranges, the usage text
 * (which documents the exit statuses below). Promises: parse_idle_options
 * returns only options in range; it prints the usage and exits 0 on --help and
 * refuses anything else naming the flag (exit status EXIT_USAGE, cli_flags.h).
 * Whether --connections fits the open-file limit is checked by idle_holder.c,
 * which refuses it the same way. Called by idle_holder.c's main. */
#ifndef ARCHBENCH_IDLE_OPTIONS_H
#define ARCHBENCH_IDLE_OPTIONS_H

#include <stdbool.h>

/* Exit statuses (and EXIT_USAGE, 2). */
#define IDLE_EXIT_OK 0
#define IDLE_EXIT_ERROR 1           /* the holder itself failed (out of memory, epoll) */
#define IDLE_EXIT_NOT_ESTABLISHED 3 /* fewer than --connections were established and answered */
#define IDLE_EXIT_CLOSED 4          /* all were, but the server closed some before the end */

/* Descriptors the holder needs besides its connections: stdio, epoll, signalfd, slack. */
#define IDLE_RESERVED_FDS 16

struct idle_options {
    const char *host;
    long port;
    long connections;
    long sources;
    long in_flight;
    double connect_timeout_s;
    double response_timeout_s;
    double duration_s; /* 0: until SIGINT/SIGTERM */
    const char *path;
};

void parse_idle_options(int argc, char **argv, struct idle_options *o);

#endif

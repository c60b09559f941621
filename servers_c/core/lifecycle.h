/* The start-up and shutdown protocol every server follows.
 *
 * lifecycle_init() runs first in main(): it ignores SIGPIPE (a peer that goes
 * away must cost an EPIPE, not the process) and blocks SIGINT and SIGTERM, so
 * every thread created later inherits the mask and only the watcher thread
 * started by lifecycle_watch_signals() ever receives them. That thread sets the
 * stop flag and runs the architecture's wake-up callback, which unblocks
 * whatever its threads sleep in (accept, read, a condition variable, epoll).
 */
#ifndef ARCHBENCH_LIFECYCLE_H
#define ARCHBENCH_LIFECYCLE_H

#include <stdbool.h>

#include "counters.h"

/* The exit status of a server whose kernel lacks a feature it needs (e.g.
 * io_uring): the runner records such a trial as unsupported. */
#define EXIT_UNSUPPORTED 3

void lifecycle_init(void);

/* Starts the signal watcher; on_stop(arg) runs once, in the watcher thread. */
void lifecycle_watch_signals(void (*on_stop)(void *arg), void *arg);

bool lifecycle_stopping(void);

/* Asks for the same stop a signal would (used when the server fails on its own). */
void lifecycle_request_stop(void);

/* Joins the watcher (requesting a stop first if none came). */
void lifecycle_finish(void);

/* Prints "listening on HOST:PORT", then `fields` (" key=value" pairs, or "")
 * on the same line, and flushes. */
void lifecycle_announce_ready(const char *host, int port, const char *fields);

/* Prints the one JSON line of the shutdown contract. */
void lifecycle_report(const char *architecture, long threads, const struct server_counters *c);

/* Prints a fatal start-up error and exits 1. */
_Noreturn void lifecycle_fail(const char *architecture, const char *message);

#endif

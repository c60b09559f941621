/* echo_client's workers: each an edge-triggered epoll loop over its own block
 * of connections, on a thread of its own.
 *
 * Owns: its connections, their sockets, its epoll instance, its buffers and
 * its deadlines (all private: struct echo_worker is opaque here).
 * Promises: a worker opens connections [first, first + count) of the run (at
 * its share of --connect-rate), writes each its payload stream
 * (payload_stream.h), verifies every byte that comes back and times each
 * message; it learns of the run only through the options, the server address
 * and the echo_control it is given, and reports only through its
 * worker_results (echo_results.h) and the control's stop flag and counters.
 * When echo_worker_main returns, the results are final.
 * Called by echo_client.c: create each worker, run echo_worker_main on a
 * thread, join it, read its results, destroy it. */
#ifndef ARCHBENCH_ECHO_WORKER_H
#define ARCHBENCH_ECHO_WORKER_H

#include <netinet/in.h>
#include <stddef.h>

#include "echo_control.h"
#include "echo_options.h"
#include "echo_results.h"

struct echo_worker;

/* A worker over connections [first, first + count) of `threads` workers'
 * share; it initialises *results. NULL (errno set) if out of resources. The
 * options, server, control and results must outlive it. */
struct echo_worker *echo_worker_create(const struct options *o, const struct sockaddr_in *server, long threads,
                                       struct echo_control *ctl, struct worker_results *results, size_t first,
                                       size_t count);

/* The worker's loop (a pthread start routine; the argument is the worker). */
void *echo_worker_main(void *worker);

/* Closes its sockets and frees it. */
void echo_worker_destroy(struct echo_worker *w);

#endif

/* The start-up every architecture shares: options, responses, the listener. */
#ifndef ARCHBENCH_SERVER_H
#define ARCHBENCH_SERVER_H

#include <stdbool.h>

#include "lifecycle.h"
#include "listener.h"
#include "options.h"
#include "responses.h"
#include "session.h"
#include "workload.h"

struct server_base {
    const struct server_cli *cli;
    struct common_options options;
    struct responses responses;
    struct workload workload;      /* --work-us, --block-us, --block-dist, --seed */
    struct session_config session; /* --proto, and the responses and workload for http */
    int listen_fd;
    int port;
};

/* How server_start prepares the listener; a field left out means false. */
struct server_start_options {
    /* Event loops accept until EAGAIN; acceptor threads block in accept. */
    bool nonblocking_listener;
    /* The architecture opens one SO_REUSEPORT listener per thread itself
     * (server_open_reuseport_listeners): server_start opens none. */
    bool listener_per_thread;
};

/* Parses the command line, builds the responses, calibrates the work loop (with
 * --work-us) and opens the listener (see server_start_options); exits with a
 * message on any failure. Signals are blocked from here on. */
void server_start(struct server_base *base, const struct server_cli *cli, int argc, char **argv,
                  struct server_start_options how);

/* Acceptor threads (blocking listener): the next connection, or -1 once the server
 * is stopping or accepting failed for good. Transient failures are counted and
 * retried, pausing while descriptors are exhausted. */
int server_accept_blocking(const struct server_base *base, enum socket_mode connection_mode,
                           struct server_counters *counters);

/* Event loops (non-blocking listener): accepts up to `max` pending connections
 * (0: until EAGAIN, as edge-triggered notification requires) and hands each to
 * take(ctx, fd). */
void server_accept_pending(int listen_fd, int max, void (*take)(void *ctx, int fd), void *ctx,
                           struct server_counters *counters);

/* One SO_REUSEPORT listener per event loop, all on one port: the first picks the
 * port (0: ephemeral, written to base->port) and the others join it. */
void server_open_reuseport_listeners(struct server_base *base, long count, enum socket_mode mode, int *listeners);

/* Prints the ready line: the address, and the work loop's calibration when
 * there is work (workload_ready_fields). */
void server_announce_ready(const struct server_base *base);

/* Prints the shutdown line and releases what server_start acquired. */
void server_finish(struct server_base *base, const struct server_counters *counters);

#endif

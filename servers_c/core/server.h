/* The start-up every architecture shares: options, responses, the listener. */
#ifndef ARCHBENCH_SERVER_H
#define ARCHBENCH_SERVER_H

#include <stdbool.h>

#include "lifecycle.h"
#include "options.h"
#include "responses.h"
#include "session.h"

struct server_base {
    const struct server_cli *cli;
    struct common_options options;
    struct responses responses;
    struct session_config session; /* --proto, and the responses for http */
    int listen_fd;
    int port;
};

/* Parses the command line, builds the responses and opens the listener (unless
 * open_listener is false, for architectures that open one per thread); exits
 * with a message on any failure. Signals are blocked from here on. */
void server_start(struct server_base *base, const struct server_cli *cli, int argc, char **argv,
                  bool nonblocking_listener, bool open_listener);

/* Prints the shutdown line and releases what server_start acquired. */
void server_finish(struct server_base *base, const struct server_counters *counters);

#endif

/* What idle_holder counted, and its one JSON object (docs/contracts.md
 * section 9, parsed by archbench/parse/idle_holder.py).
 *
 * Owns: struct idle_tally and the JSON format. Promises: the tally_* calls
 * record each outcome once, with its time; print_idle_json writes the tally
 * and the options, nothing else, on stdout; every time in it is in seconds
 * since the holder began connecting. Called by idle_holder.c. */
#ifndef ARCHBENCH_IDLE_REPORT_H
#define ARCHBENCH_IDLE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

#include "errno_counts.h"
#include "idle_options.h"

/* Why a first request failed, besides an errno (or eof) on the connection. */
enum request_failure {
    REQ_TIMEOUT,          /* no complete response within --response-timeout */
    REQ_BAD_RESPONSE,     /* not a keep-alive HTTP/1.x response with a Content-Length */
    REQ_CONNECTION_CLOSE, /* the server said it would close the connection */
    REQ_EXTRA_BYTES,      /* more bytes than the response */
    REQ_FAILURE_KINDS,
};

#define HTTP_STATUS_SLOTS 1000 /* every three-digit status */

/* Closures by the server within one whole second since the start. */
struct close_second {
    uint64_t second;
    uint64_t count;
};

struct idle_tally {
    uint64_t start_ns;
    rlim_t nofile_soft, nofile_hard;
    uint64_t attempted, connected, established;
    uint64_t connect_failures[ERRNO_SLOTS];
    uint64_t request_errors[ERRNO_SLOTS]; /* [0]: eof before the whole response */
    uint64_t request_failures[REQ_FAILURE_KINDS];
    uint64_t request_status[HTTP_STATUS_SLOTS]; /* a complete response that was not 2xx */
    uint64_t closed[ERRNO_SLOTS];               /* by the server once established; [0]: eof */
    uint64_t closed_total;
    uint64_t first_closed_ns, last_closed_ns;
    struct close_second *per_second; /* room for one per connection, allocated by the caller */
    size_t per_second_len;
    uint64_t unexpected_bytes; /* received on a connection after its response */
    uint64_t ready_ns;         /* all established: the hold began (0: never) */
    uint64_t end_ns;
    uint64_t open_at_end;
    bool interrupted;
    const char *stopped_by; /* "duration", "signal" or "not_established" */
    int exit_status;
};

/* An established connection the server closed (err 0: EOF). */
void tally_closed(struct idle_tally *t, int err, uint64_t now);

/* The one JSON object on stdout. */
void print_idle_json(const struct idle_options *o, const struct idle_tally *t);

#endif

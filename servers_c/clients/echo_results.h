/* What one echo_client worker found: the narrow interface through which a
 * worker reports, in place of the client itself.
 *
 * Owns: nothing; echo_client.c allocates one per worker (zeroed) and hands
 * it to the worker, echo_worker_create initialises it. Promises: the worker
 * alone writes it. `live` is republished once per loop iteration with relaxed
 * atomic stores, so the main thread may sample it at any time (the time
 * series); everything else is final, and may be read, only once the worker's
 * thread has been joined: then echo_report.c merges them. */
#ifndef ARCHBENCH_ECHO_RESULTS_H
#define ARCHBENCH_ECHO_RESULTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "errno_counts.h"
#include "histogram.h"

struct verify_failure {
    bool set;
    uint32_t connection;
    uint64_t offset;
    int expected; /* -1: nothing was sent at that offset (extra bytes) */
    int got;
    uint64_t at_ns;
};

/* The worker's running totals, as last published. */
struct live_totals {
    _Atomic uint64_t bytes_sent, bytes_received, echoes;
    _Atomic uint64_t connected; /* ever established */
    _Atomic uint64_t open;      /* established now */
    _Atomic uint64_t held;      /* --max-conns: verified alive and idle */
};

struct worker_results {
    struct live_totals live;
    struct histogram hist; /* round-trip times, ns */
    uint64_t connect_errors[ERRNO_SLOTS];
    uint64_t closed_early[ERRNO_SLOTS]; /* [0]: EOF */
    uint64_t verify_errors;
    struct verify_failure first_failure;
    uint64_t echo_timeouts;
    uint64_t sweep_alive;
    uint64_t unanswered_messages;
    uint64_t not_attempted;       /* the trial or the ramp ended before their turn */
    uint64_t due_unsent_messages; /* --rate: due within the window, never begun (depth full) */
    uint64_t last_connected_ns;
};

#endif

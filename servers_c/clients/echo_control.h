/* What echo_client's main thread and its workers signal to each other while
 * a run goes on, and nothing else of the client.
 *
 * Owns: nothing; echo_client.c owns the one instance and hands each worker a
 * pointer to it. Promises (main thread -> workers): start_ns is set before any
 * worker starts and never changes; end_ns is when no message may be begun any
 * more (UINT64_MAX in --max-conns mode, moved earlier on SIGINT/SIGTERM);
 * interrupted is set on SIGINT/SIGTERM; sweep_go starts the --max-conns final
 * sweep. (Workers -> everyone): stop, the first reason a --max-conns ramp
 * ended (echo_stop.h); held_total, the connections verified alive so far;
 * settled and finished, how many workers are through the ramp's settling and
 * through their run. */
#ifndef ARCHBENCH_ECHO_CONTROL_H
#define ARCHBENCH_ECHO_CONTROL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "echo_stop.h"

struct echo_control {
    uint64_t start_ns;
    _Atomic uint64_t end_ns;
    atomic_bool interrupted;
    struct echo_stop stop;
    /* --max-conns */
    _Atomic uint64_t held_total;
    atomic_int settled;
    atomic_bool sweep_go;
    atomic_int finished;
};

#endif

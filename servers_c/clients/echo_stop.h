/* Why a --max-conns ramp stopped: the one channel through which a worker
 * reports to the rest of echo_client that the run must end.
 *
 * Owns: the stop reason, its errno and when it was set. Promises: the first
 * stop_set wins (later ones are ignored, so the reason is what happened
 * first, whichever thread saw it); stop_is_set may be polled from any thread.
 * Set by the workers (echo_conn.c, echo_worker.c) and by the main thread on
 * SIGINT/SIGTERM; read by the workers (to stop ramping) and by echo_client.c
 * for the report, which names it with stop_reason_text. */
#ifndef ARCHBENCH_ECHO_STOP_H
#define ARCHBENCH_ECHO_STOP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mono_clock.h"

enum stop_reason {
    STOP_NONE,
    STOP_CAP,             /* cap_reached */
    STOP_CLIENT_FDS,      /* client_EMFILE / client_ENFILE: socket() failed here */
    STOP_CONNECT_ERROR,   /* connect_<ERRNO> */
    STOP_CONNECT_TIMEOUT, /* connect_timeout */
    STOP_ECHO_TIMEOUT,    /* echo_timeout: connected, never served (e.g. the server cannot accept) */
    STOP_SERVER_CLOSED,   /* server_closed: EOF on an established connection */
    STOP_SERVER_ERROR,    /* server_<ERRNO>: e.g. server_ECONNRESET */
    STOP_VERIFY,          /* verify_error */
    STOP_DURATION,        /* duration_elapsed */
    STOP_INTERRUPTED,     /* interrupted */
};

struct echo_stop {
    _Atomic int reason; /* enum stop_reason */
    _Atomic int err;
    _Atomic uint64_t at_ns;
};

static inline void stop_set(struct echo_stop *s, enum stop_reason reason, int err)
{
    int expected = STOP_NONE;
    if (atomic_compare_exchange_strong(&s->reason, &expected, (int)reason)) {
        atomic_store(&s->err, err);
        atomic_store(&s->at_ns, now_ns());
    }
}

static inline bool stop_is_set(struct echo_stop *s) { return atomic_load(&s->reason) != STOP_NONE; }

/* The name in the report: "cap_reached", "connect_ECONNREFUSED", ... (buf holds the ones with an errno). */
const char *stop_reason_text(int reason, int err, char *buf, size_t len);

#endif

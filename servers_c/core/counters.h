/* What every server reports in its shutdown line. Threads count into a private
 * struct server_counters and add it to the shared totals once, when they finish,
 * so the hot path never touches a shared cache line. */
#ifndef ARCHBENCH_COUNTERS_H
#define ARCHBENCH_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

#include "session.h"

struct server_counters {
    uint64_t connections_accepted;
    uint64_t connections_served; /* answered while the client was still there */
    uint64_t requests_served;    /* http */
    uint64_t bad_requests;
    uint64_t connection_resets;
    uint64_t errors;
    uint64_t bytes_echoed; /* echo: bytes sent back */
    uint64_t timeouts;     /* closed by --header-timeout or --idle-timeout */
};

struct shared_counters {
    _Atomic uint64_t connections_accepted;
    _Atomic uint64_t connections_served;
    _Atomic uint64_t requests_served;
    _Atomic uint64_t bad_requests;
    _Atomic uint64_t connection_resets;
    _Atomic uint64_t errors;
    _Atomic uint64_t bytes_echoed;
    _Atomic uint64_t timeouts;
};

/* Once per connection, when it closes. */
static inline void counters_add_session(struct server_counters *c, const struct session_counters *s)
{
    /* echo: at least one byte went back (its first batch checked as in http) */
    bool answered = s->requests_served > 0 || s->bad_requests > 0 || s->bytes_echoed > 0;
    c->connections_served += answered && !s->first_answer_after_client_left;
    c->requests_served += s->requests_served;
    c->bad_requests += s->bad_requests;
    c->bytes_echoed += s->bytes_echoed;
}

static inline void counters_add(struct server_counters *dst, const struct server_counters *src)
{
    dst->connections_accepted += src->connections_accepted;
    dst->connections_served += src->connections_served;
    dst->requests_served += src->requests_served;
    dst->bad_requests += src->bad_requests;
    dst->connection_resets += src->connection_resets;
    dst->errors += src->errors;
    dst->bytes_echoed += src->bytes_echoed;
    dst->timeouts += src->timeouts;
}

static inline void shared_counters_add(struct shared_counters *dst, const struct server_counters *src)
{
    atomic_fetch_add(&dst->connections_accepted, src->connections_accepted);
    atomic_fetch_add(&dst->connections_served, src->connections_served);
    atomic_fetch_add(&dst->requests_served, src->requests_served);
    atomic_fetch_add(&dst->bad_requests, src->bad_requests);
    atomic_fetch_add(&dst->connection_resets, src->connection_resets);
    atomic_fetch_add(&dst->errors, src->errors);
    atomic_fetch_add(&dst->bytes_echoed, src->bytes_echoed);
    atomic_fetch_add(&dst->timeouts, src->timeouts);
}

static inline struct server_counters shared_counters_load(struct shared_counters *src)
{
    struct server_counters c = {
        .connections_accepted = atomic_load(&src->connections_accepted),
        .connections_served = atomic_load(&src->connections_served),
        .requests_served = atomic_load(&src->requests_served),
        .bad_requests = atomic_load(&src->bad_requests),
        .connection_resets = atomic_load(&src->connection_resets),
        .errors = atomic_load(&src->errors),
        .bytes_echoed = atomic_load(&src->bytes_echoed),
        .timeouts = atomic_load(&src->timeouts),
    };
    return c;
}

#endif

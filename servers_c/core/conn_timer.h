/* Connection deadlines for --header-timeout and --idle-timeout.
 *
 * struct timeout_state follows one connection: after each time its session has
 * processed what arrived, timeout_state_update() says which deadline governs
 * the wait that follows (session_wait_kind): a head keeps the deadline it got
 * when it began, however slowly its bytes trickle in; anything else gets
 * now + idle timeout, i.e. the clock restarts on every bit of progress. That is
 * a few comparisons and no system call.
 *
 * struct conn_timers is the deadline list of a single-threaded event loop: one
 * intrusive FIFO list per timeout kind. Every deadline in a list is "the time
 * it was (re)armed + that list's constant duration", and a loop's clock never
 * goes backwards, so appending at the tail keeps each list sorted: arming,
 * re-arming and removing are O(1), and the earliest deadline is at one of the
 * two heads. The loop reads the clock once per iteration, sleeps in its wait
 * (epoll_wait, poll, io_uring_enter) at most until the earliest deadline and
 * closes what has expired. An idle deadline is moved only once it is at least
 * a slack (1/128 of the idle timeout, at most 250 ms) older than a fresh one,
 * so a busy connection is not relinked on every event; it may then be closed
 * up to that slack early.
 */
#ifndef ARCHBENCH_CONN_TIMER_H
#define ARCHBENCH_CONN_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

enum timeout_kind { TIMEOUT_NONE, TIMEOUT_HEAD, TIMEOUT_IDLE };

struct timeout_state {
    uint64_t deadline_ms; /* monotonic milliseconds; meaningful unless kind is TIMEOUT_NONE */
    uint64_t generation;  /* session_head_generation() when a head deadline was set */
    enum timeout_kind kind;
};

/* CLOCK_MONOTONIC in milliseconds (vDSO: no system call). */
uint64_t monotonic_ms(void);

/* Applies the session's state at time now; returns true when the deadline (or
 * its kind) changed. A zeroed state is TIMEOUT_NONE. */
bool timeout_state_update(struct timeout_state *st, const struct session_timeouts *cfg, const struct session *s,
                          uint64_t now);

static inline bool timeouts_enabled(const struct session_timeouts *cfg)
{
    return cfg->header_ms > 0 || cfg->idle_ms > 0;
}

/* ---- the deadline lists of a single-threaded loop ------------------------ */

struct conn_timer {
    struct conn_timer *prev, *next; /* NULL while in no list */
    struct timeout_state state;
};

struct conn_timers {
    struct conn_timer lists[3]; /* sentinels, indexed by TIMEOUT_HEAD and TIMEOUT_IDLE */
    struct session_timeouts config;
};

void conn_timers_init(struct conn_timers *t, const struct session_timeouts *config);

static inline bool conn_timers_enabled(const struct conn_timers *t) { return timeouts_enabled(&t->config); }

/* (Re)arms the connection's deadline for the session's state at time now. */
void conn_timers_update(struct conn_timers *t, struct conn_timer *n, const struct session *s, uint64_t now);

/* Takes the connection out of its list (a no-op when it is in none). */
void conn_timers_remove(struct conn_timer *n);

/* Milliseconds until the earliest deadline (rounded up; 0 when one has passed),
 * or -1 when there is none. */
int conn_timers_wait_ms(const struct conn_timers *t, uint64_t now);

/* A connection whose deadline is at or before now, or NULL. It stays in its
 * list: closing it must remove it. */
struct conn_timer *conn_timers_expired(const struct conn_timers *t, uint64_t now);

#define CONN_TIMER_OWNER(node, type, member) ((type *)(void *)((char *)(node)-offsetof(type, member)))

#endif

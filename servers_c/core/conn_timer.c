#include "conn_timer.h"

#include <limits.h>
#include <time.h>

#define IDLE_SLACK_MAX_MS 250

uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t idle_slack_ms(const struct session_timeouts *cfg)
{
    uint64_t slack = cfg->idle_ms / 128;
    return slack < IDLE_SLACK_MAX_MS ? slack : IDLE_SLACK_MAX_MS;
}

bool timeout_state_update(struct timeout_state *st, const struct session_timeouts *cfg, const struct session *s,
                          uint64_t now)
{
    if (session_wait_kind(s) == SESSION_WAIT_HEAD && cfg->header_ms > 0) {
        uint64_t generation = session_head_generation(s);
        if (st->kind == TIMEOUT_HEAD && st->generation == generation)
            return false; /* the same head, still incomplete: its deadline stands */
        st->kind = TIMEOUT_HEAD;
        st->generation = generation;
        st->deadline_ms = now + cfg->header_ms;
        return true;
    }
    if (cfg->idle_ms > 0) {
        uint64_t deadline = now + cfg->idle_ms;
        if (st->kind == TIMEOUT_IDLE && deadline - st->deadline_ms <= idle_slack_ms(cfg))
            return false;
        st->kind = TIMEOUT_IDLE;
        st->deadline_ms = deadline;
        return true;
    }
    if (st->kind == TIMEOUT_NONE)
        return false;
    st->kind = TIMEOUT_NONE;
    return true;
}

void conn_timers_init(struct conn_timers *t, const struct session_timeouts *config)
{
    for (int i = 0; i < 3; i++) {
        t->lists[i].prev = t->lists[i].next = &t->lists[i];
        t->lists[i].state = (struct timeout_state){0};
    }
    t->config = *config;
}

void conn_timers_remove(struct conn_timer *n)
{
    if (n->next == NULL)
        return;
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

void conn_timers_update(struct conn_timers *t, struct conn_timer *n, const struct session *s, uint64_t now)
{
    if (!timeout_state_update(&n->state, &t->config, s, now))
        return;
    conn_timers_remove(n);
    if (n->state.kind == TIMEOUT_NONE)
        return;
    struct conn_timer *sentinel = &t->lists[n->state.kind];
    n->next = sentinel;
    n->prev = sentinel->prev;
    sentinel->prev->next = n;
    sentinel->prev = n;
}

static const struct conn_timer *earliest(const struct conn_timers *t)
{
    const struct conn_timer *head = t->lists[TIMEOUT_HEAD].next;
    const struct conn_timer *idle = t->lists[TIMEOUT_IDLE].next;
    bool have_head = head != &t->lists[TIMEOUT_HEAD];
    bool have_idle = idle != &t->lists[TIMEOUT_IDLE];
    if (have_head && (!have_idle || head->state.deadline_ms <= idle->state.deadline_ms))
        return head;
    return have_idle ? idle : NULL;
}

int conn_timers_wait_ms(const struct conn_timers *t, uint64_t now)
{
    const struct conn_timer *first = earliest(t);
    if (first == NULL)
        return -1;
    if (first->state.deadline_ms <= now)
        return 0;
    uint64_t wait = first->state.deadline_ms - now;
    return wait > INT_MAX ? INT_MAX : (int)wait;
}

struct conn_timer *conn_timers_expired(const struct conn_timers *t, uint64_t now)
{
    const struct conn_timer *first = earliest(t);
    if (first == NULL || first->state.deadline_ms > now)
        return NULL;
    return (struct conn_timer *)first;
}

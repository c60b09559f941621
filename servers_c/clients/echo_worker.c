/* An echo_client worker's loop over its connections: when to open the next
 * ones (at its share of --connect-rate), the deadlines of connects, of
 * --max-conns echoes and of --rate sends, the drain after the trial, the
 * --max-conns ramp, settling and final sweep, and publishing its totals. See
 * echo_worker.h for its contract and echo_conn.c for each connection. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "echo_worker.h"
#include "echo_worker_state.h"
#include "mono_clock.h"
#include "payload_stream.h"

static void publish(struct echo_worker *w)
{
    struct live_totals *live = &w->res->live;
    atomic_store_explicit(&live->bytes_sent, w->t.bytes_sent, memory_order_relaxed);
    atomic_store_explicit(&live->bytes_received, w->t.bytes_received, memory_order_relaxed);
    atomic_store_explicit(&live->echoes, w->t.echoes, memory_order_relaxed);
    atomic_store_explicit(&live->connected, w->t.connected, memory_order_relaxed);
    atomic_store_explicit(&live->open, w->t.open, memory_order_relaxed);
    atomic_store_explicit(&live->held, w->t.held, memory_order_relaxed);
}

static uint64_t timeout_ns(const struct options *o) { return (uint64_t)(o->connect_timeout_s * 1e9); }

/* Opens the connections that are due; returns when the next one is (UINT64_MAX: none). */
static uint64_t open_due(struct echo_worker *w, uint64_t now)
{
    struct echo_control *ctl = w->ctl;
    size_t due = w->count;
    if (w->open_rate > 0) {
        double elapsed_s = (double)(now - ctl->start_ns) / 1e9;
        double n = floor(elapsed_s * w->open_rate) + 1;
        due = n < (double)w->count ? (size_t)n : w->count;
    }
    for (int k = 0; w->opened < due && k < OPEN_BATCH; k++) {
        if (max_conns_mode(w->o) && stop_is_set(&ctl->stop))
            return UINT64_MAX;
        conn_open(w, &w->conns[w->opened++], now);
    }
    if (w->opened >= w->count)
        return UINT64_MAX;
    if (w->opened < due || w->open_rate <= 0)
        return now; /* a batch is done; more are due at once */
    return ctl->start_ns + (uint64_t)((double)w->opened / w->open_rate * 1e9);
}

/* Fails connects and (--max-conns) echoes that took too long; returns the next deadline. */
static uint64_t expire(struct echo_worker *w, uint64_t now)
{
    uint64_t limit = timeout_ns(w->o);
    uint64_t next = UINT64_MAX;
    struct deadline *d;
    while ((d = fifo_head(&w->connecting, C_CONNECTING)) != NULL) {
        if (d->since_ns + limit > now) {
            next = d->since_ns + limit;
            break;
        }
        w->connecting.head++;
        conn_connect_failed(w, d->conn, ETIMEDOUT, AFTER_SOCKET_CALL);
    }
    while (max_conns_mode(w->o) && (d = fifo_head(&w->awaiting, C_OPEN)) != NULL) {
        if (d->since_ns + limit > now) {
            next = min_u64(next, d->since_ns + limit);
            break;
        }
        w->awaiting.head++;
        w->res->echo_timeouts++;
        if (!w->sweeping)
            stop_set(&w->ctl->stop, STOP_ECHO_TIMEOUT, 0);
        conn_close(w, d->conn);
    }
    return next;
}

/* --rate: begins the messages whose time has come; returns the next due time. */
static uint64_t fire_timers(struct echo_worker *w, uint64_t now)
{
    struct heap_node *top;
    while ((top = heap_top(&w->heap)) != NULL) {
        if (top->key > now)
            return top->key;
        heap_remove(&w->heap, top);
        struct conn *cn = (struct conn *)((char *)top - offsetof(struct conn, due));
        conn_pump(w, cn, now);
    }
    return UINT64_MAX;
}

static int wait_events(struct echo_worker *w, struct epoll_event *events, uint64_t now, uint64_t wake)
{
    uint64_t wait = wake > now ? min_u64(wake - now, MAX_WAIT_NS) : 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    static atomic_bool no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts = {(time_t)(wait / NS_PER_S), (long)(wait % NS_PER_S)};
        int n = epoll_pwait2(w->epoll_fd, events, EVENT_BATCH, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        atomic_store(&no_pwait2, true); /* kernel older than 5.11 */
    }
#endif
    return epoll_wait(w->epoll_fd, events, EVENT_BATCH, (int)((wait + 999999) / 1000000));
}

static void handle_events(struct echo_worker *w, uint64_t now, uint64_t wake)
{
    struct epoll_event events[EVENT_BATCH];
    int n = wait_events(w, events, now, wake);
    for (int i = 0; i < n; i++)
        conn_on_event(w, events[i].data.ptr, events[i].events);
}

/* --max-conns after the ramp: settle, wait for the main thread, echo once more on every held connection. */
static void finish_max_conns(struct echo_worker *w)
{
    struct echo_control *ctl = w->ctl;
    uint64_t settle_end = atomic_load(&ctl->stop.at_ns) + SETTLE_NS;
    for (;;) { /* connects and first echoes already in flight may still land */
        uint64_t now = now_ns();
        uint64_t next = expire(w, now);
        if (w->connecting_n + w->awaiting_n == 0 || now >= settle_end || atomic_load(&ctl->interrupted))
            break;
        handle_events(w, now, min_u64(next, settle_end));
    }
    for (size_t i = 0; i < w->opened; i++) /* whatever is still pending is not counted */
        if (w->conns[i].state == C_CONNECTING || w->conns[i].state == C_OPEN)
            conn_close(w, &w->conns[i]);
    publish(w);
    atomic_fetch_add(&ctl->settled, 1);
    while (!atomic_load(&ctl->sweep_go) && !atomic_load(&ctl->interrupted)) {
        uint64_t now = now_ns();
        handle_events(w, now, now + MAX_WAIT_NS); /* notices servers closing held connections */
        publish(w);
    }
    if (atomic_load(&ctl->interrupted))
        return;
    w->sweeping = true;
    w->awaiting.head = w->awaiting.tail = 0;
    uint64_t now = now_ns();
    for (size_t i = 0; i < w->opened; i++)
        if (w->conns[i].state == C_HELD) {
            w->t.held--;
            conn_begin_probe(w, &w->conns[i], now);
        }
    while (w->awaiting_n > 0 && !atomic_load(&ctl->interrupted)) {
        now = now_ns();
        uint64_t next = expire(w, now);
        handle_events(w, now, next);
        publish(w);
    }
}

/* After the loop: what was left unanswered, never sent or never attempted. */
static void tally_the_end(struct echo_worker *w)
{
    const struct options *o = w->o;
    uint64_t end = atomic_load(&w->ctl->end_ns);
    for (size_t i = 0; i < w->opened; i++) {
        struct conn *cn = &w->conns[i];
        if ((cn->state == C_OPEN || cn->state == C_HELD) && o->rate > 0 && end > cn->schedule_ns) {
            /* --rate: messages due within the window that --depth held back */
            uint64_t due = (uint64_t)ceil((double)(end - cn->schedule_ns) * o->rate / 1e9);
            w->res->due_unsent_messages += due > cn->started ? due - cn->started : 0;
        }
        if (cn->state == C_OPEN || cn->state == C_HELD)
            w->res->unanswered_messages += cn->started - cn->completed;
        else if (cn->state == C_CONNECTING) /* the trial ended first: it did not connect in time */
            conn_connect_failed(w, cn, ETIMEDOUT, AFTER_SOCKET_CALL);
    }
    w->res->not_attempted = w->count - w->opened;
}

void *echo_worker_main(void *worker)
{
    struct echo_worker *w = worker;
    const struct options *o = w->o;
    struct echo_control *ctl = w->ctl;
    bool draining = false;
    uint64_t drain_end = 0;
    for (;;) {
        uint64_t now = now_ns();
        if (atomic_load_explicit(&ctl->interrupted, memory_order_relaxed))
            break;
        uint64_t wake = now + MAX_WAIT_NS;
        if (max_conns_mode(o)) {
            if (now >= ctl->start_ns + (uint64_t)(o->duration_s * 1e9))
                stop_set(&ctl->stop, STOP_DURATION, 0);
            if (stop_is_set(&ctl->stop)) {
                finish_max_conns(w);
                break;
            }
            wake = min_u64(wake, open_due(w, now));
        } else {
            uint64_t end = atomic_load_explicit(&ctl->end_ns, memory_order_relaxed);
            if (now < end) {
                wake = min_u64(wake, min_u64(open_due(w, now), end));
                if (o->rate > 0)
                    wake = min_u64(wake, fire_timers(w, now));
            } else {
                if (!draining) { /* the trial is over: no new connection or message */
                    draining = true;
                    drain_end = now + DRAIN_NS;
                    heap_clear(&w->heap);
                }
                if (w->in_flight_bytes == 0 || now >= drain_end)
                    break;
                wake = min_u64(wake, drain_end);
            }
        }
        wake = min_u64(wake, expire(w, now));
        handle_events(w, now, wake);
        publish(w);
    }
    tally_the_end(w);
    publish(w);
    atomic_fetch_add(&ctl->finished, 1);
    return NULL;
}

struct echo_worker *echo_worker_create(const struct options *o, const struct sockaddr_in *server, long threads,
                                       struct echo_control *ctl, struct worker_results *results, size_t first,
                                       size_t count)
{
    struct echo_worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->o = o;
    w->server = server;
    w->ctl = ctl;
    w->res = results;
    w->count = count;
    w->open_rate = o->connect_rate / (double)threads;
    histogram_init(&results->hist);
    w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    w->conns = calloc(count, sizeof w->conns[0]);
    w->due_ns = calloc(count * (size_t)o->depth, sizeof w->due_ns[0]);
    w->heap.items = calloc(count, sizeof w->heap.items[0]);
    w->connecting = (struct fifo){calloc(count, sizeof(struct deadline)), 0, 0, count};
    w->awaiting = (struct fifo){calloc(count, sizeof(struct deadline)), 0, 0, count};
    for (size_t i = 0; w->conns != NULL && i < count; i++) {
        struct conn *cn = &w->conns[i];
        cn->fd = -1;
        cn->id = (uint32_t)(first + i);
        cn->key = stream_key(o->seed, first + i);
        heap_node_init(&cn->due);
    }
    w->out_buf = malloc(IO_CHUNK);
    w->in_buf = malloc(IO_CHUNK);
    w->expect_buf = malloc(IO_CHUNK);
    if (w->epoll_fd < 0 || !w->conns || !w->due_ns || !w->heap.items || !w->connecting.items || !w->awaiting.items ||
        !w->out_buf || !w->in_buf || !w->expect_buf) {
        int err = errno;
        echo_worker_destroy(w);
        errno = err;
        return NULL;
    }
    return w;
}

void echo_worker_destroy(struct echo_worker *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; w->conns != NULL && i < w->count; i++)
        if (w->conns[i].fd >= 0)
            close(w->conns[i].fd);
    if (w->epoll_fd >= 0)
        close(w->epoll_fd);
    free(w->conns);
    free(w->due_ns);
    free(w->heap.items);
    free(w->connecting.items);
    free(w->awaiting.items);
    free(w->out_buf);
    free(w->in_buf);
    free(w->expect_buf);
    free(w);
}

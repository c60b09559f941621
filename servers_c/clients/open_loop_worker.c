/* One open_loop thread; see open_loop_worker.h.
 *
 * Each connection is CONNECTING (deadline: the connect timeout), OPEN, or
 * WAITING to reconnect. An open connection has up to `pipeline` requests
 * outstanding, in a ring of their schedule and send times; its one deadline in
 * the heap is the earlier of its next request's schedule (while it has room)
 * and the oldest outstanding request's timeout. Schedule times come from a
 * generator per connection, so a backlog needs no queue: next_sched is the
 * oldest request not yet sent.
 *
 * Cost: the clock is read once per wake-up (every completion and send of that
 * wake-up carries that time), a wake-up sends every request due on every
 * connection of the thread, a connection's due requests go out in one send
 * (all requests are the same bytes: they are written from `pattern`, the
 * request repeated), one recv per readiness reads every response in it, and
 * epoll_ctl is called only when a send blocks or unblocks. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "deadline_heap.h"
#include "http_response.h"
#include "mono_clock.h"
#include "open_loop_worker.h"
#include "source_connect.h"

#define EVENTS_MAX 256
#define READ_BUF (64 * 1024)
#define RECONNECT_BACKOFF_NS 10000000ull /* after a failed connect, so a refused port is not spun on */
#define LATE_NS 1000000ull

enum conn_state { CONNECTING, OPEN, WAITING };

struct outstanding {
    uint64_t sched, sent;
};

struct conn {
    struct heap_node node; /* first: the heap hands back node pointers */
    int fd;
    enum conn_state state;
    uint32_t index;
    uint32_t first, count;    /* outstanding: ring[first], ... ring[first + count - 1] (mod pipeline) */
    struct outstanding *ring; /* `pipeline` slots */
    uint64_t next_sched;      /* the oldest request not yet sent */
    uint64_t room_since;      /* it could take a request since then: later sends are the client's lateness */
    uint64_t k;               /* fixed arrivals: the next request's number */
    uint64_t rng;
    size_t unwritten;  /* bytes of the sent requests not written yet */
    size_t pattern_at; /* where in the request the next byte to write is */
    bool wants_out;    /* EPOLLOUT is asked for (a send blocked) */
    struct http_response resp;
};

struct loop {
    struct ol_worker *w;
    struct ol_stats *s;
    int ep;
    struct deadline_heap heap;
    struct conn *conns;
    struct outstanding *rings;
    size_t n;
    uint32_t pipeline;
    uint64_t t0, window_start, end, timeout_ns;
    double interval_ns; /* per connection: C / R seconds */
    char *pattern;      /* the request `pipeline` times over */
    char *buf;
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Advances next_sched to the connection's following request. */
static void schedule_next(struct loop *l, struct conn *c)
{
    if (l->w->o->arrival == ARRIVAL_FIXED) {
        double offset = (double)c->index * l->interval_ns / (double)l->w->o->connections;
        c->next_sched = l->t0 + (uint64_t)(offset + (double)c->k++ * l->interval_ns);
    } else {
        double u = ((double)(splitmix64(&c->rng) >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
        c->next_sched += (uint64_t)(-log(u) * l->interval_ns);
    }
}

static bool in_window(const struct loop *l, uint64_t sched) { return sched >= l->window_start && sched < l->end; }

static unsigned second_of(const struct loop *l, uint64_t t)
{
    uint64_t s = t > l->window_start ? (t - l->window_start) / NS_PER_S : 0;
    return s < l->w->seconds ? (unsigned)s : l->w->seconds - 1;
}

static struct outstanding *oldest(struct conn *c) { return &c->ring[c->first]; }

static void set_events(struct loop *l, struct conn *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    (void)epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void want_out(struct loop *l, struct conn *c, bool on)
{
    if (c->wants_out != on)
        set_events(l, c, on ? EPOLLIN | EPOLLOUT : EPOLLIN);
    c->wants_out = on;
}

/* The connection's one deadline: its next send while it has room, its oldest request's timeout. */
static void rearm(struct loop *l, struct conn *c)
{
    uint64_t key = c->count < l->pipeline ? c->next_sched : UINT64_MAX;
    if (c->count > 0)
        key = min_u64(key, oldest(c)->sent + l->timeout_ns);
    heap_set(&l->heap, &c->node, key);
}

static void start_connect(struct loop *l, struct conn *c, uint64_t now);

/* Closes the connection after a failure counted by the caller (its outstanding requests are lost);
 * reconnects after `delay`. */
static void fail(struct loop *l, struct conn *c, uint64_t now, uint64_t delay)
{
    for (uint32_t i = 0; i < c->count; i++)
        if (in_window(l, c->ring[(c->first + i) % l->pipeline].sched))
            l->s->lost++;
    c->first = c->count = 0;
    c->unwritten = c->pattern_at = 0;
    c->wants_out = false;
    close(c->fd);
    c->fd = -1;
    l->s->reconnects++;
    if (delay == 0) {
        start_connect(l, c, now);
    } else {
        c->state = WAITING;
        heap_set(&l->heap, &c->node, now + delay);
    }
}

/* Writes what is left of the sent requests; false if the connection failed. */
static bool flush(struct loop *l, struct conn *c, uint64_t now)
{
    while (c->unwritten > 0) {
        /* At most what the pattern holds from here (more only if a server answered a request
         * before it was whole: the rest is written in another round). */
        size_t room = l->pipeline * l->w->request_len - c->pattern_at;
        ssize_t n = send(c->fd, l->pattern + c->pattern_at, c->unwritten < room ? c->unwritten : room, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                want_out(l, c, true);
                return true;
            }
            if (errno == EINTR)
                continue;
            l->s->io_errors[errno_slot(errno)]++;
            fail(l, c, now, 0);
            return false;
        }
        c->unwritten -= (size_t)n;
        c->pattern_at = (c->pattern_at + (size_t)n) % l->w->request_len;
    }
    want_out(l, c, false);
    return true;
}

/* Sends every request due by `now` that the pipeline has room for, in one write; false if the
 * connection failed. */
static bool send_due(struct loop *l, struct conn *c, uint64_t now)
{
    uint32_t added = 0;
    while (c->count < l->pipeline && c->next_sched <= now) {
        struct outstanding *o = &c->ring[(c->first + c->count) % l->pipeline];
        o->sched = c->next_sched;
        o->sent = now;
        c->count++;
        added++;
        schedule_next(l, c);
        if (in_window(l, o->sched)) {
            l->s->sent++;
            l->s->sent_per_s[second_of(l, now)]++;
            if (o->sched >= c->room_since) {
                lh_record(&l->s->send_lag, now - o->sched);
                if (now - o->sched > LATE_NS)
                    l->s->late_sends++;
            }
        }
    }
    if (added == 0)
        return true;
    c->unwritten += (size_t)added * l->w->request_len;
    return c->wants_out || flush(l, c, now); /* a blocked send is finished on EPOLLOUT */
}

/* The connection can send: from its connect, or from a reconnect. */
static void open_conn(struct loop *l, struct conn *c, uint64_t now)
{
    c->state = OPEN;
    c->room_since = now;
    http_response_init(&c->resp);
    if (send_due(l, c, now))
        rearm(l, c);
}

static void start_connect(struct loop *l, struct conn *c, uint64_t now)
{
    struct connect_attempt a = connect_start(&l->w->server, l->w->o->sources, c->index);
    if (a.fd < 0) {
        l->s->connect_errors[errno_slot(a.err)]++;
        c->state = WAITING;
        heap_set(&l->heap, &c->node, now + RECONNECT_BACKOFF_NS);
        return;
    }
    c->fd = a.fd;
    struct epoll_event ev = {.events = a.connected ? EPOLLIN : EPOLLIN | EPOLLOUT, .data.ptr = c};
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
        l->s->connect_errors[errno_slot(errno)]++;
        close(c->fd);
        c->fd = -1;
        c->state = WAITING;
        heap_set(&l->heap, &c->node, now + RECONNECT_BACKOFF_NS);
        return;
    }
    if (a.connected) {
        open_conn(l, c, now);
    } else {
        c->state = CONNECTING;
        heap_set(&l->heap, &c->node, now + l->timeout_ns);
    }
}

/* The oldest outstanding request's response is complete; false if the connection was reopened
 * (the server said it would close: the requests pipelined behind it are lost). */
static bool complete(struct loop *l, struct conn *c, uint64_t now)
{
    struct outstanding done = *oldest(c);
    c->first = (c->first + 1) % l->pipeline;
    if (c->count-- == l->pipeline)
        c->room_since = now;
    if (in_window(l, done.sched)) {
        if (c->resp.status >= 200 && c->resp.status < 300) {
            l->s->completed++;
            l->s->completed_per_s[second_of(l, now)]++;
            lh_record(&l->s->hist, now - done.sched);
        } else {
            l->s->non_2xx++;
        }
    } else if (done.sched < l->window_start) {
        l->s->warmup_completed++;
    }
    if (c->resp.connection_close) {
        l->s->closed_by_server++;
        fail(l, c, now, 0);
        return false;
    }
    http_response_init(&c->resp);
    return true;
}

/* Bytes from the server: responses (several in one read are fine), or a failure. Then the
 * requests that waited for room are sent. */
static void readable(struct loop *l, struct conn *c, uint64_t now)
{
    ssize_t n = recv(c->fd, l->buf, READ_BUF, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        l->s->io_errors[errno_slot(errno)]++;
        fail(l, c, now, 0);
        return;
    }
    if (n == 0) {
        l->s->io_errors[0]++; /* eof */
        fail(l, c, now, 0);
        return;
    }
    size_t at = 0;
    while (at < (size_t)n) {
        if (c->count == 0) {
            l->s->unsolicited++;
            fail(l, c, now, 0);
            return;
        }
        size_t used;
        enum http_progress p = http_response_feed(&c->resp, l->buf + at, (size_t)n - at, &used);
        at += used;
        if (p == HTTP_BAD) {
            l->s->bad_responses++;
            fail(l, c, now, 0);
            return;
        }
        if (p == HTTP_DONE && !complete(l, c, now))
            return; /* what followed belonged to the closed connection */
    }
    if (send_due(l, c, now))
        rearm(l, c);
}

static void connected(struct loop *l, struct conn *c, uint64_t now)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err != 0) {
        l->s->connect_errors[errno_slot(err)]++;
        fail(l, c, now, RECONNECT_BACKOFF_NS);
        return;
    }
    set_events(l, c, EPOLLIN);
    open_conn(l, c, now);
}

static void deadline(struct loop *l, struct conn *c, uint64_t now)
{
    switch (c->state) {
    case OPEN:
        if (c->count > 0 && oldest(c)->sent + l->timeout_ns <= now) {
            l->s->timeouts++;
            fail(l, c, now, 0);
        } else if (send_due(l, c, now)) {
            rearm(l, c);
        }
        break;
    case CONNECTING:
        l->s->connect_errors[errno_slot(ETIMEDOUT)]++;
        fail(l, c, now, 0);
        break;
    case WAITING: start_connect(l, c, now); break;
    }
}

/* What is left when the window closes: the outstanding requests and the scheduled ones not sent. */
static void count_leftovers(struct loop *l)
{
    for (size_t i = 0; i < l->n; i++) {
        struct conn *c = &l->conns[i];
        for (uint32_t j = 0; j < c->count; j++)
            if (in_window(l, c->ring[(c->first + j) % l->pipeline].sched))
                l->s->outstanding_at_end++;
        while (c->next_sched < l->end) {
            if (c->next_sched >= l->window_start)
                l->s->unsent_at_end++;
            schedule_next(l, c);
        }
        if (c->fd >= 0)
            close(c->fd);
    }
    l->s->scheduled = l->s->sent + l->s->unsent_at_end;
}

/* One clock reading per wake-up for what it brought (the responses' end, the sends), one more
 * before sleeping so that the sleep ends on the next deadline, not later by the work done. */
static void run_loop(struct loop *l)
{
    struct epoll_event events[EVENTS_MAX];
    uint64_t now = now_ns();
    while (now < l->end) {
        struct heap_node *top;
        while ((top = heap_top(&l->heap)) != NULL && top->key <= now)
            deadline(l, (struct conn *)top, now);
        now = now_ns();
        top = heap_top(&l->heap);
        if (top != NULL && top->key <= now)
            continue; /* due while the others were sent */
        uint64_t wake = top != NULL && top->key < l->end ? top->key : l->end;
        uint64_t wait = wake > now ? wake - now : 0;
        struct timespec ts = {.tv_sec = (time_t)(wait / NS_PER_S), .tv_nsec = (long)(wait % NS_PER_S)};
        int n = epoll_pwait2(l->ep, events, EVENTS_MAX, &ts, NULL);
        now = now_ns();
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (c->fd < 0)
                continue;
            if (c->state == CONNECTING) {
                connected(l, c, now);
            } else if (c->state == OPEN) {
                if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                    readable(l, c, now);
                if (c->fd >= 0 && c->state == OPEN && c->wants_out && (events[i].events & EPOLLOUT))
                    (void)flush(l, c, now);
            }
        }
    }
}

/* Allocates the loop's parts; an errno on failure. */
static int setup(struct loop *l, struct ol_worker *w)
{
    const struct ol_options *o = w->o;
    l->w = w;
    l->s = &w->stats;
    l->n = (size_t)((o->connections - w->index + o->threads - 1) / o->threads);
    l->pipeline = (uint32_t)o->pipeline;
    l->interval_ns = (double)o->connections / o->rate * 1e9;
    l->timeout_ns = (uint64_t)(o->timeout_s * 1e9);
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    l->conns = calloc(l->n, sizeof *l->conns);
    l->rings = calloc(l->n * l->pipeline, sizeof *l->rings);
    l->heap.items = calloc(l->n, sizeof *l->heap.items);
    l->pattern = malloc(l->pipeline * w->request_len);
    l->buf = malloc(READ_BUF);
    w->stats.sent_per_s = calloc(w->seconds, sizeof(uint64_t));
    w->stats.completed_per_s = calloc(w->seconds, sizeof(uint64_t));
    lh_init(&w->stats.hist);
    lh_init(&w->stats.send_lag);
    if (l->ep < 0)
        return errno;
    if (o->timer_slack_ns > 0 && prctl(PR_SET_TIMERSLACK, (unsigned long)o->timer_slack_ns, 0, 0, 0) != 0)
        return errno;
    w->timer_slack_ns = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (!l->conns || !l->rings || !l->heap.items || !l->pattern || !l->buf || !w->stats.sent_per_s ||
        !w->stats.completed_per_s)
        return ENOMEM;
    for (uint32_t i = 0; i < l->pipeline; i++)
        memcpy(l->pattern + i * w->request_len, w->request, w->request_len);
    for (size_t i = 0; i < l->n; i++) {
        struct conn *c = &l->conns[i];
        heap_node_init(&c->node);
        c->fd = -1;
        c->ring = l->rings + i * l->pipeline;
        c->index = (uint32_t)(w->index + (long)i * o->threads);
        c->rng = o->seed * 0x100000001b3ull + c->index;
        c->resp.allow_chunked = true;
    }
    return 0;
}

void *ol_worker_run(void *arg)
{
    struct ol_worker *w = arg;
    struct loop l = {0};
    w->failed = setup(&l, w);
    if (w->failed == 0)
        for (size_t i = 0; i < l.n; i++) {
            l.conns[i].next_sched = UINT64_MAX; /* nothing is due before t0 */
            start_connect(&l, &l.conns[i], now_ns());
        }
    pthread_barrier_wait(w->connected);
    pthread_barrier_wait(w->started);
    if (w->failed == 0) {
        l.t0 = *w->t0;
        l.window_start = l.t0 + (uint64_t)(w->o->warmup_s * 1e9);
        l.end = l.window_start + (uint64_t)(w->o->duration_s * 1e9);
        for (size_t i = 0; i < l.n; i++) {
            struct conn *c = &l.conns[i];
            c->next_sched = l.t0;
            schedule_next(&l, c); /* fixed: its offset; poisson: a first gap */
            if (c->state == OPEN)
                rearm(&l, c);
        }
        run_loop(&l);
        count_leftovers(&l);
    }
    if (l.ep >= 0)
        close(l.ep);
    free(l.conns);
    free(l.rings);
    free(l.heap.items);
    free(l.pattern);
    free(l.buf);
    return NULL;
}

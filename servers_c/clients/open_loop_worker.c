/* One open_loop thread; see open_loop_worker.h.
 *
 * Each connection is in one state, with at most one deadline in the heap:
 * CONNECTING (deadline: the connect timeout), IDLE (deadline: its next
 * scheduled send), IN_FLIGHT (deadline: the response timeout; the requests
 * scheduled meanwhile are sent when the response is complete, their
 * latencies counted from their own schedule times), or WAITING to reconnect.
 * Schedule times come from a generator per connection, so a backlog needs no
 * queue: next_sched is the oldest request not yet sent. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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

enum conn_state { CONNECTING, IDLE, IN_FLIGHT, WAITING };

struct conn {
    struct heap_node node; /* first: the heap hands back node pointers */
    int fd;
    enum conn_state state;
    uint32_t index;
    uint64_t next_sched;     /* the oldest request not yet sent */
    uint64_t inflight_sched; /* the outstanding request's */
    uint64_t k;              /* fixed arrivals: the next request's number */
    uint64_t rng;
    size_t written; /* of the outstanding request */
    struct http_response resp;
};

struct loop {
    struct ol_worker *w;
    struct ol_stats *s;
    int ep;
    struct deadline_heap heap;
    struct conn *conns;
    size_t n;
    uint64_t t0, window_start, end;
    double interval_ns; /* per connection: C / R seconds */
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

static void set_events(struct loop *l, struct conn *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    (void)epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void start_connect(struct loop *l, struct conn *c, uint64_t now);

/* Closes the connection after a failure counted by the caller; reconnects after `delay`. */
static void fail(struct loop *l, struct conn *c, uint64_t now, uint64_t delay)
{
    if (c->state == IN_FLIGHT && in_window(l, c->inflight_sched))
        l->s->lost++;
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

/* Writes what is left of the outstanding request; false if the connection failed. */
static bool write_request(struct loop *l, struct conn *c, uint64_t now)
{
    while (c->written < l->w->request_len) {
        ssize_t n = send(c->fd, l->w->request + c->written, l->w->request_len - c->written, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                set_events(l, c, EPOLLIN | EPOLLOUT);
                return true;
            }
            if (errno == EINTR)
                continue;
            l->s->io_errors[errno_slot(errno)]++;
            fail(l, c, now, 0);
            return false;
        }
        c->written += (size_t)n;
        if (c->written == l->w->request_len && n != (ssize_t)l->w->request_len)
            set_events(l, c, EPOLLIN); /* it had waited for EPOLLOUT */
    }
    return true;
}

/* Sends the oldest scheduled request (next_sched <= now). */
static void send_next(struct loop *l, struct conn *c, uint64_t now, bool on_time)
{
    c->inflight_sched = c->next_sched;
    schedule_next(l, c);
    if (in_window(l, c->inflight_sched)) {
        l->s->sent++;
        l->w->stats.sent_per_s[second_of(l, now)]++;
        if (on_time && now - c->inflight_sched > LATE_NS)
            l->s->late_sends++;
    }
    c->state = IN_FLIGHT;
    c->written = 0;
    http_response_init(&c->resp);
    heap_set(&l->heap, &c->node, now + (uint64_t)(l->w->o->timeout_s * 1e9));
    (void)write_request(l, c, now);
}

/* An idle connection: send now if a request is due (the backlog), else wait for the next one. */
static void idle(struct loop *l, struct conn *c, uint64_t now)
{
    c->state = IDLE;
    if (c->next_sched <= now)
        send_next(l, c, now, false);
    else
        heap_set(&l->heap, &c->node, c->next_sched);
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
        idle(l, c, now);
    } else {
        c->state = CONNECTING;
        heap_set(&l->heap, &c->node, now + (uint64_t)(l->w->o->timeout_s * 1e9));
    }
}

/* A complete response; false if the connection was reopened (the server said it would close). */
static bool complete(struct loop *l, struct conn *c, uint64_t now)
{
    if (in_window(l, c->inflight_sched)) {
        if (c->resp.status >= 200 && c->resp.status < 300) {
            l->s->completed++;
            l->s->completed_per_s[second_of(l, now)]++;
            lh_record(&l->s->hist, now - c->inflight_sched);
        } else {
            l->s->non_2xx++;
        }
    } else if (c->inflight_sched < l->window_start) {
        l->s->warmup_completed++;
    }
    if (c->resp.connection_close) {
        l->s->closed_by_server++;
        c->state = IDLE; /* nothing is lost */
        fail(l, c, now, 0);
        return false;
    }
    idle(l, c, now);
    return true;
}

/* Bytes from the server: responses (several in one read are fine), or a failure. */
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
        if (c->state != IN_FLIGHT) {
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
    idle(l, c, now);
}

static void deadline(struct loop *l, struct conn *c, uint64_t now)
{
    switch (c->state) {
    case IDLE: send_next(l, c, now, true); break;
    case IN_FLIGHT:
        l->s->timeouts++;
        fail(l, c, now, 0);
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
        if (c->state == IN_FLIGHT && in_window(l, c->inflight_sched))
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

static void run_loop(struct loop *l)
{
    struct epoll_event events[EVENTS_MAX];
    for (;;) {
        uint64_t now = now_ns();
        if (now >= l->end)
            break;
        struct heap_node *top;
        while ((top = heap_top(&l->heap)) != NULL && top->key <= now)
            deadline(l, (struct conn *)top, now);
        top = heap_top(&l->heap);
        uint64_t wake = top != NULL && top->key < l->end ? top->key : l->end;
        uint64_t wait = wake > now ? wake - now : 0;
        struct timespec ts = {.tv_sec = (time_t)(wait / NS_PER_S), .tv_nsec = (long)(wait % NS_PER_S)};
        int n = epoll_pwait2(l->ep, events, EVENTS_MAX, &ts, NULL);
        if (n <= 0)
            continue;
        now = now_ns();
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (c->fd < 0)
                continue;
            if (c->state == CONNECTING) {
                connected(l, c, now);
            } else {
                if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                    readable(l, c, now);
                if (c->fd >= 0 && c->state == IN_FLIGHT && (events[i].events & EPOLLOUT))
                    (void)write_request(l, c, now);
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
    l->interval_ns = (double)o->connections / o->rate * 1e9;
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    l->conns = calloc(l->n, sizeof *l->conns);
    l->heap.items = calloc(l->n, sizeof *l->heap.items);
    l->buf = malloc(READ_BUF);
    w->stats.sent_per_s = calloc(w->seconds, sizeof(uint64_t));
    w->stats.completed_per_s = calloc(w->seconds, sizeof(uint64_t));
    lh_init(&w->stats.hist);
    if (l->ep < 0)
        return errno;
    if (!l->conns || !l->heap.items || !l->buf || !w->stats.sent_per_s || !w->stats.completed_per_s)
        return ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        struct conn *c = &l->conns[i];
        heap_node_init(&c->node);
        c->fd = -1;
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
            if (c->state == IDLE)
                heap_set(&l.heap, &c->node, c->next_sched);
        }
        run_loop(&l);
        count_leftovers(&l);
    }
    if (l.ep >= 0)
        close(l.ep);
    free(l.conns);
    free(l.heap.items);
    free(l.buf);
    return NULL;
}

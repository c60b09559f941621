/* idle_holder: holds K idle keep-alive HTTP/1.1 connections open to a server
 * beside the active load of a trial.
 *
 * Why: an event loop that scans every connection it watches (poll) pays for
 * idle connections on every call, one that is told only of ready ones (epoll)
 * does not; to see it, a study measures a server while K connections sit idle.
 * An idle connection the server does not know about measures nothing, so each
 * one sends one complete GET and reads its whole response first: a server
 * that takes a connection up only with its first request, and a thread-per-
 * connection server (one thread each), then hold it like any keep-alive
 * client between requests.
 *
 * How: one thread, one epoll instance over every connection and a signalfd.
 * Opening: at most --in-flight connections are connecting or awaiting their
 * first response at once (so the server's listen backlog is not overrun),
 * each within --connect-timeout and then --response-timeout; connection i
 * comes from 127.0.0.(1 + i mod --sources) (source_connect.h). Holding: once
 * every connection has answered, 'holding K connections' on stdout tells a
 * runner to start the active load; the holder then only watches: a connection
 * the server closes (EOF or reset) is counted with its time and never
 * reopened. The hold ends after --duration or on SIGINT/SIGTERM, and one JSON
 * object (idle_report.h) goes to stdout. If the opening does not end with all
 * K held, there is no hold: the JSON says why, at once.
 *
 * Files: idle_holder.c (this), idle_options.[ch] (the command line and exit
 * statuses), http_response.[ch] (reading the first response), idle_report.[ch]
 * (the tally and the JSON); shared with echo_client: cli_flags, errno_counts,
 * source_connect, open_files, mono_clock. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli_flags.h"
#include "errno_counts.h"
#include "http_response.h"
#include "idle_options.h"
#include "idle_report.h"
#include "mono_clock.h"
#include "open_files.h"
#include "source_connect.h"

#define EVENT_BATCH 256
#define READ_CHUNK 16384
#define SIGNAL_TAG UINT64_MAX /* the epoll tag of the signalfd; connections are tagged by index */
#define MAX_WAIT_NS 100000000ull

enum held_state { H_UNOPENED, H_CONNECTING, H_SENDING, H_READING, H_IDLE, H_DONE };

struct held {
    int fd;
    uint8_t state;
    int32_t slot; /* in flight: its slot, else -1 */
};

/* A connection on its way in: connecting, sending its request or reading its response. */
struct slot {
    uint32_t conn;
    uint64_t deadline_ns;
    size_t sent;
    struct http_response response;
};

struct holder {
    const struct idle_options *o;
    struct idle_tally *t;
    struct sockaddr_in server;
    int epoll_fd, signal_fd;
    struct held *conns;
    size_t next; /* conns[0, next) have been started */
    size_t idle; /* held idle now */
    struct slot *slots;
    uint32_t *free_slots;
    size_t free_n;
    char request[1200];
    size_t request_len;
    char buf[READ_CHUNK];
    bool signalled;
};

/* ---- the way in ---------------------------------------------------------- */

static void release(struct holder *h, struct held *c)
{
    if (c->slot >= 0)
        h->free_slots[h->free_n++] = (uint32_t)c->slot;
    c->slot = -1;
}

/* Ends a connection that did not make it to idle, or that the server closed. */
static void finish(struct holder *h, struct held *c)
{
    release(h, c);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->state == H_IDLE)
        h->idle--;
    c->state = H_DONE;
}

static void connect_failed(struct holder *h, struct held *c, int err)
{
    h->t->connect_failures[errno_slot(err)]++;
    finish(h, c);
}

static void request_error(struct holder *h, struct held *c, int err)
{
    h->t->request_errors[errno_slot(err)]++;
    finish(h, c);
}

static void request_failed(struct holder *h, struct held *c, enum request_failure why)
{
    h->t->request_failures[why]++;
    finish(h, c);
}

static bool watch(struct holder *h, struct held *c, int op, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u64 = (uint64_t)(c - h->conns)};
    return epoll_ctl(h->epoll_fd, op, c->fd, &ev) == 0;
}

static void send_request(struct holder *h, struct held *c)
{
    struct slot *s = &h->slots[c->slot];
    while (s->sent < h->request_len) {
        ssize_t n = send(c->fd, h->request + s->sent, h->request_len - s->sent, MSG_NOSIGNAL);
        if (n > 0) {
            s->sent += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return; /* EPOLLOUT comes back */
        } else {
            request_error(h, c, n < 0 ? errno : EIO);
            return;
        }
    }
    c->state = H_READING;
    if (!watch(h, c, EPOLL_CTL_MOD, EPOLLIN | EPOLLRDHUP))
        request_error(h, c, errno);
}

static void connected(struct holder *h, struct held *c, uint64_t now)
{
    h->t->connected++;
    c->state = H_SENDING;
    struct slot *s = &h->slots[c->slot];
    s->deadline_ns = now + (uint64_t)(h->o->response_timeout_s * 1e9);
    s->sent = 0;
    http_response_init(&s->response);
    send_request(h, c);
}

static void open_next(struct holder *h, uint64_t now)
{
    struct held *c = &h->conns[h->next++];
    h->t->attempted++;
    struct connect_attempt a = connect_start(&h->server, h->o->sources, (uint32_t)(c - h->conns));
    if (a.fd < 0) {
        connect_failed(h, c, a.err);
        return;
    }
    c->fd = a.fd;
    c->slot = (int32_t)h->free_slots[--h->free_n];
    struct slot *s = &h->slots[c->slot];
    s->conn = (uint32_t)(c - h->conns);
    s->deadline_ns = now + (uint64_t)(h->o->connect_timeout_s * 1e9);
    c->state = H_CONNECTING;
    if (!watch(h, c, EPOLL_CTL_ADD, EPOLLOUT)) {
        connect_failed(h, c, errno);
        return;
    }
    if (a.connected)
        connected(h, c, now);
}

/* The first response's bytes: the connection is idle once the whole response is in. */
static void read_response(struct holder *h, struct held *c)
{
    struct slot *s = &h->slots[c->slot];
    for (;;) {
        ssize_t n = recv(c->fd, h->buf, sizeof h->buf, 0);
        if (n == 0) {
            request_error(h, c, 0);
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                request_error(h, c, errno);
            return;
        }
        size_t used;
        enum http_progress p = http_response_feed(&s->response, h->buf, (size_t)n, &used);
        if (p == HTTP_MORE)
            continue;
        if (p == HTTP_BAD) {
            request_failed(h, c, REQ_BAD_RESPONSE);
        } else if (used < (size_t)n) {
            request_failed(h, c, REQ_EXTRA_BYTES);
        } else if (s->response.status < 200 || s->response.status > 299) {
            h->t->request_status[s->response.status]++;
            finish(h, c);
        } else if (s->response.connection_close) {
            request_failed(h, c, REQ_CONNECTION_CLOSE);
        } else {
            release(h, c);
            c->state = H_IDLE;
            h->t->established++;
            h->idle++;
        }
        return;
    }
}

/* ---- the hold --------------------------------------------------------------- */

/* An idle connection became readable: the server closed it, or sent what nobody asked for. */
static void on_idle_readable(struct holder *h, struct held *c)
{
    for (;;) {
        ssize_t n = recv(c->fd, h->buf, sizeof h->buf, 0);
        if (n > 0) {
            h->t->unexpected_bytes += (uint64_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        tally_closed(h->t, n == 0 ? 0 : errno, now_ns());
        finish(h, c);
        return;
    }
}

static void on_event(struct holder *h, struct held *c, uint32_t events, uint64_t now)
{
    switch ((enum held_state)c->state) {
    case H_CONNECTING: {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0)
            connect_failed(h, c, err);
        else if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            connected(h, c, now);
        return;
    }
    case H_SENDING: send_request(h, c); return;
    case H_READING: read_response(h, c); return;
    case H_IDLE: on_idle_readable(h, c); return;
    case H_UNOPENED:
    case H_DONE: return;
    }
}

/* Fails what took too long; returns the next deadline (UINT64_MAX: none). */
static uint64_t expire(struct holder *h, uint64_t now)
{
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < (size_t)h->o->in_flight; i++) {
        struct slot *s = &h->slots[i];
        struct held *c = &h->conns[s->conn];
        if (c->slot != (int32_t)i)
            continue; /* a free slot */
        if (s->deadline_ns > now) {
            next = min_u64(next, s->deadline_ns);
        } else if (c->state == H_CONNECTING) {
            connect_failed(h, c, ETIMEDOUT);
        } else {
            request_failed(h, c, REQ_TIMEOUT);
        }
    }
    return next;
}

/* Waits for events until `until` at most; false if the holder itself failed. */
static bool handle_events(struct holder *h, uint64_t until)
{
    struct epoll_event events[EVENT_BATCH];
    uint64_t now = now_ns();
    uint64_t wait = until > now ? min_u64(until - now, MAX_WAIT_NS) : 0;
    int n = epoll_wait(h->epoll_fd, events, EVENT_BATCH, (int)((wait + 999999) / 1000000));
    if (n < 0)
        return errno == EINTR;
    now = now_ns();
    for (int i = 0; i < n; i++) {
        if (events[i].data.u64 == SIGNAL_TAG) {
            struct signalfd_siginfo info;
            while (read(h->signal_fd, &info, sizeof info) == (ssize_t)sizeof info)
                h->signalled = true;
            continue;
        }
        on_event(h, &h->conns[events[i].data.u64], events[i].events, now);
    }
    return true;
}

/* Opens all K within --in-flight; false if the holder itself failed. */
static bool open_all(struct holder *h)
{
    size_t k = (size_t)h->o->connections;
    for (;;) {
        uint64_t now = now_ns();
        while (h->next < k && h->free_n > 0 && !h->signalled)
            open_next(h, now);
        uint64_t next = expire(h, now);
        if (h->signalled || (h->next == k && h->free_n == (size_t)h->o->in_flight))
            return true;
        if (!handle_events(h, next))
            return false;
    }
}

static bool hold(struct holder *h)
{
    uint64_t end = h->o->duration_s > 0 ? h->t->ready_ns + (uint64_t)(h->o->duration_s * 1e9) : UINT64_MAX;
    while (!h->signalled && now_ns() < end)
        if (!handle_events(h, end))
            return false;
    return true;
}

/* ---- set-up ----------------------------------------------------------------- */

/* The open files K connections need, or a refusal naming --connections. */
static void fit_open_files(const struct idle_options *o, struct idle_tally *t)
{
    rlim_t need = (rlim_t)o->connections + IDLE_RESERVED_FDS;
    char value[32], problem[200];
    snprintf(value, sizeof value, "%ld", o->connections);
    if (!open_files_raise(need, &t->nofile_soft, &t->nofile_hard)) {
        snprintf(problem, sizeof problem, "cannot be checked against the open-file limit: %s", strerror(errno));
        cli_bad_usage("--connections", problem, value);
    }
    if (t->nofile_soft != RLIM_INFINITY && t->nofile_soft < need) {
        snprintf(problem, sizeof problem,
                 "needs %llu open files (the connections and %d for the holder) but the limit is %llu (hard %llu)",
                 (unsigned long long)need, IDLE_RESERVED_FDS, (unsigned long long)t->nofile_soft,
                 (unsigned long long)t->nofile_hard);
        cli_bad_usage("--connections", problem, value);
    }
}

static bool set_up(struct holder *h)
{
    const struct idle_options *o = h->o;
    size_t k = (size_t)o->connections, n = (size_t)o->in_flight;
    h->request_len = (size_t)snprintf(h->request, sizeof h->request,
                                      "GET %s HTTP/1.1\r\nHost: %s:%ld\r\nUser-Agent: archbench-idle-holder\r\n\r\n",
                                      o->path, o->host, o->port);
    h->conns = calloc(k, sizeof h->conns[0]);
    h->slots = calloc(n, sizeof h->slots[0]);
    h->free_slots = calloc(n, sizeof h->free_slots[0]);
    h->t->per_second = calloc(k, sizeof h->t->per_second[0]);
    h->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    h->signal_fd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
    if (h->conns == NULL || h->slots == NULL || h->free_slots == NULL || h->t->per_second == NULL || h->epoll_fd < 0 ||
        h->signal_fd < 0)
        return false;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = SIGNAL_TAG};
    if (epoll_ctl(h->epoll_fd, EPOLL_CTL_ADD, h->signal_fd, &ev) != 0)
        return false;
    for (size_t i = 0; i < k; i++)
        h->conns[i] = (struct held){.fd = -1, .state = H_UNOPENED, .slot = -1};
    for (size_t i = 0; i < n; i++) /* handed out from the top: slot 0 first */
        h->free_slots[i] = (uint32_t)(n - 1 - i);
    h->free_n = n;
    return true;
}

static void tear_down(struct holder *h)
{
    for (size_t i = 0; h->conns != NULL && i < (size_t)h->o->connections; i++)
        if (h->conns[i].fd >= 0)
            close(h->conns[i].fd);
    if (h->epoll_fd >= 0)
        close(h->epoll_fd);
    if (h->signal_fd >= 0)
        close(h->signal_fd);
    free(h->conns);
    free(h->slots);
    free(h->free_slots);
    free(h->t->per_second);
}

static int exit_status(const struct idle_options *o, const struct idle_tally *t)
{
    if (t->established < (uint64_t)o->connections)
        return IDLE_EXIT_NOT_ESTABLISHED;
    if (t->closed_total > 0)
        return IDLE_EXIT_CLOSED;
    return t->ready_ns == 0 ? IDLE_EXIT_NOT_ESTABLISHED : IDLE_EXIT_OK; /* stopped just before the hold */
}

int main(int argc, char **argv)
{
    struct idle_options o;
    parse_idle_options(argc, argv, &o);
    static struct idle_tally t; /* static: large, and zeroed */
    static struct holder h;
    h.o = &o;
    h.t = &t;
    h.epoll_fd = h.signal_fd = -1;
    h.server.sin_family = AF_INET;
    h.server.sin_port = htons((uint16_t)o.port);
    if (inet_pton(AF_INET, o.host, &h.server.sin_addr) != 1)
        cli_bad_usage("--host", "expects an IPv4 address", o.host);
    fit_open_files(&o, &t);
    signal(SIGPIPE, SIG_IGN);
    if (!set_up(&h)) {
        fprintf(stderr, "idle_holder: cannot set up: %s\n", strerror(errno));
        tear_down(&h);
        return IDLE_EXIT_ERROR;
    }
    fprintf(stderr, "idle_holder: %s:%ld, %ld connections (%ld source addresses), at most %ld in flight\n", o.host,
            o.port, o.connections, o.sources, o.in_flight);
    t.start_ns = now_ns();
    bool ok = open_all(&h);
    if (ok && h.idle == (size_t)o.connections && !h.signalled) {
        t.ready_ns = now_ns();
        printf("holding %ld connections\n", o.connections);
        fflush(stdout);
        ok = hold(&h);
        t.stopped_by = h.signalled ? "signal" : "duration";
    } else {
        t.stopped_by = h.signalled ? "signal" : "not_established";
    }
    if (!ok) {
        fprintf(stderr, "idle_holder: epoll failed: %s\n", strerror(errno));
        tear_down(&h);
        return IDLE_EXIT_ERROR;
    }
    t.end_ns = now_ns();
    t.interrupted = h.signalled;
    t.open_at_end = h.idle;
    t.exit_status = exit_status(&o, &t);
    fprintf(stderr, "idle_holder: %llu of %ld established, %llu closed by the server, %llu open at the end, exit %d\n",
            (unsigned long long)t.established, o.connections, (unsigned long long)t.closed_total,
            (unsigned long long)t.open_at_end, t.exit_status);
    print_idle_json(&o, &t);
    tear_down(&h);
    return t.exit_status;
}

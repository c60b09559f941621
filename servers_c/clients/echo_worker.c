/* echo_client's workers: each an edge-triggered epoll loop over its own block
 * of connections, opening them (at --connect-rate), writing each its payload
 * stream, verifying every byte that comes back and timing each message, with
 * the deadlines of connects, echoes (--max-conns) and --rate sends. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "echo_client.h"
#include "payload_stream.h"

/* Where a connect failed: socket() itself failing for lack of descriptors is
 * the client's limit, not the server's. */
enum connect_step { IN_SOCKET_CALL, AFTER_SOCKET_CALL };

/* ---- deadlines ------------------------------------------------------------ */

static void fifo_push(struct fifo *f, struct conn *cn)
{
    if (f->tail == f->cap) /* each connection enters once per phase: cannot happen */
        return;
    f->items[f->tail++] = (struct deadline){cn, cn->since_ns};
}

/* Drops stale entries; returns the oldest live one or NULL. */
static struct deadline *fifo_head(struct fifo *f, enum conn_state live)
{
    while (f->head < f->tail) {
        struct deadline *d = &f->items[f->head];
        if (d->conn->state == live && d->conn->since_ns == d->since_ns)
            return d;
        f->head++;
    }
    return NULL;
}

/* --rate: a min-heap of the connections waiting for their next message's due
 * time (next_due_ns), so a loop over 10,000 connections finds the next
 * deadline in O(1) and keeps it in O(log n). */
static void heap_swap(struct conn **heap, size_t a, size_t b)
{
    struct conn *t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
    heap[a]->heap_index = a;
    heap[b]->heap_index = b;
}

static void heap_sift(struct conn **heap, size_t len, size_t i)
{
    while (i > 0 && heap[(i - 1) / 2]->next_due_ns > heap[i]->next_due_ns) {
        heap_swap(heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < len && heap[l]->next_due_ns < heap[m]->next_due_ns)
            m = l;
        if (r < len && heap[r]->next_due_ns < heap[m]->next_due_ns)
            m = r;
        if (m == i)
            return;
        heap_swap(heap, i, m);
        i = m;
    }
}

static void heap_remove(struct worker *w, struct conn *cn)
{
    size_t i = cn->heap_index;
    if (i == SIZE_MAX)
        return;
    cn->heap_index = SIZE_MAX;
    w->heap_len--;
    if (i == w->heap_len)
        return;
    w->heap[i] = w->heap[w->heap_len];
    w->heap[i]->heap_index = i;
    heap_sift(w->heap, w->heap_len, i);
}

/* Inserts the connection, or moves it if it is there already. */
static void heap_set(struct worker *w, struct conn *cn, uint64_t due)
{
    cn->next_due_ns = due;
    if (cn->heap_index == SIZE_MAX) {
        cn->heap_index = w->heap_len;
        w->heap[w->heap_len++] = cn;
    }
    heap_sift(w->heap, w->heap_len, cn->heap_index);
}

/* ---- connections ------------------------------------------------------------ */

static void publish(struct worker *w)
{
    atomic_store_explicit(&w->pub.bytes_sent, w->t.bytes_sent, memory_order_relaxed);
    atomic_store_explicit(&w->pub.bytes_received, w->t.bytes_received, memory_order_relaxed);
    atomic_store_explicit(&w->pub.echoes, w->t.echoes, memory_order_relaxed);
    atomic_store_explicit(&w->pub.connected, w->t.connected, memory_order_relaxed);
    atomic_store_explicit(&w->pub.open, w->t.open, memory_order_relaxed);
    atomic_store_explicit(&w->pub.held, w->t.held, memory_order_relaxed);
}

static void close_conn(struct worker *w, struct conn *cn)
{
    if (cn->state == C_CLOSED || cn->state == C_UNOPENED)
        return;
    if (cn->state == C_CONNECTING)
        w->connecting_n--;
    if (cn->state == C_OPEN || cn->state == C_HELD)
        w->t.open--;
    if (cn->state == C_HELD)
        w->t.held--;
    if (cn->state == C_OPEN && max_conns_mode(w->client) && cn->completed < cn->started)
        w->awaiting_n--;
    w->in_flight_bytes -= cn->started * (uint64_t)w->client->o.size - cn->received;
    heap_remove(w, cn);
    close(cn->fd);
    cn->fd = -1;
    cn->state = C_CLOSED;
}

/* An established connection ended before the client ended it. */
static void closed_early(struct worker *w, struct conn *cn, int err)
{
    struct client *c = w->client;
    w->closed_early[errno_slot(err)]++;
    if (max_conns_mode(c) && !w->sweeping)
        set_stop(c, err == 0 ? STOP_SERVER_CLOSED : STOP_SERVER_ERROR, err);
    close_conn(w, cn);
}

static void connect_failed(struct worker *w, struct conn *cn, int err, enum connect_step step)
{
    struct client *c = w->client;
    w->connect_errors[errno_slot(err)]++;
    if (max_conns_mode(c)) {
        if (step == IN_SOCKET_CALL && (err == EMFILE || err == ENFILE))
            set_stop(c, STOP_CLIENT_FDS, err);
        else
            set_stop(c, err == ETIMEDOUT ? STOP_CONNECT_TIMEOUT : STOP_CONNECT_ERROR, err);
    }
    if (cn->fd >= 0)
        close_conn(w, cn);
    cn->state = C_CLOSED;
}

static void verify_failed(struct worker *w, struct conn *cn, uint64_t offset, int expected, int got)
{
    w->verify_errors++;
    if (!w->first_failure.set)
        w->first_failure = (struct verify_failure){true, cn->id, offset, expected, got, now_ns()};
    if (max_conns_mode(w->client))
        set_stop(w->client, STOP_VERIFY, 0);
    close_conn(w, cn);
}

/* Checks received bytes against the stream; false (connection closed) on a mismatch. */
static bool verify(struct worker *w, struct conn *cn, const unsigned char *bytes, size_t n)
{
    uint64_t outstanding = cn->sent - cn->received;
    size_t checked = n < outstanding ? n : (size_t)outstanding;
    stream_fill(cn->key, cn->received, w->expect_buf, checked);
    if (memcmp(bytes, w->expect_buf, checked) != 0) {
        size_t i = 0;
        while (bytes[i] == w->expect_buf[i])
            i++;
        verify_failed(w, cn, cn->received + i, w->expect_buf[i], bytes[i]);
        return false;
    }
    if (checked < n) { /* more came back than was ever sent */
        verify_failed(w, cn, cn->sent, -1, bytes[checked]);
        return false;
    }
    cn->received += n;
    w->in_flight_bytes -= n;
    w->t.bytes_received += n;
    return true;
}

static uint64_t *due_slot(struct worker *w, const struct conn *cn, uint64_t message)
{
    size_t local = (size_t)(cn - w->conns);
    return &w->due_ns[local * (size_t)w->client->o.depth + (size_t)(message % (uint64_t)w->client->o.depth)];
}

static uint64_t rate_due(const struct client *c, const struct conn *cn, uint64_t message)
{
    return cn->schedule_ns + (uint64_t)((double)message * 1e9 / c->o.rate);
}

static void begin_message(struct worker *w, struct conn *cn, uint64_t due)
{
    *due_slot(w, cn, cn->started) = due;
    cn->started++;
    w->in_flight_bytes += (uint64_t)w->client->o.size;
}

/* Throughput mode: begins every message that is due and has room, until the
 * window ends (after it, only messages already begun are finished). */
static void begin_due_messages(struct worker *w, struct conn *cn, uint64_t now)
{
    struct client *c = w->client;
    uint64_t end = atomic_load_explicit(&c->end_ns, memory_order_relaxed);
    if (now >= end)
        return;
    while (cn->started - cn->completed < (uint64_t)c->o.depth) {
        uint64_t due = c->o.rate > 0 ? rate_due(c, cn, cn->started) : now;
        if (due >= end)
            return;
        if (due > now) { /* wait for it; completions do not make it come sooner */
            heap_set(w, cn, due);
            return;
        }
        begin_message(w, cn, due);
    }
}

/* Writes the begun messages' bytes as far as the socket takes them. */
static void write_pending(struct worker *w, struct conn *cn)
{
    uint64_t target = cn->started * (uint64_t)w->client->o.size;
    while (cn->sent < target) {
        uint64_t left = target - cn->sent;
        size_t n = left < IO_CHUNK ? (size_t)left : IO_CHUNK;
        stream_fill(cn->key, cn->sent, w->out_buf, n);
        ssize_t r = send(cn->fd, w->out_buf, n, MSG_NOSIGNAL);
        if (r > 0) {
            cn->sent += (uint64_t)r;
            w->t.bytes_sent += (uint64_t)r;
            if ((size_t)r < n)
                return; /* the socket is full: an EPOLLOUT edge follows */
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            closed_early(w, cn, r < 0 ? errno : EIO);
            return;
        }
    }
}

static void pump(struct worker *w, struct conn *cn, uint64_t now)
{
    if (!max_conns_mode(w->client))
        begin_due_messages(w, cn, now);
    write_pending(w, cn);
}

/* --max-conns: one message, whose echo proves the connection alive. */
static void begin_probe(struct worker *w, struct conn *cn, uint64_t now)
{
    cn->state = C_OPEN;
    cn->since_ns = now;
    begin_message(w, cn, now);
    fifo_push(&w->awaiting, cn);
    w->awaiting_n++;
    write_pending(w, cn);
}

static void established(struct worker *w, struct conn *cn, uint64_t now)
{
    struct client *c = w->client;
    if (cn->state == C_CONNECTING)
        w->connecting_n--;
    cn->state = C_OPEN;
    w->t.connected++;
    w->t.open++;
    w->last_connected_ns = now;
    if (max_conns_mode(c)) {
        begin_probe(w, cn, now);
        return;
    }
    if (c->o.rate > 0) /* spread the connections' schedules over one period */
        cn->schedule_ns = now +
            (uint64_t)((double)(cn->id % (uint64_t)c->o.connections) / (double)c->o.connections * 1e9 / c->o.rate);
    pump(w, cn, now);
}

static void open_one(struct worker *w, struct conn *cn, uint64_t now)
{
    struct client *c = w->client;
    cn->fd = -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        connect_failed(w, cn, errno, IN_SOCKET_CALL);
        return;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (c->o.sources > 0) {
        (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl((127u << 24) | (1u + cn->id % (uint32_t)c->o.sources));
        if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
            int err = errno;
            close(fd);
            connect_failed(w, cn, err, AFTER_SOCKET_CALL);
            return;
        }
    }
    int r = connect(fd, (struct sockaddr *)&c->server, sizeof c->server);
    int err = r == 0 ? 0 : errno;
    if (r != 0 && err != EINPROGRESS) {
        close(fd);
        connect_failed(w, cn, err, AFTER_SOCKET_CALL);
        return;
    }
    cn->fd = fd;
    cn->state = C_CONNECTING;
    cn->since_ns = now;
    w->connecting_n++;
    /* Registered after connect(): a completion in between is reported by the ADD. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = cn};
    if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        connect_failed(w, cn, errno, AFTER_SOCKET_CALL);
        return;
    }
    if (r == 0)
        established(w, cn, now);
    else
        fifo_push(&w->connecting, cn);
}

/* Records the echoes that completed; true if any did. */
static bool complete_messages(struct worker *w, struct conn *cn, uint64_t now)
{
    uint64_t size = (uint64_t)w->client->o.size;
    bool any = false;
    while (cn->completed < cn->started && cn->received >= (cn->completed + 1) * size) {
        uint64_t due = *due_slot(w, cn, cn->completed);
        histogram_record(&w->hist, now > due ? now - due : 0);
        cn->completed++;
        w->t.echoes++;
        any = true;
    }
    if (any && max_conns_mode(w->client) && cn->completed == cn->started && cn->state == C_OPEN) {
        cn->state = C_HELD;
        w->t.held++;
        w->awaiting_n--;
        if (w->sweeping) {
            w->sweep_alive++;
        } else {
            uint64_t held = atomic_fetch_add(&w->client->held_total, 1) + 1;
            if (held >= (uint64_t)w->client->o.max_conns)
                set_stop(w->client, STOP_CAP, 0);
        }
    }
    return any;
}

static void on_readable(struct worker *w, struct conn *cn, uint32_t events)
{
    for (;;) {
        ssize_t r = recv(cn->fd, w->in_buf, IO_CHUNK, 0);
        if (r > 0) {
            uint64_t now = now_ns();
            if (!verify(w, cn, w->in_buf, (size_t)r))
                return;
            if (complete_messages(w, cn, now) && cn->state == C_OPEN)
                pump(w, cn, now);
            if (cn->state == C_CLOSED)
                return;
            /* A short read drained the socket, unless the peer's FIN came
             * with this edge: then read on to the EOF (no later edge tells). */
            if ((size_t)r < IO_CHUNK && !(events & EPOLLRDHUP))
                return;
        } else if (r == 0) {
            closed_early(w, cn, 0);
            return;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return;
        } else {
            closed_early(w, cn, errno);
            return;
        }
    }
}

static void on_event(struct worker *w, struct conn *cn, uint32_t events)
{
    if (cn->state == C_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0) {
            connect_failed(w, cn, err, AFTER_SOCKET_CALL);
            return;
        }
        if (!(events & (EPOLLOUT | EPOLLIN | EPOLLHUP | EPOLLERR)))
            return;
        established(w, cn, now_ns());
        if (cn->state == C_CLOSED)
            return;
    }
    if (cn->state == C_CLOSED || cn->state == C_UNOPENED)
        return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        on_readable(w, cn, events);
    if (cn->state != C_CLOSED && (events & EPOLLOUT))
        write_pending(w, cn);
}

/* ---- the worker loop --------------------------------------------------------- */

static uint64_t timeout_ns(const struct client *c) { return (uint64_t)(c->o.connect_timeout_s * 1e9); }

/* Opens the connections that are due; returns when the next one is (UINT64_MAX: none). */
static uint64_t open_due(struct worker *w, uint64_t now)
{
    struct client *c = w->client;
    size_t due = w->count;
    if (w->open_rate > 0) {
        double elapsed_s = (double)(now - c->start_ns) / 1e9;
        double n = floor(elapsed_s * w->open_rate) + 1;
        due = n < (double)w->count ? (size_t)n : w->count;
    }
    for (int k = 0; w->opened < due && k < OPEN_BATCH; k++) {
        if (max_conns_mode(c) && stopped(c))
            return UINT64_MAX;
        open_one(w, &w->conns[w->opened++], now);
    }
    if (w->opened >= w->count)
        return UINT64_MAX;
    if (w->opened < due || w->open_rate <= 0)
        return now; /* a batch is done; more are due at once */
    return c->start_ns + (uint64_t)((double)w->opened / w->open_rate * 1e9);
}

/* Fails connects and (--max-conns) echoes that took too long; returns the next deadline. */
static uint64_t expire(struct worker *w, uint64_t now)
{
    struct client *c = w->client;
    uint64_t limit = timeout_ns(c);
    uint64_t next = UINT64_MAX;
    struct deadline *d;
    while ((d = fifo_head(&w->connecting, C_CONNECTING)) != NULL) {
        if (d->since_ns + limit > now) {
            next = d->since_ns + limit;
            break;
        }
        w->connecting.head++;
        connect_failed(w, d->conn, ETIMEDOUT, AFTER_SOCKET_CALL);
    }
    while (max_conns_mode(c) && (d = fifo_head(&w->awaiting, C_OPEN)) != NULL) {
        if (d->since_ns + limit > now) {
            next = min_u64(next, d->since_ns + limit);
            break;
        }
        w->awaiting.head++;
        w->echo_timeouts++;
        if (!w->sweeping)
            set_stop(c, STOP_ECHO_TIMEOUT, 0);
        close_conn(w, d->conn);
    }
    return next;
}

/* --rate: begins the messages whose time has come; returns the next due time. */
static uint64_t fire_timers(struct worker *w, uint64_t now)
{
    while (w->heap_len > 0) {
        struct conn *cn = w->heap[0];
        if (cn->next_due_ns > now)
            return cn->next_due_ns;
        heap_remove(w, cn);
        pump(w, cn, now);
    }
    return UINT64_MAX;
}

static int wait_events(struct worker *w, struct epoll_event *events, uint64_t now, uint64_t wake)
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

static void handle_events(struct worker *w, uint64_t now, uint64_t wake)
{
    struct epoll_event events[EVENT_BATCH];
    int n = wait_events(w, events, now, wake);
    for (int i = 0; i < n; i++)
        on_event(w, events[i].data.ptr, events[i].events);
}

/* --max-conns after the ramp: settle, wait for the main thread, echo once more on every held connection. */
static void finish_max_conns(struct worker *w)
{
    struct client *c = w->client;
    uint64_t settle_end = atomic_load(&c->stop_ns) + SETTLE_NS;
    for (;;) { /* connects and first echoes already in flight may still land */
        uint64_t now = now_ns();
        uint64_t next = expire(w, now);
        if (w->connecting_n + w->awaiting_n == 0 || now >= settle_end || atomic_load(&c->interrupted))
            break;
        handle_events(w, now, min_u64(next, settle_end));
    }
    for (size_t i = 0; i < w->opened; i++) /* whatever is still pending is not counted */
        if (w->conns[i].state == C_CONNECTING || w->conns[i].state == C_OPEN)
            close_conn(w, &w->conns[i]);
    publish(w);
    atomic_fetch_add(&c->settled, 1);
    while (!atomic_load(&c->sweep_go) && !atomic_load(&c->interrupted)) {
        uint64_t now = now_ns();
        handle_events(w, now, now + MAX_WAIT_NS); /* notices servers closing held connections */
        publish(w);
    }
    if (atomic_load(&c->interrupted))
        return;
    w->sweeping = true;
    w->awaiting.head = w->awaiting.tail = 0;
    uint64_t now = now_ns();
    for (size_t i = 0; i < w->opened; i++)
        if (w->conns[i].state == C_HELD) {
            w->t.held--;
            begin_probe(w, &w->conns[i], now);
        }
    while (w->awaiting_n > 0 && !atomic_load(&c->interrupted)) {
        now = now_ns();
        uint64_t next = expire(w, now);
        handle_events(w, now, next);
        publish(w);
    }
}

void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct client *c = w->client;
    bool draining = false;
    uint64_t drain_end = 0;
    for (;;) {
        uint64_t now = now_ns();
        if (atomic_load_explicit(&c->interrupted, memory_order_relaxed))
            break;
        uint64_t wake = now + MAX_WAIT_NS;
        if (max_conns_mode(c)) {
            if (now >= c->start_ns + (uint64_t)(c->o.duration_s * 1e9))
                set_stop(c, STOP_DURATION, 0);
            if (stopped(c)) {
                finish_max_conns(w);
                break;
            }
            wake = min_u64(wake, open_due(w, now));
        } else {
            uint64_t end = atomic_load_explicit(&c->end_ns, memory_order_relaxed);
            if (now < end) {
                wake = min_u64(wake, min_u64(open_due(w, now), end));
                if (c->o.rate > 0)
                    wake = min_u64(wake, fire_timers(w, now));
            } else {
                if (!draining) { /* the trial is over: no new connection or message */
                    draining = true;
                    drain_end = now + DRAIN_NS;
                    w->heap_len = 0;
                    for (size_t i = 0; i < w->count; i++)
                        w->conns[i].heap_index = SIZE_MAX;
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
    uint64_t end = atomic_load(&c->end_ns);
    for (size_t i = 0; i < w->opened; i++) {
        struct conn *cn = &w->conns[i];
        if ((cn->state == C_OPEN || cn->state == C_HELD) && c->o.rate > 0 && end > cn->schedule_ns) {
            /* --rate: messages due within the window that --depth held back */
            uint64_t due = (uint64_t)ceil((double)(end - cn->schedule_ns) * c->o.rate / 1e9);
            w->due_unsent_messages += due > cn->started ? due - cn->started : 0;
        }
        if (cn->state == C_OPEN || cn->state == C_HELD)
            w->unanswered_messages += cn->started - cn->completed;
        else if (cn->state == C_CONNECTING) /* the trial ended first: it did not connect in time */
            connect_failed(w, cn, ETIMEDOUT, AFTER_SOCKET_CALL);
    }
    w->not_attempted = w->count - w->opened;
    publish(w);
    atomic_fetch_add(&c->finished, 1);
    return NULL;
}

bool worker_init(struct worker *w, struct client *c, size_t first, size_t count)
{
    memset(w, 0, sizeof *w);
    w->client = c;
    w->count = count;
    w->open_rate = c->o.connect_rate / (double)c->threads;
    histogram_init(&w->hist);
    w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    w->conns = calloc(count, sizeof w->conns[0]);
    w->due_ns = calloc(count * (size_t)c->o.depth, sizeof w->due_ns[0]);
    w->heap = calloc(count, sizeof w->heap[0]);
    w->connecting = (struct fifo){calloc(count, sizeof(struct deadline)), 0, 0, count};
    w->awaiting = (struct fifo){calloc(count, sizeof(struct deadline)), 0, 0, count};
    w->out_buf = malloc(IO_CHUNK);
    w->in_buf = malloc(IO_CHUNK);
    w->expect_buf = malloc(IO_CHUNK);
    if (w->epoll_fd < 0 || !w->conns || !w->due_ns || !w->heap || !w->connecting.items || !w->awaiting.items ||
        !w->out_buf || !w->in_buf || !w->expect_buf)
        return false;
    for (size_t i = 0; i < count; i++) {
        struct conn *cn = &w->conns[i];
        cn->fd = -1;
        cn->id = (uint32_t)(first + i);
        cn->key = stream_key(c->o.seed, first + i);
        cn->heap_index = SIZE_MAX;
    }
    return true;
}

void worker_destroy(struct worker *w)
{
    for (size_t i = 0; w->conns != NULL && i < w->count; i++)
        if (w->conns[i].fd >= 0)
            close(w->conns[i].fd);
    if (w->epoll_fd >= 0)
        close(w->epoll_fd);
    free(w->conns);
    free(w->due_ns);
    free(w->heap);
    free(w->connecting.items);
    free(w->awaiting.items);
    free(w->out_buf);
    free(w->in_buf);
    free(w->expect_buf);
}

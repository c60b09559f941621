/* One echo_client connection's life inside its worker: connect (from its
 * source address), begin messages and write its payload stream, read and
 * verify every byte that comes back, time each message, and fail or close it.
 * See echo_worker_state.h. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "echo_worker_state.h"
#include "mono_clock.h"
#include "payload_stream.h"

void conn_close(struct echo_worker *w, struct conn *cn)
{
    if (cn->state == C_CLOSED || cn->state == C_UNOPENED)
        return;
    if (cn->state == C_CONNECTING)
        w->connecting_n--;
    if (cn->state == C_OPEN || cn->state == C_HELD)
        w->t.open--;
    if (cn->state == C_HELD)
        w->t.held--;
    if (cn->state == C_OPEN && max_conns_mode(w->o) && cn->completed < cn->started)
        w->awaiting_n--;
    w->in_flight_bytes -= cn->started * (uint64_t)w->o->size - cn->received;
    heap_remove(&w->heap, &cn->due);
    close(cn->fd);
    cn->fd = -1;
    cn->state = C_CLOSED;
}

/* An established connection ended before the client ended it. */
static void closed_early(struct echo_worker *w, struct conn *cn, int err)
{
    w->res->closed_early[errno_slot(err)]++;
    if (max_conns_mode(w->o) && !w->sweeping)
        stop_set(&w->ctl->stop, err == 0 ? STOP_SERVER_CLOSED : STOP_SERVER_ERROR, err);
    conn_close(w, cn);
}

void conn_connect_failed(struct echo_worker *w, struct conn *cn, int err, enum connect_step step)
{
    w->res->connect_errors[errno_slot(err)]++;
    if (max_conns_mode(w->o)) {
        if (step == IN_SOCKET_CALL && (err == EMFILE || err == ENFILE))
            stop_set(&w->ctl->stop, STOP_CLIENT_FDS, err);
        else
            stop_set(&w->ctl->stop, err == ETIMEDOUT ? STOP_CONNECT_TIMEOUT : STOP_CONNECT_ERROR, err);
    }
    if (cn->fd >= 0)
        conn_close(w, cn);
    cn->state = C_CLOSED;
}

static void verify_failed(struct echo_worker *w, struct conn *cn, uint64_t offset, int expected, int got)
{
    w->res->verify_errors++;
    if (!w->res->first_failure.set)
        w->res->first_failure = (struct verify_failure){true, cn->id, offset, expected, got, now_ns()};
    if (max_conns_mode(w->o))
        stop_set(&w->ctl->stop, STOP_VERIFY, 0);
    conn_close(w, cn);
}

/* Checks received bytes against the stream; false (connection closed) on a mismatch. */
static bool verify(struct echo_worker *w, struct conn *cn, const unsigned char *bytes, size_t n)
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

static uint64_t *due_slot(struct echo_worker *w, const struct conn *cn, uint64_t message)
{
    size_t local = (size_t)(cn - w->conns);
    return &w->due_ns[local * (size_t)w->o->depth + (size_t)(message % (uint64_t)w->o->depth)];
}

static uint64_t rate_due(const struct options *o, const struct conn *cn, uint64_t message)
{
    return cn->schedule_ns + (uint64_t)((double)message * 1e9 / o->rate);
}

static void begin_message(struct echo_worker *w, struct conn *cn, uint64_t due)
{
    *due_slot(w, cn, cn->started) = due;
    cn->started++;
    w->in_flight_bytes += (uint64_t)w->o->size;
}

/* Throughput mode: begins every message that is due and has room, until the
 * window ends (after it, only messages already begun are finished). */
static void begin_due_messages(struct echo_worker *w, struct conn *cn, uint64_t now)
{
    const struct options *o = w->o;
    uint64_t end = atomic_load_explicit(&w->ctl->end_ns, memory_order_relaxed);
    if (now >= end)
        return;
    while (cn->started - cn->completed < (uint64_t)o->depth) {
        uint64_t due = o->rate > 0 ? rate_due(o, cn, cn->started) : now;
        if (due >= end)
            return;
        if (due > now) { /* wait for it; completions do not make it come sooner */
            heap_set(&w->heap, &cn->due, due);
            return;
        }
        begin_message(w, cn, due);
    }
}

/* Writes the begun messages' bytes as far as the socket takes them. */
static void write_pending(struct echo_worker *w, struct conn *cn)
{
    uint64_t target = cn->started * (uint64_t)w->o->size;
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

void conn_pump(struct echo_worker *w, struct conn *cn, uint64_t now)
{
    if (!max_conns_mode(w->o))
        begin_due_messages(w, cn, now);
    write_pending(w, cn);
}

void conn_begin_probe(struct echo_worker *w, struct conn *cn, uint64_t now)
{
    cn->state = C_OPEN;
    cn->since_ns = now;
    begin_message(w, cn, now);
    fifo_push(&w->awaiting, cn);
    w->awaiting_n++;
    write_pending(w, cn);
}

static void established(struct echo_worker *w, struct conn *cn, uint64_t now)
{
    const struct options *o = w->o;
    if (cn->state == C_CONNECTING)
        w->connecting_n--;
    cn->state = C_OPEN;
    w->t.connected++;
    w->t.open++;
    w->res->last_connected_ns = now;
    if (max_conns_mode(o)) {
        conn_begin_probe(w, cn, now);
        return;
    }
    if (o->rate > 0) /* spread the connections' schedules over one period */
        cn->schedule_ns =
            now + (uint64_t)((double)(cn->id % (uint64_t)o->connections) / (double)o->connections * 1e9 / o->rate);
    conn_pump(w, cn, now);
}

void conn_open(struct echo_worker *w, struct conn *cn, uint64_t now)
{
    cn->fd = -1;
    struct connect_attempt a = connect_start(w->server, w->o->sources, cn->id);
    if (a.fd < 0) {
        conn_connect_failed(w, cn, a.err, a.step);
        return;
    }
    cn->fd = a.fd;
    cn->state = C_CONNECTING;
    cn->since_ns = now;
    w->connecting_n++;
    /* Registered after connect(): a completion in between is reported by the ADD. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = cn};
    if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, a.fd, &ev) != 0) {
        conn_connect_failed(w, cn, errno, AFTER_SOCKET_CALL);
        return;
    }
    if (a.connected)
        established(w, cn, now);
    else
        fifo_push(&w->connecting, cn);
}

/* Records the echoes that completed; true if any did. */
static bool complete_messages(struct echo_worker *w, struct conn *cn, uint64_t now)
{
    uint64_t size = (uint64_t)w->o->size;
    bool any = false;
    while (cn->completed < cn->started && cn->received >= (cn->completed + 1) * size) {
        uint64_t due = *due_slot(w, cn, cn->completed);
        histogram_record(&w->res->hist, now > due ? now - due : 0);
        cn->completed++;
        w->t.echoes++;
        any = true;
    }
    if (any && max_conns_mode(w->o) && cn->completed == cn->started && cn->state == C_OPEN) {
        cn->state = C_HELD;
        w->t.held++;
        w->awaiting_n--;
        if (w->sweeping) {
            w->res->sweep_alive++;
        } else {
            uint64_t held = atomic_fetch_add(&w->ctl->held_total, 1) + 1;
            if (held >= (uint64_t)w->o->max_conns)
                stop_set(&w->ctl->stop, STOP_CAP, 0);
        }
    }
    return any;
}

static void on_readable(struct echo_worker *w, struct conn *cn, uint32_t events)
{
    for (;;) {
        ssize_t r = recv(cn->fd, w->in_buf, IO_CHUNK, 0);
        if (r > 0) {
            uint64_t now = now_ns();
            if (!verify(w, cn, w->in_buf, (size_t)r))
                return;
            if (complete_messages(w, cn, now) && cn->state == C_OPEN)
                conn_pump(w, cn, now);
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

void conn_on_event(struct echo_worker *w, struct conn *cn, uint32_t events)
{
    if (cn->state == C_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0) {
            conn_connect_failed(w, cn, err, AFTER_SOCKET_CALL);
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

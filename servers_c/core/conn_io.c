#include "conn_io.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <limits.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conn_timer.h"

#define LINGER_MAX_MS 1000
#define LINGER_MAX_BYTES (256 * 1024)

enum flush_result { FLUSH_DONE, FLUSH_WOULD_BLOCK, FLUSH_FAILED };

static void count_io_error(int err, struct server_counters *c)
{
    if (err == ECONNRESET || err == EPIPE)
        c->connection_resets++;
    else
        c->errors++;
}

static enum flush_result flush(int fd, struct session *s, struct server_counters *c)
{
    while (session_has_output(s)) {
        struct iovec *iov;
        int count = session_output(s, &iov);
        ssize_t n = writev(fd, iov, count);
        if (n >= 0) {
            session_output_sent(s, (size_t)n);
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return FLUSH_WOULD_BLOCK;
        } else {
            count_io_error(errno, c);
            return FLUSH_FAILED;
        }
    }
    return FLUSH_DONE;
}

static bool client_has_left(int fd)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0)
        return false;
    return info.tcpi_state != TCP_ESTABLISHED;
}

void conn_check_first_answer(int fd, struct session *s)
{
    struct session_counters *sc = &s->counters;
    if (sc->first_answer_checked || !session_has_answered(s))
        return;
    sc->first_answer_checked = true;
    sc->first_answer_after_client_left = s->input_ended || client_has_left(fd);
}

/* Processes and sends until the session can use no more of its input (no
 * complete request left, everything echoed) or sending blocks. */
static enum conn_next answer(int fd, struct session *s, struct server_counters *c)
{
    for (;;) {
        bool progressed = session_process(s);
        conn_check_first_answer(fd, s);
        if (session_has_output(s)) {
            enum flush_result r = flush(fd, s, c);
            if (r == FLUSH_WOULD_BLOCK)
                return CONN_WANT_WRITE;
            if (r == FLUSH_FAILED)
                return CONN_CLOSE;
        }
        if (session_done(s))
            return CONN_CLOSE;
        if (!progressed || !session_has_pending_input(s))
            return CONN_WANT_READ;
    }
}

enum conn_next conn_on_readable(int fd, struct session *s, struct server_counters *c)
{
    for (;;) {
        size_t space;
        char *dst = session_input_space(s, &space);
        if (space == 0) {
            if (session_done(s))
                return CONN_CLOSE;
            enum conn_next next = answer(fd, s, c);
            if (next != CONN_WANT_READ)
                return next;
            dst = session_input_space(s, &space);
            if (space == 0) {
                /* Unreachable: http heads are capped below the buffer size, and
                 * echo output has been sent when answer() wants to read. Never spin. */
                c->errors++;
                return CONN_CLOSE;
            }
        }
        ssize_t n = read(fd, dst, space);
        if (n > 0) {
            session_input_commit(s, (size_t)n);
            enum conn_next next = answer(fd, s, c);
            if (next != CONN_WANT_READ || (size_t)n < space)
                return next; /* a short read means the socket is drained (epoll(7)) */
        } else if (n == 0) {
            session_end_input(s);
            enum conn_next next = answer(fd, s, c);
            return next == CONN_WANT_READ ? CONN_CLOSE : next;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return CONN_WANT_READ;
        } else {
            count_io_error(errno, c);
            return CONN_CLOSE;
        }
    }
}

enum conn_next conn_on_writable(int fd, struct session *s, struct server_counters *c)
{
    enum flush_result r = flush(fd, s, c);
    if (r == FLUSH_WOULD_BLOCK)
        return CONN_WANT_WRITE;
    if (r == FLUSH_FAILED)
        return CONN_CLOSE;
    enum conn_next next = answer(fd, s, c);
    if (next != CONN_WANT_READ)
        return next;
    /* Reading stopped while output was blocked; with edge-triggered
     * notification no new edge announces bytes that were already waiting. */
    return conn_on_readable(fd, s, c);
}

void conn_timed_out(int fd, struct session *s, struct server_counters *c)
{
    c->timeouts++;
    s->timed_out = true;
    if (session_has_partial_head(s)) {
        /* One try, never blocking: the client may not be reading at all. */
        const struct prebuilt *r = &s->responses->request_timeout;
        (void)!send(fd, r->bytes, r->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    s->closing = true;
}

/* SO_RCVTIMEO and SO_SNDTIMEO: a blocking read or write that makes no progress
 * for the idle timeout fails with EAGAIN. */
static void set_blocking_timeouts(int fd, uint32_t ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Waits until the descriptor is readable; false once the deadline has passed. */
static bool wait_readable_until(int fd, uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = monotonic_ms();
        if (now >= deadline_ms)
            return false;
        uint64_t left = deadline_ms - now;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (r > 0 || (r < 0 && errno != EINTR))
            return true; /* read() reports what there is (bytes, EOF or the error) */
    }
}

void conn_serve_blocking(int fd, struct session *s, struct server_counters *c)
{
    /* Timeouts without a system call per request: the idle timeout is the
     * socket's own (set once per connection); a head in progress, which is
     * rare apart from a connection's first request, waits in poll() for the
     * rest of its header deadline. */
    const struct session_timeouts *t = &s->timeouts;
    struct timeout_state head = {0};
    if (t->idle_ms > 0)
        set_blocking_timeouts(fd, t->idle_ms);
    for (;;) {
        size_t space;
        char *dst = session_input_space(s, &space);
        if (space == 0)
            return;
        if (t->header_ms > 0 && session_wait_kind(s) == SESSION_WAIT_HEAD) {
            timeout_state_update(&head, t, s, monotonic_ms());
            if (!wait_readable_until(fd, head.deadline_ms)) {
                conn_timed_out(fd, s, c);
                return;
            }
        }
        ssize_t n = read(fd, dst, space);
        if (n > 0) {
            session_input_commit(s, (size_t)n);
            enum conn_next next = answer(fd, s, c);
            if (next == CONN_WANT_WRITE) /* SO_SNDTIMEO: the client stopped reading */
                conn_timed_out(fd, s, c);
            if (next != CONN_WANT_READ)
                return;
        } else if (n == 0) {
            session_end_input(s);
            answer(fd, s, c);
            return;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            conn_timed_out(fd, s, c); /* SO_RCVTIMEO: nothing arrived for the idle timeout */
            return;
        } else if (errno != EINTR) {
            count_io_error(errno, c);
            return;
        }
    }
}

static void drain(int fd, bool may_wait)
{
    char scratch[4096];
    size_t total = 0;
    uint64_t start_ms = monotonic_ms();
    while (total < LINGER_MAX_BYTES) {
        ssize_t n = recv(fd, scratch, sizeof scratch, MSG_DONTWAIT);
        if (n > 0) {
            total += (size_t)n;
            continue;
        }
        if (n == 0 || !may_wait || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return;
        long left = LINGER_MAX_MS - (long)(monotonic_ms() - start_ms);
        if (left <= 0)
            return;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0)
            return;
    }
}

void conn_close(int fd, const struct session *s, enum conn_close_mode mode)
{
    if (mode != CLOSE_ABRUPTLY && session_needs_linger(s)) {
        shutdown(fd, SHUT_WR);
        drain(fd, mode == CLOSE_LINGERING_MAY_WAIT && !s->timed_out);
    }
    close(fd);
}

/* io_uring: --threads N completion-based event loops, each with its own ring,
 * its own SO_REUSEPORT listener on the shared port and its own pool of
 * provided receive buffers. Nothing is shared between the loops but the port:
 * the kernel spreads connections over the listeners (like reuseport), and each
 * loop asks its ring for work instead of asking epoll for readiness.
 *
 * One loop iteration is one io_uring_submit_and_wait() call: it hands the
 * kernel every SQE prepared since the last call (for all connections at once)
 * and returns once at least one completion is there. The loop then
 *   1. reaps every CQE, copying received bytes into the connections' sessions
 *      and giving each receive buffer straight back to the buffer ring;
 *   2. serves each connection that had news once: its session processes what
 *      arrived (answers every complete request, or, with --proto echo, takes
 *      the bytes to send back), one SENDMSG is queued for all the output that
 *      is waiting, and the recv is re-armed or stopped.
 * So a connection costs no system call of its own per request: a multishot
 * accept delivers connections, a multishot recv per connection delivers bytes
 * into buffers the kernel picks from the ring, and each batch of pipelined
 * responses (or of bytes to echo) leaves in one send.
 *
 * What an asynchronous design must get right, and how this one does:
 * - A send in flight reads its iovec array until it completes, while the
 *   session may queue more responses (and compact its own array). So each
 *   send carries a per-connection snapshot of the queued iovecs, and at most
 *   one send is in flight per connection, which also keeps responses in order.
 *   A short send is resumed from where it stopped (session_output_sent).
 *   An echo iovec points into the session's own input buffer; the session
 *   offers no input space while it is pending, so those bytes stay put until
 *   the send's CQE reports them sent.
 * - A multishot recv keeps delivering whatever the client sends, even while
 *   the session takes no input: its output queue is full (http) or its echo
 *   is still being sent (echo). Bytes the session cannot take go, in order,
 *   to a per-connection overflow buffer; when that holds more than
 *   OVERFLOW_STOP_BYTES the recv is cancelled, and it is re-armed once the
 *   overflow has drained into the session. This is the backpressure that epoll
 *   architectures get by simply not reading: an echo client that never reads
 *   costs the server one input buffer plus this bounded overflow.
 * - A multishot recv ends on EOF, on errors and with -ENOBUFS when the buffer
 *   ring ran dry (every CQE without IORING_CQE_F_MORE is its last). Buffers go
 *   back to the ring in the same iteration they arrive, so by the time a
 *   connection is served again the ring is refilled and the recv is re-armed.
 * - A CQE names its connection through user_data, so a connection is freed
 *   only when no operation of it is in flight: closing cancels everything on
 *   the descriptor and waits for the last CQE (in_flight counts them).
 * - The client may still be sending when an answer ends the connection (a bad
 *   request, Connection: close); then writing is shut down and the socket
 *   drained before close, so the kernel does not reset the answer away.
 *
 * The rings are created with SINGLE_ISSUER|DEFER_TASKRUN: only the loop's own
 * thread submits, and completion work runs when that thread waits instead of
 * interrupting it at arbitrary points, which is the cheapest mode for exactly
 * this one-thread-per-ring design (set-up and probing: core/uring_setup.c).
 * Kernels that refuse it get COOP_TASKRUN,
 * then no task-run flag, with a line on stderr saying so. Without io_uring, or
 * without multishot recv and provided buffer rings (Linux 6.0), the server says
 * what is missing and exits with status 3 (unsupported).
 *
 * Timeouts (--header-timeout, --idle-timeout): each loop keeps the deadline
 * lists of core/conn_timer.h. A connection's deadline is re-armed after it is
 * served, the loop's wait (io_uring_submit_and_wait_timeout, the timeout
 * passed with the enter call itself: IORING_FEAT_EXT_ARG, no extra SQE) ends
 * by the earliest deadline, and an expired connection gets a 408 if a head was
 * cut short (a direct non-blocking send: no send of it is in flight then) and
 * is closed like any other. One clock read per iteration, no SQE per request.
 *
 * Shutdown: the signal watcher sets each loop's stop flag and writes its
 * eventfd, which a pending read on the ring turns into a completion. Each loop
 * then cancels its accept and every connection's operations, waits (bounded)
 * for their last CQEs, closes the connections and returns its counters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn_io.h"
#include "conn_timer.h"
#include "session.h"
#include "listener.h"
#include "server.h"

#ifdef ARCHBENCH_HAVE_LIBURING
#include "uring_buffers.h"
#include "uring_setup.h"
#endif

static const struct server_cli cli = {
    .architecture = "io_uring",
    .summary = "N completion-driven event loops, each with its own io_uring, its own SO_REUSEPORT\n"
               "listener on the same port (the kernel spreads connections over them) and its own\n"
               "ring of provided receive buffers: multishot accept, multishot recv, one SENDMSG per\n"
               "batch of responses, one io_uring_submit_and_wait per loop iteration.\n"
               "Rings are set up with SINGLE_ISSUER|DEFER_TASKRUN (plus SUBMIT_ALL and a larger CQ);\n"
               "if the kernel refuses, it falls back to COOP_TASKRUN, then to no task-run flag, and\n"
               "says so on stderr. Exits with status 3 (unsupported) when io_uring, multishot recv\n"
               "or provided buffer rings (Linux 6.0+) are unavailable, or when built without liburing.",
    .threads_help = "event-loop threads N, each with its own ring and listener",
    .threads_min = 1,
    .threads_max = 1024,
    .extra = NULL,
    .extra_count = 0,
};

#ifdef ARCHBENCH_HAVE_LIBURING

/* Receive buffers per loop: a power of two, enough that a thousand
 * connections each delivering one chunk per iteration do not run the ring dry
 * (if they do, -ENOBUFS is handled). 4 KiB holds a 16-deep pipeline of small
 * requests in one CQE. */
#define BUFFER_COUNT 2048
#define BUFFER_SIZE 4096
/* Held-back input beyond which a connection stops receiving until it drains. */
#define OVERFLOW_STOP_BYTES (64 * 1024)
#define OVERFLOW_INITIAL_BYTES 16384
/* How long a stopping loop waits for the last CQEs of its connections. */
#define SHUTDOWN_DRAIN_MS 1000

/* ---- connections --------------------------------------------------------- */

/* What a CQE is about: the low bits of its user_data. The other bits are the
 * connection, for the operations that belong to one (allocations are at least
 * 16-byte aligned, so the low bits are free). */
enum op {
    OP_ACCEPT = 1, /* the loop's multishot accept */
    OP_WAKE = 2,   /* the read on the wake-up eventfd */
    OP_RECV = 3,   /* a connection's multishot recv */
    OP_SEND = 4,   /* a connection's sendmsg */
    OP_CANCEL = 5, /* a cancel request: its own result does not matter */
};
#define OP_MASK UINT64_C(7)
_Static_assert(_Alignof(max_align_t) > OP_MASK, "malloc'd connections leave the tag bits free");

/* Received bytes the session could not take yet, oldest first. */
struct overflow {
    char *bytes;
    size_t start; /* first byte not yet handed to the session */
    size_t len;
    size_t cap;
};

struct uring_conn {
    struct conn_timer timer; /* --header-timeout, --idle-timeout */
    int fd;
    unsigned in_flight;    /* operations whose last CQE has not arrived */
    bool recv_armed;       /* a multishot recv is pending */
    bool recv_cancel_sent; /* ... and asked to stop (backpressure) */
    bool send_in_flight;
    bool peer_eof; /* the recv saw EOF; the session hears it once the overflow is in */
    bool failed;   /* the socket failed: close at once, without lingering */
    bool closing;  /* no new operations; freed when in_flight reaches 0 */
    bool touched;  /* on the loop's list of connections to serve */
    struct uring_conn *next_touched;
    struct uring_conn *prev, *next; /* every open connection, for shutdown */
    struct overflow overflow;
    /* The snapshot the send in flight reads; untouched until its CQE. */
    struct msghdr send_msg;
    struct iovec send_iov[SESSION_MAX_QUEUED];
    struct session session;
};

struct startup_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long waiting;
    char error[256];
};

/* Each loop on cache lines of its own: its thread writes its counters and
 * ring state all the time. */
struct loop {
    _Alignas(64) struct io_uring ring;
    const struct ring_mode *mode;
    int listen_fd;
    int wake_fd;
    uint64_t wake_value; /* the pending eventfd read writes here */
    atomic_bool stop;
    bool accept_armed;
    bool accept_broken; /* a non-transient accept error: do not re-arm */
    bool wake_armed;
    bool draining; /* stopping: connections close without lingering */
    struct buffer_ring buffers;
    const struct session_config *session;
    struct uring_conn *conns;
    size_t open_conns;
    struct uring_conn *touched;
    struct conn_timers timers;
    uint64_t now_ms; /* read once per iteration, when timeouts are on */
    struct server_counters counters;
    struct startup_gate *gate;
    pthread_t thread;
};

static uint64_t tag(const struct uring_conn *c, enum op op) { return (uint64_t)(uintptr_t)c | (uint64_t)op; }

/* An SQE to fill. When the submission queue is full, the SQEs prepared so far
 * go to the kernel early (SUBMIT_ALL: it consumes them all). */
static struct io_uring_sqe *next_sqe(struct loop *loop)
{
    struct io_uring_sqe *sqe;
    for (int attempt = 0; (sqe = io_uring_get_sqe(&loop->ring)) == NULL; attempt++) {
        int ret = io_uring_submit(&loop->ring);
        if ((ret < 0 && ret != -EINTR && ret != -EAGAIN) || attempt == 1000) {
            /* Without SQEs nothing can be served, cancelled or closed any more. */
            fprintf(stderr, "io_uring: the submission queue does not drain: %s\n",
                    ret < 0 ? strerror(-ret) : "no progress");
            abort();
        }
    }
    return sqe;
}

static void touch(struct loop *loop, struct uring_conn *c)
{
    if (c->touched)
        return;
    c->touched = true;
    c->next_touched = loop->touched;
    loop->touched = c;
}

static bool overflow_append(struct overflow *o, const char *bytes, size_t n)
{
    if (o->start + o->len + n > o->cap) {
        if (o->start > 0) {
            memmove(o->bytes, o->bytes + o->start, o->len);
            o->start = 0;
        }
        if (o->len + n > o->cap) {
            size_t cap = o->cap > 0 ? o->cap : OVERFLOW_INITIAL_BYTES;
            while (cap < o->len + n)
                cap *= 2;
            char *grown = realloc(o->bytes, cap);
            if (grown == NULL)
                return false;
            o->bytes = grown;
            o->cap = cap;
        }
    }
    memcpy(o->bytes + o->start + o->len, bytes, n);
    o->len += n;
    return true;
}

/* Moves as many held-back bytes into the session as it has room for. */
static void overflow_feed(struct overflow *o, struct session *s)
{
    if (o->len == 0)
        return;
    size_t taken = session_input_copy(s, o->bytes + o->start, o->len);
    o->start += taken;
    o->len -= taken;
    if (o->len == 0)
        o->start = 0;
}

/* The first failure of a connection decides how it is counted, as in conn_io. */
static void mark_failed(struct loop *loop, struct uring_conn *c, int err)
{
    if (c->failed || c->closing)
        return;
    if (err == ECONNRESET || err == EPIPE)
        loop->counters.connection_resets++;
    else
        loop->counters.errors++;
    c->failed = true;
}

static void open_conn(struct loop *loop, int fd)
{
    struct uring_conn *c = calloc(1, sizeof *c);
    if (c == NULL || !session_init(&c->session, loop->session)) {
        loop->counters.errors++;
        if (c != NULL)
            session_destroy(&c->session);
        free(c);
        close(fd);
        return;
    }
    c->fd = fd;
    c->next = loop->conns;
    if (loop->conns != NULL)
        loop->conns->prev = c;
    loop->conns = c;
    loop->open_conns++;
    touch(loop, c); /* serving it arms its recv */
}

/* Only once nothing in flight can name the connection any more. */
static void free_conn(struct loop *loop, struct uring_conn *c)
{
    counters_add_session(&loop->counters, &c->session.counters);
    conn_timers_remove(&c->timer);
    /* Lingers when the client may still be sending, unless the socket failed or the loop stops. */
    conn_close(c->fd, &c->session, c->failed || loop->draining ? CLOSE_ABRUPTLY : CLOSE_LINGERING);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        loop->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    loop->open_conns--;
    free(c->overflow.bytes);
    session_destroy(&c->session);
    free(c);
}

/* Stops everything the connection has in flight; it is freed at its last CQE. */
static void begin_close(struct loop *loop, struct uring_conn *c)
{
    c->closing = true;
    conn_timers_remove(&c->timer);
    if (c->in_flight == 0)
        return;
    struct io_uring_sqe *sqe = next_sqe(loop);
    io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, OP_CANCEL);
}

static void arm_recv(struct loop *loop, struct uring_conn *c)
{
    struct io_uring_sqe *sqe = next_sqe(loop);
    prep_multishot_recv(sqe, c->fd);
    io_uring_sqe_set_data64(sqe, tag(c, OP_RECV));
    c->recv_armed = true;
    c->recv_cancel_sent = false;
    c->in_flight++;
}

static void stop_recv(struct loop *loop, struct uring_conn *c)
{
    struct io_uring_sqe *sqe = next_sqe(loop);
    io_uring_prep_cancel64(sqe, tag(c, OP_RECV), 0);
    io_uring_sqe_set_data64(sqe, OP_CANCEL);
    c->recv_cancel_sent = true;
}

/* One sendmsg for every queued response, from a snapshot of the queue. */
static void send_output(struct loop *loop, struct uring_conn *c)
{
    struct iovec *queued;
    int count = session_output(&c->session, &queued);
    memcpy(c->send_iov, queued, (size_t)count * sizeof queued[0]);
    memset(&c->send_msg, 0, sizeof c->send_msg);
    c->send_msg.msg_iov = c->send_iov;
    c->send_msg.msg_iovlen = (size_t)count;
    struct io_uring_sqe *sqe = next_sqe(loop);
    io_uring_prep_sendmsg(sqe, c->fd, &c->send_msg, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, tag(c, OP_SEND));
    c->send_in_flight = true;
    c->in_flight++;
}

/* Answers what has arrived, sends, and decides whether to receive on. */
static void answer(struct loop *loop, struct uring_conn *c)
{
    struct session *s = &c->session;
    bool progressed;
    do {
        overflow_feed(&c->overflow, s);
        /* EOF only once every byte before it is in the session. */
        if (c->peer_eof && c->overflow.len == 0)
            session_end_input(s);
        progressed = session_process(s);
    } while (progressed && c->overflow.len > 0);
    conn_check_first_answer(c->fd, s);

    if (session_has_output(s) && !c->send_in_flight)
        send_output(loop, c);
    if (session_done(s) && !c->send_in_flight) {
        begin_close(loop, c);
        return;
    }
    if (c->recv_armed) {
        if (c->overflow.len > OVERFLOW_STOP_BYTES && !c->recv_cancel_sent)
            stop_recv(loop, c);
    } else if (!c->peer_eof && c->overflow.len == 0 && !s->closing) {
        arm_recv(loop, c); /* new, or ended by -ENOBUFS, backpressure or the kernel */
    }
    if (conn_timers_enabled(&loop->timers))
        conn_timers_update(&loop->timers, &c->timer, s, loop->now_ms);
}

static void serve(struct loop *loop, struct uring_conn *c)
{
    if (!c->closing) {
        if (c->failed || loop->draining)
            begin_close(loop, c);
        else
            answer(loop, c);
    }
    if (c->closing && c->in_flight == 0)
        free_conn(loop, c);
}

static void serve_touched(struct loop *loop)
{
    while (loop->touched != NULL) {
        struct uring_conn *c = loop->touched;
        loop->touched = c->next_touched;
        c->touched = false;
        serve(loop, c);
    }
}

/* Begins closing every connection whose deadline has passed. */
static void expire(struct loop *loop)
{
    struct conn_timer *t;
    while ((t = conn_timers_expired(&loop->timers, loop->now_ms)) != NULL) {
        struct uring_conn *c = CONN_TIMER_OWNER(t, struct uring_conn, timer);
        conn_timers_remove(t);
        if (c->closing || c->failed)
            continue;
        conn_timed_out(c->fd, &c->session, &loop->counters);
        begin_close(loop, c);
        touch(loop, c); /* freed by serve() once nothing is in flight */
    }
    serve_touched(loop);
}

/* ---- completions ---------------------------------------------------------- */

static void deliver(struct loop *loop, struct uring_conn *c, const char *bytes, size_t len)
{
    /* Nothing more will be parsed; a lingering close takes care of the rest. */
    if (c->closing || c->failed || c->session.closing)
        return;
    size_t taken = 0;
    if (c->overflow.len == 0) /* otherwise older bytes are waiting: keep the order */
        taken = session_input_copy(&c->session, bytes, len);
    if (taken < len && !overflow_append(&c->overflow, bytes + taken, len - taken))
        mark_failed(loop, c, ENOMEM);
}

static void on_recv(struct loop *loop, struct uring_conn *c, const struct io_uring_cqe *cqe)
{
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        if (cqe->res > 0)
            deliver(loop, c, buffer_at(&loop->buffers, id), (size_t)cqe->res);
        buffer_ring_give_back(&loop->buffers, id);
    } else if (cqe->res > 0) {
        mark_failed(loop, c, EINVAL); /* bytes without a buffer: cannot happen */
    }
    if (!(cqe->flags & IORING_CQE_F_MORE)) {
        c->recv_armed = false;
        c->in_flight--;
    }
    if (cqe->res == 0)
        c->peer_eof = true;
    else if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -ECANCELED)
        mark_failed(loop, c, -cqe->res);
    touch(loop, c);
}

static void on_send(struct loop *loop, struct uring_conn *c, const struct io_uring_cqe *cqe)
{
    c->send_in_flight = false;
    c->in_flight--;
    if (cqe->res > 0)
        session_output_sent(&c->session, (size_t)cqe->res); /* maybe short: resumed when served */
    else if (cqe->res == 0)
        mark_failed(loop, c, EIO); /* no progress on a non-empty send */
    else if (cqe->res != -ECANCELED)
        mark_failed(loop, c, -cqe->res);
    touch(loop, c);
}

static void on_accept(struct loop *loop, const struct io_uring_cqe *cqe)
{
    if (!(cqe->flags & IORING_CQE_F_MORE))
        loop->accept_armed = false; /* re-armed at the top of the loop */
    if (cqe->res >= 0) {
        loop->counters.connections_accepted++;
        tune_accepted_socket(cqe->res);
        open_conn(loop, cqe->res);
        return;
    }
    int err = -cqe->res;
    if (err == ECANCELED || err == ECONNABORTED || err == EINTR)
        return;
    loop->counters.errors++;
    if (!accept_error_is_transient(err)) {
        fprintf(stderr, "io_uring: accept failed: %s; this loop accepts no more\n", strerror(err));
        loop->accept_broken = true;
        return;
    }
    accept_pause_if_exhausted(err);
}

static void arm_wake(struct loop *loop)
{
    struct io_uring_sqe *sqe = next_sqe(loop);
    io_uring_prep_read(sqe, loop->wake_fd, &loop->wake_value, sizeof loop->wake_value, 0);
    io_uring_sqe_set_data64(sqe, OP_WAKE);
    loop->wake_armed = true;
}

static void arm_accept(struct loop *loop)
{
    struct io_uring_sqe *sqe = next_sqe(loop);
    io_uring_prep_multishot_accept(sqe, loop->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, OP_ACCEPT);
    loop->accept_armed = true;
}

static void on_completion(struct loop *loop, const struct io_uring_cqe *cqe)
{
    uint64_t data = io_uring_cqe_get_data64(cqe);
    struct uring_conn *c = (struct uring_conn *)(uintptr_t)(data & ~OP_MASK);
    switch ((enum op)(data & OP_MASK)) {
    case OP_ACCEPT: on_accept(loop, cqe); break;
    case OP_WAKE:
        loop->wake_armed = false;
        if (!atomic_load(&loop->stop) && !loop->draining)
            arm_wake(loop);
        break;
    case OP_RECV: on_recv(loop, c, cqe); break;
    case OP_SEND: on_send(loop, c, cqe); break;
    case OP_CANCEL: break;
    }
}

/* Handles every CQE there is, then returns the receive buffers in one go. */
static void reap_completions(struct loop *loop)
{
    struct io_uring_cqe *cqe;
    unsigned head;
    unsigned seen = 0;
    io_uring_for_each_cqe(&loop->ring, head, cqe)
    {
        on_completion(loop, cqe);
        seen++;
    }
    io_uring_cq_advance(&loop->ring, seen);
    buffer_ring_publish(&loop->buffers);
}

/* ---- the loop --------------------------------------------------------------- */

static bool wait_error_is_fatal(int ret)
{
    return ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY && ret != -ETIME;
}

static void run_loop(struct loop *loop)
{
    bool timed = conn_timers_enabled(&loop->timers);
    loop->now_ms = monotonic_ms();
    arm_wake(loop);
    while (!atomic_load(&loop->stop)) {
        if (!loop->accept_armed && !loop->accept_broken)
            arm_accept(loop);
        int wait_ms = timed ? conn_timers_wait_ms(&loop->timers, loop->now_ms) : -1;
        int ret;
        if (wait_ms < 0) {
            ret = io_uring_submit_and_wait(&loop->ring, 1);
        } else {
            /* Ends by the earliest deadline; the timeout travels with the enter call. */
            struct __kernel_timespec timeout = {.tv_sec = wait_ms / 1000,
                                                .tv_nsec = (long long)(wait_ms % 1000) * 1000000};
            struct io_uring_cqe *cqe;
            ret = io_uring_submit_and_wait_timeout(&loop->ring, &cqe, 1, &timeout, NULL);
        }
        if (wait_error_is_fatal(ret)) {
            fprintf(stderr, "io_uring: io_uring_submit_and_wait: %s\n", strerror(-ret));
            loop->counters.errors++;
            lifecycle_request_stop();
            break;
        }
        if (timed)
            loop->now_ms = monotonic_ms();
        reap_completions(loop);
        serve_touched(loop);
        if (timed)
            expire(loop);
    }
}

/* Cancels everything and waits (bounded) for the last CQEs, so no memory the
 * kernel may still write to is freed. */
static void drain_loop(struct loop *loop)
{
    loop->draining = true;
    if (loop->accept_armed) {
        struct io_uring_sqe *sqe = next_sqe(loop);
        io_uring_prep_cancel64(sqe, OP_ACCEPT, 0);
        io_uring_sqe_set_data64(sqe, OP_CANCEL);
    }
    if (loop->wake_armed) {
        struct io_uring_sqe *sqe = next_sqe(loop);
        io_uring_prep_cancel64(sqe, OP_WAKE, 0);
        io_uring_sqe_set_data64(sqe, OP_CANCEL);
    }
    for (struct uring_conn *c = loop->conns; c != NULL; c = c->next)
        touch(loop, c);
    serve_touched(loop); /* begins every close; frees those with nothing in flight */

    uint64_t start_ms = monotonic_ms();
    while ((loop->open_conns > 0 || loop->accept_armed || loop->wake_armed) &&
           monotonic_ms() - start_ms < SHUTDOWN_DRAIN_MS) {
        struct __kernel_timespec timeout = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
        struct io_uring_cqe *cqe;
        int ret = io_uring_submit_and_wait_timeout(&loop->ring, &cqe, 1, &timeout, NULL);
        if (wait_error_is_fatal(ret))
            break;
        reap_completions(loop);
        serve_touched(loop);
    }
    if (loop->open_conns > 0) {
        /* Left allocated on purpose: a late CQE may still name them. */
        fprintf(stderr, "io_uring: %zu connections still had operations in flight at exit\n", loop->open_conns);
        loop->counters.errors += loop->open_conns;
    }
}

static void gate_report(struct startup_gate *gate, const char *error)
{
    pthread_mutex_lock(&gate->lock);
    if (error != NULL && gate->error[0] == '\0')
        snprintf(gate->error, sizeof gate->error, "%s", error);
    gate->waiting--;
    pthread_cond_broadcast(&gate->changed);
    pthread_mutex_unlock(&gate->lock);
}

/* In the loop's own thread: with SINGLE_ISSUER the creating thread is the
 * only one allowed to submit, and DEFER_TASKRUN runs completions only there. */
static bool setup_loop(struct loop *loop, char *error, size_t error_len)
{
    int ret = uring_create_ring(&loop->ring, loop->mode);
    if (ret < 0) {
        snprintf(error, error_len, "cannot create a ring: %s", strerror(-ret));
        return false;
    }
    (void)io_uring_register_ring_fd(&loop->ring); /* saves a descriptor lookup per enter */
    ret = buffer_ring_create(&loop->ring, &loop->buffers, BUFFER_COUNT, BUFFER_SIZE);
    if (ret < 0) {
        snprintf(error, error_len, "cannot register the buffer ring: %s", strerror(-ret));
        io_uring_queue_exit(&loop->ring);
        return false;
    }
    return true;
}

static void *loop_thread(void *arg)
{
    struct loop *loop = arg;
    char error[200];
    if (!setup_loop(loop, error, sizeof error)) {
        gate_report(loop->gate, error);
        return NULL;
    }
    gate_report(loop->gate, NULL);
    run_loop(loop);
    drain_loop(loop);
    if (loop->open_conns == 0) /* otherwise the kernel may still use the buffers */
        buffer_ring_destroy(&loop->ring, &loop->buffers);
    io_uring_queue_exit(&loop->ring);
    return NULL;
}

/* ---- the server --------------------------------------------------------------- */

struct uring_server {
    struct server_base base;
    long n;
    struct loop *loops;
    struct startup_gate gate;
};

/* In the signal watcher thread: the only thing it touches is each eventfd. */
static void stop_loops(void *arg)
{
    struct uring_server *srv = arg;
    for (long i = 0; i < srv->n; i++) {
        atomic_store(&srv->loops[i].stop, true);
        (void)eventfd_write(srv->loops[i].wake_fd, 1);
    }
}

/* One SO_REUSEPORT listener per ring; blocking, since io_uring waits for readiness itself. */
static void open_listeners(struct uring_server *srv)
{
    int *listeners = calloc((size_t)srv->n, sizeof listeners[0]);
    if (listeners == NULL)
        lifecycle_fail(cli.architecture, "out of memory");
    server_open_reuseport_listeners(&srv->base, srv->n, SOCKET_BLOCKING, listeners);
    for (long i = 0; i < srv->n; i++)
        srv->loops[i].listen_fd = listeners[i];
    free(listeners);
}

static void start_loops(struct uring_server *srv, const struct ring_mode *mode)
{
    srv->gate.waiting = srv->n;
    srv->gate.error[0] = '\0';
    pthread_mutex_init(&srv->gate.lock, NULL);
    pthread_cond_init(&srv->gate.changed, NULL);
    for (long i = 0; i < srv->n; i++) {
        struct loop *loop = &srv->loops[i];
        loop->mode = mode;
        loop->session = &srv->base.session;
        conn_timers_init(&loop->timers, &srv->base.session.timeouts);
        loop->gate = &srv->gate;
        atomic_init(&loop->stop, false);
        loop->wake_fd = eventfd(0, EFD_CLOEXEC);
        if (loop->wake_fd < 0)
            lifecycle_fail(cli.architecture, "cannot create the wake-up eventfds");
    }
    lifecycle_watch_signals(stop_loops, srv);
    for (long i = 0; i < srv->n; i++)
        if (pthread_create(&srv->loops[i].thread, NULL, loop_thread, &srv->loops[i]) != 0)
            lifecycle_fail(cli.architecture, "cannot start the event-loop threads");
    /* Ready only once every loop has its ring. */
    pthread_mutex_lock(&srv->gate.lock);
    while (srv->gate.waiting > 0)
        pthread_cond_wait(&srv->gate.changed, &srv->gate.lock);
    pthread_mutex_unlock(&srv->gate.lock);
    if (srv->gate.error[0] != '\0')
        lifecycle_fail(cli.architecture, srv->gate.error);
}

int main(int argc, char **argv)
{
    struct uring_server srv;
    memset(&srv, 0, sizeof srv);
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.listener_per_thread = true});
    const struct ring_mode *mode = uring_probe();
    srv.n = srv.base.options.threads;
    srv.loops = aligned_alloc(_Alignof(struct loop), (size_t)srv.n * sizeof srv.loops[0]);
    if (srv.loops == NULL)
        lifecycle_fail(cli.architecture, "out of memory");
    memset(srv.loops, 0, (size_t)srv.n * sizeof srv.loops[0]);
    open_listeners(&srv);
    start_loops(&srv, mode);
    fprintf(stderr,
            "io_uring: %ld ring(s), flags %s|SUBMIT_ALL|CQSIZE (SQ %d, CQ %d), "
            "%d x %d-byte provided buffers per ring\n",
            srv.n, mode->name, RING_SQ_ENTRIES, RING_CQ_ENTRIES, BUFFER_COUNT, BUFFER_SIZE);
    server_announce_ready(&srv.base);

    struct server_counters counters = {0};
    for (long i = 0; i < srv.n; i++) {
        pthread_join(srv.loops[i].thread, NULL);
        counters_add(&counters, &srv.loops[i].counters);
    }
    bool failed = !lifecycle_stopping();
    lifecycle_finish(); /* the watcher writes the eventfds: join it before closing them */
    for (long i = 0; i < srv.n; i++) {
        close(srv.loops[i].listen_fd);
        close(srv.loops[i].wake_fd);
    }
    server_finish(&srv.base, &counters);
    pthread_cond_destroy(&srv.gate.changed);
    pthread_mutex_destroy(&srv.gate.lock);
    free(srv.loops);
    return failed ? 1 : 0;
}

#else /* !ARCHBENCH_HAVE_LIBURING */

int main(int argc, char **argv)
{
    struct server_base base;
    server_start(&base, &cli, argc, argv,
                 (struct server_start_options){.listener_per_thread = true}); /* --help and flag errors still work */
    fprintf(stderr,
            "io_uring: unsupported: built without liburing (liburing.h and -luring were not "
            "found when configuring)\n");
    responses_free(&base.responses);
    return EXIT_UNSUPPORTED;
}

#endif

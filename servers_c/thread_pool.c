/* thread_pool: --threads N workers fed through a bounded queue (mutex and
 * condition variables; FIFO, or the LIFO stack of source 003 with --handoff
 * stack). Two dispatch modes, because they are different architectures:
 *
 *   --dispatch connection  The main thread accepts and queues each connection;
 *                          a worker owns it, with blocking I/O, until it closes
 *                          (source 003). With more open connections than N,
 *                          the rest starve in the queue.
 *   --dispatch request     Half-sync/half-async: the main thread accepts and
 *                          polls every connection (epoll, one-shot); when one
 *                          is readable it is queued, a worker reads what is
 *                          there, answers every complete request (or echoes
 *                          the bytes), and re-arms it. N workers serve any
 *                          number of connections (the design behind source
 *                          000's pool-size sweep).
 *
 * N counts workers only; the accepting/polling thread is one more. (Source 000
 * counted it: its "threads" are N + 1.)
 *
 * Timeouts (--header-timeout, --idle-timeout): under --dispatch connection the
 * worker's blocking I/O applies them (conn_serve_blocking). Under --dispatch
 * request the worker that re-arms a connection stores its deadline in it; the
 * poller, which wakes at least every SWEEP_MAX_MS for this (a fraction of the
 * shortest timeout), sweeps the open connections and claims those that are
 * parked in epoll past their deadline: it answers 408 if a head was cut short
 * and shuts the socket down, which fires its one-shot registration, so the
 * next worker that takes it closes it like any other. Nothing per request but
 * a clock read and a few stores in the worker.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn_io.h"
#include "conn_registry.h"
#include "conn_timer.h"
#include "listener.h"
#include "server.h"
#include "work_queue.h"

enum dispatch { DISPATCH_CONNECTION, DISPATCH_REQUEST };
enum handoff { HANDOFF_QUEUE, HANDOFF_STACK };

static const char *const dispatch_names[] = {"connection", "request", NULL};
static const char *const handoff_names[] = {"queue", "stack", NULL};

static int dispatch_mode = DISPATCH_REQUEST;
static int handoff_mode = HANDOFF_QUEUE;
static long queue_capacity = 16384;

static const struct flag_spec flags[] = {
    {"--dispatch", FLAG_CHOICE, &dispatch_mode, 0, 0, dispatch_names,
     "what a worker takes from the queue: a whole connection, or a readable one (default request)"},
    {"--handoff", FLAG_CHOICE, &handoff_mode, 0, 0, handoff_names, "FIFO queue or LIFO stack (default queue)"},
    {"--queue-capacity", FLAG_INT, &queue_capacity, 1, 1 << 24, NULL,
     "entries the hand-off holds before the producer waits (default 16384)"},
};

static const struct server_cli cli = {
    .architecture = "thread_pool",
    .summary = "N worker threads fed through a bounded queue by one accepting (and, with\n"
               "--dispatch request, polling) thread, which is not counted in N.",
    .threads_help = "worker threads N; the accepting/polling thread is one more",
    .threads_min = 1,
    .threads_max = 4096,
    .extra = flags,
    .extra_count = sizeof flags / sizeof flags[0],
};

#define POLL_BATCH 256
/* The poller sweeps for expired deadlines every 1/8 of the shortest timeout,
 * within these bounds. */
#define SWEEP_MIN_MS 50
#define SWEEP_MAX_MS 1000

/* A connection under --dispatch request. Exactly one party owns it at a time:
 * its one-shot registration in epoll ("parked"), then the queue, then one worker.
 *
 * The hand-off from the worker that re-arms it (A) to the next one (B) goes
 * through the kernel: A's epoll_ctl(EPOLL_CTL_MOD) arms it, the poller's
 * epoll_wait reports it, B takes it from the queue. B may be running before
 * A's epoll_ctl has even returned. ThreadSanitizer counts that epoll_ctl as an
 * access to the descriptor, and its interceptor models a release only for
 * EPOLL_CTL_ADD, so B's close() would race with it as far as TSan can see.
 * Hence the re-arm is completed explicitly: A numbers it (rearm_seq) before
 * epoll_ctl and publishes the number with a release store (rearm_done) after
 * epoll_ctl has returned, its very last access; B waits for that number with
 * an acquire load before its first access (in practice it is already there;
 * otherwise B yields until A is past its last instruction). Real ordering,
 * visible to TSan, two plain moves on x86. */
struct pooled_conn {
    int fd;
    bool waiting_to_write;
    bool timed_out;         /* claimed by the poller's sweep: close on arrival */
    unsigned rearm_seq;     /* written by the owner before it re-arms */
    atomic_uint rearm_done; /* = rearm_seq once that epoll_ctl has returned */
    /* 1 while parked, set (release) by the owner just before it re-arms and
     * cleared only by the poller: when its event arrives, or when its sweep
     * claims it past its deadline. */
    atomic_int parked;
    uint64_t deadline_ms;         /* 0: none; the sweep reads it while parked */
    struct timeout_state timeout; /* the owner's bookkeeping */
    struct pooled_conn *retired_next;
    struct session session;
};

struct pool_server {
    struct server_base base;
    struct work_queue queue;
    pthread_t *workers;
    struct server_counters *worker_counters;
    /* connection dispatch */
    struct conn_registry registry;
    /* request dispatch */
    int epoll_fd;
    int wake_fd;
    _Atomic(struct pooled_conn *) *conns; /* by descriptor: every open connection */
    size_t conns_size;
    size_t conns_high; /* above the highest descriptor used (poller only) */
    /* Closed connections, freed by the poller between its sweeps: the sweep
     * reads connections from conns[] while workers close them. */
    _Atomic(struct pooled_conn *) retired;
    uint64_t sweep_ms;
};

struct worker_arg {
    struct pool_server *srv;
    struct server_counters *counters;
};

/* ---- --dispatch connection ---------------------------------------------- */

static void *connection_worker(void *arg)
{
    struct worker_arg *w = arg;
    struct pool_server *srv = w->srv;
    struct session session;
    if (!session_init(&session, &srv->base.session)) {
        w->counters->errors++;
        return NULL;
    }
    intptr_t item;
    while (work_queue_pop(&srv->queue, &item)) {
        int fd = (int)item;
        conn_registry_add(&srv->registry, fd);
        session_reset(&session);
        if (!lifecycle_stopping())
            conn_serve_blocking(fd, &session, w->counters);
        counters_add_session(w->counters, &session.counters);
        conn_registry_remove(&srv->registry, fd);
        conn_close(fd, &session, CLOSE_LINGERING_MAY_WAIT);
    }
    session_destroy(&session);
    return NULL;
}

static void run_connection_dispatch(struct pool_server *srv, struct server_counters *counters)
{
    for (;;) {
        int fd = server_accept_blocking(&srv->base, SOCKET_BLOCKING, counters);
        if (fd < 0)
            break;
        if (!work_queue_push(&srv->queue, fd))
            close(fd);
    }
}

/* ---- --dispatch request -------------------------------------------------- */

/* Hands the connection over (parks it): after this, it is not ours any more. */
static bool arm(struct pool_server *srv, struct pooled_conn *conn, int op)
{
    int fd = conn->fd;
    struct epoll_event ev = {
        .events = (conn->waiting_to_write ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT,
        .data.ptr = conn,
    };
    unsigned seq = ++conn->rearm_seq;
    atomic_store_explicit(&conn->parked, 1, memory_order_release);
    int rc = epoll_ctl(srv->epoll_fd, op, fd, &ev);
    /* The next owner waits for this store before it touches the connection,
     * so conn is still ours to write here, and the descriptor still open. */
    atomic_store_explicit(&conn->rearm_done, seq, memory_order_release);
    return rc == 0;
}

/* The first thing the next owner does. */
static void wait_for_rearm(struct pooled_conn *conn)
{
    while (atomic_load_explicit(&conn->rearm_done, memory_order_acquire) != conn->rearm_seq)
        sched_yield(); /* the previous owner is between epoll_ctl and its last store */
}

static void retire(struct pool_server *srv, struct pooled_conn *conn)
{
    struct pooled_conn *head = atomic_load_explicit(&srv->retired, memory_order_relaxed);
    do {
        conn->retired_next = head;
    } while (
        !atomic_compare_exchange_weak_explicit(&srv->retired, &head, conn, memory_order_release, memory_order_relaxed));
}

/* In the poller, never during a sweep. */
static void free_retired(struct pool_server *srv)
{
    if (atomic_load_explicit(&srv->retired, memory_order_relaxed) == NULL)
        return;
    struct pooled_conn *conn = atomic_exchange_explicit(&srv->retired, NULL, memory_order_acquire);
    while (conn != NULL) {
        struct pooled_conn *next = conn->retired_next;
        free(conn);
        conn = next;
    }
}

static void close_pooled(struct pool_server *srv, struct pooled_conn *conn, enum conn_close_mode mode,
                         struct server_counters *counters)
{
    counters_add_session(counters, &conn->session.counters);
    atomic_store(&srv->conns[conn->fd], NULL);
    conn_close(conn->fd, &conn->session, mode);
    session_destroy(&conn->session);
    retire(srv, conn);
}

/* Sets the deadline the sweep will see while the connection is parked; false
 * when it has already passed (a head that trickles in too slowly). */
static bool set_deadline(struct pooled_conn *conn)
{
    const struct session_timeouts *cfg = &conn->session.timeouts;
    if (!timeouts_enabled(cfg))
        return true;
    uint64_t now = monotonic_ms();
    timeout_state_update(&conn->timeout, cfg, &conn->session, now);
    conn->deadline_ms = conn->timeout.kind == TIMEOUT_NONE ? 0 : conn->timeout.deadline_ms;
    return conn->deadline_ms == 0 || conn->deadline_ms > now;
}

static void *request_worker(void *arg)
{
    struct worker_arg *w = arg;
    struct pool_server *srv = w->srv;
    intptr_t item;
    while (work_queue_pop(&srv->queue, &item)) {
        struct pooled_conn *conn = (struct pooled_conn *)item;
        wait_for_rearm(conn);
        if (conn->timed_out) { /* the poller answered and shut it down */
            close_pooled(srv, conn, CLOSE_LINGERING, w->counters);
            continue;
        }
        enum conn_next next = conn->waiting_to_write ? conn_on_writable(conn->fd, &conn->session, w->counters)
                                                     : conn_on_readable(conn->fd, &conn->session, w->counters);
        if (next == CONN_CLOSE) {
            close_pooled(srv, conn, CLOSE_LINGERING, w->counters);
            continue;
        }
        conn->waiting_to_write = next == CONN_WANT_WRITE;
        if (!set_deadline(conn)) {
            conn_timed_out(conn->fd, &conn->session, w->counters);
            close_pooled(srv, conn, CLOSE_LINGERING, w->counters);
            continue;
        }
        if (!arm(srv, conn, EPOLL_CTL_MOD)) {
            /* Not armed (ENOMEM), so no event will come: take it back, unless
             * the sweep claimed it meanwhile; then it stays open until shutdown
             * (teardown closes it), since the sweep may still be using it. */
            int parked = 1;
            w->counters->errors++;
            if (atomic_compare_exchange_strong_explicit(&conn->parked, &parked, 0, memory_order_acquire,
                                                        memory_order_relaxed))
                close_pooled(srv, conn, CLOSE_ABRUPTLY, w->counters);
        }
    }
    return NULL;
}

/* In the poller: claims every parked connection past its deadline. */
static void sweep(struct pool_server *srv, uint64_t now, struct server_counters *counters)
{
    for (size_t fd = 0; fd < srv->conns_high; fd++) {
        struct pooled_conn *conn = atomic_load_explicit(&srv->conns[fd], memory_order_acquire);
        if (conn == NULL || atomic_load_explicit(&conn->parked, memory_order_acquire) != 1)
            continue; /* not parked: a worker or the queue has it (or it is retired) */
        if (conn->deadline_ms == 0 || conn->deadline_ms > now)
            continue;
        /* Parked stays parked until the poller itself takes it: it is ours now. */
        atomic_store_explicit(&conn->parked, 0, memory_order_relaxed);
        conn->timed_out = true;
        conn_timed_out(conn->fd, &conn->session, counters);
        shutdown(conn->fd, SHUT_RDWR); /* fires the one-shot registration: HUP */
    }
}

static void accept_pending(struct pool_server *srv, struct server_counters *counters)
{
    for (;;) {
        int fd = accept_connection(srv->base.listen_fd, SOCKET_NONBLOCKING);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            counters->errors += errno != EINTR;
            accept_pause_if_exhausted(errno);
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return;
        }
        counters->connections_accepted++;
        struct pooled_conn *conn = calloc(1, sizeof *conn);
        if (conn == NULL || (size_t)fd >= srv->conns_size || !session_init(&conn->session, &srv->base.session)) {
            counters->errors++;
            free(conn);
            close(fd);
            continue;
        }
        conn->fd = fd;
        if ((size_t)fd >= srv->conns_high)
            srv->conns_high = (size_t)fd + 1;
        (void)set_deadline(conn); /* a fresh one: in the future */
        atomic_store(&srv->conns[fd], conn);
        if (!arm(srv, conn, EPOLL_CTL_ADD)) {
            atomic_store_explicit(&conn->parked, 0, memory_order_relaxed);
            counters->errors++;
            close_pooled(srv, conn, CLOSE_ABRUPTLY, counters);
        }
    }
}

static void run_request_dispatch(struct pool_server *srv, struct server_counters *counters)
{
    struct epoll_event events[POLL_BATCH];
    bool timed = srv->sweep_ms > 0;
    uint64_t next_sweep = timed ? monotonic_ms() + srv->sweep_ms : 0;
    while (!lifecycle_stopping()) {
        int timeout = -1;
        if (timed) {
            uint64_t now = monotonic_ms();
            timeout = next_sweep > now ? (int)(next_sweep - now) : 0;
        }
        int n = epoll_wait(srv->epoll_fd, events, POLL_BATCH, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            counters->errors++;
            return;
        }
        for (int i = 0; i < n; i++) {
            void *tag = events[i].data.ptr;
            if (tag == &srv->wake_fd)
                return;
            if (tag == &srv->base.listen_fd) {
                accept_pending(srv, counters);
                continue;
            }
            struct pooled_conn *conn = tag;
            /* Unparked: from here the sweep leaves it alone. The acquire pairs
             * with the owner's release in arm(). */
            if (atomic_load_explicit(&conn->parked, memory_order_acquire) == 1)
                atomic_store_explicit(&conn->parked, 0, memory_order_relaxed);
            if (!work_queue_push(&srv->queue, (intptr_t)conn))
                return; /* closed: stopping */
        }
        free_retired(srv);
        if (timed) {
            uint64_t now = monotonic_ms();
            if (now >= next_sweep) {
                sweep(srv, now, counters);
                next_sweep = now + srv->sweep_ms;
            }
        }
    }
}

static void setup_request_dispatch(struct pool_server *srv)
{
    struct rlimit lim;
    srv->conns_size = 65536;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        srv->conns_size = (size_t)lim.rlim_cur;
    srv->conns = calloc(srv->conns_size, sizeof srv->conns[0]);
    srv->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    srv->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (srv->conns == NULL || srv->epoll_fd < 0 || srv->wake_fd < 0)
        lifecycle_fail(cli.architecture, "cannot set up the poller");
    const struct session_timeouts *t = &srv->base.session.timeouts;
    uint32_t shortest = t->header_ms > 0 && (t->idle_ms == 0 || t->header_ms < t->idle_ms) ? t->header_ms : t->idle_ms;
    srv->sweep_ms = shortest / 8;
    if (shortest > 0 && srv->sweep_ms < SWEEP_MIN_MS)
        srv->sweep_ms = SWEEP_MIN_MS;
    if (srv->sweep_ms > SWEEP_MAX_MS)
        srv->sweep_ms = SWEEP_MAX_MS;
    struct epoll_event listen_ev = {.events = EPOLLIN, .data.ptr = &srv->base.listen_fd};
    struct epoll_event wake_ev = {.events = EPOLLIN, .data.ptr = &srv->wake_fd};
    if (epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, srv->base.listen_fd, &listen_ev) != 0 ||
        epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, srv->wake_fd, &wake_ev) != 0)
        lifecycle_fail(cli.architecture, "cannot register with epoll");
}

static void teardown_request_dispatch(struct pool_server *srv, struct server_counters *counters)
{
    for (size_t fd = 0; fd < srv->conns_size; fd++) {
        struct pooled_conn *conn = atomic_load(&srv->conns[fd]);
        if (conn != NULL)
            close_pooled(srv, conn, CLOSE_ABRUPTLY, counters);
    }
    free_retired(srv);
    free(srv->conns);
    close(srv->wake_fd);
    close(srv->epoll_fd);
}

/* ---- common -------------------------------------------------------------- */

static void wake(void *arg)
{
    struct pool_server *srv = arg;
    if (dispatch_mode == DISPATCH_CONNECTION) {
        shutdown(srv->base.listen_fd, SHUT_RDWR);
        conn_registry_shutdown_all(&srv->registry);
    } else {
        uint64_t one = 1;
        (void)!write(srv->wake_fd, &one, sizeof one);
    }
    work_queue_close(&srv->queue);
}

int main(int argc, char **argv)
{
    struct pool_server srv = {.epoll_fd = -1, .wake_fd = -1};
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = false});
    /* Options are parsed only now: the listener's blocking mode follows --dispatch. */
    if (dispatch_mode == DISPATCH_REQUEST && !listener_set_nonblocking(srv.base.listen_fd))
        lifecycle_fail(cli.architecture, "cannot make the listener non-blocking");
    long n = srv.base.options.threads;
    if (!work_queue_init(&srv.queue, (size_t)queue_capacity,
                         handoff_mode == HANDOFF_STACK ? WORK_QUEUE_LIFO : WORK_QUEUE_FIFO) ||
        !conn_registry_init(&srv.registry))
        lifecycle_fail(cli.architecture, "out of memory");
    if (dispatch_mode == DISPATCH_REQUEST)
        setup_request_dispatch(&srv);
    srv.workers = calloc((size_t)n, sizeof srv.workers[0]);
    srv.worker_counters = calloc((size_t)n, sizeof srv.worker_counters[0]);
    struct worker_arg *args = calloc((size_t)n, sizeof args[0]);
    if (srv.workers == NULL || srv.worker_counters == NULL || args == NULL)
        lifecycle_fail(cli.architecture, "out of memory");

    lifecycle_watch_signals(wake, &srv);
    void *(*worker)(void *) = dispatch_mode == DISPATCH_REQUEST ? request_worker : connection_worker;
    for (long i = 0; i < n; i++) {
        args[i] = (struct worker_arg){&srv, &srv.worker_counters[i]};
        if (pthread_create(&srv.workers[i], NULL, worker, &args[i]) != 0)
            lifecycle_fail(cli.architecture, "cannot start worker threads");
    }
    server_announce_ready(&srv.base);

    struct server_counters counters = {0};
    if (dispatch_mode == DISPATCH_REQUEST)
        run_request_dispatch(&srv, &counters);
    else
        run_connection_dispatch(&srv, &counters);
    bool failed = !lifecycle_stopping();

    lifecycle_request_stop();
    for (long i = 0; i < n; i++) {
        pthread_join(srv.workers[i], NULL);
        counters_add(&counters, &srv.worker_counters[i]);
    }
    intptr_t leftover;
    while (work_queue_take(&srv.queue, &leftover))
        if (dispatch_mode == DISPATCH_CONNECTION)
            close((int)leftover); /* request mode: closed with the table below */
    if (dispatch_mode == DISPATCH_REQUEST)
        teardown_request_dispatch(&srv, &counters);

    server_finish(&srv.base, &counters);
    work_queue_destroy(&srv.queue);
    conn_registry_destroy(&srv.registry);
    free(args);
    free(srv.worker_counters);
    free(srv.workers);
    return failed ? 1 : 0;
}

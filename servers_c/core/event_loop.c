#include "event_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "conn_io.h"
#include "conn_timer.h"
#include "session.h"
#include "listener.h"
#include "server.h"

const char *const trigger_names[] = {"level", "edge", NULL};

#define EVENT_BATCH 512
/* Level-triggered listeners take at most this many connections per wake-up, so
 * a burst of connects cannot starve the connections already open. */
#define ACCEPT_BATCH_LEVEL 64

struct loop_conn {
    struct conn_timer timer;
    int fd;
    bool waiting_to_write;
    bool out_registered; /* level-triggered: interest is EPOLLOUT */
    struct session session;
};

struct event_loop {
    int epoll_fd;
    int wake_fd;
    int listen_fd;
    bool edge;
    const struct session_config *session;
    atomic_bool stopping;
    pthread_mutex_t inbox_lock;
    int *inbox;
    size_t inbox_len;
    size_t inbox_cap;
    struct loop_conn **conns; /* by descriptor, for teardown */
    size_t conns_size;
    struct conn_timers timers; /* --header-timeout, --idle-timeout */
    uint64_t now_ms;           /* read once per iteration and per accept, when timeouts are on */
    struct server_counters counters;
};

/* epoll data for the two non-connection descriptors */
static char wake_tag;
static char listen_tag;

static void destroy(struct event_loop *loop);

struct event_loop *event_loop_create(const struct event_loop_options *options)
{
    struct event_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return NULL;
    loop->epoll_fd = loop->wake_fd = -1;
    loop->listen_fd = options->listen_fd;
    loop->edge = options->edge_triggered;
    loop->session = options->session;
    conn_timers_init(&loop->timers, &options->session->timeouts);
    loop->now_ms = monotonic_ms();
    pthread_mutex_init(&loop->inbox_lock, NULL);
    struct rlimit lim;
    loop->conns_size = 65536;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        loop->conns_size = (size_t)lim.rlim_cur;
    loop->conns = calloc(loop->conns_size, sizeof loop->conns[0]);
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    loop->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (loop->conns == NULL || loop->epoll_fd < 0 || loop->wake_fd < 0)
        goto fail;
    struct epoll_event wake = {.events = EPOLLIN, .data.ptr = &wake_tag};
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->wake_fd, &wake) != 0)
        goto fail;
    if (loop->listen_fd >= 0) {
        struct epoll_event listen = {.events = EPOLLIN, .data.ptr = &listen_tag};
        if (options->exclusive_accept)
            listen.events |= EPOLLEXCLUSIVE;
        else if (loop->edge)
            listen.events |= EPOLLET;
        if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->listen_fd, &listen) != 0)
            goto fail;
    }
    return loop;
fail:
    destroy(loop);
    return NULL;
}

static void wake(struct event_loop *loop)
{
    uint64_t one = 1;
    (void)!write(loop->wake_fd, &one, sizeof one);
}

bool event_loop_adopt(struct event_loop *loop, int fd)
{
    pthread_mutex_lock(&loop->inbox_lock);
    if (loop->inbox_len == loop->inbox_cap) {
        size_t cap = loop->inbox_cap ? 2 * loop->inbox_cap : 64;
        int *grown = realloc(loop->inbox, cap * sizeof grown[0]);
        if (grown == NULL) {
            pthread_mutex_unlock(&loop->inbox_lock);
            return false;
        }
        loop->inbox = grown;
        loop->inbox_cap = cap;
    }
    bool was_empty = loop->inbox_len == 0;
    loop->inbox[loop->inbox_len++] = fd;
    pthread_mutex_unlock(&loop->inbox_lock);
    if (was_empty) /* one wake-up per batch of hand-overs */
        wake(loop);
    return true;
}

void event_loop_stop(struct event_loop *loop)
{
    atomic_store(&loop->stopping, true);
    wake(loop);
}

static void close_conn(struct event_loop *loop, struct loop_conn *conn, enum conn_close_mode mode)
{
    counters_add_session(&loop->counters, &conn->session.counters);
    conn_timers_remove(&conn->timer);
    loop->conns[conn->fd] = NULL;
    conn_close(conn->fd, &conn->session, mode);
    session_destroy(&conn->session);
    free(conn);
}

static void add_conn(struct event_loop *loop, int fd)
{
    struct loop_conn *conn = calloc(1, sizeof *conn);
    if (conn == NULL || (size_t)fd >= loop->conns_size || !session_init(&conn->session, loop->session)) {
        loop->counters.errors++;
        if (conn != NULL)
            session_destroy(&conn->session);
        free(conn);
        close(fd);
        return;
    }
    conn->fd = fd;
    loop->conns[fd] = conn;
    struct epoll_event ev = {.data.ptr = conn};
    ev.events = loop->edge ? EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET : EPOLLIN;
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        loop->counters.errors++;
        close_conn(loop, conn, CLOSE_ABRUPTLY);
        return;
    }
    if (conn_timers_enabled(&loop->timers)) {
        /* Its header deadline runs from its accept: an edge-triggered accept drains the backlog in one iteration,
         * and the iteration's clock would date the last connections from before they connected. */
        loop->now_ms = monotonic_ms();
        conn_timers_update(&loop->timers, &conn->timer, &conn->session, loop->now_ms);
    }
}

static void take_accepted(void *loop, int fd) { add_conn(loop, fd); }

static void accept_pending(struct event_loop *loop)
{
    /* edge-triggered: until EAGAIN, or the connections left would wait for the next edge */
    server_accept_pending(loop->listen_fd, loop->edge ? 0 : ACCEPT_BATCH_LEVEL, take_accepted, loop, &loop->counters);
}

static void take_adopted(struct event_loop *loop)
{
    uint64_t ignored;
    (void)!read(loop->wake_fd, &ignored, sizeof ignored);
    pthread_mutex_lock(&loop->inbox_lock);
    int *fds = loop->inbox;
    size_t n = loop->inbox_len;
    loop->inbox = NULL;
    loop->inbox_len = loop->inbox_cap = 0;
    pthread_mutex_unlock(&loop->inbox_lock);
    for (size_t i = 0; i < n; i++)
        add_conn(loop, fds[i]);
    free(fds);
}

/* Level-triggered only: follow the connection's wish with the interest set. */
static bool update_interest(struct event_loop *loop, struct loop_conn *conn)
{
    if (loop->edge || conn->out_registered == conn->waiting_to_write)
        return true;
    struct epoll_event ev = {.events = conn->waiting_to_write ? EPOLLOUT : EPOLLIN, .data.ptr = conn};
    conn->out_registered = conn->waiting_to_write;
    return epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, conn->fd, &ev) == 0;
}

static void serve_event(struct event_loop *loop, struct loop_conn *conn, uint32_t events)
{
    enum conn_next next;
    if (conn->waiting_to_write) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return; /* new input waits until the blocked output drains */
        next = conn_on_writable(conn->fd, &conn->session, &loop->counters);
    } else {
        if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)))
            return; /* edge-triggered: writable again, nothing pending */
        next = conn_on_readable(conn->fd, &conn->session, &loop->counters);
        /* A short read ends reading early; when the same edge also carried the
         * peer's FIN, no later edge will report it, so read on to the EOF. */
        if (next == CONN_WANT_READ && loop->edge && (events & EPOLLRDHUP))
            next = conn_on_readable(conn->fd, &conn->session, &loop->counters);
    }
    if (next == CONN_CLOSE) {
        close_conn(loop, conn, CLOSE_LINGERING);
        return;
    }
    conn->waiting_to_write = next == CONN_WANT_WRITE;
    if (!update_interest(loop, conn)) {
        loop->counters.errors++;
        close_conn(loop, conn, CLOSE_ABRUPTLY);
        return;
    }
    if (conn_timers_enabled(&loop->timers))
        conn_timers_update(&loop->timers, &conn->timer, &conn->session, loop->now_ms);
}

/* Closes every connection whose deadline has passed. */
static void expire(struct event_loop *loop)
{
    struct conn_timer *t;
    while ((t = conn_timers_expired(&loop->timers, loop->now_ms)) != NULL) {
        struct loop_conn *conn = CONN_TIMER_OWNER(t, struct loop_conn, timer);
        conn_timed_out(conn->fd, &conn->session, &loop->counters);
        close_conn(loop, conn, CLOSE_LINGERING);
    }
}

void event_loop_run(struct event_loop *loop)
{
    struct epoll_event events[EVENT_BATCH];
    bool timed = conn_timers_enabled(&loop->timers);
    while (!atomic_load(&loop->stopping)) {
        /* Sleep at most until the earliest deadline; one clock read per iteration. */
        int timeout = timed ? conn_timers_wait_ms(&loop->timers, loop->now_ms) : -1;
        int n = epoll_wait(loop->epoll_fd, events, EVENT_BATCH, timeout);
        if (timed)
            loop->now_ms = monotonic_ms();
        if (n < 0) {
            if (errno == EINTR)
                continue;
            loop->counters.errors++;
            return;
        }
        for (int i = 0; i < n; i++) {
            void *tag = events[i].data.ptr;
            if (tag == &wake_tag)
                take_adopted(loop);
            else if (tag == &listen_tag)
                accept_pending(loop);
            else
                serve_event(loop, tag, events[i].events);
        }
        if (timed)
            expire(loop);
    }
}

static void destroy(struct event_loop *loop)
{
    if (loop == NULL)
        return;
    if (loop->conns != NULL) {
        for (size_t fd = 0; fd < loop->conns_size; fd++)
            if (loop->conns[fd] != NULL)
                close_conn(loop, loop->conns[fd], CLOSE_ABRUPTLY);
        free(loop->conns);
    }
    for (size_t i = 0; i < loop->inbox_len; i++)
        close(loop->inbox[i]);
    free(loop->inbox);
    if (loop->wake_fd >= 0)
        close(loop->wake_fd);
    if (loop->epoll_fd >= 0)
        close(loop->epoll_fd);
    pthread_mutex_destroy(&loop->inbox_lock);
    free(loop);
}

struct server_counters event_loop_finish(struct event_loop *loop)
{
    struct server_counters counters = {0};
    if (loop->conns != NULL) {
        for (size_t fd = 0; fd < loop->conns_size; fd++)
            if (loop->conns[fd] != NULL)
                close_conn(loop, loop->conns[fd], CLOSE_ABRUPTLY);
    }
    counters = loop->counters;
    destroy(loop);
    return counters;
}

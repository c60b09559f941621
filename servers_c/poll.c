/* poll: one thread, poll(2), level-triggered (source 004's poll server). The
 * whole descriptor array goes to the kernel on every call and every entry is
 * scanned on return: the O(connections) cost per wake-up that epoll removes,
 * which is what the comparison is meant to show. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "conn_io.h"
#include "conn_timer.h"
#include "listener.h"
#include "server.h"

static const struct server_cli cli = {
    .architecture = "poll",
    .summary = "One thread calls poll() over the listener and every connection and serves\n"
               "whatever is ready.",
    .threads_help = "must be 1: a single loop",
    .threads_min = 1,
    .threads_max = 1,
};

/* Slots 0 and 1 of the arrays are the stop eventfd and the listener. */
enum { WAKE_SLOT, LISTEN_SLOT, FIRST_CONN_SLOT };
#define ACCEPT_BATCH 64

struct poll_conn {
    struct conn_timer timer;
    size_t slot; /* its index in fds and conns (compaction moves it) */
    bool waiting_to_write;
    struct session session;
};

struct poll_server {
    struct server_base base;
    int wake_fd;
    struct pollfd *fds;
    struct poll_conn **conns; /* parallel to fds */
    size_t count;
    size_t capacity;
    struct conn_timers timers; /* --header-timeout, --idle-timeout */
    uint64_t now_ms;           /* read once per iteration, when timeouts are on */
    struct server_counters counters;
};

static void wake(void *arg)
{
    struct poll_server *srv = arg;
    uint64_t one = 1;
    (void)!write(srv->wake_fd, &one, sizeof one);
}

static void add_conn(struct poll_server *srv, int fd)
{
    struct poll_conn *conn = calloc(1, sizeof *conn);
    if (srv->count == srv->capacity || conn == NULL || !session_init(&conn->session, &srv->base.session)) {
        srv->counters.errors++;
        if (conn != NULL)
            session_destroy(&conn->session);
        free(conn);
        close(fd);
        return;
    }
    srv->fds[srv->count] = (struct pollfd){.fd = fd, .events = POLLIN};
    srv->conns[srv->count] = conn;
    conn->slot = srv->count;
    srv->count++;
    if (conn_timers_enabled(&srv->timers))
        conn_timers_update(&srv->timers, &conn->timer, &conn->session, srv->now_ms);
}

static void take_accepted(void *srv, int fd) { add_conn(srv, fd); }

static void accept_pending(struct poll_server *srv)
{
    server_accept_pending(srv->base.listen_fd, ACCEPT_BATCH, take_accepted, srv, &srv->counters);
}

/* Closes the connection in slot i, leaving a hole for compact(). */
static void close_slot(struct poll_server *srv, size_t i)
{
    struct pollfd *p = &srv->fds[i];
    struct poll_conn *conn = srv->conns[i];
    counters_add_session(&srv->counters, &conn->session.counters);
    conn_timers_remove(&conn->timer);
    conn_close(p->fd, &conn->session, CLOSE_LINGERING);
    session_destroy(&conn->session);
    free(conn);
    srv->conns[i] = NULL;
    p->fd = -1;
}

/* Serves slot i; returns false when the connection was closed (slot freed). */
static bool serve_slot(struct poll_server *srv, size_t i)
{
    struct pollfd *p = &srv->fds[i];
    struct poll_conn *conn = srv->conns[i];
    enum conn_next next = conn->waiting_to_write ? conn_on_writable(p->fd, &conn->session, &srv->counters)
                                                 : conn_on_readable(p->fd, &conn->session, &srv->counters);
    if (next == CONN_CLOSE) {
        close_slot(srv, i);
        return false;
    }
    conn->waiting_to_write = next == CONN_WANT_WRITE;
    p->events = conn->waiting_to_write ? POLLOUT : POLLIN;
    if (conn_timers_enabled(&srv->timers))
        conn_timers_update(&srv->timers, &conn->timer, &conn->session, srv->now_ms);
    return true;
}

/* Closes every connection whose deadline has passed; true if any was. */
static bool expire(struct poll_server *srv)
{
    bool closed_any = false;
    struct conn_timer *t;
    while ((t = conn_timers_expired(&srv->timers, srv->now_ms)) != NULL) {
        struct poll_conn *conn = CONN_TIMER_OWNER(t, struct poll_conn, timer);
        conn_timed_out(srv->fds[conn->slot].fd, &conn->session, &srv->counters);
        close_slot(srv, conn->slot);
        closed_any = true;
    }
    return closed_any;
}

/* Fills the holes left by closed connections by moving the last entries in. */
static void compact(struct poll_server *srv)
{
    size_t i = FIRST_CONN_SLOT;
    while (i < srv->count) {
        if (srv->fds[i].fd >= 0) {
            i++;
            continue;
        }
        srv->count--;
        srv->fds[i] = srv->fds[srv->count];
        srv->conns[i] = srv->conns[srv->count];
        if (srv->conns[i] != NULL)
            srv->conns[i]->slot = i;
    }
}

static void run(struct poll_server *srv)
{
    bool timed = conn_timers_enabled(&srv->timers);
    while (!lifecycle_stopping()) {
        /* Sleep at most until the earliest deadline; one clock read per iteration. */
        int timeout = timed ? conn_timers_wait_ms(&srv->timers, srv->now_ms) : -1;
        int ready = poll(srv->fds, srv->count, timeout);
        if (timed)
            srv->now_ms = monotonic_ms();
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            srv->counters.errors++;
            return;
        }
        if (srv->fds[WAKE_SLOT].revents)
            return;
        bool closed_any = false;
        size_t scanned = srv->count; /* connections accepted below wait for the next poll */
        for (size_t i = FIRST_CONN_SLOT; i < scanned && ready > 0; i++) {
            if (srv->fds[i].revents == 0)
                continue;
            ready--;
            closed_any |= !serve_slot(srv, i);
        }
        if (srv->fds[LISTEN_SLOT].revents & POLLIN)
            accept_pending(srv);
        if (timed)
            closed_any |= expire(srv);
        if (closed_any)
            compact(srv);
    }
}

int main(int argc, char **argv)
{
    struct poll_server srv = {.count = FIRST_CONN_SLOT};
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = true});
    struct rlimit lim;
    srv.capacity = 65536;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        srv.capacity = (size_t)lim.rlim_cur;
    conn_timers_init(&srv.timers, &srv.base.session.timeouts);
    srv.now_ms = monotonic_ms();
    srv.fds = calloc(srv.capacity, sizeof srv.fds[0]);
    srv.conns = calloc(srv.capacity, sizeof srv.conns[0]);
    srv.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (srv.fds == NULL || srv.conns == NULL || srv.wake_fd < 0)
        lifecycle_fail(cli.architecture, "cannot set up the poll set");
    srv.fds[WAKE_SLOT] = (struct pollfd){.fd = srv.wake_fd, .events = POLLIN};
    srv.fds[LISTEN_SLOT] = (struct pollfd){.fd = srv.base.listen_fd, .events = POLLIN};
    lifecycle_watch_signals(wake, &srv);
    server_announce_ready(&srv.base);

    run(&srv);
    bool failed = !lifecycle_stopping();
    for (size_t i = FIRST_CONN_SLOT; i < srv.count; i++) {
        if (srv.conns[i] == NULL)
            continue;
        counters_add_session(&srv.counters, &srv.conns[i]->session.counters);
        close(srv.fds[i].fd);
        session_destroy(&srv.conns[i]->session);
        free(srv.conns[i]);
    }
    server_finish(&srv.base, &srv.counters);
    close(srv.wake_fd);
    free(srv.conns);
    free(srv.fds);
    return failed ? 1 : 0;
}

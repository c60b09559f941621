#include "pong_loop.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pong_framing.h"
#include "server.h"

#define EVENT_BATCH 512
#define READ_BUFFER_BYTES 65536

struct pong_conn {
    int fd;
    struct pong_framing framing;
    bool input_ended; /* EOF read: close once nothing is owed */
    uint64_t owed;    /* response bytes not yet taken by the kernel */
    uint64_t requests;
};

struct pong_loop {
    int epoll_fd;
    int wake_fd;
    int listen_fd;
    atomic_bool stopping;
    const struct pong_block *block;
    struct pong_conn **conns; /* by descriptor, for teardown */
    size_t conns_size;
    struct server_counters counters;
    char input[READ_BUFFER_BYTES]; /* what requests say does not matter: read here and dropped */
};

/* epoll data for the two descriptors that are not connections */
static char wake_tag;
static char listen_tag;

static void destroy(struct pong_loop *loop);

struct pong_loop *pong_loop_create(int listen_fd, const struct pong_block *block)
{
    struct pong_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return NULL;
    loop->epoll_fd = loop->wake_fd = -1;
    loop->listen_fd = listen_fd;
    loop->block = block;
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
    /* Level-triggered listener: a backlog left behind by EMFILE is reported again. */
    struct epoll_event listen = {.events = EPOLLIN, .data.ptr = &listen_tag};
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->wake_fd, &wake) != 0 ||
        epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, listen_fd, &listen) != 0)
        goto fail;
    return loop;
fail:
    destroy(loop);
    return NULL;
}

void pong_loop_stop(struct pong_loop *loop)
{
    atomic_store(&loop->stopping, true);
    uint64_t one = 1;
    (void)!write(loop->wake_fd, &one, sizeof one);
}

static void count_io_error(struct pong_loop *loop, int err)
{
    if (err == ECONNRESET || err == EPIPE)
        loop->counters.connection_resets++;
    else
        loop->counters.errors++;
}

static void close_conn(struct pong_loop *loop, struct pong_conn *conn)
{
    /* served: some response went out (what is owed is less than all that was asked) */
    bool answered = conn->requests > 0 && conn->owed < conn->requests * loop->block->response_len;
    loop->counters.connections_served += answered;
    loop->counters.requests_served += conn->requests;
    loop->conns[conn->fd] = NULL;
    close(conn->fd);
    free(conn);
}

static void add_conn(void *ctx, int fd)
{
    struct pong_loop *loop = ctx;
    struct pong_conn *conn = calloc(1, sizeof *conn);
    if (conn == NULL || (size_t)fd >= loop->conns_size) {
        loop->counters.errors++;
        free(conn);
        close(fd);
        return;
    }
    conn->fd = fd;
    loop->conns[fd] = conn;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = conn};
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        loop->counters.errors++;
        close_conn(loop, conn);
    }
}

/* Sends what is owed; false if the connection is finished (and closed). */
static bool send_owed(struct pong_loop *loop, struct pong_conn *conn)
{
    enum pong_send_result sent = pong_send_owed(conn->fd, loop->block, &conn->owed);
    if (sent == PONG_SEND_FAILED) {
        count_io_error(loop, errno);
        close_conn(loop, conn);
        return false;
    }
    if (sent == PONG_SENT_ALL && conn->input_ended) {
        close_conn(loop, conn);
        return false;
    }
    return true;
}

/* Reads until drained, answering each read's requests with one send; stops
 * reading while a send is blocked. `peer_closing`: the event carried the
 * client's FIN, which no later edge will report, so a short read is not the end. */
static void serve_input(struct pong_loop *loop, struct pong_conn *conn, bool peer_closing)
{
    for (;;) {
        ssize_t n = read(conn->fd, loop->input, sizeof loop->input);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                count_io_error(loop, errno);
                close_conn(loop, conn);
            }
            return;
        }
        if (n == 0)
            conn->input_ended = true;
        size_t requests = pong_count_requests(&conn->framing, loop->input, (size_t)n);
        conn->requests += requests;
        conn->owed += (uint64_t)requests * loop->block->response_len;
        if (conn->owed > 0 || conn->input_ended) {
            if (!send_owed(loop, conn) || conn->owed > 0)
                return; /* closed, or blocked: EPOLLOUT resumes it */
        }
        if ((size_t)n < sizeof loop->input && !peer_closing)
            return; /* a short read: drained */
    }
}

static void serve_event(struct pong_loop *loop, struct pong_conn *conn, uint32_t events)
{
    if (conn->owed > 0) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            return; /* new input waits until the blocked output drains */
        if (!send_owed(loop, conn) || conn->owed > 0)
            return;
        /* Drained: read what arrived meanwhile (its edge came and went unread). */
        serve_input(loop, conn, true);
        return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
        serve_input(loop, conn, events & EPOLLRDHUP);
}

void pong_loop_run(struct pong_loop *loop)
{
    struct epoll_event events[EVENT_BATCH];
    while (!atomic_load(&loop->stopping)) {
        int n = epoll_wait(loop->epoll_fd, events, EVENT_BATCH, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            loop->counters.errors++;
            return;
        }
        for (int i = 0; i < n; i++) {
            void *tag = events[i].data.ptr;
            if (tag == &wake_tag)
                continue; /* the loop condition sees the stop */
            if (tag == &listen_tag)
                server_accept_pending(loop->listen_fd, 0, add_conn, loop, &loop->counters);
            else
                serve_event(loop, tag, events[i].events);
        }
    }
}

static void destroy(struct pong_loop *loop)
{
    if (loop->conns != NULL) {
        for (size_t fd = 0; fd < loop->conns_size; fd++)
            if (loop->conns[fd] != NULL)
                close_conn(loop, loop->conns[fd]);
        free(loop->conns);
    }
    if (loop->wake_fd >= 0)
        close(loop->wake_fd);
    if (loop->epoll_fd >= 0)
        close(loop->epoll_fd);
    free(loop);
}

struct server_counters pong_loop_finish(struct pong_loop *loop)
{
    if (loop->conns != NULL)
        for (size_t fd = 0; fd < loop->conns_size; fd++)
            if (loop->conns[fd] != NULL)
                close_conn(loop, loop->conns[fd]);
    struct server_counters counters = loop->counters;
    destroy(loop);
    return counters;
}

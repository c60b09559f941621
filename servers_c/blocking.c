/* blocking: one thread serves one connection at a time, with blocking reads and
 * writes, until that connection closes (the single-threaded server of sources
 * 001 and 003). While a keep-alive client stays connected every other client
 * waits in the listen backlog: the study reports those waits as timeouts. */
#include <sys/socket.h>
#include <unistd.h>

#include "conn_io.h"
#include "conn_registry.h"
#include "listener.h"
#include "server.h"

static const struct server_cli cli = {
    .architecture = "blocking",
    .summary = "One thread accepts a connection and serves it with blocking I/O until it closes,\n"
               "then accepts the next one. Other clients wait in the listen backlog meanwhile.",
    .threads_help = "must be 1: a single thread does everything",
    .threads_min = 1,
    .threads_max = 1,
};

struct blocking_server {
    struct server_base base;
    struct conn_registry registry;
};

static void wake(void *arg)
{
    struct blocking_server *srv = arg;
    shutdown(srv->base.listen_fd, SHUT_RDWR); /* accept() returns EINVAL */
    conn_registry_shutdown_all(&srv->registry);
}

int main(int argc, char **argv)
{
    struct blocking_server srv;
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = false});
    struct session session;
    if (!conn_registry_init(&srv.registry) || !session_init(&session, &srv.base.session))
        lifecycle_fail(cli.architecture, "out of memory");
    lifecycle_watch_signals(wake, &srv);
    server_announce_ready(&srv.base);

    struct server_counters counters = {0};
    for (;;) {
        int fd = server_accept_blocking(&srv.base, SOCKET_BLOCKING, &counters);
        if (fd < 0)
            break;
        conn_registry_add(&srv.registry, fd);
        session_reset(&session);
        if (!lifecycle_stopping())
            conn_serve_blocking(fd, &session, &counters);
        counters_add_session(&counters, &session.counters);
        conn_registry_remove(&srv.registry, fd);
        conn_close(fd, &session, CLOSE_LINGERING_MAY_WAIT);
    }

    bool failed = !lifecycle_stopping();
    server_finish(&srv.base, &counters);
    session_destroy(&session);
    conn_registry_destroy(&srv.registry);
    return failed ? 1 : 0;
}

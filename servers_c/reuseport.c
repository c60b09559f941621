/* reuseport: --threads N event loops, each with its own SO_REUSEPORT listener
 * on the same port and no acceptor thread: the kernel spreads incoming
 * connections over the listeners by hashing, and each loop accepts and serves
 * its own (the model of nginx's `reuseport` and libreactor). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "event_loop.h"
#include "listener.h"
#include "server.h"

static int trigger = TRIGGER_EDGE;

static const struct flag_spec flags[] = {
    {"--trigger", FLAG_CHOICE, &trigger, 0, 0, trigger_names, "epoll notification in the event loops (default edge)"},
};

static const struct server_cli cli = {
    .architecture = "reuseport",
    .summary = "N event-loop threads, each with its own SO_REUSEPORT listener on the same port;\n"
               "the kernel spreads connections over them.",
    .threads_help = "event-loop threads N, each accepting its own connections",
    .threads_min = 1,
    .threads_max = 1024,
    .extra = flags,
    .extra_count = sizeof flags / sizeof flags[0],
};

struct reuseport_server {
    struct server_base base;
    long n;
    int *listeners;
    struct event_loop **loops;
    pthread_t *threads;
};

static void *run_loop(void *loop)
{
    event_loop_run(loop);
    return NULL;
}

static void wake(void *arg)
{
    struct reuseport_server *srv = arg;
    for (long i = 0; i < srv->n; i++)
        event_loop_stop(srv->loops[i]);
}

int main(int argc, char **argv)
{
    struct reuseport_server srv;
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.listener_per_thread = true});
    srv.n = srv.base.options.threads;
    srv.listeners = calloc((size_t)srv.n, sizeof srv.listeners[0]);
    srv.loops = calloc((size_t)srv.n, sizeof srv.loops[0]);
    srv.threads = calloc((size_t)srv.n, sizeof srv.threads[0]);
    if (srv.listeners == NULL || srv.loops == NULL || srv.threads == NULL)
        lifecycle_fail(cli.architecture, "out of memory");
    server_open_reuseport_listeners(&srv.base, srv.n, SOCKET_NONBLOCKING, srv.listeners);
    for (long i = 0; i < srv.n; i++) {
        struct event_loop_options options = {
            .session = &srv.base.session,
            .edge_triggered = trigger == TRIGGER_EDGE,
            .listen_fd = srv.listeners[i],
        };
        if ((srv.loops[i] = event_loop_create(&options)) == NULL)
            lifecycle_fail(cli.architecture, "cannot create the event loops");
    }
    lifecycle_watch_signals(wake, &srv);
    for (long i = 0; i < srv.n; i++)
        if (pthread_create(&srv.threads[i], NULL, run_loop, srv.loops[i]) != 0)
            lifecycle_fail(cli.architecture, "cannot start the event-loop threads");
    server_announce_ready(&srv.base);

    for (long i = 0; i < srv.n; i++)
        pthread_join(srv.threads[i], NULL);
    bool failed = !lifecycle_stopping();
    lifecycle_finish(); /* the watcher may still be in event_loop_stop: join it before the loops are freed */
    struct server_counters counters = {0};
    for (long i = 0; i < srv.n; i++) {
        struct server_counters loop_counters = event_loop_finish(srv.loops[i]);
        counters_add(&counters, &loop_counters);
    }
    for (long i = 0; i < srv.n; i++)
        close(srv.listeners[i]);
    server_finish(&srv.base, &counters);
    free(srv.threads);
    free(srv.loops);
    free(srv.listeners);
    return failed ? 1 : 0;
}

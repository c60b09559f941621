/* reactor: one acceptor thread hands connections round-robin to --threads N
 * event loops, each an epoll instance in its own thread, woken through an
 * eventfd when a connection arrives (source 001's reactor, done right: the
 * acceptor never touches a connection again, and each loop owns its
 * connections for their whole life, so no connection state is shared). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "event_loop.h"
#include "listener.h"
#include "server.h"

static int trigger = TRIGGER_EDGE;

static const struct flag_spec flags[] = {
    {"--trigger", FLAG_CHOICE, &trigger, 0, 0, trigger_names, "epoll notification in the event loops (default edge)"},
};

static const struct server_cli cli = {
    .architecture = "reactor",
    .summary = "An acceptor thread accepts connections and hands them round-robin to N event-loop\n"
               "threads (an epoll instance each, woken through an eventfd).",
    .threads_help = "event-loop threads N; the acceptor thread is one more",
    .threads_min = 1,
    .threads_max = 1024,
    .extra = flags,
    .extra_count = sizeof flags / sizeof flags[0],
};

struct reactor {
    struct server_base base;
    struct event_loop **loops;
    pthread_t *threads;
    long n;
};

static void *run_loop(void *loop)
{
    event_loop_run(loop);
    return NULL;
}

static void wake(void *arg)
{
    struct reactor *r = arg;
    shutdown(r->base.listen_fd, SHUT_RDWR); /* the acceptor's accept() returns */
    for (long i = 0; i < r->n; i++)
        event_loop_stop(r->loops[i]);
}

int main(int argc, char **argv)
{
    struct reactor r;
    server_start(&r.base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = false});
    r.n = r.base.options.threads;
    r.loops = calloc((size_t)r.n, sizeof r.loops[0]);
    r.threads = calloc((size_t)r.n, sizeof r.threads[0]);
    if (r.loops == NULL || r.threads == NULL)
        lifecycle_fail(cli.architecture, "out of memory");
    struct event_loop_options options = {
        .session = &r.base.session,
        .edge_triggered = trigger == TRIGGER_EDGE,
        .listen_fd = -1,
    };
    for (long i = 0; i < r.n; i++)
        if ((r.loops[i] = event_loop_create(&options)) == NULL)
            lifecycle_fail(cli.architecture, "cannot create the event loops");
    lifecycle_watch_signals(wake, &r);
    for (long i = 0; i < r.n; i++)
        if (pthread_create(&r.threads[i], NULL, run_loop, r.loops[i]) != 0)
            lifecycle_fail(cli.architecture, "cannot start the event-loop threads");
    server_announce_ready(&r.base);

    struct server_counters counters = {0};
    long next = 0;
    for (;;) {
        int fd = server_accept_blocking(&r.base, SOCKET_NONBLOCKING, &counters);
        if (fd < 0)
            break;
        if (!event_loop_adopt(r.loops[next], fd)) {
            counters.errors++;
            close(fd);
        }
        next = (next + 1) % r.n;
    }
    bool failed = !lifecycle_stopping();

    lifecycle_finish(); /* stops the loops, if no signal did; joined before any loop is freed */
    for (long i = 0; i < r.n; i++) {
        pthread_join(r.threads[i], NULL);
        struct server_counters loop_counters = event_loop_finish(r.loops[i]);
        counters_add(&counters, &loop_counters);
    }
    server_finish(&r.base, &counters);
    free(r.threads);
    free(r.loops);
    return failed ? 1 : 0;
}

/* epoll: one thread, one epoll instance, the listener and every connection in
 * it (source 001's "I/O multiplexing server", source 004's epoll server) —
 * with the mistakes of those originals removed: sockets are non-blocking,
 * edge-triggered mode reads and accepts until EAGAIN, partial writes are
 * resumed, and no epoll_ctl call is made per request. --trigger picks level-
 * or edge-triggered notification. */
#include "event_loop.h"
#include "listener.h"
#include "server.h"

static int trigger = TRIGGER_LEVEL;

static const struct flag_spec flags[] = {
    {"--trigger", FLAG_CHOICE, &trigger, 0, 0, trigger_names,
     "epoll notification: level- or edge-triggered (default level)"},
};

static const struct server_cli cli = {
    .architecture = "epoll",
    .summary = "One thread waits in epoll_wait for the listener and every connection and serves\n"
               "whatever is ready.",
    .threads_help = "must be 1: a single event loop",
    .threads_min = 1,
    .threads_max = 1,
    .extra = flags,
    .extra_count = sizeof flags / sizeof flags[0],
};

static void wake(void *loop) { event_loop_stop(loop); }

int main(int argc, char **argv)
{
    struct server_base base;
    server_start(&base, &cli, argc, argv, (struct server_start_options){.nonblocking_listener = true});
    struct event_loop_options options = {
        .session = &base.session,
        .edge_triggered = trigger == TRIGGER_EDGE,
        .listen_fd = base.listen_fd,
    };
    struct event_loop *loop = event_loop_create(&options);
    if (loop == NULL)
        lifecycle_fail(cli.architecture, "cannot create the event loop");
    lifecycle_watch_signals(wake, loop);
    server_announce_ready(&base);

    event_loop_run(loop);
    bool failed = !lifecycle_stopping();
    lifecycle_finish(); /* the watcher may still be in event_loop_stop: join it before the loop is freed */
    struct server_counters counters = event_loop_finish(loop);
    server_finish(&base, &counters);
    return failed ? 1 : 0;
}

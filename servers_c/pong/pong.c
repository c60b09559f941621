/* pong: source 002's upper bound, NOT a correct HTTP server.
 *
 * It answers every request with the same pre-serialised response (the bytes
 * the servers send for the configured --response, keep-alive) and finds
 * requests only by their "\r\n\r\n" terminator, never parsing them: no
 * methods, versions, headers or bodies (a request body is not skipped, so one
 * containing "\r\n\r\n" would be answered twice), no Connection: close, no
 * 4xx, no timeouts. What it does get right is framing: pipelined requests (N
 * in one read, N responses in one send), terminators split across reads,
 * partial writes, EOF and resets. It measures what a server could do with this
 * load if answering cost nothing: the ceiling the real architectures sit under.
 *
 * Parallelism is the reuseport scheme: --threads N edge-triggered epoll loops,
 * each accepting on its own SO_REUSEPORT listener (default 1: one thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pong_loop.h"
#include "pong_output.h"
#include "server.h"

static const struct server_cli cli = {
    .architecture = "pong",
    .summary = "An upper bound, not an HTTP server: N edge-triggered epoll loops (SO_REUSEPORT)\n"
               "answer each \"\\r\\n\\r\\n\"-terminated request with the same keep-alive response,\n"
               "without parsing it. HTTP only (no --proto echo), no --work-us or --block-us;\n"
               "--header-timeout and --idle-timeout are accepted and not enforced.",
    .threads_help = "event-loop threads N, each accepting its own connections",
    .threads_min = 1,
    .threads_max = 1024,
    .extra = NULL,
    .extra_count = 0,
};

struct pong_server {
    struct server_base base;
    struct pong_block block;
    long n;
    int *listeners;
    struct pong_loop **loops;
    pthread_t *threads;
};

static void *run_loop(void *loop)
{
    pong_loop_run(loop);
    return NULL;
}

static void wake(void *arg)
{
    struct pong_server *srv = arg;
    for (long i = 0; i < srv->n; i++)
        pong_loop_stop(srv->loops[i]);
}

/* What pong cannot honour: echo, and any cost per request (it bounds what
 * answering could do if it cost nothing). */
static void refuse_unserved(const struct common_options *options)
{
    const char *why = options->proto != SESSION_HTTP ? "--proto echo is not served: pong only counts HTTP request "
                                                       "terminators"
        : options->work_us > 0  ? "--work-us is not served: pong answers without any work per request"
        : options->block_us > 0 ? "--block-us is not served: pong answers without any wait per request"
                                : NULL;
    if (why == NULL)
        return;
    fprintf(stderr, "%s: %s\n(run with --help for usage)\n", cli.architecture, why);
    exit(2);
}

int main(int argc, char **argv)
{
    struct pong_server srv;
    server_start(&srv.base, &cli, argc, argv, (struct server_start_options){.listener_per_thread = true});
    refuse_unserved(&srv.base.options);
    const struct prebuilt *response = &srv.base.responses.ok[1][0]; /* keep-alive, not HEAD */
    if (!pong_block_build(&srv.block, response->bytes, response->len))
        lifecycle_fail(cli.architecture, "out of memory");
    srv.n = srv.base.options.threads;
    srv.listeners = calloc((size_t)srv.n, sizeof srv.listeners[0]);
    srv.loops = calloc((size_t)srv.n, sizeof srv.loops[0]);
    srv.threads = calloc((size_t)srv.n, sizeof srv.threads[0]);
    if (srv.listeners == NULL || srv.loops == NULL || srv.threads == NULL)
        lifecycle_fail(cli.architecture, "out of memory");
    server_open_reuseport_listeners(&srv.base, srv.n, SOCKET_NONBLOCKING, srv.listeners);
    for (long i = 0; i < srv.n; i++)
        if ((srv.loops[i] = pong_loop_create(srv.listeners[i], &srv.block)) == NULL)
            lifecycle_fail(cli.architecture, "cannot create the event loops");
    lifecycle_watch_signals(wake, &srv);
    for (long i = 0; i < srv.n; i++)
        if (pthread_create(&srv.threads[i], NULL, run_loop, srv.loops[i]) != 0)
            lifecycle_fail(cli.architecture, "cannot start the event-loop threads");
    server_announce_ready(&srv.base);

    for (long i = 0; i < srv.n; i++)
        pthread_join(srv.threads[i], NULL);
    bool failed = !lifecycle_stopping();
    lifecycle_finish(); /* the watcher may still be in pong_loop_stop: join it before the loops are freed */
    struct server_counters counters = {0};
    for (long i = 0; i < srv.n; i++) {
        struct server_counters loop_counters = pong_loop_finish(srv.loops[i]);
        counters_add(&counters, &loop_counters);
    }
    for (long i = 0; i < srv.n; i++)
        close(srv.listeners[i]);
    server_finish(&srv.base, &counters);
    pong_block_free(&srv.block);
    free(srv.threads);
    free(srv.loops);
    free(srv.listeners);
    return failed ? 1 : 0;
}

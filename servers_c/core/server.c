#include "server.h"

#include <errno.h>
#include <unistd.h>

void server_start(struct server_base *base, const struct server_cli *cli, int argc, char **argv,
                  struct server_start_options how)
{
    lifecycle_init();
    base->cli = cli;
    base->listen_fd = -1;
    base->port = 0;
    options_parse(argc, argv, cli, &base->options);
    char err[512];
    if (!responses_build(&base->responses, base->options.response, err, sizeof err))
        lifecycle_fail(cli->architecture, err);
    struct session_timeouts timeouts = {
        /* echo has no request heads: only the idle timeout applies */
        .header_ms = base->options.proto == SESSION_HTTP ? (uint32_t)base->options.header_timeout_s * 1000u : 0,
        .idle_ms = (uint32_t)base->options.idle_timeout_s * 1000u,
    };
    const struct common_options *o = &base->options;
    workload_init(&base->workload, (uint32_t)o->work_us, (uint32_t)o->block_us, (enum block_dist)o->block_dist,
                  (uint64_t)o->seed);
    base->session = (struct session_config){
        .proto = o->proto,
        .responses = &base->responses,
        .timeouts = timeouts,
        .workload = workload_active(&base->workload) ? &base->workload : NULL,
    };
    if (how.listener_per_thread)
        return;
    struct listen_request req = {
        .host = base->options.host,
        .port = (int)base->options.port,
        .backlog = (int)base->options.backlog,
        .reuseport = false,
        .nonblocking = how.nonblocking_listener,
    };
    base->listen_fd = listener_open(&req, &base->port, err, sizeof err);
    if (base->listen_fd < 0)
        lifecycle_fail(cli->architecture, err);
}

void server_announce_ready(const struct server_base *base)
{
    char fields[128];
    workload_ready_fields(&base->workload, fields, sizeof fields);
    lifecycle_announce_ready(base->options.host, base->port, fields);
}

void server_finish(struct server_base *base, const struct server_counters *counters)
{
    lifecycle_finish();
    if (base->listen_fd >= 0)
        close(base->listen_fd);
    lifecycle_report(base->cli->architecture, base->options.threads, counters);
    responses_free(&base->responses);
}

int server_accept_blocking(const struct server_base *base, enum socket_mode connection_mode,
                           struct server_counters *counters)
{
    while (!lifecycle_stopping()) {
        int fd = accept_connection(base->listen_fd, connection_mode);
        if (fd >= 0) {
            counters->connections_accepted++;
            return fd;
        }
        int err = errno;
        if (lifecycle_stopping())
            break; /* the stop path shut the listener down */
        counters->errors += err != EINTR;
        if (!accept_error_is_transient(err))
            break;
        accept_pause_if_exhausted(err);
    }
    return -1;
}

void server_accept_pending(int listen_fd, int max, void (*take)(void *ctx, int fd), void *ctx,
                           struct server_counters *counters)
{
    for (int taken = 0; max == 0 || taken < max; taken++) {
        int fd = accept_connection(listen_fd, SOCKET_NONBLOCKING);
        if (fd < 0) {
            int err = errno;
            if (err == EAGAIN || err == EWOULDBLOCK)
                return;
            if (err == EINTR || err == ECONNABORTED)
                continue;
            counters->errors++;
            accept_pause_if_exhausted(err);
            return;
        }
        counters->connections_accepted++;
        take(ctx, fd);
    }
}

void server_open_reuseport_listeners(struct server_base *base, long count, enum socket_mode mode, int *listeners)
{
    char err[512];
    struct listen_request req = {
        .host = base->options.host,
        .port = (int)base->options.port,
        .backlog = (int)base->options.backlog,
        .reuseport = true,
        .nonblocking = mode == SOCKET_NONBLOCKING,
    };
    for (long i = 0; i < count; i++) {
        listeners[i] = listener_open(&req, &base->port, err, sizeof err);
        if (listeners[i] < 0)
            lifecycle_fail(base->cli->architecture, err);
        req.port = base->port;
    }
}

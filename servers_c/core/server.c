#include "server.h"

#include <unistd.h>

#include "listener.h"

void server_start(struct server_base *base, const struct server_cli *cli, int argc, char **argv,
                  bool nonblocking_listener, bool open_listener)
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
    base->session = (struct session_config){base->options.proto, &base->responses, timeouts};
    if (!open_listener)
        return;
    struct listen_request req = {
        .host = base->options.host,
        .port = (int)base->options.port,
        .backlog = (int)base->options.backlog,
        .reuseport = false,
        .nonblocking = nonblocking_listener,
    };
    base->listen_fd = listener_open(&req, &base->port, err, sizeof err);
    if (base->listen_fd < 0)
        lifecycle_fail(cli->architecture, err);
}

void server_finish(struct server_base *base, const struct server_counters *counters)
{
    lifecycle_finish();
    if (base->listen_fd >= 0)
        close(base->listen_fd);
    lifecycle_report(base->cli->architecture, base->options.threads, counters);
    responses_free(&base->responses);
}

/* idle_holder's command line; see idle_options.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_flags.h"
#include "idle_options.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: idle_holder --port P [options]\n\n"
            "Opens --connections keep-alive HTTP/1.1 connections to a server, sends one GET\n"
            "on each and reads its whole response (so that the server knows every connection,\n"
            "even one that takes a connection up only with its first request, or gives it a\n"
            "thread), then holds them idle, watching all of them with epoll, until --duration\n"
            "ends or SIGINT/SIGTERM. A connection the server closes is counted, never reopened.\n"
            "When every connection is established and answered it prints 'holding K\n"
            "connections' on stdout (start the active load then); at the end, one JSON object\n"
            "on stdout. Start the server with an --idle-timeout longer than the hold (or 0),\n"
            "or it closes them.\n\n"
            "options:\n"
            "  --host ADDR            server IPv4 address (default 127.0.0.1)\n"
            "  --port P               server port (required)\n"
            "  --connections K        connections to hold (default 100). The holder raises its\n"
            "                         open-file soft limit to K + %d, up to the hard limit, and\n"
            "                         refuses a K beyond it: with a hard limit of 20000, K up\n"
            "                         to 19984 on one process (run more holders for more)\n"
            "  --sources S            bind connection i to 127.0.0.(1 + i mod S), so that the\n"
            "                         ephemeral ports (about 28,000 per source address towards\n"
            "                         one server port) never bound K; 0 = let the kernel choose\n"
            "                         (default 0)\n"
            "  --in-flight N          connections connecting or awaiting their first response\n"
            "                         at once at most, so that the server's listen backlog is\n"
            "                         not overrun (default 64)\n"
            "  --connect-timeout S    a connect that takes longer fails with ETIMEDOUT\n"
            "                         (default 5)\n"
            "  --response-timeout S   a first response not complete this long after the request\n"
            "                         was sent fails as 'timeout' (default 5)\n"
            "  --duration S           seconds to hold once all are established; 0 = until\n"
            "                         SIGINT or SIGTERM (default 0)\n"
            "  --path PATH            the request's target (default /)\n\n"
            "Connect failures are counted by errno name; first-request failures as 'eof' or\n"
            "an errno name (the server ended the connection), 'timeout', 'bad_response' (not\n"
            "a keep-alive HTTP/1.x response with a Content-Length), 'http_<status>' (not 2xx),\n"
            "'connection_close' (the server said it would close) or 'extra_bytes'.\n\n"
            "Exit status: 0 all K established and held to the end; 1 the holder failed\n"
            "(out of memory, epoll); 2 bad usage, or a K the open-file limit cannot hold;\n"
            "3 fewer than K established (connect or first-request failures, or stopped\n"
            "before all were; no 'holding' line is printed then); 4 all K established but\n"
            "the server closed some before the end.\n",
            IDLE_RESERVED_FDS);
}

/* A request target that needs no escaping in the request line or in the JSON report. */
static bool plain_path(const char *v)
{
    if (v[0] != '/' || strlen(v) > 1024)
        return false;
    for (const char *p = v; *p != '\0'; p++)
        if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\')
            return false;
    return true;
}

void parse_idle_options(int argc, char **argv, struct idle_options *o)
{
    cli_set_program("idle_holder");
    *o = (struct idle_options){.host = "127.0.0.1",
                               .connections = 100,
                               .in_flight = 64,
                               .connect_timeout_s = 5,
                               .response_timeout_s = 5,
                               .path = "/"};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if ((v = cli_flag_value(argc, argv, &i, "--host")) != NULL) {
            o->host = v;
        } else if ((v = cli_flag_value(argc, argv, &i, "--port")) != NULL) {
            o->port = cli_long("--port", v, 1, 65535);
        } else if ((v = cli_flag_value(argc, argv, &i, "--connections")) != NULL) {
            o->connections = cli_long("--connections", v, 1, 10000000);
        } else if ((v = cli_flag_value(argc, argv, &i, "--sources")) != NULL) {
            o->sources = cli_long("--sources", v, 0, 254);
        } else if ((v = cli_flag_value(argc, argv, &i, "--in-flight")) != NULL) {
            o->in_flight = cli_long("--in-flight", v, 1, 4096);
        } else if ((v = cli_flag_value(argc, argv, &i, "--connect-timeout")) != NULL) {
            o->connect_timeout_s = cli_double("--connect-timeout", v, 0.001, 3600);
        } else if ((v = cli_flag_value(argc, argv, &i, "--response-timeout")) != NULL) {
            o->response_timeout_s = cli_double("--response-timeout", v, 0.001, 3600);
        } else if ((v = cli_flag_value(argc, argv, &i, "--duration")) != NULL) {
            o->duration_s = cli_double("--duration", v, 0, 7 * 86400);
        } else if ((v = cli_flag_value(argc, argv, &i, "--path")) != NULL) {
            if (!plain_path(v))
                cli_bad_usage("--path",
                              "expects an absolute path of at most 1024 printable ASCII bytes, no spaces, "
                              "quotes or backslashes",
                              v);
            o->path = v;
        } else {
            cli_bad_usage(argv[i], "is not an option", NULL);
        }
    }
    if (o->port == 0)
        cli_bad_usage("--port", "is required", NULL);
    if (o->in_flight > o->connections)
        o->in_flight = o->connections;
}

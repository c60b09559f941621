/* open_loop's command line; see open_loop_options.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_flags.h"
#include "open_loop_options.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: open_loop --port P --rate R --duration S [options]\n\n"
            "An open-loop HTTP/1.1 load generator. Requests (keep-alive GETs) are scheduled at a\n"
            "total rate R, split evenly over the connections, whatever the server does; each\n"
            "request's latency is counted from its SCHEDULED send time, so a stalled server is\n"
            "charged for every request queued behind the stall (no coordinated omission).\n"
            "By default a connection has one request outstanding (no pipelining): the requests\n"
            "scheduled meanwhile wait, in order, and are sent as soon as the response before\n"
            "them is complete (see --pipeline). Each thread runs one epoll loop over its share\n"
            "of the connections (connection i on thread i mod T); one wake-up sends every\n"
            "request then due on its connections, a connection's in one write. At the end, one\n"
            "JSON object on stdout.\n\n"
            "options:\n"
            "  --host ADDR        server IPv4 address (default 127.0.0.1)\n"
            "  --port P           server port (required)\n"
            "  --path PATH        the request target (default /)\n"
            "  --host-header H    the Host header (default ADDR:P)\n"
            "  --rate R           requests per second, all connections together (required)\n"
            "  --arrival A        fixed: connection i sends at t0 + i/R + k*C/R (the total evenly\n"
            "                     spaced); poisson: each connection's gaps exponential with mean\n"
            "                     C/R, so the total is a Poisson process of rate R (default fixed)\n"
            "  --seed N           the seed of the Poisson draws (default 1)\n"
            "  --connections C    keep-alive connections (default 16); the open-file soft limit\n"
            "                     is raised to C + %d, and a C beyond the hard limit is refused\n"
            "  --threads T        event-loop threads, at most C (default 1)\n"
            "  --pipeline N       up to N requests outstanding per connection, 1-%d (default 1:\n"
            "                     no pipelining). With N > 1 a request due while responses are\n"
            "                     outstanding is sent at once (HTTP/1.1 pipelining) instead of\n"
            "                     waiting for them, so what is measured changes: the wait behind\n"
            "                     a slow response moves from the client to the server (its\n"
            "                     socket buffer and how it handles pipelined requests, which a\n"
            "                     server may serve one by one or not at all), the client needs\n"
            "                     fewer reads and writes per request when several are due, and\n"
            "                     a failed connection loses every request outstanding on it.\n"
            "                     Latency is still counted from each request's schedule.\n"
            "  --timer-slack NS   how late (ns) the kernel may end a thread's sleep until its\n"
            "                     next send, to merge wake-ups (PR_SET_TIMERSLACK; default: left\n"
            "                     as it is, 50000 for a normal thread). A request sent late is\n"
            "                     charged the lag (see send_lag_ns): a smaller slack sends closer\n"
            "                     to the schedule for more wake-ups (CPU), a larger one the reverse\n"
            "  --duration S       the measured window, seconds (required)\n"
            "  --warmup W         seconds of load before the window, excluded from every\n"
            "                     statistic except warmup_completed (default 0)\n"
            "  --timeout S        a response not complete S seconds after its request was sent\n"
            "                     counts as a timeout; the connection is closed and reopened\n"
            "                     (default 10)\n"
            "  --sources K        bind connection i to 127.0.0.(1 + i mod K); 0 = the kernel's\n"
            "                     choice (default 0)\n\n"
            "Counted, never dropped: requests scheduled in the window, sent, completed (2xx,\n"
            "in the histogram), non_2xx (complete, not in the histogram), and errors by kind:\n"
            "timeout, bad_response (not a readable HTTP/1.x response), unsolicited (bytes\n"
            "with no request outstanding), closed_by_server (the response said Connection:\n"
            "close), connect errors and read/write errors by errno name ('eof': the server\n"
            "closed). A connection that fails is closed and reopened (counted in reconnects;\n"
            "after a failed connect, 10 ms later); its outstanding requests are counted lost.\n"
            "Requests still outstanding or not yet sent when the window ends are counted\n"
            "(outstanding_at_end, unsent_at_end), not in the histogram.\n\n"
            "Latencies: a log-linear histogram in ns (1 ns buckets below 2048 ns, then 1024\n"
            "sub-buckets per power of two: about 3 significant digits up to 100 s), merged\n"
            "across threads by adding counts. A percentile is the upper edge of the bucket\n"
            "holding the sample of rank ceil(q/100 * N) (or the max if smaller): at most one\n"
            "bucket above the true value; max is exact. The JSON also has the send lag (how\n"
            "late the requests a connection had room for were sent: the client's own part of\n"
            "their latency), the per-second sent and completed series, the client's CPU time\n"
            "(getrusage user+sys) and wall time from the start of the load (warm-up included),\n"
            "the CPUs it may use and the open-file limits.\n\n"
            "Exit status: 0 the run ended (whatever the server did); 1 the client failed\n"
            "(out of memory, epoll, threads); 2 bad usage.\n",
            OL_RESERVED_FDS, OL_PIPELINE_MAX);
}

/* Text that needs no escaping in the request line or in the JSON report. */
static bool plain_text(const char *v, bool is_path)
{
    if ((is_path && v[0] != '/') || v[0] == '\0' || strlen(v) > 1024)
        return false;
    for (const char *p = v; *p != '\0'; p++)
        if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\')
            return false;
    return true;
}

void parse_ol_options(int argc, char **argv, struct ol_options *o)
{
    cli_set_program("open_loop");
    *o = (struct ol_options){.host = "127.0.0.1",
                             .path = "/",
                             .connections = 16,
                             .threads = 1,
                             .pipeline = 1,
                             .timeout_s = 10,
                             .arrival = ARRIVAL_FIXED,
                             .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if ((v = cli_flag_value(argc, argv, &i, "--host-header")) != NULL) {
            if (!plain_text(v, false))
                cli_bad_usage("--host-header", "expects 1-1024 printable ASCII bytes, no spaces or quotes", v);
            o->host_header = v;
        } else if ((v = cli_flag_value(argc, argv, &i, "--host")) != NULL) {
            o->host = v;
        } else if ((v = cli_flag_value(argc, argv, &i, "--port")) != NULL) {
            o->port = cli_long("--port", v, 1, 65535);
        } else if ((v = cli_flag_value(argc, argv, &i, "--path")) != NULL) {
            if (!plain_text(v, true))
                cli_bad_usage("--path",
                              "expects an absolute path of at most 1024 printable ASCII bytes, no spaces, "
                              "quotes or backslashes",
                              v);
            o->path = v;
        } else if ((v = cli_flag_value(argc, argv, &i, "--rate")) != NULL) {
            o->rate = cli_double("--rate", v, 0.001, 1e8);
        } else if ((v = cli_flag_value(argc, argv, &i, "--arrival")) != NULL) {
            if (strcmp(v, "fixed") == 0)
                o->arrival = ARRIVAL_FIXED;
            else if (strcmp(v, "poisson") == 0)
                o->arrival = ARRIVAL_POISSON;
            else
                cli_bad_usage("--arrival", "expects fixed or poisson", v);
        } else if ((v = cli_flag_value(argc, argv, &i, "--seed")) != NULL) {
            o->seed = (uint64_t)cli_long("--seed", v, 0, 2147483647L);
        } else if ((v = cli_flag_value(argc, argv, &i, "--connections")) != NULL) {
            o->connections = cli_long("--connections", v, 1, 1000000);
        } else if ((v = cli_flag_value(argc, argv, &i, "--threads")) != NULL) {
            o->threads = cli_long("--threads", v, 1, 256);
        } else if ((v = cli_flag_value(argc, argv, &i, "--pipeline")) != NULL) {
            o->pipeline = cli_long("--pipeline", v, 1, OL_PIPELINE_MAX);
        } else if ((v = cli_flag_value(argc, argv, &i, "--timer-slack")) != NULL) {
            o->timer_slack_ns = cli_long("--timer-slack", v, 1, 100000000L);
        } else if ((v = cli_flag_value(argc, argv, &i, "--duration")) != NULL) {
            o->duration_s = cli_double("--duration", v, 0.001, 86400);
        } else if ((v = cli_flag_value(argc, argv, &i, "--warmup")) != NULL) {
            o->warmup_s = cli_double("--warmup", v, 0, 86400);
        } else if ((v = cli_flag_value(argc, argv, &i, "--timeout")) != NULL) {
            o->timeout_s = cli_double("--timeout", v, 0.001, 3600);
        } else if ((v = cli_flag_value(argc, argv, &i, "--sources")) != NULL) {
            o->sources = cli_long("--sources", v, 0, 254);
        } else {
            cli_bad_usage(argv[i], "is not an option", NULL);
        }
    }
    if (o->port == 0)
        cli_bad_usage("--port", "is required", NULL);
    if (o->rate == 0)
        cli_bad_usage("--rate", "is required", NULL);
    if (o->duration_s == 0)
        cli_bad_usage("--duration", "is required", NULL);
    if (o->threads > o->connections)
        cli_bad_usage("--threads", "must not exceed --connections", NULL);
}

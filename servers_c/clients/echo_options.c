/* echo_client's command line; see echo_options.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_flags.h"
#include "echo_options.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: echo_client --port P [options]\n\n"
            "Drives an echo server over N connections from T epoll threads, verifies every\n"
            "byte that comes back, and reports round-trip times, a per-second time series\n"
            "and failures by reason.\n\n"
            "options:\n"
            "  --host ADDR            server IPv4 address (default 127.0.0.1)\n"
            "  --port P               server port (required)\n"
            "  --connections N        connections to open and hold (default 100)\n"
            "  --threads T            worker threads, an epoll loop each over N/T connections\n"
            "                         (default 1); pin the process with taskset\n"
            "  --duration S           seconds the trial sends for (default 10); with\n"
            "                         --max-conns, the most time the ramp may take (default 120)\n"
            "  --size BYTES           bytes per message (default 64)\n"
            "  --depth D              messages in flight per connection (default 1)\n"
            "  --rate R               messages per second per connection, 0 = as fast as the\n"
            "                         echoes come back (default 0); RTT is measured from each\n"
            "                         message's intended send time\n"
            "  --connect-rate R       connections opened per second, 0 = all at once (default 0)\n"
            "  --connect-timeout S    a connect (or, with --max-conns, a first echo) that takes\n"
            "                         longer fails with ETIMEDOUT (default 5)\n"
            "  --sources K            bind connection i to 127.0.0.(1 + i mod K); 0 = let the\n"
            "                         kernel choose (default 0)\n"
            "  --seed N               seed of the payload streams (default 1)\n"
            "  --json                 one JSON object on stdout at the end (text goes to stderr)\n"
            "  --max-conns CAP        open connections (at --connect-rate, over --sources) and\n"
            "                         hold them, each verified alive by one echo, until one\n"
            "                         fails or CAP are held; reports how many and why it stopped\n"
            "  --server-pid PID       with --max-conns: report the server's resident memory per\n"
            "                         connection (VmRSS before and after)\n\n"
            "SIGINT or SIGTERM stops the run and prints the summary. Exit status: 0 ok;\n"
            "1 verification errors or failures (connect errors, connections closed early or\n"
            "echoes never answered; with --max-conns, held connections that did not echo\n"
            "again); 2 bad usage.\n");
}

void parse_options(int argc, char **argv, struct options *o)
{
    cli_set_program("echo_client");
    *o = (struct options){.host = "127.0.0.1",
                          .connections = 100,
                          .threads = 1,
                          .duration_s = 10,
                          .size = 64,
                          .depth = 1,
                          .connect_timeout_s = 5,
                          .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if ((v = cli_flag_value(argc, argv, &i, "--host")) != NULL) {
            o->host = v;
        } else if ((v = cli_flag_value(argc, argv, &i, "--port")) != NULL) {
            o->port = cli_long("--port", v, 1, 65535);
        } else if ((v = cli_flag_value(argc, argv, &i, "--connections")) != NULL) {
            o->connections = cli_long("--connections", v, 1, 10000000);
        } else if ((v = cli_flag_value(argc, argv, &i, "--threads")) != NULL) {
            o->threads = cli_long("--threads", v, 1, 1024);
        } else if ((v = cli_flag_value(argc, argv, &i, "--duration")) != NULL) {
            o->duration_s = cli_double("--duration", v, 0.001, 86400);
            o->duration_given = true;
        } else if ((v = cli_flag_value(argc, argv, &i, "--size")) != NULL) {
            o->size = cli_long("--size", v, 1, 1L << 30);
        } else if ((v = cli_flag_value(argc, argv, &i, "--depth")) != NULL) {
            o->depth = cli_long("--depth", v, 1, 65536);
        } else if ((v = cli_flag_value(argc, argv, &i, "--rate")) != NULL) {
            o->rate = cli_double("--rate", v, 0, 1e9);
        } else if ((v = cli_flag_value(argc, argv, &i, "--connect-rate")) != NULL) {
            o->connect_rate = cli_double("--connect-rate", v, 0, 1e9);
        } else if ((v = cli_flag_value(argc, argv, &i, "--connect-timeout")) != NULL) {
            o->connect_timeout_s = cli_double("--connect-timeout", v, 0.001, 3600);
        } else if ((v = cli_flag_value(argc, argv, &i, "--sources")) != NULL) {
            o->sources = cli_long("--sources", v, 0, 254);
        } else if ((v = cli_flag_value(argc, argv, &i, "--seed")) != NULL) {
            o->seed = (uint64_t)cli_long("--seed", v, 0, INT64_MAX);
        } else if ((v = cli_flag_value(argc, argv, &i, "--max-conns")) != NULL) {
            o->max_conns = cli_long("--max-conns", v, 1, 10000000);
        } else if ((v = cli_flag_value(argc, argv, &i, "--server-pid")) != NULL) {
            o->server_pid = cli_long("--server-pid", v, 1, 1L << 30);
        } else {
            cli_bad_usage(argv[i], "is not an option", NULL);
        }
    }
    if (o->port == 0)
        cli_bad_usage("--port", "is required", NULL);
    if (o->server_pid != 0 && o->max_conns == 0)
        cli_bad_usage("--server-pid", "only applies with --max-conns", NULL);
    if (o->max_conns > 0) {
        o->connections = o->max_conns;
        if (!o->duration_given)
            o->duration_s = 120;
    }
    if (o->threads > o->connections)
        o->threads = o->connections;
}

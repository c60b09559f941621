/* echo_client's command line.
 *
 * Owns: struct options, the flags' defaults and ranges, and the usage text.
 * Promises: parse_options returns only options that are in range and
 * consistent (--threads at most --connections; --max-conns sets --connections
 * to the cap and --duration to 120 s unless given); it prints the usage and
 * exits 0 on --help, and refuses anything else naming the flag (exit status
 * EXIT_USAGE, cli_flags.h). Called by echo_client.c's main; the workers and
 * the report read the options it filled, never change them. */
#ifndef ARCHBENCH_ECHO_OPTIONS_H
#define ARCHBENCH_ECHO_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

struct options {
    const char *host;
    long port;
    long connections;
    long threads;
    double duration_s;
    bool duration_given;
    long size;
    long depth;
    double rate;
    double connect_rate;
    double connect_timeout_s;
    long sources;
    uint64_t seed;
    bool json;
    long max_conns;  /* 0: throughput mode */
    long server_pid; /* 0: none */
};

void parse_options(int argc, char **argv, struct options *o);

static inline bool max_conns_mode(const struct options *o) { return o->max_conns > 0; }

#endif

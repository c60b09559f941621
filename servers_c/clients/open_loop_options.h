/* open_loop's command line.
 *
 * Owns: nothing (the strings point into argv). Promises: every field in range
 * and consistent (threads <= connections, a rate of at least one request per
 * connection per --duration), or a refusal naming the flag and exit status 2;
 * --help prints the usage and exits 0. Used by open_loop.c. */
#ifndef ARCHBENCH_OPEN_LOOP_OPTIONS_H
#define ARCHBENCH_OPEN_LOOP_OPTIONS_H

#include <stdint.h>

enum arrival { ARRIVAL_FIXED, ARRIVAL_POISSON };

#define OL_RESERVED_FDS 64 /* descriptors beside the connections: epoll per thread, stdio */
#define OL_PIPELINE_MAX 64 /* --pipeline's bound: 16 bytes per slot per connection are kept */

struct ol_options {
    const char *host; /* IPv4 address */
    long port;
    const char *path;
    const char *host_header; /* NULL: "host:port" */
    long connections, threads, sources;
    long pipeline;                          /* requests outstanding per connection, at most */
    long timer_slack_ns;                    /* the threads' PR_SET_TIMERSLACK; 0: left as it is */
    double rate;                            /* requests per second, all connections together */
    double duration_s, warmup_s, timeout_s; /* the measured window, the unmeasured start, per request */
    enum arrival arrival;
    uint64_t seed;
};

void parse_ol_options(int argc, char **argv, struct ol_options *o);

#endif

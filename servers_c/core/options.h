/* The command line every server shares, plus a table of architecture flags. */
#ifndef ARCHBENCH_OPTIONS_H
#define ARCHBENCH_OPTIONS_H

#include <stddef.h>

#include "session.h"

enum flag_kind { FLAG_INT, FLAG_CHOICE };

struct flag_spec {
    const char *name; /* "--max-threads" */
    enum flag_kind kind;
    void *target;               /* long * for FLAG_INT, int * (index) for FLAG_CHOICE */
    long min, max;              /* FLAG_INT bounds */
    const char *const *choices; /* FLAG_CHOICE, NULL-terminated */
    const char *help;
};

struct server_cli {
    const char *architecture;
    const char *summary;      /* one paragraph for --help */
    const char *threads_help; /* what --threads means here */
    long threads_min, threads_max;
    const struct flag_spec *extra;
    size_t extra_count;
};

struct common_options {
    const char *host;
    long port;
    long backlog;
    long threads;
    const char *response;
    enum session_proto proto;
    long header_timeout_s; /* 0: off */
    long idle_timeout_s;   /* 0: off */
    long work_us;          /* per request; 0: off (workload.h) */
    long block_us;         /* per request; 0: off */
    int block_dist;        /* enum block_dist */
    long seed;             /* of the exponential waits */
};

#define DEFAULT_HEADER_TIMEOUT_S 10
#define DEFAULT_IDLE_TIMEOUT_S 60
#define MAX_TIMEOUT_S 86400

/* Parses argv; prints usage and exits 0 on --help, prints a message naming the
 * offending flag and exits 2 on bad input: a bad value, or a flag that changes
 * what an HTTP response costs or holds (--work-us, --block-us, --block-dist exp,
 * --response bytes:N) together with --proto echo. */
void options_parse(int argc, char **argv, const struct server_cli *cli, struct common_options *out);

#endif

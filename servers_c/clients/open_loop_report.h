/* open_loop's JSON report (docs/contracts.md, "open_loop output").
 *
 * Owns: nothing. Promises: one JSON object and a newline on stdout: the
 * parameters, counts, errors by kind, latency percentiles and the non-empty
 * histogram buckets (ns), the per-second series, CPU and wall time, the
 * open-file limits. Used by open_loop.c. */
#ifndef ARCHBENCH_OPEN_LOOP_REPORT_H
#define ARCHBENCH_OPEN_LOOP_REPORT_H

#include <sys/resource.h>

#include "open_loop_options.h"
#include "open_loop_worker.h"

struct ol_run {
    double cpu_user_s, cpu_sys_s, wall_s; /* from t0 to the last thread's end */
    unsigned seconds;
    int cpus; /* the CPUs this process may run on (sched_getaffinity) */
    rlim_t soft_files, hard_files;
    const char *host_header;
    long timer_slack_ns; /* the first thread's (all are set alike) */
};

void print_ol_json(const struct ol_options *o, const struct ol_run *run, const struct ol_stats *s);

#endif

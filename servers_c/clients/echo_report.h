/* echo_client's results: the workers' results merged, the human-readable
 * summary and the one JSON object (docs/contracts.md section 6, parsed by
 * archbench/parse/echo_client.py).
 *
 * Owns: the text and JSON formats, and struct results, the merged view.
 * Promises: merge_results reads only the workers' worker_results (never a
 * worker), and only once their threads are joined; the printers write what
 * struct results and the options hold, nothing else. Called by echo_client.c,
 * which fills the rest of struct results (the samples, the stop, the limits,
 * the exit status). */
#ifndef ARCHBENCH_ECHO_REPORT_H
#define ARCHBENCH_ECHO_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

#include "echo_options.h"
#include "echo_results.h"
#include "errno_counts.h"
#include "histogram.h"

/* The workers' live totals added up at one moment. */
struct sample {
    double second;
    uint64_t bytes_sent, bytes_received, echoes, open, connected, held; /* cumulative; open/held now */
};

struct results {
    uint64_t start_ns; /* when the workers started: the origin of every time reported */
    struct histogram *hist;
    uint64_t connect_errors[ERRNO_SLOTS];
    uint64_t closed_early[ERRNO_SLOTS];
    uint64_t verify_errors, echo_timeouts, sweep_alive, unanswered, not_attempted, due_unsent;
    uint64_t connect_errors_total, closed_early_total;
    struct verify_failure first_failure;
    uint64_t last_connected_ns;
    struct sample end;    /* after everything */
    struct sample window; /* at the end of the timed window */
    double window_s;
    double elapsed_s;
    struct sample *series;
    size_t series_len;
    long long rss_before, rss_after;
    uint64_t reached;
    int stop_reason, stop_errno;
    double stop_s;
    bool interrupted;
    rlim_t nofile_soft, nofile_hard;
    int exit_status;
};

/* Adds n workers' counters, errors and histograms to r. */
void merge_results(const struct worker_results *workers, long n, struct results *r);
/* The human-readable summary. */
void print_text(FILE *out, const struct options *o, const struct results *r);
/* The one JSON object, on stdout (--json). */
void print_json(const struct options *o, const struct results *r);

#endif

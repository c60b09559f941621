/* echo_client's results: the workers' results merged, the human-readable
 * summary and the JSON object (docs/contracts.md); see echo_report.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "echo_report.h"
#include "echo_stop.h"

void merge_results(const struct worker_results *workers, long n, struct results *r)
{
    for (long i = 0; i < n; i++) {
        const struct worker_results *w = &workers[i];
        histogram_merge(r->hist, &w->hist);
        for (size_t k = 0; k < ERRNO_SLOTS; k++) {
            r->connect_errors[k] += w->connect_errors[k];
            r->closed_early[k] += w->closed_early[k];
            r->connect_errors_total += w->connect_errors[k];
            r->closed_early_total += w->closed_early[k];
        }
        r->verify_errors += w->verify_errors;
        r->echo_timeouts += w->echo_timeouts;
        r->sweep_alive += w->sweep_alive;
        r->unanswered += w->unanswered_messages;
        r->not_attempted += w->not_attempted;
        r->due_unsent += w->due_unsent_messages;
        if (w->first_failure.set && (!r->first_failure.set || w->first_failure.at_ns < r->first_failure.at_ns))
            r->first_failure = w->first_failure;
        if (w->last_connected_ns > r->last_connected_ns)
            r->last_connected_ns = w->last_connected_ns;
    }
}

static const double percentiles[] = {50, 90, 99, 99.9, 99.99};

void print_text(FILE *out, const struct options *o, const struct results *r)
{
    const struct histogram *h = r->hist;
    fprintf(out, "\nconnections: %" PRIu64 " of %ld connected", r->end.connected, o->connections);
    if (r->end.connected == (uint64_t)o->connections)
        fprintf(out, " (the last at %.3f s)", (double)(r->last_connected_ns - r->start_ns) / 1e9);
    fprintf(out, "; open at the end of the trial %" PRIu64 "; never attempted %" PRIu64 "\n", r->window.open,
            r->not_attempted);
    fprintf(out, "connect errors: ");
    print_errno_counts(out, r->connect_errors, COUNTS_AS_TEXT);
    fprintf(out, "\nclosed early: ");
    print_errno_counts(out, r->closed_early, COUNTS_AS_TEXT);
    fprintf(out, "\ntraffic: %" PRIu64 " bytes sent, %" PRIu64 " received, %" PRIu64 " echoes (%.1f/s over %.3f s)",
            r->end.bytes_sent, r->end.bytes_received, r->end.echoes,
            r->window_s > 0 ? (double)r->window.echoes / r->window_s : 0.0, r->window_s);
    fprintf(out, "; %" PRIu64 " never answered", r->unanswered);
    if (o->rate > 0)
        fprintf(out, "; %" PRIu64 " due but never sent (--depth full: the server fell behind)", r->due_unsent);
    fprintf(out, "\n");
    fprintf(out, "verification: every received byte checked, %" PRIu64 " errors", r->verify_errors);
    if (r->first_failure.set)
        fprintf(out, " (first: connection %" PRIu32 ", offset %" PRIu64 ", expected %d, got %d)",
                r->first_failure.connection, r->first_failure.offset, r->first_failure.expected, r->first_failure.got);
    fprintf(out, "\nrtt (us): n %" PRIu64 ", mean %.1f, min %.1f", h->count, histogram_mean(h) / 1e3,
            h->count ? (double)h->min / 1e3 : 0.0);
    for (size_t i = 0; i < sizeof percentiles / sizeof percentiles[0]; i++)
        fprintf(out, ", p%g %.1f", percentiles[i], (double)histogram_percentile(h, percentiles[i]) / 1e3);
    fprintf(out, ", max %.1f\n", (double)h->max / 1e3);
    if (max_conns_mode(o)) {
        char buf[48];
        fprintf(out,
                "max-conns: %" PRIu64 " of %ld held and verified, stopped by %s after %.3f s; %" PRIu64
                " echoed again at the end\n",
                r->reached, o->max_conns, stop_reason_text(r->stop_reason, r->stop_errno, buf, sizeof buf), r->stop_s,
                r->sweep_alive);
        if (r->rss_before >= 0 && r->rss_after >= 0)
            fprintf(out, "server %ld VmRSS: %lld -> %lld bytes, %.0f bytes per connection\n", o->server_pid,
                    r->rss_before, r->rss_after,
                    r->reached ? (double)(r->rss_after - r->rss_before) / (double)r->reached : 0.0);
    }
    fprintf(out, "open files: soft limit %llu, hard limit %llu%s\n", (unsigned long long)r->nofile_soft,
            (unsigned long long)r->nofile_hard, r->interrupted ? "; interrupted" : "");
    fflush(out);
}

void print_json(const struct options *o, const struct results *r)
{
    const struct histogram *h = r->hist;
    printf("{\"tool\":\"echo_client\",\"mode\":\"%s\",\"host\":\"%s\",\"port\":%ld,\"connections\":%ld,"
           "\"threads\":%ld,\"duration_s\":%g,\"size\":%ld,\"depth\":%ld,\"rate\":%g,\"connect_rate\":%g,"
           "\"connect_timeout_s\":%g,\"sources\":%ld,\"seed\":%" PRIu64 ",",
           max_conns_mode(o) ? "max_conns" : "throughput", o->host, o->port, o->connections, o->threads, o->duration_s,
           o->size, o->depth, o->rate, o->connect_rate, o->connect_timeout_s, o->sources, o->seed);
    printf("\"nofile_soft\":%llu,\"nofile_hard\":%llu,\"elapsed_s\":%.6f,\"window_s\":%.6f,\"interrupted\":%s,",
           (unsigned long long)r->nofile_soft, (unsigned long long)r->nofile_hard, r->elapsed_s, r->window_s,
           r->interrupted ? "true" : "false");
    printf("\"connected\":%" PRIu64 ",\"all_connected_s\":", r->end.connected);
    if (r->end.connected == (uint64_t)o->connections)
        printf("%.6f", (double)(r->last_connected_ns - r->start_ns) / 1e9);
    else
        printf("null");
    printf(",\"open_at_end\":%" PRIu64 ",\"not_attempted\":%" PRIu64 ",\"connect_errors\":{", r->window.open,
           r->not_attempted);
    print_errno_counts(stdout, r->connect_errors, COUNTS_AS_JSON);
    printf("},\"closed_early\":{");
    print_errno_counts(stdout, r->closed_early, COUNTS_AS_JSON);
    printf("},\"bytes_sent\":%" PRIu64 ",\"bytes_received\":%" PRIu64 ",\"echoes\":%" PRIu64
           ",\"window_echoes\":%" PRIu64 ",\"echoes_per_sec\":%.3f,\"unanswered_messages\":%" PRIu64
           ",\"due_unsent_messages\":%" PRIu64 ",\"verify_errors\":%" PRIu64 ",\"first_verify_error\":",
           r->end.bytes_sent, r->end.bytes_received, r->end.echoes, r->window.echoes,
           r->window_s > 0 ? (double)r->window.echoes / r->window_s : 0.0, r->unanswered, r->due_unsent,
           r->verify_errors);
    if (r->first_failure.set) {
        printf("{\"connection\":%" PRIu32 ",\"offset\":%" PRIu64 ",\"expected\":", r->first_failure.connection,
               r->first_failure.offset);
        if (r->first_failure.expected < 0)
            printf("null");
        else
            printf("%d", r->first_failure.expected);
        printf(",\"got\":%d,\"at_s\":%.6f}", r->first_failure.got,
               (double)(r->first_failure.at_ns - r->start_ns) / 1e9);
    } else {
        printf("null");
    }
    printf(",\"rtt_ns\":{\"count\":%" PRIu64 ",\"mean\":%.1f,\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"percentiles\":{",
           h->count, histogram_mean(h), h->count ? h->min : 0, h->max);
    for (size_t i = 0; i < sizeof percentiles / sizeof percentiles[0]; i++)
        printf("%s\"%g\":%" PRIu64, i ? "," : "", percentiles[i], histogram_percentile(h, percentiles[i]));
    printf("}},\"series\":[");
    for (size_t i = 0; i < r->series_len; i++) {
        const struct sample *s = &r->series[i];
        const struct sample zero = {0};
        const struct sample *p = i > 0 ? &r->series[i - 1] : &zero;
        printf("%s{\"second\":%.3f,\"bytes_sent\":%" PRIu64 ",\"bytes_received\":%" PRIu64 ",\"echoes\":%" PRIu64
               ",\"open_connections\":%" PRIu64 "}",
               i ? "," : "", s->second, s->bytes_sent - p->bytes_sent, s->bytes_received - p->bytes_received,
               s->echoes - p->echoes, s->open);
    }
    printf("],\"max_conns\":");
    if (max_conns_mode(o)) {
        char buf[48];
        printf("{\"cap\":%ld,\"reached\":%" PRIu64 ",\"alive_at_end\":%" PRIu64 ",\"stop_reason\":\"%s\","
               "\"stop_s\":%.6f,\"echo_timeouts\":%" PRIu64 ",\"server_pid\":",
               o->max_conns, r->reached, r->sweep_alive,
               stop_reason_text(r->stop_reason, r->stop_errno, buf, sizeof buf), r->stop_s, r->echo_timeouts);
        if (o->server_pid)
            printf("%ld", o->server_pid);
        else
            printf("null");
        if (r->rss_before >= 0 && r->rss_after >= 0)
            printf(",\"server_rss_before_bytes\":%lld,\"server_rss_after_bytes\":%lld,"
                   "\"server_rss_per_conn_bytes\":%.1f}",
                   r->rss_before, r->rss_after,
                   r->reached ? (double)(r->rss_after - r->rss_before) / (double)r->reached : 0.0);
        else
            printf(",\"server_rss_before_bytes\":null,\"server_rss_after_bytes\":null,"
                   "\"server_rss_per_conn_bytes\":null}");
    } else {
        printf("null");
    }
    printf(",\"exit_status\":%d}\n", r->exit_status);
    fflush(stdout);
}

/* open_loop's JSON report; see open_loop_report.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "latency_histogram.h"
#include "open_loop_report.h"

#define U(x) ((unsigned long long)(x))

static void print_series(const char *name, const uint64_t *v, unsigned n)
{
    printf("\"%s\":[", name);
    for (unsigned i = 0; i < n; i++)
        printf("%s%llu", i ? "," : "", U(v[i]));
    printf("]");
}

static void print_latency(const struct latency_histogram *h)
{
    static const struct {
        const char *name;
        double q;
    } ps[] = {{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99_9", 99.9}};
    printf("\"latency_ns\":{\"count\":%llu,\"min\":%llu,\"mean\":%.1f", U(h->total), U(h->total ? h->min_ns : 0),
           h->total ? (double)(h->sum_ns / (long double)h->total) : 0.0);
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        printf(",\"%s\":%llu", ps[i].name, U(lh_percentile(h, ps[i].q)));
    printf(",\"max\":%llu,\"clamped\":%llu}", U(h->max_ns), U(h->clamped));
    printf(",\"histogram\":{\"unit\":\"ns\",\"sub_bucket_bits\":%d,\"percentile_value\":\"bucket_upper_edge\","
           "\"buckets\":[",
           LH_SUB_BITS);
    bool first = true;
    for (uint32_t i = 0; i < LH_BUCKETS; i++) {
        if (h->counts[i] == 0)
            continue;
        printf("%s[%llu,%llu,%llu]", first ? "" : ",", U(lh_lower(i)), U(lh_upper(i)), U(h->counts[i]));
        first = false;
    }
    printf("]}");
}

/* The client's own lateness: a few percentiles suffice to judge it (the buckets are not printed). */
static void print_send_lag(const struct latency_histogram *h)
{
    printf(",\"send_lag_ns\":{\"count\":%llu,\"mean\":%.1f,\"p50\":%llu,\"p99\":%llu,\"max\":%llu}", U(h->total),
           h->total ? (double)(h->sum_ns / (long double)h->total) : 0.0, U(lh_percentile(h, 50)),
           U(lh_percentile(h, 99)), U(h->max_ns));
}

void print_ol_json(const struct ol_options *o, const struct ol_run *run, const struct ol_stats *s)
{
    printf(
        "{\"tool\":\"open_loop\",\"parameters\":{\"host\":\"%s\",\"port\":%ld,\"path\":\"%s\",\"host_header\":\"%s\","
        "\"rate\":%.6g,\"arrival\":\"%s\",\"seed\":%llu,\"connections\":%ld,\"threads\":%ld,\"duration_s\":%.6g,"
        "\"warmup_s\":%.6g,\"timeout_s\":%.6g,\"sources\":%ld,\"pipelining\":%s,\"pipeline\":%ld,"
        "\"timer_slack_ns\":%ld}",
        o->host, o->port, o->path, run->host_header, o->rate, o->arrival == ARRIVAL_FIXED ? "fixed" : "poisson",
        U(o->seed), o->connections, o->threads, o->duration_s, o->warmup_s, o->timeout_s, o->sources,
        o->pipeline > 1 ? "true" : "false", o->pipeline, run->timer_slack_ns);
    printf(",\"counts\":{\"scheduled\":%llu,\"sent\":%llu,\"completed\":%llu,\"non_2xx\":%llu,\"lost\":%llu,"
           "\"outstanding_at_end\":%llu,\"unsent_at_end\":%llu,\"warmup_completed\":%llu,\"reconnects\":%llu,"
           "\"late_sends\":%llu}",
           U(s->scheduled), U(s->sent), U(s->completed), U(s->non_2xx), U(s->lost), U(s->outstanding_at_end),
           U(s->unsent_at_end), U(s->warmup_completed), U(s->reconnects), U(s->late_sends));
    printf(",\"errors\":{\"timeout\":%llu,\"bad_response\":%llu,\"unsolicited\":%llu,\"closed_by_server\":%llu,"
           "\"connect\":{",
           U(s->timeouts), U(s->bad_responses), U(s->unsolicited), U(s->closed_by_server));
    print_errno_counts(stdout, s->connect_errors, COUNTS_AS_JSON);
    printf("},\"io\":{");
    print_errno_counts(stdout, s->io_errors, COUNTS_AS_JSON);
    printf("}},");
    print_latency(&s->hist);
    print_send_lag(&s->send_lag);
    printf(",\"per_second\":{");
    print_series("sent", s->sent_per_s, run->seconds);
    printf(",");
    print_series("completed", s->completed_per_s, run->seconds);
    printf("},\"cpu\":{\"user_s\":%.6f,\"sys_s\":%.6f,\"wall_s\":%.6f,\"cpus_available\":%d}", run->cpu_user_s,
           run->cpu_sys_s, run->wall_s, run->cpus);
    printf(",\"open_files\":{\"soft\":%llu,\"hard\":%llu}}\n", U(run->soft_files), U(run->hard_files));
}

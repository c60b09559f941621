/* idle_holder's tally and JSON object; see idle_report.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "idle_report.h"

void tally_closed(struct idle_tally *t, int err, uint64_t now)
{
    t->closed[errno_slot(err)]++;
    if (t->closed_total++ == 0)
        t->first_closed_ns = now;
    t->last_closed_ns = now;
    uint64_t second = (now - t->start_ns) / 1000000000ull;
    if (t->per_second_len > 0 && t->per_second[t->per_second_len - 1].second == second)
        t->per_second[t->per_second_len - 1].count++;
    else /* a connection closes once: one entry each at most */
        t->per_second[t->per_second_len++] = (struct close_second){second, 1};
}

static double since_start(const struct idle_tally *t, uint64_t ns) { return (double)(ns - t->start_ns) / 1e9; }

static void print_seconds_or_null(const struct idle_tally *t, bool known, uint64_t ns)
{
    if (known)
        printf("%.6f", since_start(t, ns));
    else
        printf("null");
}

static void print_request_failures(const struct idle_tally *t)
{
    static const char *const kinds[REQ_FAILURE_KINDS] = {"timeout", "bad_response", "connection_close", "extra_bytes"};
    bool first = true;
    printf("{");
    for (size_t k = 0; k < ERRNO_SLOTS; k++)
        if (t->request_errors[k] > 0) {
            printf("%s\"%s\":%" PRIu64, first ? "" : ",", errno_name((int)k), t->request_errors[k]);
            first = false;
        }
    for (size_t k = 0; k < REQ_FAILURE_KINDS; k++)
        if (t->request_failures[k] > 0) {
            printf("%s\"%s\":%" PRIu64, first ? "" : ",", kinds[k], t->request_failures[k]);
            first = false;
        }
    for (size_t k = 0; k < HTTP_STATUS_SLOTS; k++)
        if (t->request_status[k] > 0) {
            printf("%s\"http_%zu\":%" PRIu64, first ? "" : ",", k, t->request_status[k]);
            first = false;
        }
    printf("}");
}

void print_idle_json(const struct idle_options *o, const struct idle_tally *t)
{
    printf("{\"tool\":\"idle_holder\",\"host\":\"%s\",\"port\":%ld,\"requested\":%ld,\"sources\":%ld,"
           "\"in_flight\":%ld,\"connect_timeout_s\":%g,\"response_timeout_s\":%g,\"duration_s\":",
           o->host, o->port, o->connections, o->sources, o->in_flight, o->connect_timeout_s, o->response_timeout_s);
    if (o->duration_s > 0)
        printf("%g", o->duration_s);
    else
        printf("null");
    printf(",\"path\":\"%s\",\"nofile_soft\":%llu,\"nofile_hard\":%llu,", o->path, (unsigned long long)t->nofile_soft,
           (unsigned long long)t->nofile_hard);
    printf("\"attempted\":%" PRIu64 ",\"connected\":%" PRIu64 ",\"established\":%" PRIu64 ",\"all_established_s\":",
           t->attempted, t->connected, t->established);
    print_seconds_or_null(t, t->ready_ns != 0, t->ready_ns);
    printf(",\"connect_failures\":{");
    print_errno_counts(stdout, t->connect_failures, COUNTS_AS_JSON);
    printf("},\"first_request_failures\":");
    print_request_failures(t);
    printf(",\"held_s\":");
    if (t->ready_ns != 0)
        printf("%.6f", (double)(t->end_ns - t->ready_ns) / 1e9);
    else
        printf("null");
    printf(",\"closed_by_server\":{\"count\":%" PRIu64 ",\"by_reason\":{", t->closed_total);
    print_errno_counts(stdout, t->closed, COUNTS_AS_JSON);
    printf("},\"first_s\":");
    print_seconds_or_null(t, t->closed_total > 0, t->first_closed_ns);
    printf(",\"last_s\":");
    print_seconds_or_null(t, t->closed_total > 0, t->last_closed_ns);
    printf(",\"per_second\":[");
    for (size_t i = 0; i < t->per_second_len; i++)
        printf("%s{\"second\":%" PRIu64 ",\"closed\":%" PRIu64 "}", i ? "," : "", t->per_second[i].second,
               t->per_second[i].count);
    printf("]},\"unexpected_bytes\":%" PRIu64 ",\"open_at_end\":%" PRIu64 ",\"interrupted\":%s,\"stopped_by\":\"%s\","
           "\"elapsed_s\":%.6f,\"exit_status\":%d}\n",
           t->unexpected_bytes, t->open_at_end, t->interrupted ? "true" : "false", t->stopped_by,
           since_start(t, t->end_ns), t->exit_status);
    fflush(stdout);
}

/* open_loop: an open-loop HTTP/1.1 load generator with latency counted from
 * each request's scheduled send time and an exact, mergeable histogram.
 *
 * Why: the latency study's open-loop generator (oha) could not offer the rates
 * it was asked for, its own CPU saturated: its percentiles were its own
 * queueing. This client does little per request (one send, one recv, a small
 * parser, a histogram increment) so that the server, not the client, is what
 * saturates.
 *
 * How: T threads (open_loop_worker.c), each an epoll loop over its share of the
 * connections; they connect, meet at a barrier, main sets the common start t0
 * and they run to t0 + warmup + duration. Main then adds their counts and
 * histograms and prints one JSON object (open_loop_report.c). Usage:
 * open_loop_options.c or --help. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli_flags.h"
#include "mono_clock.h"
#include "open_files.h"
#include "open_loop_report.h"
#include "open_loop_worker.h"

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static void add_stats(struct ol_stats *into, const struct ol_stats *from, unsigned seconds)
{
    lh_add(&into->hist, &from->hist);
    lh_add(&into->send_lag, &from->send_lag);
    for (unsigned i = 0; i < seconds; i++) {
        into->sent_per_s[i] += from->sent_per_s[i];
        into->completed_per_s[i] += from->completed_per_s[i];
    }
    into->scheduled += from->scheduled;
    into->sent += from->sent;
    into->completed += from->completed;
    into->non_2xx += from->non_2xx;
    into->lost += from->lost;
    into->outstanding_at_end += from->outstanding_at_end;
    into->unsent_at_end += from->unsent_at_end;
    into->warmup_completed += from->warmup_completed;
    into->reconnects += from->reconnects;
    into->timeouts += from->timeouts;
    into->bad_responses += from->bad_responses;
    into->unsolicited += from->unsolicited;
    into->closed_by_server += from->closed_by_server;
    into->late_sends += from->late_sends;
    for (size_t k = 0; k < ERRNO_SLOTS; k++) {
        into->connect_errors[k] += from->connect_errors[k];
        into->io_errors[k] += from->io_errors[k];
    }
}

int main(int argc, char **argv)
{
    struct ol_options o;
    parse_ol_options(argc, argv, &o);
    struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o.port)};
    if (inet_pton(AF_INET, o.host, &server.sin_addr) != 1)
        cli_bad_usage("--host", "expects an IPv4 address", o.host);
    struct ol_run run = {0};
    if (!open_files_raise((rlim_t)(o.connections + OL_RESERVED_FDS), &run.soft_files, &run.hard_files) ||
        run.soft_files < (rlim_t)(o.connections + OL_RESERVED_FDS)) {
        char problem[128];
        snprintf(problem, sizeof problem,
                 "needs %ld descriptors (%d beside the connections); the open-file limit is %llu",
                 o.connections + OL_RESERVED_FDS, OL_RESERVED_FDS, (unsigned long long)run.soft_files);
        cli_bad_usage("--connections", problem, NULL);
    }
    signal(SIGPIPE, SIG_IGN);

    char host_header[1100], request[2300];
    if (o.host_header == NULL) {
        snprintf(host_header, sizeof host_header, "%s:%ld", o.host, o.port);
        o.host_header = host_header;
    }
    run.host_header = o.host_header;
    int request_len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", o.path, o.host_header);
    run.seconds = (unsigned)(o.duration_s + 0.999999);
    cpu_set_t cpus;
    run.cpus = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;

    size_t t = (size_t)o.threads;
    struct ol_worker *workers = calloc(t, sizeof *workers);
    pthread_t *threads = calloc(t, sizeof *threads);
    static struct ol_stats total;
    total.sent_per_s = calloc(run.seconds, sizeof(uint64_t));
    total.completed_per_s = calloc(run.seconds, sizeof(uint64_t));
    if (!workers || !threads || !total.sent_per_s || !total.completed_per_s) {
        fprintf(stderr, "open_loop: out of memory\n");
        return 1;
    }
    lh_init(&total.hist);
    lh_init(&total.send_lag);
    pthread_barrier_t connected, started;
    pthread_barrier_init(&connected, NULL, (unsigned)t + 1);
    pthread_barrier_init(&started, NULL, (unsigned)t + 1);
    uint64_t t0 = 0;
    size_t launched = 0;
    for (; launched < t; launched++) {
        struct ol_worker *w = &workers[launched];
        *w = (struct ol_worker){.o = &o,
                                .server = server,
                                .request = request,
                                .request_len = (size_t)request_len,
                                .index = (long)launched,
                                .connected = &connected,
                                .started = &started,
                                .t0 = &t0,
                                .seconds = run.seconds};
        if (pthread_create(&threads[launched], NULL, ol_worker_run, w) != 0) {
            fprintf(stderr, "open_loop: cannot start thread %zu\n", launched);
            exit(1); /* the started ones wait at the barrier: nothing to report */
        }
    }
    pthread_barrier_wait(&connected);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    t0 = now_ns();
    pthread_barrier_wait(&started);
    int status = 0;
    for (size_t i = 0; i < t; i++) {
        pthread_join(threads[i], NULL);
        if (workers[i].failed != 0) {
            fprintf(stderr, "open_loop: thread %zu could not run: %s\n", i, strerror(workers[i].failed));
            status = 1;
        }
    }
    run.wall_s = (double)(now_ns() - t0) / 1e9;
    run.timer_slack_ns = workers[0].timer_slack_ns;
    getrusage(RUSAGE_SELF, &after);
    run.cpu_user_s = tv_s(after.ru_utime) - tv_s(before.ru_utime);
    run.cpu_sys_s = tv_s(after.ru_stime) - tv_s(before.ru_stime);
    for (size_t i = 0; i < t; i++) {
        if (workers[i].stats.sent_per_s != NULL && workers[i].stats.completed_per_s != NULL)
            add_stats(&total, &workers[i].stats, run.seconds);
        free(workers[i].stats.sent_per_s);
        free(workers[i].stats.completed_per_s);
    }
    if (status == 0)
        print_ol_json(&o, &run, &total);
    fprintf(stderr, "open_loop: %llu scheduled, %llu sent, %llu completed at %.6g/s offered, %.3f s CPU over %.3f s\n",
            (unsigned long long)total.scheduled, (unsigned long long)total.sent, (unsigned long long)total.completed,
            o.rate, run.cpu_user_s + run.cpu_sys_s, run.wall_s);
    pthread_barrier_destroy(&connected);
    pthread_barrier_destroy(&started);
    free(workers);
    free(threads);
    free(total.sent_per_s);
    free(total.completed_per_s);
    return status;
}

/* echo_client: an epoll load generator for echo servers that verifies every
 * byte it gets back.
 *
 * Source 004 measured echo servers with a client whose numbers cannot be
 * trusted, for three reasons this client corrects:
 *
 * - It never checked what came back, so a server that corrupted, reordered,
 *   dropped or duplicated bytes passed. Here connection i sends a
 *   pseudo-random stream in which byte k is a function of (--seed, i, k)
 *   (splitmix64 over 8-byte blocks), so every received byte is checked
 *   against what must be at its offset, without keeping a copy of what was
 *   sent. Corruption, reordering and duplication put wrong bytes at some
 *   offset, and so does loss, except at the very end of a stream, where it
 *   shows as messages never answered. The first mismatch is reported with its
 *   connection and offset, every one is counted (verify_errors), the
 *   connection is closed (its stream can no longer be trusted), and the exit
 *   status is 1.
 * - Its "delay" came from a seconds field that wrapped every second. Here
 *   every timestamp is CLOCK_MONOTONIC in nanoseconds. A message's round-trip
 *   time runs from the moment it was due to the moment its last byte came
 *   back. With --rate R, message k of a connection is due at start + k/R
 *   whether or not it could be sent then (the connection had --depth
 *   messages outstanding already), so a server that stalls is charged for
 *   every message that queued up behind the stall: no coordinated omission.
 *   Without --rate each connection keeps --depth messages outstanding (a
 *   closed loop) and a message is due when the previous one came back.
 *   RTTs go into a log-linear histogram (core/histogram.h).
 * - Its 28,000-connection ceiling for epoll was most likely the client's
 *   ephemeral port range (32768-60999 on Linux: 28,232 ports towards one
 *   server address and port), not the server. --sources K binds connection i
 *   to 127.0.0.(1 + i mod K) before connecting (with IP_BIND_ADDRESS_NO_PORT,
 *   so the port is chosen for the whole 4-tuple at connect time): K x 28,232
 *   connections fit, and the open-file limit is what remains. The client
 *   raises its soft RLIMIT_NOFILE to the hard limit and reports both; it
 *   needs one descriptor per connection itself, and so does the server, each
 *   within its own limit. --max-conns measures the ceiling explicitly and
 *   says why it stopped.
 *
 * Structure: --threads T workers, each an edge-triggered epoll loop over its
 * own block of connections, with private counters, errors and histogram
 * (merged at the end) and, for --rate, a min-heap of send deadlines. Each
 * worker publishes its running totals once per loop iteration; the main
 * thread samples them once a second (the time series), waits for SIGINT and
 * SIGTERM, and prints the summary (and with --json one JSON object on stdout;
 * the human-readable lines then go to stderr). See usage() for the flags and
 * docs/contracts.md for the JSON fields.
 *
 * Files, each part behind its own header, which states its contract:
 *   echo_client.c         this: the main thread (start, sample, signals, exit status)
 *   echo_options.[ch]     the command line
 *   echo_control.h        what the main thread and the workers signal each other
 *   echo_stop.[ch]        why a --max-conns ramp stopped, set by whoever saw it first
 *   echo_results.h        what one worker found: all a worker reports
 *   echo_worker.[ch]      a worker's loop (echo_worker_state.h: its inside)
 *   echo_conn.c           one connection's life inside its worker
 *   deadline_heap.[ch]    the --rate send deadlines
 *   payload_stream.h      the payload streams
 *   echo_report.[ch]      merging the workers' results, the text and the JSON
 * and, shared with idle_holder: cli_flags (flags), errno_counts (failures by
 * errno), source_connect (--sources), open_files (RLIMIT_NOFILE), mono_clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "cli_flags.h"
#include "echo_control.h"
#include "echo_options.h"
#include "echo_report.h"
#include "echo_results.h"
#include "echo_worker.h"
#include "mono_clock.h"
#include "open_files.h"

#define EXIT_FAILURES 1

/* What the main thread keeps: the workers see only ctl and their own results. */
struct client {
    struct options o;
    FILE *text_out; /* stdout, or stderr with --json */
    struct sockaddr_in server;
    struct echo_control ctl;
    long threads;
    struct echo_worker **workers;
    pthread_t *thread_ids;
    struct worker_results *results; /* one per worker */
};

static struct sample take_sample(struct client *c, uint64_t now)
{
    struct sample s = {.second = (double)(now - c->ctl.start_ns) / 1e9};
    for (long i = 0; i < c->threads; i++) {
        struct live_totals *p = &c->results[i].live;
        s.bytes_sent += atomic_load_explicit(&p->bytes_sent, memory_order_relaxed);
        s.bytes_received += atomic_load_explicit(&p->bytes_received, memory_order_relaxed);
        s.echoes += atomic_load_explicit(&p->echoes, memory_order_relaxed);
        s.open += atomic_load_explicit(&p->open, memory_order_relaxed);
        s.connected += atomic_load_explicit(&p->connected, memory_order_relaxed);
        s.held += atomic_load_explicit(&p->held, memory_order_relaxed);
    }
    return s;
}

/* Sleeps until the deadline; true if SIGINT or SIGTERM came first. */
static bool sleep_until(uint64_t deadline)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline)
            return false;
        uint64_t left = deadline - now;
        struct timespec ts = {(time_t)(left / NS_PER_S), (long)(left % NS_PER_S)};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            return true;
    }
}

static void print_sample(FILE *text_out, const struct sample *prev, const struct sample *s)
{
    fprintf(text_out, "%8.3g %14" PRIu64 " %14" PRIu64 " %10" PRIu64 " %8" PRIu64 "\n", s->second,
            s->bytes_sent - prev->bytes_sent, s->bytes_received - prev->bytes_received, s->echoes - prev->echoes,
            s->open);
    fflush(text_out);
}

/* VmRSS of a process in bytes, or -1. */
static long long read_rss(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long long kb = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* Samples the series once a second until the workers are done (or, in
 * throughput mode, the window ends); runs the --max-conns hand-shake. */
static void supervise(struct client *c, struct results *r, size_t series_cap)
{
    struct sample prev = {0};
    bool window_done = false;
    for (uint64_t k = 1;; k++) {
        uint64_t tick = c->ctl.start_ns + k * NS_PER_S;
        uint64_t end = atomic_load(&c->ctl.end_ns);
        if (!max_conns_mode(&c->o) && tick > end)
            tick = end;
        /* Short naps so the --max-conns hand-shake and the end are not late. */
        bool signalled = false;
        while (!signalled && now_ns() < tick) {
            uint64_t nap = min_u64(tick, now_ns() + 20000000ull);
            signalled = sleep_until(nap);
            if (max_conns_mode(&c->o) && atomic_load(&c->ctl.settled) == c->threads && !atomic_load(&c->ctl.sweep_go)) {
                if (c->o.server_pid) {
                    struct timespec pause = {0, 200000000}; /* let the server's memory settle */
                    nanosleep(&pause, NULL);
                    r->rss_after = read_rss(c->o.server_pid);
                }
                struct sample s = take_sample(c, now_ns());
                r->reached = s.held;
                atomic_store(&c->ctl.sweep_go, true);
            }
            if (atomic_load(&c->ctl.finished) == c->threads)
                break;
        }
        uint64_t now = now_ns();
        if (signalled) {
            r->interrupted = true;
            atomic_store(&c->ctl.end_ns, now);
            stop_set(&c->ctl.stop, STOP_INTERRUPTED, 0);
            atomic_store(&c->ctl.interrupted, true);
        }
        struct sample s = take_sample(c, now);
        bool last = atomic_load(&c->ctl.finished) == c->threads || signalled ||
            (!max_conns_mode(&c->o) && now >= atomic_load(&c->ctl.end_ns));
        if (r->series_len < series_cap && (s.second > prev.second + 1e-3 || r->series_len == 0)) {
            print_sample(c->text_out, &prev, &s);
            r->series[r->series_len++] = s;
            prev = s;
        }
        if (!window_done && last) {
            r->window = s;
            r->window_s = s.second;
            window_done = true;
        }
        if (last)
            return;
    }
}

int main(int argc, char **argv)
{
    struct client c;
    memset(&c, 0, sizeof c);
    parse_options(argc, argv, &c.o);
    c.text_out = c.o.json ? stderr : stdout;

    c.server.sin_family = AF_INET;
    c.server.sin_port = htons((uint16_t)c.o.port);
    if (inet_pton(AF_INET, c.o.host, &c.server.sin_addr) != 1)
        cli_bad_usage("--host", "expects an IPv4 address", c.o.host);

    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, NULL); /* the workers inherit it; main waits for them */
    signal(SIGPIPE, SIG_IGN);
    (void)prctl(PR_SET_TIMERSLACK, 1UL); /* --rate deadlines to the microsecond, not 50 us */

    struct results r;
    memset(&r, 0, sizeof r);
    r.rss_before = r.rss_after = -1;
    r.hist = malloc(sizeof *r.hist);
    (void)open_files_raise(RLIM_INFINITY, &r.nofile_soft, &r.nofile_hard);
    if (r.nofile_soft != RLIM_INFINITY && (rlim_t)c.o.connections + 16 > r.nofile_soft)
        fprintf(stderr, "echo_client: warning: %ld connections need more descriptors than the open-file limit %llu\n",
                c.o.connections, (unsigned long long)r.nofile_soft);
    if (c.o.server_pid) {
        r.rss_before = read_rss(c.o.server_pid);
        if (r.rss_before < 0)
            cli_bad_usage("--server-pid", "names no readable process", argv[0]);
    }

    c.threads = c.o.threads;
    c.workers = calloc((size_t)c.threads, sizeof c.workers[0]);
    c.thread_ids = calloc((size_t)c.threads, sizeof c.thread_ids[0]);
    c.results = calloc((size_t)c.threads, sizeof c.results[0]);
    size_t series_cap = (size_t)ceil(c.o.duration_s) + 64;
    r.series = calloc(series_cap, sizeof r.series[0]);
    if (r.hist == NULL || c.workers == NULL || c.thread_ids == NULL || c.results == NULL || r.series == NULL) {
        fprintf(stderr, "echo_client: out of memory\n");
        return EXIT_FAILURES;
    }
    histogram_init(r.hist);
    size_t per = (size_t)c.o.connections / (size_t)c.threads, extra = (size_t)c.o.connections % (size_t)c.threads;
    for (long i = 0, first = 0; i < c.threads; i++) {
        size_t n = per + ((size_t)i < extra);
        c.workers[i] = echo_worker_create(&c.o, &c.server, c.threads, &c.ctl, &c.results[i], (size_t)first, n);
        if (c.workers[i] == NULL) {
            fprintf(stderr, "echo_client: cannot set up worker %ld: %s\n", i, strerror(errno));
            return EXIT_FAILURES;
        }
        first += (long)n;
    }

    fprintf(c.text_out,
            "echo_client: %s:%ld, %ld connections (%ld source addresses), %ld threads, %s %g s, "
            "%ld-byte messages, depth %ld, %s\n",
            c.o.host, c.o.port, c.o.connections, c.o.sources, c.threads,
            max_conns_mode(&c.o) ? "ramp of at most" : "trial of", c.o.duration_s, c.o.size, c.o.depth,
            c.o.rate > 0 ? "open loop (--rate)" : "closed loop");
    fprintf(c.text_out, "%8s %14s %14s %10s %8s\n", "second", "bytes_sent", "bytes_received", "echoes", "open");

    c.ctl.start_ns = now_ns();
    atomic_store(&c.ctl.end_ns, max_conns_mode(&c.o) ? UINT64_MAX : c.ctl.start_ns + (uint64_t)(c.o.duration_s * 1e9));
    for (long i = 0; i < c.threads; i++)
        if (pthread_create(&c.thread_ids[i], NULL, echo_worker_main, c.workers[i]) != 0) {
            fprintf(stderr, "echo_client: cannot start worker threads\n");
            return EXIT_FAILURES;
        }
    supervise(&c, &r, series_cap);
    for (long i = 0; i < c.threads; i++)
        pthread_join(c.thread_ids[i], NULL);
    uint64_t done = now_ns();
    r.start_ns = c.ctl.start_ns;
    r.elapsed_s = (double)(done - c.ctl.start_ns) / 1e9;
    r.end = take_sample(&c, done);
    merge_results(c.results, c.threads, &r);
    r.stop_reason = atomic_load(&c.ctl.stop.reason);
    r.stop_errno = atomic_load(&c.ctl.stop.err);
    r.stop_s = r.stop_reason != STOP_NONE ? (double)(atomic_load(&c.ctl.stop.at_ns) - c.ctl.start_ns) / 1e9 : 0.0;
    if (max_conns_mode(&c.o) && !atomic_load(&c.ctl.sweep_go))
        r.reached = r.end.held; /* interrupted before the hand-shake */

    bool failed = r.verify_errors > 0;
    if (max_conns_mode(&c.o))
        failed |= !r.interrupted && r.sweep_alive < r.reached;
    else
        failed |= r.connect_errors_total > 0 || r.closed_early_total > 0 ||
            (!r.interrupted && (r.unanswered > 0 || r.not_attempted > 0));
    r.exit_status = failed ? EXIT_FAILURES : 0;
    print_text(c.text_out, &c.o, &r);
    if (c.o.json)
        print_json(&c.o, &r);
    for (long i = 0; i < c.threads; i++)
        echo_worker_destroy(c.workers[i]);
    free(c.workers);
    free(c.thread_ids);
    free(c.results);
    free(r.series);
    free(r.hist);
    return r.exit_status;
}

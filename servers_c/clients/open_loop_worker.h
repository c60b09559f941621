/* One open_loop thread: an epoll loop over its share of the connections,
 * sending each connection's requests at their scheduled times.
 *
 * Owns: its connections, epoll instance, heap and its ol_stats (written by
 * this thread only, read by main after the join). Promises: every request
 * scheduled in the window ends up in exactly one of: completed (2xx, in the
 * histogram), non_2xx, lost (its connection failed while it was outstanding,
 * the failure counted by kind), outstanding_at_end or unsent_at_end. Used by
 * open_loop.c. */
#ifndef ARCHBENCH_OPEN_LOOP_WORKER_H
#define ARCHBENCH_OPEN_LOOP_WORKER_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>

#include "errno_counts.h"
#include "latency_histogram.h"
#include "open_loop_options.h"

/* What one thread counted; main adds them up (every field is a sum). */
struct ol_stats {
    struct latency_histogram hist; /* 2xx responses to requests scheduled in the window */
    /* how late the window's requests were sent by a connection with room for them (not held
     * behind a response): the client's own part of their latency */
    struct latency_histogram send_lag;
    uint64_t *sent_per_s, *completed_per_s;
    uint64_t scheduled, sent, completed, non_2xx, lost, outstanding_at_end, unsent_at_end;
    uint64_t warmup_completed, reconnects;
    uint64_t timeouts, bad_responses, unsolicited, closed_by_server;
    uint64_t late_sends; /* sent over 1 ms after their schedule by a connection with room: the client was late */
    uint64_t connect_errors[ERRNO_SLOTS], io_errors[ERRNO_SLOTS];
};

struct ol_worker {
    const struct ol_options *o;
    struct sockaddr_in server;
    const char *request;
    size_t request_len;
    long index;                             /* this thread's; it runs connections index, index + T, ... */
    pthread_barrier_t *connected, *started; /* all connects begun; main has set t0 */
    const uint64_t *t0;                     /* read after `started` */
    unsigned seconds;                       /* length of the per-second series */
    struct ol_stats stats;
    long timer_slack_ns; /* the thread's, as it ran */
    int failed;          /* an errno: the thread could not run (allocation, epoll, prctl) */
};

void *ol_worker_run(void *arg);

#endif

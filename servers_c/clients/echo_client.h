/* What the parts of echo_client share: its options, a worker's connections and
 * counters, the client they belong to, and the results the main thread merges
 * and reports. See echo_client.c for what the client does and why. */
#ifndef ARCHBENCH_ECHO_CLIENT_H
#define ARCHBENCH_ECHO_CLIENT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "histogram.h"

#define EXIT_FAILURES 1
#define EXIT_USAGE 2

#define IO_CHUNK (64 * 1024) /* one send or recv at most */
#define EVENT_BATCH 256
#define OPEN_BATCH 256          /* connections opened per loop iteration at most */
#define MAX_WAIT_NS 10000000ull /* a loop looks at stop requests at least this often */
#define DRAIN_NS 2000000000ull  /* after the trial: time allowed for echoes in flight */
#define SETTLE_NS 1000000000ull /* --max-conns: time allowed for connects in flight */
#define NS_PER_S 1000000000ull
#define ERRNO_SLOTS 256 /* Linux errno values are below this; slot 0 stands for EOF */

/* ---- options (echo_options.c) ---------------------------------------------- */

struct options {
    const char *host;
    long port;
    long connections;
    long threads;
    double duration_s;
    bool duration_given;
    long size;
    long depth;
    double rate;
    double connect_rate;
    double connect_timeout_s;
    long sources;
    uint64_t seed;
    bool json;
    long max_conns;  /* 0: throughput mode */
    long server_pid; /* 0: none */
};

/* Parses argv into o; prints usage and exits 0 on --help, EXIT_USAGE on bad input. */
void parse_options(int argc, char **argv, struct options *o);

/* Names the offending flag and value and exits with EXIT_USAGE. */
_Noreturn void bad_usage(const char *flag, const char *problem, const char *value);

/* ---- small helpers ------------------------------------------------------- */

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline size_t errno_slot(int err)
{
    return err >= 0 && err < ERRNO_SLOTS ? (size_t)err : ERRNO_SLOTS - 1; /* 0: EOF */
}

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* ---- state ------------------------------------------------------------------ */

enum conn_state {
    C_UNOPENED,
    C_CONNECTING,
    C_OPEN, /* established; in --max-conns mode: waiting for its echo */
    C_HELD, /* --max-conns: verified alive, idle */
    C_CLOSED,
};

struct conn {
    int fd;
    uint32_t id; /* global index: its stream and its source address */
    uint8_t state;
    uint64_t key;         /* of its payload stream */
    uint64_t sent;        /* bytes written */
    uint64_t received;    /* bytes received, all verified */
    uint64_t started;     /* messages begun: started * size bytes are due to be written */
    uint64_t completed;   /* messages whose last byte came back */
    uint64_t schedule_ns; /* --rate: message k is due at schedule_ns + k / rate */
    uint64_t next_due_ns; /* --rate: its key in the send-deadline heap */
    uint64_t since_ns;    /* connecting or (--max-conns) waiting for an echo since */
    size_t heap_index;    /* in the worker's send-deadline heap, or SIZE_MAX */
};

/* Deadlines that all have the same length come due in the order they were
 * set: a FIFO of (connection, start) pairs; an entry is stale once the
 * connection has moved on (checked against since_ns). */
struct deadline {
    struct conn *conn;
    uint64_t since_ns;
};

struct fifo {
    struct deadline *items;
    size_t head, tail, cap;
};

struct verify_failure {
    bool set;
    uint32_t connection;
    uint64_t offset;
    int expected; /* -1: nothing was sent at that offset (extra bytes) */
    int got;
    uint64_t at_ns;
};

/* Counted by the worker alone; published for the main thread's time series. */
struct totals {
    uint64_t bytes_sent;
    uint64_t bytes_received;
    uint64_t echoes;
    uint64_t connected; /* ever established */
    uint64_t open;      /* established now */
    uint64_t held;      /* --max-conns: verified alive and idle */
};

struct published {
    _Atomic uint64_t bytes_sent, bytes_received, echoes, connected, open, held;
};

enum stop_reason {
    STOP_NONE,
    STOP_CAP,             /* cap_reached */
    STOP_CLIENT_FDS,      /* client_EMFILE / client_ENFILE: socket() failed here */
    STOP_CONNECT_ERROR,   /* connect_<ERRNO> */
    STOP_CONNECT_TIMEOUT, /* connect_timeout */
    STOP_ECHO_TIMEOUT,    /* echo_timeout: connected, never served (e.g. the server cannot accept) */
    STOP_SERVER_CLOSED,   /* server_closed: EOF on an established connection */
    STOP_SERVER_ERROR,    /* server_<ERRNO>: e.g. server_ECONNRESET */
    STOP_VERIFY,          /* verify_error */
    STOP_DURATION,        /* duration_elapsed */
    STOP_INTERRUPTED,     /* interrupted */
};

struct client;

struct worker {
    struct client *client;
    pthread_t thread;
    int epoll_fd;
    struct conn *conns;
    size_t count;
    size_t opened;      /* conns[0, opened) have been started */
    double open_rate;   /* per second, this worker's share; 0: all at once */
    uint64_t *due_ns;   /* count x depth: when each message in flight was due */
    struct conn **heap; /* --rate: connections by the due time of their next message */
    size_t heap_len;
    struct fifo connecting;
    struct fifo awaiting; /* --max-conns: connections waiting for an echo */
    size_t connecting_n, awaiting_n;
    uint64_t in_flight_bytes; /* begun messages' bytes not yet back */
    unsigned char *out_buf, *in_buf, *expect_buf;
    struct totals t;
    struct published pub;
    struct histogram hist;
    uint64_t connect_errors[ERRNO_SLOTS];
    uint64_t closed_early[ERRNO_SLOTS]; /* [0]: EOF */
    uint64_t verify_errors;
    struct verify_failure first_failure;
    uint64_t echo_timeouts;
    uint64_t sweep_alive;
    uint64_t unanswered_messages;
    uint64_t not_attempted;       /* the trial or the ramp ended before their turn */
    uint64_t due_unsent_messages; /* --rate: due within the window, never begun (depth full) */
    uint64_t last_connected_ns;
    bool sweeping;
};

struct client {
    struct options o;
    FILE *text_out; /* stdout, or stderr with --json */
    struct sockaddr_in server;
    uint64_t start_ns;
    _Atomic uint64_t end_ns; /* no message is begun from here on */
    atomic_bool interrupted;
    long threads;
    struct worker *workers;
    /* --max-conns */
    _Atomic uint64_t held_total;
    _Atomic int stop_reason;
    _Atomic int stop_errno;
    _Atomic uint64_t stop_ns;
    atomic_int settled;
    atomic_bool sweep_go;
    atomic_int finished;
};

static inline bool max_conns_mode(const struct client *c) { return c->o.max_conns > 0; }

static inline void set_stop(struct client *c, enum stop_reason reason, int err)
{
    int expected = STOP_NONE;
    if (atomic_compare_exchange_strong(&c->stop_reason, &expected, (int)reason)) {
        atomic_store(&c->stop_errno, err);
        atomic_store(&c->stop_ns, now_ns());
    }
}

static inline bool stopped(struct client *c) { return atomic_load(&c->stop_reason) != STOP_NONE; }

/* ---- the workers (echo_worker.c) -------------------------------------------- */

/* conns [first, first + count) of the client; false (errno set) if out of resources. */
bool worker_init(struct worker *w, struct client *c, size_t first, size_t count);
void *worker_main(void *arg);
void worker_destroy(struct worker *w);

/* ---- results (echo_report.c) ------------------------------------------------ */

struct sample {
    double second;
    uint64_t bytes_sent, bytes_received, echoes, open, connected, held; /* cumulative; open/held now */
};

struct results {
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

/* Adds every worker's counters, errors and histogram to r. */
void merge_results(struct client *c, struct results *r);
/* The human-readable summary, on c->text_out. */
void print_text(struct client *c, const struct results *r);
/* The one JSON object on stdout (--json; docs/contracts.md). */
void print_json(struct client *c, const struct results *r);

#endif

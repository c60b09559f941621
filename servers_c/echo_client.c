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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "histogram.h"

#define EXIT_FAILURES 1
#define EXIT_USAGE 2

#define IO_CHUNK (64 * 1024)      /* one send or recv at most */
#define EVENT_BATCH 256
#define OPEN_BATCH 256            /* connections opened per loop iteration at most */
#define MAX_WAIT_NS 10000000ull   /* a loop looks at stop requests at least this often */
#define DRAIN_NS 2000000000ull    /* after the trial: time allowed for echoes in flight */
#define SETTLE_NS 1000000000ull   /* --max-conns: time allowed for connects in flight */
#define NS_PER_S 1000000000ull
#define ERRNO_SLOTS 256           /* Linux errno values are below this; slot 0 stands for EOF */

/* ---- options ------------------------------------------------------------- */

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

static void usage(FILE *out)
{
    fprintf(out,
            "usage: echo_client --port P [options]\n\n"
            "Drives an echo server over N connections from T epoll threads, verifies every\n"
            "byte that comes back, and reports round-trip times, a per-second time series\n"
            "and failures by reason.\n\n"
            "options:\n"
            "  --host ADDR            server IPv4 address (default 127.0.0.1)\n"
            "  --port P               server port (required)\n"
            "  --connections N        connections to open and hold (default 100)\n"
            "  --threads T            worker threads, an epoll loop each over N/T connections\n"
            "                         (default 1); pin the process with taskset\n"
            "  --duration S           seconds the trial sends for (default 10); with\n"
            "                         --max-conns, the most time the ramp may take (default 120)\n"
            "  --size BYTES           bytes per message (default 64)\n"
            "  --depth D              messages in flight per connection (default 1)\n"
            "  --rate R               messages per second per connection, 0 = as fast as the\n"
            "                         echoes come back (default 0); RTT is measured from each\n"
            "                         message's intended send time\n"
            "  --connect-rate R       connections opened per second, 0 = all at once (default 0)\n"
            "  --connect-timeout S    a connect (or, with --max-conns, a first echo) that takes\n"
            "                         longer fails with ETIMEDOUT (default 5)\n"
            "  --sources K            bind connection i to 127.0.0.(1 + i mod K); 0 = let the\n"
            "                         kernel choose (default 0)\n"
            "  --seed N               seed of the payload streams (default 1)\n"
            "  --json                 one JSON object on stdout at the end (text goes to stderr)\n"
            "  --max-conns CAP        open connections (at --connect-rate, over --sources) and\n"
            "                         hold them, each verified alive by one echo, until one\n"
            "                         fails or CAP are held; reports how many and why it stopped\n"
            "  --server-pid PID       with --max-conns: report the server's resident memory per\n"
            "                         connection (VmRSS before and after)\n\n"
            "SIGINT or SIGTERM stops the run and prints the summary. Exit status: 0 ok;\n"
            "1 verification errors or failures (connect errors, connections closed early or\n"
            "echoes never answered; with --max-conns, held connections that did not echo\n"
            "again); 2 bad usage.\n");
}

static _Noreturn void bad_usage(const char *flag, const char *problem, const char *value)
{
    fprintf(stderr, "echo_client: %s %s%s%s%s\n(run with --help for usage)\n", flag, problem,
            value ? " (got '" : "", value ? value : "", value ? "')" : "");
    exit(EXIT_USAGE);
}

static long parse_long(const char *flag, const char *value, long min, long max)
{
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || n < min || n > max) {
        char range[96];
        snprintf(range, sizeof range, "expects an integer in [%ld, %ld]", min, max);
        bad_usage(flag, range, value);
    }
    return n;
}

static double parse_double(const char *flag, const char *value, double min, double max)
{
    char *end;
    errno = 0;
    double x = strtod(value, &end);
    if (errno != 0 || end == value || *end != '\0' || !(x >= min && x <= max)) {
        char range[96];
        snprintf(range, sizeof range, "expects a number in [%g, %g]", min, max);
        bad_usage(flag, range, value);
    }
    return x;
}

/* "--name value" or "--name=value"; NULL if argv[*i] is not --name. */
static const char *flag_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, len) != 0)
        return NULL;
    if (arg[len] == '=')
        return arg + len + 1;
    if (arg[len] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        bad_usage(name, "needs a value", NULL);
    return argv[++*i];
}

static void parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.host = "127.0.0.1", .connections = 100, .threads = 1, .duration_s = 10,
                          .size = 64, .depth = 1, .connect_timeout_s = 5, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if ((v = flag_value(argc, argv, &i, "--host")) != NULL) {
            o->host = v;
        } else if ((v = flag_value(argc, argv, &i, "--port")) != NULL) {
            o->port = parse_long("--port", v, 1, 65535);
        } else if ((v = flag_value(argc, argv, &i, "--connections")) != NULL) {
            o->connections = parse_long("--connections", v, 1, 10000000);
        } else if ((v = flag_value(argc, argv, &i, "--threads")) != NULL) {
            o->threads = parse_long("--threads", v, 1, 1024);
        } else if ((v = flag_value(argc, argv, &i, "--duration")) != NULL) {
            o->duration_s = parse_double("--duration", v, 0.001, 86400);
            o->duration_given = true;
        } else if ((v = flag_value(argc, argv, &i, "--size")) != NULL) {
            o->size = parse_long("--size", v, 1, 1L << 30);
        } else if ((v = flag_value(argc, argv, &i, "--depth")) != NULL) {
            o->depth = parse_long("--depth", v, 1, 65536);
        } else if ((v = flag_value(argc, argv, &i, "--rate")) != NULL) {
            o->rate = parse_double("--rate", v, 0, 1e9);
        } else if ((v = flag_value(argc, argv, &i, "--connect-rate")) != NULL) {
            o->connect_rate = parse_double("--connect-rate", v, 0, 1e9);
        } else if ((v = flag_value(argc, argv, &i, "--connect-timeout")) != NULL) {
            o->connect_timeout_s = parse_double("--connect-timeout", v, 0.001, 3600);
        } else if ((v = flag_value(argc, argv, &i, "--sources")) != NULL) {
            o->sources = parse_long("--sources", v, 0, 254);
        } else if ((v = flag_value(argc, argv, &i, "--seed")) != NULL) {
            o->seed = (uint64_t)parse_long("--seed", v, 0, INT64_MAX);
        } else if ((v = flag_value(argc, argv, &i, "--max-conns")) != NULL) {
            o->max_conns = parse_long("--max-conns", v, 1, 10000000);
        } else if ((v = flag_value(argc, argv, &i, "--server-pid")) != NULL) {
            o->server_pid = parse_long("--server-pid", v, 1, 1L << 30);
        } else {
            bad_usage(argv[i], "is not an option", NULL);
        }
    }
    if (o->port == 0)
        bad_usage("--port", "is required", NULL);
    if (o->server_pid != 0 && o->max_conns == 0)
        bad_usage("--server-pid", "only applies with --max-conns", NULL);
    if (o->max_conns > 0) {
        o->connections = o->max_conns;
        if (!o->duration_given)
            o->duration_s = 120;
    }
    if (o->threads > o->connections)
        o->threads = o->connections;
}

/* ---- small helpers ------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static const char *errno_name(int err)
{
    static const struct {
        int err;
        const char *name;
    } names[] = {
        {ECONNREFUSED, "ECONNREFUSED"}, {ECONNRESET, "ECONNRESET"},     {ECONNABORTED, "ECONNABORTED"},
        {ETIMEDOUT, "ETIMEDOUT"},       {EADDRNOTAVAIL, "EADDRNOTAVAIL"}, {EADDRINUSE, "EADDRINUSE"},
        {EMFILE, "EMFILE"},             {ENFILE, "ENFILE"},             {ENOBUFS, "ENOBUFS"},
        {ENOMEM, "ENOMEM"},             {EPIPE, "EPIPE"},               {EHOSTUNREACH, "EHOSTUNREACH"},
        {ENETUNREACH, "ENETUNREACH"},   {ENOTCONN, "ENOTCONN"},         {EACCES, "EACCES"},
        {EPERM, "EPERM"},               {EINVAL, "EINVAL"},             {EIO, "EIO"},
        {EAGAIN, "EAGAIN"},             {EINTR, "EINTR"},               {EBADF, "EBADF"},
        {ENOSPC, "ENOSPC"},             {EPROTO, "EPROTO"},             {ENETDOWN, "ENETDOWN"},
    };
    if (err == 0)
        return "eof";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].err == err)
            return names[i].name;
    static _Thread_local char other[16];
    snprintf(other, sizeof other, "E%d", err);
    return other;
}

static size_t errno_slot(int err)
{
    return err >= 0 && err < ERRNO_SLOTS ? (size_t)err : ERRNO_SLOTS - 1; /* 0: EOF */
}

/* ---- the payload streams -------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t stream_key(uint64_t seed, uint64_t connection)
{
    return mix64(seed * 0x9e3779b97f4a7c15ull + mix64(connection + 1));
}

/* Bytes [offset, offset + len) of the stream with this key. */
static void stream_fill(uint64_t key, uint64_t offset, unsigned char *out, size_t len)
{
    uint64_t block = offset / 8;
    size_t skip = (size_t)(offset % 8);
    while (len > 0) {
        uint64_t word = mix64(key + block * 0x9e3779b97f4a7c15ull);
        for (size_t b = skip; b < 8 && len > 0; b++, len--)
            *out++ = (unsigned char)(word >> (8 * b));
        skip = 0;
        block++;
    }
}

/* ---- state ---------------------------------------------------------------- */

enum conn_state {
    C_UNOPENED,
    C_CONNECTING,
    C_OPEN, /* established; in --max-conns mode: waiting for its echo */
    C_HELD, /* --max-conns: verified alive, idle */
    C_CLOSED,
};

struct conn {
    int fd;
    uint32_t id;             /* global index: its stream and its source address */
    uint8_t state;
    uint64_t key;            /* of its payload stream */
    uint64_t sent;           /* bytes written */
    uint64_t received;       /* bytes received, all verified */
    uint64_t started;        /* messages begun: started * size bytes are due to be written */
    uint64_t completed;      /* messages whose last byte came back */
    uint64_t schedule_ns;    /* --rate: message k is due at schedule_ns + k / rate */
    uint64_t next_due_ns;    /* --rate: its key in the send-deadline heap */
    uint64_t since_ns;       /* connecting or (--max-conns) waiting for an echo since */
    size_t heap_index;       /* in the worker's send-deadline heap, or SIZE_MAX */
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
    size_t opened;       /* conns[0, opened) have been started */
    double open_rate;    /* per second, this worker's share; 0: all at once */
    uint64_t *due_ns;    /* count x depth: when each message in flight was due */
    struct conn **heap;  /* --rate: connections by the due time of their next message */
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
    uint64_t not_attempted; /* the trial or the ramp ended before their turn */
    uint64_t due_unsent_messages; /* --rate: due within the window, never begun (depth full) */
    uint64_t last_connected_ns;
    bool sweeping;
};

struct client {
    struct options o;
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

static bool max_conns_mode(const struct client *c) { return c->o.max_conns > 0; }

static void set_stop(struct client *c, enum stop_reason reason, int err)
{
    int expected = STOP_NONE;
    if (atomic_compare_exchange_strong(&c->stop_reason, &expected, (int)reason)) {
        atomic_store(&c->stop_errno, err);
        atomic_store(&c->stop_ns, now_ns());
    }
}

static bool stopped(struct client *c) { return atomic_load(&c->stop_reason) != STOP_NONE; }

/* ---- deadlines ------------------------------------------------------------ */

static void fifo_push(struct fifo *f, struct conn *cn)
{
    if (f->tail == f->cap) /* each connection enters once per phase: cannot happen */
        return;
    f->items[f->tail++] = (struct deadline){cn, cn->since_ns};
}

/* Drops stale entries; returns the oldest live one or NULL. */
static struct deadline *fifo_head(struct fifo *f, enum conn_state live)
{
    while (f->head < f->tail) {
        struct deadline *d = &f->items[f->head];
        if (d->conn->state == live && d->conn->since_ns == d->since_ns)
            return d;
        f->head++;
    }
    return NULL;
}

/* --rate: a min-heap of the connections waiting for their next message's due
 * time (next_due_ns), so a loop over 10,000 connections finds the next
 * deadline in O(1) and keeps it in O(log n). */
static void heap_swap(struct conn **heap, size_t a, size_t b)
{
    struct conn *t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
    heap[a]->heap_index = a;
    heap[b]->heap_index = b;
}

static void heap_sift(struct conn **heap, size_t len, size_t i)
{
    while (i > 0 && heap[(i - 1) / 2]->next_due_ns > heap[i]->next_due_ns) {
        heap_swap(heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < len && heap[l]->next_due_ns < heap[m]->next_due_ns)
            m = l;
        if (r < len && heap[r]->next_due_ns < heap[m]->next_due_ns)
            m = r;
        if (m == i)
            return;
        heap_swap(heap, i, m);
        i = m;
    }
}

static void heap_remove(struct worker *w, struct conn *cn)
{
    size_t i = cn->heap_index;
    if (i == SIZE_MAX)
        return;
    cn->heap_index = SIZE_MAX;
    w->heap_len--;
    if (i == w->heap_len)
        return;
    w->heap[i] = w->heap[w->heap_len];
    w->heap[i]->heap_index = i;
    heap_sift(w->heap, w->heap_len, i);
}

/* Inserts the connection, or moves it if it is there already. */
static void heap_set(struct worker *w, struct conn *cn, uint64_t due)
{
    cn->next_due_ns = due;
    if (cn->heap_index == SIZE_MAX) {
        cn->heap_index = w->heap_len;
        w->heap[w->heap_len++] = cn;
    }
    heap_sift(w->heap, w->heap_len, cn->heap_index);
}

/* ---- connections ------------------------------------------------------------ */

static void publish(struct worker *w)
{
    atomic_store_explicit(&w->pub.bytes_sent, w->t.bytes_sent, memory_order_relaxed);
    atomic_store_explicit(&w->pub.bytes_received, w->t.bytes_received, memory_order_relaxed);
    atomic_store_explicit(&w->pub.echoes, w->t.echoes, memory_order_relaxed);
    atomic_store_explicit(&w->pub.connected, w->t.connected, memory_order_relaxed);
    atomic_store_explicit(&w->pub.open, w->t.open, memory_order_relaxed);
    atomic_store_explicit(&w->pub.held, w->t.held, memory_order_relaxed);
}

static void close_conn(struct worker *w, struct conn *cn)
{
    if (cn->state == C_CLOSED || cn->state == C_UNOPENED)
        return;
    if (cn->state == C_CONNECTING)
        w->connecting_n--;
    if (cn->state == C_OPEN || cn->state == C_HELD)
        w->t.open--;
    if (cn->state == C_HELD)
        w->t.held--;
    if (cn->state == C_OPEN && max_conns_mode(w->client) && cn->completed < cn->started)
        w->awaiting_n--;
    w->in_flight_bytes -= cn->started * (uint64_t)w->client->o.size - cn->received;
    heap_remove(w, cn);
    close(cn->fd);
    cn->fd = -1;
    cn->state = C_CLOSED;
}

/* An established connection ended before the client ended it. */
static void closed_early(struct worker *w, struct conn *cn, int err)
{
    struct client *c = w->client;
    w->closed_early[errno_slot(err)]++;
    if (max_conns_mode(c) && !w->sweeping)
        set_stop(c, err == 0 ? STOP_SERVER_CLOSED : STOP_SERVER_ERROR, err);
    close_conn(w, cn);
}

static void connect_failed(struct worker *w, struct conn *cn, int err, bool in_socket_call)
{
    struct client *c = w->client;
    w->connect_errors[errno_slot(err)]++;
    if (max_conns_mode(c)) {
        if (in_socket_call && (err == EMFILE || err == ENFILE))
            set_stop(c, STOP_CLIENT_FDS, err);
        else
            set_stop(c, err == ETIMEDOUT ? STOP_CONNECT_TIMEOUT : STOP_CONNECT_ERROR, err);
    }
    if (cn->fd >= 0)
        close_conn(w, cn);
    cn->state = C_CLOSED;
}

static void verify_failed(struct worker *w, struct conn *cn, uint64_t offset, int expected, int got)
{
    w->verify_errors++;
    if (!w->first_failure.set)
        w->first_failure = (struct verify_failure){true, cn->id, offset, expected, got, now_ns()};
    if (max_conns_mode(w->client))
        set_stop(w->client, STOP_VERIFY, 0);
    close_conn(w, cn);
}

/* Checks received bytes against the stream; false (connection closed) on a mismatch. */
static bool verify(struct worker *w, struct conn *cn, const unsigned char *bytes, size_t n)
{
    uint64_t outstanding = cn->sent - cn->received;
    size_t checked = n < outstanding ? n : (size_t)outstanding;
    stream_fill(cn->key, cn->received, w->expect_buf, checked);
    if (memcmp(bytes, w->expect_buf, checked) != 0) {
        size_t i = 0;
        while (bytes[i] == w->expect_buf[i])
            i++;
        verify_failed(w, cn, cn->received + i, w->expect_buf[i], bytes[i]);
        return false;
    }
    if (checked < n) { /* more came back than was ever sent */
        verify_failed(w, cn, cn->sent, -1, bytes[checked]);
        return false;
    }
    cn->received += n;
    w->in_flight_bytes -= n;
    w->t.bytes_received += n;
    return true;
}

static uint64_t *due_slot(struct worker *w, const struct conn *cn, uint64_t message)
{
    size_t local = (size_t)(cn - w->conns);
    return &w->due_ns[local * (size_t)w->client->o.depth + (size_t)(message % (uint64_t)w->client->o.depth)];
}

static uint64_t rate_due(const struct client *c, const struct conn *cn, uint64_t message)
{
    return cn->schedule_ns + (uint64_t)((double)message * 1e9 / c->o.rate);
}

static void begin_message(struct worker *w, struct conn *cn, uint64_t due)
{
    *due_slot(w, cn, cn->started) = due;
    cn->started++;
    w->in_flight_bytes += (uint64_t)w->client->o.size;
}

/* Throughput mode: begins every message that is due and has room, until the
 * window ends (after it, only messages already begun are finished). */
static void begin_due_messages(struct worker *w, struct conn *cn, uint64_t now)
{
    struct client *c = w->client;
    uint64_t end = atomic_load_explicit(&c->end_ns, memory_order_relaxed);
    if (now >= end)
        return;
    while (cn->started - cn->completed < (uint64_t)c->o.depth) {
        uint64_t due = c->o.rate > 0 ? rate_due(c, cn, cn->started) : now;
        if (due >= end)
            return;
        if (due > now) { /* wait for it; completions do not make it come sooner */
            heap_set(w, cn, due);
            return;
        }
        begin_message(w, cn, due);
    }
}

/* Writes the begun messages' bytes as far as the socket takes them. */
static void write_pending(struct worker *w, struct conn *cn)
{
    uint64_t target = cn->started * (uint64_t)w->client->o.size;
    while (cn->sent < target) {
        uint64_t left = target - cn->sent;
        size_t n = left < IO_CHUNK ? (size_t)left : IO_CHUNK;
        stream_fill(cn->key, cn->sent, w->out_buf, n);
        ssize_t r = send(cn->fd, w->out_buf, n, MSG_NOSIGNAL);
        if (r > 0) {
            cn->sent += (uint64_t)r;
            w->t.bytes_sent += (uint64_t)r;
            if ((size_t)r < n)
                return; /* the socket is full: an EPOLLOUT edge follows */
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            closed_early(w, cn, r < 0 ? errno : EIO);
            return;
        }
    }
}

static void pump(struct worker *w, struct conn *cn, uint64_t now)
{
    if (!max_conns_mode(w->client))
        begin_due_messages(w, cn, now);
    write_pending(w, cn);
}

/* --max-conns: one message, whose echo proves the connection alive. */
static void begin_probe(struct worker *w, struct conn *cn, uint64_t now)
{
    cn->state = C_OPEN;
    cn->since_ns = now;
    begin_message(w, cn, now);
    fifo_push(&w->awaiting, cn);
    w->awaiting_n++;
    write_pending(w, cn);
}

static void established(struct worker *w, struct conn *cn, uint64_t now)
{
    struct client *c = w->client;
    if (cn->state == C_CONNECTING)
        w->connecting_n--;
    cn->state = C_OPEN;
    w->t.connected++;
    w->t.open++;
    w->last_connected_ns = now;
    if (max_conns_mode(c)) {
        begin_probe(w, cn, now);
        return;
    }
    if (c->o.rate > 0) /* spread the connections' schedules over one period */
        cn->schedule_ns = now + (uint64_t)((double)(cn->id % (uint64_t)c->o.connections) /
                                           (double)c->o.connections * 1e9 / c->o.rate);
    pump(w, cn, now);
}

static void open_one(struct worker *w, struct conn *cn, uint64_t now)
{
    struct client *c = w->client;
    cn->fd = -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        connect_failed(w, cn, errno, true);
        return;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (c->o.sources > 0) {
        (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl((127u << 24) | (1u + cn->id % (uint32_t)c->o.sources));
        if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
            int err = errno;
            close(fd);
            connect_failed(w, cn, err, false);
            return;
        }
    }
    int r = connect(fd, (struct sockaddr *)&c->server, sizeof c->server);
    int err = r == 0 ? 0 : errno;
    if (r != 0 && err != EINPROGRESS) {
        close(fd);
        connect_failed(w, cn, err, false);
        return;
    }
    cn->fd = fd;
    cn->state = C_CONNECTING;
    cn->since_ns = now;
    w->connecting_n++;
    /* Registered after connect(): a completion in between is reported by the ADD. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = cn};
    if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        connect_failed(w, cn, errno, false);
        return;
    }
    if (r == 0)
        established(w, cn, now);
    else
        fifo_push(&w->connecting, cn);
}

/* Records the echoes that completed; true if any did. */
static bool complete_messages(struct worker *w, struct conn *cn, uint64_t now)
{
    uint64_t size = (uint64_t)w->client->o.size;
    bool any = false;
    while (cn->completed < cn->started && cn->received >= (cn->completed + 1) * size) {
        uint64_t due = *due_slot(w, cn, cn->completed);
        histogram_record(&w->hist, now > due ? now - due : 0);
        cn->completed++;
        w->t.echoes++;
        any = true;
    }
    if (any && max_conns_mode(w->client) && cn->completed == cn->started && cn->state == C_OPEN) {
        cn->state = C_HELD;
        w->t.held++;
        w->awaiting_n--;
        if (w->sweeping) {
            w->sweep_alive++;
        } else {
            uint64_t held = atomic_fetch_add(&w->client->held_total, 1) + 1;
            if (held >= (uint64_t)w->client->o.max_conns)
                set_stop(w->client, STOP_CAP, 0);
        }
    }
    return any;
}

static void on_readable(struct worker *w, struct conn *cn, uint32_t events)
{
    for (;;) {
        ssize_t r = recv(cn->fd, w->in_buf, IO_CHUNK, 0);
        if (r > 0) {
            uint64_t now = now_ns();
            if (!verify(w, cn, w->in_buf, (size_t)r))
                return;
            if (complete_messages(w, cn, now) && cn->state == C_OPEN)
                pump(w, cn, now);
            if (cn->state == C_CLOSED)
                return;
            /* A short read drained the socket, unless the peer's FIN came
             * with this edge: then read on to the EOF (no later edge tells). */
            if ((size_t)r < IO_CHUNK && !(events & EPOLLRDHUP))
                return;
        } else if (r == 0) {
            closed_early(w, cn, 0);
            return;
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return;
        } else {
            closed_early(w, cn, errno);
            return;
        }
    }
}

static void on_event(struct worker *w, struct conn *cn, uint32_t events)
{
    if (cn->state == C_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0) {
            connect_failed(w, cn, err, false);
            return;
        }
        if (!(events & (EPOLLOUT | EPOLLIN | EPOLLHUP | EPOLLERR)))
            return;
        established(w, cn, now_ns());
        if (cn->state == C_CLOSED)
            return;
    }
    if (cn->state == C_CLOSED || cn->state == C_UNOPENED)
        return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        on_readable(w, cn, events);
    if (cn->state != C_CLOSED && (events & EPOLLOUT))
        write_pending(w, cn);
}

/* ---- the worker loop --------------------------------------------------------- */

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t timeout_ns(const struct client *c) { return (uint64_t)(c->o.connect_timeout_s * 1e9); }

/* Opens the connections that are due; returns when the next one is (UINT64_MAX: none). */
static uint64_t open_due(struct worker *w, uint64_t now)
{
    struct client *c = w->client;
    size_t due = w->count;
    if (w->open_rate > 0) {
        double elapsed_s = (double)(now - c->start_ns) / 1e9;
        double n = floor(elapsed_s * w->open_rate) + 1;
        due = n < (double)w->count ? (size_t)n : w->count;
    }
    for (int k = 0; w->opened < due && k < OPEN_BATCH; k++) {
        if (max_conns_mode(c) && stopped(c))
            return UINT64_MAX;
        open_one(w, &w->conns[w->opened++], now);
    }
    if (w->opened >= w->count)
        return UINT64_MAX;
    if (w->opened < due || w->open_rate <= 0)
        return now; /* a batch is done; more are due at once */
    return c->start_ns + (uint64_t)((double)w->opened / w->open_rate * 1e9);
}

/* Fails connects and (--max-conns) echoes that took too long; returns the next deadline. */
static uint64_t expire(struct worker *w, uint64_t now)
{
    struct client *c = w->client;
    uint64_t limit = timeout_ns(c);
    uint64_t next = UINT64_MAX;
    struct deadline *d;
    while ((d = fifo_head(&w->connecting, C_CONNECTING)) != NULL) {
        if (d->since_ns + limit > now) {
            next = d->since_ns + limit;
            break;
        }
        w->connecting.head++;
        connect_failed(w, d->conn, ETIMEDOUT, false);
    }
    while (max_conns_mode(c) && (d = fifo_head(&w->awaiting, C_OPEN)) != NULL) {
        if (d->since_ns + limit > now) {
            next = min_u64(next, d->since_ns + limit);
            break;
        }
        w->awaiting.head++;
        w->echo_timeouts++;
        if (!w->sweeping)
            set_stop(c, STOP_ECHO_TIMEOUT, 0);
        close_conn(w, d->conn);
    }
    return next;
}

/* --rate: begins the messages whose time has come; returns the next due time. */
static uint64_t fire_timers(struct worker *w, uint64_t now)
{
    while (w->heap_len > 0) {
        struct conn *cn = w->heap[0];
        if (cn->next_due_ns > now)
            return cn->next_due_ns;
        heap_remove(w, cn);
        pump(w, cn, now);
    }
    return UINT64_MAX;
}

static int wait_events(struct worker *w, struct epoll_event *events, uint64_t now, uint64_t wake)
{
    uint64_t wait = wake > now ? min_u64(wake - now, MAX_WAIT_NS) : 0;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    static atomic_bool no_pwait2;
    if (!atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
        struct timespec ts = {(time_t)(wait / NS_PER_S), (long)(wait % NS_PER_S)};
        int n = epoll_pwait2(w->epoll_fd, events, EVENT_BATCH, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        atomic_store(&no_pwait2, true); /* kernel older than 5.11 */
    }
#endif
    return epoll_wait(w->epoll_fd, events, EVENT_BATCH, (int)((wait + 999999) / 1000000));
}

static void handle_events(struct worker *w, uint64_t now, uint64_t wake)
{
    struct epoll_event events[EVENT_BATCH];
    int n = wait_events(w, events, now, wake);
    for (int i = 0; i < n; i++)
        on_event(w, events[i].data.ptr, events[i].events);
}

/* --max-conns after the ramp: settle, wait for the main thread, echo once more on every held connection. */
static void finish_max_conns(struct worker *w)
{
    struct client *c = w->client;
    uint64_t settle_end = atomic_load(&c->stop_ns) + SETTLE_NS;
    for (;;) { /* connects and first echoes already in flight may still land */
        uint64_t now = now_ns();
        uint64_t next = expire(w, now);
        if (w->connecting_n + w->awaiting_n == 0 || now >= settle_end || atomic_load(&c->interrupted))
            break;
        handle_events(w, now, min_u64(next, settle_end));
    }
    for (size_t i = 0; i < w->opened; i++) /* whatever is still pending is not counted */
        if (w->conns[i].state == C_CONNECTING || w->conns[i].state == C_OPEN)
            close_conn(w, &w->conns[i]);
    publish(w);
    atomic_fetch_add(&c->settled, 1);
    while (!atomic_load(&c->sweep_go) && !atomic_load(&c->interrupted)) {
        uint64_t now = now_ns();
        handle_events(w, now, now + MAX_WAIT_NS); /* notices servers closing held connections */
        publish(w);
    }
    if (atomic_load(&c->interrupted))
        return;
    w->sweeping = true;
    w->awaiting.head = w->awaiting.tail = 0;
    uint64_t now = now_ns();
    for (size_t i = 0; i < w->opened; i++)
        if (w->conns[i].state == C_HELD) {
            w->t.held--;
            begin_probe(w, &w->conns[i], now);
        }
    while (w->awaiting_n > 0 && !atomic_load(&c->interrupted)) {
        now = now_ns();
        uint64_t next = expire(w, now);
        handle_events(w, now, next);
        publish(w);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct client *c = w->client;
    bool draining = false;
    uint64_t drain_end = 0;
    for (;;) {
        uint64_t now = now_ns();
        if (atomic_load_explicit(&c->interrupted, memory_order_relaxed))
            break;
        uint64_t wake = now + MAX_WAIT_NS;
        if (max_conns_mode(c)) {
            if (now >= c->start_ns + (uint64_t)(c->o.duration_s * 1e9))
                set_stop(c, STOP_DURATION, 0);
            if (stopped(c)) {
                finish_max_conns(w);
                break;
            }
            wake = min_u64(wake, open_due(w, now));
        } else {
            uint64_t end = atomic_load_explicit(&c->end_ns, memory_order_relaxed);
            if (now < end) {
                wake = min_u64(wake, min_u64(open_due(w, now), end));
                if (c->o.rate > 0)
                    wake = min_u64(wake, fire_timers(w, now));
            } else {
                if (!draining) { /* the trial is over: no new connection or message */
                    draining = true;
                    drain_end = now + DRAIN_NS;
                    w->heap_len = 0;
                    for (size_t i = 0; i < w->count; i++)
                        w->conns[i].heap_index = SIZE_MAX;
                }
                if (w->in_flight_bytes == 0 || now >= drain_end)
                    break;
                wake = min_u64(wake, drain_end);
            }
        }
        wake = min_u64(wake, expire(w, now));
        handle_events(w, now, wake);
        publish(w);
    }
    uint64_t end = atomic_load(&c->end_ns);
    for (size_t i = 0; i < w->opened; i++) {
        struct conn *cn = &w->conns[i];
        if ((cn->state == C_OPEN || cn->state == C_HELD) && c->o.rate > 0 && end > cn->schedule_ns) {
            /* --rate: messages due within the window that --depth held back */
            uint64_t due = (uint64_t)ceil((double)(end - cn->schedule_ns) * c->o.rate / 1e9);
            w->due_unsent_messages += due > cn->started ? due - cn->started : 0;
        }
        if (cn->state == C_OPEN || cn->state == C_HELD)
            w->unanswered_messages += cn->started - cn->completed;
        else if (cn->state == C_CONNECTING) /* the trial ended first: it did not connect in time */
            connect_failed(w, cn, ETIMEDOUT, false);
    }
    w->not_attempted = w->count - w->opened;
    publish(w);
    atomic_fetch_add(&c->finished, 1);
    return NULL;
}

static bool worker_init(struct worker *w, struct client *c, size_t first, size_t count)
{
    memset(w, 0, sizeof *w);
    w->client = c;
    w->count = count;
    w->open_rate = c->o.connect_rate / (double)c->threads;
    histogram_init(&w->hist);
    w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    w->conns = calloc(count, sizeof w->conns[0]);
    w->due_ns = calloc(count * (size_t)c->o.depth, sizeof w->due_ns[0]);
    w->heap = calloc(count, sizeof w->heap[0]);
    w->connecting = (struct fifo){calloc(count, sizeof(struct deadline)), 0, 0, count};
    w->awaiting = (struct fifo){calloc(count, sizeof(struct deadline)), 0, 0, count};
    w->out_buf = malloc(IO_CHUNK);
    w->in_buf = malloc(IO_CHUNK);
    w->expect_buf = malloc(IO_CHUNK);
    if (w->epoll_fd < 0 || !w->conns || !w->due_ns || !w->heap || !w->connecting.items || !w->awaiting.items ||
        !w->out_buf || !w->in_buf || !w->expect_buf)
        return false;
    for (size_t i = 0; i < count; i++) {
        struct conn *cn = &w->conns[i];
        cn->fd = -1;
        cn->id = (uint32_t)(first + i);
        cn->key = stream_key(c->o.seed, first + i);
        cn->heap_index = SIZE_MAX;
    }
    return true;
}

static void worker_destroy(struct worker *w)
{
    for (size_t i = 0; w->conns != NULL && i < w->count; i++)
        if (w->conns[i].fd >= 0)
            close(w->conns[i].fd);
    if (w->epoll_fd >= 0)
        close(w->epoll_fd);
    free(w->conns);
    free(w->due_ns);
    free(w->heap);
    free(w->connecting.items);
    free(w->awaiting.items);
    free(w->out_buf);
    free(w->in_buf);
    free(w->expect_buf);
}

/* ---- the main thread ------------------------------------------------------------ */

struct sample {
    double second;
    uint64_t bytes_sent, bytes_received, echoes, open, connected, held; /* cumulative; open/held now */
};

static struct sample take_sample(struct client *c, uint64_t now)
{
    struct sample s = {.second = (double)(now - c->start_ns) / 1e9};
    for (long i = 0; i < c->threads; i++) {
        struct published *p = &c->workers[i].pub;
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

static FILE *text_out; /* stdout, or stderr with --json */

static void print_sample(const struct sample *prev, const struct sample *s)
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

static const char *stop_reason_text(int reason, int err, char *buf, size_t len)
{
    switch ((enum stop_reason)reason) {
    case STOP_NONE: return "none";
    case STOP_CAP: return "cap_reached";
    case STOP_CLIENT_FDS: snprintf(buf, len, "client_%s", errno_name(err)); return buf;
    case STOP_CONNECT_ERROR: snprintf(buf, len, "connect_%s", errno_name(err)); return buf;
    case STOP_CONNECT_TIMEOUT: return "connect_timeout";
    case STOP_ECHO_TIMEOUT: return "echo_timeout";
    case STOP_SERVER_CLOSED: return "server_closed";
    case STOP_SERVER_ERROR: snprintf(buf, len, "server_%s", errno_name(err)); return buf;
    case STOP_VERIFY: return "verify_error";
    case STOP_DURATION: return "duration_elapsed";
    case STOP_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}

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

static void merge_results(struct client *c, struct results *r)
{
    for (long i = 0; i < c->threads; i++) {
        struct worker *w = &c->workers[i];
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

static void print_errno_counts(FILE *out, const uint64_t *counts, bool json)
{
    bool first = true;
    for (size_t k = 0; k < ERRNO_SLOTS; k++) {
        if (counts[k] == 0)
            continue;
        if (json)
            fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", errno_name((int)k), counts[k]);
        else
            fprintf(out, "%s%s %" PRIu64, first ? "" : ", ", errno_name((int)k), counts[k]);
        first = false;
    }
    if (first && !json)
        fprintf(out, "none");
}

static const double percentiles[] = {50, 90, 99, 99.9, 99.99};

static void print_text(struct client *c, const struct results *r)
{
    const struct options *o = &c->o;
    FILE *out = text_out;
    const struct histogram *h = r->hist;
    fprintf(out, "\nconnections: %" PRIu64 " of %ld connected", r->end.connected, o->connections);
    if (r->end.connected == (uint64_t)o->connections)
        fprintf(out, " (the last at %.3f s)", (double)(r->last_connected_ns - c->start_ns) / 1e9);
    fprintf(out, "; open at the end of the trial %" PRIu64 "; never attempted %" PRIu64 "\n", r->window.open,
            r->not_attempted);
    fprintf(out, "connect errors: ");
    print_errno_counts(out, r->connect_errors, false);
    fprintf(out, "\nclosed early: ");
    print_errno_counts(out, r->closed_early, false);
    fprintf(out, "\ntraffic: %" PRIu64 " bytes sent, %" PRIu64 " received, %" PRIu64 " echoes (%.1f/s over %.3f s)",
            r->end.bytes_sent, r->end.bytes_received, r->end.echoes,
            r->window_s > 0 ? (double)r->window.echoes / r->window_s : 0.0, r->window_s);
    fprintf(out, "; %" PRIu64 " never answered", r->unanswered);
    if (c->o.rate > 0)
        fprintf(out, "; %" PRIu64 " due but never sent (--depth full: the server fell behind)", r->due_unsent);
    fprintf(out, "\n");
    fprintf(out, "verification: every received byte checked, %" PRIu64 " errors", r->verify_errors);
    if (r->first_failure.set)
        fprintf(out, " (first: connection %" PRIu32 ", offset %" PRIu64 ", expected %d, got %d)",
                r->first_failure.connection, r->first_failure.offset, r->first_failure.expected,
                r->first_failure.got);
    fprintf(out, "\nrtt (us): n %" PRIu64 ", mean %.1f, min %.1f", h->count, histogram_mean(h) / 1e3,
            h->count ? (double)h->min / 1e3 : 0.0);
    for (size_t i = 0; i < sizeof percentiles / sizeof percentiles[0]; i++)
        fprintf(out, ", p%g %.1f", percentiles[i], (double)histogram_percentile(h, percentiles[i]) / 1e3);
    fprintf(out, ", max %.1f\n", (double)h->max / 1e3);
    if (max_conns_mode(c)) {
        char buf[48];
        fprintf(out, "max-conns: %" PRIu64 " of %ld held and verified, stopped by %s after %.3f s; %" PRIu64
                     " echoed again at the end\n",
                r->reached, o->max_conns, stop_reason_text(r->stop_reason, r->stop_errno, buf, sizeof buf),
                r->stop_s, r->sweep_alive);
        if (r->rss_before >= 0 && r->rss_after >= 0)
            fprintf(out, "server %ld VmRSS: %lld -> %lld bytes, %.0f bytes per connection\n", o->server_pid,
                    r->rss_before, r->rss_after,
                    r->reached ? (double)(r->rss_after - r->rss_before) / (double)r->reached : 0.0);
    }
    fprintf(out, "open files: soft limit %llu, hard limit %llu%s\n", (unsigned long long)r->nofile_soft,
            (unsigned long long)r->nofile_hard, r->interrupted ? "; interrupted" : "");
    fflush(out);
}

static void print_json(struct client *c, const struct results *r)
{
    const struct options *o = &c->o;
    const struct histogram *h = r->hist;
    printf("{\"tool\":\"echo_client\",\"mode\":\"%s\",\"host\":\"%s\",\"port\":%ld,\"connections\":%ld,"
           "\"threads\":%ld,\"duration_s\":%g,\"size\":%ld,\"depth\":%ld,\"rate\":%g,\"connect_rate\":%g,"
           "\"connect_timeout_s\":%g,\"sources\":%ld,\"seed\":%" PRIu64 ",",
           max_conns_mode(c) ? "max_conns" : "throughput", o->host, o->port, o->connections, c->threads,
           o->duration_s, o->size, o->depth, o->rate, o->connect_rate, o->connect_timeout_s, o->sources, o->seed);
    printf("\"nofile_soft\":%llu,\"nofile_hard\":%llu,\"elapsed_s\":%.6f,\"window_s\":%.6f,\"interrupted\":%s,",
           (unsigned long long)r->nofile_soft, (unsigned long long)r->nofile_hard, r->elapsed_s, r->window_s,
           r->interrupted ? "true" : "false");
    printf("\"connected\":%" PRIu64 ",\"all_connected_s\":", r->end.connected);
    if (r->end.connected == (uint64_t)o->connections)
        printf("%.6f", (double)(r->last_connected_ns - c->start_ns) / 1e9);
    else
        printf("null");
    printf(",\"open_at_end\":%" PRIu64 ",\"not_attempted\":%" PRIu64 ",\"connect_errors\":{", r->window.open,
           r->not_attempted);
    print_errno_counts(stdout, r->connect_errors, true);
    printf("},\"closed_early\":{");
    print_errno_counts(stdout, r->closed_early, true);
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
               (double)(r->first_failure.at_ns - c->start_ns) / 1e9);
    } else {
        printf("null");
    }
    printf(",\"rtt_ns\":{\"count\":%" PRIu64 ",\"mean\":%.1f,\"min\":%" PRIu64 ",\"max\":%" PRIu64
           ",\"percentiles\":{",
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
    if (max_conns_mode(c)) {
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

static void raise_open_file_limit(struct results *r)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return;
    if (lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
            getrlimit(RLIMIT_NOFILE, &lim);
    }
    r->nofile_soft = lim.rlim_cur;
    r->nofile_hard = lim.rlim_max;
}

/* Samples the series once a second until the workers are done (or, in
 * throughput mode, the window ends); runs the --max-conns hand-shake. */
static void supervise(struct client *c, struct results *r, size_t series_cap)
{
    struct sample prev = {0};
    bool window_done = false;
    for (uint64_t k = 1;; k++) {
        uint64_t tick = c->start_ns + k * NS_PER_S;
        uint64_t end = atomic_load(&c->end_ns);
        if (!max_conns_mode(c) && tick > end)
            tick = end;
        /* Short naps so the --max-conns hand-shake and the end are not late. */
        bool signalled = false;
        while (!signalled && now_ns() < tick) {
            uint64_t nap = min_u64(tick, now_ns() + 20000000ull);
            signalled = sleep_until(nap);
            if (max_conns_mode(c) && atomic_load(&c->settled) == c->threads && !atomic_load(&c->sweep_go)) {
                if (c->o.server_pid) {
                    struct timespec pause = {0, 200000000}; /* let the server's memory settle */
                    nanosleep(&pause, NULL);
                    r->rss_after = read_rss(c->o.server_pid);
                }
                struct sample s = take_sample(c, now_ns());
                r->reached = s.held;
                atomic_store(&c->sweep_go, true);
            }
            if (atomic_load(&c->finished) == c->threads)
                break;
        }
        uint64_t now = now_ns();
        if (signalled) {
            r->interrupted = true;
            atomic_store(&c->end_ns, now);
            set_stop(c, STOP_INTERRUPTED, 0);
            atomic_store(&c->interrupted, true);
        }
        struct sample s = take_sample(c, now);
        bool last = atomic_load(&c->finished) == c->threads || signalled ||
                    (!max_conns_mode(c) && now >= atomic_load(&c->end_ns));
        if (r->series_len < series_cap && (s.second > prev.second + 1e-3 || r->series_len == 0)) {
            print_sample(&prev, &s);
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
    text_out = c.o.json ? stderr : stdout;

    c.server.sin_family = AF_INET;
    c.server.sin_port = htons((uint16_t)c.o.port);
    if (inet_pton(AF_INET, c.o.host, &c.server.sin_addr) != 1)
        bad_usage("--host", "expects an IPv4 address", c.o.host);

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
    raise_open_file_limit(&r);
    if (r.nofile_soft != RLIM_INFINITY && (rlim_t)c.o.connections + 16 > r.nofile_soft)
        fprintf(stderr, "echo_client: warning: %ld connections need more descriptors than the open-file limit %llu\n",
                c.o.connections, (unsigned long long)r.nofile_soft);
    if (c.o.server_pid) {
        r.rss_before = read_rss(c.o.server_pid);
        if (r.rss_before < 0)
            bad_usage("--server-pid", "names no readable process", argv[0]);
    }

    c.threads = c.o.threads;
    c.workers = calloc((size_t)c.threads, sizeof c.workers[0]);
    size_t series_cap = (size_t)ceil(c.o.duration_s) + 64;
    r.series = calloc(series_cap, sizeof r.series[0]);
    if (r.hist == NULL || c.workers == NULL || r.series == NULL) {
        fprintf(stderr, "echo_client: out of memory\n");
        return EXIT_FAILURES;
    }
    histogram_init(r.hist);
    size_t per = (size_t)c.o.connections / (size_t)c.threads, extra = (size_t)c.o.connections % (size_t)c.threads;
    for (long i = 0, first = 0; i < c.threads; i++) {
        size_t n = per + ((size_t)i < extra);
        if (!worker_init(&c.workers[i], &c, (size_t)first, n)) {
            fprintf(stderr, "echo_client: cannot set up worker %ld: %s\n", i, strerror(errno));
            return EXIT_FAILURES;
        }
        first += (long)n;
    }

    fprintf(text_out,
            "echo_client: %s:%ld, %ld connections (%ld source addresses), %ld threads, %s %g s, "
            "%ld-byte messages, depth %ld, %s\n",
            c.o.host, c.o.port, c.o.connections, c.o.sources, c.threads,
            max_conns_mode(&c) ? "ramp of at most" : "trial of", c.o.duration_s, c.o.size, c.o.depth,
            c.o.rate > 0 ? "open loop (--rate)" : "closed loop");
    fprintf(text_out, "%8s %14s %14s %10s %8s\n", "second", "bytes_sent", "bytes_received", "echoes", "open");

    c.start_ns = now_ns();
    atomic_store(&c.end_ns, max_conns_mode(&c) ? UINT64_MAX : c.start_ns + (uint64_t)(c.o.duration_s * 1e9));
    for (long i = 0; i < c.threads; i++)
        if (pthread_create(&c.workers[i].thread, NULL, worker_main, &c.workers[i]) != 0) {
            fprintf(stderr, "echo_client: cannot start worker threads\n");
            return EXIT_FAILURES;
        }
    supervise(&c, &r, series_cap);
    for (long i = 0; i < c.threads; i++)
        pthread_join(c.workers[i].thread, NULL);
    uint64_t done = now_ns();
    r.elapsed_s = (double)(done - c.start_ns) / 1e9;
    r.end = take_sample(&c, done);
    merge_results(&c, &r);
    r.stop_reason = atomic_load(&c.stop_reason);
    r.stop_errno = atomic_load(&c.stop_errno);
    r.stop_s = r.stop_reason != STOP_NONE ? (double)(atomic_load(&c.stop_ns) - c.start_ns) / 1e9 : 0.0;
    if (max_conns_mode(&c) && !atomic_load(&c.sweep_go))
        r.reached = r.end.held; /* interrupted before the hand-shake */

    bool failed = r.verify_errors > 0;
    if (max_conns_mode(&c))
        failed |= !r.interrupted && r.sweep_alive < r.reached;
    else
        failed |= r.connect_errors_total > 0 || r.closed_early_total > 0 ||
                  (!r.interrupted && (r.unanswered > 0 || r.not_attempted > 0));
    r.exit_status = failed ? EXIT_FAILURES : 0;
    print_text(&c, &r);
    if (c.o.json)
        print_json(&c, &r);
    for (long i = 0; i < c.threads; i++)
        worker_destroy(&c.workers[i]);
    free(c.workers);
    free(r.series);
    free(r.hist);
    return r.exit_status;
}

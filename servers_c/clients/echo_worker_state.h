/* The inside of an echo_client worker, shared by its two files and nothing
 * else: echo_conn.c (one connection's life: connect, write, read and verify,
 * fail, close) and echo_worker.c (the loop over all of them: when to open,
 * deadlines, the end of the trial, the --max-conns ramp and sweep).
 *
 * Promises: everything here is touched by the worker's own thread only,
 * except through w->ctl (atomics) and w->res->live (published by
 * echo_worker.c). */
#ifndef ARCHBENCH_ECHO_WORKER_STATE_H
#define ARCHBENCH_ECHO_WORKER_STATE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deadline_heap.h"
#include "echo_control.h"
#include "echo_options.h"
#include "echo_results.h"
#include "source_connect.h"

#define IO_CHUNK (64 * 1024) /* one send or recv at most */
#define EVENT_BATCH 256
#define OPEN_BATCH 256          /* connections opened per loop iteration at most */
#define MAX_WAIT_NS 10000000ull /* a loop looks at stop requests at least this often */
#define DRAIN_NS 2000000000ull  /* after the trial: time allowed for echoes in flight */
#define SETTLE_NS 1000000000ull /* --max-conns: time allowed for connects in flight */

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
    struct heap_node due; /* --rate: in the send-deadline heap by its next message's due time */
    uint64_t since_ns;    /* connecting or (--max-conns) waiting for an echo since */
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

static inline void fifo_push(struct fifo *f, struct conn *cn)
{
    if (f->tail == f->cap) /* each connection enters once per phase: cannot happen */
        return;
    f->items[f->tail++] = (struct deadline){cn, cn->since_ns};
}

/* Drops stale entries; returns the oldest live one or NULL. */
static inline struct deadline *fifo_head(struct fifo *f, enum conn_state live)
{
    while (f->head < f->tail) {
        struct deadline *d = &f->items[f->head];
        if (d->conn->state == live && d->conn->since_ns == d->since_ns)
            return d;
        f->head++;
    }
    return NULL;
}

/* Counted by the worker alone; published into w->res->live. */
struct totals {
    uint64_t bytes_sent;
    uint64_t bytes_received;
    uint64_t echoes;
    uint64_t connected; /* ever established */
    uint64_t open;      /* established now */
    uint64_t held;      /* --max-conns: verified alive and idle */
};

struct echo_worker {
    const struct options *o;
    const struct sockaddr_in *server;
    struct echo_control *ctl;
    struct worker_results *res;
    int epoll_fd;
    struct conn *conns;
    size_t count;
    size_t opened;             /* conns[0, opened) have been started */
    double open_rate;          /* per second, this worker's share; 0: all at once */
    uint64_t *due_ns;          /* count x depth: when each message in flight was due */
    struct deadline_heap heap; /* --rate: connections by the due time of their next message */
    struct fifo connecting;
    struct fifo awaiting; /* --max-conns: connections waiting for an echo */
    size_t connecting_n, awaiting_n;
    uint64_t in_flight_bytes; /* begun messages' bytes not yet back */
    unsigned char *out_buf, *in_buf, *expect_buf;
    struct totals t;
    bool sweeping;
};

/* ---- one connection (echo_conn.c) ---------------------------------------- */

/* Starts its connect, registered with the worker's epoll. */
void conn_open(struct echo_worker *w, struct conn *cn, uint64_t now);
/* What epoll reported for it. */
void conn_on_event(struct echo_worker *w, struct conn *cn, uint32_t events);
/* Begins the messages that are due (throughput mode) and writes what the socket takes. */
void conn_pump(struct echo_worker *w, struct conn *cn, uint64_t now);
/* --max-conns: one message, whose echo proves the connection alive. */
void conn_begin_probe(struct echo_worker *w, struct conn *cn, uint64_t now);
void conn_connect_failed(struct echo_worker *w, struct conn *cn, int err, enum connect_step step);
void conn_close(struct echo_worker *w, struct conn *cn);

#endif

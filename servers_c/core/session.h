/* One connection's protocol state, independent of how bytes move.
 *
 * Architectures differ only in how they wait for and move bytes; all of them
 * hand received bytes to a session and send what it queues, through one API:
 * input space/commit/copy, process, output iovecs, output_sent, done. Behind it
 * are two protocols (--proto):
 *
 *   http  The session parses every complete request in its input (a request
 *         may arrive split over any number of reads, several may arrive in
 *         one), spends the request's work and wait if the server has any
 *         (workload.h), queues one pre-built response per request in order
 *         (an iovec into the one shared copy: a partial send only moves the
 *         iovec's start, however large the response), and exposes
 *         the queue as an iovec array so a batch of pipelined responses leaves in
 *         one writev/sendmsg. When the queue is full it stops parsing
 *         (backpressure) until output has been sent.
 *   echo  Every received byte goes back, in order. The output is one iovec
 *         pointing into the input buffer itself (no copy); while it is pending
 *         the input space is 0, so a transport reads nothing more from that
 *         connection until its echo has been sent (backpressure: a client that
 *         does not read is not read either, and the server never holds more
 *         than one input buffer of its bytes). After the peer's EOF the session
 *         is done once everything received has been sent back.
 *
 * The protocol is fixed per server, so process() branches once per call on it;
 * the HTTP path per request is what it was before echo existed.
 */
#ifndef ARCHBENCH_SESSION_H
#define ARCHBENCH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "http_parser.h"
#include "responses.h"
#include "workload.h"

/* Larger than HTTP_MAX_HEAD_BYTES, so an over-long head is always seen whole
 * enough to 431; in echo mode, the most bytes one echo sends back. */
#define SESSION_INPUT_BYTES 16384
/* Responses queued before parsing pauses; also the most iovecs one send carries. */
#define SESSION_MAX_QUEUED 64

enum session_proto { SESSION_HTTP, SESSION_ECHO };

/* The --proto values, indexed by enum session_proto; NULL-terminated. */
extern const char *const session_proto_names[];

/* --header-timeout and --idle-timeout, in milliseconds; 0 turns one off.
 *
 *   header  http only: a request head must be complete this long after it began
 *           (its first byte, or, for a connection's first request, when the
 *           transport took the connection up: the accept, or a worker's pickup);
 *           the clock does not restart while more bytes of the same head trickle in.
 *   idle    everything else: a connection that makes no progress for this long
 *           (no byte received or sent: a keep-alive connection between requests,
 *           a request body that stalls, a client that stops reading its
 *           responses; in echo mode, any connection) is closed. With the header
 *           timeout off it also covers a head that stops arriving.
 * The transports apply them; session_wait_kind() says which one governs a wait. */
struct session_timeouts {
    uint32_t header_ms;
    uint32_t idle_ms;
};

/* What every session of a server shares (built once at start-up). */
struct session_config {
    enum session_proto proto;
    const struct responses *responses; /* http: the pre-built answers */
    struct session_timeouts timeouts;  /* zero: no timeouts */
    const struct workload *workload;   /* http: per-request work and wait; NULL: none */
};

struct session_counters {
    uint64_t requests_served; /* http */
    uint64_t bad_requests;    /* http */
    uint64_t echoes;          /* echo: batches of received bytes queued to go back */
    uint64_t bytes_echoed;    /* echo: bytes sent back */
    /* Whether the first answer found the client still connected; a client that
     * gave up before it was ever answered was starved, whatever came after. */
    bool first_answer_checked;
    bool first_answer_after_client_left;
};

struct session {
    enum session_proto proto;
    const struct responses *responses;
    struct session_timeouts timeouts;
    const struct workload *workload;
    char *in;
    size_t in_len;   /* bytes held in `in` */
    size_t in_start; /* first byte not yet consumed (http) or queued for echo */
    struct http_scan scan;
    uint64_t body_remaining;
    struct iovec out[SESSION_MAX_QUEUED]; /* echo: at most one, into `in` */
    size_t out_first;
    size_t out_count;
    bool closing;     /* no further input is processed; close once output is sent */
    bool input_ended; /* the peer will send nothing more */
    bool bad_request; /* closing because a request was rejected */
    bool timed_out;   /* closed by a timeout: close without waiting for the client */
    struct session_counters counters;
};

bool session_init(struct session *s, const struct session_config *config);
void session_destroy(struct session *s);
/* Prepares an initialised session for a new connection, keeping its buffer. */
void session_reset(struct session *s);

/* Where the next received bytes go; *space is 0 when the input buffer is full,
 * the session is closing, or (echo) output is pending. */
char *session_input_space(struct session *s, size_t *space);
void session_input_commit(struct session *s, size_t n);

/* The peer closed its side: what was already received is still answered. */
static inline void session_end_input(struct session *s) { s->input_ended = true; }

/* Copies received bytes in (for transports that receive into their own buffers);
 * returns how many were taken. */
size_t session_input_copy(struct session *s, const char *bytes, size_t len);

/* Consumes what it can of the input (complete requests, or bytes to echo) and
 * queues the output; returns true if it consumed anything. */
bool session_process(struct session *s);

/* The queued output as an iovec array; returns the count (0: nothing queued). */
int session_output(struct session *s, struct iovec **iov);
/* Marks n bytes of the queued output as sent. */
void session_output_sent(struct session *s, size_t n);

static inline bool session_has_output(const struct session *s) { return s->out_count > 0; }

/* Anything was ever queued as an answer (a response, or bytes to echo). */
static inline bool session_has_answered(const struct session *s)
{
    return s->counters.requests_served > 0 || s->counters.bad_requests > 0 || s->counters.echoes > 0;
}

/* Unconsumed input remains that processing could use once output drains. */
static inline bool session_has_pending_input(const struct session *s) { return !s->closing && s->in_start < s->in_len; }

/* Nothing more to do: the connection can be closed. */
static inline bool session_done(const struct session *s) { return s->closing && s->out_count == 0; }

/* Closing with bytes from the client possibly unread: close() would send a
 * reset that can destroy the response in flight, so the caller should shut
 * down writing and drain before closing (a lingering close). */
static inline bool session_needs_linger(const struct session *s)
{
    return s->bad_request || s->in_start < s->in_len || s->body_remaining > 0;
}

/* Which timeout governs the wait that follows, once the session has processed
 * what arrived (see struct session_timeouts). */
enum session_wait {
    SESSION_WAIT_HEAD, /* http: a head is awaited (a new connection) or incomplete */
    SESSION_WAIT_IDLE, /* anything else: idle between requests, a body, output pending, echo */
};

static inline enum session_wait session_wait_kind(const struct session *s)
{
    if (s->proto == SESSION_HTTP && !s->closing && s->body_remaining == 0 && s->out_count == 0 &&
        (s->in_start < s->in_len || s->counters.requests_served == 0))
        return SESSION_WAIT_HEAD;
    return SESSION_WAIT_IDLE;
}

/* Bytes of an incomplete request head are held: a timeout then answers 408. */
static inline bool session_has_partial_head(const struct session *s)
{
    return s->proto == SESSION_HTTP && !s->closing && s->body_remaining == 0 && s->out_count == 0 &&
        s->in_start < s->in_len;
}

/* Changes whenever a request completes: a head that begins afterwards gets a
 * fresh header deadline. */
static inline uint64_t session_head_generation(const struct session *s) { return s->counters.requests_served; }

#endif

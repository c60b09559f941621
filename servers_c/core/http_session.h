/* One HTTP/1.x connection's protocol state, independent of how bytes move.
 *
 * Architectures differ only in how they wait for and move bytes; all of them
 * hand received bytes to a session and send what it queues. The session parses
 * every complete request in its input (a request may arrive split over any
 * number of reads, several may arrive in one), queues one pre-built response per
 * request in order, and exposes the queue as an iovec array so a batch of
 * pipelined responses leaves in one writev/sendmsg. When the queue is full it
 * stops parsing (backpressure) until output has been sent.
 */
#ifndef ARCHBENCH_HTTP_SESSION_H
#define ARCHBENCH_HTTP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "http_parser.h"
#include "responses.h"

/* Larger than HTTP_MAX_HEAD_BYTES, so an over-long head is always seen whole enough to 431. */
#define SESSION_INPUT_BYTES 16384
/* Responses queued before parsing pauses; also the most iovecs one send carries. */
#define SESSION_MAX_QUEUED 64

struct session_counters {
    uint64_t requests_served;
    uint64_t bad_requests;
    /* Whether the first answer found the client still connected; a client that
     * gave up before it was ever answered was starved, whatever came after. */
    bool first_answer_checked;
    bool first_answer_after_client_left;
};

struct http_session {
    const struct responses *responses;
    char *in;
    size_t in_len;   /* bytes held in `in` */
    size_t in_start; /* first byte not yet consumed */
    struct http_scan scan;
    uint64_t body_remaining;
    struct iovec out[SESSION_MAX_QUEUED];
    size_t out_first;
    size_t out_count;
    bool closing;     /* no further input is processed; close once output is sent */
    bool input_ended; /* the peer will send nothing more */
    bool bad_request; /* closing because a request was rejected */
    struct session_counters counters;
};

bool http_session_init(struct http_session *s, const struct responses *responses);
void http_session_destroy(struct http_session *s);
/* Prepares an initialised session for a new connection, keeping its buffer. */
void http_session_reset(struct http_session *s);

/* Where the next received bytes go; *space is 0 when the input buffer is full
 * or the session is closing. */
char *http_session_input_space(struct http_session *s, size_t *space);
void http_session_input_commit(struct http_session *s, size_t n);

/* The peer closed its side: requests already received are still answered. */
static inline void http_session_end_input(struct http_session *s) { s->input_ended = true; }

/* Copies received bytes in (for transports that receive into their own buffers);
 * returns how many were taken. */
size_t http_session_input_copy(struct http_session *s, const char *bytes, size_t len);

/* Consumes complete requests and queues their responses; returns true if it
 * consumed anything. */
bool http_session_process(struct http_session *s);

/* The queued output as an iovec array; returns the count (0: nothing queued). */
int http_session_output(struct http_session *s, struct iovec **iov);
/* Marks n bytes of the queued output as sent. */
void http_session_output_sent(struct http_session *s, size_t n);

static inline bool http_session_has_output(const struct http_session *s) { return s->out_count > 0; }

/* Unconsumed input remains that processing could use once output drains. */
static inline bool http_session_has_pending_input(const struct http_session *s)
{
    return !s->closing && s->in_start < s->in_len;
}

/* Nothing more to do: the connection can be closed. */
static inline bool http_session_done(const struct http_session *s)
{
    return s->closing && s->out_count == 0;
}

/* Closing with bytes from the client possibly unread: close() would send a
 * reset that can destroy the response in flight, so the caller should shut
 * down writing and drain before closing (a lingering close). */
static inline bool http_session_needs_linger(const struct http_session *s)
{
    return s->bad_request || s->in_start < s->in_len || s->body_remaining > 0;
}

#endif

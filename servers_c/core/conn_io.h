/* Moving a session's bytes over a socket descriptor, blocking or not. */
#ifndef ARCHBENCH_CONN_IO_H
#define ARCHBENCH_CONN_IO_H

#include <stdbool.h>

#include "counters.h"
#include "session.h"

enum conn_next {
    CONN_WANT_READ,  /* wait until readable */
    CONN_WANT_WRITE, /* output is pending: wait until writable, read nothing meanwhile */
    CONN_CLOSE,      /* finished: call conn_close */
};

/* Non-blocking descriptor became readable: reads until drained (a short read or
 * EAGAIN), lets the session process what arrived (answer every complete request,
 * or echo the bytes), sends its output in one writev per batch. Safe for
 * edge-triggered notification. */
enum conn_next conn_on_readable(int fd, struct session *s, struct server_counters *c);

/* Non-blocking descriptor became writable while output was pending: sends it,
 * processes input held back meanwhile (requests behind a full queue), then
 * reads on. */
enum conn_next conn_on_writable(int fd, struct session *s, struct server_counters *c);

/* Blocking descriptor: serves the session until the connection ends (the caller
 * closes), applying the session's timeouts: SO_RCVTIMEO/SO_SNDTIMEO set to the
 * idle timeout once, and a poll() deadline while a request head is incomplete. */
void conn_serve_blocking(int fd, struct session *s, struct server_counters *c);

/* Records, once per connection, whether the client had already closed its side
 * when its first answer (a response, or a first batch to echo) was ready (tcp
 * state CLOSE_WAIT). Transports that do not
 * go through conn_on_readable/conn_serve_blocking call it after processing. */
void conn_check_first_answer(int fd, struct session *s);

/* A connection's deadline passed (the caller closes it next): counts the
 * timeout, answers 408 Request Timeout when part of a request head had
 * arrived (one non-blocking send, best effort) and marks the session closing
 * and timed out, so that conn_close does not wait for the client. */
void conn_timed_out(int fd, struct session *s, struct server_counters *c);

/* How a connection ends. Only a thread that owns nothing but this connection
 * may wait for the client. */
enum conn_close_mode {
    CLOSE_ABRUPTLY,           /* the socket failed or the server is stopping */
    CLOSE_LINGERING,          /* event loops: drain what has arrived, never wait */
    CLOSE_LINGERING_MAY_WAIT, /* blocking architectures: a bounded wait for the client's EOF */
};

/* Closes a connection. Unless abruptly, when the client may still be sending,
 * shuts down writing and drains first so the kernel does not answer unread
 * bytes with a reset that destroys the response in flight. */
void conn_close(int fd, const struct session *s, enum conn_close_mode mode);

#endif

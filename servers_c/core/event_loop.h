/* One epoll event loop serving connections (in the spirit of redis ae.c).
 *
 * The epoll architectures differ in where a loop's connections come from: its
 * own listener (epoll, reuseport), a listener shared between processes with
 * EPOLLEXCLUSIVE (prefork), or an acceptor thread that hands them over
 * (reactor, through event_loop_adopt and an eventfd). Inside the loop they are
 * served the same way: read until drained, let the session process it (answer
 * every complete request, or echo), one writev per batch.
 *
 * Level-triggered: interest is EPOLLIN, switched to EPOLLOUT only while a
 * write is blocked. Edge-triggered: each connection is registered once for
 * EPOLLIN|EPOLLOUT|EPOLLET and never modified again; reads and accepts go on
 * until EAGAIN. Neither mode makes an epoll_ctl call per request or echo unless
 * a write blocks.
 */
#ifndef ARCHBENCH_EVENT_LOOP_H
#define ARCHBENCH_EVENT_LOOP_H

#include <stdbool.h>

#include "counters.h"
#include "session.h"

struct event_loop_options {
    const struct session_config *session;
    bool edge_triggered;
    int listen_fd;         /* non-blocking listener, or -1 when connections are adopted */
    bool exclusive_accept; /* EPOLLEXCLUSIVE on the listener: one waiter woken per connection */
};

struct event_loop;

/* NULL (and errno) on failure. */
struct event_loop *event_loop_create(const struct event_loop_options *options);

/* Hands a connected non-blocking socket to the loop; callable from any thread. */
bool event_loop_adopt(struct event_loop *loop, int fd);

/* Serves until event_loop_stop(). */
void event_loop_run(struct event_loop *loop);

/* Callable from any thread. */
void event_loop_stop(struct event_loop *loop);

/* Once event_loop_run has returned: closes the connections still open, frees
 * the loop and returns everything it counted. */
struct server_counters event_loop_finish(struct event_loop *loop);

/* The --trigger flag shared by the epoll architectures. */
extern const char *const trigger_names[];
enum trigger_mode { TRIGGER_LEVEL, TRIGGER_EDGE };

#endif

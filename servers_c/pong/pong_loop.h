/* One pong event loop: an epoll instance over its own listener and the
 * connections it accepted, edge-triggered (the reuseport scheme, one per thread).
 *
 * Per readable connection: read, count the terminators (pong_framing), add
 * that many responses to what is owed, one send per read (pong_output). While
 * a send is blocked the loop reads nothing more from that connection
 * (backpressure) and waits for EPOLLOUT; at EOF it sends what is still owed,
 * then closes. Each connection is registered once for EPOLLIN | EPOLLOUT |
 * EPOLLRDHUP | EPOLLET and never modified; the listener is level-triggered and
 * drained to EAGAIN on each wake-up.
 */
#ifndef ARCHBENCH_PONG_LOOP_H
#define ARCHBENCH_PONG_LOOP_H

#include "counters.h"
#include "pong_output.h"

struct pong_loop;

/* listen_fd: a non-blocking listener of its own; NULL (and errno) on failure. */
struct pong_loop *pong_loop_create(int listen_fd, const struct pong_block *block);

/* Serves until pong_loop_stop(). */
void pong_loop_run(struct pong_loop *loop);

/* Callable from any thread. */
void pong_loop_stop(struct pong_loop *loop);

/* Once pong_loop_run has returned: closes the connections still open, frees
 * the loop and returns what it counted. */
struct server_counters pong_loop_finish(struct pong_loop *loop);

#endif

/* Socket set-up shared by every architecture (in the spirit of redis anet.c). */
#ifndef ARCHBENCH_LISTENER_H
#define ARCHBENCH_LISTENER_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a socket's calls block: an argument that reads as what it means at
 * the call site, where a bare true/false would not. */
enum socket_mode { SOCKET_BLOCKING, SOCKET_NONBLOCKING };

struct listen_request {
    const char *host;
    int port; /* 0: ephemeral */
    int backlog;
    bool reuseport; /* SO_REUSEPORT, for one listener per event loop */
    bool nonblocking;
};

/* Returns a listening socket and writes the bound port, or -1 with a message in err. */
int listener_open(const struct listen_request *req, int *bound_port, char *err, size_t err_len);

/* Options every accepted connection gets: TCP_NODELAY, because a response
 * batch is written whole and Nagle would hold back the next batch behind a
 * delayed ACK. */
void tune_accepted_socket(int fd);

/* accept4 with SOCK_CLOEXEC (and SOCK_NONBLOCK for SOCKET_NONBLOCK), tuned; -1 and errno on failure. */
int accept_connection(int listen_fd, enum socket_mode mode);

/* Sleeps briefly after EMFILE, ENFILE, ENOBUFS or ENOMEM, so an acceptor out
 * of descriptors does not spin while connections close. */
void accept_pause_if_exhausted(int err);

bool listener_set_nonblocking(int fd);

/* True for accept() errors that concern one connection or a passing shortage,
 * after which accepting may go on. */
bool accept_error_is_transient(int err);

#endif

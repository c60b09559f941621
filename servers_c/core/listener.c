#include "listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int listener_open(const struct listen_request *req, int *bound_port, char *err, size_t err_len)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)req->port);
    if (inet_pton(AF_INET, req->host, &addr.sin_addr) != 1) {
        snprintf(err, err_len, "--host: '%s' is not an IPv4 address", req->host);
        return -1;
    }
    int type = SOCK_STREAM | SOCK_CLOEXEC | (req->nonblocking ? SOCK_NONBLOCK : 0);
    int fd = socket(AF_INET, type, 0);
    if (fd < 0) {
        snprintf(err, err_len, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (req->reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0)) {
        snprintf(err, err_len, "setsockopt: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        snprintf(err, err_len, "bind %s:%d: %s", req->host, req->port, strerror(errno));
        close(fd);
        return -1;
    }
    if (listen(fd, req->backlog) != 0) {
        snprintf(err, err_len, "listen: %s", strerror(errno));
        close(fd);
        return -1;
    }
    socklen_t len = sizeof addr;
    if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
        snprintf(err, err_len, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *bound_port = ntohs(addr.sin_port);
    return fd;
}

void tune_accepted_socket(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int accept_connection(int listen_fd, enum socket_mode mode)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | (mode == SOCKET_NONBLOCKING ? SOCK_NONBLOCK : 0));
    if (fd >= 0)
        tune_accepted_socket(fd);
    return fd;
}

bool accept_error_is_transient(int err)
{
    switch (err) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case EPERM:  /* firewall rules */
    case EMFILE: /* out of descriptors: others close, then accepting works again */
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH: return true;
    default: return false;
    }
}

void accept_pause_if_exhausted(int err)
{
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

bool listener_set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

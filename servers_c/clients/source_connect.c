/* Starting a connection from a loopback source address; see source_connect.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "source_connect.h"

static struct connect_attempt failed(int err, enum connect_step step)
{
    return (struct connect_attempt){.fd = -1, .err = err, .step = step};
}

struct connect_attempt connect_start(const struct sockaddr_in *server, long sources, uint32_t index)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return failed(errno, IN_SOCKET_CALL);
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sources > 0) {
        (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        struct sockaddr_in src = {.sin_family = AF_INET};
        src.sin_addr.s_addr = htonl((127u << 24) | (1u + index % (uint32_t)sources));
        if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
            int err = errno;
            close(fd);
            return failed(err, AFTER_SOCKET_CALL);
        }
    }
    int r = connect(fd, (const struct sockaddr *)server, sizeof *server);
    int err = r == 0 ? 0 : errno;
    if (r != 0 && err != EINPROGRESS) {
        close(fd);
        return failed(err, AFTER_SOCKET_CALL);
    }
    return (struct connect_attempt){.fd = fd, .connected = r == 0, .step = AFTER_SOCKET_CALL};
}

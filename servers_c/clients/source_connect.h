/* Starting a connection towards a server from one of several loopback source
 * addresses.
 *
 * Why: towards one server address and port, the ephemeral port range
 * (32768-60999 on Linux) allows about 28,232 connections per source address.
 * With `sources` K > 0, connection i is bound to 127.0.0.(1 + i mod K) before
 * connecting, with IP_BIND_ADDRESS_NO_PORT so that the port is chosen for the
 * whole 4-tuple at connect time: K x 28,232 connections fit, and the open-file
 * limit is what remains.
 *
 * Owns: nothing; the caller owns the socket it gets back. Promises: a
 * non-blocking, close-on-exec TCP socket with TCP_NODELAY whose connect has
 * completed or is in progress, or no socket at all and the errno of the step
 * that failed. Used by echo_client's connections and by idle_holder. */
#ifndef ARCHBENCH_SOURCE_CONNECT_H
#define ARCHBENCH_SOURCE_CONNECT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

/* Where a connect failed: socket() itself failing for lack of descriptors is
 * the client's limit, not the server's. */
enum connect_step { IN_SOCKET_CALL, AFTER_SOCKET_CALL };

struct connect_attempt {
    int fd;         /* -1: failed, see err and step */
    bool connected; /* established at once (else EINPROGRESS: wait for writability) */
    int err;
    enum connect_step step;
};

/* Connection `index`'s connect to server, from 127.0.0.(1 + index mod sources); sources 0: the kernel's choice. */
struct connect_attempt connect_start(const struct sockaddr_in *server, long sources, uint32_t index);

#endif

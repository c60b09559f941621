#include "uring_setup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lifecycle.h"
#include "uring_buffers.h"

#define ARCHITECTURE "io_uring"

static const unsigned ring_base_flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE;

/* Best first. */
static const struct ring_mode ring_modes[] = {
    {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, "SINGLE_ISSUER|DEFER_TASKRUN"},
    {IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN"},
    {0, "no task-run flags"},
};

int uring_create_ring(struct io_uring *ring, const struct ring_mode *mode)
{
    struct io_uring_params params;
    memset(&params, 0, sizeof params);
    params.flags = ring_base_flags | mode->flags;
    params.cq_entries = RING_CQ_ENTRIES;
    return io_uring_queue_init_params(RING_SQ_ENTRIES, ring, &params);
}

static _Noreturn void unsupported(const char *what, int err)
{
    if (err != 0)
        fprintf(stderr, "io_uring: unsupported: %s (%s)\n", what, strerror(err));
    else
        fprintf(stderr, "io_uring: unsupported: %s\n", what);
    exit(EXIT_UNSUPPORTED);
}

/* Creates a ring with the best mode the kernel accepts, saying on stderr
 * when it falls back. */
static const struct ring_mode *choose_ring_mode(struct io_uring *ring)
{
    size_t n = sizeof ring_modes / sizeof ring_modes[0];
    for (size_t i = 0; i < n; i++) {
        int ret = uring_create_ring(ring, &ring_modes[i]);
        if (ret == 0)
            return &ring_modes[i];
        if (ret == -ENOSYS || ret == -EPERM || ret == -EACCES)
            unsupported("io_uring_setup refused: io_uring is not available to this process", -ret);
        if (ret != -EINVAL) {
            char message[128];
            snprintf(message, sizeof message, "io_uring_setup: %s", strerror(-ret));
            lifecycle_fail(ARCHITECTURE, message);
        }
        if (i + 1 < n)
            fprintf(stderr, "io_uring: %s unavailable (%s); falling back to %s\n", ring_modes[i].name, strerror(-ret),
                    ring_modes[i + 1].name);
        else
            unsupported("the kernel refuses every ring set-up (needs SUBMIT_ALL and CQSIZE: Linux 5.18+)", -ret);
    }
    unsupported("no ring mode", 0); /* unreachable */
}

static void require_opcodes(struct io_uring *ring)
{
    static const struct {
        int op;
        const char *name;
    } needed[] = {
        {IORING_OP_ACCEPT, "IORING_OP_ACCEPT"},
        {IORING_OP_RECV, "IORING_OP_RECV"},
        {IORING_OP_SENDMSG, "IORING_OP_SENDMSG"},
        {IORING_OP_READ, "IORING_OP_READ"},
        {IORING_OP_ASYNC_CANCEL, "IORING_OP_ASYNC_CANCEL"},
    };
    struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
    if (probe == NULL)
        unsupported("cannot probe the supported io_uring operations", 0);
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
        if (!io_uring_opcode_supported(probe, needed[i].op)) {
            char message[128];
            snprintf(message, sizeof message, "the kernel lacks %s", needed[i].name);
            io_uring_free_probe(probe);
            unsupported(message, 0);
        }
    }
    io_uring_free_probe(probe);
}

static bool wait_cqe_briefly(struct io_uring *ring, struct io_uring_cqe **cqe)
{
    struct __kernel_timespec timeout = {.tv_sec = 1, .tv_nsec = 0};
    return io_uring_wait_cqe_timeout(ring, cqe, &timeout) == 0;
}

/* Multishot recv (Linux 6.0) has no opcode of its own to probe: try one on a
 * socket pair and check that a byte arrives in a provided buffer with the
 * recv still armed. */
static void require_multishot_recv(struct io_uring *ring)
{
    struct buffer_ring br;
    int ret = buffer_ring_create(ring, &br, 8, 64);
    if (ret < 0)
        unsupported("provided buffer rings (io_uring_register_buf_ring, Linux 5.19+) are unavailable", -ret);
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        lifecycle_fail(ARCHITECTURE, "socketpair failed while probing io_uring");
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    prep_multishot_recv(sqe, pair[0]);
    io_uring_submit(ring);
    (void)!write(pair[1], "x", 1);
    struct io_uring_cqe *cqe;
    if (!wait_cqe_briefly(ring, &cqe))
        unsupported("multishot recv did not complete while probing", 0);
    int res = cqe->res;
    unsigned flags = cqe->flags;
    io_uring_cqe_seen(ring, cqe);
    if (res < 0)
        unsupported("multishot recv with provided buffers (Linux 6.0+) is unavailable", -res);
    if (res != 1 || !(flags & IORING_CQE_F_BUFFER) || !(flags & IORING_CQE_F_MORE))
        unsupported("multishot recv with provided buffers (Linux 6.0+) is unavailable", 0);
    /* EOF ends the recv; wait for its last CQE before taking the buffers away. */
    close(pair[1]);
    if (wait_cqe_briefly(ring, &cqe))
        io_uring_cqe_seen(ring, cqe);
    close(pair[0]);
    buffer_ring_destroy(ring, &br);
}

const struct ring_mode *uring_probe(void)
{
    struct io_uring ring;
    const struct ring_mode *mode = choose_ring_mode(&ring);
    if (!(ring.features & IORING_FEAT_NODROP) || !(ring.features & IORING_FEAT_EXT_ARG))
        unsupported("the kernel lacks IORING_FEAT_NODROP or IORING_FEAT_EXT_ARG", 0);
    require_opcodes(&ring);
    require_multishot_recv(&ring);
    io_uring_queue_exit(&ring);
    return mode;
}

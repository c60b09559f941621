/* A ring of provided receive buffers (liburing >= 2.3): the kernel picks one
 * per receive completion and the loop hands it back after copying its bytes
 * out. */
#ifndef ARCHBENCH_URING_BUFFERS_H
#define ARCHBENCH_URING_BUFFERS_H

#include <stddef.h>

#include <liburing.h>

/* The buffer group every multishot recv selects from (one ring per loop). */
#define URING_BUFFER_GROUP 0

struct buffer_ring {
    struct io_uring_buf_ring *ring;
    char *area; /* count buffers of size bytes, after the ring entries */
    size_t map_bytes;
    unsigned count;
    unsigned size;
    int returned; /* handed back since the tail was last published */
};

/* Maps and registers count buffers of size bytes; 0, or a negative errno. */
int buffer_ring_create(struct io_uring *ring, struct buffer_ring *br, unsigned count, unsigned size);

void buffer_ring_destroy(struct io_uring *ring, struct buffer_ring *br);

static inline char *buffer_at(const struct buffer_ring *br, unsigned id) { return br->area + (size_t)id * br->size; }

/* The per-completion calls are inline: they run for every receive CQE, as
 * they did when they were static in io_uring.c. */

/* Queues a buffer for return; buffer_ring_publish makes the batch visible. */
static inline void buffer_ring_give_back(struct buffer_ring *br, unsigned id)
{
    io_uring_buf_ring_add(br->ring, buffer_at(br, id), br->size, (unsigned short)id, io_uring_buf_ring_mask(br->count),
                          br->returned++);
}

static inline void buffer_ring_publish(struct buffer_ring *br)
{
    if (br->returned > 0) {
        io_uring_buf_ring_advance(br->ring, br->returned);
        br->returned = 0;
    }
}

/* A multishot recv on fd into the buffers of URING_BUFFER_GROUP. */
static inline void prep_multishot_recv(struct io_uring_sqe *sqe, int fd)
{
    io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BUFFER_GROUP;
}

#endif

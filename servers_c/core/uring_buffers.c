#include "uring_buffers.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int buffer_ring_create(struct io_uring *ring, struct buffer_ring *br, unsigned count, unsigned size)
{
    br->ring = NULL;
    size_t entries_bytes = count * sizeof(struct io_uring_buf);
    long page = sysconf(_SC_PAGESIZE);
    entries_bytes = (entries_bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    br->map_bytes = entries_bytes + (size_t)count * size;
    /* mmap: page-aligned, as the kernel requires for the ring entries. */
    void *mem = mmap(NULL, br->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return -errno;
    br->ring = mem;
    br->area = (char *)mem + entries_bytes;
    br->count = count;
    br->size = size;
    br->returned = 0;
    io_uring_buf_ring_init(br->ring);
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.ring_addr = (uint64_t)(uintptr_t)br->ring;
    reg.ring_entries = count;
    reg.bgid = URING_BUFFER_GROUP;
    int ret = io_uring_register_buf_ring(ring, &reg, 0);
    if (ret < 0) {
        munmap(mem, br->map_bytes);
        br->ring = NULL;
        return ret;
    }
    int mask = io_uring_buf_ring_mask(count);
    for (unsigned i = 0; i < count; i++)
        io_uring_buf_ring_add(br->ring, br->area + (size_t)i * size, size, (unsigned short)i, mask, (int)i);
    io_uring_buf_ring_advance(br->ring, (int)count);
    return 0;
}

void buffer_ring_destroy(struct io_uring *ring, struct buffer_ring *br)
{
    if (br->ring == NULL)
        return;
    (void)io_uring_unregister_buf_ring(ring, URING_BUFFER_GROUP);
    munmap(br->ring, br->map_bytes);
    br->ring = NULL;
}

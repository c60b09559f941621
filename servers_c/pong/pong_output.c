#include "pong_output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* At least this many bytes of responses per send: a deep pipeline's batch
 * (source 002's and libreactor's wrk runs pipeline up to 16 or more) in one call. */
#define BLOCK_MIN_BYTES 65536
#define BLOCK_MIN_COPIES 64

bool pong_block_build(struct pong_block *block, const char *response, size_t response_len)
{
    size_t copies = BLOCK_MIN_BYTES / response_len + 1;
    if (copies < BLOCK_MIN_COPIES)
        copies = BLOCK_MIN_COPIES;
    block->response_len = response_len;
    block->len = response_len * copies;
    block->bytes = malloc(block->len);
    if (block->bytes == NULL)
        return false;
    for (size_t i = 0; i < copies; i++)
        memcpy(block->bytes + i * response_len, response, response_len);
    return true;
}

void pong_block_free(struct pong_block *block)
{
    free(block->bytes);
    block->bytes = NULL;
}

enum pong_send_result pong_send_owed(int fd, const struct pong_block *block, uint64_t *owed)
{
    while (*owed > 0) {
        /* The stream is the response repeated: the next byte owed is this far into one. */
        size_t offset = (size_t)((block->response_len - *owed % block->response_len) % block->response_len);
        size_t len = block->len - offset;
        if (*owed < len)
            len = (size_t)*owed;
        ssize_t sent = send(fd, block->bytes + offset, len, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? PONG_SEND_BLOCKED : PONG_SEND_FAILED;
        }
        *owed -= (uint64_t)sent;
        if ((size_t)sent < len)
            return PONG_SEND_BLOCKED; /* a short send: the buffer is full, the next would say EAGAIN */
    }
    return PONG_SENT_ALL;
}

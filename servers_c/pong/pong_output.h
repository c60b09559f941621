/* What pong owes a connection, and sending it.
 *
 * Every response is the same bytes, so a connection's output is a byte count:
 * the responses it owes, less what the kernel has taken of the first. It is
 * sent from one read-only block holding the response many times over, so a
 * batch of pipelined requests costs one send() however deep (up to the block),
 * and what the kernel did not take stays owed until the socket is writable.
 * No connection ever has an output buffer of its own.
 */
#ifndef ARCHBENCH_PONG_OUTPUT_H
#define ARCHBENCH_PONG_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pong_block {
    char *bytes;         /* the response, `copies` times */
    size_t response_len; /* one response */
    size_t len;          /* response_len * copies */
};

/* Builds the block for one response (a few tens of KiB); false if out of memory. */
bool pong_block_build(struct pong_block *block, const char *response, size_t response_len);

void pong_block_free(struct pong_block *block);

enum pong_send_result {
    PONG_SENT_ALL,     /* nothing owed any more */
    PONG_SEND_BLOCKED, /* the kernel took part (or nothing): wait until writable */
    PONG_SEND_FAILED,  /* the connection is gone (errno says why) */
};

/* Sends what is owed (`*owed` bytes of the response stream) until it is all
 * sent or the socket would block; lowers *owed by what went out. */
enum pong_send_result pong_send_owed(int fd, const struct pong_block *block, uint64_t *owed);

#endif

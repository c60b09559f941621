/* Finding requests by their terminator, without parsing them.
 *
 * pong counts the "\r\n\r\n" that ends every request head and answers each
 * one. A terminator may be split across reads, so the scanner carries how
 * many of its bytes ended the previous read (at most 3): that, and nothing
 * else, is a connection's input state. Request bodies are not skipped (no
 * Content-Length is read): a body that contains "\r\n\r\n" would be counted
 * as a request, which is why pong is an upper bound and not an HTTP server.
 */
#ifndef ARCHBENCH_PONG_FRAMING_H
#define ARCHBENCH_PONG_FRAMING_H

#include <stddef.h>

#define PONG_TERMINATOR "\r\n\r\n"
#define PONG_TERMINATOR_LEN 4

struct pong_framing {
    unsigned char matched; /* bytes of the terminator that ended the input so far (0..3) */
};

/* The terminators completed by the next `len` bytes of the stream (those that
 * began in earlier reads included); updates the carried state. */
size_t pong_count_requests(struct pong_framing *framing, const char *data, size_t len);

#endif

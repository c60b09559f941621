#include "pong_framing.h"

#include <string.h>

/* One step of the matcher for "\r\n\r\n" (KMP): the bytes matched after `c`,
 * given `matched` before it. Its only self-overlap is "\r\n", so a mismatch
 * falls back to 1 on '\r' and to 0 otherwise. */
static unsigned step(unsigned matched, char c)
{
    if (c == PONG_TERMINATOR[matched])
        return matched + 1;
    return c == '\r' ? 1 : 0;
}

size_t pong_count_requests(struct pong_framing *framing, const char *data, size_t len)
{
    size_t count = 0;
    size_t pos = 0;
    unsigned matched = framing->matched;
    /* Finish (or give up) the terminator the previous read ended inside. */
    while (matched > 0 && pos < len) {
        matched = step(matched, data[pos++]);
        if (matched == PONG_TERMINATOR_LEN) {
            count++;
            matched = 0;
            break;
        }
    }
    if (matched > 0) { /* the whole read was the middle of a terminator */
        framing->matched = (unsigned char)matched;
        return count;
    }
    /* Whole terminators: memmem is far faster than a byte-by-byte matcher. */
    const char *end = data + len;
    const char *from = data + pos;
    const char *found;
    while ((found = memmem(from, (size_t)(end - from), PONG_TERMINATOR, PONG_TERMINATOR_LEN)) != NULL) {
        count++;
        from = found + PONG_TERMINATOR_LEN;
    }
    /* No terminator lies wholly after `from`: what it has begun is in its last 3 bytes. */
    const char *tail = end - from > PONG_TERMINATOR_LEN - 1 ? end - (PONG_TERMINATOR_LEN - 1) : from;
    for (matched = 0; tail < end; tail++)
        matched = step(matched, *tail);
    framing->matched = (unsigned char)matched;
    return count;
}

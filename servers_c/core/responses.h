/* Responses built once at start-up; serving a request only queues a pointer. */
#ifndef ARCHBENCH_RESPONSES_H
#define ARCHBENCH_RESPONSES_H

#include <stdbool.h>
#include <stddef.h>

struct prebuilt {
    const char *bytes;
    size_t len;
};

struct responses {
    /* ok[keep_alive][is_head]: the configured 200 response */
    struct prebuilt ok[2][2];
    struct prebuilt bad_request;           /* 400 */
    struct prebuilt request_timeout;       /* 408: a request head that did not complete in time */
    struct prebuilt payload_too_large;     /* 413 */
    struct prebuilt header_too_large;      /* 431 */
    struct prebuilt not_implemented;       /* 501 */
    struct prebuilt version_not_supported; /* 505 */
    char *storage;                         /* owns every byte above */
};

/* --response bytes:N: a body of N bytes, within these bounds. */
#define RESPONSE_BYTES_MIN 4
#define RESPONSE_BYTES_MAX (1024 * 1024)

/* Whether a --response value is well formed: "test", "hello", "file:PATH" (not
 * read here) or "bytes:N" with N within the bounds. On failure returns false
 * and writes a message naming --response to err. */
bool responses_spec_valid(const char *spec, char *err, size_t err_len);

/* Builds the responses for a --response value. bytes:N's body is N bytes of
 * 16-byte lines, each its own offset in 15 hex digits and a newline
 * ("000000000000000\n000000000000010\n..."; the last one cut at N), so that a
 * byte lost, repeated or moved shows. On failure returns false and writes a
 * message naming the problem to err. */
bool responses_build(struct responses *r, const char *spec, char *err, size_t err_len);

/* Writes bytes:N's body (len bytes) into dst. */
void responses_fill_pattern(char *dst, size_t len);

/* The error response for a status the parser produced (400 for unknown ones). */
const struct prebuilt *responses_for_error(const struct responses *r, int status);

void responses_free(struct responses *r);

#endif

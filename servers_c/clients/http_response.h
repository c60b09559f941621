/* Reading one HTTP/1.x response to a GET, fed in pieces as they arrive.
 *
 * Why: idle_holder makes each connection one the server knows about by sending
 * one request and reading its whole response, so that the connection is idle
 * between requests when the hold starts (and a server that takes a connection
 * up only with its first request, or gives it a thread, holds it).
 *
 * Owns: the response head (up to HTTP_HEAD_MAX bytes). Promises: DONE once the
 * head and exactly Content-Length body bytes have been fed (the bytes fed
 * after it are reported as extra, not consumed); BAD for anything it cannot
 * read as a keep-alive response: not HTTP/1.x, a head over HTTP_HEAD_MAX, no
 * Content-Length (a body delimited by the close), a Transfer-Encoding, a 1xx
 * status. With allow_chunked set after init, a "Transfer-Encoding: chunked"
 * body is read to its last chunk and trailers instead (open_loop's servers
 * may send one). The status and whether the server said "Connection: close"
 * are the caller's to judge. Used by idle_holder and open_loop; tested by
 * tests/test_http_response.c. */
#ifndef ARCHBENCH_HTTP_RESPONSE_H
#define ARCHBENCH_HTTP_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 8192

enum http_progress {
    HTTP_MORE, /* everything fed was consumed; the response goes on */
    HTTP_DONE, /* complete; *used says how much of this piece it took */
    HTTP_BAD,  /* not a response it can read to its end; why: http_response.problem */
};

struct http_response {
    char head[HTTP_HEAD_MAX];
    size_t head_len;
    bool head_done;
    uint64_t body_left;
    int status; /* once the head is done */
    bool connection_close;
    const char *problem; /* with HTTP_BAD */
    bool allow_chunked;  /* the caller's choice, kept by init */
    bool chunked;
    int chunk_state; /* where in a chunked body (http_response.c) */
    uint64_t chunk_size;
    unsigned line_len; /* bytes of the chunk-size or trailer line seen */
};

/* Ready for a new response; allow_chunked is left as it was (false after a memset or static init). */
void http_response_init(struct http_response *r);

/* Feeds n bytes; *used is how many of them belong to this response. */
enum http_progress http_response_feed(struct http_response *r, const char *bytes, size_t n, size_t *used);

#endif

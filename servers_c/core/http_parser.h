/* Incremental, allocation-free HTTP/1.x request-head parser.
 *
 * The caller owns the bytes. It calls http_parse_request() each time more bytes
 * arrive, passing the same scan state; the parser resumes its search for the end
 * of the head where the previous call stopped, so a head that trickles in one
 * byte at a time costs O(n) in total, not O(n^2). Once the head is complete it
 * is validated and summarised in a struct http_request whose pointers point into
 * the caller's buffer. Bodies are framed (content_length) but not read here.
 */
#ifndef ARCHBENCH_HTTP_PARSER_H
#define ARCHBENCH_HTTP_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest request head (request line + headers + blank line) accepted; a longer
 * one is answered with 431. */
#define HTTP_MAX_HEAD_BYTES 8192

/* Largest request body accepted (consumed and discarded); larger: 413. */
#define HTTP_MAX_BODY_BYTES ((uint64_t)1 << 40)

enum http_parse_status {
    HTTP_PARSE_INCOMPLETE = 0, /* need more bytes */
    HTTP_PARSE_COMPLETE = 1,   /* req describes a complete head */
    HTTP_PARSE_ERROR = -1,     /* req->error_status says which response to send */
};

struct http_request {
    const char *method;
    size_t method_len;
    const char *target;
    size_t target_len;
    int minor_version; /* HTTP/1.minor */
    size_t head_bytes; /* bytes of the head, leading empty lines included */
    size_t header_count;
    uint64_t content_length;
    bool keep_alive;          /* after the version default and Connection tokens */
    bool is_head;             /* method HEAD: the response carries no body */
    int error_status;         /* 400, 413, 431, 501 or 505 when HTTP_PARSE_ERROR */
    const char *error_reason; /* static text for tests and diagnostics */
};

/* Where the search for the end of the head resumes. Zero it (or call
 * http_scan_reset) before the first byte of each request. */
struct http_scan {
    size_t scanned;
};

static inline void http_scan_reset(struct http_scan *scan) { scan->scanned = 0; }

/* Parses the head at the start of buf[0..len). */
enum http_parse_status http_parse_request(const char *buf, size_t len, struct http_scan *scan,
                                          struct http_request *req);

#endif

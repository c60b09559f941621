/* libFuzzer harness for the request-head parser (core/http_parser.c).
 *
 * Each input is parsed whole, then split in two at (every, or for long inputs
 * a spread of) split points with the scan state carried from the first call to
 * the second, and fed one byte at a time: every way must give the same answer
 * as the whole (the same status, and the same error status: a client's answer
 * must not depend on how its bytes were split). The first part of a split is parsed from its own buffer of
 * exactly that many bytes, so ASan catches any read past the bytes given.
 * Invariants checked on every answer: a complete head lies within the buffer,
 * its fields point into it and satisfy the limits; an error carries one of the
 * statuses the server answers; an incomplete head is below the size limit and
 * holds no NUL. A prefix that is already an error is the same error whole, a
 * prefix that is complete is the same head whole.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "fuzz_http_parser: invariant failed: %s: ", #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* An answer with its pointers turned into offsets, so answers over different
 * buffers compare. */
struct outcome {
    enum http_parse_status status;
    int error_status;
    size_t method_off, method_len, target_off, target_len, head_bytes, header_count;
    int minor_version;
    uint64_t content_length;
    bool keep_alive, is_head;
};

static struct outcome parse(const char *buf, size_t len, struct http_scan *scan)
{
    struct http_request req;
    enum http_parse_status st = http_parse_request(buf, len, scan, &req);
    struct outcome o;
    memset(&o, 0, sizeof o);
    o.status = st;
    if (st == HTTP_PARSE_ERROR) {
        CHECK(req.error_status == 400 || req.error_status == 413 || req.error_status == 431 ||
                  req.error_status == 501 || req.error_status == 505,
              "error status %d", req.error_status);
        CHECK(req.error_reason != NULL, "an error has a reason");
        o.error_status = req.error_status;
    } else if (st == HTTP_PARSE_COMPLETE) {
        CHECK(req.head_bytes > 0 && req.head_bytes <= len && req.head_bytes <= HTTP_MAX_HEAD_BYTES,
              "head_bytes %zu of %zu", req.head_bytes, len);
        CHECK(buf[req.head_bytes - 1] == '\n', "a head ends with a line feed");
        CHECK(req.method >= buf && req.method_len > 0 && req.method + req.method_len <= buf + req.head_bytes,
              "method inside the head");
        CHECK(req.target >= req.method + req.method_len && req.target_len > 0 &&
                  req.target + req.target_len <= buf + req.head_bytes,
              "target inside the head, after the method");
        CHECK(req.minor_version >= 0 && req.minor_version <= 9, "minor version %d", req.minor_version);
        CHECK(req.content_length <= HTTP_MAX_BODY_BYTES, "content length %llu", (unsigned long long)req.content_length);
        CHECK(req.is_head == (req.method_len == 4 && memcmp(req.method, "HEAD", 4) == 0), "is_head");
        CHECK(memchr(buf, '\0', req.head_bytes) == NULL, "no NUL in an accepted head");
        CHECK(req.error_status == 0, "no error status on success");
        o.method_off = (size_t)(req.method - buf);
        o.method_len = req.method_len;
        o.target_off = (size_t)(req.target - buf);
        o.target_len = req.target_len;
        o.head_bytes = req.head_bytes;
        o.header_count = req.header_count;
        o.minor_version = req.minor_version;
        o.content_length = req.content_length;
        o.keep_alive = req.keep_alive;
        o.is_head = req.is_head;
    } else {
        CHECK(st == HTTP_PARSE_INCOMPLETE, "status %d", (int)st);
        CHECK(len <= HTTP_MAX_HEAD_BYTES, "an incomplete head of %zu bytes is over the limit", len);
        CHECK(scan->scanned <= len, "scanned %zu of %zu", scan->scanned, len);
    }
    return o;
}

static void expect_same(const struct outcome *a, const struct outcome *b, const char *how, size_t at)
{
    CHECK(a->status == b->status, "%s at %zu: status %d, whole %d", how, at, (int)a->status, (int)b->status);
    CHECK(a->error_status == b->error_status, "%s at %zu: error %d, whole %d", how, at, a->error_status,
          b->error_status);
    CHECK(memcmp(a, b, sizeof *a) == 0, "%s at %zu: the request differs from the whole", how, at);
}

/* The whole input, parsed fresh; and as a prefix of k bytes (own buffer) then
 * continued over everything with the scan state carried. */
static void split_at(const char *buf, size_t len, size_t k, const struct outcome *whole)
{
    char *part = malloc(k > 0 ? k : 1);
    if (part == NULL)
        return;
    memcpy(part, buf, k);
    struct http_scan scan;
    http_scan_reset(&scan);
    struct outcome first = parse(part, k, &scan);
    free(part);
    if (first.status == HTTP_PARSE_ERROR) {
        /* More bytes never repair a head, nor change which error it is. */
        CHECK(whole->status == HTTP_PARSE_ERROR && whole->error_status == first.error_status,
              "prefix of %zu is error %d, the whole is status %d (error %d)", k, first.error_status, (int)whole->status,
              whole->error_status);
        return;
    }
    if (first.status == HTTP_PARSE_COMPLETE) {
        expect_same(&first, whole, "complete prefix", k);
        return;
    }
    struct outcome rest = parse(buf, len, &scan);
    expect_same(&rest, whole, "split", k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    struct http_scan scan;
    http_scan_reset(&scan);
    struct outcome whole = parse(buf, size, &scan);

    /* Parsing is idempotent: the same bytes with a fresh state, the same answer. */
    http_scan_reset(&scan);
    struct outcome again = parse(buf, size, &scan);
    expect_same(&again, &whole, "again", size);

    if (size <= 300) {
        for (size_t k = 0; k <= size; k++)
            split_at(buf, size, k, &whole);
    } else {
        /* A spread of points, and the bytes around every line feed (where the
         * end-of-head search resumes). */
        for (size_t i = 0; i <= 64; i++)
            split_at(buf, size, size * i / 64, &whole);
        size_t lf = 0;
        for (size_t i = 0; i < size && lf < 64; i++) {
            if (buf[i] != '\n')
                continue;
            lf++;
            for (size_t d = 0; d < 3; d++)
                if (i + d <= size)
                    split_at(buf, size, i + d, &whole);
        }
    }

    /* One byte at a time with the state carried: the first answer that is not
     * "incomplete" must be the whole's. */
    if (size <= 2048) {
        http_scan_reset(&scan);
        for (size_t k = 1; k <= size; k++) {
            struct outcome o = parse(buf, k, &scan);
            if (o.status == HTTP_PARSE_INCOMPLETE)
                continue;
            expect_same(&o, &whole, "byte by byte", k);
            break;
        }
    }
    return 0;
}

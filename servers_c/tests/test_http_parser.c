/* Table-driven tests of the request-head parser. Every case is fed whole, split
 * in two at every point, and one byte at a time with the scan state carried
 * over, and must give the same answer each way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_parser.h"

struct parse_case {
    const char *name;
    const char *input;
    int status; /* 1 complete, -1 error, 0 incomplete */
    int error_status;
    int minor_version;
    int keep_alive;
    int is_head;
    unsigned long long content_length;
    const char *method;
    const char *target;
    size_t head_bytes; /* 0: strlen(input) */
};

#define GET_11 "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

static const struct parse_case cases[] = {
    {"simple GET", GET_11, 1, 0, 1, 1, 0, 0, "GET", "/", 0},
    {"wrk request", "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", 1, 0, 1, 1, 0, 0, "GET", "/", 0},
    {"bare LF line endings", "GET /a HTTP/1.1\nHost: x\n\n", 1, 0, 1, 1, 0, 0, "GET", "/a", 0},
    {"leading empty lines", "\r\n\r\n" GET_11, 1, 0, 1, 1, 0, 0, "GET", "/", 0},
    {"HEAD", "HEAD /x HTTP/1.1\r\nHost: x\r\n\r\n", 1, 0, 1, 1, 1, 0, "HEAD", "/x", 0},
    {"close token", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 1, 0, 1, 0, 0, 0, "GET", "/", 0},
    {"close in a token list, any case", "GET / HTTP/1.1\r\nHost: x\r\nconnection: Upgrade, CLOSE\r\n\r\n", 1, 0, 1, 0,
     0, 0, "GET", "/", 0},
    {"HTTP/1.0 closes by default", "GET / HTTP/1.0\r\n\r\n", 1, 0, 0, 0, 0, 0, "GET", "/", 0},
    {"HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 1, 0, 0, 1, 0, 0, "GET", "/", 0},
    {"HTTP/1.0 needs no Host", "GET /h HTTP/1.0\r\nUser-Agent: t\r\n\r\n", 1, 0, 0, 0, 0, 0, "GET", "/h", 0},
    {"content length", "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 1, 0, 1, 1, 0, 5, "POST", "/p",
     sizeof("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n") - 1},
    {"repeated equal content length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 1,
     0, 1, 1, 0, 3, "POST", "/", 0},
    {"header value whitespace", "GET / HTTP/1.1\r\nHost:   x  \t\r\nX-Empty:\r\n\r\n", 1, 0, 1, 1, 0, 0, "GET", "/", 0},
    {"obs-text in value", "GET / HTTP/1.1\r\nHost: x\r\nX: caf\xc3\xa9\r\n\r\n", 1, 0, 1, 1, 0, 0, "GET", "/", 0},
    {"pipelined: first head only", GET_11 "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n", 1, 0, 1, 1, 0, 0, "GET", "/",
     sizeof(GET_11) - 1},
    {"HTTP/1.9 treated as 1.x", "GET / HTTP/1.9\r\nHost: x\r\n\r\n", 1, 0, 9, 1, 0, 0, "GET", "/", 0},

    {"incomplete head", "GET / HTTP/1.1\r\nHost: x\r\n", 0, 0, 0, 0, 0, 0, NULL, NULL, 0},
    {"incomplete request line", "GET / HTT", 0, 0, 0, 0, 0, 0, NULL, NULL, 0},

    {"lower-case version", "GET / http/1.1\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"no target", "GET  HTTP/1.1\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"missing version", "GET /\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"garbage line", "hello world\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"space before method", " GET / HTTP/1.1\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"NUL in request line", "GET /\0 HTTP/1.1\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"control char in target", "GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", -1, 505, 0, 0, 0, 0, NULL, NULL, 0},
    {"header without colon", "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"empty header name", "GET / HTTP/1.1\r\n: x\r\nHost: x\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"obsolete folding", "GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"NUL in header value", "GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"bare CR in header", "GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"missing Host in 1.1", "GET / HTTP/1.1\r\nUser-Agent: t\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL, 0},
    {"bad content length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12a\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL, NULL,
     0},
    {"negative content length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", -1, 400, 0, 0, 0, 0, NULL,
     NULL, 0},
    {"overflowing content length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", -1,
     400, 0, 0, 0, 0, NULL, NULL, 0},
    {"conflicting content length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -1,
     400, 0, 0, 0, 0, NULL, NULL, 0},
    {"huge content length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999\r\n\r\n", -1, 413, 0, 0, 0, 0,
     NULL, NULL, 0},
    {"chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", -1, 501, 0, 0, 0, 0, NULL, NULL, 0},
    {"chunked and length", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n", -1,
     400, 0, 0, 0, 0, NULL, NULL, 0},
};

static int failures;

#define CHECK(cond, ...)                           \
    do {                                           \
        if (!(cond)) {                             \
            failures++;                            \
            fprintf(stderr, "FAIL %s: ", c->name); \
            fprintf(stderr, __VA_ARGS__);          \
            fprintf(stderr, "\n");                 \
            return;                                \
        }                                          \
    } while (0)

static size_t case_length(const struct parse_case *c)
{
    /* Inputs with an embedded NUL: measure up to the final CRLFCRLF. */
    size_t n = strlen(c->input);
    if (strstr(c->name, "NUL") != NULL) {
        const char *p = c->input + n + 1;
        while (strstr(p, "\r\n\r\n") == NULL)
            p += strlen(p) + 1;
        n = (size_t)(strstr(p, "\r\n\r\n") + 4 - c->input);
    }
    return n;
}

static void check_result(const struct parse_case *c, int status, const struct http_request *req, size_t len,
                         const char *how)
{
    CHECK(status == c->status, "%s: status %d, expected %d (%s)", how, status, c->status,
          req->error_reason ? req->error_reason : "");
    if (status == HTTP_PARSE_ERROR) {
        CHECK(req->error_status == c->error_status, "%s: error %d, expected %d (%s)", how, req->error_status,
              c->error_status, req->error_reason);
        return;
    }
    if (status != HTTP_PARSE_COMPLETE)
        return;
    size_t head = c->head_bytes ? c->head_bytes : len;
    CHECK(req->head_bytes == head, "%s: head_bytes %zu, expected %zu", how, req->head_bytes, head);
    CHECK(req->minor_version == c->minor_version, "%s: minor %d", how, req->minor_version);
    CHECK(req->keep_alive == (c->keep_alive != 0), "%s: keep_alive %d", how, req->keep_alive);
    CHECK(req->is_head == (c->is_head != 0), "%s: is_head %d", how, req->is_head);
    CHECK(req->content_length == c->content_length, "%s: content_length %llu", how,
          (unsigned long long)req->content_length);
    CHECK(req->method_len == strlen(c->method) && memcmp(req->method, c->method, req->method_len) == 0,
          "%s: method '%.*s'", how, (int)req->method_len, req->method);
    CHECK(req->target_len == strlen(c->target) && memcmp(req->target, c->target, req->target_len) == 0,
          "%s: target '%.*s'", how, (int)req->target_len, req->target);
}

/* A private copy, so reading past the given length would be caught by ASan. */
static char *copy_prefix(const char *src, size_t len)
{
    char *dst = malloc(len ? len : 1);
    memcpy(dst, src, len);
    return dst;
}

static void run_case(const struct parse_case *c)
{
    size_t len = case_length(c);
    struct http_request req;
    struct http_scan scan = {0};

    char *whole = copy_prefix(c->input, len);
    int status = http_parse_request(whole, len, &scan, &req);
    check_result(c, status, &req, len, "whole");

    /* Two reads split at every point. */
    for (size_t split = 0; split <= len; split++) {
        struct http_scan s = {0};
        char *part = copy_prefix(c->input, split);
        int first = http_parse_request(part, split, &s, &req);
        free(part);
        if (first == HTTP_PARSE_ERROR) {
            CHECK(c->status == HTTP_PARSE_ERROR, "split at %zu: early error %d (%s)", split, req.error_status,
                  req.error_reason);
            CHECK(req.error_status == c->error_status, "split at %zu: early error %d", split, req.error_status);
            continue;
        }
        size_t head = c->head_bytes ? c->head_bytes : len;
        if (first == HTTP_PARSE_COMPLETE)
            CHECK(split >= head, "split at %zu: complete before the head ended", split);
        status = http_parse_request(whole, len, &s, &req);
        char how[64];
        snprintf(how, sizeof how, "split at %zu", split);
        check_result(c, status, &req, len, how);
    }

    /* One byte at a time, state carried over: the first non-incomplete answer counts. */
    struct http_scan s = {0};
    status = HTTP_PARSE_INCOMPLETE;
    size_t k = 0;
    while (status == HTTP_PARSE_INCOMPLETE && k < len) {
        k++;
        char *part = copy_prefix(c->input, k);
        status = http_parse_request(part, k, &s, &req);
        if (status == HTTP_PARSE_COMPLETE) {
            /* pointers must not outlive `part`: check the fields against a full parse */
            free(part);
            struct http_scan fresh = {0};
            status = http_parse_request(whole, len, &fresh, &req);
            break;
        }
        free(part);
    }
    check_result(c, status, &req, len, "byte at a time");
    free(whole);
}

static void run_oversize_cases(void)
{
    static const struct parse_case big = {"oversize head", NULL, -1, 431, 0, 0, 0, 0, NULL, NULL, 0};
    const struct parse_case *c = &big;
    size_t len = HTTP_MAX_HEAD_BYTES + 100;
    char *buf = malloc(len + 4);
    memcpy(buf, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ", 32);
    memset(buf + 32, 'a', len - 32);
    struct http_scan scan = {0};
    struct http_request req;
    int status = http_parse_request(buf, len, &scan, &req);
    CHECK(status == HTTP_PARSE_ERROR && req.error_status == 431, "incomplete: %d %d", status, req.error_status);
    memcpy(buf + len, "\r\n\r\n", 4);
    struct http_scan fresh = {0};
    status = http_parse_request(buf, len + 4, &fresh, &req);
    CHECK(status == HTTP_PARSE_ERROR && req.error_status == 431, "complete: %d %d", status, req.error_status);

    /* Exactly at the limit is accepted. */
    const char *prefix = "GET / HTTP/1.1\r\nHost: x\r\nX-Fill: ";
    size_t plen = strlen(prefix);
    memcpy(buf, prefix, plen);
    memset(buf + plen, 'b', HTTP_MAX_HEAD_BYTES - plen - 4);
    memcpy(buf + HTTP_MAX_HEAD_BYTES - 4, "\r\n\r\n", 4);
    struct http_scan at_limit = {0};
    status = http_parse_request(buf, HTTP_MAX_HEAD_BYTES, &at_limit, &req);
    CHECK(status == HTTP_PARSE_COMPLETE && req.head_bytes == HTTP_MAX_HEAD_BYTES, "at the limit: %d %zu", status,
          req.head_bytes);
    free(buf);
}

static void run_many_headers_case(void)
{
    static const struct parse_case many = {"10,000 headers", NULL, -1, 431, 0, 0, 0, 0, NULL, NULL, 0};
    const struct parse_case *c = &many;
    size_t cap = 16 + 10000 * 6 + 4;
    char *buf = malloc(cap);
    size_t len = (size_t)sprintf(buf, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 10000; i++)
        len += (size_t)sprintf(buf + len, "a: b\r\n");
    len += (size_t)sprintf(buf + len, "\r\n");
    struct http_scan scan = {0};
    struct http_request req;
    int status = http_parse_request(buf, len, &scan, &req);
    CHECK(status == HTTP_PARSE_ERROR && req.error_status == 431, "got %d %d", status, req.error_status);
    free(buf);
}

int main(void)
{
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++)
        run_case(&cases[i]);
    run_oversize_cases();
    run_many_headers_case();
    if (failures > 0) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("%zu parser cases passed (each whole, at every split point, byte by byte)\n", n + 2);
    return 0;
}

/* Tests of the connection state machine without sockets: feed bytes, collect
 * the queued output, compare. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_session.h"

static int failures;
static struct responses responses;

#define EXPECT(cond, ...)                                     \
    do {                                                      \
        if (!(cond)) {                                        \
            failures++;                                       \
            fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                     \
            fprintf(stderr, "\n");                            \
        }                                                     \
    } while (0)

/* Feeds `input` in chunks of `chunk` bytes, processing after each, and returns
 * everything the session queued (sent in pieces of `send_step` bytes). */
static char *run(struct http_session *s, const char *input, size_t len, size_t chunk, size_t send_step,
                 size_t *out_len)
{
    size_t cap = 1 << 20, used = 0;
    char *out = malloc(cap);
    size_t fed = 0;
    while (fed < len || http_session_has_output(s)) {
        if (fed < len) {
            size_t n = len - fed < chunk ? len - fed : chunk;
            fed += http_session_input_copy(s, input + fed, n);
        }
        for (;;) {
            bool progressed = http_session_process(s);
            while (http_session_has_output(s)) {
                struct iovec *iov;
                http_session_output(s, &iov);
                size_t n = iov[0].iov_len < send_step ? iov[0].iov_len : send_step;
                memcpy(out + used, iov[0].iov_base, n);
                used += n;
                http_session_output_sent(s, n);
            }
            if (!progressed || !http_session_has_pending_input(s))
                break;
        }
        if (s->closing)
            break;
    }
    *out_len = used;
    return out;
}

static size_t count(const char *hay, size_t len, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (size_t i = 0; i + k <= len; i++)
        if (memcmp(hay + i, needle, k) == 0)
            n++;
    return n;
}

static const char ok_keep[] =
    "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\ntest";
static const char ok_close[] =
    "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 4\r\nContent-Type: text/html\r\n\r\ntest";

static void test_byte_exact_response(void)
{
    EXPECT(responses.ok[1][0].len == sizeof ok_keep - 1 &&
               memcmp(responses.ok[1][0].bytes, ok_keep, sizeof ok_keep - 1) == 0,
           "keep-alive response differs from source 000");
    EXPECT(responses.ok[0][0].len == sizeof ok_close - 1 &&
               memcmp(responses.ok[0][0].bytes, ok_close, sizeof ok_close - 1) == 0,
           "close response differs");
}

static void test_pipelined_any_chunking(void)
{
    const char *req = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
    char input[4096] = "";
    for (int i = 0; i < 100; i++)
        strcat(input, req);
    size_t len = strlen(input);
    size_t chunks[] = {1, 2, 3, 7, 29, 30, 64, 1000, 4096};
    size_t steps[] = {1, 5, 4096};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
            struct http_session s;
            http_session_init(&s, &responses);
            size_t out_len;
            char *out = run(&s, input, len, chunks[i], steps[j], &out_len);
            EXPECT(out_len == 100 * (sizeof ok_keep - 1), "chunk %zu step %zu: %zu bytes", chunks[i],
                   steps[j], out_len);
            EXPECT(count(out, out_len, ok_keep) == 100, "chunk %zu: responses not whole", chunks[i]);
            EXPECT(s.counters.requests_served == 100, "served %llu",
                   (unsigned long long)s.counters.requests_served);
            free(out);
            http_session_destroy(&s);
        }
    }
}

static void test_backpressure_batches(void)
{
    /* More pipelined requests than the queue holds: processing pauses, nothing is lost. */
    struct http_session s;
    http_session_init(&s, &responses);
    const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t n = SESSION_MAX_QUEUED + 10;
    for (size_t i = 0; i < n; i++)
        http_session_input_copy(&s, req, strlen(req));
    http_session_process(&s);
    EXPECT(s.out_count == SESSION_MAX_QUEUED, "queued %zu", s.out_count);
    EXPECT(http_session_has_pending_input(&s), "input should remain");
    struct iovec *iov;
    int cnt = http_session_output(&s, &iov);
    size_t total = 0;
    for (int i = 0; i < cnt; i++)
        total += iov[i].iov_len;
    http_session_output_sent(&s, total);
    http_session_process(&s);
    EXPECT(s.out_count == 10, "second batch %zu", s.out_count);
    EXPECT(s.counters.requests_served == n, "served %llu", (unsigned long long)s.counters.requests_served);
    http_session_destroy(&s);
}

static void test_connection_close_stops(void)
{
    struct http_session s;
    http_session_init(&s, &responses);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(out_len == sizeof ok_close - 1 && memcmp(out, ok_close, out_len) == 0, "close response");
    EXPECT(http_session_done(&s), "session should be done");
    EXPECT(http_session_needs_linger(&s), "unread request: should linger");
    free(out);
    http_session_destroy(&s);
}

static void test_http10(void)
{
    struct http_session s;
    http_session_init(&s, &responses);
    const char *in = "GET / HTTP/1.0\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(out_len == sizeof ok_close - 1, "HTTP/1.0 gets the close response");
    EXPECT(http_session_done(&s), "HTTP/1.0 without keep-alive closes");
    free(out);
    http_session_destroy(&s);
}

static void test_body_is_skipped(void)
{
    struct http_session s;
    http_session_init(&s, &responses);
    const char *in = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789"
                     "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 3, 4096, &out_len);
    EXPECT(count(out, out_len, ok_keep) == 2 && out_len == 2 * (sizeof ok_keep - 1),
           "two responses, body not parsed as a request (%zu bytes)", out_len);
    free(out);
    http_session_destroy(&s);
}

static void test_bad_request_closes(void)
{
    struct http_session s;
    http_session_init(&s, &responses);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBROKEN\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(count(out, out_len, ok_keep) == 1, "first request answered");
    EXPECT(count(out, out_len, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n") == 1, "then 400");
    EXPECT(s.counters.bad_requests == 1 && s.counters.requests_served == 1, "counters");
    EXPECT(http_session_done(&s) && http_session_needs_linger(&s), "closes with linger");
    free(out);
    http_session_destroy(&s);
}

static void test_input_end_answers_what_arrived(void)
{
    struct http_session s;
    http_session_init(&s, &responses);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost:";
    http_session_input_copy(&s, in, strlen(in));
    http_session_end_input(&s);
    http_session_process(&s);
    EXPECT(s.out_count == 1, "the complete request is answered");
    EXPECT(s.closing, "a partial request after EOF closes");
    http_session_destroy(&s);
}

static void test_head_has_no_body(void)
{
    EXPECT(responses.ok[1][1].len == sizeof ok_keep - 1 - 4, "HEAD response omits the body");
}

int main(void)
{
    char err[256];
    if (!responses_build(&responses, "test", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    test_byte_exact_response();
    test_pipelined_any_chunking();
    test_backpressure_batches();
    test_connection_close_stops();
    test_http10();
    test_body_is_skipped();
    test_bad_request_closes();
    test_input_end_answers_what_arrived();
    test_head_has_no_body();
    responses_free(&responses);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("session tests passed\n");
    return 0;
}

/* Tests of the connection state machine without sockets, for both protocols:
 * feed bytes, collect the queued output, compare. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "session.h"

static struct responses responses;
static struct session_config http_config = {SESSION_HTTP, &responses, {0, 0}, NULL};
static struct session_config echo_config = {SESSION_ECHO, &responses, {0, 0}, NULL};

/* Feeds `input` in chunks of `chunk` bytes, processing after each, and returns
 * everything the session queued (sent in pieces of `send_step` bytes). */
static char *run(struct session *s, const char *input, size_t len, size_t chunk, size_t send_step, size_t *out_len)
{
    size_t cap = 1 << 20, used = 0;
    char *out = malloc(cap);
    size_t fed = 0;
    while (fed < len || session_has_output(s)) {
        if (fed < len) {
            size_t n = len - fed < chunk ? len - fed : chunk;
            fed += session_input_copy(s, input + fed, n);
        }
        for (;;) {
            bool progressed = session_process(s);
            while (session_has_output(s)) {
                struct iovec *iov;
                session_output(s, &iov);
                size_t n = iov[0].iov_len < send_step ? iov[0].iov_len : send_step;
                memcpy(out + used, iov[0].iov_base, n);
                used += n;
                session_output_sent(s, n);
            }
            if (!progressed || !session_has_pending_input(s))
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
            struct session s;
            session_init(&s, &http_config);
            size_t out_len;
            char *out = run(&s, input, len, chunks[i], steps[j], &out_len);
            EXPECT(out_len == 100 * (sizeof ok_keep - 1), "chunk %zu step %zu: %zu bytes", chunks[i], steps[j],
                   out_len);
            EXPECT(count(out, out_len, ok_keep) == 100, "chunk %zu: responses not whole", chunks[i]);
            EXPECT(s.counters.requests_served == 100, "served %llu", (unsigned long long)s.counters.requests_served);
            free(out);
            session_destroy(&s);
        }
    }
}

static void test_backpressure_batches(void)
{
    /* More pipelined requests than the queue holds: processing pauses, nothing is lost. */
    struct session s;
    session_init(&s, &http_config);
    const char *req = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t n = SESSION_MAX_QUEUED + 10;
    for (size_t i = 0; i < n; i++)
        session_input_copy(&s, req, strlen(req));
    session_process(&s);
    EXPECT(s.out_count == SESSION_MAX_QUEUED, "queued %zu", s.out_count);
    EXPECT(session_has_pending_input(&s), "input should remain");
    struct iovec *iov;
    int cnt = session_output(&s, &iov);
    size_t total = 0;
    for (int i = 0; i < cnt; i++)
        total += iov[i].iov_len;
    session_output_sent(&s, total);
    session_process(&s);
    EXPECT(s.out_count == 10, "second batch %zu", s.out_count);
    EXPECT(s.counters.requests_served == n, "served %llu", (unsigned long long)s.counters.requests_served);
    session_destroy(&s);
}

static void test_connection_close_stops(void)
{
    struct session s;
    session_init(&s, &http_config);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(out_len == sizeof ok_close - 1 && memcmp(out, ok_close, out_len) == 0, "close response");
    EXPECT(session_done(&s), "session should be done");
    EXPECT(session_needs_linger(&s), "unread request: should linger");
    free(out);
    session_destroy(&s);
}

static void test_http10(void)
{
    struct session s;
    session_init(&s, &http_config);
    const char *in = "GET / HTTP/1.0\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(out_len == sizeof ok_close - 1, "HTTP/1.0 gets the close response");
    EXPECT(session_done(&s), "HTTP/1.0 without keep-alive closes");
    free(out);
    session_destroy(&s);
}

static void test_body_is_skipped(void)
{
    struct session s;
    session_init(&s, &http_config);
    const char *in = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789"
                     "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 3, 4096, &out_len);
    EXPECT(count(out, out_len, ok_keep) == 2 && out_len == 2 * (sizeof ok_keep - 1),
           "two responses, body not parsed as a request (%zu bytes)", out_len);
    free(out);
    session_destroy(&s);
}

static void test_bad_request_closes(void)
{
    struct session s;
    session_init(&s, &http_config);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBROKEN\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(count(out, out_len, ok_keep) == 1, "first request answered");
    EXPECT(count(out, out_len, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n") == 1, "then 400");
    EXPECT(s.counters.bad_requests == 1 && s.counters.requests_served == 1, "counters");
    EXPECT(session_done(&s) && session_needs_linger(&s), "closes with linger");
    free(out);
    session_destroy(&s);
}

static void test_input_end_answers_what_arrived(void)
{
    struct session s;
    session_init(&s, &http_config);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost:";
    session_input_copy(&s, in, strlen(in));
    session_end_input(&s);
    session_process(&s);
    EXPECT(s.out_count == 1, "the complete request is answered");
    EXPECT(s.closing, "a partial request after EOF closes");
    session_destroy(&s);
}

static void test_head_has_no_body(void)
{
    EXPECT(responses.ok[1][1].len == sizeof ok_keep - 1 - 4, "HEAD response omits the body");
}

static void test_http_counts_no_echo(void)
{
    struct session s;
    session_init(&s, &http_config);
    const char *in = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    size_t out_len;
    char *out = run(&s, in, strlen(in), 4096, 4096, &out_len);
    EXPECT(s.counters.bytes_echoed == 0 && s.counters.echoes == 0, "http mode echoes nothing");
    EXPECT(session_has_answered(&s), "a response counts as an answer");
    free(out);
    session_destroy(&s);
}

/* ---- echo ---------------------------------------------------------------- */

static void fill_pattern(char *buf, size_t len)
{
    unsigned x = 12345;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (char)(x >> 16);
    }
}

static void test_echo_any_chunking(void)
{
    size_t len = 3 * SESSION_INPUT_BYTES + 777;
    char *input = malloc(len);
    fill_pattern(input, len);
    size_t chunks[] = {1, 7, 1000, SESSION_INPUT_BYTES, SESSION_INPUT_BYTES + 1, len};
    size_t steps[] = {1, 3, 4096, 1 << 20};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        for (size_t j = 0; j < sizeof steps / sizeof steps[0]; j++) {
            if (chunks[i] < 100 && steps[j] < 100 && len > 20000)
                continue; /* slow and adds nothing over the other pairs */
            struct session s;
            session_init(&s, &echo_config);
            size_t out_len;
            char *out = run(&s, input, len, chunks[i], steps[j], &out_len);
            EXPECT(out_len == len && memcmp(out, input, len) == 0, "chunk %zu step %zu: %zu of %zu bytes back",
                   chunks[i], steps[j], out_len, len);
            EXPECT(s.counters.bytes_echoed == len, "bytes_echoed %llu", (unsigned long long)s.counters.bytes_echoed);
            EXPECT(s.counters.requests_served == 0 && s.counters.bad_requests == 0, "echo serves no requests");
            free(out);
            session_destroy(&s);
        }
    }
    free(input);
}

static void test_echo_backpressure(void)
{
    /* While an echo is pending the session takes nothing more: the transport
     * stops reading and the io_uring overflow path keeps the rest. */
    struct session s;
    session_init(&s, &echo_config);
    size_t space;
    session_input_space(&s, &space);
    EXPECT(space == SESSION_INPUT_BYTES, "empty session offers the whole buffer (%zu)", space);
    EXPECT(session_input_copy(&s, "hello", 5) == 5, "takes the first bytes");
    EXPECT(session_process(&s), "queues the echo");
    EXPECT(session_has_answered(&s) && s.counters.echoes == 1, "an echo is an answer");
    session_input_space(&s, &space);
    EXPECT(space == 0, "no input space while the echo is pending (%zu)", space);
    EXPECT(session_input_copy(&s, "world", 5) == 0, "copy takes nothing while pending");
    EXPECT(!session_process(&s), "nothing new to process");
    struct iovec *iov;
    int n = session_output(&s, &iov);
    EXPECT(n == 1 && iov[0].iov_len == 5 && memcmp(iov[0].iov_base, "hello", 5) == 0, "one iovec, the bytes");
    EXPECT(iov[0].iov_base == s.in, "the echo points into the input buffer (no copy)");
    session_output_sent(&s, 2); /* short send */
    session_input_space(&s, &space);
    EXPECT(space == 0, "still none after a short send");
    n = session_output(&s, &iov);
    EXPECT(n == 1 && iov[0].iov_len == 3 && memcmp(iov[0].iov_base, "llo", 3) == 0, "short send resumed");
    session_output_sent(&s, 3);
    session_input_space(&s, &space);
    EXPECT(space == SESSION_INPUT_BYTES, "whole buffer again once sent (%zu)", space);
    EXPECT(s.counters.bytes_echoed == 5, "bytes_echoed counts sent bytes");
    EXPECT(!session_done(&s) && !s.closing, "open until EOF");
    session_destroy(&s);
}

static void test_echo_eof_after_output(void)
{
    struct session s;
    session_init(&s, &echo_config);
    session_input_copy(&s, "abc", 3);
    session_end_input(&s);
    session_process(&s);
    EXPECT(s.closing && !session_done(&s), "EOF: closing, but the echo is still to send");
    struct iovec *iov;
    EXPECT(session_output(&s, &iov) == 1 && iov[0].iov_len == 3, "the echo is queued");
    session_output_sent(&s, 3);
    EXPECT(session_done(&s), "done once everything went back");
    EXPECT(!session_needs_linger(&s), "nothing unread: plain close");
    session_destroy(&s);

    session_init(&s, &echo_config);
    session_end_input(&s);
    session_process(&s);
    EXPECT(session_done(&s) && !session_has_answered(&s), "EOF without bytes: done, never answered");
    session_destroy(&s);
}

static void test_echo_reset_keeps_proto(void)
{
    struct session s;
    session_init(&s, &echo_config);
    session_input_copy(&s, "xyz", 3);
    session_process(&s);
    session_reset(&s);
    EXPECT(s.proto == SESSION_ECHO && s.out_count == 0 && s.counters.echoes == 0, "reset keeps the protocol only");
    session_input_copy(&s, "q", 1);
    EXPECT(session_process(&s) && s.out_count == 1, "echoes after reset");
    session_destroy(&s);
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
    test_http_counts_no_echo();
    test_echo_any_chunking();
    test_echo_backpressure();
    test_echo_eof_after_output();
    test_echo_reset_keeps_proto();
    responses_free(&responses);
    return expect_report("session tests");
}

/* Tests of the pre-built responses (--response), bytes:N's above all: the
 * values accepted and refused, the bytes of every variant, and a session
 * serving the largest of them by reference, through partial sends. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "responses.h"
#include "session.h"

static void test_specs(void)
{
    static const struct {
        const char *spec;
        bool valid;
    } cases[] = {
        {"test", true},
        {"hello", true},
        {"file:/some/where.html", true}, /* only its form: the file is read when built */
        {"bytes:4", true},
        {"bytes:16384", true},
        {"bytes:1048576", true},
        {"bytes:0004", true},
        {"bytes:3", false},
        {"bytes:0", false},
        {"bytes:1048577", false},
        {"bytes:99999999999999999999999", false},
        {"bytes:", false},
        {"bytes:-4", false},
        {"bytes:+4", false},
        {"bytes: 4", false},
        {"bytes:4k", false},
        {"bytes:0x10", false},
        {"bytes", false},
        {"file:", false},
        {"", false},
        {"Test", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        bool valid = responses_spec_valid(cases[i].spec, err, sizeof err);
        EXPECT(valid == cases[i].valid, "'%s': %s", cases[i].spec, valid ? "accepted" : err);
        if (!cases[i].valid) {
            EXPECT(strstr(err, "--response") != NULL, "'%s': the message does not name the flag: %s", cases[i].spec,
                   err);
            struct responses r;
            EXPECT(!responses_build(&r, cases[i].spec, err, sizeof err), "'%s' was built", cases[i].spec);
        }
    }
}

/* The pattern, written out independently of responses_fill_pattern. */
static char *expected_body(size_t n)
{
    char *body = malloc(n + 16);
    char line[32];
    for (size_t offset = 0; offset < n; offset += 16) {
        snprintf(line, sizeof line, "%015zx\n", offset);
        memcpy(body + offset, line, 16);
    }
    return body;
}

static void test_bytes_bodies(void)
{
    static const size_t sizes[] = {4, 15, 16, 17, 100, 16384, 262144, 1048576};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        char spec[32], err[256];
        snprintf(spec, sizeof spec, "bytes:%zu", n);
        struct responses r;
        if (!responses_build(&r, spec, err, sizeof err)) {
            EXPECT(false, "%s: %s", spec, err);
            continue;
        }
        char *body = expected_body(n);
        for (int keep = 0; keep < 2; keep++) {
            for (int head = 0; head < 2; head++) {
                char expected_head[256];
                int head_len = snprintf(expected_head, sizeof expected_head,
                                        "HTTP/1.1 200 OK\r\nConnection: %s\r\nContent-Length: %zu\r\n"
                                        "Content-Type: text/plain\r\n\r\n",
                                        keep ? "keep-alive" : "close", n);
                const struct prebuilt *p = &r.ok[keep][head];
                size_t want = (size_t)head_len + (head ? 0 : n);
                EXPECT(p->len == want, "%s keep=%d head=%d: %zu bytes, expected %zu", spec, keep, head, p->len, want);
                EXPECT(p->len >= (size_t)head_len && memcmp(p->bytes, expected_head, (size_t)head_len) == 0,
                       "%s keep=%d head=%d: head differs", spec, keep, head);
                if (!head && p->len == want)
                    EXPECT(memcmp(p->bytes + head_len, body, n) == 0, "%s keep=%d: body differs from the pattern", spec,
                           keep);
            }
        }
        EXPECT(r.bad_request.len > 0 && memcmp(r.bad_request.bytes, "HTTP/1.1 400 ", 13) == 0,
               "%s: the error responses are built too", spec);
        free(body);
        responses_free(&r);
    }
}

/* 100 pipelined requests for 1 MiB responses, sent back in uneven pieces: every
 * byte arrives in order, every iovec points into the one pre-built response
 * (nothing copied per request), and at most SESSION_MAX_QUEUED are queued. */
static void test_session_serves_large_responses_by_reference(void)
{
    struct responses r;
    char err[256];
    if (!responses_build(&r, "bytes:1048576", err, sizeof err)) {
        EXPECT(false, "%s", err);
        return;
    }
    const struct prebuilt *ok = &r.ok[1][0];
    struct session_config config = {SESSION_HTTP, &r, {0, 0}, NULL};
    struct session s;
    session_init(&s, &config);
    static const char request[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    enum { REQUESTS = 100 };
    size_t stream_len = REQUESTS * (sizeof request - 1);
    char *stream = malloc(stream_len);
    for (size_t k = 0; k < REQUESTS; k++)
        memcpy(stream + k * (sizeof request - 1), request, sizeof request - 1);
    size_t fed = 0, sent_total = 0, most_queued = 0, step = 1;
    bool by_reference = true, in_order = true;
    while (fed < stream_len || session_has_output(&s)) {
        fed += session_input_copy(&s, stream + fed, stream_len - fed);
        session_process(&s);
        most_queued = s.out_count > most_queued ? s.out_count : most_queued;
        struct iovec *iov;
        int count = session_output(&s, &iov);
        if (count == 0)
            continue;
        for (int k = 0; k < count; k++) {
            const char *base = iov[k].iov_base;
            by_reference &= base >= ok->bytes && base + iov[k].iov_len == ok->bytes + ok->len;
        }
        /* a "send" of an uneven size, as the kernel takes it: 1 byte up to several responses */
        step = step * 7 % 3000017 + 1;
        size_t n = 0;
        for (int k = 0; k < count && n < step; k++) {
            size_t take = iov[k].iov_len < step - n ? iov[k].iov_len : step - n;
            size_t at = (sent_total + n) % ok->len;
            in_order &= memcmp(iov[k].iov_base, ok->bytes + at, take) == 0;
            n += take;
        }
        session_output_sent(&s, n);
        sent_total += n;
    }
    EXPECT(by_reference, "an iovec points outside the pre-built response");
    EXPECT(in_order, "bytes out of order");
    EXPECT(sent_total == REQUESTS * ok->len, "sent %zu bytes, expected %zu", sent_total, REQUESTS * ok->len);
    EXPECT(s.counters.requests_served == REQUESTS, "%llu requests served",
           (unsigned long long)s.counters.requests_served);
    EXPECT(most_queued <= SESSION_MAX_QUEUED && most_queued > 1, "at most %zu queued at once", most_queued);
    session_destroy(&s);
    free(stream);
    responses_free(&r);
}

int main(void)
{
    test_specs();
    test_bytes_bodies();
    test_session_serves_large_responses_by_reference();
    return expect_report("response tests");
}

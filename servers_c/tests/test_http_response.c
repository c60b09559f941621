/* Tests of the clients' reader of one HTTP/1.x response: a response fed whole,
 * byte by byte and with bytes after it; what it refuses (and why); the status
 * and "Connection: close" it reports; chunked bodies when allowed (open_loop)
 * and several responses in one piece. */
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "http_response.h"

static struct http_response r;

/* Feeds the text in pieces of `step` bytes; the last progress, and the bytes used in all. */
static enum http_progress feed(const char *text, size_t step, size_t *used_total)
{
    http_response_init(&r);
    size_t len = strlen(text), at = 0;
    enum http_progress p = HTTP_MORE;
    *used_total = 0;
    while (at < len && p == HTTP_MORE) {
        size_t n = len - at < step ? len - at : step, used;
        p = http_response_feed(&r, text + at, n, &used);
        *used_total += used;
        at += n;
    }
    return p;
}

static const char ok[] = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 5\r\n"
                         "Content-Type: text/plain\r\n\r\nhello";

static void test_whole_and_split(void)
{
    size_t used;
    for (size_t step = 1; step <= sizeof ok; step++) {
        EXPECT(feed(ok, step, &used) == HTTP_DONE, "step %zu: not done", step);
        EXPECT(used == strlen(ok), "step %zu: used %zu of %zu", step, used, strlen(ok));
        EXPECT(r.status == 200 && !r.connection_close, "step %zu: status %d close %d", step, r.status,
               r.connection_close);
    }
    EXPECT(feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", 1000, &used) == HTTP_MORE, "a partial body");
}

static void test_extra_bytes_are_not_used(void)
{
    char text[512];
    snprintf(text, sizeof text, "%sHTTP/1.1", ok);
    size_t used;
    EXPECT(feed(text, sizeof text, &used) == HTTP_DONE && used == strlen(ok), "used %zu, want %zu", used, strlen(ok));
}

static void test_what_it_reports(void)
{
    size_t used;
    EXPECT(feed("HTTP/1.0 404 Not Found\r\ncontent-length: 0\r\n\r\n", 7, &used) == HTTP_DONE && r.status == 404,
           "a 404 with an empty body: status %d", r.status);
    EXPECT(feed("HTTP/1.1 200 OK\r\nCONNECTION: Upgrade, Close\r\nContent-Length: 0\r\n\r\n", 3, &used) == HTTP_DONE &&
               r.connection_close,
           "Connection: close among other tokens");
    EXPECT(feed("HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n", 64, &used) == HTTP_DONE &&
               !r.connection_close,
           "'closed' is not the close token");
    EXPECT(feed("HTTP/1.1 304 Not Modified\r\n\r\n", 64, &used) == HTTP_DONE, "304 has no body");
}

static void test_refusals(void)
{
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "not an HTTP/1.x status line"},
        {"HTTP/2 200\r\n\r\n", "not an HTTP/1.x status line"},
        {"HTTP/1.1 100 Continue\r\n\r\n", "an interim (1xx) response"},
        {"HTTP/1.1 200 OK\r\n\r\n", "no Content-Length (a body that ends with the connection)"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
         "a Transfer-Encoding (only Content-Length bodies "
         "are read)"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\n", "an invalid Content-Length"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "an invalid Content-Length"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n", "a Content-Length too large"},
        {"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "a header line without a colon"},
    };
    size_t used;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum http_progress p = feed(bad[i].text, 5, &used);
        EXPECT(p == HTTP_BAD && r.problem != NULL && strcmp(r.problem, bad[i].why) == 0, "case %zu: %d, %s", i, p,
               r.problem ? r.problem : "(none)");
    }
    static char huge[HTTP_HEAD_MAX + 64];
    memset(huge, 'a', sizeof huge - 1);
    memcpy(huge, "HTTP/1.1 200 OK\r\nX: ", 20);
    EXPECT(feed(huge, 1000, &used) == HTTP_BAD && strcmp(r.problem, "a response head over 8192 bytes") == 0,
           "a head that never ends");
}

static const char chunked[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n";

static void test_chunked_when_allowed(void)
{
    size_t used;
    r.allow_chunked = true;
    for (size_t step = 1; step <= sizeof chunked; step++) {
        EXPECT(feed(chunked, step, &used) == HTTP_DONE && used == strlen(chunked), "step %zu: used %zu of %zu", step,
               used, strlen(chunked));
    }
    EXPECT(feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nHTTP", 64, &used) == HTTP_DONE &&
               used == strlen("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
           "an empty chunked body, then the next response's bytes unused");
    EXPECT(feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 64, &used) == HTTP_MORE,
           "a partial chunk");
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "a Transfer-Encoding other than chunked"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
         "both Content-Length and Transfer-Encoding"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "a chunk-size line without a hex size"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n", "chunk data not followed by CRLF"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n", "a chunk size too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum http_progress p = feed(bad[i].text, 3, &used);
        EXPECT(p == HTTP_BAD && r.problem != NULL && strcmp(r.problem, bad[i].why) == 0, "case %zu: %d, %s", i, p,
               r.problem ? r.problem : "(none)");
    }
    r.allow_chunked = false;
}

/* Three responses (Content-Length, chunked, no body) in one piece, read one after another as open_loop does. */
static void test_several_in_one_piece(void)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%sHTTP/1.1 204 No Content\r\n\r\n", ok, chunked);
    size_t at = 0, len = strlen(text), done = 0;
    http_response_init(&r);
    r.allow_chunked = true;
    while (at < len) {
        size_t used;
        enum http_progress p = http_response_feed(&r, text + at, len - at, &used);
        at += used;
        if (p != HTTP_DONE)
            break;
        done++;
        http_response_init(&r);
    }
    EXPECT(done == 3 && at == len, "%zu responses, %zu of %zu bytes", done, at, len);
    r.allow_chunked = false;
}

int main(void)
{
    test_chunked_when_allowed();
    test_several_in_one_piece();
    test_whole_and_split();
    test_extra_bytes_are_not_used();
    test_what_it_reports();
    test_refusals();
    return expect_report("http_response");
}

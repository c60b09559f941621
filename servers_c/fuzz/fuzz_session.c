/* libFuzzer harness for the session paths (core/session.c) of both protocols,
 * as the transports drive them: input arrives in random chunks (as much as
 * the session offers room for), the session processes it, and its output is
 * sent in random pieces, often partially, before more is read.
 *
 * Input: byte 0 picks the protocol (bit 0: echo), whether the peer ends its
 * input after the last byte (bit 1); bytes 1-4 seed the chunk and send sizes;
 * the rest is the byte stream. Invariants:
 *   - every queued iovec is a pre-built response (http; the first one may be
 *     the unsent tail of one) or points into the session's own input (echo);
 *   - the bytes sent so far are whole pre-built responses, an error response
 *     only last, no more 200s than complete heads the input could hold, and
 *     the counters agree with what was sent;
 *   - echo: the bytes sent are exactly a prefix of the bytes received, and
 *     all of them once everything was processed;
 *   - the output does not depend on how the input was chunked or the output
 *     sent: a run with one big chunk and whole sends gives the same bytes;
 *   - the buffer bookkeeping stays within bounds, the session ends when the
 *     input has ended, and the timeout bookkeeping keeps a head's deadline
 *     until that head completes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_timer.h"
#include "responses.h"
#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "fuzz_session: invariant failed: %s: ", #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            abort();                                                        \
        }                                                                   \
    } while (0)

/* "A / HTTP/1.0\n\n": the shortest head the parser accepts. */
#define MIN_HEAD_BYTES 14

static struct responses responses;
static const struct prebuilt *all_responses[10];
static size_t n_responses;

static void init_once(void)
{
    if (n_responses > 0)
        return;
    char err[256];
    if (!responses_build(&responses, "test", err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    const struct prebuilt *list[] = {&responses.ok[0][0],          &responses.ok[0][1],
                                     &responses.ok[1][0],          &responses.ok[1][1],
                                     &responses.bad_request,       &responses.request_timeout,
                                     &responses.payload_too_large, &responses.header_too_large,
                                     &responses.not_implemented,   &responses.version_not_supported};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        all_responses[n_responses++] = list[i];
}

static bool is_ok_response(const struct prebuilt *p)
{
    return p == &responses.ok[0][0] || p == &responses.ok[0][1] || p == &responses.ok[1][0] || p == &responses.ok[1][1];
}

/* The pre-built response an iovec belongs to: whole, or (first) its tail. */
static const struct prebuilt *owner_of(const struct iovec *v, bool may_be_tail)
{
    for (size_t i = 0; i < n_responses; i++) {
        const struct prebuilt *p = all_responses[i];
        const char *base = v->iov_base;
        if (base == p->bytes && v->iov_len == p->len)
            return p;
        if (may_be_tail && base > p->bytes && base < p->bytes + p->len && base + v->iov_len == p->bytes + p->len)
            return p;
    }
    return NULL;
}

/* memcmp, which must not see NULL even for 0 bytes */
static bool same_bytes(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }

struct rng {
    uint32_t x;
};

static uint32_t next(struct rng *r)
{
    r->x ^= r->x << 13;
    r->x ^= r->x >> 17;
    r->x ^= r->x << 5;
    return r->x;
}

/* Mostly small sizes, sometimes large ones. */
static size_t pick_size(struct rng *r)
{
    uint32_t v = next(r);
    switch (v & 3) {
    case 0: return 1 + (v >> 8) % 4;
    case 1: return 1 + (v >> 8) % 64;
    case 2: return 1 + (v >> 8) % 2048;
    default: return 1 + (v >> 8) % (2 * SESSION_INPUT_BYTES);
    }
}

struct run {
    char *out;
    size_t out_len, out_cap;
    size_t fed;
    size_t ok_sent;    /* whole 200 responses sent */
    size_t error_sent; /* whole error responses sent */
    bool done;
    struct session_counters counters;
};

static void append(struct run *r, const void *bytes, size_t n)
{
    if (r->out_len + n > r->out_cap) {
        size_t cap = r->out_cap ? r->out_cap : 4096;
        while (cap < r->out_len + n)
            cap *= 2;
        char *grown = realloc(r->out, cap);
        CHECK(grown != NULL, "out of memory");
        r->out = grown;
        r->out_cap = cap;
    }
    memcpy(r->out + r->out_len, bytes, n);
    r->out_len += n;
}

static void check_queue(struct session *s)
{
    CHECK(s->in_start <= s->in_len && s->in_len <= SESSION_INPUT_BYTES, "in_start %zu in_len %zu", s->in_start,
          s->in_len);
    CHECK(s->out_count <= SESSION_MAX_QUEUED && s->out_first + s->out_count <= SESSION_MAX_QUEUED, "queue %zu+%zu",
          s->out_first, s->out_count);
    struct iovec *iov;
    int n = session_output(s, &iov);
    for (int i = 0; i < n; i++) {
        CHECK(iov[i].iov_len > 0, "an empty iovec");
        if (s->proto == SESSION_ECHO) {
            CHECK(n == 1, "echo queues one iovec, not %d", n);
            CHECK((char *)iov[i].iov_base >= s->in && (char *)iov[i].iov_base + iov[i].iov_len <= s->in + s->in_len,
                  "the echo points into the input buffer");
        } else {
            CHECK(owner_of(&iov[i], i == 0) != NULL, "iovec %d of %d is not a pre-built response", i, n);
        }
    }
}

/* Sends up to `budget` bytes of the queued output (0: all of it). */
static void send_some(struct session *s, struct run *r, size_t budget)
{
    while (session_has_output(s)) {
        struct iovec *iov;
        session_output(s, &iov);
        size_t n = iov[0].iov_len;
        if (budget > 0 && n > budget)
            n = budget;
        if (s->proto == SESSION_HTTP && n == iov[0].iov_len) {
            const struct prebuilt *p = owner_of(&iov[0], true);
            if (p != NULL && (char *)iov[0].iov_base + n == p->bytes + p->len) {
                if (is_ok_response(p))
                    r->ok_sent++;
                else
                    r->error_sent++;
            }
        }
        append(r, iov[0].iov_base, n);
        session_output_sent(s, n);
        if (budget > 0) {
            budget -= n;
            if (budget == 0)
                return;
        }
    }
}

static void drive(const struct session_config *cfg, const char *in, size_t len, bool end_input, uint32_t seed,
                  bool chunked, struct run *r)
{
    struct session s;
    CHECK(session_init(&s, cfg), "session_init");
    memset(r, 0, sizeof *r);
    struct rng rng = {seed | 1};
    bool ended = false;
    struct timeout_state timer = {0};
    uint64_t clock_ms = 1000;
    for (size_t iteration = 0;; iteration++) {
        CHECK(iteration < 64 * len + 10000, "no end after %zu iterations", iteration);
        bool moved = false;
        size_t space;
        char *dst = session_input_space(&s, &space);
        if (r->fed < len && space > 0) {
            size_t n = chunked ? pick_size(&rng) : len;
            if (n > len - r->fed)
                n = len - r->fed;
            if (n > space)
                n = space;
            memcpy(dst, in + r->fed, n);
            session_input_commit(&s, n);
            r->fed += n;
            moved = true;
        } else if (r->fed == len && end_input && !ended) {
            session_end_input(&s);
            ended = true;
            moved = true;
        }
        /* Answer as conn_io does: process and send until nothing more comes of it. */
        for (;;) {
            bool progressed = session_process(&s);
            check_queue(&s);
            size_t queued_before = s.out_count;
            send_some(&s, r, chunked ? pick_size(&rng) : 0);
            moved |= progressed || s.out_count != queued_before || session_has_output(&s);
            if (!progressed || !session_has_pending_input(&s))
                break;
        }
        /* The timeout bookkeeping, on a clock that advances each round. */
        clock_ms += 1 + next(&rng) % 3;
        struct timeout_state before = timer;
        struct session_timeouts t = {2000, 5000};
        timeout_state_update(&timer, &t, &s, clock_ms);
        if (before.kind == TIMEOUT_HEAD && timer.kind == TIMEOUT_HEAD && before.generation == timer.generation)
            CHECK(timer.deadline_ms == before.deadline_ms, "a head's deadline moved while it was incomplete");
        if (timer.kind == TIMEOUT_HEAD)
            CHECK(cfg->proto == SESSION_HTTP && timer.deadline_ms <= clock_ms + t.header_ms, "head deadline");
        if (session_done(&s)) {
            r->done = true;
            break;
        }
        if (!moved) {
            if (!session_has_output(&s))
                break;
            send_some(&s, r, 0); /* never leave output stuck */
        }
    }
    send_some(&s, r, 0);
    r->counters = s.counters;
    session_destroy(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init_once();
    if (size < 5)
        return 0;
    bool echo = data[0] & 1;
    bool end_input = data[0] & 2;
    uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
    const char *in = (const char *)data + 5;
    size_t len = size - 5;
    struct session_config cfg = {echo ? SESSION_ECHO : SESSION_HTTP, &responses, {2000, 5000}, NULL};

    struct run whole, chunked;
    drive(&cfg, in, len, end_input, seed, false, &whole);
    drive(&cfg, in, len, end_input, seed, true, &chunked);

    CHECK(chunked.out_len == whole.out_len && same_bytes(chunked.out, whole.out, whole.out_len),
          "output depends on chunking: %zu vs %zu bytes", chunked.out_len, whole.out_len);
    CHECK(chunked.done == whole.done, "done %d vs %d", chunked.done, whole.done);
    if (end_input)
        CHECK(whole.done && chunked.done, "the session ends once the input has ended");

    struct run *runs[] = {&whole, &chunked};
    for (int i = 0; i < 2; i++) {
        struct run *r = runs[i];
        if (echo) {
            CHECK(r->out_len <= r->fed && same_bytes(r->out, in, r->out_len), "echo is not a prefix of the input");
            CHECK(r->out_len == r->fed, "echo: %zu of %zu received bytes sent back", r->out_len, r->fed);
            CHECK(r->counters.bytes_echoed == r->out_len, "bytes_echoed %llu, sent %zu",
                  (unsigned long long)r->counters.bytes_echoed, r->out_len);
            CHECK(r->counters.requests_served == 0 && r->counters.bad_requests == 0, "echo counts no requests");
        } else {
            CHECK(r->error_sent <= 1, "%zu error responses", r->error_sent);
            CHECK(r->ok_sent * MIN_HEAD_BYTES <= r->fed, "%zu responses for %zu bytes of input", r->ok_sent, r->fed);
            CHECK(r->counters.requests_served == r->ok_sent, "requests_served %llu, 200s sent %zu",
                  (unsigned long long)r->counters.requests_served, r->ok_sent);
            CHECK(r->counters.bad_requests == r->error_sent, "bad_requests %llu, errors sent %zu",
                  (unsigned long long)r->counters.bad_requests, r->error_sent);
            /* The bytes are whole responses, the error (if any) last. */
            size_t pos = 0, seen = 0;
            bool error_seen = false;
            while (pos < r->out_len) {
                const struct prebuilt *match = NULL;
                /* The longest that matches: a HEAD response is a prefix of the GET
                 * one, but its body never reads like the next status line. */
                for (size_t k = 0; k < n_responses; k++) {
                    const struct prebuilt *p = all_responses[k];
                    if (pos + p->len <= r->out_len && memcmp(r->out + pos, p->bytes, p->len) == 0 &&
                        (match == NULL || p->len > match->len))
                        match = p;
                }
                CHECK(match != NULL, "output at %zu is no pre-built response", pos);
                CHECK(!error_seen, "a response after an error response");
                error_seen = !is_ok_response(match);
                pos += match->len;
                seen++;
            }
            CHECK(seen == r->ok_sent + r->error_sent, "%zu responses in the bytes, %zu counted", seen,
                  r->ok_sent + r->error_sent);
        }
        free(r->out);
    }
    return 0;
}

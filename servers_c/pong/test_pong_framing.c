/* pong's terminator scanner: the count of a stream must not depend on how it
 * was split into reads (every two-way split, byte by byte, random splits),
 * against a plain left-to-right reference scan. */
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "pong_framing.h"

#define REQUEST "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

struct framing_case {
    const char *stream;
    size_t requests;
};

static const struct framing_case cases[] = {
    {"", 0},
    {"\r\n\r\n", 1},
    {REQUEST, 1},
    {REQUEST REQUEST REQUEST, 3},
    {"GET / HTTP/1.1\r\nHost: x\r\n", 0}, /* a head not yet ended */
    {"\r\n\r\r\n\r\n", 1},                /* a false start, then one */
    {"\r\r\n\r\n", 1},                    /* "\r\r": the second begins it */
    {"\n\r\n\r\n", 1},
    {"\r\n\r\n\r\n\r\n", 2}, /* non-overlapping */
    {"\r\n\r\n\r\n", 1},
    {"a\r\nb\r\n\rc\r\n\r\n", 1},
    {"\r\n\rX\r\n\r\n\r\n\r", 1},
};

/* The reference: scan the whole stream at once, left to right, without overlaps. */
static size_t reference_count(const char *data, size_t len)
{
    size_t count = 0;
    for (size_t i = 0; i + 4 <= len;) {
        if (memcmp(data + i, "\r\n\r\n", 4) == 0) {
            count++;
            i += 4;
        } else {
            i++;
        }
    }
    return count;
}

/* Feeds `len` bytes in pieces whose lengths come from `piece(i)`. */
static size_t count_in_pieces(const char *data, size_t len, size_t (*piece)(size_t i, void *arg), void *arg)
{
    struct pong_framing framing = {0};
    size_t count = 0;
    for (size_t pos = 0, i = 0; pos < len; i++) {
        size_t n = piece(i, arg);
        if (n > len - pos)
            n = len - pos;
        count += pong_count_requests(&framing, data + pos, n);
        pos += n;
    }
    return count;
}

static size_t one_byte(size_t i, void *arg)
{
    (void)i;
    (void)arg;
    return 1;
}

static size_t split_at(size_t i, void *arg)
{
    size_t at = *(size_t *)arg;
    return i == 0 ? at : (size_t)-1;
}

static size_t random_piece(size_t i, void *arg)
{
    (void)i;
    return 1 + (size_t)rand_r(arg) % 9;
}

static void test_table(void)
{
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *s = cases[c].stream;
        size_t len = strlen(s);
        EXPECT(reference_count(s, len) == cases[c].requests, "case %zu: the reference disagrees", c);
        struct pong_framing whole = {0};
        EXPECT(pong_count_requests(&whole, s, len) == cases[c].requests, "case %zu in one read", c);
        EXPECT(count_in_pieces(s, len, one_byte, NULL) == cases[c].requests, "case %zu byte by byte", c);
        for (size_t at = 1; at < len; at++)
            EXPECT(count_in_pieces(s, len, split_at, &at) == cases[c].requests, "case %zu split at %zu", c, at);
    }
}

static void test_empty_reads_keep_the_state(void)
{
    struct pong_framing framing = {0};
    size_t count = pong_count_requests(&framing, "GET / HTTP/1.1\r\n\r", 17);
    count += pong_count_requests(&framing, "", 0);
    count += pong_count_requests(&framing, "\n", 1);
    EXPECT(count == 1 && framing.matched == 0, "an empty read lost the carried state (count %zu)", count);
}

/* A long stream of requests, CRLF noise and false starts, split at random. */
static void test_random_splits(void)
{
    static const char *const parts[] = {REQUEST, "\r", "\n", "\r\n", "\r\n\r", "x", "\r\n\r\n"};
    enum { STREAM = 20000 };
    char *stream = malloc(STREAM + sizeof REQUEST); /* room for the last part past STREAM */
    unsigned seed = 8005;
    size_t len = 0;
    while (len < STREAM) {
        const char *p = parts[(size_t)rand_r(&seed) % (sizeof parts / sizeof parts[0])];
        memcpy(stream + len, p, strlen(p));
        len += strlen(p);
    }
    size_t expected = reference_count(stream, len);
    for (int round = 0; round < 50; round++)
        EXPECT(count_in_pieces(stream, len, random_piece, &seed) == expected, "round %d", round);
    free(stream);
}

int main(void)
{
    test_table();
    test_empty_reads_keep_the_state();
    test_random_splits();
    return expect_report("pong_framing");
}

/* Table-driven tests of the latency histogram: known values in, known
 * percentiles out; then the bucket layout's invariants over every bucket. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "expect.h"

struct expected_percentile {
    double percentile;
    uint64_t value;
};

struct histogram_case {
    const char *name;
    void (*fill)(struct histogram *h);
    uint64_t count, min, max;
    double mean;
    struct expected_percentile p[8];
};

static void one_to_hundred(struct histogram *h)
{
    for (uint64_t v = 1; v <= 100; v++)
        histogram_record(h, v);
}

static void one_to_thousand(struct histogram *h)
{
    for (uint64_t v = 1000; v >= 1; v--) /* order does not matter */
        histogram_record(h, v);
}

/* 990 echoes of 100 us and 10 of 1 s: the tail must not vanish. */
static void fast_and_stalled(struct histogram *h)
{
    for (int i = 0; i < 990; i++)
        histogram_record(h, 100000);
    for (int i = 0; i < 10; i++)
        histogram_record(h, 1000000000);
}

static void single(struct histogram *h) { histogram_record(h, 123456789); }

static void with_zero(struct histogram *h)
{
    histogram_record(h, 0);
    histogram_record(h, 0);
    histogram_record(h, 64);
    histogram_record(h, 128);
}

static const struct histogram_case cases[] = {
    /* below 128 every value has its own bucket: percentiles are exact */
    {"1..100",
     one_to_hundred,
     100,
     1,
     100,
     50.5,
     {{0, 1}, {50, 50}, {90, 90}, {99, 99}, {99.9, 100}, {99.99, 100}, {100, 100}, {-1, 0}}},
    /* 500 is in [256, 512), buckets 4 wide: [500, 503]; 900 in [896, 903]; ... */
    {"1..1000",
     one_to_thousand,
     1000,
     1,
     1000,
     500.5,
     {{0, 1}, {50, 503}, {90, 903}, {99, 991}, {99.9, 999}, {99.99, 1000}, {100, 1000}, {-1, 0}}},
    /* 100,000 is in [99,328, 100,351]; 1e9 in [998,244,352, 1,006,632,959], capped at the max */
    {"990 x 100us + 10 x 1s",
     fast_and_stalled,
     1000,
     100000,
     1000000000,
     10099000.0,
     {{50, 100351}, {90, 100351}, {99, 100351}, {99.9, 1000000000}, {99.99, 1000000000}, {100, 1000000000}, {-1, 0}}},
    {"one value",
     single,
     1,
     123456789,
     123456789,
     123456789.0,
     {{0, 123456789}, {50, 123456789}, {100, 123456789}, {-1, 0}}},
    /* rank ceil(50% of 4) = 2: the second 0 */
    {"zeros", with_zero, 4, 0, 128, 48.0, {{25, 0}, {50, 0}, {75, 64}, {100, 128}, {-1, 0}}},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct histogram_case *c = &cases[i];
        struct histogram *h = malloc(sizeof *h);
        histogram_init(h);
        c->fill(h);
        EXPECT(h->count == c->count, "%s: count %llu", c->name, (unsigned long long)h->count);
        EXPECT(h->min == c->min && h->max == c->max, "%s: min %llu max %llu", c->name, (unsigned long long)h->min,
               (unsigned long long)h->max);
        EXPECT(fabs(histogram_mean(h) - c->mean) < 1e-6 * c->mean + 1e-9, "%s: mean %f", c->name, histogram_mean(h));
        for (const struct expected_percentile *p = c->p; p->percentile >= 0; p++) {
            uint64_t got = histogram_percentile(h, p->percentile);
            EXPECT(got == p->value, "%s: p%g = %llu, expected %llu", c->name, p->percentile, (unsigned long long)got,
                   (unsigned long long)p->value);
        }
        free(h);
    }
}

static void test_empty_and_saturated(void)
{
    struct histogram *h = malloc(sizeof *h);
    histogram_init(h);
    EXPECT(histogram_percentile(h, 50) == 0 && histogram_mean(h) == 0.0, "empty histogram reads 0");
    uint64_t huge = (uint64_t)1 << 50;
    histogram_record(h, 10);
    histogram_record(h, (uint64_t)1 << HISTOGRAM_MAX_BITS);
    histogram_record(h, huge);
    EXPECT(h->saturated == 2, "saturated %llu", (unsigned long long)h->saturated);
    EXPECT(histogram_percentile(h, 100) == huge, "p100 is the exact max");
    EXPECT(histogram_percentile(h, 60) == huge, "saturated values sort last, capped at the max");
    EXPECT(histogram_percentile(h, 30) == 10, "p30");
    free(h);
}

static void test_merge(void)
{
    struct histogram *a = malloc(sizeof *a), *b = malloc(sizeof *b), *all = malloc(sizeof *all);
    histogram_init(a);
    histogram_init(b);
    histogram_init(all);
    unsigned x = 7;
    for (int i = 0; i < 100000; i++) {
        x = x * 1103515245u + 12345u;
        uint64_t v = (uint64_t)(x >> 8) * ((i % 7) + 1);
        histogram_record(i % 2 ? a : b, v);
        histogram_record(all, v);
    }
    histogram_merge(a, b);
    EXPECT(a->count == all->count && a->min == all->min && a->max == all->max, "merged totals");
    EXPECT(memcmp(a->counts, all->counts, sizeof a->counts) == 0, "merged buckets");
    double ps[] = {50, 90, 99, 99.9, 99.99};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        EXPECT(histogram_percentile(a, ps[i]) == histogram_percentile(all, ps[i]), "merged p%g", ps[i]);
    free(a);
    free(b);
    free(all);
}

static void test_bucket_layout(void)
{
    /* Buckets tile [0, 2^MAX_BITS) without gaps, each at most 1/64 of its
     * lower bound wide, and every value maps into the bucket that holds it. */
    for (size_t i = 0; i + 1 < HISTOGRAM_BUCKETS; i++) {
        uint64_t low = histogram_bucket_low(i), high = histogram_bucket_high(i);
        EXPECT(histogram_bucket_low(i + 1) == high + 1, "gap after bucket %zu", i);
        EXPECT(high - low + 1 <= (low / 64 > 1 ? low / 64 : 1), "bucket %zu too wide: [%llu, %llu]", i,
               (unsigned long long)low, (unsigned long long)high);
        EXPECT(histogram_bucket(low) == i && histogram_bucket(high) == i, "bucket %zu round trip", i);
    }
    /* The last bucket is [2^45 - 2^38, 2^45) and takes the saturated values too. */
    uint64_t top = (uint64_t)1 << HISTOGRAM_MAX_BITS;
    EXPECT(histogram_bucket(top - 1) == HISTOGRAM_BUCKETS - 1 &&
               histogram_bucket_low(HISTOGRAM_BUCKETS - 1) == top - (top >> 7),
           "the last bucket starts 2^%d below 2^%d", HISTOGRAM_MAX_BITS - 7, HISTOGRAM_MAX_BITS);
    EXPECT(histogram_bucket(UINT64_MAX) == HISTOGRAM_BUCKETS - 1, "huge values saturate");
    /* 10 s at ns resolution is far inside the range */
    EXPECT(histogram_bucket(10000000000ull) < HISTOGRAM_BUCKETS - 1, "10 s is not saturated");
}

int main(void)
{
    test_cases();
    test_empty_and_saturated();
    test_merge();
    test_bucket_layout();
    return expect_report("histogram tests");
}

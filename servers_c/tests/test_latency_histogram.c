/* Tests of open_loop's latency histogram: bucket edges (a table of cases),
 * merging by adding counts, and percentiles of known distributions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "latency_histogram.h"

static void test_edges(void)
{
    static const struct {
        uint64_t ns, lower, upper;
    } cases[] = {
        {0, 0, 1},
        {1, 1, 2},
        {1000, 1000, 1001},
        {2047, 2047, 2048},
        {2048, 2048, 2050}, /* first power of two cut into sub-buckets: width 2 */
        {2049, 2048, 2050},
        {4095, 4094, 4096},
        {4096, 4096, 4100},
        {1000000, 999936, 1000448},                         /* 1 ms: 2^19 <= v < 2^20, width 512 */
        {100000000000ull, 99992207360ull, 100059316224ull}, /* 100 s, width 2^26 */
        {(1ull << 37) - 1, (1ull << 37) - (1ull << 26), 1ull << 37},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t b = lh_bucket(cases[i].ns);
        EXPECT(lh_lower(b) == cases[i].lower && lh_upper(b) == cases[i].upper,
               "%llu: bucket [%llu, %llu), want [%llu, %llu)", (unsigned long long)cases[i].ns,
               (unsigned long long)lh_lower(b), (unsigned long long)lh_upper(b), (unsigned long long)cases[i].lower,
               (unsigned long long)cases[i].upper);
    }
    EXPECT(lh_bucket(1ull << 40) == LH_BUCKETS - 1, "past the top lands in the last bucket");
    /* Contiguous edges, and every bucket at most 1/1024 of its lower edge wide (past the exact range). */
    for (uint32_t i = 0; i + 1 < LH_BUCKETS; i++) {
        EXPECT(lh_upper(i) == lh_lower(i + 1), "bucket %u does not end where %u starts", i, i + 1);
        EXPECT(lh_bucket(lh_lower(i)) == i && lh_bucket(lh_upper(i) - 1) == i, "bucket %u edges map back", i);
        if (i >= 2 * LH_SUB)
            EXPECT((lh_upper(i) - lh_lower(i)) * 1024 <= lh_lower(i), "bucket %u too wide", i);
        if (failures > 5)
            return;
    }
}

static struct latency_histogram a, b, pooled;

static void test_merge_is_add(void)
{
    lh_init(&a);
    lh_init(&b);
    lh_init(&pooled);
    unsigned seed = 7;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = (uint64_t)(rand_r(&seed) % 5000000) + 1000;
        lh_record(i % 3 ? &a : &b, v);
        lh_record(&pooled, v);
    }
    lh_add(&a, &b);
    EXPECT(memcmp(a.counts, pooled.counts, sizeof a.counts) == 0, "merged counts differ from the pooled ones");
    EXPECT(a.total == pooled.total && a.min_ns == pooled.min_ns && a.max_ns == pooled.max_ns,
           "merged total/min/max differ");
    static const double qs[] = {50, 90, 99, 99.9, 100};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        EXPECT(lh_percentile(&a, qs[i]) == lh_percentile(&pooled, qs[i]), "p%g of the merge", qs[i]);
}

static void test_percentiles_of_known_distributions(void)
{
    /* 1..10000 us once each: p50 is the sample 5000 us, p99 9900 us, p99.9 9990 us. */
    lh_init(&a);
    for (uint64_t us = 1; us <= 10000; us++)
        lh_record(&a, us * 1000);
    static const struct {
        double q;
        uint64_t sample;
    } cases[] = {{50, 5000000}, {90, 9000000}, {99, 9900000}, {99.9, 9990000}, {0.01, 1000}, {100, 10000000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t p = lh_percentile(&a, cases[i].q), s = cases[i].sample;
        uint64_t width = lh_upper(lh_bucket(s)) - lh_lower(lh_bucket(s));
        EXPECT(p >= s && p - s <= width, "p%g = %llu, sample %llu (bucket width %llu)", cases[i].q,
               (unsigned long long)p, (unsigned long long)s, (unsigned long long)width);
    }
    EXPECT(lh_percentile(&a, 100) == 10000000, "p100 is the exact max");
    /* One value: every percentile is that value (the bucket's upper edge is past the max). */
    lh_init(&b);
    for (int i = 0; i < 10; i++)
        lh_record(&b, 150000);
    EXPECT(lh_percentile(&b, 50) == 150000 && lh_percentile(&b, 99.9) == 150000, "a constant 150 us");
    /* Two-point: 99% at 100 us, 1% at 50 ms; p99 is the low point, p99.5 the high one. */
    lh_init(&b);
    for (int i = 0; i < 9900; i++)
        lh_record(&b, 100000);
    for (int i = 0; i < 100; i++)
        lh_record(&b, 50000000);
    EXPECT(lh_percentile(&b, 99) == lh_upper(lh_bucket(100000)), "two-point p99");
    EXPECT(lh_percentile(&b, 99.5) == 50000000, "two-point p99.5 (the max: smaller than its bucket's upper edge)");
    lh_init(&b);
    EXPECT(lh_percentile(&b, 50) == 0, "an empty histogram");
    lh_record(&b, 1ull << 40);
    EXPECT(b.clamped == 1, "a value past 100 s is counted as clamped");
}

int main(void)
{
    test_edges();
    test_merge_is_add();
    test_percentiles_of_known_distributions();
    return expect_report("latency_histogram");
}

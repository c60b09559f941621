/* A log-linear histogram of latencies in nanoseconds, mergeable by adding counts.
 *
 * Why: percentiles from several threads (or client hosts) cannot be combined,
 * histograms with the same fixed bucket edges can: add the counts, then take
 * the percentiles of the sum.
 *
 * Edges (HdrHistogram-like, the same in archbench/analyze/histogram.py):
 * values below 2*LH_SUB ns have buckets 1 ns wide; above, each power of two
 * [2^e, 2^(e+1)) is cut into LH_SUB equal sub-buckets of width 2^(e-10), so a
 * bucket is at most 1/1024 of its lower edge wide (about 3 significant
 * digits). The top bucket ends past LH_MAX_NS (100 s); larger values are
 * counted in it and in `clamped`.
 *
 * Owns: its counts (fixed size, no allocation). Promises: lh_percentile
 * reports the upper edge (exclusive) of the bucket holding the sample of rank
 * ceil(q/100 * total), or the largest sample if that is smaller: never below
 * the true sample, at most one bucket width above it; q = 100 gives the exact
 * maximum. Used by open_loop's workers and
 * report; tested by tests/test_latency_histogram.c. */
#ifndef ARCHBENCH_LATENCY_HISTOGRAM_H
#define ARCHBENCH_LATENCY_HISTOGRAM_H

#include <stdint.h>

#define LH_SUB_BITS 10
#define LH_SUB (1u << LH_SUB_BITS) /* sub-buckets per power of two */
#define LH_MAX_NS 100000000000ull  /* 100 s */
#define LH_TOP_EXP 36              /* 2^36 ns = 68.7 s <= LH_MAX_NS < 2^37 */
#define LH_BUCKETS (2 * LH_SUB + (LH_TOP_EXP - LH_SUB_BITS) * LH_SUB)

struct latency_histogram {
    uint64_t counts[LH_BUCKETS];
    uint64_t total;
    uint64_t clamped; /* values over the top bucket's upper edge */
    uint64_t min_ns, max_ns;
    long double sum_ns; /* for the mean */
};

void lh_init(struct latency_histogram *h);

/* The bucket a value falls in (values past the top land in the last bucket). */
uint32_t lh_bucket(uint64_t ns);

/* Bucket i covers [lh_lower(i), lh_upper(i)). */
uint64_t lh_lower(uint32_t i);
uint64_t lh_upper(uint32_t i);

void lh_record(struct latency_histogram *h, uint64_t ns);

/* into += from (the counts added bucket by bucket). */
void lh_add(struct latency_histogram *into, const struct latency_histogram *from);

/* The q-th percentile (0 < q <= 100) as stated above; 0 for an empty histogram. */
uint64_t lh_percentile(const struct latency_histogram *h, double q);

#endif

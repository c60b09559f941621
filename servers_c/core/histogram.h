/* A log-linear histogram of nanosecond values (latencies), in the manner of
 * HdrHistogram: fixed size, no allocation, O(1) recording.
 *
 * Values below 128 have a bucket each (exact). Above, every power-of-two range
 * [2^m, 2^(m+1)) is split into 64 equal sub-buckets, so a bucket is at most
 * 1/64 (1.6 %) of its lower bound wide at any magnitude: 1 ns wide at 100 ns,
 * 16 us wide at 1 ms, 16 ms wide at 1 s. Values up to 2^45 ns (about 9.8 hours)
 * are kept apart; larger ones land in the last bucket and are counted as
 * saturated. min, max, count and the mean are exact.
 *
 * A percentile is reported like HdrHistogram's getValueAtPercentile: the
 * highest value of the bucket holding the value at that rank (so never below
 * the true value, at most 1.6 % above it), capped at the recorded maximum.
 */
#ifndef ARCHBENCH_HISTOGRAM_H
#define ARCHBENCH_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define HISTOGRAM_SUB_BUCKETS 64                           /* per power of two */
#define HISTOGRAM_LINEAR_LIMIT (2 * HISTOGRAM_SUB_BUCKETS) /* exact below this */
#define HISTOGRAM_MAX_BITS 45
#define HISTOGRAM_BUCKETS (HISTOGRAM_LINEAR_LIMIT + (HISTOGRAM_MAX_BITS - 7) * HISTOGRAM_SUB_BUCKETS)

struct histogram {
    uint64_t counts[HISTOGRAM_BUCKETS];
    uint64_t count;
    uint64_t min; /* UINT64_MAX while empty */
    uint64_t max;
    uint64_t saturated; /* values of 2^HISTOGRAM_MAX_BITS or more */
    double sum;
};

void histogram_init(struct histogram *h);
void histogram_record(struct histogram *h, uint64_t value);
/* Adds src's values to dst. */
void histogram_merge(struct histogram *dst, const struct histogram *src);

/* percentile in [0, 100]; 0 on an empty histogram. */
uint64_t histogram_percentile(const struct histogram *h, double percentile);
double histogram_mean(const struct histogram *h);

/* The bucket a value falls in, and the values that bucket holds. */
size_t histogram_bucket(uint64_t value);
uint64_t histogram_bucket_low(size_t bucket);
uint64_t histogram_bucket_high(size_t bucket);

#endif

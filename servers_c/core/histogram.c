#include "histogram.h"

#include <math.h>
#include <string.h>

/* log2 of the sub-bucket count: sub-buckets of [2^m, 2^(m+1)) are 2^(m - 6) wide. */
#define SUB_BITS 6

void histogram_init(struct histogram *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

size_t histogram_bucket(uint64_t value)
{
    if (value < HISTOGRAM_LINEAR_LIMIT)
        return (size_t)value;
    if (value >> HISTOGRAM_MAX_BITS)
        return HISTOGRAM_BUCKETS - 1;
    unsigned m = 63u - (unsigned)__builtin_clzll(value); /* 7 <= m < HISTOGRAM_MAX_BITS */
    unsigned shift = m - SUB_BITS;
    size_t sub = (size_t)(value >> shift) - HISTOGRAM_SUB_BUCKETS; /* 0..63 */
    return HISTOGRAM_LINEAR_LIMIT + (size_t)(m - 7) * HISTOGRAM_SUB_BUCKETS + sub;
}

uint64_t histogram_bucket_low(size_t bucket)
{
    if (bucket < HISTOGRAM_LINEAR_LIMIT)
        return bucket;
    size_t k = bucket - HISTOGRAM_LINEAR_LIMIT;
    unsigned m = 7u + (unsigned)(k / HISTOGRAM_SUB_BUCKETS);
    uint64_t sub = HISTOGRAM_SUB_BUCKETS + k % HISTOGRAM_SUB_BUCKETS;
    return sub << (m - SUB_BITS);
}

uint64_t histogram_bucket_high(size_t bucket)
{
    if (bucket < HISTOGRAM_LINEAR_LIMIT)
        return bucket;
    if (bucket == HISTOGRAM_BUCKETS - 1)
        return UINT64_MAX; /* also holds the saturated values */
    unsigned m = 7u + (unsigned)((bucket - HISTOGRAM_LINEAR_LIMIT) / HISTOGRAM_SUB_BUCKETS);
    return histogram_bucket_low(bucket) + ((uint64_t)1 << (m - SUB_BITS)) - 1;
}

void histogram_record(struct histogram *h, uint64_t value)
{
    h->counts[histogram_bucket(value)]++;
    h->count++;
    h->sum += (double)value;
    h->saturated += (value >> HISTOGRAM_MAX_BITS) != 0;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
}

void histogram_merge(struct histogram *dst, const struct histogram *src)
{
    for (size_t i = 0; i < HISTOGRAM_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->count += src->count;
    dst->sum += src->sum;
    dst->saturated += src->saturated;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t histogram_percentile(const struct histogram *h, double percentile)
{
    if (h->count == 0)
        return 0;
    if (percentile <= 0.0)
        return h->min;
    if (percentile > 100.0)
        percentile = 100.0;
    /* The value at rank ceil(p% of count) in sorted order (rank 1 is the
     * minimum), in integer parts per million of a percent, so that 99.9 % of
     * 1000 is rank 999 and not, through rounding, 1000. */
    uint64_t ppm = (uint64_t)llround(percentile * 10000.0); /* 100 % = 1,000,000 */
    uint64_t rank = h->count <= UINT64_MAX / 1000000 ? (h->count * ppm + 999999) / 1000000
                                                     : (uint64_t)ceil((double)ppm / 1e6 * (double)h->count);
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;
    uint64_t seen = 0;
    for (size_t i = 0; i < HISTOGRAM_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t high = histogram_bucket_high(i);
            return high < h->max ? high : h->max;
        }
    }
    return h->max;
}

double histogram_mean(const struct histogram *h) { return h->count > 0 ? h->sum / (double)h->count : 0.0; }

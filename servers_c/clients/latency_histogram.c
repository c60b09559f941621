/* A log-linear latency histogram; see latency_histogram.h. */
#include <math.h>
#include <string.h>

#include "latency_histogram.h"

void lh_init(struct latency_histogram *h)
{
    memset(h, 0, sizeof *h);
    h->min_ns = UINT64_MAX;
}

uint32_t lh_bucket(uint64_t ns)
{
    if (ns < 2 * LH_SUB)
        return (uint32_t)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* ns in [2^e, 2^(e+1)), e > LH_SUB_BITS */
    if (e > LH_TOP_EXP)
        return LH_BUCKETS - 1;
    unsigned shift = e - LH_SUB_BITS;
    uint32_t sub = (uint32_t)(ns >> shift) - LH_SUB;
    return 2 * LH_SUB + (e - LH_SUB_BITS - 1) * LH_SUB + sub;
}

uint64_t lh_lower(uint32_t i)
{
    if (i < 2 * LH_SUB)
        return i;
    uint32_t e = (i - 2 * LH_SUB) / LH_SUB + LH_SUB_BITS + 1;
    uint32_t sub = (i - 2 * LH_SUB) % LH_SUB;
    return (uint64_t)(LH_SUB + sub) << (e - LH_SUB_BITS);
}

uint64_t lh_upper(uint32_t i)
{
    if (i < 2 * LH_SUB)
        return (uint64_t)i + 1;
    uint32_t e = (i - 2 * LH_SUB) / LH_SUB + LH_SUB_BITS + 1;
    return lh_lower(i) + (1ull << (e - LH_SUB_BITS));
}

void lh_record(struct latency_histogram *h, uint64_t ns)
{
    uint32_t b = lh_bucket(ns);
    h->counts[b]++;
    h->total++;
    if (ns >= lh_upper(LH_BUCKETS - 1))
        h->clamped++;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
    h->sum_ns += (long double)ns;
}

void lh_add(struct latency_histogram *into, const struct latency_histogram *from)
{
    for (uint32_t i = 0; i < LH_BUCKETS; i++)
        into->counts[i] += from->counts[i];
    into->total += from->total;
    into->clamped += from->clamped;
    if (from->min_ns < into->min_ns)
        into->min_ns = from->min_ns;
    if (from->max_ns > into->max_ns)
        into->max_ns = from->max_ns;
    into->sum_ns += from->sum_ns;
}

uint64_t lh_percentile(const struct latency_histogram *h, double q)
{
    if (h->total == 0)
        return 0;
    if (q >= 100.0)
        return h->max_ns;
    uint64_t rank = (uint64_t)ceil(q / 100.0 * (double)h->total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < LH_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) /* the bucket's upper edge, or the largest sample if it is smaller */
            return lh_upper(i) < h->max_ns ? lh_upper(i) : h->max_ns;
    }
    return h->max_ns;
}

/* Monotonic time in nanoseconds.
 *
 * Owns: nothing but the clock reading. Promises: every timestamp and deadline
 * of the clients is CLOCK_MONOTONIC in ns, so none can jump or wrap with the
 * wall clock (source 004's client wrapped every second). Used by every part of
 * echo_client and idle_holder. */
#ifndef ARCHBENCH_MONO_CLOCK_H
#define ARCHBENCH_MONO_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_S 1000000000ull

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

#endif

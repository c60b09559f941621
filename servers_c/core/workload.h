/* What answering a request costs besides moving bytes (--work-us, --block-us,
 * --block-dist, --seed): the same for every architecture, spent by the session
 * on whichever thread answers the request, before its response is queued, so
 * that architectures differ only in how they schedule it.
 *
 *   work   N microseconds of CPU: a loop of a dependency chain the compiler
 *          cannot remove, run for a number of iterations calibrated once at
 *          start-up against CLOCK_MONOTONIC (no clock read per request).
 *   block  a blocking wait (a sleep) standing for a synchronous disk, database
 *          or library call: N microseconds, or (exp) a wait drawn from an
 *          exponential distribution with mean N, from a per-thread random
 *          stream (no lock), seeded from --seed, the process (prefork workers
 *          each get their own) and the thread's order of first use.
 * Work comes first, then the wait. An event loop stalls during either; a pool
 * overlaps the waits. A pipelined batch is processed before its responses are
 * sent, so each response in it also waits for the work of those behind it.
 */
#ifndef ARCHBENCH_WORKLOAD_H
#define ARCHBENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-request limits of --work-us and --block-us: one second. */
#define WORKLOAD_MAX_US 1000000
#define WORKLOAD_DEFAULT_SEED 1

enum block_dist { BLOCK_FIXED, BLOCK_EXP };

/* The --block-dist values, indexed by enum block_dist; NULL-terminated. */
extern const char *const block_dist_names[];

struct workload {
    uint32_t work_us;
    uint64_t work_iterations; /* of workload_spin per request, from the calibration */
    double iters_per_us;      /* the calibration; 0 when --work-us is 0 */
    uint32_t block_us;        /* the wait, or with BLOCK_EXP its mean */
    enum block_dist block_dist;
    uint64_t seed;
};

/* Fills *w from the flags; calibrates when work_us > 0 (about 20 ms) and, when
 * block_us > 0, sets this thread's timer slack to 1 ns (threads created later
 * inherit it), so a wait of N microseconds is not rounded up by 50. */
void workload_init(struct workload *w, uint32_t work_us, uint32_t block_us, enum block_dist dist, uint64_t seed);

/* Any per-request cost at all. */
static inline bool workload_active(const struct workload *w) { return w->work_us > 0 || w->block_us > 0; }

/* Spends the work, then the wait, of one request. */
void workload_serve(const struct workload *w);

/* The calibration as ready-line fields (" work_iters_per_us=X work_iterations=N",
 * leading space) or "" when there is no work; returns what snprintf does. */
int workload_ready_fields(const struct workload *w, char *buf, size_t len);

/* ---- the parts, for the unit tests --------------------------------------- */

/* `iterations` steps of a multiply-add chain, each kept opaque to the compiler. */
void workload_spin(uint64_t iterations);

/* Iterations of workload_spin per microsecond: the fastest of `tries` runs
 * that each take about `window_us`, so a preemption or a slow clock-up of the
 * CPU during one of them does not lower the estimate. */
double workload_calibrate(uint32_t window_us, int tries);

/* Sleeps until `ns` nanoseconds from now (CLOCK_MONOTONIC), resuming after signals. */
void workload_sleep_ns(uint64_t ns);

/* The random stream (splitmix64): a state per stream, no sharing. */
uint64_t workload_stream_seed(uint64_t seed, uint64_t process, uint64_t thread);
uint64_t workload_random(uint64_t *state);
/* An exponential draw with mean `mean_ns`, in nanoseconds. */
uint64_t workload_exp_ns(uint64_t *state, double mean_ns);

#endif

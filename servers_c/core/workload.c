#include "workload.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

const char *const block_dist_names[] = {"fixed", "exp", NULL};

/* The calibration's window and tries: about 20 ms at start-up. Short windows,
 * many of them: on a busy CPU some still run without being preempted. */
#define CALIBRATION_WINDOW_US 1000
#define CALIBRATION_TRIES 15

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void workload_spin(uint64_t iterations)
{
    uint64_t x = iterations;
    for (uint64_t i = 0; i < iterations; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        /* The compiler must assume the asm reads and changes x: no folding,
         * no vectorising, no removing the loop, and no memory traffic either. */
        __asm__ volatile("" : "+r"(x));
    }
}

static uint64_t time_spin_ns(uint64_t iterations)
{
    uint64_t start = monotonic_ns();
    workload_spin(iterations);
    return monotonic_ns() - start;
}

double workload_calibrate(uint32_t window_us, int tries)
{
    uint64_t window_ns = (uint64_t)window_us * 1000u;
    /* Grow the run until it fills the window; this also clocks the CPU up. */
    uint64_t n = 1024;
    while (time_spin_ns(n) < window_ns && n < (UINT64_C(1) << 40))
        n *= 2;
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < tries; i++) {
        uint64_t t = time_spin_ns(n);
        if (t < best)
            best = t;
    }
    return (double)n * 1000.0 / (double)(best > 0 ? best : 1);
}

void workload_sleep_ns(uint64_t ns)
{
    uint64_t until = monotonic_ns() + ns;
    struct timespec deadline = {.tv_sec = (time_t)(until / 1000000000u), .tv_nsec = (long)(until % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
    }
}

/* ---- random waits ---------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t workload_stream_seed(uint64_t seed, uint64_t process, uint64_t thread)
{
    return mix64(mix64(mix64(seed) ^ process) + thread);
}

uint64_t workload_random(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15u;
    return mix64(*state);
}

uint64_t workload_exp_ns(uint64_t *state, double mean_ns)
{
    /* u in (0, 1]: never log(0) */
    double u = (double)((workload_random(state) >> 11) + 1) * 0x1.0p-53;
    return (uint64_t)llround(-mean_ns * log(u));
}

/* Each thread's stream is seeded on its first draw: from --seed, the process
 * (0 for the server's own, i for the i-th process it forked: prefork's
 * workers), and the thread's rank among the first draws in its process. A
 * single-threaded server is reproducible draw for draw; with several threads
 * the same streams are used, whichever thread ends up with which. */
static atomic_uint_fast64_t forks;
static atomic_uint_fast64_t streams_started;
static _Thread_local bool stream_seeded;
static _Thread_local uint64_t stream_state;

static void count_fork(void) { atomic_fetch_add(&forks, 1); }

static void restart_streams_in_child(void)
{
    atomic_store(&streams_started, 0);
    stream_seeded = false;
}

static uint64_t draw_wait_ns(const struct workload *w)
{
    if (!stream_seeded) {
        uint64_t thread = atomic_fetch_add(&streams_started, 1);
        stream_state = workload_stream_seed(w->seed, atomic_load(&forks), thread);
        stream_seeded = true;
    }
    return workload_exp_ns(&stream_state, (double)w->block_us * 1000.0);
}

/* ---- per request ------------------------------------------------------------ */

void workload_init(struct workload *w, uint32_t work_us, uint32_t block_us, enum block_dist dist, uint64_t seed)
{
    *w = (struct workload){.work_us = work_us, .block_us = block_us, .block_dist = dist, .seed = seed};
    if (work_us > 0) {
        w->iters_per_us = workload_calibrate(CALIBRATION_WINDOW_US, CALIBRATION_TRIES);
        w->work_iterations = (uint64_t)llround(w->iters_per_us * work_us);
    }
    if (block_us > 0) {
        (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        if (dist == BLOCK_EXP)
            (void)pthread_atfork(count_fork, NULL, restart_streams_in_child);
    }
}

void workload_serve(const struct workload *w)
{
    if (w->work_iterations > 0)
        workload_spin(w->work_iterations);
    if (w->block_us > 0)
        workload_sleep_ns(w->block_dist == BLOCK_EXP ? draw_wait_ns(w) : (uint64_t)w->block_us * 1000u);
}

int workload_ready_fields(const struct workload *w, char *buf, size_t len)
{
    if (w->work_us == 0)
        return snprintf(buf, len, "%s", "");
    return snprintf(buf, len, " work_iters_per_us=%.3f work_iterations=%llu", w->iters_per_us,
                    (unsigned long long)w->work_iterations);
}

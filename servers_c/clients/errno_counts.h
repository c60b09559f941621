/* Failures counted by errno, and printed by name.
 *
 * Owns: the errno names the clients report ("ECONNREFUSED", "eof" for slot 0).
 * Promises: a table of ERRNO_SLOTS counters indexed by errno_slot() holds every
 * failure (an errno past the table lands in its last slot), and
 * print_errno_counts() writes only the non-zero ones, in errno order, as text
 * ("ECONNRESET 5, eof 2", or "none") or as the members of a JSON object
 * ("ECONNRESET":5,"eof":2). Callers own their tables: echo_client's workers
 * and report, idle_holder. */
#ifndef ARCHBENCH_ERRNO_COUNTS_H
#define ARCHBENCH_ERRNO_COUNTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ERRNO_SLOTS 256 /* Linux errno values are below this; slot 0 stands for EOF */

static inline size_t errno_slot(int err)
{
    return err >= 0 && err < ERRNO_SLOTS ? (size_t)err : ERRNO_SLOTS - 1; /* 0: EOF */
}

/* "ECONNREFUSED", "eof" for 0, "E<n>" for one without a name here (a
 * per-thread buffer: valid until the thread's next call). */
const char *errno_name(int err);

enum count_format { COUNTS_AS_TEXT, COUNTS_AS_JSON };

void print_errno_counts(FILE *out, const uint64_t *counts, enum count_format format);

#endif

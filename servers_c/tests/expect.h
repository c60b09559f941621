/* The one assertion macro the C unit tests share: report and count, keep going,
 * so a run lists every failure instead of stopping at the first. */
#ifndef ARCHBENCH_TESTS_EXPECT_H
#define ARCHBENCH_TESTS_EXPECT_H

#include <stdio.h>

static int failures;

#define EXPECT(cond, ...)                                        \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
        }                                                        \
    } while (0)

/* main()'s last statement: the exit status and a summary line. */
static inline int expect_report(const char *suite)
{
    if (failures) {
        fprintf(stderr, "%s: %d failure(s)\n", suite, failures);
        return 1;
    }
    printf("%s: all checks passed\n", suite);
    return 0;
}

#endif

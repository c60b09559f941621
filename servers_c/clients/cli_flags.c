/* The clients' command-line flags; see cli_flags.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_flags.h"

static const char *program = "client";

void cli_set_program(const char *name) { program = name; }

_Noreturn void cli_bad_usage(const char *flag, const char *problem, const char *value)
{
    fprintf(stderr, "%s: %s %s%s%s%s\n(run with --help for usage)\n", program, flag, problem, value ? " (got '" : "",
            value ? value : "", value ? "')" : "");
    exit(EXIT_USAGE);
}

long cli_long(const char *flag, const char *value, long min, long max)
{
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || n < min || n > max) {
        char range[96];
        snprintf(range, sizeof range, "expects an integer in [%ld, %ld]", min, max);
        cli_bad_usage(flag, range, value);
    }
    return n;
}

double cli_double(const char *flag, const char *value, double min, double max)
{
    char *end;
    errno = 0;
    double x = strtod(value, &end);
    if (errno != 0 || end == value || *end != '\0' || !(x >= min && x <= max)) {
        char range[96];
        snprintf(range, sizeof range, "expects a number in [%g, %g]", min, max);
        cli_bad_usage(flag, range, value);
    }
    return x;
}

const char *cli_flag_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, len) != 0)
        return NULL;
    if (arg[len] == '=')
        return arg + len + 1;
    if (arg[len] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        cli_bad_usage(name, "needs a value", NULL);
    return argv[++*i];
}

#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out, const struct server_cli *cli)
{
    fprintf(out, "usage: %s [options]\n\n%s\n\noptions:\n", cli->architecture, cli->summary);
    fprintf(out, "  --host ADDR          IPv4 address to bind (default 127.0.0.1)\n");
    fprintf(out, "  --port N             TCP port, 0 for an ephemeral one (default 0)\n");
    fprintf(out, "  --backlog N          listen() backlog (default 4096)\n");
    fprintf(out, "  --threads N          %s (default %ld)\n", cli->threads_help, cli->threads_min);
    fprintf(out,
            "  --response SPEC      test (default), hello, file:PATH, or bytes:N: a body of N\n"
            "                       bytes, %d to %d (http only)\n",
            RESPONSE_BYTES_MIN, RESPONSE_BYTES_MAX);
    fprintf(out,
            "  --proto PROTO        http (default): answer HTTP/1.x requests; echo: send every\n"
            "                       received byte back, in order\n");
    fprintf(out,
            "  --header-timeout S   http: close a connection whose request head is still\n"
            "                       incomplete S seconds after it began (after a 408 if part\n"
            "                       of it arrived); a connection's first head counts from when\n"
            "                       the server takes it up; 0 = off (default %d)\n",
            DEFAULT_HEADER_TIMEOUT_S);
    fprintf(out,
            "  --idle-timeout S     close a connection that makes no progress for S seconds:\n"
            "                       keep-alive between requests, a stalled body, a client not\n"
            "                       reading; echo: any connection; 0 = off (default %d)\n",
            DEFAULT_IDLE_TIMEOUT_S);
    fprintf(out,
            "  --work-us N          http: N microseconds of CPU per request on the thread that\n"
            "                       answers it, before its response is queued (a loop\n"
            "                       calibrated at start-up: see the ready line); 0 = off\n"
            "                       (default), at most %d\n",
            WORKLOAD_MAX_US);
    fprintf(out,
            "  --block-us N         http: a blocking wait (a sleep) of N microseconds per\n"
            "                       request on that thread, after the work; 0 = off\n"
            "                       (default), at most %d\n",
            WORKLOAD_MAX_US);
    fprintf(out,
            "  --block-dist DIST    fixed (default): every wait is N; exp: each wait is drawn\n"
            "                       from an exponential distribution with mean N\n");
    fprintf(out,
            "  --seed S             seed of the exponential waits' per-thread streams\n"
            "                       (default %d)\n",
            WORKLOAD_DEFAULT_SEED);
    for (size_t i = 0; i < cli->extra_count; i++) {
        const struct flag_spec *f = &cli->extra[i];
        fprintf(out, "  %-20s %s", f->name, f->help);
        if (f->kind == FLAG_CHOICE) {
            fprintf(out, " (");
            for (const char *const *c = f->choices; *c != NULL; c++)
                fprintf(out, "%s%s", c == f->choices ? "" : "|", *c);
            fprintf(out, ")");
        }
        fprintf(out, "\n");
    }
    fprintf(out,
            "\nPrints 'listening on HOST:PORT' when ready (with --work-us, followed by\n"
            "' work_iters_per_us=X work_iterations=N': the calibration); SIGTERM or SIGINT\n"
            "stops it and prints one JSON line of counters.\n");
}

static _Noreturn void bad_usage(const struct server_cli *cli, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "%s: ", cli->architecture);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n(run with --help for usage)\n");
    exit(2);
}

static long parse_long(const struct server_cli *cli, const char *name, const char *value, long min, long max)
{
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || n < min || n > max) {
        char range[64];
        snprintf(range, sizeof range, "an integer in [%ld, %ld]", min, max);
        fprintf(stderr, "%s: %s expects %s, got '%s'\n(run with --help for usage)\n", cli->architecture, name, range,
                value);
        exit(2);
    }
    return n;
}

static int parse_choice(const struct server_cli *cli, const char *name, const char *const *choices, const char *value)
{
    for (int i = 0; choices[i] != NULL; i++)
        if (strcmp(choices[i], value) == 0)
            return i;
    fprintf(stderr, "%s: %s: unknown value '%s', expected one of", cli->architecture, name, value);
    for (int i = 0; choices[i] != NULL; i++)
        fprintf(stderr, "%s%s", i == 0 ? " " : "|", choices[i]);
    fprintf(stderr, "\n(run with --help for usage)\n");
    exit(2);
}

/* Splits "--name=value" or takes the next argument as the value. */
static const char *flag_value(int argc, char **argv, int *i, const char *name, size_t name_len,
                              const struct server_cli *cli)
{
    const char *arg = argv[*i];
    if (arg[name_len] == '=')
        return arg + name_len + 1;
    if (*i + 1 >= argc)
        bad_usage(cli, "%s needs a value%s", name, "");
    return argv[++*i];
}

static bool matches(const char *arg, const char *name, size_t *len)
{
    *len = strlen(name);
    return strncmp(arg, name, *len) == 0 && (arg[*len] == '\0' || arg[*len] == '=');
}

/* Refuses what cannot mean anything: a malformed --response (a file that cannot
 * be read is found later, at start-up), or an HTTP workload under echo. */
static void check_combinations(const struct server_cli *cli, const struct common_options *o)
{
    char err[256];
    if (!responses_spec_valid(o->response, err, sizeof err))
        bad_usage(cli, "%s%s", err, "");
    if (o->proto != SESSION_ECHO)
        return;
    const char *flag = o->work_us > 0            ? "--work-us"
        : o->block_us > 0                        ? "--block-us"
        : o->block_dist != BLOCK_FIXED           ? "--block-dist"
        : strncmp(o->response, "bytes:", 6) == 0 ? "--response bytes:N"
                                                 : NULL;
    if (flag != NULL)
        bad_usage(cli, "%s applies to HTTP requests only: not with --proto echo%s", flag, "");
}

void options_parse(int argc, char **argv, const struct server_cli *cli, struct common_options *out)
{
    *out = (struct common_options){
        .host = "127.0.0.1",
        .port = 0,
        .backlog = 4096,
        .threads = cli->threads_min,
        .response = "test",
        .proto = SESSION_HTTP,
        .header_timeout_s = DEFAULT_HEADER_TIMEOUT_S,
        .idle_timeout_s = DEFAULT_IDLE_TIMEOUT_S,
        .work_us = 0,
        .block_us = 0,
        .block_dist = BLOCK_FIXED,
        .seed = WORKLOAD_DEFAULT_SEED,
    };
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        size_t len;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, cli);
            exit(0);
        } else if (matches(arg, "--host", &len)) {
            out->host = flag_value(argc, argv, &i, "--host", len, cli);
        } else if (matches(arg, "--port", &len)) {
            out->port = parse_long(cli, "--port", flag_value(argc, argv, &i, "--port", len, cli), 0, 65535);
        } else if (matches(arg, "--backlog", &len)) {
            out->backlog = parse_long(cli, "--backlog", flag_value(argc, argv, &i, "--backlog", len, cli), 1, 1 << 20);
        } else if (matches(arg, "--threads", &len)) {
            out->threads = parse_long(cli, "--threads", flag_value(argc, argv, &i, "--threads", len, cli),
                                      cli->threads_min, cli->threads_max);
        } else if (matches(arg, "--response", &len)) {
            out->response = flag_value(argc, argv, &i, "--response", len, cli);
        } else if (matches(arg, "--header-timeout", &len)) {
            out->header_timeout_s = parse_long(
                cli, "--header-timeout", flag_value(argc, argv, &i, "--header-timeout", len, cli), 0, MAX_TIMEOUT_S);
        } else if (matches(arg, "--idle-timeout", &len)) {
            out->idle_timeout_s = parse_long(cli, "--idle-timeout",
                                             flag_value(argc, argv, &i, "--idle-timeout", len, cli), 0, MAX_TIMEOUT_S);
        } else if (matches(arg, "--work-us", &len)) {
            out->work_us =
                parse_long(cli, "--work-us", flag_value(argc, argv, &i, "--work-us", len, cli), 0, WORKLOAD_MAX_US);
        } else if (matches(arg, "--block-us", &len)) {
            out->block_us =
                parse_long(cli, "--block-us", flag_value(argc, argv, &i, "--block-us", len, cli), 0, WORKLOAD_MAX_US);
        } else if (matches(arg, "--block-dist", &len)) {
            out->block_dist = parse_choice(cli, "--block-dist", block_dist_names,
                                           flag_value(argc, argv, &i, "--block-dist", len, cli));
        } else if (matches(arg, "--seed", &len)) {
            out->seed = parse_long(cli, "--seed", flag_value(argc, argv, &i, "--seed", len, cli), 0, LONG_MAX);
        } else if (matches(arg, "--proto", &len)) {
            out->proto = (enum session_proto)parse_choice(cli, "--proto", session_proto_names,
                                                          flag_value(argc, argv, &i, "--proto", len, cli));
        } else {
            const struct flag_spec *found = NULL;
            for (size_t k = 0; k < cli->extra_count && found == NULL; k++)
                if (matches(arg, cli->extra[k].name, &len))
                    found = &cli->extra[k];
            if (found == NULL)
                bad_usage(cli, "unknown option '%s'%s", arg, "");
            const char *value = flag_value(argc, argv, &i, found->name, len, cli);
            if (found->kind == FLAG_INT)
                *(long *)found->target = parse_long(cli, found->name, value, found->min, found->max);
            else
                *(int *)found->target = parse_choice(cli, found->name, found->choices, value);
        }
    }
    check_combinations(cli, out);
}

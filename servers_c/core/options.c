#include "options.h"

#include <errno.h>
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
    fprintf(out, "  --response SPEC      test (default), hello, or file:PATH (http only)\n");
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
            "\nPrints 'listening on HOST:PORT' when ready; SIGTERM or SIGINT stops it and\n"
            "prints one JSON line of counters.\n");
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
    bad_usage(cli, "%s: unknown value '%s'", name, value);
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

void options_parse(int argc, char **argv, const struct server_cli *cli, struct common_options *out)
{
    *out = (struct common_options){
        "127.0.0.1", 0, 4096, cli->threads_min, "test", SESSION_HTTP, DEFAULT_HEADER_TIMEOUT_S, DEFAULT_IDLE_TIMEOUT_S};
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
}

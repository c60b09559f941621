/* The clients' command-line flags: "--name value" or "--name=value", numbers
 * checked against their range, and refusals that name the flag.
 *
 * Owns: the program name that prefixes every refusal (cli_set_program, once,
 * before anything else). Promises: a value that is not a number in range, a
 * flag without its value, or anything else cli_bad_usage is told about ends
 * the process with "<program>: <flag> <problem> (got '<value>')", a hint to
 * run --help, and exit status EXIT_USAGE. Used by echo_options.c and
 * idle_holder's options. */
#ifndef ARCHBENCH_CLI_FLAGS_H
#define ARCHBENCH_CLI_FLAGS_H

#define EXIT_USAGE 2

void cli_set_program(const char *name);

/* Names the offending flag, the problem and the value (NULL: none) and exits with EXIT_USAGE. */
_Noreturn void cli_bad_usage(const char *flag, const char *problem, const char *value);

/* The value as an integer in [min, max], or a refusal naming the flag. */
long cli_long(const char *flag, const char *value, long min, long max);

/* The value as a number in [min, max], or a refusal naming the flag. */
double cli_double(const char *flag, const char *value, double min, double max);

/* "--name value" (advancing *i past the value) or "--name=value"; NULL if argv[*i] is not --name. */
const char *cli_flag_value(int argc, char **argv, int *i, const char *name);

#endif

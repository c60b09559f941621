/* Runs a libFuzzer harness over files and directories of inputs without
 * libFuzzer, so any compiler (and the sanitizer builds) can replay the seed
 * corpus as a regression test: replay_<harness> PATH... */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf != NULL && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap *= 2);
            if (grown == NULL)
                free(buf);
            buf = grown;
        }
    }
    fclose(f);
    if (buf == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    /* An exact-size copy, as libFuzzer passes it, so overreads are caught. */
    uint8_t *exact = malloc(len > 0 ? len : 1);
    if (exact == NULL) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    int failures = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            failures += replay_file(argv[i]);
            count++;
            continue;
        }
        DIR *dir = opendir(argv[i]);
        if (dir == NULL) {
            perror(argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                char **grown = realloc(names, cap * sizeof *names);
                if (grown == NULL)
                    return 1;
                names = grown;
            }
            size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[n] = malloc(len);
            if (names[n] == NULL)
                return 1;
            snprintf(names[n], len, "%s/%s", argv[i], e->d_name);
            n++;
        }
        closedir(dir);
        qsort(names, n, sizeof *names, compare_names);
        for (size_t k = 0; k < n; k++) {
            failures += replay_file(names[k]);
            count++;
            free(names[k]);
        }
        free(names);
    }
    if (count == 0) {
        fprintf(stderr, "no inputs\n");
        return 1;
    }
    printf("replayed %d inputs, %d unreadable\n", count, failures);
    return failures ? 1 : 0;
}

#include "responses.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A body larger than this is a mistake in the study set-up, not a response to pre-build. */
#define MAX_FILE_RESPONSE_BYTES ((size_t)64 << 20)

struct body {
    const char *content_type;
    const char *bytes;
    size_t len;
};

static const char *content_type_for(const char *path)
{
    static const struct {
        const char *suffix;
        const char *type;
    } types[] = {
        {".html", "text/html"},
        {".htm", "text/html"},
        {".txt", "text/plain"},
        {".css", "text/css"},
        {".js", "application/javascript"},
        {".json", "application/json"},
        {".png", "image/png"},
        {".jpg", "image/jpeg"},
        {".svg", "image/svg+xml"},
    };
    size_t path_len = strlen(path);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t n = strlen(types[i].suffix);
        if (path_len >= n && strcmp(path + path_len - n, types[i].suffix) == 0)
            return types[i].type;
    }
    return "application/octet-stream";
}

static char *read_whole_file(const char *path, size_t *len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_len, "--response file:%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "--response file:%s: not a regular file", path);
        fclose(f);
        return NULL;
    }
    if ((uintmax_t)st.st_size > MAX_FILE_RESPONSE_BYTES) {
        snprintf(err, err_len, "--response file:%s: larger than %zu bytes", path, MAX_FILE_RESPONSE_BYTES);
        fclose(f);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    char *bytes = malloc(size > 0 ? size : 1);
    if (bytes == NULL || fread(bytes, 1, size, f) != size) {
        snprintf(err, err_len, "--response file:%s: could not read %zu bytes", path, size);
        free(bytes);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = size;
    return bytes;
}

/* Header order and spelling follow source 000's response byte for byte. */
static size_t format_response(char *dst, size_t cap, const char *status, bool keep_alive, const struct body *body,
                              bool include_body)
{
    int n = snprintf(dst, cap, "HTTP/1.1 %s\r\nConnection: %s\r\nContent-Length: %zu\r\nContent-Type: %s\r\n\r\n",
                     status, keep_alive ? "keep-alive" : "close", body->len, body->content_type);
    size_t head = (size_t)n;
    if (include_body && dst != NULL && head + body->len <= cap)
        memcpy(dst + head, body->bytes, body->len);
    return head + (include_body ? body->len : 0);
}

struct error_spec {
    int status;
    const char *line;
    const char *text;
    struct prebuilt *slot;
};

/* N of "bytes:N", or 0 if it is not a decimal number within the bounds. */
static size_t parse_body_bytes(const char *digits)
{
    size_t n = 0;
    if (*digits == '\0')
        return 0;
    for (const char *p = digits; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || n > RESPONSE_BYTES_MAX)
            return 0;
        n = n * 10 + (size_t)(*p - '0');
    }
    return n >= RESPONSE_BYTES_MIN && n <= RESPONSE_BYTES_MAX ? n : 0;
}

bool responses_spec_valid(const char *spec, char *err, size_t err_len)
{
    if (strcmp(spec, "test") == 0 || strcmp(spec, "hello") == 0 || (strncmp(spec, "file:", 5) == 0 && spec[5] != '\0'))
        return true;
    if (strncmp(spec, "bytes:", 6) == 0) {
        if (parse_body_bytes(spec + 6) > 0)
            return true;
        snprintf(err, err_len, "--response bytes:N expects N, the body's size, an integer in [%d, %d], got '%s'",
                 RESPONSE_BYTES_MIN, RESPONSE_BYTES_MAX, spec + 6);
        return false;
    }
    snprintf(err, err_len, "--response: expected test, hello, file:PATH or bytes:N, got '%s'", spec);
    return false;
}

void responses_fill_pattern(char *dst, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char line[16];
    line[15] = '\n';
    for (size_t offset = 0; offset < len; offset += 16) {
        size_t value = offset;
        for (int digit = 14; digit >= 0; digit--, value >>= 4)
            line[digit] = hex[value & 15];
        size_t n = len - offset < 16 ? len - offset : 16;
        memcpy(dst + offset, line, n);
    }
}

bool responses_build(struct responses *r, const char *spec, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    if (!responses_spec_valid(spec, err, err_len))
        return false;
    struct body body = {0};
    char *body_bytes = NULL; /* a body read or generated here, freed once copied into the responses */
    if (strcmp(spec, "test") == 0) {
        body = (struct body){"text/html", "test", 4};
    } else if (strcmp(spec, "hello") == 0) {
        body = (struct body){"text/plain", "Hello World!", 12};
    } else if (strncmp(spec, "bytes:", 6) == 0) {
        size_t len = parse_body_bytes(spec + 6);
        body_bytes = malloc(len);
        if (body_bytes == NULL) {
            snprintf(err, err_len, "out of memory building responses");
            return false;
        }
        responses_fill_pattern(body_bytes, len);
        body = (struct body){"text/plain", body_bytes, len};
    } else {
        size_t len = 0;
        body_bytes = read_whole_file(spec + 5, &len, err, err_len);
        if (body_bytes == NULL)
            return false;
        body = (struct body){content_type_for(spec + 5), body_bytes, len};
    }

    struct error_spec errors[] = {
        {400, "400 Bad Request", "Bad Request\n", &r->bad_request},
        {408, "408 Request Timeout", "Request Timeout\n", &r->request_timeout},
        {413, "413 Content Too Large", "Content Too Large\n", &r->payload_too_large},
        {431, "431 Request Header Fields Too Large", "Request Header Fields Too Large\n", &r->header_too_large},
        {501, "501 Not Implemented", "Not Implemented\n", &r->not_implemented},
        {505, "505 HTTP Version Not Supported", "HTTP Version Not Supported\n", &r->version_not_supported},
    };
    size_t n_errors = sizeof errors / sizeof errors[0];

    size_t total = 0;
    for (int keep = 0; keep < 2; keep++)
        for (int head = 0; head < 2; head++)
            total += format_response(NULL, 0, "200 OK", keep, &body, !head) + 1;
    for (size_t i = 0; i < n_errors; i++) {
        struct body text = {"text/plain", errors[i].text, strlen(errors[i].text)};
        total += format_response(NULL, 0, errors[i].line, false, &text, true) + 1;
    }

    r->storage = malloc(total);
    if (r->storage == NULL) {
        snprintf(err, err_len, "out of memory building responses");
        free(body_bytes);
        return false;
    }
    char *cursor = r->storage;
    for (int keep = 0; keep < 2; keep++) {
        for (int head = 0; head < 2; head++) {
            size_t len = format_response(cursor, total - (size_t)(cursor - r->storage), "200 OK", keep, &body, !head);
            r->ok[keep][head] = (struct prebuilt){cursor, len};
            cursor += len + 1;
        }
    }
    for (size_t i = 0; i < n_errors; i++) {
        struct body text = {"text/plain", errors[i].text, strlen(errors[i].text)};
        size_t len = format_response(cursor, total - (size_t)(cursor - r->storage), errors[i].line, false, &text, true);
        *errors[i].slot = (struct prebuilt){cursor, len};
        cursor += len + 1;
    }
    free(body_bytes);
    return true;
}

const struct prebuilt *responses_for_error(const struct responses *r, int status)
{
    switch (status) {
    case 408: return &r->request_timeout;
    case 413: return &r->payload_too_large;
    case 431: return &r->header_too_large;
    case 501: return &r->not_implemented;
    case 505: return &r->version_not_supported;
    default: return &r->bad_request;
    }
}

void responses_free(struct responses *r)
{
    free(r->storage);
    memset(r, 0, sizeof *r);
}

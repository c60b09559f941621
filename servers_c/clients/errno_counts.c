/* The errno names both clients report; see errno_counts.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "errno_counts.h"

const char *errno_name(int err)
{
    static const struct {
        int err;
        const char *name;
    } names[] = {
        {ECONNREFUSED, "ECONNREFUSED"},
        {ECONNRESET, "ECONNRESET"},
        {ECONNABORTED, "ECONNABORTED"},
        {ETIMEDOUT, "ETIMEDOUT"},
        {EADDRNOTAVAIL, "EADDRNOTAVAIL"},
        {EADDRINUSE, "EADDRINUSE"},
        {EMFILE, "EMFILE"},
        {ENFILE, "ENFILE"},
        {ENOBUFS, "ENOBUFS"},
        {ENOMEM, "ENOMEM"},
        {EPIPE, "EPIPE"},
        {EHOSTUNREACH, "EHOSTUNREACH"},
        {ENETUNREACH, "ENETUNREACH"},
        {ENOTCONN, "ENOTCONN"},
        {EACCES, "EACCES"},
        {EPERM, "EPERM"},
        {EINVAL, "EINVAL"},
        {EIO, "EIO"},
        {EAGAIN, "EAGAIN"},
        {EINTR, "EINTR"},
        {EBADF, "EBADF"},
        {ENOSPC, "ENOSPC"},
        {EPROTO, "EPROTO"},
        {ENETDOWN, "ENETDOWN"},
    };
    if (err == 0)
        return "eof";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].err == err)
            return names[i].name;
    static _Thread_local char other[16];
    snprintf(other, sizeof other, "E%d", err);
    return other;
}

void print_errno_counts(FILE *out, const uint64_t *counts, enum count_format format)
{
    bool json = format == COUNTS_AS_JSON;
    bool first = true;
    for (size_t k = 0; k < ERRNO_SLOTS; k++) {
        if (counts[k] == 0)
            continue;
        if (json)
            fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", errno_name((int)k), counts[k]);
        else
            fprintf(out, "%s%s %" PRIu64, first ? "" : ", ", errno_name((int)k), counts[k]);
        first = false;
    }
    if (first && !json)
        fprintf(out, "none");
}

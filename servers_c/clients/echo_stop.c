/* The names of the stop reasons; see echo_stop.h. */
#include <stdio.h>

#include "echo_stop.h"
#include "errno_counts.h"

const char *stop_reason_text(int reason, int err, char *buf, size_t len)
{
    switch ((enum stop_reason)reason) {
    case STOP_NONE: return "none";
    case STOP_CAP: return "cap_reached";
    case STOP_CLIENT_FDS: snprintf(buf, len, "client_%s", errno_name(err)); return buf;
    case STOP_CONNECT_ERROR: snprintf(buf, len, "connect_%s", errno_name(err)); return buf;
    case STOP_CONNECT_TIMEOUT: return "connect_timeout";
    case STOP_ECHO_TIMEOUT: return "echo_timeout";
    case STOP_SERVER_CLOSED: return "server_closed";
    case STOP_SERVER_ERROR: snprintf(buf, len, "server_%s", errno_name(err)); return buf;
    case STOP_VERIFY: return "verify_error";
    case STOP_DURATION: return "duration_elapsed";
    case STOP_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}

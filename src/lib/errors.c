/* The one table of error texts behind baton_strerror(). */
#include "../../include/baton.h"

#include <stddef.h>

static const char *const texts[] = {
    [1] = "out of memory",
    [2] = "invalid argument",
    [3] = "malformed command or frame",
    [4] = "unsupported encoding version",
    [5] = "invalid lock name (must be 1..255 bytes without NUL)",
    [6] = "no such session",
    [7] = "session expired",
    [8] = "session closed",
    [9] = "lock is held by another owner",
    [10] = "not the holder of this lock",
    [11] = "stale token: not the current grant",
    [12] = "wait timed out",
    [13] = "wait cancelled",
    [14] = "not waiting for this lock",
    [15] = "already waiting for this lock",
    [16] = "too many sessions",
    [17] = "too many locks held or awaited by this session",
    [18] = "too many waiters for this lock",
    [19] = "too many unacknowledged requests in this session",
    [20] = "sequence number already acknowledged",
    [21] = "session TTL out of range",
    [22] = "lock mode not supported",
    [23] = "reentrancy count overflow",
    [24] = "snapshot corrupt or truncated",
    [25] = "no such lock",
    [26] = "not the leader",
    [27] = "outcome unknown: retry with the same sequence number",
    [28] = "frame too large",
    [29] = "too many connections",
    [30] = "cluster unavailable: no leader",
    [31] = "node is shutting down",
    [32] = "I/O error",
    [33] = "no space left on device",
    [34] = "a membership change is already in progress",
    [35] = "timed out waiting for an answer",
};

const char *baton_strerror(int code)
{
        size_t i;

        if (code == 0) {
                return "success";
        }
        if (code > 0) {
                return "unknown error";
        }
        i = (size_t) - (long long)code;
        if (i >= sizeof texts / sizeof texts[0] || texts[i] == NULL) {
                return "unknown error";
        }
        return texts[i];
}

/* The detail of the last error a libbaton call returned on the calling
 * thread: what baton_errmsg() reports. */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

#include "../../include/baton.h"

/*
 * One record per thread, as errno is. The API is synchronous and any
 * number of threads share a handle, so a detail kept in the handle would
 * be overwritten by another thread's call between a failure and the
 * caller's look at it; each thread's own record cannot be. The code is
 * kept beside the text so that a detail is never shown for a failure it
 * does not belong to.
 */
static _Thread_local struct {
        int code;
        char text[ERRMSG_MAX];
} last;

int errmsg_set(int code, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(last.text, sizeof last.text, fmt, ap);
        va_end(ap);
        last.code = last.text[0] != '\0' ? code : 0;
        return code;
}

const char *errmsg_get(int code)
{
        return code != 0 && last.code == code ? last.text : NULL;
}

const char *baton_errmsg(int code)
{
        const char *detail = errmsg_get(code);

        return detail != NULL ? detail : baton_strerror(code);
}

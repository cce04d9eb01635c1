/* The detail of the last error a libbaton call returned on the calling
 * thread: what baton_errmsg() reports. */
#ifndef CLIENT_ERRMSG_H
#define CLIENT_ERRMSG_H

#include <stddef.h>

/* Longest detail kept, with its NUL; a longer one is cut short. */
#define ERRMSG_MAX 1024

/*
 * Record, for the calling thread, that a call fails with `code` for the
 * reason printf-formatted from `fmt`: a text that stands alone, saying
 * what baton_strerror(code) says and more ("cannot connect: 127.0.0.1:7101:
 * connection refused"). Returns `code`, so that a failing path can end
 * with `return errmsg_set(BATON_EX, ...)`.
 */
int errmsg_set(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The detail recorded for `code` on the calling thread, or NULL when the
 * thread's last recorded failure is of another code. */
const char *errmsg_get(int code);

#endif /* CLIENT_ERRMSG_H */

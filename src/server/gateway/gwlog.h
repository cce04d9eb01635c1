/* The request core's log lines: formatted here, only at the levels the
 * core was given, and written by its host (gateway_host.log). */
#ifndef SERVER_GWLOG_H
#define SERVER_GWLOG_H

#include "../base/log.h"

struct gateway;

/* Bytes of a message with its NUL: a longer one is cut, where a JSON log
 * line cuts it (base/log.c); the core's messages are all far shorter. */
#define GWLOG_MAX 2048

/*
 * One line at `level` about `f` (borrowed for the call; NULL: nothing in
 * particular): `fmt` is formatted on the stack and handed to g's host,
 * when `level` is one the core was given (gateway_init()), or more
 * severe; otherwise nothing is formatted.
 */
void gwlog(struct gateway *g, enum log_level level, const struct log_fields *f,
           const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* SERVER_GWLOG_H */

/* A chaos worker's connection to the fenced register (docs/chaos.md,
 * "Fenced register"): one request line out, one answer line back. */
#ifndef CHAOS_REGCLIENT_H
#define CHAOS_REGCLIENT_H

#include <stddef.h>
#include <stdint.h>

/* The longest answer line accepted, newline excluded. */
#define REGCLIENT_LINE_MAX 256

/* What became of a request. */
enum {
        REGCLIENT_ANSWERED = 0, /* an answer line is in the reply buffer */
        REGCLIENT_NOT_SENT = 1, /* no connection: the register never saw it */
        REGCLIENT_LOST = 2,     /* sent (maybe in part), no answer: unknown */
};

struct regclient {
        const char *path; /* borrowed for the client's life */
        int worker;
        int timeout_ms; /* for one answer */
        int fd;         /* -1: not connected */
        char in[REGCLIENT_LINE_MAX + 1];
        size_t in_len;
};

/* Set up a client of the register at `path` (connects lazily). */
void regclient_init(struct regclient *rc, const char *path, int worker,
                    int timeout_ms);

/* Send `line` (no newline) and read the answer line into `reply` (`cap`
 * bytes, NUL-terminated, newline stripped). Connects first if needed,
 * introducing itself with HELLO. Returns REGCLIENT_ANSWERED,
 * REGCLIENT_NOT_SENT or REGCLIENT_LOST; after the last two the connection
 * is closed and the next request connects anew. */
int regclient_request(struct regclient *rc, const char *line, char *reply,
                      size_t cap);

/* Close the connection, if any. */
void regclient_close(struct regclient *rc);

#endif /* CHAOS_REGCLIENT_H */

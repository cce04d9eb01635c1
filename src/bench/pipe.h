/* Requests pipelined on one wire (wire.h): up to a window of them in
 * flight, each answered by exactly one frame, optionally paced. The fill
 * and the session storms send their thousands of requests through it. */
#ifndef BENCH_PIPE_H
#define BENCH_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* Frame number `i` (0-based) into `out` (`cap` bytes): its length, or 0
 * when it cannot be encoded (the run then breaks). */
typedef size_t (*pipe_frame_cb)(void *data, uint64_t i, uint8_t *out,
                                size_t cap);
/* How many frames may have been sent by `now` (wire_now()'s seconds). */
typedef uint64_t (*pipe_due_cb)(void *data, double now);

struct pipe_job {
        uint64_t total; /* frames to send */
        long window;    /* sent and not yet answered, at most */
        pipe_frame_cb frame;
        wire_frame_cb answer;    /* every frame from the node */
        pipe_due_cb due;         /* NULL: as fast as the window allows */
        const int *stop;         /* NULL, or set (by another thread) to end
                                    the job early, once what was sent is
                                    answered */
        void *data;              /* given to the callbacks */
        uint64_t sent, answered; /* out */
};

/*
 * Send the job's frames and wait for every answer: 0, or -1 with `why`
 * (`size` bytes) saying what broke it: the connection (its wire's why), a
 * frame that cannot be encoded, or no answer for 30 s.
 */
int pipe_run(struct wire *w, struct pipe_job *job, char *why, size_t size);

#endif /* BENCH_PIPE_H */

/* Pipelined requests on one wire (pipe.h). */
#include "pipe.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../proto/command.h"
#include "../proto/proto.h"

#define SILENCE_S 30.0 /* no answer for this long: the run is broken */
#define OUT_MAX   (64 * 1024)
#define PACE_MS   5 /* a paced job's longest sleep between sends */

struct run {
        struct pipe_job *job;
        char *why;
        size_t size;
};

static int fail(struct run *r, const char *what)
{
        snprintf(r->why, r->size, "%s", what);
        return -1;
}

static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body)
{
        struct pipe_job *job = data;

        job->answered++;
        job->answer(job->data, h, body);
}

static uint64_t limit(const struct pipe_job *job)
{
        uint64_t n = job->total;

        if (job->stop != NULL && __atomic_load_n(job->stop, __ATOMIC_ACQUIRE)) {
                return job->sent; /* nothing more */
        }
        if (job->due != NULL) {
                uint64_t due = job->due(job->data, wire_now());
                n = due < n ? due : n;
        }
        return n;
}

/* Build frames up to the window, the output cap, the pace, or the end. */
static int build(struct wire *w, struct run *r)
{
        struct pipe_job *job = r->job;
        size_t room = PROTO_HEADER_SIZE + COMMAND_MAX_SIZE;
        uint64_t n = limit(job);

        while (job->sent < n &&
               job->sent - job->answered < (uint64_t)job->window &&
               w->out_len < OUT_MAX && wire_ready(w)) {
                uint8_t *p = wire_room(w, room);
                size_t len =
                    p != NULL ? job->frame(job->data, job->sent, p, room) : 0;
                if (len == 0) {
                        return fail(r, p == NULL ? w->why
                                                 : "cannot encode a request");
                }
                wire_commit(w, len);
                job->sent++;
        }
        return wire_seal(w) == 0 ? 0 : fail(r, w->why);
}

static bool finished(const struct pipe_job *job)
{
        bool stopped =
            job->stop != NULL && __atomic_load_n(job->stop, __ATOMIC_ACQUIRE);

        return job->answered == job->sent &&
               (job->sent == job->total || stopped);
}

int pipe_run(struct wire *w, struct pipe_job *job, char *why, size_t size)
{
        struct run r = {job, why, size};
        double heard = wire_now();
        uint64_t answered = job->answered;
        int wait_ms = job->due != NULL || job->stop != NULL ? PACE_MS : 1000;

        while (!finished(job)) {
                struct pollfd pfd = {w->fd, POLLIN, 0};
                if (build(w, &r) != 0) {
                        return -1;
                }
                pfd.events |= w->cipher_len > 0 ? POLLOUT : 0;
                if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR) {
                        return fail(&r, strerror(errno));
                }
                if ((pfd.revents & POLLOUT) && wire_send(w) != 0) {
                        return fail(&r, w->why);
                }
                if ((pfd.revents & (POLLIN | POLLHUP | POLLERR)) &&
                    wire_receive(w, on_frame, job) != 0) {
                        return fail(&r, w->why);
                }
                if (job->answered != answered || job->answered == job->sent) {
                        answered = job->answered;
                        heard = wire_now();
                } else if (wire_now() - heard > SILENCE_S) {
                        return fail(&r, "no answer for 30 s");
                }
        }
        return 0;
}

/* A short-lived link driven on the caller's thread. */
#include "drive.h"

#include <errno.h>
#include <poll.h>

#include "../../include/baton.h"
#include "clock.h"
#include "errmsg.h"

void drive_link(struct linkio *io, int *rv, int64_t deadline,
                int64_t (*turn)(void *data, int64_t now), void *data,
                const bool *sent)
{
        struct link *l = io->link;
        uint64_t mark = l->reach.pass;
        char why[ERRMSG_MAX];

        while (*rv == 1) {
                int64_t now = clock_now_ms();
                int64_t until = linkio_next_event(io, true), next;
                struct pollfd pfd;
                int n, code;
                code = reach_answer(&l->reach, mark, sent != NULL && *sent,
                                    now >= deadline, why, sizeof why);
                if (code != 0) {
                        *rv = errmsg_set(code, "%s", why);
                        return;
                }
                link_dial(l, now, true);
                linkio_step(io, now, l->conn);
                next = turn != NULL && *rv == 1 ? turn(data, now) : CLOCK_NEVER;
                if (*rv != 1) {
                        return;
                }
                if (linkio_busy(io)) {
                        linkio_flush(io, now);
                }
                until = next < until ? next : until;
                until = until < deadline ? until : deadline;
                pfd.events = linkio_events(io);
                pfd.fd = io->fd;
                pfd.revents = 0;
                n = poll(&pfd, pfd.events != 0 ? 1 : 0,
                         (int)(until > now ? until - now : 0));
                if (n < 0 && errno != EINTR) {
                        *rv = BATON_EIO;
                } else if (n > 0) {
                        linkio_ready(io, pfd.revents, clock_now_ms());
                }
        }
}

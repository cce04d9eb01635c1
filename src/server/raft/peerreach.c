/* Which raft peers this node cannot reach, and why (peerreach.h). */
#include "peerreach.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <uv.h>

#include "../base/log.h"

static struct peerreach_peer *find(struct peerreach *r, uint64_t id, bool add)
{
        unsigned i;

        for (i = 0; i < r->n; i++) {
                if (r->peers[i].id == id) {
                        return &r->peers[i];
                }
        }
        if (!add || r->n == PEERREACH_MAX) {
                return NULL;
        }
        memset(&r->peers[r->n], 0, sizeof r->peers[0]);
        r->peers[r->n].id = id;
        return &r->peers[r->n++];
}

void peerreach_failed(struct peerreach *r, uint64_t id, const char *address,
                      const char *why, uint64_t started, uint64_t now)
{
        struct peerreach_peer *p = find(r, id, true);

        if (p == NULL) {
                return; /* more peers than members: not tracked */
        }
        if (!p->down) {
                p->down = true;
                p->since = started;
        }
        if (p->said || now - p->since < PEERREACH_GRACE_MS) {
                return;
        }
        p->said = true;
        log_warn("raft peer node %" PRIu64 " at %s cannot be reached: %s "
                 "(for %" PRIu64 " ms; said once until it is reached again)",
                 id, address, why, now - p->since);
}

void peerreach_reached(struct peerreach *r, uint64_t id, const char *address)
{
        struct peerreach_peer *p = find(r, id, false);

        if (p == NULL || !p->down) {
                return;
        }
        p->down = false;
        if (!p->said) {
                return;
        }
        p->said = false;
        log_info("raft peer node %" PRIu64 " at %s reached again", id, address);
}

bool peerreach_down(const struct peerreach *r, uint64_t id)
{
        unsigned i;

        for (i = 0; i < r->n; i++) {
                if (r->peers[i].id == id) {
                        return r->peers[i].down;
                }
        }
        return false;
}

const char *peerreach_why(int uverr, char *buf, size_t size)
{
        const char *kind;

        switch (uverr) {
        case UV_ECONNREFUSED:
                kind = "refused";
                break;
        case UV_ETIMEDOUT:
                kind = "timed out";
                break;
        case UV_EHOSTUNREACH:
        case UV_ENETUNREACH:
                kind = "no route";
                break;
        default:
                snprintf(buf, size, "%s", uv_strerror(uverr));
                return buf;
        }
        snprintf(buf, size, "%s (%s)", kind, uv_strerror(uverr));
        return buf;
}

/* libbaton's membership changes and leadership transfer (include/baton.h),
 * each refusal told in baton_errmsg() with what the cluster's member list
 * says about it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../lib/address.h"
#include "../proto/proto.h"
#include "client.h"
#include "clock.h"
#include "drive.h"
#include "errmsg.h"
#include "link.h"
#include "linkio.h"
#include "members.h"
#include "request.h"

/* The leader's member list, for a refusal's detail; false when it cannot
 * be had (the detail then says less). */
static bool members(baton_client *c, struct baton_status *st)
{
        return baton_status(c, NULL, st) == 0;
}

const struct baton_member *members_find(const struct baton_status *st,
                                        uint64_t id)
{
        unsigned i;

        for (i = 0; i < st->n_members && i < 16; i++) {
                if (st->members[i].id == id) {
                        return &st->members[i];
                }
        }
        return NULL;
}

static const char *role_name(int role)
{
        return role == BATON_MEMBER_VOTER     ? "voter"
               : role == BATON_MEMBER_STANDBY ? "standby"
                                              : "spare";
}

/* "1, 2, 3": the members' ids, into `buf`. */
static const char *ids(const struct baton_status *st, char *buf, size_t cap)
{
        size_t at = 0;
        unsigned i;

        buf[0] = '\0';
        for (i = 0; i < st->n_members && i < 16 && at < cap; i++) {
                at += (size_t)snprintf(buf + at, cap - at, "%s%" PRIu64,
                                       i > 0 ? ", " : "", st->members[i].id);
        }
        return buf;
}

/* BATON_ENOMEMBER for `id`, naming the members there are. */
static int no_member(baton_client *c, uint64_t id)
{
        struct baton_status st;
        char list[16 * 22];

        if (!members(c, &st)) {
                return errmsg_set(BATON_ENOMEMBER, "no member %" PRIu64, id);
        }
        return errmsg_set(BATON_ENOMEMBER,
                          "no member %" PRIu64 " (the members are %s)", id,
                          ids(&st, list, sizeof list));
}

/* The detail of a change refused because another one runs. */
static int busy(int rv)
{
        return errmsg_set(rv, "a membership change is already in progress: "
                              "wait until the member list shows it done, "
                              "then ask again");
}

/* An address of a member being added: 0, or BATON_EINVAL saying why. */
static int check_address(const char *what, const char *s, bool raft)
{
        struct address a;

        if (s == NULL) {
                return errmsg_set(BATON_EINVAL, "no %s address", what);
        }
        if (address_parse(s, &a) != 0) {
                return errmsg_set(
                    BATON_EINVAL, "%s address \"%s\": %s (expected %s)", what,
                    s, a.errmsg, raft ? "host:port" : ADDRESS_FORMS);
        }
        if (raft && a.kind == ADDRESS_IPV6) {
                return errmsg_set(BATON_EINVAL,
                                  "raft address \"%s\": libraft 0.22.1 cannot "
                                  "use an IPv6 raft address (expected "
                                  "a.b.c.d:port or host:port)",
                                  s);
        }
        return 0;
}

/* The no answer of a MEMBER_ADD: what the caller can do about it. */
static int add_unanswered(uint64_t id, int rv)
{
        char was[ERRMSG_MAX];

        snprintf(was, sizeof was, "%s", baton_errmsg(rv));
        return errmsg_set(rv,
                          "%s; member %" PRIu64 " may still be added: the "
                          "member list shows where it got to; add it again "
                          "with the same addresses to finish, or remove it "
                          "to undo",
                          was, id);
}

/* What a refused MEMBER_ADD ran into, from the member list. */
static int add_refused(baton_client *c, uint64_t id, const char *raft,
                       const char *client, int rv)
{
        struct baton_status st;
        const struct baton_member *m;
        bool known = members(c, &st);
        unsigned i;

        if (rv == BATON_EIDINUSE && known &&
            (m = members_find(&st, id)) != NULL) {
                return errmsg_set(rv,
                                  "member %" PRIu64 " exists already, as a "
                                  "%s at %s (clients %s): remove it first, or "
                                  "add the new node under another id",
                                  id, role_name(m->role), m->raft_address,
                                  m->client_address);
        }
        for (i = 0; rv == BATON_EADDRINUSE && known && i < st.n_members; i++) {
                m = &st.members[i];
                const char *a = strcmp(m->raft_address, raft) == 0 ||
                                        strcmp(m->client_address, raft) == 0
                                    ? raft
                                    : client;
                if (strcmp(m->raft_address, a) == 0 ||
                    strcmp(m->client_address, a) == 0) {
                        return errmsg_set(
                            rv, "address %s is member %" PRIu64 "'s already", a,
                            m->id);
                }
        }
        if (rv == BATON_EUNREACHABLE && known &&
            (m = members_find(&st, id)) != NULL) {
                return errmsg_set(rv,
                                  "member %" PRIu64 " stopped answering at %s "
                                  "while it caught up, and is left a %s: add "
                                  "it again with the same addresses once it "
                                  "runs, or remove it",
                                  id, raft, role_name(m->role));
        }
        if (rv == BATON_EUNREACHABLE) {
                return errmsg_set(rv,
                                  "no node answers as member %" PRIu64
                                  " at %s (is batond running there, with "
                                  "join = true and this cluster's CA?); "
                                  "nothing was changed",
                                  id, raft);
        }
        return rv == BATON_ECANTCHANGE ? busy(rv) : rv;
}

int baton_member_add(baton_client *c, uint64_t id, const char *raft_address,
                     const char *client_address)
{
        struct request *r;
        int rv;

        if (c == NULL) {
                return BATON_EINVAL;
        }
        if (id == 0) {
                return errmsg_set(BATON_EINVAL, "member id 0 (ids start at 1)");
        }
        rv = check_address("raft", raft_address, true);
        if (rv == 0) {
                rv = check_address("client", client_address, false);
        }
        if (rv != 0) {
                return rv;
        }
        r = request_member_add(id, raft_address, client_address, &rv);
        if (r == NULL) {
                return rv;
        }
        /* Sent again on the handle's next connection when the answer is
         * lost: the leader then carries on where the first send got to. */
        rv = client_ask(c, r);
        if (rv == BATON_ENOANSWER) {
                return add_unanswered(id, rv);
        }
        return rv == 0 ? 0
                       : add_refused(c, id, raft_address, client_address, rv);
}

/* --- Requests sent once ---------------------------------------------------
 *
 * MEMBER_REMOVE and TRANSFER go over a connection of their own, and are
 * sent again only when the cluster cannot have acted on them: after a
 * NOT_LEADER, or a RESULT saying the node does not lead. The handle's
 * connection sends a request again whenever it reconnects, which may
 * follow a refused keepalive while the leader hands over: a TRANSFER to
 * any voter would then move leadership twice, and a removal done already
 * would come back as "no such member". A MEMBER_REMOVE is sent again too
 * when its outcome is unknown (the connection closed, or leadership was
 * lost), and a later "no such member" then means it was done; a TRANSFER
 * is not, and fails with BATON_ENOANSWER.
 *
 * A PING follows the request on each connection: a node that took the
 * connection but does not answer it within ONCE_SILENT_MS (one stopped
 * with SIGSTOP: the kernel completes the connection) has read neither,
 * and the request goes to another node. The leader answers a PING at
 * once, even while it transfers. */

#define ONCE_SILENT_MS 1000

struct once {
        struct link link;
        struct linkio io;
        uint8_t frame[MEMBERS_FRAME_MAX];
        size_t len;
        bool again;              /* send it again after an unknown outcome */
        uint64_t id;             /* the frame id of the last send */
        uint64_t ping;           /* the PING's that followed it */
        int64_t sent_ms;         /* when; 0 once the PONG came */
        bool resend;             /* send on the next connection */
        bool unknown;            /* an earlier send may have been acted on */
        bool went_out;           /* sent at least once: may have been */
        unsigned long redirects; /* link.redirects at the last send */
        struct proto_result res;
        const struct members_reply *reply; /* NULL: a RESULT only */
        int rv; /* 1 while waiting; then 0 (answered: res) or an error */
};

static void once_send(struct once *o, int64_t now)
{
        uint8_t ping[PROTO_HEADER_SIZE];

        o->id = link_put(&o->link, o->frame, o->len);
        o->ping = link_put(&o->link, ping,
                           proto_write_empty(ping, sizeof ping, 0, PROTO_PING));
        o->sent_ms = now;
        o->went_out = true;
        o->resend = false;
        o->redirects = o->link.redirects;
        if (o->id == 0 || o->ping == 0) {
                o->rv = BATON_ENOMEM;
        }
}

/* drive_link()'s turn: a node silent since the send has read nothing. */
static int64_t once_turn(void *data, int64_t now)
{
        struct once *o = data;

        if (o->sent_ms == 0 || !link_up(&o->link)) {
                return CLOCK_NEVER;
        }
        if (now < o->sent_ms + ONCE_SILENT_MS) {
                return o->sent_ms + ONCE_SILENT_MS;
        }
        o->sent_ms = 0;
        o->resend = true;
        link_fail(&o->link, now, true);
        return now; /* a turn again at once, to connect elsewhere */
}

static void once_connected(void *data, int64_t now)
{
        struct once *o = data;

        if (o->resend || o->link.redirects != o->redirects) {
                once_send(o, now);
                return;
        }
        /* The connection closed after the send, with no NOT_LEADER. */
        if (!o->again) {
                o->rv = errmsg_set(BATON_ENOANSWER,
                                   "the connection to the leader closed "
                                   "before it answered: the cluster's status "
                                   "says what became of the request");
                return;
        }
        o->unknown = true;
        once_send(o, now);
}

static void once_frame(void *data, const struct proto_header *h,
                       const uint8_t *body, int64_t now)
{
        struct once *o = data;
        struct proto_result res;

        if (h->type == PROTO_PONG && h->id == o->ping) {
                o->sent_ms = 0; /* alive: it read the request too */
                return;
        }
        if (h->id != o->id) {
                return;
        }
        if (o->reply != NULL && h->type == o->reply->type) {
                o->rv = o->reply->cb(o->reply->data, body, h->length);
                return;
        }
        if (h->type != PROTO_RESULT ||
            proto_read_result(body, h->length, 0, &res) != 0) {
                o->rv = BATON_EMALFORMED;
                return;
        }
        switch (res.status) {
        case BATON_EUNKNOWN:
        case BATON_EUNAVAILABLE:
        case BATON_ESHUTDOWN:
                if (!o->again) {
                        o->rv = res.status;
                        return;
                }
                o->unknown = true;
                /* fall through */
        case BATON_ENOTLEADER: /* not acted on: not leader, or busy */
                o->resend = true;
                link_no_leader(&o->link, now);
                return;
        default:
                o->res = res;
                o->rv = 0;
        }
}

static void once_closed(void *data, uint64_t gen, int64_t now)
{
        (void)data;
        (void)gen;
        (void)now;
}

int members_ask(baton_client *c, const uint8_t *frame, size_t len, bool again,
                const struct members_reply *reply, struct proto_result *res,
                bool *unknown)
{
        static const struct link_cb cb0 = {NULL, once_connected, once_frame,
                                           once_closed, NULL};
        struct link_cb cb = cb0;
        struct once o;
        int rv;

        if (len == 0 || len > sizeof o.frame) {
                return BATON_EINVAL;
        }
        memset(&o, 0, sizeof o);
        o.rv = 1;
        o.resend = true;
        o.again = again;
        o.reply = reply;
        memcpy(o.frame, frame, len);
        o.len = len;
        rv = link_init(&o.link, (const char(*)[LINK_ADDR_MAX])c->endpoints,
                       c->n_endpoints, clock_env());
        if (rv != 0) {
                return rv;
        }
        rv = linkio_init(&o.io, &o.link, c->tls);
        if (rv != 0) {
                link_close(&o.link);
                return rv;
        }
        cb.data = &o;
        link_listen(&o.link, &cb);
        /* Until it first goes out, no node can have acted on it: a pass
         * that reaches none ends the call at once. */
        drive_link(&o.io, &o.rv,
                   clock_after(clock_now_ms(), c->opts.request_timeout_ms),
                   once_turn, &o, &o.went_out);
        linkio_close(&o.io);
        link_close(&o.link);
        *res = o.res;
        *unknown = o.unknown;
        return o.rv;
}

/* Send a request of `type` with the u64 body `v`, as above; 0 with its
 * RESULT in `*res`, or BATON_ENOANSWER, BATON_ETLS, BATON_ENOMEM. */
static int ask_once(baton_client *c, uint8_t type, uint64_t v, bool again,
                    struct proto_result *res, bool *unknown)
{
        uint8_t frame[PROTO_HEADER_SIZE + 8];
        size_t len = proto_write_id(frame, sizeof frame, 0, type, v);

        return members_ask(c, frame, len, again, NULL, res, unknown);
}

int baton_member_remove(baton_client *c, uint64_t id)
{
        struct proto_result res;
        bool unknown = false;
        int rv;

        if (c == NULL) {
                return BATON_EINVAL;
        }
        if (id == 0) {
                return errmsg_set(BATON_EINVAL, "member id 0 (ids start at 1)");
        }
        rv = ask_once(c, PROTO_MEMBER_REMOVE, id, true, &res, &unknown);
        rv = rv != 0 ? rv : res.status;
        if (rv == BATON_ENOMEMBER && unknown) {
                return 0; /* removed by a send whose answer was lost */
        }
        if (rv == BATON_ENOMEMBER) {
                return no_member(c, id);
        }
        return rv == BATON_ECANTCHANGE ? busy(rv) : rv;
}

/* --- Leadership transfer -------------------------------------------------- */

/* The detail of a refused TRANSFER to `id`. */
static int transfer_refused(baton_client *c, uint64_t id, int rv)
{
        struct baton_status st;
        const struct baton_member *m;

        switch (rv) {
        case BATON_ENOMEMBER:
                return no_member(c, id);
        case BATON_EISLEADER:
                return errmsg_set(rv, "member %" PRIu64 " leads already", id);
        case BATON_ENOTVOTER:
                if (id == 0) {
                        return errmsg_set(rv, "no member but the leader "
                                              "votes: none can take over");
                }
                m = members(c, &st) ? members_find(&st, id) : NULL;
                return errmsg_set(rv,
                                  "member %" PRIu64 " is a %s, not a voter: "
                                  "only a voter can lead",
                                  id, m != NULL ? role_name(m->role) : "spare");
        case BATON_EUNREACHABLE:
                return errmsg_set(
                    rv,
                    "%s did not take over in time: down, or too far behind "
                    "(the leader kept leading; a node that was only paused "
                    "may still take over when it resumes)",
                    id == 0 ? "no voter" : "the member");
        case BATON_ENOANSWER:
                return errmsg_set(rv,
                                  "no answer within %u ms: leadership may "
                                  "still move; the cluster's status says "
                                  "who leads",
                                  (unsigned)c->opts.request_timeout_ms);
        default:
                return rv;
        }
}

/* Between two questions to a cluster that is electing. */
#define ELECTING_POLL_MS 50

/* Leadership left the node that led, and it knew no successor yet (it
 * steps down when the member asked for starts its election, before anyone
 * has won it; another member may win instead): ask the cluster's status
 * until a leader is known, within the handle's request timeout. The
 * leader's id, or 0 when none was known by then. */
static uint64_t successor(baton_client *c)
{
        int64_t deadline =
            clock_after(clock_now_ms(), c->opts.request_timeout_ms);
        struct timespec pause = {0, ELECTING_POLL_MS * 1000000L};
        struct baton_status st;

        while (clock_now_ms() < deadline) {
                if (baton_status(c, NULL, &st) == 0 && st.leader_id != 0) {
                        return st.leader_id;
                }
                nanosleep(&pause, NULL);
        }
        return 0;
}

int baton_transfer_to(baton_client *c, uint64_t id, uint64_t *from,
                      uint64_t *to)
{
        struct proto_result res;
        bool unknown = false;
        int rv;

        if (from != NULL) {
                *from = 0;
        }
        if (to != NULL) {
                *to = 0;
        }
        if (c == NULL) {
                return BATON_EINVAL;
        }
        rv = ask_once(c, PROTO_TRANSFER, id, false, &res, &unknown);
        rv = rv != 0 ? rv : res.status;
        if (rv != 0) {
                return transfer_refused(c, id, rv);
        }
        /* A node of an older release answers when the transfer starts,
         * saying nothing of where it went. */
        if (res.kind == PROTO_KIND_TRANSFERRED) {
                if (from != NULL) {
                        *from = res.session;
                }
                if (to != NULL) {
                        *to = res.owner != 0 ? res.owner : successor(c);
                }
        }
        return 0;
}

int baton_transfer(baton_client *c, uint64_t id)
{
        return baton_transfer_to(c, id, NULL, NULL);
}

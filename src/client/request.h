/* One request of libbaton on its way to the cluster: what it is, where it
 * is in its life, the frame, kept so that every retry sends the same bytes
 * (the same seq), and its answer. */
#ifndef CLIENT_REQUEST_H
#define CLIENT_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../proto/command.h"
#include "../lib/queue.h"
#include "../proto/proto.h"
#include "../proto/reply.h"
#include "../proto/watch.h"

/* The room of a request's frame but a MULTI's (sized to fit it): a
 * COMMAND with the largest single-name command. */
#define REQUEST_FRAME_MAX (PROTO_HEADER_SIZE + COMMAND_MAX_SIZE)

/*
 * What a request is, fixed when it is made: whose it is and what it means
 * for the handle's session. A caller waits for the first four; the library
 * makes and finishes the others.
 */
enum request_kind {
        REQUEST_CALL = 1, /* a read or an administrative request */
        REQUEST_COMMAND,  /* a command of the handle's session */
        REQUEST_WAIT,     /* an ACQUIRE that may wait: answered when final */
        REQUEST_FOREIGN,  /* a command of another (detached) session */
        REQUEST_OPEN,     /* the session's OPEN */
        REQUEST_KEEPALIVE,
        REQUEST_PING,     /* the heartbeat */
        REQUEST_WITHDRAW, /* the CANCEL of a wait whose caller gave up */
        REQUEST_RELEASE,  /* the RELEASE of a grant nobody waits for */
        REQUEST_RECHECK,  /* QUERY: was a forgotten ACQUIRE granted? */
        REQUEST_VERIFY,   /* QUERY of every holder: is a hold still there
                             after its session saw a grant revoked? */
        REQUEST_WATCH,    /* a caller's WATCH: pending until it ends */
        REQUEST_UNWATCH,  /* the UNWATCH of a watch closed */
};

/*
 * Where a request is in its life. The registry makes every transition:
 *
 *   AWAITED    -> DONE        the final answer: the cluster's, or a
 *                             failure given here (the session ended, the
 *                             server refused the frame)
 *   AWAITED    -> BACKGROUND  the caller gave up on a command already sent:
 *                             it must still be decided (its seq is used)
 *   AWAITED    -> freed       the caller gave up on a read, or on a
 *                             command never sent
 *   BACKGROUND -> ENDED       the final answer (also: a keepalive whose
 *                             connection closed); the owner follows it up
 *                             (a late grant is released), then it is freed
 *   BACKGROUND -> freed       dropped without an answer: a withdrawn wait
 *                             whose CANCEL was answered CANCELLED, a ping
 *                             answered or lost with its connection, the
 *                             keepalive of a detached session
 *   DONE       -> freed       the caller collected the answer
 *
 * The library's kinds start BACKGROUND, the callers' AWAITED. AWAITED and
 * BACKGROUND are pending: sent, and resent, until final. At shutdown every
 * request is freed, whatever its state.
 */
enum request_state {
        REQUEST_AWAITED = 1, /* pending; a caller waits for it */
        REQUEST_BACKGROUND,  /* pending; the library finishes it */
        REQUEST_DONE,        /* final; its caller has yet to collect it */
        REQUEST_ENDED,       /* final; followed up, then freed */
};

/*
 * Lifetime: a caller or the library makes a request (a REQUEST_CALL until
 * its maker says otherwise) and hands it to the handle's registry, which
 * links it into its list (creation order, which is also the order of sends
 * and resends) and owns it from then on. A BACKGROUND wait (REQUEST_WAIT
 * whose caller gave up) is withdrawn: each send of it on a connection is
 * followed by a CANCEL.
 */
struct request {
        struct queue link;
        uint8_t type;     /* enum proto_type of the frame */
        uint8_t cmd;      /* enum command_type, for PROTO_COMMAND */
        uint8_t kind;     /* enum request_kind */
        uint8_t state;    /* enum request_state */
        uint8_t name_len; /* ACQUIRE, RELEASE, CANCEL, QUERY, CHECK; LIST's
                             prefix */
        uint8_t mode;     /* ACQUIRE: COMMAND_MODE_* */
        uint32_t permits; /* ACQUIRE of a semaphore: k of `limit` */
        uint32_t limit;
        uint64_t session;       /* commands: the session in the frame */
        uint64_t seq;           /* commands other than OPEN */
        uint64_t owner;         /* ACQUIRE, RELEASE; RECHECK */
        uint32_t before;        /* ACQUIRE: the owner's holds when it started */
        struct request *cancel; /* a withdrawn wait: its CANCEL in flight */
        uint64_t withdrawn_gen; /* a withdrawn wait: connection of the last
                                   CANCEL */
        struct request *target; /* WITHDRAW: its wait */
        char name[COMMAND_NAME_MAX]; /* a MULTI's: its first */
        /* Sending. */
        uint64_t gen;          /* connection it was last sent on; 0: none */
        uint64_t id;           /* frame id of the last send */
        int64_t sent_ms;       /* time of the last send */
        int64_t first_sent_ms; /* time of the first send; 0: never sent */
        int64_t not_before;    /* no resend before (after EUNKNOWN) */
        unsigned sends;
        uint64_t mark; /* the link's pass when it was submitted (reach.h) */
        /* The answer. */
        int status;
        struct proto_result res; /* res.client_name points at client_name */
        char client_name[PROTO_CLIENT_NAME_MAX + 1]; /* QUERY: the holder's */
        uint32_t ttl_ms;                             /* KEEPALIVE_OK */
        uint32_t revoked;      /* KEEPALIVE_OK: the session's revoked grants */
        uint64_t verify_token; /* VERIFY: the token of the hold */
        struct baton_status *reply;   /* STATUS: owned, filled on answer */
        struct baton_lock_info *list; /* LIST: owned, list_cap entries */
        uint32_t list_cap;            /* LIST: the limit asked for */
        uint32_t list_n;              /* LIST: entries filled on answer */
        bool list_more;               /* LIST: the server left some out */
        /* QUERY of every holder: owned, list_cap entries, list_n filled. */
        struct baton_grant *grants;
        /* The same, or a LIST's, with values: owned, each grant's (each
         * lock's), or NULL when not asked for. */
        char (*values)[BATON_VALUE_MAX + 1];
        /* QUERY of an election's leader: owned, filled on answer. */
        struct baton_leader *leader;
        /* WATCH: its events' queue (client/watch.c), whether the server
         * said WATCHING on the current connection, and whether `name` is
         * a prefix. */
        struct baton_watch *watch;
        bool watching;
        bool watch_prefix;
        /* Equal for the WATCHes of a handle with the same name (or
         * prefix) and flags, different otherwise (registry.c): an event
         * is matched against each name once, not once per watch. */
        uint64_t watch_name_id;
        /* The frame, frame_cap bytes; its id is rewritten for each send. */
        size_t len;
        size_t frame_cap;
        uint8_t frame[];
};

/* Whether `r` has no final answer yet. */
static inline bool request_pending(const struct request *r)
{
        return r->state == REQUEST_AWAITED || r->state == REQUEST_BACKGROUND;
}

/* Whether `r` holds the session's ack at or below its seq until final:
 * every command of the handle's session but a wait (the cluster may
 * forget a waiting ACQUIRE's outcome: a long wait never stalls the
 * window) and OPEN. */
static inline bool request_pins_ack(const struct request *r)
{
        return r->kind == REQUEST_COMMAND || r->kind == REQUEST_WITHDRAW ||
               r->kind == REQUEST_RELEASE ||
               (r->kind == REQUEST_RECHECK && r->type == PROTO_COMMAND);
}

/*
 * A command request for `k` (copied; its session, seq and ack must be set
 * for every type but OPEN). NULL on BATON_ENOMEM; `*rv` gets BATON_ENAME
 * or BATON_EINVAL when `k` does not encode, BATON_ENOMEM otherwise.
 */
struct request *request_command(const struct command *k, int *rv);

/* A request with a body-less frame (PING, STATUS) or one u64 (KEEPALIVE,
 * MEMBER_REMOVE, TRANSFER). NULL when out of memory. */
struct request *request_empty(uint8_t type);
struct request *request_u64(uint8_t type, uint64_t v);

/* A KEEPALIVE of `session` asking for the count of its revoked grants
 * (PROTO_FLAG_REVOKED). NULL when out of memory. */
struct request *request_keepalive(uint64_t session);

/* QUERY or CHECK of `name` (1..255 bytes). NULL when out of memory. */
struct request *request_read(uint8_t type, const char *name, uint8_t name_len,
                             uint64_t token);

/* LIST of `prefix` (0..255 bytes) with `limit` (1..PROTO_LIST_MAX) and
 * room for the answer, with client names (PROTO_FLAG_NAMES) and, if
 * `values`, each lock's value (PROTO_FLAG_VALUES, kept in r->values).
 * NULL when out of memory. */
struct request *request_list(const char *prefix, uint8_t prefix_len,
                             uint32_t limit, bool values);

/* QUERY of every holder of `name` (PROTO_FLAG_HOLDERS; with
 * PROTO_FLAG_VALUES too if `values`, kept in r->values), with room for
 * `limit` of them (a reply of more is malformed). NULL when out of
 * memory. */
struct request *request_holders(const char *name, uint8_t name_len,
                                uint32_t limit, bool values);

/* QUERY of the leader of the election `name`: every holder with values
 * (PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES), the first of them kept in
 * r->leader. NULL when out of memory. */
struct request *request_leader(const char *name, uint8_t name_len);

/* WATCH of `name` (a prefix with PROTO_WATCH_PREFIX in `flags`) from
 * (from_index, from_ord); NULL when out of memory, or for a bad name or
 * prefix. */
struct request *request_watch(const char *name, uint8_t name_len, uint8_t flags,
                              uint64_t from_index, uint32_t from_ord);

/* Rewrite a WATCH's frame to start after (index, ord): the position it
 * has reached, which a resend on another connection resumes from. */
void request_watch_seen(struct request *r, uint64_t index, uint32_t ord);

/* The server started the WATCH `r` after (index, ord): a watch asked for
 * "from now" resumes from there if it is sent again before any event. */
void request_watch_started(struct request *r, uint64_t index, uint32_t ord);

/* Whether the name (or prefix) of the WATCH `r` matches `e`'s, and
 * whether `e` comes after the position it has reached: it wants `e` if
 * both. */
bool request_watch_matches(const struct request *r,
                           const struct proto_watch_event *e);
bool request_watch_after(const struct request *r,
                         const struct proto_watch_event *e);
/* Whether two WATCHes watch the same name (or prefix) the same way. */
bool request_watch_same(const struct request *a, const struct request *b);

/* MEMBER_ADD. NULL when out of memory; `*rv` gets BATON_EINVAL when an
 * address is too long. */
struct request *request_member_add(uint64_t id, const char *raft_address,
                                   const char *client_address, int *rv);

/* Decode a STATUS_REPLY from `peer` into r->reply: 0, or the codec's
 * error. */
int request_take_status(struct request *r, const char *peer,
                        const uint8_t *body, uint32_t len);

/* Decode a LIST_REPLY into r->list, into r->grants for a QUERY of every
 * holder, or into r->leader for one of an election's leader: 0,
 * BATON_EMALFORMED, BATON_ENOMEM, or BATON_EKIND when the holder a leader
 * QUERY found is not an election's. */
int request_take_list(struct request *r, uint16_t flags, const uint8_t *body,
                      uint32_t len);

/* The command a PROTO_COMMAND request carries, decoded from its frame
 * (names borrowed from it): 0, or the decoder's error. */
int request_command_of(const struct request *r, struct command *k);

/* Free a request (unlinked) and what it owns. Accepts NULL. */
void request_free(struct request *r);

/* The RESULT for `r` into `*res`, in the shape `flags` (the frame's) says;
 * a holder's client name is copied into r->client_name, where
 * res->client_name then points. 0 or BATON_EMALFORMED. */
int request_take_result(struct request *r, uint16_t flags, const uint8_t *body,
                        uint32_t len, struct proto_result *res);

#endif /* CLIENT_REQUEST_H */

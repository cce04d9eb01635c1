/* One request of libbaton on its way to the cluster: the frame, kept so that
 * every retry sends the same bytes (the same seq), and its answer. */
#ifndef CLIENT_REQUEST_H
#define CLIENT_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../proto/command.h"
#include "../lib/queue.h"
#include "../proto/proto.h"

/* The largest request frame: a COMMAND with the largest command. */
#define REQUEST_FRAME_MAX (PROTO_HEADER_SIZE + COMMAND_MAX_SIZE)

/* What the background thread does with the final answer of a request no
 * caller waits for (internal, or orphaned by a caller that gave up). */
enum request_follow {
        FOLLOW_NONE = 0,
        FOLLOW_RELEASE_IF_HELD, /* QUERY: release the hold if it is ours */
};

/*
 * Lifetime: a request is created under the handle's mutex and linked into
 * the handle's list (creation order, which is also the order of resends).
 * A caller waits for `done`, then unlinks and frees it. A caller that gives
 * up sets `orphan` instead, and the background thread frees it once it is
 * final, after finishing what the caller started (a grant that raced the
 * caller's deadline is released). Internal requests (keepalive, ping,
 * OPEN, the library's own CANCEL, RELEASE and QUERY) belong to the
 * background thread from the start.
 */
struct request {
        struct queue link;
        uint8_t type;     /* enum proto_type of the frame */
        uint8_t cmd;      /* enum command_type, for PROTO_COMMAND */
        bool internal;    /* owned by the library, no caller waits */
        bool orphan;      /* the caller gave up: finish in the background */
        bool blocking;    /* ACQUIRE that may wait: answered when final */
        bool pins_ack;    /* the session's ack stays at or below `seq` */
        bool withdraw;    /* orphaned blocking ACQUIRE: CANCEL it */
        bool done;        /* the final answer is in `status` and `res` */
        bool foreign;     /* a command of another (detached) session */
        uint8_t follow;   /* enum request_follow */
        uint8_t name_len; /* ACQUIRE, RELEASE, CANCEL, QUERY, CHECK */
        uint64_t session; /* commands: the session in the frame */
        uint64_t seq;     /* commands other than OPEN */
        uint64_t owner;   /* ACQUIRE, RELEASE; FOLLOW_RELEASE_IF_HELD */
        uint32_t before;  /* ACQUIRE: the owner's holds when it started */
        struct request *cancel; /* withdraw: the CANCEL in flight for it */
        uint64_t withdrawn_gen; /* withdraw: connection of the last CANCEL */
        struct request *target; /* a withdrawing CANCEL: its ACQUIRE */
        char name[COMMAND_NAME_MAX];
        /* The frame; its id is rewritten for each send. */
        size_t len;
        uint8_t frame[REQUEST_FRAME_MAX];
        /* Sending. */
        uint64_t gen;          /* connection it was last sent on; 0: none */
        uint64_t id;           /* frame id of the last send */
        int64_t sent_ms;       /* time of the last send */
        int64_t first_sent_ms; /* time of the first send; 0: never sent */
        int64_t not_before;    /* no resend before (after EUNKNOWN) */
        unsigned sends;
        /* The answer. */
        int status;
        struct proto_result res;
        uint32_t ttl_ms;              /* KEEPALIVE_OK */
        struct baton_status *reply;   /* STATUS: owned, filled on answer */
        struct baton_lock_info *list; /* LIST: owned, list_cap entries */
        uint32_t list_cap;            /* LIST: the limit asked for */
        uint32_t list_n;              /* LIST: entries filled on answer */
        bool list_more;               /* LIST: the server left some out */
};

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

/* QUERY or CHECK of `name` (1..255 bytes). NULL when out of memory. */
struct request *request_read(uint8_t type, const char *name, uint8_t name_len,
                             uint64_t token);

/* LIST of `prefix` (0..255 bytes) with `limit` (1..PROTO_LIST_MAX) and
 * room for the answer. NULL when out of memory. */
struct request *request_list(const char *prefix, uint8_t prefix_len,
                             uint32_t limit);

/* MEMBER_ADD. NULL when out of memory; `*rv` gets BATON_EINVAL when an
 * address is too long. */
struct request *request_member_add(uint64_t id, const char *raft_address,
                                   const char *client_address, int *rv);

/* Put a fresh frame id into the frame before a send. */
void request_set_id(struct request *r, uint64_t id);

/* Free a request (unlinked) and what it owns. Accepts NULL. */
void request_free(struct request *r);

#endif /* CLIENT_REQUEST_H */

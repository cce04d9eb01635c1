/* What the request core keeps of one client connection: where its
 * answers wait, who its client is, the sessions it proved it owns and its
 * watches; the host embeds it in its own connection record. */
#ifndef SERVER_GWCONN_H
#define SERVER_GWCONN_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/queue.h"

/* Sessions one connection may act in at once; attaching one more forgets
 * the one attached longest ago (the client attaches it again). */
#define GATEWAY_MAX_ATTACHED 8

/*
 * Caller-allocated, inside the host's record of the connection (batond:
 * struct conn), which the host finds again from it (container_of); it
 * must not move from gateway_conn_init() until the core was told the
 * connection is gone (gateway_conn_gone()). The core lists the
 * connections that sent it a frame (gateway.conns, to say which one a
 * session's client uses in a SESSIONS answer); a request's answer, a
 * watch and a backup pin point at one of these too, and
 * gateway_conn_gone() clears every such pointer and unlists it.
 */
struct gateway_conn {
        /* The records still to answer a request of this connection
         * (reply.h's struct reply_to). */
        struct queue waiting;
        uint64_t id;          /* the host's number for it, for logs */
        const char *identity; /* its client's (borrowed); "" without TLS */
        /* Its client's groups (the OUs of its certificate's subject), each
         * NUL-terminated, `groups_len` bytes (borrowed; NULL and 0: none),
         * for the rules on names (names.h). */
        const char *groups;
        size_t groups_len;
        /* Its client's source address (borrowed, "" until the host sets
         * it), for listings of sessions. */
        const char *address;
        /* Its address and port (borrowed, "" until the host sets it), for
         * the audit trail. */
        const char *endpoint;
        bool plain; /* no identities (tls = off): always admin */
        /* enum roles_role: what its client may do, as decided at the
         * access list's `role_epoch` (access.h); 0: not decided yet. The
         * host may set `role` for its own log (batond's TLS handshake). */
        uint8_t role;
        uint64_t role_epoch;
        /* The sessions it proved it owns (ATTACH, or its own OPEN), most
         * recent first; 0 marks a free slot. */
        uint64_t attached[GATEWAY_MAX_ATTACHED];
        uint32_t n_watches; /* its watches (watches.h) */
        /* The position of the last event sent to all of its watches at
         * once (a WATCH_EVENT of id 0): each event goes out once per
         * connection, however many of its watches it matches. */
        uint64_t watch_sent_index;
        uint32_t watch_sent_ord;
        /* The host's: batond keeps connections gone while the core was
         * busy on it, to report after (corehost.h). */
        struct queue host_link;
        /* The core's: in gateway.conns from its first frame until it is
         * gone, so a listing of sessions finds who is attached. */
        struct queue core_link;
        bool listed;
};

/* A new connection, number `id` (for logs), whose client is `identity`
 * (borrowed for the connection's life: "" until known, and the host may
 * write it in place), `plain` when the node runs without TLS, so every
 * client administers. Its role is decided at its first frame. */
void gateway_conn_init(struct gateway_conn *c, uint64_t id,
                       const char *identity, bool plain);

/* Whether `c` proved it owns `session` (ATTACH, or the OPEN that made it). */
bool gateway_conn_attached(const struct gateway_conn *c, uint64_t session);
/* Remember that `c` owns `session` (0: nothing). */
void gateway_conn_attach(struct gateway_conn *c, uint64_t session);

#endif /* SERVER_GWCONN_H */

/* Listing sessions: the SESSIONS request (a page of live sessions after a
 * cursor, or one session by id) and the SESSIONS_REPLY that answers it. */
#ifndef PROTO_SESSLIST_H
#define PROTO_SESSLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define PROTO_SESSIONS_MAX      100 /* largest SESSIONS limit */
#define PROTO_SESSION_HOLDS_MAX 200 /* grants and waits listed per session */
#define PROTO_IDENTITY_MAX      255 /* a certificate identity's bytes */
/* A u32 time the leader does not know (SESSIONS_REPLY's left_ms, idle_ms). */
#define PROTO_SESSION_UNKNOWN UINT32_MAX

enum proto_sessions_mode {
        PROTO_SESSIONS_AFTER = 0, /* the live sessions whose id is above id */
        PROTO_SESSIONS_ONE = 1,   /* the session id alone */
};

/* SESSIONS_REPLY: the fixed part, a record's and a hold's smallest and
 * largest encoding (names of 0 and of their longest). */
#define PROTO_SESSIONS_REPLY_FIXED 5
#define PROTO_SESSION_FIXED        (8 + 1 + 1 + 1 + 7 * 4 + 2)
#define PROTO_SESSION_HOLD_FIXED   (1 + 1 + 8 + 8 + 4 + 4 + 4 + 1)
#define PROTO_SESSION_HOLD_MIN     (PROTO_SESSION_HOLD_FIXED + 1)
/* The encoded size of a record with strings of these lengths and no
 * holds, and of one hold with a name of `name_len`. */
#define PROTO_SESSION_SIZE(client_len, identity_len, address_len)              \
        (PROTO_SESSION_FIXED + (size_t)(client_len) + (size_t)(identity_len) + \
         (size_t)(address_len))
#define PROTO_SESSION_HOLD_SIZE(name_len)                                      \
        (PROTO_SESSION_HOLD_FIXED + (size_t)(name_len))

/* One grant or wait of a session; the name is borrowed. */
struct proto_session_hold {
        uint8_t waiting; /* 1: a wait; 0: a grant */
        uint8_t mode;    /* COMMAND_MODE_* */
        uint64_t owner;
        uint64_t token;   /* a grant's; 0 for a wait */
        uint32_t count;   /* a grant's reentrant holds */
        uint32_t permits; /* a semaphore's grant or wait */
        uint32_t wait_ms; /* a wait's: how long it asked to wait */
        struct proto_string name;
};

/* One session of a SESSIONS_REPLY; strings and holds are borrowed. */
struct proto_session {
        uint64_t id;
        struct proto_string client_name; /* its OPEN's, 0..64 bytes */
        /* The certificate identity and source address of the leader's
         * connection attached to it (empty: none attached). */
        struct proto_string identity; /* 0..PROTO_IDENTITY_MAX bytes */
        struct proto_string address;  /* 0..PROTO_ADDRESS_MAX bytes */
        uint32_t ttl_ms;
        uint32_t lock_delay_ms;
        /* The leader's lease: ms until it expires the session, and since
         * it last renewed the lease (a keepalive, or its start as leader);
         * PROTO_SESSION_UNKNOWN when it keeps none. */
        uint32_t left_ms;
        uint32_t idle_ms;
        uint32_t revoked;  /* grants an administrator ended (wrapping) */
        uint32_t n_grants; /* all of its grants ... */
        uint32_t n_waits;  /* ... and waits, listed or not */
        uint16_t n_holds;  /* listed: grants first, then waits */
        const struct proto_session_hold *holds;
};

/* SESSIONS: u64 id, u8 mode (enum proto_sessions_mode), u32 limit
 * (1..PROTO_SESSIONS_MAX; 1 for PROTO_SESSIONS_ONE). 0 for bad values. */
size_t proto_write_sessions(uint8_t *out, size_t cap, uint64_t id,
                            uint64_t session, uint8_t mode, uint32_t limit);
/* SESSIONS: 0, or BATON_EMALFORMED for a wrong length or a mode or limit
 * proto_write_sessions() would refuse. */
int proto_read_sessions(const uint8_t *body, size_t len, uint64_t *session,
                        uint8_t *mode, uint32_t *limit);

/*
 * SESSIONS_REPLY: u32 n, u8 more (1: more sessions follow the last one
 * sent), then n records, each u64 id, string client_name, string identity,
 * string address, u32 ttl_ms, u32 lock_delay_ms, u32 left_ms, u32 idle_ms,
 * u32 revoked, u32 n_grants, u32 n_waits, u16 n_holds, then n_holds x
 * {u8 waiting, u8 mode, u64 owner, u64 token, u32 count, u32 permits, u32
 * wait_ms, string name}. 0 for a bad string or name, more than
 * PROTO_SESSION_HOLDS_MAX holds, or a frame over `cap` or PROTO_MAX_BODY.
 */
size_t proto_write_sessions_reply(uint8_t *out, size_t cap, uint64_t id,
                                  const struct proto_session *s, uint32_t n,
                                  bool more);
/*
 * SESSIONS_REPLY into the caller's `s` (`cap` records) and `holds`
 * (`holds_cap` of them, shared by the records in order; a body of `len`
 * bytes has at most len / PROTO_SESSION_HOLD_MIN): strings borrowed from
 * the body. BATON_EMALFORMED when a count exceeds its room or the body,
 * for a bad string, a flag other than 0 or 1, or trailing bytes; then `*n`
 * is 0.
 */
int proto_read_sessions_reply(const uint8_t *body, size_t len,
                              struct proto_session *s, size_t cap,
                              struct proto_session_hold *holds,
                              size_t holds_cap, uint32_t *n, bool *more);

#endif /* PROTO_SESSLIST_H */

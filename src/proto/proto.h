/* The client protocol: frame codec and incremental reader, with no I/O. */
#ifndef PROTO_PROTO_H
#define PROTO_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/mem.h"

/*
 * Every frame is a 16-byte header followed by `length` body bytes, all
 * little-endian (docs/protocol.md has the full account):
 *
 *   u8  version   PROTO_VERSION (2; version 1 had no ATTACH and no
 *                 hash in OPEN)
 *   u8  type      enum proto_type
 *   u16 flags     0, except PROTO_FLAG_NAMES on QUERY and LIST (asking
 *                 for client names) and on the RESULT and LIST_REPLY that
 *                 carry them
 *   u32 length    body bytes that follow (checked against the receiver's
 *                 maximum before anything is allocated)
 *   u64 id        chosen by the client; a response echoes its request's id
 *
 * Requests (client to server) and their bodies:
 *
 *   COMMAND     an encoded state machine command (src/proto/command.h) of
 *               type OPEN, CLOSE, ACQUIRE, RELEASE or CANCEL
 *   KEEPALIVE   u64 session
 *   QUERY       string name
 *   CHECK       u64 token, string name
 *   STATUS      (empty)
 *   MEMBER_ADD  u64 id, string raft address, string client address
 *   MEMBER_REMOVE u64 id
 *   TRANSFER    u64 id (0: let the leader choose)
 *   PING        (empty)
 *   LIST        string prefix (0..255 bytes, no NUL), u32 limit
 *               (1..PROTO_LIST_MAX)
 *   ATTACH      u64 session, 16 bytes secret (src/proto/attach.h)
 *   WATCH       u8 flags (PROTO_WATCH_PREFIX), u64 from_index, u32
 *               from_ord (the last event seen; from_index 0: from now),
 *               string name or prefix (src/proto/watch.c)
 *   UNWATCH     u64 the WATCH's id
 *   BACKUP      u64 backup (0: take a new one), u64 offset: the next
 *               piece of an online backup (src/proto/backup.c)
 *   ACL         u8 op (enum proto_acl_op), u8 role, string identity
 *               (empty for LIST): the cluster's access list (aclwire.c)
 *
 * Responses (server to client), one per request, with the request's id:
 *
 *   RESULT      i32 status, u8 kind (enum proto_kind), u64 index (the
 *               entry that decided it), u64 session, u64 owner, u64 token,
 *               u32 count, u32 waiters
 *   NOT_LEADER  u64 leader id (0: unknown), string leader client address
 *   ERROR       i32 status, string message; the server closes afterwards
 *   STATUS      see struct proto_status; with PROTO_FLAG_VERSIONS (when
 *               the STATUS had it) followed by struct proto_versions
 *   KEEPALIVE_OK u32 ttl_ms: the session's deadline is now + ttl_ms;
 *               with PROTO_FLAG_REVOKED (when the KEEPALIVE had it), then
 *               u32 revoked: how many of the session's grants an
 *               administrator has revoked so far (REVOKE_LOCK), wrapping
 *   PONG        (empty)
 *   LIST_REPLY  u32 n, u8 more (1: more locks matched than were sent),
 *               then n x {string name, u64 session, u64 owner, u64 token,
 *               u32 count, u32 waiters}
 *   WATCH_EVENT pushed, with the id of the WATCH it answers: struct
 *               proto_watch_event (after the WATCH's RESULT of kind
 *               WATCHING, until a RESULT ends the watch)
 *   BACKUP_CHUNK struct proto_backup_chunk, then the backup's bytes from
 *               offset to the end of the body
 *   ACL_REPLY   the access list, answering an ACL of op LIST: u8 format
 *               (1), u8 seeded, u8 default role, u16 n, then n x {u8 kind,
 *               u8 role, string identity} (SET and REMOVE get a RESULT)
 *
 * A QUERY with PROTO_FLAG_HOLDERS instead asks for every holder of the
 * lock: it is answered by a LIST_REPLY with that flag, one entry per
 * holder, each with its client name, mode, permits, the semaphore's limit
 * and when it was granted (proto_write_list_reply_holders()).
 *
 * With PROTO_FLAG_NAMES, RESULT gains a trailing string client_name (the
 * holder's, 0..64 bytes; empty when the lock is free or the answer is an
 * error) and every LIST_REPLY entry a trailing string client_name. A
 * server answers in that shape only when the request asked for it; an old
 * server refuses the flag (ERROR BATON_EMALFORMED, then it closes).
 *
 * A string is a u8 length and that many bytes (no NUL). A blocking ACQUIRE
 * is answered once, when its outcome is final: granted, timed out,
 * cancelled, or the session ended.
 */

#define PROTO_VERSION         2
#define PROTO_FLAG_NAMES      0x0001 /* QUERY, LIST and their answers: names */
#define PROTO_FLAG_HOLDERS    0x0002 /* QUERY, LIST_REPLY: every holder */
#define PROTO_FLAG_REVOKED    0x0004 /* KEEPALIVE(_OK): revoked grants */
#define PROTO_FLAG_VALUES     0x0008 /* with _HOLDERS: elections' values */
#define PROTO_FLAG_VERSIONS   0x0010 /* STATUS(_REPLY): the node's versions */
#define PROTO_CLIENT_NAME_MAX 64     /* a session's client name, as OPEN's */
#define PROTO_HEADER_SIZE     16
#define PROTO_MAX_BODY        65536 /* largest body any peer must accept */
#define PROTO_ADDRESS_MAX     64  /* "host:port", "[ipv6]:port" (ADDRESS_MAX) */
#define PROTO_MESSAGE_MAX     255 /* ERROR text */
#define PROTO_MAX_MEMBERS     16
#define PROTO_LIST_MAX        1000 /* largest LIST limit */
/* LIST_REPLY: the fixed part, and the largest entry (a 255-byte name). */
#define PROTO_LIST_REPLY_FIXED 5
#define PROTO_LIST_ENTRY_MAX   (1 + 255 + 3 * 8 + 2 * 4)
/* The smallest entry (a 1-byte name), for bounding n by the body size. */
#define PROTO_LIST_ENTRY_MIN (1 + 1 + 3 * 8 + 2 * 4)

enum proto_type {
        /* requests */
        PROTO_COMMAND = 1,
        PROTO_KEEPALIVE = 2,
        PROTO_QUERY = 3,
        PROTO_CHECK = 4,
        PROTO_STATUS = 5,
        PROTO_MEMBER_ADD = 6,
        PROTO_MEMBER_REMOVE = 7,
        PROTO_TRANSFER = 8,
        PROTO_PING = 9,
        PROTO_LIST = 10,
        PROTO_ATTACH = 11, /* src/proto/attach.h */
        PROTO_WATCH = 12,
        PROTO_UNWATCH = 13,
        PROTO_BACKUP = 14, /* src/proto/backup.c */
        PROTO_ACL = 15,    /* src/proto/aclwire.c */
        /* responses */
        PROTO_RESULT = 64,
        PROTO_NOT_LEADER = 65,
        PROTO_ERROR = 66,
        PROTO_STATUS_REPLY = 67,
        PROTO_KEEPALIVE_OK = 68,
        PROTO_PONG = 69,
        PROTO_LIST_REPLY = 70,
        PROTO_WATCH_EVENT = 71,
        PROTO_BACKUP_CHUNK = 72,
        PROTO_ACL_REPLY = 73,
};

/*
 * What the outcome of a command says: RESULT's `kind` on the wire, and
 * struct lockfsm_result's (src/fsm/types.h) in the state machine that
 * decides it. The numbers are part of the protocol (docs/protocol.md).
 */
enum proto_kind {
        PROTO_KIND_REJECTED =
            0,             /* status < 0; for BUSY, token is the holder's */
        PROTO_KIND_OPENED, /* session = the new (or the retried) session */
        PROTO_KIND_CLOSED,
        PROTO_KIND_EXPIRED,
        PROTO_KIND_GRANTED,   /* token */
        PROTO_KIND_REENTERED, /* token, count = the new hold count */
        PROTO_KIND_QUEUED,    /* count = position in the queue, from 1 */
        PROTO_KIND_RELEASED,  /* token, count = holds left (0: lock freed) */
        PROTO_KIND_CANCELLED, /* the waiter `target` left the queue */
        PROTO_KIND_HOLDER,    /* QUERY: session, owner, token, count, waiters */
        PROTO_KIND_FREE,      /* QUERY of a free lock (waiters = 0) */
        PROTO_KIND_CURRENT,   /* CHECK: the token is the current grant */
        PROTO_KIND_UPDATED,   /* MEMBER (raft glue): the directory changed */
        PROTO_KIND_APPLIED,   /* a batch: count commands, each answered by its
                              own RESULT event */
        PROTO_KIND_PROCLAIMED, /* PROCLAIM: token, the leader's value changed */
        PROTO_KIND_WATCHING,   /* WATCH: index and count = where it starts */
        PROTO_KIND_TRANSFERRED, /* TRANSFER: session = the leader that handed
                                   over, owner = the leader now (0: none
                                   known yet) */
};

struct proto_header {
        uint8_t version;
        uint8_t type;
        uint16_t flags;
        uint32_t length;
        uint64_t id;
};

/* Encode a header into exactly PROTO_HEADER_SIZE bytes. */
void proto_header_encode(const struct proto_header *h, uint8_t *out);

/* Overwrite the id of an encoded frame (a request stamped when it is sent,
 * or sent again on another connection). */
void proto_header_set_id(uint8_t *frame, uint64_t id);

/*
 * Decode and check a header: BATON_EVERSION for another version,
 * BATON_EMALFORMED for non-zero flags or an unknown type, BATON_ETOOBIG
 * when length > max_body.
 */
int proto_header_decode(struct proto_header *h, const uint8_t *in,
                        uint32_t max_body);

/* Message bodies. Decoders check every length and reject trailing bytes
 * with BATON_EMALFORMED; strings are borrowed from the body. */

struct proto_string {
        const char *p;
        uint8_t len;
};

struct proto_result {
        int32_t status;
        uint8_t kind;
        uint64_t index;
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
        /* Only in the PROTO_FLAG_NAMES shape: the holder's client name. */
        struct proto_string client_name;
};

struct proto_member {
        uint64_t id;
        uint8_t role; /* enum baton_member_role */
        struct proto_string raft_address;
        struct proto_string client_address;
};

struct proto_status {
        uint64_t id;
        uint8_t role; /* enum baton_node_role */
        uint64_t term;
        uint64_t leader_id;
        uint64_t commit_index;
        uint64_t applied_index;
        uint64_t last_index;
        uint64_t sessions;
        uint64_t locks;
        uint64_t waiters;
        uint8_t n_members; /* <= PROTO_MAX_MEMBERS */
        struct proto_member members[PROTO_MAX_MEMBERS];
};

/* The PROTO_FLAG_VERSIONS tail of a STATUS_REPLY, after the members: what
 * the node runs and the newest format of each thing it replicates or
 * keeps on disk (docs/operations.md, "Upgrades"). */
struct proto_versions {
        struct proto_string release; /* "0.2.0": 1..PROTO_RELEASE_MAX bytes */
        uint16_t command;   /* commands and batches: reads 1..command */
        uint16_t snapshot;  /* snapshot images: reads 1..snapshot, writes it */
        uint16_t container; /* the image-and-tail container: reads, writes */
};

#define PROTO_RELEASE_MAX 32

struct baton_status;
struct baton_node_version;

/*
 * Copy a decoded STATUS reply into the public struct baton_status
 * (include/baton/cluster.h), strings included, so that it outlives the frame;
 * `endpoint` (copied; may be NULL) names the node that answered. `*out` is
 * zeroed first.
 */
void proto_status_export(struct baton_status *out, const char *endpoint,
                         const struct proto_status *ps);

/* Copy a decoded versions tail (NULL: a node that sent none, which is
 * one before 0.2.0) and the reply's protocol version into `*out`. */
void proto_versions_export(struct baton_node_version *out, uint8_t protocol,
                           const struct proto_versions *v);

/* One lock of a LIST_REPLY; the name is borrowed. */
struct proto_lock_entry {
        struct proto_string name;
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
        /* Only in the PROTO_FLAG_NAMES shape: the holder's client name. */
        struct proto_string client_name;
        /* Only in the PROTO_FLAG_HOLDERS shape: the grant's mode and
         * permits, and the semaphore's limit (0 for a lock). */
        uint8_t mode;
        uint32_t permits;
        uint32_t limit;
        /* The leader's wall clock when the grant was made, s since the
         * Unix epoch (0: not known). */
        uint32_t granted_s;
        /* Only in the PROTO_FLAG_VALUES shape: an election's leader's
         * value (empty for any other grant). */
        struct proto_string value;
};

/* The encoded size of one LIST_REPLY entry with a name of `name_len`. */
#define PROTO_LIST_ENTRY_SIZE(name_len) (1 + (size_t)(name_len) + 3 * 8 + 2 * 4)
/* The same in the PROTO_FLAG_NAMES shape, with a client name of
 * `client_len` bytes. */
#define PROTO_LIST_ENTRY_NAMES_SIZE(name_len, client_len)                      \
        (PROTO_LIST_ENTRY_SIZE(name_len) + 1 + (size_t)(client_len))
/* The same in the PROTO_FLAG_HOLDERS shape: mode, permits, limit and the
 * grant's time too. */
#define PROTO_LIST_ENTRY_HOLDERS_SIZE(name_len, client_len)                    \
        (PROTO_LIST_ENTRY_NAMES_SIZE(name_len, client_len) + 1 + 4 + 4 + 4)
/* The same with PROTO_FLAG_VALUES too: a value of `value_len` bytes. */
#define PROTO_LIST_ENTRY_VALUES_SIZE(name_len, client_len, value_len)          \
        (PROTO_LIST_ENTRY_HOLDERS_SIZE(name_len, client_len) + 1 +             \
         (size_t)(value_len))

/*
 * Frame writers: each writes a whole frame (header and body) into `out`
 * (capacity `cap`) and returns its length, or 0 when it does not fit or a
 * field is out of range (a string longer than its maximum).
 */
size_t proto_write_command(uint8_t *out, size_t cap, uint64_t id,
                           const void *command, size_t command_len);
size_t proto_write_keepalive(uint8_t *out, size_t cap, uint64_t id,
                             uint64_t session);
size_t proto_write_query(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len);
size_t proto_write_check(uint8_t *out, size_t cap, uint64_t id,
                         const char *name, size_t name_len, uint64_t token);
size_t proto_write_empty(uint8_t *out, size_t cap, uint64_t id, uint8_t type);
size_t proto_write_member_add(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t member, const char *raft_address,
                              const char *client_address);
/* MEMBER_REMOVE, TRANSFER and UNWATCH: one u64. */
size_t proto_write_id(uint8_t *out, size_t cap, uint64_t id, uint8_t type,
                      uint64_t member);
size_t proto_write_result(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_result *r);
size_t proto_write_not_leader(uint8_t *out, size_t cap, uint64_t id,
                              uint64_t leader_id, const char *address);
size_t proto_write_error(uint8_t *out, size_t cap, uint64_t id, int status,
                         const char *message);
size_t proto_write_status(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_status *st);
/* The PROTO_FLAG_VERSIONS shapes: a STATUS asking for the node's versions
 * (an empty body, as without it), and the STATUS_REPLY that carries them
 * after the members (0 for a release that is empty, over
 * PROTO_RELEASE_MAX bytes or with a NUL). */
size_t proto_write_status_request(uint8_t *out, size_t cap, uint64_t id,
                                  uint16_t flags);
size_t proto_write_status_versions(uint8_t *out, size_t cap, uint64_t id,
                                   const struct proto_status *st,
                                   const struct proto_versions *v);
size_t proto_write_keepalive_ok(uint8_t *out, size_t cap, uint64_t id,
                                uint32_t ttl_ms);
/* The PROTO_FLAG_REVOKED shapes (src/proto/keepalive.c): a KEEPALIVE
 * asking for the count of the session's revoked grants, and the
 * KEEPALIVE_OK that carries it. */
size_t proto_write_keepalive_revoked(uint8_t *out, size_t cap, uint64_t id,
                                     uint64_t session);
size_t proto_write_keepalive_ok_revoked(uint8_t *out, size_t cap, uint64_t id,
                                        uint32_t ttl_ms, uint32_t revoked);
/* KEEPALIVE_OK in the shape its header's `flags` say: `*revoked` is 0
 * without PROTO_FLAG_REVOKED. 0 or BATON_EMALFORMED. */
int proto_read_keepalive_ok(const uint8_t *body, size_t len, uint16_t flags,
                            uint32_t *ttl_ms, uint32_t *revoked);
/* LIST: 0 for a prefix over 255 bytes or with a NUL, or a limit outside
 * 1..PROTO_LIST_MAX. */
size_t proto_write_list(uint8_t *out, size_t cap, uint64_t id,
                        const char *prefix, size_t prefix_len, uint32_t limit);
/* LIST_REPLY of the `n` entries of `e`: 0 for a bad name (1..255 bytes, no
 * NUL), or when the frame exceeds `cap` or PROTO_MAX_BODY. */
size_t proto_write_list_reply(uint8_t *out, size_t cap, uint64_t id,
                              const struct proto_lock_entry *e, uint32_t n,
                              bool more);

/*
 * The PROTO_FLAG_NAMES shapes: QUERY and LIST asking for client names, and
 * the RESULT and LIST_REPLY that carry them (0 also for a client name over
 * PROTO_CLIENT_NAME_MAX bytes or with a NUL). The flag goes in the header;
 * the bodies of QUERY and LIST are unchanged.
 */
size_t proto_write_query_names(uint8_t *out, size_t cap, uint64_t id,
                               const char *name, size_t name_len);
size_t proto_write_list_names(uint8_t *out, size_t cap, uint64_t id,
                              const char *prefix, size_t prefix_len,
                              uint32_t limit);
size_t proto_write_result_names(uint8_t *out, size_t cap, uint64_t id,
                                const struct proto_result *r);
size_t proto_write_list_reply_names(uint8_t *out, size_t cap, uint64_t id,
                                    const struct proto_lock_entry *e,
                                    uint32_t n, bool more);

/* Body readers, for a frame of the matching type. 0 or BATON_EMALFORMED
 * (BATON_ENAME for a bad lock name in QUERY or CHECK). */
int proto_read_u64(const uint8_t *body, size_t len, uint64_t *v);
int proto_read_u32(const uint8_t *body, size_t len, uint32_t *v);
int proto_read_query(const uint8_t *body, size_t len,
                     struct proto_string *name);
int proto_read_check(const uint8_t *body, size_t len, struct proto_string *name,
                     uint64_t *token);
int proto_read_member_add(const uint8_t *body, size_t len, uint64_t *member,
                          struct proto_string *raft_address,
                          struct proto_string *client_address);
int proto_read_result(const uint8_t *body, size_t len, struct proto_result *r);
/* RESULT in the PROTO_FLAG_NAMES shape; client names are borrowed. */
int proto_read_result_names(const uint8_t *body, size_t len,
                            struct proto_result *r);
int proto_read_not_leader(const uint8_t *body, size_t len, uint64_t *leader_id,
                          struct proto_string *address);
int proto_read_error(const uint8_t *body, size_t len, int *status,
                     struct proto_string *message);
int proto_read_status(const uint8_t *body, size_t len, struct proto_status *st);
/* STATUS_REPLY in the shape its header's `flags` say: `*v` is zeroed
 * without PROTO_FLAG_VERSIONS. 0 or BATON_EMALFORMED. */
int proto_read_status_versions(const uint8_t *body, size_t len, uint16_t flags,
                               struct proto_status *st,
                               struct proto_versions *v);
/* LIST: BATON_EMALFORMED for a truncated body, trailing bytes or a limit
 * outside 1..PROTO_LIST_MAX; BATON_ENAME for a prefix with a NUL. The
 * prefix may be empty (every lock). */
int proto_read_list(const uint8_t *body, size_t len,
                    struct proto_string *prefix, uint32_t *limit);
/*
 * LIST_REPLY into the caller's array `e` of `cap` entries (names borrowed
 * from the body): `*n` entries are filled and `*more` says whether the
 * server left matches out. BATON_EMALFORMED when n exceeds `cap` (pass the
 * limit that was asked for), when n disagrees with the body's size, for a
 * bad name, a `more` other than 0 or 1, or trailing bytes; then `*n` is 0.
 */
int proto_read_list_reply(const uint8_t *body, size_t len,
                          struct proto_lock_entry *e, size_t cap, uint32_t *n,
                          bool *more);
/* LIST_REPLY in the PROTO_FLAG_NAMES shape; client names are borrowed. */
int proto_read_list_reply_names(const uint8_t *body, size_t len,
                                struct proto_lock_entry *e, size_t cap,
                                uint32_t *n, bool *more);

/*
 * The PROTO_FLAG_HOLDERS shapes: a QUERY asking for every holder of one
 * lock, and the LIST_REPLY that answers it, one entry per holder (the
 * lock's name in each) in the PROTO_FLAG_NAMES shape followed by u8 mode
 * (COMMAND_MODE_*), u32 permits (a semaphore grant's), u32 limit (the
 * semaphore's permits; 0 for a lock) and u32 granted_s (the leader's wall
 * clock when it was granted, s since the Unix epoch; 0: not known).
 */
size_t proto_write_query_holders(uint8_t *out, size_t cap, uint64_t id,
                                 const char *name, size_t name_len);
size_t proto_write_list_reply_holders(uint8_t *out, size_t cap, uint64_t id,
                                      const struct proto_lock_entry *e,
                                      uint32_t n, bool more);
int proto_read_list_reply_holders(const uint8_t *body, size_t len,
                                  struct proto_lock_entry *e, size_t cap,
                                  uint32_t *n, bool *more);

/*
 * The PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES shapes: the holders QUERY
 * asking for values too, and its LIST_REPLY, whose entries each end with
 * string value (an election's leader's, 0..255 bytes; empty for any other
 * grant). An older server refuses the flag (ERROR BATON_EMALFORMED).
 */
size_t proto_write_query_values(uint8_t *out, size_t cap, uint64_t id,
                                const char *name, size_t name_len);
size_t proto_write_list_reply_values(uint8_t *out, size_t cap, uint64_t id,
                                     const struct proto_lock_entry *e,
                                     uint32_t n, bool more);
int proto_read_list_reply_values(const uint8_t *body, size_t len,
                                 struct proto_lock_entry *e, size_t cap,
                                 uint32_t *n, bool *more);

/* --- Watches (src/proto/watch.c) ---------------------------------------- */

#define PROTO_WATCH_PREFIX 0x01 /* WATCH flags: the name is a prefix */
#define PROTO_VALUE_MAX    255  /* an election's value */

/* What a WATCH asks for. A watch has seen every event up to the position
 * (from_index, from_ord): events are ordered by the index of the entry
 * that caused them, then by their order within it (ord, from 1). */
struct proto_watch {
        uint8_t flags;
        uint64_t from_index; /* 0: from the node's applied index on */
        uint32_t from_ord;
        struct proto_string name; /* a lock name, or a prefix (0..255) */
};

/* What a WATCH_EVENT says (docs/protocol.md, "Watches"). */
enum proto_watch_kind {
        PROTO_EVENT_GRANTED = 1,    /* a grant: token, mode, permits */
        PROTO_EVENT_RELEASED = 2,   /* a grant ended; cause says how */
        PROTO_EVENT_PROCLAIMED = 3, /* an election's leader's new value */
};

struct proto_watch_event {
        uint64_t index; /* the entry that caused it */
        uint32_t ord;   /* its order among the entry's events, from 1 */
        uint8_t kind;   /* enum proto_watch_kind */
        uint8_t cause;  /* the command type that caused it (command.h) */
        uint8_t mode;   /* the grant's COMMAND_MODE_* */
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t permits;
        struct proto_string name;
        struct proto_string value; /* an election's: the leader's value */
};

/* The largest WATCH_EVENT body: both strings at 255 bytes. */
#define PROTO_WATCH_EVENT_MAX (8 + 4 + 3 + 3 * 8 + 4 + 2 * (1 + 255))

/* WATCH: 0 for a name that is not a lock name (an exact watch) or a
 * prefix over 255 bytes or with a NUL. */
size_t proto_write_watch(uint8_t *out, size_t cap, uint64_t id,
                         const struct proto_watch *w);
/* 0, BATON_ENAME (the name or prefix), or BATON_EMALFORMED. */
int proto_read_watch(const uint8_t *body, size_t len, struct proto_watch *w);
/* WATCH_EVENT with the id of its WATCH: 0 for a bad name or value. */
size_t proto_write_watch_event(uint8_t *out, size_t cap, uint64_t id,
                               const struct proto_watch_event *e);
int proto_read_watch_event(const uint8_t *body, size_t len,
                           struct proto_watch_event *e);

/* --- Online backups (src/proto/backup.c) -------------------------------- */

/* BACKUP: the first asks the leader to pin a consistent snapshot of the
 * state (backup 0, offset 0); each later one asks for the bytes of that
 * backup from `offset` on. */
struct proto_backup {
        uint64_t backup; /* the id the first chunk named; 0: a new one */
        uint64_t offset;
};

/* BACKUP_CHUNK: what the backup is, and `len` of its bytes from `offset`
 * (every chunk repeats the description, so each can be checked alone). */
struct proto_backup_chunk {
        uint64_t backup;   /* the pinned backup's id on this node */
        uint64_t index;    /* the last entry the state includes */
        uint64_t term;     /* the leader's term when it was taken */
        uint64_t made_ms;  /* the leader's wall clock then, Unix ms */
        uint64_t size;     /* the snapshot's bytes in all */
        uint64_t offset;   /* of this chunk */
        uint64_t sessions; /* counts of the state at `index` */
        uint64_t locks;
        uint64_t grants;
        uint64_t waiters;
        const uint8_t *data; /* borrowed: the body, or the writer's bytes */
        size_t len;
};

#define PROTO_BACKUP_CHUNK_FIXED (10 * 8)
#define PROTO_BACKUP_CHUNK_MAX   (PROTO_MAX_BODY - PROTO_BACKUP_CHUNK_FIXED)

size_t proto_write_backup(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_backup *b);
int proto_read_backup(const uint8_t *body, size_t len, struct proto_backup *b);
/* 0 when `len` exceeds PROTO_BACKUP_CHUNK_MAX or the chunk ends past
 * `size`. */
size_t proto_write_backup_chunk(uint8_t *out, size_t cap, uint64_t id,
                                const struct proto_backup_chunk *k);
/* The chunk's data borrowed from `body`. 0 or BATON_EMALFORMED. */
int proto_read_backup_chunk(const uint8_t *body, size_t len,
                            struct proto_backup_chunk *k);

/* "RESULT", "PING", ...; "UNKNOWN" for anything else. */
const char *proto_type_name(int type);

/* The frame reader is part of the protocol's interface. */
#include "reader.h"

/* --- The access list (aclwire.c) --------------------------------------- */

enum proto_acl_op {
        PROTO_ACL_LIST = 0,
        PROTO_ACL_SET = 1,    /* identity, role */
        PROTO_ACL_REMOVE = 2, /* identity */
};

#define PROTO_ACL_IDENTITY_MAX 255 /* bytes of an identity, no NUL */
#define PROTO_ACL_RULES_MAX    64  /* rules in an ACL_REPLY */
#define PROTO_ACL_FORMAT       1

struct proto_acl_request {
        uint8_t op;   /* enum proto_acl_op */
        uint8_t role; /* SET: 0 none, 1 read, 2 lock, 3 admin; else 0 */
        struct proto_string identity;
};

struct proto_acl_rule {
        uint8_t kind; /* 0: one identity */
        uint8_t role;
        struct proto_string identity;
};

struct proto_acl_reply {
        uint8_t seeded; /* 0: the cluster has no access list yet */
        uint8_t default_role;
        uint16_t n;
        struct proto_acl_rule rules[PROTO_ACL_RULES_MAX];
};

/* An ACL request; 0 when `r` is invalid (bad op, role or identity: LIST
 * carries none, SET and REMOVE 1..255 bytes) or it does not fit. */
size_t proto_write_acl(uint8_t *out, size_t cap, uint64_t id,
                       const struct proto_acl_request *r);
/* 0 or BATON_EMALFORMED (as proto_write_acl() would refuse). */
int proto_read_acl(const uint8_t *body, size_t len,
                   struct proto_acl_request *r);

/* An ACL_REPLY; 0 when it does not fit `cap`. */
size_t proto_write_acl_reply(uint8_t *out, size_t cap, uint64_t id,
                             const struct proto_acl_reply *r);
/* 0, BATON_EVERSION (a newer format) or BATON_EMALFORMED; identities
 * borrowed from `body`. */
int proto_read_acl_reply(const uint8_t *body, size_t len,
                         struct proto_acl_reply *r);

#endif /* PROTO_PROTO_H */

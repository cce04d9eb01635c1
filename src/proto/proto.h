/* The client protocol's frames: the header, the message types and what
 * every message family shares, with no I/O. */
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
 *               string name or prefix (watch.h)
 *   UNWATCH     u64 the WATCH's id
 *   BACKUP      u64 backup (0: take a new one), u64 offset: the next
 *               piece of an online backup (backup.h)
 *   ACL         u8 op (enum proto_acl_op), u8 role, string identity
 *               (empty for LIST): the cluster's access list (aclwire.h);
 *               ops RULE_SET and RULE_REMOVE, on rules on lock-name
 *               prefixes, carry perms (RULE_SET 1..7, RULE_REMOVE 0) in
 *               the role byte and the subject as the identity, then u8
 *               kind (1 identity, 2 group), string prefix (0..255 bytes);
 *               ops QUOTA_SET and QUOTA_REMOVE carry role 0 and the
 *               subject (an identity or "*") as the identity, QUOTA_SET
 *               then 5 x u32 limits (enum proto_quota_kind order)
 *   SESSIONS    u64 id, u8 mode, u32 limit: a page of live sessions after
 *               a cursor, or one session (sesslist.h)
 *
 * Responses (server to client), one per request, with the request's id:
 *
 *   RESULT      i32 status, u8 kind (enum proto_kind), u64 index (the
 *               entry that decided it), u64 session, u64 owner, u64 token,
 *               u32 count, u32 waiters
 *   NOT_LEADER  u64 leader id (0: unknown), string leader client address
 *   ERROR       i32 status, string message; the server closes afterwards
 *   STATUS      struct proto_status (status.h); with PROTO_FLAG_VERSIONS
 *               (when the STATUS had it) followed by struct
 *               proto_versions, then with PROTO_FLAG_ALARMS by struct
 *               proto_alarms
 *   KEEPALIVE_OK u32 ttl_ms: the session's deadline is now + ttl_ms;
 *               with PROTO_FLAG_REVOKED (when the KEEPALIVE had it), then
 *               u32 revoked: how many of the session's grants an
 *               administrator has revoked so far (REVOKE_LOCK), wrapping
 *   PONG        (empty)
 *   LIST_REPLY  u32 n, u8 more (1: more locks matched than were sent),
 *               then n x {string name, u64 session, u64 owner, u64 token,
 *               u32 count, u32 waiters}
 *   WATCH_EVENT pushed, with the id of the WATCH it answers: struct
 *               proto_watch_event of watch.h (after the WATCH's RESULT of
 *               kind WATCHING, until a RESULT ends the watch)
 *   BACKUP_CHUNK struct proto_backup_chunk (backup.h), then the backup's
 *               bytes from offset to the end of the body
 *   ACL_REPLY   the access list, answering an ACL of op LIST: u8 format
 *               (1; 2 when there are prefix rules; 3 when there are
 *               quotas), u8 seeded, u8 default role, u16 n, then n x {u8
 *               kind, u8 role, string identity}; formats 2 and 3 then
 *               have u16 m, m x {u8 kind, u8 perms, string subject,
 *               string prefix}; format 3 then u16 q, q x {string subject,
 *               5 x u32 limits, 3 x u32 used} (the other ops get a
 *               RESULT)
 *   SESSIONS_REPLY u32 n, u8 more, then n sessions, each with its grants
 *               and waits (sesslist.h)
 *
 * A QUERY with PROTO_FLAG_HOLDERS instead asks for every holder of the
 * lock: it is answered by a LIST_REPLY with that flag, one entry per
 * holder, each with its client name, mode, permits, the semaphore's limit
 * and when it was granted (list.h); with PROTO_FLAG_LEFT too, each with
 * the leader's lease of its session.
 *
 * With PROTO_FLAG_NAMES, RESULT gains a trailing string client_name (the
 * holder's, 0..64 bytes; empty when the lock is free or the answer is an
 * error) and every LIST_REPLY entry a trailing string client_name. A
 * server answers in that shape only when the request asked for it; an old
 * server refuses the flag (ERROR BATON_EMALFORMED, then it closes).
 *
 * Each message family has its header beside this one, with one writer and
 * one reader per message that take the frame's flags where the message
 * has more than one shape: reply.h (RESULT, NOT_LEADER, ERROR), query.h
 * (QUERY, CHECK), member.h (MEMBER_ADD), status.h (STATUS and its reply),
 * keepalive.h, list.h, watch.h, backup.h, aclwire.h and attach.h.
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
#define PROTO_FLAG_ALARMS     0x0020 /* STATUS(_REPLY): what is wrong with it */
#define PROTO_FLAG_LEFT       0x0040 /* with _HOLDERS: each one's time left */
#define PROTO_CLIENT_NAME_MAX 64     /* a session's client name, as OPEN's */
#define PROTO_HEADER_SIZE     16
#define PROTO_MAX_BODY        65536 /* largest body any peer must accept */
#define PROTO_ADDRESS_MAX     64 /* "host:port", "[ipv6]:port" (ADDRESS_MAX) */

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
        PROTO_BACKUP = 14,   /* src/proto/backup.c */
        PROTO_ACL = 15,      /* src/proto/aclwire.c */
        PROTO_SESSIONS = 16, /* src/proto/sesslist.c */
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
        PROTO_SESSIONS_REPLY = 74,
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
        PROTO_KIND_UPDATED,   /* MEMBER (raft glue): the directory changed;
                                 EXTEND: token, count, the hold restarted */
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

/* Message bodies (in the family headers). Decoders check every length and
 * reject trailing bytes with BATON_EMALFORMED; strings are borrowed from
 * the body. */

struct proto_string {
        const char *p;
        uint8_t len;
};

/*
 * Frame writers, here and in the family headers: each writes a whole frame
 * (header and body) into `out` (capacity `cap`) and returns its length, or
 * 0 when it does not fit, a field is out of range (a string longer than
 * its maximum) or `flags` is not a shape of that message. A writer that
 * takes `flags` puts them in the header as they are.
 */

/* COMMAND: an encoded state machine command (command.h), copied. */
size_t proto_write_command(uint8_t *out, size_t cap, uint64_t id,
                           const void *command, size_t command_len);
/* PING and PONG: no body. */
size_t proto_write_empty(uint8_t *out, size_t cap, uint64_t id, uint8_t type);
/* MEMBER_REMOVE, TRANSFER and UNWATCH: one u64. */
size_t proto_write_id(uint8_t *out, size_t cap, uint64_t id, uint8_t type,
                      uint64_t member);
/* The body of a KEEPALIVE, MEMBER_REMOVE, TRANSFER or UNWATCH: one u64. 0
 * or BATON_EMALFORMED. */
int proto_read_u64(const uint8_t *body, size_t len, uint64_t *v);

/* "RESULT", "PING", ...; "UNKNOWN" for anything else. */
const char *proto_type_name(int type);

/* The frame reader is part of the protocol's interface. */
#include "reader.h"

#endif /* PROTO_PROTO_H */

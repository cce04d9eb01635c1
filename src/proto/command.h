/* The versioned binary encoding of lock state machine commands. */
#ifndef PROTO_COMMAND_H
#define PROTO_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Wire layout of one command (a Raft log entry of its own, or one of a
 * batch, src/fsm/entry.h), all little-endian:
 *
 *   u8  version   the oldest version that carries the command: 4 for a
 *                 SET_VALUE, an EXTEND, an EXPIRE_HOLD and an ACQUIRE of
 *                 a lock or semaphore with a value or a hold time, 3 for
 *                 the types and fields listed below, else 2
 *                 (version 1, read but no longer written, is version 2
 *                 without OPEN's hash)
 *   u8  type      enum command_type
 *   u16 flags     must be 0 in version 1
 *   ... the fields of the type, in the order listed below
 *
 * A string is a u8 length followed by that many bytes. After the last field
 * come zero bytes up to the next multiple of 8, and the buffer ends there:
 * any other length, or a non-zero padding byte, is malformed. The padding
 * is not decoration: libraft (0.15.0 and 0.22.1 alike) sends a log entry's
 * bytes unpadded but its receiver skips padding to 8 after each entry of an
 * AppendEntries, so an entry of any other length would shift every entry
 * after it in the same message (docs/raft.md).
 *
 *   OPEN     nonce u64, ttl_ms u32, hash (32 bytes: SHA-256 of the
 *            session's secret, src/proto/attach.h; opaque here),
 *            [version 3 and 5: delay_ms u32, the session's lock-delay,]
 *            [version 5: principal u64, who opens it for the quotas
 *            (src/fsm/acl.h, acl_principal()),]
 *            client name (string, 0..64 bytes)
 *   CLOSE    session u64, seq u64, ack u64
 *   EXPIRE   session u64, [version 3: delay_ms u32]
 *   ACQUIRE  session u64, seq u64, ack u64, owner u64, wait_ms u32,
 *            mode u8, [version 3 and 4: permits u32, limit u32,] name
 *            (string), [mode 3, an election's candidate, version 3; or
 *            modes 0..2 with a non-empty value or a hold time, version 4:
 *            value (string, 0..255 bytes, no NUL), the grant's data,]
 *            [version 4: hold_ms u32, the most the grant is held, 0: no
 *            limit]
 *   RELEASE  session u64, seq u64, ack u64, owner u64, token u64,
 *            name (string)
 *   CANCEL   session u64, seq u64, ack u64, target u64, name (string)
 *   TIMEOUT  session u64, target u64, name (string)
 *   QUERY    name (string)
 *   CHECK    token u64, name (string)
 *   MEMBER   target u64 (member id), mode u8 (0 set, 1 remove),
 *            raft address (string), client address (string)
 *   REVOKE   session u64, delay_ms u32, by (string, 0..64 bytes: who
 *            asked; version 3)
 *   UNBLOCK  target u64 (the lock's creation stamp), name (string;
 *            version 3)
 *   REVOKE_LOCK session u64, delay_ms u32, token u64, name (string),
 *            by (string, 0..64 bytes; version 3): end the grants of the
 *            lock `name` that `session` holds with `token`, its session
 *            living on
 *   CLOCK    time_ms u64 (version 3): the leader's wall clock, ms since
 *            the Unix epoch, which the grants after it record
 *   MULTI    session u64, seq u64, ack u64, owner u64, wait_ms u32,
 *            n u8 (1..COMMAND_MULTI_MAX), then n x {mode u8, name
 *            (string)} (version 3): a multi-lock, every name taken at
 *            once by one entry or none (docs/fsm.md)
 *   PROCLAIM session u64, seq u64, ack u64, owner u64, token u64, name
 *            (string), value (string) (version 3): the leader of the
 *            election `name`, whose leadership `token` names, advertises
 *            `value` instead of the one it campaigned with
 *   ACL      mode u8 (0 set, 1 remove, 2 seed, 3 rule set, 4 rule
 *            remove), role u8, identity (string; empty for a seed), by
 *            (string, 0..64 bytes: who asked), table u16 length and bytes
 *            (a seed's whole access list, src/fsm/acl.h's encoding; a
 *            rule's kind u8 and prefix string; empty otherwise) (version
 *            3): a change of the replicated access list
 *   SET_VALUE session u64, seq u64, ack u64, owner u64, token u64, name
 *            (string), value (string) (version 4): the holder of the
 *            grant `token` of `name` (a lock's, a reader's, a permit's or
 *            a leadership) changes the grant's value, as PROCLAIM does an
 *            election leader's
 *   EXTEND   session u64, seq u64, ack u64, owner u64, token u64, name
 *            (string), hold_ms u32 (version 4): the holder of the grant
 *            `token` of `name`, which was acquired with a hold time,
 *            holds it for at most hold_ms (1..) from this entry on
 *   EXPIRE_HOLD session u64, delay_ms u32, token u64, target u64, name
 *            (string) (version 4): the leader ends the grant of `name`
 *            that `session`'s ACQUIRE of seq `target` made, its hold time
 *            run out, if its clock still dates from the entry `token`
 *            (its grant, or its last EXTEND), as REVOKE_LOCK ends one
 *   DIGEST   token u64 (a digest of the state), target u64 (the index
 *            of the entry after which it was taken) (version 3): the
 *            leader's digest of its state machine, which every node
 *            compares with its own (src/server/raft/fsmdigest.h); the
 *            lock state machine answers it BATON_EMALFORMED, as a node
 *            of a release before DIGEST does, so that both take the
 *            same stamp and change nothing else
 *
 * REVOKE ends a session as EXPIRE does, at an operator's request (the
 * leader fills `by` with the certificate identity of the client that
 * asked). An EXPIRE or REVOKE with a non-zero `delay_ms` puts each
 * read/write lock the session loses in its lock-delay (docs/fsm.md): the
 * leader writes its configured delay into the entry, so every replay of
 * the log decides alike. UNBLOCK ends a lock's lock-delay; the leader
 * proposes it when the delay has passed, as it proposes EXPIRE.
 * OPEN, CLOSE, ACQUIRE, RELEASE and CANCEL come from clients; EXPIRE and
 * TIMEOUT are proposed by the leader when a session's or a waiter's deadline
 * passes; QUERY and CHECK are reads that change nothing. MEMBER records a
 * cluster member's addresses (src/fsm/directory.h); for a removal both
 * addresses are empty.
 *
 * Compatibility: a node reads every version from COMMAND_VERSION_MIN up,
 * and a command is written in the oldest version that carries it, so a
 * cluster part-way through an upgrade keeps applying the same entries on
 * every node until someone uses what only the new version has. Each
 * command has one encoding: a version 3 command that is not a semaphore
 * ACQUIRE, an OPEN or EXPIRE with a delay, a REVOKE, a REVOKE_LOCK, an
 * UNBLOCK, a MULTI, a CLOCK or a DIGEST is malformed, and so is one of those of
 * another version; a version 4 command is a SET_VALUE, an EXTEND, an
 * EXPIRE_HOLD or an ACQUIRE of mode 0..2 with a value of 1..255 bytes or
 * a hold time, and those are version 4 only; a version 5 command is an
 * OPEN with a principal, which the leader fills in only while the access
 * list has a quota (so a cluster that sets none reads as before); and permits
 * and limit are zero in an ACQUIRE of another mode. Only ACQUIRE, PROCLAIM and
 * SET_VALUE carry a value; only ACQUIRE and EXTEND a hold time (an
 * EXTEND's is never 0).
 */

#define COMMAND_VERSION     5  /* the newest version read */
#define COMMAND_VERSION_MIN 1  /* the oldest version still decoded */
#define COMMAND_HASH_SIZE   32 /* OPEN's hash of the session's secret */

/* Lock names are 1..255 bytes with no NUL; client names 0..64 bytes. */
#define COMMAND_NAME_MAX        255
#define COMMAND_CLIENT_NAME_MAX 64
#define COMMAND_ADDRESS_MAX     64  /* member addresses, "host:port" */
#define COMMAND_VALUE_MAX       255 /* a grant's value: 0..255 bytes */

/* wait_ms values with a special meaning. */
#define COMMAND_WAIT_TRY     0          /* answer BUSY instead of queueing */
#define COMMAND_WAIT_FOREVER UINT32_MAX /* queue with no deadline */

/* The largest encoded command but MULTI: a version 4 ACQUIRE with a
 * 255-byte name, a 255-byte value and a hold time, padded (an election's
 * ACQUIRE takes as much, a PROCLAIM 560, a REVOKE_LOCK 352, a semaphore
 * ACQUIRE 312, a RELEASE and an EXTEND 304). */
#define COMMAND_MAX_SIZE                                                       \
        (((4 + 8 * 4 + 4 + 1 + 4 + 4 + 1 + COMMAND_NAME_MAX + 1 +              \
           COMMAND_VALUE_MAX + 4) +                                            \
          7) /                                                                 \
         8 * 8)

/* The most names one MULTI carries (the cluster's max-names-per-acquire
 * is at most this), and the largest MULTI: that many 255-byte names. */
#define COMMAND_MULTI_MAX 16
#define COMMAND_MULTI_MAX_SIZE                                                 \
        (((4 + 8 * 4 + 4 + 1 + COMMAND_MULTI_MAX * (2 + COMMAND_NAME_MAX)) +   \
          7) /                                                                 \
         8 * 8)
/* The largest encoded command of any type. */
#define COMMAND_ANY_MAX_SIZE COMMAND_MULTI_MAX_SIZE

enum command_type {
        COMMAND_OPEN = 1,
        COMMAND_CLOSE = 2,
        COMMAND_EXPIRE = 3,
        COMMAND_ACQUIRE = 4,
        COMMAND_RELEASE = 5,
        COMMAND_CANCEL = 6,
        COMMAND_TIMEOUT = 7,
        COMMAND_QUERY = 8,
        COMMAND_CHECK = 9,
        COMMAND_MEMBER = 10,
        COMMAND_BATCH = 11, /* a log entry of several commands (entry.h) */
        COMMAND_REVOKE = 12,
        COMMAND_UNBLOCK = 13,
        COMMAND_MULTI = 14,
        COMMAND_REVOKE_LOCK = 15,
        COMMAND_CLOCK = 16,
        COMMAND_PROCLAIM = 17,
        COMMAND_ACL = 18,
        COMMAND_DIGEST = 19,
        COMMAND_SET_VALUE = 20,
        COMMAND_EXTEND = 21,
        COMMAND_EXPIRE_HOLD = 22,
};

/* ACL modes (src/fsm/acl.h). */
enum command_acl_mode {
        COMMAND_ACL_SET = 0,
        COMMAND_ACL_REMOVE = 1,
        COMMAND_ACL_SEED = 2,
        /* A rule on a name prefix: role holds its permissions (1..7 for a
         * set, 0 for a remove), identity its subject, and the table u8
         * kind (1 identity, 2 group) then the prefix as a string. */
        COMMAND_ACL_RULE_SET = 3,
        COMMAND_ACL_RULE_REMOVE = 4,
        /* A quota of an identity (or of "*", every identity without one):
         * identity holds its subject, and a set's table the limits, u32
         * each in the order of enum acl_quota_kind (src/fsm/acl.h; 0: no
         * limit); a remove has no table. Role 0. */
        COMMAND_ACL_QUOTA_SET = 5,
        COMMAND_ACL_QUOTA_REMOVE = 6,
};

/* The table of a QUOTA_SET: ACL_QUOTA_KINDS u32 limits. */
#define COMMAND_ACL_QUOTA_TABLE 20

/* The largest ACL table a seed carries. */
#define COMMAND_ACL_TABLE_MAX 65535

/* MEMBER modes. */
enum command_member_mode {
        COMMAND_MEMBER_SET = 0,
        COMMAND_MEMBER_REMOVE = 1,
};

/* ACQUIRE modes: the kind of grant asked for (docs/fsm.md). */
enum command_mode {
        COMMAND_MODE_EXCLUSIVE = 0, /* a lock's writer */
        COMMAND_MODE_SHARED = 1,    /* a lock's reader */
        COMMAND_MODE_SEMAPHORE = 2, /* permits of a semaphore (version 3) */
        COMMAND_MODE_ELECTION = 3,  /* a candidate of an election (version 3),
                                       with a value */
};

/*
 * A decoded command. Fields a type does not carry are zero. `name` is
 * borrowed: after command_decode() it points into the decoded buffer and is
 * not NUL-terminated. For OPEN it holds the client name, for MEMBER the raft
 * address (and `address` the client address), for REVOKE who asked, for
 * MULTI its first lock name (`list` has them all); for REVOKE_LOCK the lock
 * name, and `address` who asked; for ACL the identity, `address` who
 * asked and `list` a seed's table.
 */
struct command {
        uint8_t type;
        uint8_t mode;
        uint8_t role; /* ACL: the role a SET gives */
        uint8_t name_len;
        uint32_t ttl_ms;
        uint32_t wait_ms;
        /* A semaphore ACQUIRE's permits asked for and the semaphore's
         * number of permits; zero in every other command (and in a
         * version 2 ACQUIRE of mode 2, which the state machine refuses). */
        uint32_t permits;
        uint32_t limit;
        /* EXPIRE (version 3) and REVOKE: the lock-delay of the locks the
         * session loses, in ms; 0: none. OPEN (version 3): the session's
         * own lock-delay, which its locks get when they are lost. */
        uint32_t delay_ms;
        uint64_t session;
        uint64_t seq;     /* per-session request number, from 1 */
        uint64_t ack;     /* the client has final answers for every seq < ack */
        uint64_t owner;   /* owner tag within the session (e.g. a thread) */
        uint64_t token;   /* RELEASE, CHECK */
        uint64_t target;  /* CANCEL, TIMEOUT: the seq of the waiting ACQUIRE */
        uint64_t nonce;   /* OPEN: the client's random id for retries */
        uint64_t time_ms; /* CLOCK: the leader's wall clock */
        const char *name;
        const char *address; /* MEMBER: client address, borrowed */
        uint8_t address_len;
        /* ACQUIRE, PROCLAIM and SET_VALUE: the grant's value, which an
         * election's candidate or leader advertises and any other grant
         * carries as its data (value_len bytes, borrowed). */
        const char *value;
        uint8_t value_len;
        /* ACQUIRE (version 4; not a campaign) and EXTEND: the most the
         * grant may be held, ms from its grant (from the EXTEND); 0 in an
         * ACQUIRE: no limit. */
        uint32_t hold_ms;
        /* OPEN: COMMAND_HASH_SIZE bytes, borrowed; NULL reads as all zero
         * (and a version 1 OPEN decodes to NULL). */
        const uint8_t *hash;
        /* OPEN (version 5): who opens the session, for the quotas (a
         * hash of its certificate identity, never 0); 0: nobody counted
         * (an OPEN from before quotas, or while none is set). */
        uint64_t principal;
        /* MULTI: `n_names` entries of {mode u8, name string}, `list_len`
         * bytes as on the wire (ACL: a seed's table), borrowed
         * (command_list_add() builds one, command_list_next() walks it). */
        const uint8_t *list;
        uint16_t list_len;
        uint8_t n_names;
};

/* Append {mode, name} to a MULTI's list in `buf` (capacity `cap`, `*len`
 * bytes used): 0, BATON_ENAME for a bad name, or BATON_EINVAL when `buf`
 * is full. */
int command_list_add(uint8_t *buf, size_t cap, size_t *len, uint8_t mode,
                     const char *name, size_t name_len);

/* One entry of a MULTI's list, from offset `*at` (start at 0): true with
 * `*mode`, `*name` (borrowed) and `*name_len`, advancing `*at`; false at
 * the end. The list must have been validated (command_validate()). */
bool command_list_next(const struct command *c, size_t *at, uint8_t *mode,
                       const char **name, uint8_t *name_len);

/* Encoded size of `c`, or 0 if `c` cannot be encoded (bad type or name).
 * Every command but an ACL seed fits COMMAND_ANY_MAX_SIZE. */
size_t command_size(const struct command *c);

/*
 * Encode `c` into `buf` (capacity `cap`). Returns the number of bytes written,
 * or 0 if `c` is invalid (see command_validate) or `buf` is too small.
 */
size_t command_encode(const struct command *c, void *buf, size_t cap);

/*
 * Decode and validate one command, of version COMMAND_VERSION_MIN up to
 * COMMAND_VERSION. Returns 0, BATON_EVERSION for another version, BATON_ENAME
 * for a bad lock name, or BATON_EMALFORMED for anything else that is wrong
 * (unknown type, non-zero flags, short or long buffer, bad client name). `c`
 * borrows from `buf`. On error `c` is unspecified.
 */
int command_decode(struct command *c, const void *buf, size_t len);

/* Checks that decode applies, on a command built in memory. */
int command_validate(const struct command *c);

/* The type of the command encoded at `buf` (its header's second byte) when
 * `len` covers a header of a version command_decode() reads, else 0. Decodes
 * nothing else: for dispatch before command_decode(). */
int command_peek_type(const void *buf, size_t len);

/* The name of a command type ("ACQUIRE"), or "UNKNOWN". */
const char *command_type_name(int type);

#endif /* PROTO_COMMAND_H */

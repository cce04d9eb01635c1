/* Watching locks: WATCH requests and the WATCH_EVENT frames pushed for
 * them (UNWATCH carries one u64: proto_write_id() in proto.h). */
#ifndef PROTO_WATCH_H
#define PROTO_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define PROTO_WATCH_PREFIX 0x01 /* WATCH flags: the name is a prefix */
#define PROTO_VALUE_MAX    255  /* a grant's value */

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
        PROTO_EVENT_GRANTED = 1,  /* a grant: token, mode, permits */
        PROTO_EVENT_RELEASED = 2, /* a grant ended; cause says how */
        PROTO_EVENT_PROCLAIMED =
            3, /* a holder's new value (PROCLAIM, SET_VALUE) */
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
        struct proto_string
            value; /* the grant's value (an election's: the leader's) */
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

#endif /* PROTO_WATCH_H */

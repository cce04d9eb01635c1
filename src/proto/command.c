/* The versioned binary encoding of lock state machine commands. */
#include "command.h"

#include <stdbool.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"

/* Which fields each type carries, in wire order. */
enum {
        F_SESSION = 1 << 0,
        F_SEQ = 1 << 1, /* seq and ack */
        F_OWNER = 1 << 2,
        F_WAIT = 1 << 3, /* wait_ms and mode */
        F_TOKEN = 1 << 4,
        F_TARGET = 1 << 5,
        F_NAME = 1 << 6,
        F_OPEN = 1 << 7,   /* nonce, ttl_ms, client name */
        F_MEMBER = 1 << 8, /* target, mode, raft and client addresses */
        F_BY = 1 << 9,     /* who asked: a string as OPEN's client name */
        F_DELAY = 1 << 10, /* delay_ms, in version 3 */
        F_LIST = 1 << 11,  /* wait_ms, n, n x {mode, name} */
        F_BY2 = 1 << 12,   /* who asked, a second string (in `address`) */
        F_TIME = 1 << 13,  /* time_ms */
        F_VALUE = 1 << 14, /* value (string), after the name */
        F_ACL = 1 << 15,   /* mode, role, identity, by, table */
        F_HOLD = 1 << 16,  /* hold_ms, after the name (version 4) */
};

/* Whether `c`, in `version` (0: the one it is encoded in), carries a
 * value: a PROCLAIM and a SET_VALUE; an election's ACQUIRE; and from
 * version 4 any ACQUIRE with a value (a lock's, a reader's or a permit's
 * grant data). The mode comes before the name on the wire, so a decoder
 * knows before it reads the value. */
static bool has_value(const struct command *c, unsigned f, uint8_t version)
{
        if (f & F_VALUE) {
                return true;
        }
        if (c->type != COMMAND_ACQUIRE) {
                return false;
        }
        return c->mode == COMMAND_MODE_ELECTION ||
               (version != 0 ? version >= 4 : c->value_len > 0);
}

/* Whether `c`, in `version` (0: the one it is encoded in), carries a
 * hold time: an EXTEND; from version 4 an ACQUIRE of a lock, a reader or
 * permits (after its value). */
static bool has_hold(const struct command *c, unsigned f, uint8_t version)
{
        if (f & F_HOLD) {
                return true;
        }
        return c->type == COMMAND_ACQUIRE && c->mode != COMMAND_MODE_ELECTION &&
               (version != 0 ? version >= 4
                             : c->value_len > 0 || c->hold_ms > 0);
}

static unsigned fields_of(int type)
{
        switch (type) {
        case COMMAND_OPEN:
                return F_OPEN | F_DELAY;
        case COMMAND_CLOSE:
                return F_SESSION | F_SEQ;
        case COMMAND_EXPIRE:
                return F_SESSION | F_DELAY;
        case COMMAND_ACQUIRE:
                return F_SESSION | F_SEQ | F_OWNER | F_WAIT | F_NAME;
        case COMMAND_RELEASE:
                return F_SESSION | F_SEQ | F_OWNER | F_TOKEN | F_NAME;
        case COMMAND_CANCEL:
                return F_SESSION | F_SEQ | F_TARGET | F_NAME;
        case COMMAND_TIMEOUT:
                return F_SESSION | F_TARGET | F_NAME;
        case COMMAND_QUERY:
                return F_NAME;
        case COMMAND_CHECK:
                return F_TOKEN | F_NAME;
        case COMMAND_MEMBER:
                return F_MEMBER;
        case COMMAND_REVOKE:
                return F_SESSION | F_DELAY | F_BY;
        case COMMAND_UNBLOCK:
                return F_TARGET | F_NAME;
        case COMMAND_MULTI:
                return F_SESSION | F_SEQ | F_OWNER | F_LIST;
        case COMMAND_REVOKE_LOCK:
                return F_SESSION | F_DELAY | F_TOKEN | F_NAME | F_BY2;
        case COMMAND_CLOCK:
                return F_TIME;
        case COMMAND_PROCLAIM:
        case COMMAND_SET_VALUE:
                return F_SESSION | F_SEQ | F_OWNER | F_TOKEN | F_NAME | F_VALUE;
        case COMMAND_ACL:
                return F_ACL;
        case COMMAND_DIGEST:
                return F_TOKEN | F_TARGET;
        case COMMAND_EXTEND:
                return F_SESSION | F_SEQ | F_OWNER | F_TOKEN | F_NAME | F_HOLD;
        case COMMAND_EXPIRE_HOLD:
                return F_SESSION | F_DELAY | F_TOKEN | F_TARGET | F_NAME;
        default:
                return 0;
        }
}

const char *command_type_name(int type)
{
        static const char *const names[] = {
            [COMMAND_OPEN] = "OPEN",
            [COMMAND_CLOSE] = "CLOSE",
            [COMMAND_EXPIRE] = "EXPIRE",
            [COMMAND_ACQUIRE] = "ACQUIRE",
            [COMMAND_RELEASE] = "RELEASE",
            [COMMAND_CANCEL] = "CANCEL",
            [COMMAND_TIMEOUT] = "TIMEOUT",
            [COMMAND_QUERY] = "QUERY",
            [COMMAND_CHECK] = "CHECK",
            [COMMAND_MEMBER] = "MEMBER",
            [COMMAND_BATCH] = "BATCH",
            [COMMAND_REVOKE] = "REVOKE",
            [COMMAND_UNBLOCK] = "UNBLOCK",
            [COMMAND_MULTI] = "MULTI",
            [COMMAND_REVOKE_LOCK] = "REVOKE_LOCK",
            [COMMAND_CLOCK] = "CLOCK",
            [COMMAND_PROCLAIM] = "PROCLAIM",
            [COMMAND_ACL] = "ACL",
            [COMMAND_DIGEST] = "DIGEST",
            [COMMAND_SET_VALUE] = "SET_VALUE",
            [COMMAND_EXTEND] = "EXTEND",
            [COMMAND_EXPIRE_HOLD] = "EXPIRE_HOLD",
        };
        if (type <= 0 || (size_t)type >= sizeof names / sizeof names[0]) {
                return "UNKNOWN";
        }
        return names[type];
}

static int check_name(const char *name, size_t len)
{
        if (len == 0 || len > COMMAND_NAME_MAX || name == NULL ||
            memchr(name, '\0', len) != NULL) {
                return BATON_ENAME;
        }
        return 0;
}

/* A member address: empty for a removal, else 1..64 bytes without NUL. */
static bool address_ok(const char *p, size_t len, bool set)
{
        if (!set) {
                return len == 0;
        }
        return len > 0 && len <= COMMAND_ADDRESS_MAX && p != NULL &&
               memchr(p, '\0', len) == NULL;
}

int command_list_add(uint8_t *buf, size_t cap, size_t *len, uint8_t mode,
                     const char *name, size_t name_len)
{
        if (check_name(name, name_len) != 0) {
                return BATON_ENAME;
        }
        if (*len + 2 + name_len > cap) {
                return BATON_EINVAL;
        }
        buf[(*len)++] = mode;
        buf[(*len)++] = (uint8_t)name_len;
        memcpy(buf + *len, name, name_len);
        *len += name_len;
        return 0;
}

bool command_list_next(const struct command *c, size_t *at, uint8_t *mode,
                       const char **name, uint8_t *name_len)
{
        if (*at + 2 > c->list_len) {
                return false;
        }
        *mode = c->list[*at];
        *name_len = c->list[*at + 1];
        *name = (const char *)c->list + *at + 2;
        *at += 2 + (size_t)*name_len;
        return true;
}

/* A MULTI's list: exactly n_names (1..COMMAND_MULTI_MAX) entries filling
 * list_len bytes, each name valid. */
static int check_list(const struct command *c)
{
        size_t at = 0, n = 0;

        if (c->n_names == 0 || c->n_names > COMMAND_MULTI_MAX ||
            c->list == NULL) {
                return BATON_EMALFORMED;
        }
        while (at < c->list_len) {
                size_t len;
                if (at + 2 > c->list_len ||
                    (len = c->list[at + 1]) > c->list_len - at - 2) {
                        return BATON_EMALFORMED;
                }
                if (check_name((const char *)c->list + at + 2, len) != 0) {
                        return BATON_ENAME;
                }
                at += 2 + len;
                n++;
        }
        return n == c->n_names ? 0 : BATON_EMALFORMED;
}

/* A string of 0..max bytes with no NUL. */
static bool text_ok(const char *p, size_t len, size_t max)
{
        return len <= max &&
               (len == 0 || (p != NULL && memchr(p, '\0', len) == NULL));
}

/* A rule's table: kind 1 or 2, then a prefix of 0..255 bytes, no NUL. */
static bool rule_ok(const struct command *c)
{
        return c->list != NULL && c->list_len >= 2 &&
               (c->list[0] == 1 || c->list[0] == 2) &&
               c->list_len == 2 + c->list[1] &&
               text_ok((const char *)c->list + 2, c->list[1],
                       COMMAND_NAME_MAX) &&
               c->name_len > 0 &&
               text_ok(c->address, c->address_len, COMMAND_CLIENT_NAME_MAX) &&
               text_ok(c->name, c->name_len, COMMAND_NAME_MAX) &&
               (c->mode == COMMAND_ACL_RULE_SET ? c->role >= 1 && c->role <= 7
                                                : c->role == 0);
}

/* A quota's set or remove: role 0, a subject of 1..255 bytes, and a
 * set's limits (COMMAND_ACL_QUOTA_TABLE bytes; src/fsm/acl.c checks
 * their values) or a remove's empty table. */
static bool quota_ok(const struct command *c)
{
        size_t want =
            c->mode == COMMAND_ACL_QUOTA_SET ? COMMAND_ACL_QUOTA_TABLE : 0;

        return c->role == 0 && c->name_len > 0 &&
               text_ok(c->name, c->name_len, COMMAND_NAME_MAX) &&
               text_ok(c->address, c->address_len, COMMAND_CLIENT_NAME_MAX) &&
               c->list_len == want && (want == 0 || c->list != NULL);
}

/* An ACL: a set (role 0..3) or remove names an identity of 1..255 bytes
 * and carries no table; a seed carries a table and no identity; a rule's
 * set or remove names its subject and carries its kind and prefix. */
static int check_acl(const struct command *c)
{
        bool seed = c->mode == COMMAND_ACL_SEED;

        if (c->mode == COMMAND_ACL_QUOTA_SET ||
            c->mode == COMMAND_ACL_QUOTA_REMOVE) {
                return quota_ok(c) ? 0 : BATON_EMALFORMED;
        }
        if (c->mode == COMMAND_ACL_RULE_SET ||
            c->mode == COMMAND_ACL_RULE_REMOVE) {
                return rule_ok(c) ? 0 : BATON_EMALFORMED;
        }
        if (c->mode > COMMAND_ACL_SEED ||
            !text_ok(c->address, c->address_len, COMMAND_CLIENT_NAME_MAX) ||
            !text_ok(c->name, c->name_len, COMMAND_NAME_MAX) ||
            (c->name_len == 0) != seed || (c->list_len == 0) == seed ||
            (seed && c->list == NULL) || c->role > 3 ||
            (c->mode != COMMAND_ACL_SET && c->role != 0)) {
                return BATON_EMALFORMED;
        }
        return 0;
}

int command_validate(const struct command *c)
{
        unsigned f = fields_of(c->type);

        if (f == 0) {
                return BATON_EMALFORMED;
        }
        if (f & F_ACL) {
                return check_acl(c);
        }
        if (f & F_MEMBER) {
                bool set = c->mode == COMMAND_MEMBER_SET;
                if (c->target == 0 || c->mode > COMMAND_MEMBER_REMOVE ||
                    !address_ok(c->name, c->name_len, set) ||
                    !address_ok(c->address, c->address_len, set)) {
                        return BATON_EMALFORMED;
                }
                return 0;
        }
        if (f & F_WAIT && c->mode != COMMAND_MODE_SEMAPHORE &&
            (c->permits != 0 || c->limit != 0)) {
                return BATON_EMALFORMED;
        }
        /* An EXTEND always names a hold time (elsewhere one is carried
         * by an ACQUIRE of a lock, a reader or permits only, and not
         * encoded where it is not, as any field a type does not carry);
         * an EXPIRE_HOLD names the hold's ACQUIRE. */
        if ((f & F_HOLD && c->hold_ms == 0) ||
            (c->type == COMMAND_EXPIRE_HOLD && c->target == 0)) {
                return BATON_EMALFORMED;
        }
        if (f & F_BY2 &&
            (c->address_len > COMMAND_CLIENT_NAME_MAX ||
             (c->address_len > 0 &&
              (c->address == NULL ||
               memchr(c->address, '\0', c->address_len) != NULL)))) {
                return BATON_EMALFORMED;
        }
        /* A value where one is carried (elsewhere it is not encoded,
         * as any field a type does not carry). */
        if (has_value(c, f, 0) && c->value_len > 0 &&
            (c->value == NULL ||
             memchr(c->value, '\0', c->value_len) != NULL)) {
                return BATON_EMALFORMED;
        }
        if (f & F_NAME) {
                return check_name(c->name, c->name_len);
        }
        if (f & F_LIST) {
                return check_list(c);
        }
        if (f & (F_OPEN | F_BY)) {
                if (c->name_len > COMMAND_CLIENT_NAME_MAX ||
                    (c->name_len > 0 &&
                     (c->name == NULL ||
                      memchr(c->name, '\0', c->name_len) != NULL))) {
                        return BATON_EMALFORMED;
                }
        }
        return 0;
}

/* The oldest version that carries `c` (command.h, "Compatibility"). */
static uint8_t version_of(const struct command *c)
{
        if (c->type == COMMAND_OPEN && c->principal != 0) {
                return 5;
        }
        if (c->type == COMMAND_SET_VALUE || c->type == COMMAND_EXTEND ||
            c->type == COMMAND_EXPIRE_HOLD || has_hold(c, 0, 0)) {
                return 4;
        }
        return c->type == COMMAND_REVOKE || c->type == COMMAND_UNBLOCK ||
                       c->type == COMMAND_MULTI ||
                       c->type == COMMAND_REVOKE_LOCK ||
                       c->type == COMMAND_CLOCK ||
                       c->type == COMMAND_PROCLAIM || c->type == COMMAND_ACL ||
                       c->type == COMMAND_DIGEST ||
                       ((c->type == COMMAND_EXPIRE ||
                         c->type == COMMAND_OPEN) &&
                        c->delay_ms != 0) ||
                       (c->type == COMMAND_ACQUIRE &&
                        (c->mode == COMMAND_MODE_SEMAPHORE ||
                         c->mode == COMMAND_MODE_ELECTION))
                   ? 3
                   : 2;
}

/* An ACL's fields, after its header. */
static void put_acl(const struct command *c, struct wcursor *w)
{
        wcursor_u8(w, c->mode);
        wcursor_u8(w, c->role);
        wcursor_u8(w, c->name_len);
        wcursor_bytes(w, c->name, c->name_len);
        wcursor_u8(w, c->address_len);
        wcursor_bytes(w, c->address, c->address_len);
        wcursor_u16(w, c->list_len);
        wcursor_bytes(w, c->list, c->list_len);
}

static void read_acl(struct command *c, struct rcursor *r)
{
        c->mode = rcursor_u8(r);
        c->role = rcursor_u8(r);
        c->name_len = rcursor_u8(r);
        c->name = (const char *)rcursor_bytes(r, c->name_len);
        c->address_len = rcursor_u8(r);
        c->address = (const char *)rcursor_bytes(r, c->address_len);
        c->list_len = rcursor_u16(r);
        c->list = rcursor_bytes(r, c->list_len);
}

/* Encodes or sizes `c`: the same walk serves both so they cannot disagree.
 * Long because it is every field of every type in wire order, read
 * against command.h's layout in one place. */
static void put(const struct command *c, struct wcursor *w)
{
        unsigned f = fields_of(c->type);
        uint8_t version = version_of(c);

        wcursor_u8(w, version);
        wcursor_u8(w, c->type);
        wcursor_u16(w, 0);
        if (f & F_TIME) {
                wcursor_u64(w, c->time_ms);
        }
        if (f & F_OPEN) {
                static const uint8_t zero[COMMAND_HASH_SIZE];
                wcursor_u64(w, c->nonce);
                wcursor_u32(w, c->ttl_ms);
                wcursor_bytes(w, c->hash != NULL ? c->hash : zero,
                              COMMAND_HASH_SIZE);
        }
        if (f & F_TOKEN && !(f & F_SESSION)) {
                wcursor_u64(w, c->token); /* CHECK */
        }
        if (f & F_SESSION) {
                wcursor_u64(w, c->session);
        }
        if (f & F_DELAY && version >= 3) {
                wcursor_u32(w, c->delay_ms);
        }
        if (f & F_OPEN && version >= 5) {
                wcursor_u64(w, c->principal);
        }
        if (f & F_SEQ) {
                wcursor_u64(w, c->seq);
                wcursor_u64(w, c->ack);
        }
        if (f & F_OWNER) {
                wcursor_u64(w, c->owner);
        }
        if (f & F_WAIT) {
                wcursor_u32(w, c->wait_ms);
                wcursor_u8(w, c->mode);
                if (version >= 3) {
                        wcursor_u32(w, c->permits);
                        wcursor_u32(w, c->limit);
                }
        }
        if (f & F_LIST) {
                wcursor_u32(w, c->wait_ms);
                wcursor_u8(w, c->n_names);
                wcursor_bytes(w, c->list, c->list_len);
        }
        if (f & F_TOKEN && f & F_SESSION) {
                wcursor_u64(w, c->token); /* RELEASE */
        }
        if (f & F_TARGET) {
                wcursor_u64(w, c->target);
        }
        if (f & F_MEMBER) {
                wcursor_u64(w, c->target);
                wcursor_u8(w, c->mode);
        }
        if (f & (F_NAME | F_OPEN | F_MEMBER | F_BY)) {
                wcursor_u8(w, c->name_len);
                wcursor_bytes(w, c->name, c->name_len);
        }
        if (has_value(c, f, version)) {
                wcursor_u8(w, c->value_len);
                wcursor_bytes(w, c->value, c->value_len);
        }
        if (has_hold(c, f, version)) {
                wcursor_u32(w, c->hold_ms);
        }
        if (f & (F_MEMBER | F_BY2)) {
                wcursor_u8(w, c->address_len);
                wcursor_bytes(w, c->address, c->address_len);
        }
        if (f & F_ACL) {
                put_acl(c, w);
        }
        while (!w->bad && w->len % 8 != 0) {
                wcursor_u8(w, 0);
        }
}

size_t command_size(const struct command *c)
{
        struct wcursor w;

        if (command_validate(c) != 0) {
                return 0;
        }
        wcursor_init(&w, NULL, SIZE_MAX); /* counts, writes nothing */
        put(c, &w);
        return w.bad ? 0 : w.len;
}

size_t command_encode(const struct command *c, void *buf, size_t cap)
{
        struct wcursor w;

        if (command_validate(c) != 0) {
                return 0;
        }
        wcursor_init(&w, buf, cap);
        put(c, &w);
        return w.bad ? 0 : w.len;
}

/* What is left of a command of `len` bytes after its fields is exactly
 * the zero padding to a multiple of 8, nothing more. */
static bool padding_ok(struct rcursor *r, size_t len)
{
        if (r->bad || len % 8 != 0 || r->left >= 8) {
                return false;
        }
        while (r->left > 0) {
                if (rcursor_u8(r) != 0) {
                        return false;
                }
        }
        return true;
}

/* A MULTI's wait_ms and list, the list borrowed from `r`'s buffer with
 * `c->name` at its first name; 0, or BATON_EMALFORMED when the list does
 * not hold its count of entries (its names are checked later). */
static int read_list(struct command *c, struct rcursor *r)
{
        const uint8_t *start;
        size_t at = 0;
        unsigned i;

        c->wait_ms = rcursor_u32(r);
        c->n_names = rcursor_u8(r);
        start = r->p;
        if (r->bad || c->n_names == 0 || c->n_names > COMMAND_MULTI_MAX) {
                return BATON_EMALFORMED;
        }
        for (i = 0; i < c->n_names && !r->bad; i++) {
                (void)rcursor_u8(r);
                (void)rcursor_bytes(r, rcursor_u8(r));
        }
        if (r->bad) {
                return BATON_EMALFORMED;
        }
        c->list = start;
        c->list_len = (uint16_t)(r->p - start);
        (void)command_list_next(c, &at, &c->mode, &c->name, &c->name_len);
        c->mode = 0;
        return 0;
}

/* The end of a decode: an ACL's fields (which no other type shares, all
 * after the header), then each command has one encoding (versions 3 and
 * 4 carry only what needs them; 1 and 2 are one encoding, 1 without
 * OPEN's hash), the padding, and the checks of validate. */
static int finish(struct command *c, uint8_t version, struct rcursor *r,
                  size_t len)
{
        uint8_t want;

        if (fields_of(c->type) & F_ACL) {
                read_acl(c, r);
        }
        want = version_of(c);
        if ((want >= 3 || version >= 3) && version != want) {
                return BATON_EMALFORMED;
        }
        if (!padding_ok(r, len)) {
                return BATON_EMALFORMED;
        }
        return command_validate(c);
}

/* What follows a command's name: its value and its hold time, where the
 * type, the mode and the version carry them. */
static void read_grant_data(struct command *c, unsigned f, uint8_t version,
                            struct rcursor *r)
{
        if (has_value(c, f, version)) {
                c->value_len = rcursor_u8(r);
                c->value = (const char *)rcursor_bytes(r, c->value_len);
        }
        if (has_hold(c, f, version)) {
                c->hold_ms = rcursor_u32(r);
        }
}

int command_decode(struct command *c, const void *buf, size_t len)
{
        struct rcursor r;
        uint8_t version;
        unsigned f;

        memset(c, 0, sizeof *c);
        rcursor_init(&r, buf, len);
        version = rcursor_u8(&r);
        if (r.bad) {
                return BATON_EMALFORMED;
        }
        if (version < COMMAND_VERSION_MIN || version > COMMAND_VERSION) {
                return BATON_EVERSION;
        }
        c->type = rcursor_u8(&r);
        f = fields_of(c->type);
        if (rcursor_u16(&r) != 0 || f == 0) {
                return BATON_EMALFORMED;
        }
        if (f & F_TIME) {
                c->time_ms = rcursor_u64(&r);
        }
        if (f & F_OPEN) {
                c->nonce = rcursor_u64(&r);
                c->ttl_ms = rcursor_u32(&r);
                if (version >= 2) {
                        c->hash = rcursor_bytes(&r, COMMAND_HASH_SIZE);
                }
        }
        if (f & F_TOKEN && !(f & F_SESSION)) {
                c->token = rcursor_u64(&r);
        }
        if (f & F_SESSION) {
                c->session = rcursor_u64(&r);
        }
        if (f & F_DELAY && version >= 3) {
                c->delay_ms = rcursor_u32(&r);
        }
        if (f & F_OPEN && version >= 5) {
                c->principal = rcursor_u64(&r);
        }
        if (f & F_SEQ) {
                c->seq = rcursor_u64(&r);
                c->ack = rcursor_u64(&r);
        }
        if (f & F_OWNER) {
                c->owner = rcursor_u64(&r);
        }
        if (f & F_WAIT) {
                c->wait_ms = rcursor_u32(&r);
                c->mode = rcursor_u8(&r);
                if (version >= 3) {
                        c->permits = rcursor_u32(&r);
                        c->limit = rcursor_u32(&r);
                }
        }
        if (f & F_LIST && read_list(c, &r) != 0) {
                return BATON_EMALFORMED;
        }
        if (f & F_TOKEN && f & F_SESSION) {
                c->token = rcursor_u64(&r);
        }
        if (f & F_TARGET) {
                c->target = rcursor_u64(&r);
        }
        if (f & F_MEMBER) {
                c->target = rcursor_u64(&r);
                c->mode = rcursor_u8(&r);
        }
        if (f & (F_NAME | F_OPEN | F_MEMBER | F_BY)) {
                c->name_len = rcursor_u8(&r);
                c->name = (const char *)rcursor_bytes(&r, c->name_len);
        }
        read_grant_data(c, f, version, &r);
        if (f & (F_MEMBER | F_BY2)) {
                c->address_len = rcursor_u8(&r);
                c->address = (const char *)rcursor_bytes(&r, c->address_len);
        }
        return finish(c, version, &r, len);
}

int command_peek_type(const void *buf, size_t len)
{
        const uint8_t *p = buf;

        return len >= 4 && p[0] >= COMMAND_VERSION_MIN &&
                       p[0] <= COMMAND_VERSION
                   ? p[1]
                   : 0;
}

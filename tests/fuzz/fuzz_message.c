/* Fuzz target of the client protocol's message decoders: arbitrary bytes as
 * the body of a frame of any type, read by the reader that type calls for
 * (proto.h's one-u64 bodies, reply.h, query.h, member.h, status.h,
 * keepalive.h, list.h, watch.h, backup.h, aclwire.h, attach.h, sesslist.h,
 * and command.h's command_decode() for COMMAND).
 *
 * An input is u8 type, u16 flags (little-endian, as in a frame header),
 * then the body: the two header fields a decoder depends on, then what it
 * decodes. A type byte that names no message picks one by its value modulo
 * their number, so that every input reaches some decoder.
 *
 * Any body may be refused; none may crash, read past its end or leak. A
 * body that decodes under flags its header would carry must be written back
 * by its type's writer, with those flags, into a frame whose header says
 * that type, those flags and the body's length, and whose body is the
 * input's byte for byte: each of these messages has one encoding (fixed
 * fields, u8-length strings, counts bounded by the body, trailing bytes
 * refused). The exception is ACL_REPLY, whose reader takes a newer format
 * than what it lists needs while its writer picks the oldest: there the
 * rewritten body must decode to the same value, and be written again to the
 * same bytes. COMMAND bodies are only decoded: fuzz_command holds the
 * command codec to more. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/backup.h"
#include "../../src/proto/command.h"
#include "../../src/proto/frame.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/list.h"
#include "../../src/proto/member.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/sesslist.h"
#include "../../src/proto/status.h"
#include "../../src/proto/watch.h"
#include "replay.h"

/* The id of every frame written back; any will do, so long as it is
 * checked. */
#define FRAME_ID 0x0807060504030201ULL

/* Every message type, in enum proto_type order: what a type byte that names
 * none picks from. */
static const uint8_t types[] = {
    PROTO_COMMAND,       PROTO_KEEPALIVE,    PROTO_QUERY,
    PROTO_CHECK,         PROTO_STATUS,       PROTO_MEMBER_ADD,
    PROTO_MEMBER_REMOVE, PROTO_TRANSFER,     PROTO_PING,
    PROTO_LIST,          PROTO_ATTACH,       PROTO_WATCH,
    PROTO_UNWATCH,       PROTO_BACKUP,       PROTO_ACL,
    PROTO_SESSIONS,      PROTO_RESULT,       PROTO_NOT_LEADER,
    PROTO_ERROR,         PROTO_STATUS_REPLY, PROTO_KEEPALIVE_OK,
    PROTO_PONG,          PROTO_LIST_REPLY,   PROTO_WATCH_EVENT,
    PROTO_BACKUP_CHUNK,  PROTO_ACL_REPLY,    PROTO_SESSIONS_REPLY,
};
#define N_TYPES (sizeof types / sizeof types[0])

/* One input: what a frame reader would have handed its dispatch. */
struct msg {
        uint8_t type;
        uint16_t flags;
        bool shaped; /* flags a header of this type may carry */
        const uint8_t *body;
        size_t len;
        uint8_t *out; /* room for the frame written back: the input's size */
        size_t cap;
};

static void fail(const struct msg *m, const char *what)
{
        fprintf(stderr, "fuzz_message: %s (flags 0x%x, %zu bytes): %s\n",
                proto_type_name(m->type), m->flags, m->len, what);
        abort();
}

/* Whether `b` is a frame of m's type and flags with the id FRAME_ID and a
 * body of `body_len` bytes, in `n` bytes. */
static void check_header(const struct msg *m, const uint8_t *b, size_t n,
                         size_t body_len)
{
        struct proto_header h;

        if (n != PROTO_HEADER_SIZE + body_len) {
                fail(m, "a decoded body is written back at another length");
        }
        if (proto_header_decode(&h, b, PROTO_MAX_BODY) != 0 ||
            h.type != m->type || h.flags != m->flags || h.id != FRAME_ID ||
            h.length != body_len) {
                fail(m, "a decoded body is written back under a wrong header");
        }
}

/* The frame a writer made of a decoded body (`n` bytes in m->out): the
 * header it must have, and the input's body byte for byte. */
static void check_same(const struct msg *m, size_t n)
{
        /* Flags a header of this type cannot carry (proto_header_decode()
         * refuses them) reach no decoder in the server or the client, and
         * every writer refuses them: such bodies are decoded, for safety,
         * but there is nothing to write them back as. */
        if (!m->shaped) {
                return;
        }
        check_header(m, m->out, n, m->len);
        if (m->len > 0 &&
            memcmp(m->out + PROTO_HEADER_SIZE, m->body, m->len) != 0) {
                fail(m, "a decoded body is written back to other bytes");
        }
}

/* A decoded string as the C string the writers of addresses and messages
 * take (the readers have refused a NUL in it). */
static const char *cstr(char *buf, const struct proto_string *s)
{
        if (s->len > 0) {
                memcpy(buf, s->p, s->len);
        }
        buf[s->len] = '\0';
        return buf;
}

static bool same_string(const struct proto_string *a,
                        const struct proto_string *b)
{
        return a->len == b->len &&
               (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

/* ---- ACL_REPLY, the one message with more than one encoding ------------ */

static bool same_acl_reply(const struct proto_acl_reply *a,
                           const struct proto_acl_reply *b)
{
        unsigned i;

        if (a->seeded != b->seeded || a->default_role != b->default_role ||
            a->n != b->n || a->n_prefix != b->n_prefix ||
            a->n_quota != b->n_quota) {
                return false;
        }
        for (i = 0; i < a->n; i++) {
                if (a->rules[i].kind != b->rules[i].kind ||
                    a->rules[i].role != b->rules[i].role ||
                    !same_string(&a->rules[i].identity,
                                 &b->rules[i].identity)) {
                        return false;
                }
        }
        for (i = 0; i < a->n_prefix; i++) {
                if (a->prefix[i].kind != b->prefix[i].kind ||
                    a->prefix[i].perms != b->prefix[i].perms ||
                    !same_string(&a->prefix[i].subject,
                                 &b->prefix[i].subject) ||
                    !same_string(&a->prefix[i].prefix, &b->prefix[i].prefix)) {
                        return false;
                }
        }
        for (i = 0; i < a->n_quota; i++) {
                if (!same_string(&a->quotas[i].subject,
                                 &b->quotas[i].subject) ||
                    memcmp(a->quotas[i].limits, b->quotas[i].limits,
                           sizeof a->quotas[i].limits) != 0 ||
                    memcmp(a->quotas[i].used, b->quotas[i].used,
                           sizeof a->quotas[i].used) != 0) {
                        return false;
                }
        }
        return true;
}

/* An ACL_REPLY is written in the oldest format that holds it; the reader
 * also takes it in a newer one (a format 3 reply with no quotas), so the
 * body written back may be shorter than the input. What holds is that it
 * decodes to the same value and is written again to the same bytes; and
 * when the input was in the oldest format, that it is the input. */
static void acl_reply(const struct msg *m)
{
        struct proto_acl_reply *a = malloc(sizeof *a);
        struct proto_acl_reply *b = malloc(sizeof *b);
        uint8_t *again = malloc(m->cap);
        uint8_t oldest;
        size_t n, n2;

        if (a == NULL || b == NULL || again == NULL) {
                abort();
        }
        if (proto_read_acl_reply(m->body, m->len, a) != 0 || !m->shaped) {
                goto out;
        }
        oldest = a->n_quota > 0 ? 3 : a->n_prefix > 0 ? 2 : 1;
        n = proto_write_acl_reply(m->out, m->cap, FRAME_ID, a);
        if (n < PROTO_HEADER_SIZE) {
                fail(m, "a decoded access list is not written back");
        }
        check_header(m, m->out, n, n - PROTO_HEADER_SIZE);
        if (m->body[0] == oldest) {
                check_same(m, n);
        }
        if (proto_read_acl_reply(m->out + PROTO_HEADER_SIZE,
                                 n - PROTO_HEADER_SIZE, b) != 0 ||
            !same_acl_reply(a, b)) {
                fail(m, "an access list written back decodes otherwise");
        }
        n2 = proto_write_acl_reply(again, m->cap, FRAME_ID, b);
        if (n2 != n || memcmp(again, m->out, n) != 0) {
                fail(m, "an access list is written twice to other bytes");
        }
out:
        free(again);
        free(b);
        free(a);
}

/* ---- The list replies, whose entries the caller holds ------------------ */

static void list_reply(const struct msg *m)
{
        /* The reader refuses more entries than the body can hold before it
         * fills any, so room for that many never limits it. */
        size_t cap = m->len / PROTO_LIST_ENTRY_MIN + 1;
        struct proto_lock_entry *e = calloc(cap, sizeof *e);
        uint32_t n;
        bool more;

        if (e == NULL) {
                abort();
        }
        if (proto_read_list_reply(m->body, m->len, m->flags, e, cap, &n,
                                  &more) == 0) {
                check_same(m, proto_write_list_reply(m->out, m->cap, FRAME_ID,
                                                     m->flags, e, n, more));
        }
        free(e);
}

static void sessions_reply(const struct msg *m)
{
        size_t cap = m->len / PROTO_SESSION_SIZE(0, 0, 0) + 1;
        size_t holds_cap = m->len / PROTO_SESSION_HOLD_MIN + 1;
        struct proto_session *s = calloc(cap, sizeof *s);
        struct proto_session_hold *h = calloc(holds_cap, sizeof *h);
        uint32_t n;
        bool more;

        if (s == NULL || h == NULL) {
                abort();
        }
        if (proto_read_sessions_reply(m->body, m->len, s, cap, h, holds_cap, &n,
                                      &more) == 0) {
                check_same(m, proto_write_sessions_reply(m->out, m->cap,
                                                         FRAME_ID, s, n, more));
        }
        free(h);
        free(s);
}

/* ---- Requests ---------------------------------------------------------- */

static void request(const struct msg *m)
{
        char a1[256], a2[256];
        struct proto_acl_request acl;
        struct proto_string s1, s2;
        struct proto_backup backup;
        struct proto_watch watch;
        uint8_t secret[ATTACH_SECRET_SIZE];
        struct command c;
        uint64_t u64;
        uint32_t u32;
        uint8_t u8;

        switch (m->type) {
        case PROTO_COMMAND:
                command_decode(&c, m->body, m->len);
                return;
        case PROTO_KEEPALIVE:
                if (proto_read_u64(m->body, m->len, &u64) == 0) {
                        check_same(m, proto_write_keepalive(m->out, m->cap,
                                                            FRAME_ID, m->flags,
                                                            u64));
                }
                return;
        case PROTO_MEMBER_REMOVE:
        case PROTO_TRANSFER:
        case PROTO_UNWATCH:
                if (proto_read_u64(m->body, m->len, &u64) == 0) {
                        check_same(m, proto_write_id(m->out, m->cap, FRAME_ID,
                                                     m->type, u64));
                }
                return;
        case PROTO_QUERY:
                if (proto_read_query(m->body, m->len, &s1) == 0) {
                        check_same(m,
                                   proto_write_query(m->out, m->cap, FRAME_ID,
                                                     m->flags, s1.p, s1.len));
                }
                return;
        case PROTO_CHECK:
                if (proto_read_check(m->body, m->len, &s1, &u64) == 0) {
                        check_same(m,
                                   proto_write_check(m->out, m->cap, FRAME_ID,
                                                     s1.p, s1.len, u64));
                }
                return;
        case PROTO_STATUS:
        case PROTO_PING:
                /* No reader: the gateway refuses any body. */
                if (m->len == 0) {
                        check_same(m,
                                   m->type == PROTO_STATUS
                                       ? proto_write_status_request(
                                             m->out, m->cap, FRAME_ID, m->flags)
                                       : proto_write_empty(m->out, m->cap,
                                                           FRAME_ID, m->type));
                }
                return;
        case PROTO_MEMBER_ADD:
                if (proto_read_member_add(m->body, m->len, &u64, &s1, &s2) ==
                    0) {
                        check_same(m, proto_write_member_add(
                                          m->out, m->cap, FRAME_ID, u64,
                                          cstr(a1, &s1), cstr(a2, &s2)));
                }
                return;
        case PROTO_LIST:
                if (proto_read_list(m->body, m->len, &s1, &u32) == 0) {
                        check_same(m, proto_write_list(m->out, m->cap, FRAME_ID,
                                                       m->flags, s1.p, s1.len,
                                                       u32));
                }
                return;
        case PROTO_ATTACH:
                if (attach_read(m->body, m->len, &u64, secret) == 0) {
                        check_same(m, attach_write(m->out, m->cap, FRAME_ID,
                                                   u64, secret));
                }
                return;
        case PROTO_WATCH:
                if (proto_read_watch(m->body, m->len, &watch) == 0) {
                        check_same(m, proto_write_watch(m->out, m->cap,
                                                        FRAME_ID, &watch));
                }
                return;
        case PROTO_BACKUP:
                if (proto_read_backup(m->body, m->len, &backup) == 0) {
                        check_same(m, proto_write_backup(m->out, m->cap,
                                                         FRAME_ID, &backup));
                }
                return;
        case PROTO_ACL:
                if (proto_read_acl(m->body, m->len, &acl) == 0) {
                        check_same(
                            m, proto_write_acl(m->out, m->cap, FRAME_ID, &acl));
                }
                return;
        case PROTO_SESSIONS:
                if (proto_read_sessions(m->body, m->len, &u64, &u8, &u32) ==
                    0) {
                        check_same(m, proto_write_sessions(m->out, m->cap,
                                                           FRAME_ID, u64, u8,
                                                           u32));
                }
                return;
        }
}

/* ---- Responses --------------------------------------------------------- */

static void response(const struct msg *m)
{
        char text[256];
        struct proto_backup_chunk chunk;
        struct proto_watch_event event;
        struct proto_versions versions;
        struct proto_status status;
        struct proto_result result;
        struct proto_string s;
        uint64_t u64;
        uint32_t ttl, revoked;
        int code;

        switch (m->type) {
        case PROTO_RESULT:
                if (proto_read_result(m->body, m->len, m->flags, &result) ==
                    0) {
                        check_same(m,
                                   proto_write_result(m->out, m->cap, FRAME_ID,
                                                      m->flags, &result));
                }
                return;
        case PROTO_NOT_LEADER:
                if (proto_read_not_leader(m->body, m->len, &u64, &s) == 0) {
                        check_same(m, proto_write_not_leader(m->out, m->cap,
                                                             FRAME_ID, u64,
                                                             cstr(text, &s)));
                }
                return;
        case PROTO_ERROR:
                if (proto_read_error(m->body, m->len, &code, &s) == 0) {
                        check_same(m,
                                   proto_write_error(m->out, m->cap, FRAME_ID,
                                                     code, cstr(text, &s)));
                }
                return;
        case PROTO_STATUS_REPLY:
                if (proto_read_status(m->body, m->len, m->flags, &status,
                                      &versions) == 0) {
                        check_same(m, proto_write_status(m->out, m->cap,
                                                         FRAME_ID, m->flags,
                                                         &status, &versions));
                }
                return;
        case PROTO_KEEPALIVE_OK:
                if (proto_read_keepalive_ok(m->body, m->len, m->flags, &ttl,
                                            &revoked) == 0) {
                        check_same(m, proto_write_keepalive_ok(
                                          m->out, m->cap, FRAME_ID, m->flags,
                                          ttl, revoked));
                }
                return;
        case PROTO_PONG:
                if (m->len == 0) {
                        check_same(m, proto_write_empty(m->out, m->cap,
                                                        FRAME_ID, m->type));
                }
                return;
        case PROTO_LIST_REPLY:
                list_reply(m);
                return;
        case PROTO_WATCH_EVENT:
                if (proto_read_watch_event(m->body, m->len, &event) == 0) {
                        check_same(m, proto_write_watch_event(
                                          m->out, m->cap, FRAME_ID, &event));
                }
                return;
        case PROTO_BACKUP_CHUNK:
                if (proto_read_backup_chunk(m->body, m->len, &chunk) == 0) {
                        check_same(m, proto_write_backup_chunk(
                                          m->out, m->cap, FRAME_ID, &chunk));
                }
                return;
        case PROTO_ACL_REPLY:
                acl_reply(m);
                return;
        case PROTO_SESSIONS_REPLY:
                sessions_reply(m);
                return;
        }
}

static void decode(const struct msg *m)
{
        if (m->type < PROTO_RESULT) {
                request(m);
        } else {
                response(m);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct msg m;

        if (size < 3) {
                return 0;
        }
        m.type = data[0];
        if (strcmp(proto_type_name(m.type), "UNKNOWN") == 0) {
                m.type = types[m.type % N_TYPES];
        }
        m.flags = (uint16_t)(data[1] | data[2] << 8);
        m.shaped = proto_flags_allowed(m.type, m.flags);
        m.len = size - 3;
        /* The frame reader hands a decoder at most PROTO_MAX_BODY bytes,
         * and no buffer at all for an empty body (it has allocated none). */
        if (m.len > PROTO_MAX_BODY) {
                return 0;
        }
        m.body = m.len > 0 ? data + 3 : NULL;
        /* Exactly the room the input's frame takes, so that a writer that
         * wrote more would be caught by ASan, or return 0. */
        m.cap = PROTO_HEADER_SIZE + m.len;
        m.out = malloc(m.cap);
        if (m.out == NULL) {
                abort();
        }
        decode(&m);
        free(m.out);
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "message");
}
#endif

/* Cases of test_proto on ACL and ACL_REPLY. */
#include "test_proto_acl.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/proto.h"
#include "protofix.h"

#define REQUEST_MAX (PROTO_HEADER_SIZE + PROTO_ACL_REQUEST_MAX)
#define REPLY_MAX   (PROTO_HEADER_SIZE + PROTO_MAX_BODY)

/* 255 bytes of `c`, the longest subject or prefix. */
static const char *longest(char c)
{
        static char s[2][PROTO_ACL_PREFIX_LEN_MAX + 1];
        char *p = s[c == 'p'];

        memset(p, c, PROTO_ACL_PREFIX_LEN_MAX);
        return p;
}

/* A request; NULL strings are empty. */
static struct proto_acl_request req(uint8_t op, uint8_t role,
                                    const char *identity, uint8_t kind,
                                    const char *prefix)
{
        struct proto_acl_request r = {.op = op, .role = role, .kind = kind};

        if (identity != NULL) {
                r.identity =
                    (struct proto_string){identity, (uint8_t)strlen(identity)};
        }
        if (prefix != NULL) {
                r.prefix =
                    (struct proto_string){prefix, (uint8_t)strlen(prefix)};
        }
        return r;
}

/* Write `r`, read the frame back into `got`: the frame's length. */
static size_t request_round_trip(const struct proto_acl_request *r,
                                 struct proto_acl_request *got)
{
        uint8_t buf[REQUEST_MAX];
        const uint8_t *body;
        size_t n, len;

        n = proto_write_acl(buf, sizeof buf, 5, r);
        assert_true(n > 0);
        body = check_frame(buf, n, PROTO_ACL, 5, &len);
        assert_int_equal(proto_read_acl(body, len, got), 0);
        assert_int_equal(got->op, r->op);
        assert_int_equal(got->role, r->role);
        assert_int_equal(got->kind, r->kind);
        assert_int_equal(got->identity.len, r->identity.len);
        assert_memory_equal(got->identity.p, r->identity.p, r->identity.len);
        assert_int_equal(got->prefix.len, r->prefix.len);
        if (r->prefix.len > 0) {
                assert_memory_equal(got->prefix.p, r->prefix.p, r->prefix.len);
        }
        assert_memory_equal(got->limits, r->limits, sizeof r->limits);
        return n;
}

/* LIST, SET and REMOVE are the bytes of a release before prefix rules,
 * and take no kind or prefix. */
void acl_old_ops_unchanged(void **state)
{
        static const uint8_t list[] = {0, 0, 0};
        static const uint8_t set[] = {1, 2, 5, 'a', 'l', 'i', 'c', 'e'};
        static const uint8_t remove[] = {2, 0, 5, 'a', 'l', 'i', 'c', 'e'};
        struct proto_acl_request r = req(PROTO_ACL_LIST, 0, NULL, 0, NULL);
        struct proto_acl_request got;
        uint8_t buf[REQUEST_MAX];
        size_t n;

        (void)state;
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + sizeof list);
        proto_write_acl(buf, sizeof buf, 5, &r);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, list, sizeof list);

        r = req(PROTO_ACL_SET, 2, "alice", 0, NULL);
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + sizeof set);
        proto_write_acl(buf, sizeof buf, 5, &r);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, set, sizeof set);

        r = req(PROTO_ACL_REMOVE, 0, "alice", 0, NULL);
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + sizeof remove);
        proto_write_acl(buf, sizeof buf, 5, &r);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, remove, sizeof remove);

        /* A kind or a prefix has no place in them. */
        r.kind = PROTO_ACL_KIND_PREFIX;
        assert_int_equal(proto_write_acl(buf, sizeof buf, 5, &r), 0);
        r.kind = 0;
        r.prefix = (struct proto_string){"a/", 2};
        assert_int_equal(proto_write_acl(buf, sizeof buf, 5, &r), 0);
        r = req(PROTO_ACL_LIST, 0, NULL, PROTO_ACL_KIND_GROUP_PREFIX, NULL);
        assert_int_equal(proto_write_acl(buf, sizeof buf, 5, &r), 0);
        /* Nor on the wire: what follows the identity is trailing. */
        {
                const uint8_t set_kind[] = {1, 2, 1, 'a', 1, 0};
                assert_int_equal(
                    proto_read_acl(set_kind, sizeof set_kind, &got),
                    BATON_EMALFORMED);
        }
}

void acl_rule_ops_round_trip(void **state)
{
        /* clang-format off */
        static const uint8_t group_set[] = {
            3, 3,                               /* RULE_SET, perms */
            6, 't', 'e', 'a', 'm', '-', 'a',    /* subject */
            2,                                  /* kind: a group */
            7, 't', 'e', 'a', 'm', '-', 'a', '/'};
        /* clang-format on */
        struct proto_acl_request r =
            req(PROTO_ACL_RULE_SET, PROTO_ACL_PERM_READ | PROTO_ACL_PERM_LOCK,
                "team-a", PROTO_ACL_KIND_GROUP_PREFIX, "team-a/");
        struct proto_acl_request got;
        uint8_t buf[REQUEST_MAX];
        size_t n;

        (void)state;
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + sizeof group_set);
        proto_write_acl(buf, sizeof buf, 5, &r);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, group_set,
                            sizeof group_set);

        /* An identity's rule on every name: the empty prefix. */
        r = req(PROTO_ACL_RULE_SET, PROTO_ACL_PERMS_ALL, "ci",
                PROTO_ACL_KIND_PREFIX, NULL);
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + 2 + 3 + 2);
        r.role = PROTO_ACL_PERM_READ;
        request_round_trip(&r, &got);

        /* The largest: the longest subject and prefix fill
         * PROTO_ACL_REQUEST_MAX, which libbaton's buffer holds. */
        r = (struct proto_acl_request){
            .op = PROTO_ACL_RULE_SET,
            .role = PROTO_ACL_PERM_MANAGE | PROTO_ACL_PERM_READ,
            .identity = {longest('s'), PROTO_ACL_IDENTITY_MAX},
            .kind = PROTO_ACL_KIND_PREFIX,
            .prefix = {longest('p'), PROTO_ACL_PREFIX_LEN_MAX}};
        n = request_round_trip(&r, &got);
        assert_int_equal(n, REQUEST_MAX);
        assert_int_equal(proto_write_acl(buf, REQUEST_MAX - 1, 5, &r), 0);

        r.op = PROTO_ACL_RULE_REMOVE;
        r.role = 0;
        n = request_round_trip(&r, &got);
        assert_int_equal(n, REQUEST_MAX);
        r = req(PROTO_ACL_RULE_REMOVE, 0, "ops", PROTO_ACL_KIND_GROUP_PREFIX,
                "");
        request_round_trip(&r, &got);
}

/* The writer refuses every request the reader would. */
void acl_rule_ops_refused(void **state)
{
        const struct proto_acl_request good =
            req(PROTO_ACL_RULE_SET, 1, "team-a", PROTO_ACL_KIND_PREFIX, "a/");
        struct proto_acl_request r;
        uint8_t buf[REQUEST_MAX];

        (void)state;
        assert_true(proto_write_acl(buf, sizeof buf, 1, &good) > 0);
#define REFUSED(...)                                                           \
        do {                                                                   \
                r = good;                                                      \
                __VA_ARGS__;                                                   \
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);  \
        } while (0)
        REFUSED(r.kind = PROTO_ACL_KIND_IDENTITY);
        REFUSED(r.kind = 3);
        REFUSED(r.role = 0);
        REFUSED(r.role = PROTO_ACL_PERMS_ALL + 1);
        REFUSED(r.identity = (struct proto_string){"", 0});
        REFUSED(r.identity = (struct proto_string){NULL, 3});
        REFUSED(r.identity = (struct proto_string){"a\0b", 3});
        REFUSED(r.prefix = (struct proto_string){"a\0b", 3});
        REFUSED(r.prefix = (struct proto_string){NULL, 1});
        REFUSED((r.op = PROTO_ACL_RULE_REMOVE, r.role = 1));
        REFUSED(r.op = PROTO_ACL_RULE_REMOVE + 1);
#undef REFUSED
}

/* Bodies the reader refuses: each of the above as bytes, every
 * truncation, a trailing byte. */
void acl_rule_bodies_refused(void **state)
{
        static const uint8_t good[] = {3, 1, 2, 'c', 'i', 1, 2, 'a', '/'};
        static const struct {
                unsigned at;
                uint8_t byte;
        } bad[] = {
            {0, 5}, /* an unknown op */
            {1, 0}, /* RULE_SET of no permission */
            {1, 8}, /* an unknown permission */
            {3, 0}, /* a NUL in the subject */
            {5, 0}, /* the kind of a role rule */
            {5, 3}, /* an unknown kind */
            {8, 0}, /* a NUL in the prefix */
            {2, 0}, /* an empty subject (and trailing bytes) */
            {6, 3}, /* a prefix longer than the body */
        };
        struct proto_acl_request got;
        uint8_t body[sizeof good + 1];
        size_t i, k;

        (void)state;
        assert_int_equal(proto_read_acl(good, sizeof good, &got), 0);
        assert_int_equal(got.kind, PROTO_ACL_KIND_PREFIX);
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                memcpy(body, good, sizeof good);
                body[bad[i].at] = bad[i].byte;
                assert_int_equal(proto_read_acl(body, sizeof good, &got),
                                 BATON_EMALFORMED);
        }
        /* RULE_REMOVE carries no permission. */
        memcpy(body, good, sizeof good);
        body[0] = PROTO_ACL_RULE_REMOVE;
        assert_int_equal(proto_read_acl(body, sizeof good, &got),
                         BATON_EMALFORMED);
        body[1] = 0;
        assert_int_equal(proto_read_acl(body, sizeof good, &got), 0);
        for (k = 0; k < sizeof good; k++) {
                assert_int_equal(proto_read_acl(good, k, &got),
                                 BATON_EMALFORMED);
        }
        memcpy(body, good, sizeof good);
        body[sizeof good] = 0;
        assert_int_equal(proto_read_acl(body, sizeof body, &got),
                         BATON_EMALFORMED);
}

/* A QUOTA_SET of `subject` with `limits`, or a QUOTA_REMOVE (NULL). */
static struct proto_acl_request quota_req(const char *subject,
                                          const uint32_t *limits)
{
        struct proto_acl_request r =
            req(limits != NULL ? PROTO_ACL_QUOTA_SET : PROTO_ACL_QUOTA_REMOVE,
                0, subject, 0, NULL);

        if (limits != NULL) {
                memcpy(r.limits, limits, sizeof r.limits);
        }
        return r;
}

void acl_quota_ops_round_trip(void **state)
{
        /* clang-format off */
        static const uint8_t set[] = {
            5, 0,                               /* QUOTA_SET, role 0 */
            3, 'c', 'i', '1',                   /* subject */
            0, 0, 0, 0,                         /* sessions: none */
            10, 0, 0, 0,                        /* locks 10 */
            0, 0, 0, 0,                         /* waiters: none */
            0x00, 0x01, 0, 0,                   /* watches 256 */
            0xff, 0xff, 0xff, 0xff};            /* rate 4294967295 */
        static const uint8_t remove[] = {6, 0, 1, '*'};
        /* clang-format on */
        const uint32_t limits[PROTO_QUOTA_KINDS] = {0, 10, 0, 256, UINT32_MAX};
        struct proto_acl_request r = quota_req("ci1", limits);
        struct proto_acl_request got;
        uint8_t buf[REQUEST_MAX];
        size_t n;

        (void)state;
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + sizeof set);
        proto_write_acl(buf, sizeof buf, 5, &r);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, set, sizeof set);
        assert_int_equal(got.limits[PROTO_QUOTA_RATE], UINT32_MAX);

        r = quota_req("*", NULL);
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + sizeof remove);
        proto_write_acl(buf, sizeof buf, 5, &r);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, remove, sizeof remove);

        /* The default of every identity; one limit of each kind alone. */
        for (unsigned k = 0; k < PROTO_QUOTA_KINDS; k++) {
                uint32_t one[PROTO_QUOTA_KINDS] = {0};
                one[k] = 1;
                r = quota_req("*", one);
                request_round_trip(&r, &got);
        }
        /* The longest subject is a request well under
         * PROTO_ACL_REQUEST_MAX, so libbaton's buffer holds it. */
        r = (struct proto_acl_request){
            .op = PROTO_ACL_QUOTA_SET,
            .identity = {longest('s'), PROTO_ACL_IDENTITY_MAX},
            .limits = {1, 2, 3, 4, 5}};
        n = request_round_trip(&r, &got);
        assert_int_equal(n, PROTO_HEADER_SIZE + 2 + 1 + PROTO_ACL_IDENTITY_MAX +
                                4 * PROTO_QUOTA_KINDS);
        assert_true(n <= REQUEST_MAX);
        r.op = PROTO_ACL_QUOTA_REMOVE;
        memset(r.limits, 0, sizeof r.limits);
        request_round_trip(&r, &got);
}

/* The writer refuses every quota request the reader would, and limits on
 * any other op. */
void acl_quota_ops_refused(void **state)
{
        const uint32_t limits[PROTO_QUOTA_KINDS] = {1, 0, 0, 0, 0};
        const struct proto_acl_request good = quota_req("ci", limits);
        struct proto_acl_request r;
        uint8_t buf[REQUEST_MAX];
        unsigned k;

        (void)state;
        assert_true(proto_write_acl(buf, sizeof buf, 1, &good) > 0);
#define REFUSED(...)                                                           \
        do {                                                                   \
                r = good;                                                      \
                __VA_ARGS__;                                                   \
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);  \
        } while (0)
        REFUSED(r.role = 1);
        REFUSED(r.identity = (struct proto_string){"", 0});
        REFUSED(r.identity = (struct proto_string){NULL, 3});
        REFUSED(r.identity = (struct proto_string){"a\0b", 3});
        REFUSED(r.limits[0] = 0); /* no limit at all */
        REFUSED(r.kind = PROTO_ACL_KIND_PREFIX);
        REFUSED(r.prefix = (struct proto_string){"a/", 2});
        /* A remove carries no limits, and no role either. */
        REFUSED(r.op = PROTO_ACL_QUOTA_REMOVE);
        REFUSED((r.op = PROTO_ACL_QUOTA_REMOVE, r.limits[0] = 0, r.role = 1));
        REFUSED((r.op = PROTO_ACL_QUOTA_REMOVE, r.limits[0] = 0,
                 r.identity = (struct proto_string){"", 0}));
        REFUSED(r.op = PROTO_ACL_QUOTA_REMOVE + 1);
        /* Nor does any op but QUOTA_SET, whichever limit is set. */
        for (k = 0; k < PROTO_QUOTA_KINDS; k++) {
                r = req(PROTO_ACL_LIST, 0, NULL, 0, NULL);
                r.limits[k] = 7;
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);
                r = req(PROTO_ACL_SET, 2, "alice", 0, NULL);
                r.limits[k] = 7;
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);
                r = req(PROTO_ACL_REMOVE, 0, "alice", 0, NULL);
                r.limits[k] = 7;
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);
                r = req(PROTO_ACL_RULE_SET, 1, "ci", PROTO_ACL_KIND_PREFIX,
                        "a/");
                r.limits[k] = 7;
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);
                r = req(PROTO_ACL_RULE_REMOVE, 0, "ci", PROTO_ACL_KIND_PREFIX,
                        "a/");
                r.limits[k] = 7;
                assert_int_equal(proto_write_acl(buf, sizeof buf, 1, &r), 0);
        }
#undef REFUSED
}

/* Quota bodies the reader refuses: each field spoiled, every truncation,
 * a trailing byte, a remove with limits. */
void acl_quota_bodies_refused(void **state)
{
        /* clang-format off */
        static const uint8_t good[] = {
            5, 0, 2, 'c', 'i',
            0, 0, 0, 0,  3, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0};
        /* clang-format on */
        static const struct {
                unsigned at;
                uint8_t byte;
        } bad[] = {
            {0, 7}, /* an unknown op */
            {1, 1}, /* a role */
            {3, 0}, /* a NUL in the subject */
            {9, 0}, /* every limit 0 */
            {2, 0}, /* an empty subject (and trailing bytes) */
            {2, 3}, /* a subject running into the limits (one short) */
        };
        struct proto_acl_request got;
        uint8_t body[sizeof good + 1];
        size_t i, k;

        (void)state;
        assert_int_equal(proto_read_acl(good, sizeof good, &got), 0);
        assert_int_equal(got.op, PROTO_ACL_QUOTA_SET);
        assert_int_equal(got.limits[PROTO_QUOTA_LOCKS], 3);
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                memcpy(body, good, sizeof good);
                body[bad[i].at] = bad[i].byte;
                assert_int_equal(proto_read_acl(body, sizeof good, &got),
                                 BATON_EMALFORMED);
        }
        for (k = 0; k < sizeof good; k++) {
                assert_int_equal(proto_read_acl(good, k, &got),
                                 BATON_EMALFORMED);
        }
        memcpy(body, good, sizeof good);
        body[sizeof good] = 0;
        assert_int_equal(proto_read_acl(body, sizeof body, &got),
                         BATON_EMALFORMED);
        /* QUOTA_REMOVE ends with its subject: limits after it are
         * trailing bytes. */
        memcpy(body, good, sizeof good);
        body[0] = PROTO_ACL_QUOTA_REMOVE;
        assert_int_equal(proto_read_acl(body, sizeof good, &got),
                         BATON_EMALFORMED);
        assert_int_equal(proto_read_acl(body, 5, &got), 0);
        assert_int_equal(got.op, PROTO_ACL_QUOTA_REMOVE);
        assert_memory_equal(got.identity.p, "ci", 2);
        /* A LIST, SET or REMOVE followed by limits: trailing bytes. */
        {
                const uint8_t set_limits[] = {1, 2, 1, 'a', 1, 0, 0, 0};
                assert_int_equal(
                    proto_read_acl(set_limits, sizeof set_limits, &got),
                    BATON_EMALFORMED);
        }
}

/* Two role rules and `n_prefix` prefix rules, no quota. */
static void reply_in(struct proto_acl_reply *r, unsigned n_prefix)
{
        static const struct proto_acl_prefix_rule some[] = {
            {PROTO_ACL_KIND_PREFIX, 5, {"deploy-bot", 10}, {"", 0}},
            {PROTO_ACL_KIND_GROUP_PREFIX, 3, {"team-a", 6}, {"team-a/", 7}},
            {PROTO_ACL_KIND_GROUP_PREFIX, 1, {"ops", 3}, {"a\"b\\", 4}},
        };
        unsigned i;

        memset(r, 0, sizeof *r);
        r->seeded = 1;
        r->default_role = 2;
        r->n = 2;
        r->rules[0] = (struct proto_acl_rule){0, 3, {"admin", 5}};
        r->rules[1] = (struct proto_acl_rule){0, 1, {"reader", 6}};
        r->n_prefix = (uint16_t)n_prefix;
        for (i = 0; i < n_prefix; i++) {
                r->prefix[i] = some[i % 3];
        }
}

/* Write `r`, read it back into `back`: the body's length (its first byte
 * at *format). */
static size_t reply_round_trip(const struct proto_acl_reply *r,
                               struct proto_acl_reply *back, uint8_t *buf,
                               size_t cap)
{
        const uint8_t *body;
        size_t n, len;
        unsigned i;

        n = proto_write_acl_reply(buf, cap, 9, r);
        assert_true(n > 0);
        body = check_frame(buf, n, PROTO_ACL_REPLY, 9, &len);
        assert_int_equal(proto_read_acl_reply(body, len, back), 0);
        assert_int_equal(back->seeded, r->seeded);
        assert_int_equal(back->default_role, r->default_role);
        assert_int_equal(back->n, r->n);
        assert_int_equal(back->n_prefix, r->n_prefix);
        for (i = 0; i < r->n_prefix; i++) {
                const struct proto_acl_prefix_rule *a = &r->prefix[i];
                const struct proto_acl_prefix_rule *b = &back->prefix[i];
                assert_int_equal(b->kind, a->kind);
                assert_int_equal(b->perms, a->perms);
                assert_int_equal(b->subject.len, a->subject.len);
                assert_memory_equal(b->subject.p, a->subject.p, a->subject.len);
                assert_int_equal(b->prefix.len, a->prefix.len);
                if (a->prefix.len > 0) {
                        assert_memory_equal(b->prefix.p, a->prefix.p,
                                            a->prefix.len);
                }
        }
        assert_int_equal(back->n_quota, r->n_quota);
        for (i = 0; i < r->n_quota; i++) {
                const struct proto_acl_quota *a = &r->quotas[i];
                const struct proto_acl_quota *b = &back->quotas[i];
                assert_int_equal(b->subject.len, a->subject.len);
                assert_memory_equal(b->subject.p, a->subject.p, a->subject.len);
                assert_memory_equal(b->limits, a->limits, sizeof a->limits);
                assert_memory_equal(b->used, a->used, sizeof a->used);
        }
        return len;
}

/* `n` quotas after what `r` holds: the default "*" first, then
 * identities, each with some limits and what it uses. */

/* One byte of a good frame changed: at offset `at`, into `byte`. */
struct badbyte {
        unsigned at;
        uint8_t byte;
};

/* Each of the `n` changes `bad` to the ACL_REPLY `good` (`len` bytes)
 * makes it BATON_EMALFORMED; `body` holds `len` bytes. */
static void refused_bytes(const uint8_t *good, size_t len, uint8_t *body,
                          struct proto_acl_reply *back,
                          const struct badbyte *bad, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                memcpy(body, good, len);
                body[bad[i].at] = bad[i].byte;
                assert_int_equal(proto_read_acl_reply(body, len, back),
                                 BATON_EMALFORMED);
        }
}

/* What each ACL_REPLY `good` (`len` bytes, of format good[0]) must turn
 * into BATON_EMALFORMED: cut anywhere, a byte past its end, and read as
 * the format before (whose reader finds the part it added trailing).
 * `body` holds len + 1 bytes; it is left holding `good`. */
static void refused_cut_or_trailing(const uint8_t *good, size_t len,
                                    uint8_t *body, struct proto_acl_reply *back)
{
        size_t k;

        for (k = 0; k < len; k++) {
                assert_int_equal(proto_read_acl_reply(good, k, back),
                                 BATON_EMALFORMED);
        }
        memcpy(body, good, len);
        body[len] = 0;
        assert_int_equal(proto_read_acl_reply(body, len + 1, back),
                         BATON_EMALFORMED);
        body[0] = (uint8_t)(good[0] - 1);
        assert_int_equal(proto_read_acl_reply(body, len, back),
                         BATON_EMALFORMED);
        body[0] = good[0];
}
static void quotas_in(struct proto_acl_reply *r, unsigned n)
{
        static const struct proto_acl_quota some[] = {
            {{"*", 1}, {2, 0, 0, 8, 100}, {0, 0, 0}},
            {{"ci", 2}, {0, 10, 4, 0, 0}, {1, 7, 2}},
            {{"team-a", 6}, {5, 1000, 0, 0, UINT32_MAX}, {5, 999, 0}},
        };
        unsigned i;

        r->n_quota = (uint16_t)n;
        for (i = 0; i < n; i++) {
                r->quotas[i] = some[i % 3];
        }
}

/* Format 1 without prefix rules, byte for byte what it was; format 2 with
 * them, the same fields and then the prefix rules. */
void acl_reply_formats(void **state)
{
        /* clang-format off */
        static const uint8_t format1[] = {
            1, 1, 2, 2, 0,                      /* format, seeded, default, n */
            0, 3, 5, 'a', 'd', 'm', 'i', 'n',
            0, 1, 6, 'r', 'e', 'a', 'd', 'e', 'r'};
        static const uint8_t tail2[] = {
            2, 0,                               /* m */
            1, 5, 10, 'd', 'e', 'p', 'l', 'o', 'y', '-', 'b', 'o', 't', 0,
            2, 3, 6, 't', 'e', 'a', 'm', '-', 'a',
            7, 't', 'e', 'a', 'm', '-', 'a', '/'};
        /* clang-format on */
        struct proto_acl_reply *r = malloc(sizeof *r);
        struct proto_acl_reply *back = malloc(sizeof *back);
        uint8_t *buf = malloc(REPLY_MAX);
        size_t len;

        (void)state;
        assert_non_null(r);
        assert_non_null(back);
        assert_non_null(buf);
        reply_in(r, 0);
        len = reply_round_trip(r, back, buf, REPLY_MAX);
        assert_int_equal(len, sizeof format1);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, format1, sizeof format1);

        reply_in(r, 2);
        len = reply_round_trip(r, back, buf, REPLY_MAX);
        assert_int_equal(len, sizeof format1 + sizeof tail2);
        assert_int_equal(buf[PROTO_HEADER_SIZE], 2);
        assert_memory_equal(buf + PROTO_HEADER_SIZE + 1, format1 + 1,
                            sizeof format1 - 1);
        assert_memory_equal(buf + PROTO_HEADER_SIZE + sizeof format1, tail2,
                            sizeof tail2);

        /* Prefix rules without role rules; quotes and backslashes are
         * bytes like any other. */
        reply_in(r, 3);
        r->n = 0;
        reply_round_trip(r, back, buf, REPLY_MAX);
        assert_memory_equal(back->prefix[2].prefix.p, "a\"b\\", 4);

        /* A format 2 without prefix rules is read too, as none. */
        {
                uint8_t empty2[sizeof format1 + 2];
                memcpy(empty2, format1, sizeof format1);
                empty2[0] = 2;
                empty2[sizeof format1] = 0;
                empty2[sizeof format1 + 1] = 0;
                assert_int_equal(
                    proto_read_acl_reply(empty2, sizeof empty2, back), 0);
                assert_int_equal(back->n, 2);
                assert_int_equal(back->n_prefix, 0);
        }
        free(buf);
        free(back);
        free(r);
}

/* Format 3 with quotas: format 2's fields (the prefix rules' count even
 * when there are none), then the quotas; formats 1 and 2 unchanged
 * without them. */
void acl_reply_quota_format(void **state)
{
        /* clang-format off */
        static const uint8_t head[] = {
            3, 1, 2, 2, 0,                      /* format, seeded, default, n */
            0, 3, 5, 'a', 'd', 'm', 'i', 'n',
            0, 1, 6, 'r', 'e', 'a', 'd', 'e', 'r'};
        static const uint8_t tail3[] = {
            0, 0,                               /* no prefix rule */
            2, 0,                               /* two quotas */
            1, '*',
            2, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,  8, 0, 0, 0,  100, 0, 0, 0,
            0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,
            2, 'c', 'i',
            0, 0, 0, 0,  10, 0, 0, 0,  4, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,
            1, 0, 0, 0,  7, 0, 0, 0,  2, 0, 0, 0};
        /* clang-format on */
        struct proto_acl_reply *r = malloc(sizeof *r);
        struct proto_acl_reply *back = malloc(sizeof *back);
        uint8_t *buf = malloc(REPLY_MAX);
        size_t len;

        (void)state;
        assert_non_null(r);
        assert_non_null(back);
        assert_non_null(buf);
        reply_in(r, 0);
        quotas_in(r, 2);
        len = reply_round_trip(r, back, buf, REPLY_MAX);
        assert_int_equal(len, sizeof head + sizeof tail3);
        assert_memory_equal(buf + PROTO_HEADER_SIZE, head, sizeof head);
        assert_memory_equal(buf + PROTO_HEADER_SIZE + sizeof head, tail3,
                            sizeof tail3);

        /* With prefix rules too, between the role rules and the quotas;
         * and without role rules. */
        reply_in(r, 3);
        quotas_in(r, 3);
        reply_round_trip(r, back, buf, REPLY_MAX);
        assert_int_equal(buf[PROTO_HEADER_SIZE], 3);
        assert_int_equal(back->quotas[2].limits[PROTO_QUOTA_RATE], UINT32_MAX);
        assert_int_equal(back->quotas[2].used[PROTO_QUOTA_LOCKS], 999);
        r->n = 0;
        reply_round_trip(r, back, buf, REPLY_MAX);

        /* Without quotas: format 2, and format 1 without prefix rules
         * either, as a release before quotas writes them. */
        reply_in(r, 2);
        reply_round_trip(r, back, buf, REPLY_MAX);
        assert_int_equal(buf[PROTO_HEADER_SIZE], 2);
        reply_in(r, 0);
        len = reply_round_trip(r, back, buf, REPLY_MAX);
        assert_int_equal(buf[PROTO_HEADER_SIZE], 1);
        assert_int_equal(len, sizeof head);
        assert_memory_equal(buf + PROTO_HEADER_SIZE + 1, head + 1,
                            sizeof head - 1);

        /* A format 3 without quotas is read too, as none. */
        {
                uint8_t empty3[sizeof head + 4];
                memcpy(empty3, head, sizeof head);
                memset(empty3 + sizeof head, 0, 4);
                assert_int_equal(
                    proto_read_acl_reply(empty3, sizeof empty3, back), 0);
                assert_int_equal(back->n, 2);
                assert_int_equal(back->n_prefix, 0);
                assert_int_equal(back->n_quota, 0);
        }
        free(buf);
        free(back);
        free(r);
}

/* Every role rule and every prefix rule fit one body while the rules
 * are short (the server keeps its table's encoding under 60000 bytes);
 * a reply over PROTO_MAX_BODY, or of too many rules, is not written. */
void acl_reply_limits(void **state)
{
        struct proto_acl_reply *r = malloc(sizeof *r);
        struct proto_acl_reply *back = malloc(sizeof *back);
        uint8_t *buf = malloc(REPLY_MAX);
        unsigned i;

        (void)state;
        assert_non_null(r);
        assert_non_null(back);
        assert_non_null(buf);
        reply_in(r, PROTO_ACL_PREFIX_MAX);
        r->n = PROTO_ACL_RULES_MAX;
        for (i = 0; i < r->n; i++) {
                r->rules[i] = (struct proto_acl_rule){
                    0, 1, {longest('s'), PROTO_ACL_IDENTITY_MAX}};
        }
        /* 64 x 258 + 256 x (4 + 100 + 60) bytes, and the head. */
        for (i = 0; i < r->n_prefix; i++) {
                r->prefix[i].subject = (struct proto_string){longest('s'), 100};
                r->prefix[i].prefix = (struct proto_string){longest('p'), 60};
        }
        assert_true(reply_round_trip(r, back, buf, REPLY_MAX) < 60000);
        /* Longer prefixes would pass PROTO_MAX_BODY. */
        for (i = 0; i < r->n_prefix; i++) {
                r->prefix[i].prefix.len = PROTO_ACL_PREFIX_LEN_MAX;
        }
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);

        reply_in(r, 1);
        r->n_prefix = PROTO_ACL_PREFIX_MAX + 1;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        reply_in(r, 1);
        r->n = PROTO_ACL_RULES_MAX + 1;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        /* Nor a prefix rule the reader would refuse. */
        reply_in(r, 1);
        r->prefix[0].kind = PROTO_ACL_KIND_IDENTITY;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        reply_in(r, 1);
        r->prefix[0].perms = 0;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        reply_in(r, 1);
        r->prefix[0].subject.len = 0;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);

        /* Every quota with the longest subject fits beside the role
         * rules: 64 x (256 + 32) bytes. */
        reply_in(r, 0);
        quotas_in(r, PROTO_ACL_QUOTA_MAX);
        for (i = 0; i < r->n_quota; i++) {
                r->quotas[i].subject =
                    (struct proto_string){longest('s'), PROTO_ACL_IDENTITY_MAX};
        }
        /* The head, "admin" and "reader", the two counts, the quotas. */
        assert_int_equal(reply_round_trip(r, back, buf, REPLY_MAX),
                         5 + (3 + 5) + (3 + 6) + 2 + 2 +
                             PROTO_ACL_QUOTA_MAX *
                                 (1 + PROTO_ACL_IDENTITY_MAX + 4 * 8));
        /* Nor too many quotas, nor one the reader would refuse: no limit,
         * an empty subject, a NUL in it. */
        r->n_quota = PROTO_ACL_QUOTA_MAX + 1;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        reply_in(r, 0);
        quotas_in(r, 2);
        memset(r->quotas[1].limits, 0, sizeof r->quotas[1].limits);
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        quotas_in(r, 2);
        r->quotas[1].subject.len = 0;
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        quotas_in(r, 2);
        r->quotas[1].subject = (struct proto_string){"c\0", 2};
        assert_int_equal(proto_write_acl_reply(buf, REPLY_MAX, 9, r), 0);
        free(buf);
        free(back);
        free(r);
}

/* A format 2 reply with one prefix rule, as bytes: each field spoiled in
 * turn, every truncation, a trailing byte, a newer format. */
void acl_reply_bad_bodies(void **state)
{
        /* clang-format off */
        static const uint8_t good[] = {
            2, 1, 2, 1, 0, 0, 3, 1, 'a',        /* the head, one role rule */
            1, 0,                               /* one prefix rule */
            2, 3, 2, 't', 'a', 2, 't', '/'};
        /* clang-format on */
        static const struct badbyte bad[] = {
            {0, 0},           /* format 0 */
            {9, 2},  {10, 1}, /* 2 or 257 rules, one there */
            {11, 0}, {11, 3}, /* kinds of no prefix rule */
            {12, 0}, {12, 8}, /* permissions */
            {13, 0},          /* an empty subject */
            {14, 0},          /* a NUL in the subject */
            {18, 0},          /* a NUL in the prefix */
            {16, 3},          /* a prefix past the end */
        };
        struct proto_acl_reply *back = malloc(sizeof *back);
        uint8_t body[sizeof good + 1];

        (void)state;
        assert_non_null(back);
        assert_int_equal(proto_read_acl_reply(good, sizeof good, back), 0);
        assert_int_equal(back->n_prefix, 1);
        assert_memory_equal(back->prefix[0].prefix.p, "t/", 2);
        refused_bytes(good, sizeof good, body, back, bad,
                      sizeof bad / sizeof bad[0]);
        /* Cut anywhere, also just after the role rules (a format 2 says
         * how many prefix rules follow, even none). */
        refused_cut_or_trailing(good, sizeof good, body, back);
        /* A newer format is told apart from a malformed one. */
        body[0] = PROTO_ACL_FORMAT + 1;
        assert_int_equal(proto_read_acl_reply(body, sizeof good, back),
                         BATON_EVERSION);
        free(back);
}

/* A format 3 reply with one quota, as bytes: each field spoiled in turn,
 * every truncation, a trailing byte, quotas after a format 2. */
void acl_reply_quota_bad_bodies(void **state)
{
        /* clang-format off */
        static const uint8_t good[] = {
            3, 1, 2, 1, 0, 0, 3, 1, 'a',        /* the head, one role rule */
            0, 0,                               /* no prefix rule */
            1, 0,                               /* one quota */
            2, 'c', 'i',
            0, 0, 0, 0,  9, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,
            0, 0, 0, 0,  4, 0, 0, 0,  0, 0, 0, 0};
        /* clang-format on */
        static const struct badbyte bad[] = {
            {11, 2},  {12, 1}, /* 2 or 257 quotas, one there */
            {11, 65},          /* past PROTO_ACL_QUOTA_MAX */
            {13, 0},           /* an empty subject */
            {14, 0},           /* a NUL in the subject */
            {20, 0},           /* every limit 0 */
            {13, 40},          /* a subject past the end */
        };
        struct proto_acl_reply *back = malloc(sizeof *back);
        uint8_t body[sizeof good + 1];

        (void)state;
        assert_non_null(back);
        assert_int_equal(proto_read_acl_reply(good, sizeof good, back), 0);
        assert_int_equal(back->n_quota, 1);
        assert_memory_equal(back->quotas[0].subject.p, "ci", 2);
        assert_int_equal(back->quotas[0].limits[PROTO_QUOTA_LOCKS], 9);
        assert_int_equal(back->quotas[0].used[PROTO_QUOTA_LOCKS], 4);
        refused_bytes(good, sizeof good, body, back, bad,
                      sizeof bad / sizeof bad[0]);
        /* The used counts may be anything: the limits are what is
         * checked. */
        memcpy(body, good, sizeof good);
        body[sizeof good - 1] = 0xff;
        assert_int_equal(proto_read_acl_reply(body, sizeof good, back), 0);
        refused_cut_or_trailing(good, sizeof good, body, back);
        free(back);
}

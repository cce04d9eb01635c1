/*
 * docs/protocol.md against the real codec: every hex example on the page
 * must decode, frame header and body, and encode back to the same bytes,
 * and the sizes the page states must be the codec's. The page is read at
 * run time (PROTOCOL_MD), so an edit that breaks an example fails here.
 *
 * An example is a fenced block whose lines start with two-digit hex bytes;
 * whatever follows a line's bytes (after two spaces) is commentary.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/command.h"
#include "../../src/proto/frame.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/sesslist.h"
#include "../../src/proto/status.h"
#include "../../src/proto/watch.h"

#ifndef PROTOCOL_MD
#error "PROTOCOL_MD must name docs/protocol.md"
#endif

#define MAX_EXAMPLES 32
#define MAX_BYTES    512
#define MAX_LINE     512

struct example {
        unsigned line; /* of the opening fence, for messages */
        size_t len;
        uint8_t bytes[MAX_BYTES];
};

struct page {
        char *text;
        unsigned stray_line; /* a line inside an example without hex bytes */
        size_t n;
        struct example examples[MAX_EXAMPLES];
};

static struct page page;

/* The hex bytes at the start of `s` ("01 04 00 00   comment"), appended to
 * `e`; the number read, or -1 when the line does not start with one. */
static int hex_line(const char *s, struct example *e)
{
        int n = 0;

        while (isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) &&
               (s[2] == ' ' || s[2] == '\0' || s[2] == '\n')) {
                unsigned v;

                assert_true(e->len < MAX_BYTES);
                sscanf(s, "%2x", &v);
                e->bytes[e->len++] = (uint8_t)v;
                n++;
                s += 2;
                if (s[0] != ' ' || s[1] == ' ') {
                        break; /* end of line, or the commentary */
                }
                s++;
        }
        return n > 0 ? n : -1;
}

/* Read the page and collect its examples, once for the whole run. */
static int load(void **state)
{
        FILE *f = fopen(PROTOCOL_MD, "r");
        char line[MAX_LINE];
        unsigned lineno = 0, fence = 0;
        bool in_block = false, hex = false;
        struct example *cur = NULL;
        size_t cap = 1 << 16, used = 0;

        (void)state;
        if (f == NULL) {
                fprintf(stderr, "cannot open %s\n", PROTOCOL_MD);
                return -1;
        }
        page.text = calloc(1, cap);
        while (fgets(line, sizeof line, f) != NULL) {
                size_t l = strlen(line);

                lineno++;
                while (used + l + 1 > cap) {
                        cap *= 2;
                        page.text = realloc(page.text, cap);
                }
                memcpy(page.text + used, line, l + 1);
                used += l;
                if (strncmp(line, "```", 3) == 0) {
                        if (in_block && hex) {
                                page.n++;
                        }
                        in_block = !in_block;
                        hex = false;
                        fence = lineno;
                        continue;
                }
                if (!in_block) {
                        continue;
                }
                if (!hex) {
                        if (page.n == MAX_EXAMPLES) {
                                continue;
                        }
                        cur = &page.examples[page.n];
                        memset(cur, 0, sizeof *cur);
                        cur->line = fence;
                        hex = hex_line(line, cur) > 0;
                } else if (hex_line(line, cur) < 0 && page.stray_line == 0) {
                        page.stray_line = lineno;
                }
        }
        fclose(f);
        return 0;
}

static int unload(void **state)
{
        (void)state;
        free(page.text);
        return 0;
}

/* The page has examples at all: a page that lost them would pass the
 * checks below vacuously. */
static void page_has_examples(void **state)
{
        (void)state;
        assert_true(page.n >= 3);
}

/* An example ACL request decoded and encoded back into `again`. */
static size_t acl_again(const struct example *e, const struct proto_header *h,
                        uint8_t *again, size_t cap)
{
        struct proto_acl_request r;
        int rv = proto_read_acl(e->bytes + PROTO_HEADER_SIZE, h->length, &r);

        if (rv != 0) {
                fail_msg("protocol.md:%u: the ACL does not decode: %s", e->line,
                         baton_strerror(rv));
        }
        return proto_write_acl(again, cap, h->id, &r);
}

/* Decode one example's body by its frame type and encode it back. */
static void check_body(const struct example *e, const struct proto_header *h)
{
        const uint8_t *body = e->bytes + PROTO_HEADER_SIZE;
        uint8_t again[MAX_BYTES];
        size_t len = h->length, n;

        switch (h->type) {
        case PROTO_PING:
        case PROTO_STATUS:
                if (len != 0) {
                        fail_msg("protocol.md:%u: PING/STATUS with a body",
                                 e->line);
                }
                n = h->type == PROTO_STATUS
                        ? proto_write_status_request(again, sizeof again, h->id,
                                                     h->flags)
                        : proto_write_empty(again, sizeof again, h->id,
                                            h->type);
                break;
        case PROTO_COMMAND: {
                struct command c;
                uint8_t cmd[COMMAND_MAX_SIZE];
                size_t cmd_len;
                int rv = command_decode(&c, body, len);

                if (rv != 0) {
                        fail_msg("protocol.md:%u: the command does not "
                                 "decode: %s",
                                 e->line, baton_strerror(rv));
                }
                cmd_len = command_encode(&c, cmd, sizeof cmd);
                n = proto_write_command(again, sizeof again, h->id, cmd,
                                        cmd_len);
                break;
        }
        case PROTO_ATTACH: {
                uint8_t secret[ATTACH_SECRET_SIZE];
                uint64_t session;
                int rv = attach_read(body, len, &session, secret);

                if (rv != 0) {
                        fail_msg("protocol.md:%u: the ATTACH does not "
                                 "decode: %s",
                                 e->line, baton_strerror(rv));
                }
                n = attach_write(again, sizeof again, h->id, session, secret);
                break;
        }
        case PROTO_RESULT: {
                struct proto_result r;
                int rv = proto_read_result(body, len, 0, &r);

                if (rv != 0) {
                        fail_msg("protocol.md:%u: the RESULT does not "
                                 "decode: %s",
                                 e->line, baton_strerror(rv));
                }
                n = proto_write_result(again, sizeof again, h->id, 0, &r);
                break;
        }
        case PROTO_WATCH: {
                struct proto_watch w;
                int rv = proto_read_watch(body, len, &w);

                if (rv != 0) {
                        fail_msg("protocol.md:%u: the WATCH does not decode: "
                                 "%s",
                                 e->line, baton_strerror(rv));
                }
                n = proto_write_watch(again, sizeof again, h->id, &w);
                break;
        }
        case PROTO_SESSIONS: {
                uint64_t id;
                uint8_t mode;
                uint32_t limit;
                int rv = proto_read_sessions(body, len, &id, &mode, &limit);

                if (rv != 0) {
                        fail_msg("protocol.md:%u: the SESSIONS does not "
                                 "decode: %s",
                                 e->line, baton_strerror(rv));
                }
                n = proto_write_sessions(again, sizeof again, h->id, id, mode,
                                         limit);
                break;
        }
        case PROTO_ACL:
                n = acl_again(e, h, again, sizeof again);
                break;
        case PROTO_WATCH_EVENT: {
                struct proto_watch_event ev;
                int rv = proto_read_watch_event(body, len, &ev);

                if (rv != 0) {
                        fail_msg("protocol.md:%u: the WATCH_EVENT does not "
                                 "decode: %s",
                                 e->line, baton_strerror(rv));
                }
                n = proto_write_watch_event(again, sizeof again, h->id, &ev);
                break;
        }
        default:
                fail_msg("protocol.md:%u: an example of frame type %u, which "
                         "this test does not know yet: teach it",
                         e->line, h->type);
                return;
        }
        if (n != e->len || memcmp(again, e->bytes, n) != 0) {
                fail_msg("protocol.md:%u: encoding the decoded frame gives "
                         "other bytes (%zu against %zu)",
                         e->line, n, e->len);
        }
}

/* Every example is one whole frame whose header states its body's length,
 * and whose body decodes and encodes back to the same bytes. */
static void examples_decode(void **state)
{
        size_t i;

        (void)state;
        if (page.stray_line != 0) {
                fail_msg("protocol.md:%u: a line without hex bytes inside an "
                         "example",
                         page.stray_line);
        }
        for (i = 0; i < page.n; i++) {
                const struct example *e = &page.examples[i];
                struct proto_header h;
                int rv;

                if (e->len < PROTO_HEADER_SIZE) {
                        fail_msg("protocol.md:%u: shorter than a frame header",
                                 e->line);
                }
                rv = proto_header_decode(&h, e->bytes, PROTO_MAX_BODY);
                if (rv != 0) {
                        fail_msg("protocol.md:%u: the header does not decode: "
                                 "%s",
                                 e->line, baton_strerror(rv));
                }
                if (h.length != e->len - PROTO_HEADER_SIZE) {
                        fail_msg("protocol.md:%u: the header says %u body "
                                 "bytes, the example has %zu",
                                 e->line, h.length, e->len - PROTO_HEADER_SIZE);
                }
                check_body(e, &h);
        }
}

/* Every line of the page that names the macro `macro` states its value,
 * `value`; the number of such lines. */
static unsigned size_is_stated(const char *macro, int value)
{
        char want[32], buf[MAX_LINE];
        const char *p = page.text;
        unsigned found = 0;

        snprintf(want, sizeof want, "%d bytes", value);
        while ((p = strstr(p, macro)) != NULL) {
                const char *start = p, *end = strchr(p, '\n');
                size_t l;

                while (start > page.text && start[-1] != '\n') {
                        start--;
                }
                if (end == NULL) {
                        end = p + strlen(p);
                }
                l = (size_t)(end - start);
                l = l < sizeof buf - 1 ? l : sizeof buf - 1;
                memcpy(buf, start, l);
                buf[l] = '\0';
                if (strstr(buf, want) == NULL) {
                        fail_msg("protocol.md: \"%s\" without \"%s\"", buf,
                                 want);
                }
                found++;
                p = end;
        }
        return found;
}

/* Every line that names COMMAND_MAX_SIZE or COMMAND_MULTI_MAX_SIZE states
 * its value. */
static void command_max_size_is_stated(void **state)
{
        (void)state;
        assert_true(size_is_stated("COMMAND_MAX_SIZE", COMMAND_MAX_SIZE) >= 2);
        assert_true(size_is_stated("COMMAND_MULTI_MAX_SIZE",
                                   COMMAND_MULTI_MAX_SIZE) >= 2);
}

/* The body of the page's section `title` ("### Flags"): from after its
 * heading to the next heading; NULL when the page has none. *end gets
 * its end. */
static const char *section(const char *title, const char **end)
{
        const char *p = strstr(page.text, title), *q;

        if (p == NULL) {
                return NULL;
        }
        p = strchr(p, '\n');
        q = p != NULL ? strstr(p, "\n#") : NULL;
        *end = q != NULL ? q : page.text + strlen(page.text);
        return p;
}

/* The page's Types table: the number of each type named `NAME`. */
struct type_name {
        char name[32];
        int type;
};

static unsigned types_of_page(struct type_name *t, unsigned max)
{
        const char *end, *p = section("### Types", &end);
        unsigned n = 0;

        assert_non_null(p);
        while (p != NULL && p < end && n < max) {
                int type;
                char name[32];
                if (sscanf(p, "\n| %d | `%31[A-Z_]` |", &type, name) == 2) {
                        t[n].type = type;
                        snprintf(t[n].name, sizeof t[n].name, "%s", name);
                        n++;
                }
                p = strchr(p + 1, '\n');
        }
        return n;
}

/* Whether `word` appears in `s` (up to `end`) as a whole word. */
static bool names(const char *s, const char *end, const char *word)
{
        size_t l = strlen(word);

        for (const char *p = s; p + l <= end; p++) {
                if (memcmp(p, word, l) == 0 &&
                    (p == s ||
                     !(isupper((unsigned char)p[-1]) || p[-1] == '_')) &&
                    !(isupper((unsigned char)p[l]) || p[l] == '_')) {
                        return true;
                }
        }
        return false;
}

/* The page's Flags table is the codec's rule, both ways: for every type
 * the Types table names and every flags value up to 0x00ff (and a few
 * above), a frame is allowed exactly when the value is 0 or a row lists
 * it with the type. */
static void flags_table_is_the_codec(void **state)
{
        struct type_name types[64];
        unsigned n_types = types_of_page(types, 64), checked = 0;
        const char *end, *sec = section("### Flags", &end);
        static const unsigned high[] = {0x0100, 0x0400, 0x1000, 0x8000, 0xffff};

        (void)state;
        assert_true(n_types >= 20);
        assert_non_null(sec);
        for (unsigned v = 0; v < 0x100 + 5; v++) {
                unsigned flags = v < 0x100 ? v : high[v - 0x100];
                char lit[16];
                snprintf(lit, sizeof lit, "`0x%04x`", flags);
                for (unsigned k = 0; k < n_types; k++) {
                        bool page_says = flags == 0;
                        /* Each row: the values in its first cell, the
                         * types in its third. */
                        for (const char *row = strstr(sec, "\n| `0x");
                             row != NULL && row < end && !page_says;
                             row = strstr(row + 1, "\n| `0x")) {
                                const char *eol = strchr(row + 1, '\n');
                                const char *c2, *c3, *c4;
                                eol = eol != NULL ? eol : end;
                                c2 = strstr(row + 2, " | ");
                                c3 = c2 != NULL ? strstr(c2 + 3, " | ") : NULL;
                                c4 = c3 != NULL ? strstr(c3 + 3, " | ") : NULL;
                                assert_non_null(c4);
                                page_says = strstr(row, lit) != NULL &&
                                            strstr(row, lit) < c2 &&
                                            names(c3, c4, types[k].name);
                        }
                        if (proto_flags_allowed((uint8_t)types[k].type,
                                                (uint16_t)flags) != page_says) {
                                fail_msg("protocol.md, Flags: flags 0x%04x "
                                         "on %s: the page says %s, the "
                                         "codec %s",
                                         flags, types[k].name,
                                         page_says ? "allowed" : "refused",
                                         page_says ? "refuses" : "allows");
                        }
                        checked++;
                }
        }
        assert_true(checked > 0);
}

/* The rule the page states for command versions ("Every command has
 * exactly one encoding"), against the codec: the version each command
 * is written in, and that the other one is refused. */
static void command_versions_as_stated(void **state)
{
        static const uint8_t hash[COMMAND_HASH_SIZE] = {1};
        struct {
                struct command c;
                uint8_t version;
        } cases[] = {
            {{.type = COMMAND_OPEN, .nonce = 1, .ttl_ms = 1000, .hash = hash},
             2},
            {{.type = COMMAND_OPEN,
              .nonce = 1,
              .ttl_ms = 1000,
              .hash = hash,
              .delay_ms = 5},
             3},
            {{.type = COMMAND_ACQUIRE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .mode = COMMAND_MODE_EXCLUSIVE},
             2},
            {{.type = COMMAND_ACQUIRE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .mode = COMMAND_MODE_SHARED},
             2},
            {{.type = COMMAND_ACQUIRE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .mode = COMMAND_MODE_SEMAPHORE,
              .permits = 1,
              .limit = 2},
             3},
            {{.type = COMMAND_ACQUIRE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .mode = COMMAND_MODE_ELECTION},
             3},
            {{.type = COMMAND_PROCLAIM,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .token = 7},
             3},
            {{.type = COMMAND_RELEASE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .token = 7},
             2},
            {{.type = COMMAND_ACQUIRE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .mode = COMMAND_MODE_SHARED,
              .value = "v",
              .value_len = 1},
             4},
            {{.type = COMMAND_SET_VALUE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .token = 7,
              .value = "v",
              .value_len = 1},
             4},
            {{.type = COMMAND_ACQUIRE,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .hold_ms = 5000},
             4},
            {{.type = COMMAND_EXTEND,
              .session = 1,
              .seq = 1,
              .name = "a",
              .name_len = 1,
              .token = 7,
              .hold_ms = 5000},
             4},
        };
        uint8_t buf[COMMAND_MAX_SIZE];
        struct command out;

        (void)state;
        assert_non_null(
            strstr(page.text, "**Every command has exactly one encoding**"));
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                size_t len = command_encode(&cases[i].c, buf, sizeof buf);
                assert_true(len > 0);
                assert_int_equal(buf[0], cases[i].version);
                assert_int_equal(command_decode(&out, buf, len), 0);
                /* The other version: 3 for a version 2 or 4 command,
                 * 2 for a version 3 one. */
                buf[0] = cases[i].version == 3 ? 2 : 3;
                assert_int_equal(command_decode(&out, buf, len),
                                 BATON_EMALFORMED);
                buf[0] = 9;
                assert_int_equal(command_decode(&out, buf, len),
                                 BATON_EVERSION);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(page_has_examples),
            cmocka_unit_test(examples_decode),
            cmocka_unit_test(command_max_size_is_stated),
            cmocka_unit_test(flags_table_is_the_codec),
            cmocka_unit_test(command_versions_as_stated),
        };
        return cmocka_run_group_tests_name("protocol_doc", tests, load, unload);
}

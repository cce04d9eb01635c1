/* Unit tests for the HTTP API's pure parts: requests read within their
 * limits (httpreq.c: pipelining, chunked bodies, oversized heads and
 * bodies, bad methods and versions, query decoding), requests read into
 * calls (apicall.c: routes, methods, fields, headers, refusals), the seqs
 * handed out per session (apiseq.c), the command frames of the calls
 * that carry a value or a hold time (apiframe.c) and the answers' HTTP
 * statuses and JSON (apireply.c), a holder's value and time left, an
 * extend's answer and a hold's expiry among them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/command.h"
#include "../../src/proto/list.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/sesslist.h"
#include "../../src/proto/watch.h"
#include "../../src/server/http/apicall.h"
#include "../../src/server/http/apiframe.h"
#include "../../src/server/http/apireply.h"
#include "../../src/server/http/apiseq.h"
#include "../../src/server/net/httpreq.h"

static const struct httpreq_limits limits = {1024, 2048};

/* Feed all of `s`; the request must come out whole. */
static void read_whole(struct httpreq *r, const char *s)
{
        long used;

        httpreq_init(r, &limits);
        used = httpreq_feed(r, s, strlen(s));
        assert_int_equal(used, (long)strlen(s));
        assert_true(r->complete);
}

/* Feed `s` and expect a refusal with HTTP `status`. */
static void refused(const char *s, size_t n, int status)
{
        struct httpreq r;

        httpreq_init(&r, &limits);
        assert_int_equal(httpreq_feed(&r, s, n), -1);
        assert_int_equal(r.status, status);
        assert_non_null(r.reason);
        httpreq_close(&r);
}

static void request_read_with_its_headers_and_body(void **state)
{
        struct httpreq r;
        char path[64], v[64];

        (void)state;
        read_whole(&r, "POST /v1/lock/acquire?x=a%2Fb+c HTTP/1.1\r\n"
                       "Host: h\r\nBaton-Session: 12\r\n"
                       "baton-secret: 00ff\r\nContent-Length: 4\r\n\r\n"
                       "{}\r\n");
        assert_int_equal(r.method, HTTP_POST);
        assert_int_equal(httpreq_path(&r, path, sizeof path), 16);
        assert_string_equal(path, "/v1/lock/acquire");
        assert_string_equal(httpreq_header(&r, HTTPREQ_SESSION), "12");
        assert_string_equal(httpreq_header(&r, HTTPREQ_SECRET), "00ff");
        assert_null(httpreq_header(&r, HTTPREQ_IDEMPOTENCY));
        assert_int_equal(r.body_len, 4);
        assert_int_equal(httpreq_query(&r, "x", v, sizeof v), 5);
        assert_string_equal(v, "a/b c");
        assert_int_equal(httpreq_query(&r, "y", v, sizeof v), -1);
        assert_true(r.keep_alive);
        httpreq_close(&r);
}

static void pipelined_requests_one_at_a_time(void **state)
{
        const char two[] = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n"
                           "Connection: close\r\n\r\n";
        struct httpreq r;
        char path[8];
        long used;

        (void)state;
        httpreq_init(&r, &limits);
        used = httpreq_feed(&r, two, sizeof two - 1);
        assert_int_equal(used, 19);
        assert_true(r.complete);
        httpreq_path(&r, path, sizeof path);
        assert_string_equal(path, "/a");
        /* Nothing more is taken until the first is answered. */
        assert_int_equal(httpreq_feed(&r, two + used, 5), 0);
        httpreq_next(&r);
        assert_int_equal(httpreq_feed(&r, two + used, sizeof two - 1 - 19),
                         (long)(sizeof two - 1 - 19));
        httpreq_path(&r, path, sizeof path);
        assert_string_equal(path, "/b");
        assert_false(r.keep_alive);
        httpreq_close(&r);
}

static void bytes_one_by_one_and_chunked_body(void **state)
{
        const char s[] = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                         "\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        struct httpreq r;
        size_t i;

        (void)state;
        httpreq_init(&r, &limits);
        for (i = 0; i < sizeof s - 1; i++) {
                assert_int_equal(httpreq_feed(&r, s + i, 1), 1);
        }
        assert_true(r.complete);
        assert_string_equal(r.body, "abcde");
        httpreq_close(&r);
}

/* Expect: 100-continue: the client waits for the go-ahead once the head
 * is whole and the body is not. */
static void expect_continue_once_the_head_is_whole(void **state)
{
        const char head[] = "POST /v1/session HTTP/1.1\r\nExpect: 100-continue"
                            "\r\nContent-Length: 2\r\n\r\n";
        struct httpreq r;

        (void)state;
        httpreq_init(&r, &limits);
        assert_int_equal(httpreq_feed(&r, head, 20), 20);
        assert_false(httpreq_wants_continue(&r));
        assert_int_equal(httpreq_feed(&r, head + 20, sizeof head - 21),
                         (long)(sizeof head - 21));
        assert_true(httpreq_wants_continue(&r));
        assert_int_equal(httpreq_feed(&r, "{}", 2), 2);
        assert_true(r.complete);
        assert_false(httpreq_wants_continue(&r));
        httpreq_next(&r);
        assert_false(httpreq_wants_continue(&r));
        httpreq_close(&r);
}

static void oversized_and_malformed_requests_refused(void **state)
{
        char big[2000];
        char body[256];

        (void)state;
        memset(big, 'a', sizeof big);
        memcpy(big, "GET /", 5);
        refused(big, sizeof big, 431);
        snprintf(body, sizeof body,
                 "POST /x HTTP/1.1\r\nContent-Length: 4096\r\n\r\n");
        refused(body, strlen(body), 413);
        refused("BREW /x HTTP/1.1\r\n\r\n", 20, 405);
        refused("GET /x HTTP/2.0\r\n\r\n", 19, 505);
        refused(
            "GET /x HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
            55, 400);
        refused(
            "GET /x HTTP/1.1\r\nBaton-Session: 1\r\nBaton-Session: 2\r\n\r\n",
            54, 400);
        refused("\x16\x03\x01\x00", 4, 405);
}

static void chunked_body_over_the_limit_refused(void **state)
{
        char s[4200];
        int n;

        (void)state;
        n = snprintf(s, sizeof s,
                     "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "900\r\n");
        memset(s + n, 'x', 0x900);
        refused(s, (size_t)n + 0x900, 413);
}

/* Read the request of `head` (request line and headers, each ending in
 * CRLF) and `body` (NULL: none) into a call: 0 or the refusal's HTTP
 * status. */
static int call_of(const char *head, const char *body, struct api_call *call,
                   struct api_refusal *why)
{
        char req[2048];
        struct httpreq r;
        int rv;

        if (body != NULL) {
                snprintf(req, sizeof req, "%sContent-Length: %zu\r\n\r\n%s",
                         head, strlen(body), body);
        } else {
                snprintf(req, sizeof req, "%s\r\n", head);
        }
        read_whole(&r, req);
        rv = apicall_read(&r, 60000, call, why);
        httpreq_close(&r);
        return rv == 0 ? 0 : why->http;
}

#define SESSION_HEADERS                                                        \
        "Baton-Session: 7\r\nBaton-Secret: "                                   \
        "000102030405060708090a0b0c0d0e0f\r\n"

static void acquire_call_read(void **state)
{
        const char head[] = "POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS
                            "Idempotency-Key: 9\r\n";
        const char body[] = "{\"name\":\"jobs\",\"mode\":\"shared\","
                            "\"wait_ms\":500,\"owner\":\"3\","
                            "\"value\":\"host-a\"}";
        struct api_call c;
        struct api_refusal why;

        (void)state;
        assert_int_equal(call_of(head, body, &c, &why), 0);
        assert_int_equal(c.op, API_LOCK_ACQUIRE);
        assert_true(c.needs_session);
        assert_int_equal(c.session, 7);
        assert_int_equal(c.secret[15], 15);
        assert_int_equal(c.seq, 9);
        assert_string_equal(c.name, "jobs");
        assert_int_equal(c.mode, COMMAND_MODE_SHARED);
        assert_int_equal(c.wait_ms, 500);
        assert_int_equal(c.owner, 3);
        assert_string_equal(c.value, "host-a");
        assert_int_equal(c.value_len, 6);
}

/* POST /v1/lock/value: the grant's name and token, the new value (empty
 * clears it) and the owner, in the session of the headers. */
static void value_call_read(void **state)
{
        const char head[] = "POST /v1/lock/value HTTP/1.1\r\n" SESSION_HEADERS;
        struct api_call c;
        struct api_refusal why;

        (void)state;
        assert_int_equal(call_of(head,
                                 "{\"name\":\"jobs\",\"token\":\"41\","
                                 "\"value\":\"step 2\",\"owner\":5}",
                                 &c, &why),
                         0);
        assert_int_equal(c.op, API_LOCK_VALUE);
        assert_true(c.needs_session);
        assert_string_equal(c.name, "jobs");
        assert_int_equal(c.token, 41);
        assert_int_equal(c.owner, 5);
        assert_string_equal(c.value, "step 2");
        assert_int_equal(c.value_len, 6);
        assert_string_equal(apicall_name(API_LOCK_VALUE), "lock.value");
        assert_int_equal(call_of(head,
                                 "{\"name\":\"jobs\",\"token\":41,"
                                 "\"value\":\"\"}",
                                 &c, &why),
                         0);
        assert_int_equal(c.value_len, 0);
}

/* A value of 255 bytes is taken, one of 256 refused by name, on acquire
 * and on lock.value alike. */
static void value_too_long_refused(void **state)
{
        static const char *const heads[] = {
            "POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS,
            "POST /v1/lock/value HTTP/1.1\r\n" SESSION_HEADERS,
        };
        char body[512], v[257];
        struct api_call c;
        struct api_refusal why;
        size_t i;

        (void)state;
        for (i = 0; i < 2; i++) {
                /* An acquire takes no token. */
                const char *token = i == 0 ? "" : "\"token\":3,";

                memset(v, 'v', 255);
                v[255] = '\0';
                snprintf(body, sizeof body,
                         "{\"name\":\"a\",%s\"value\":\"%s\"}", token, v);
                assert_int_equal(call_of(heads[i], body, &c, &why), 0);
                assert_int_equal(c.value_len, 255);
                v[255] = 'v';
                v[256] = '\0';
                snprintf(body, sizeof body,
                         "{\"name\":\"a\",%s\"value\":\"%s\"}", token, v);
                memset(&why, 0, sizeof why);
                assert_int_equal(call_of(heads[i], body, &c, &why), 400);
                assert_int_equal(why.code, BATON_EINVAL);
                assert_non_null(strstr(why.message, "field value: too long"));
        }
}

/* The frame of `call`, decoded back into `c` (borrowing `frame`). */
static void command_of_call(const struct api_call *call, uint8_t *frame,
                            size_t cap, struct command *c)
{
        struct proto_header h;
        size_t n;

        n = apiframe_write(call, 3, 7, 0, NULL, frame, cap);
        assert_true(n > PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(h.type, PROTO_COMMAND);
        assert_int_equal(command_decode(c, frame + PROTO_HEADER_SIZE, h.length),
                         0);
}

/* An acquire's value goes in its ACQUIRE (of command version 4),
 * lock.value's in a SET_VALUE with the grant's token, and the holders
 * query asks for values. */
static void value_calls_framed(void **state)
{
        uint8_t frame[APIFRAME_MAX];
        struct api_call call;
        struct api_refusal why;
        struct proto_header h;
        struct command c;

        (void)state;
        assert_int_equal(
            call_of("POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS,
                    "{\"name\":\"pool\",\"mode\":\"semaphore\",\"limit\":3,"
                    "\"value\":\"worker 9\"}",
                    &call, &why),
            0);
        command_of_call(&call, frame, sizeof frame, &c);
        assert_int_equal(c.type, COMMAND_ACQUIRE);
        assert_int_equal(c.mode, COMMAND_MODE_SEMAPHORE);
        assert_int_equal(c.seq, 7);
        assert_int_equal(c.value_len, 8);
        assert_memory_equal(c.value, "worker 9", 8);
        assert_int_equal(frame[PROTO_HEADER_SIZE], 4); /* command version */
        assert_int_equal(
            call_of("POST /v1/lock/value HTTP/1.1\r\n" SESSION_HEADERS,
                    "{\"name\":\"jobs\",\"token\":41,\"value\":\"step 2\"}",
                    &call, &why),
            0);
        command_of_call(&call, frame, sizeof frame, &c);
        assert_int_equal(c.type, COMMAND_SET_VALUE);
        assert_int_equal(c.session, 7);
        assert_int_equal(c.seq, 7);
        assert_int_equal(c.token, 41);
        assert_int_equal(c.name_len, 4);
        assert_memory_equal(c.name, "jobs", 4);
        assert_int_equal(c.value_len, 6);
        assert_memory_equal(c.value, "step 2", 6);
        assert_int_equal(call_of("GET /v1/lock/holders?name=jobs HTTP/1.1\r\n",
                                 NULL, &call, &why),
                         0);
        assert_true(apiframe_write(&call, 3, 0, 0, NULL, frame, sizeof frame) >
                    0);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(h.type, PROTO_QUERY);
        assert_int_equal(h.flags & (PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES),
                         PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES);
}

/* Hold times: an acquire's hold_ms (0 or absent: none) and POST
 * /v1/lock/extend's name, token, hold_ms (from 1, required) and owner. */
static void hold_calls_read(void **state)
{
        const char acq[] = "POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS;
        const char ext[] = "POST /v1/lock/extend HTTP/1.1\r\n" SESSION_HEADERS
                           "Idempotency-Key: 4\r\n";
        struct api_call c;
        struct api_refusal why;

        (void)state;
        assert_int_equal(
            call_of(acq, "{\"name\":\"jobs\",\"hold_ms\":1500}", &c, &why), 0);
        assert_int_equal(c.hold_ms, 1500);
        assert_int_equal(c.value_len, 0);
        assert_int_equal(
            call_of(acq, "{\"name\":\"jobs\",\"hold_ms\":0}", &c, &why), 0);
        assert_int_equal(c.hold_ms, 0);
        assert_int_equal(call_of(acq,
                                 "{\"name\":\"pool\",\"mode\":\"semaphore\","
                                 "\"limit\":2,\"hold_ms\":\"4294967295\"}",
                                 &c, &why),
                         0);
        assert_int_equal(c.hold_ms, UINT32_MAX);
        assert_int_equal(call_of(ext,
                                 "{\"name\":\"jobs\",\"token\":41,"
                                 "\"hold_ms\":30000,\"owner\":5}",
                                 &c, &why),
                         0);
        assert_int_equal(c.op, API_LOCK_EXTEND);
        assert_true(c.needs_session);
        assert_int_equal(c.seq, 4);
        assert_string_equal(c.name, "jobs");
        assert_int_equal(c.token, 41);
        assert_int_equal(c.owner, 5);
        assert_int_equal(c.hold_ms, 30000);
        assert_string_equal(apicall_name(API_LOCK_EXTEND), "lock.extend");
}

/* A request the API refuses: its status, its BATON_E* code and words its
 * message must hold. */
struct refusal {
        const char *head;
        const char *body;
        int http;
        int code;
        const char *says;
};

/* Each of `n` requests is refused as its case says. */
static void check_refusals(const struct refusal *cases, size_t n)
{
        struct api_call c;
        struct api_refusal why;
        size_t i;

        for (i = 0; i < n; i++) {
                memset(&why, 0, sizeof why);
                if (call_of(cases[i].head, cases[i].body, &c, &why) !=
                        cases[i].http ||
                    why.code != cases[i].code ||
                    strstr(why.message, cases[i].says) == NULL) {
                        fail_msg("case %zu: %d %d '%s', expected %d %d '%s'", i,
                                 why.http, why.code, why.message, cases[i].http,
                                 cases[i].code, cases[i].says);
                }
        }
}

/* Hold times refused before they reach the cluster, each by name: an
 * extend without a token or a hold time, of 0 or past 32 bits, of the
 * wrong type or with a field it does not take; an acquire's negative or
 * too large one; a multi-lock's, which carries none. */
static void hold_calls_refused(void **state)
{
#define ACQ "POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS
#define EXT "POST /v1/lock/extend HTTP/1.1\r\n" SESSION_HEADERS
        static const struct refusal cases[] = {
            {EXT, "{\"name\":\"a\",\"token\":4}", 400, BATON_EINVAL,
             "hold_ms is required"},
            {EXT, "{\"name\":\"a\",\"hold_ms\":10}", 400, BATON_EINVAL,
             "token is required"},
            {EXT, "{\"token\":4,\"hold_ms\":10}", 400, BATON_EINVAL,
             "name is required"},
            {EXT, "{\"name\":\"a\",\"token\":4,\"hold_ms\":0}", 400,
             BATON_EINVAL, "field hold_ms: 0 is outside 1..4294967295"},
            {EXT, "{\"name\":\"a\",\"token\":4,\"hold_ms\":4294967296}", 400,
             BATON_EINVAL, "field hold_ms"},
            {EXT, "{\"name\":\"a\",\"token\":4,\"hold_ms\":\"soon\"}", 400,
             BATON_EINVAL, "field hold_ms: expected a non-negative integer"},
            {EXT, "{\"name\":\"a\",\"token\":4,\"hold_ms\":9,\"value\":\"v\"}",
             400, BATON_EINVAL, "unknown field value"},
            {"POST /v1/lock/extend HTTP/1.1\r\n",
             "{\"name\":\"a\",\"token\":4,\"hold_ms\":9}", 401, BATON_EPERM,
             "Baton-Secret"},
            {"GET /v1/lock/extend HTTP/1.1\r\n", NULL, 405, BATON_EINVAL,
             "GET"},
            {ACQ, "{\"name\":\"a\",\"hold_ms\":-1}", 400, BATON_EINVAL,
             "field hold_ms"},
            {ACQ, "{\"name\":\"a\",\"hold_ms\":4294967296}", 400, BATON_EINVAL,
             "field hold_ms"},
            {ACQ, "{\"locks\":[{\"name\":\"a\"}],\"hold_ms\":100}", 400,
             BATON_EINVAL, "value or hold_ms"},
        };
#undef ACQ
#undef EXT

        (void)state;
        check_refusals(cases, sizeof cases / sizeof cases[0]);
}

/* An acquire's hold time goes in its ACQUIRE, version 4 even without a
 * value (an empty value, then the hold time); one without either is the
 * version 2 ACQUIRE it always was; an extend is an EXTEND with the
 * grant's token and the hold time. */
static void hold_calls_framed(void **state)
{
        uint8_t frame[APIFRAME_MAX];
        struct api_call call;
        struct api_refusal why;
        struct command c;

        (void)state;
        assert_int_equal(
            call_of("POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS,
                    "{\"name\":\"jobs\",\"hold_ms\":1500}", &call, &why),
            0);
        command_of_call(&call, frame, sizeof frame, &c);
        assert_int_equal(frame[PROTO_HEADER_SIZE], 4); /* command version */
        assert_int_equal(c.type, COMMAND_ACQUIRE);
        assert_int_equal(c.mode, COMMAND_MODE_EXCLUSIVE);
        assert_int_equal(c.hold_ms, 1500);
        assert_int_equal(c.value_len, 0);
        assert_int_equal(
            call_of("POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS,
                    "{\"name\":\"jobs\",\"mode\":\"shared\",\"value\":\"r\","
                    "\"hold_ms\":700}",
                    &call, &why),
            0);
        command_of_call(&call, frame, sizeof frame, &c);
        assert_int_equal(frame[PROTO_HEADER_SIZE], 4);
        assert_int_equal(c.hold_ms, 700);
        assert_int_equal(c.value_len, 1);
        assert_int_equal(
            call_of("POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS,
                    "{\"name\":\"jobs\",\"hold_ms\":0}", &call, &why),
            0);
        command_of_call(&call, frame, sizeof frame, &c);
        assert_int_equal(frame[PROTO_HEADER_SIZE], 2);
        assert_int_equal(c.hold_ms, 0);
        assert_int_equal(
            call_of("POST /v1/lock/extend HTTP/1.1\r\n" SESSION_HEADERS,
                    "{\"name\":\"jobs\",\"token\":41,\"hold_ms\":30000}", &call,
                    &why),
            0);
        command_of_call(&call, frame, sizeof frame, &c);
        assert_int_equal(frame[PROTO_HEADER_SIZE], 4);
        assert_int_equal(c.type, COMMAND_EXTEND);
        assert_int_equal(c.session, 7);
        assert_int_equal(c.seq, 7);
        assert_int_equal(c.token, 41);
        assert_int_equal(c.hold_ms, 30000);
        assert_int_equal(c.name_len, 4);
        assert_memory_equal(c.name, "jobs", 4);
}

/* The answer of lock.extend to the RESULT `r`, in `*a`. */
static void extend_answer(const struct proto_result *r, struct api_answer *a)
{
        struct api_call call = {.op = API_LOCK_EXTEND};
        struct proto_header h;
        uint8_t frame[128];

        assert_true(proto_write_result(frame, sizeof frame, 3, 0, r) > 0);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(apireply_read(&call, &h, frame + 16, a), 0);
}

/* An extend's UPDATED answers the grant's token and count; a grant
 * without a hold time (or a hold over max-hold-ms) is 400 BATON_EINVAL,
 * another token 409 BATON_ESTALE; a hold's expiry in a watch event is
 * named EXPIRE_HOLD, as every cause is by its command. */
static void extend_answered_and_expiry_named(void **state)
{
        struct proto_result r = {
            .kind = PROTO_KIND_UPDATED, .index = 90, .token = 41, .count = 1};
        struct proto_watch_event ev = {.index = 95,
                                       .ord = 1,
                                       .kind = PROTO_EVENT_RELEASED,
                                       .cause = COMMAND_EXPIRE_HOLD,
                                       .mode = COMMAND_MODE_EXCLUSIVE,
                                       .session = 5,
                                       .token = 41,
                                       .name = {"jobs", 4}};
        struct api_answer a;
        const char *kind;
        json_t *o;

        (void)state;
        extend_answer(&r, &a);
        assert_int_equal(a.http, 200);
        assert_int_equal(json_integer_value(json_object_get(a.body, "token")),
                         41);
        assert_int_equal(json_integer_value(json_object_get(a.body, "count")),
                         1);
        assert_int_equal(json_integer_value(json_object_get(a.body, "index")),
                         90);
        json_decref(a.body);
        r = (struct proto_result){.status = BATON_EINVAL};
        extend_answer(&r, &a);
        assert_int_equal(a.http, 400);
        assert_string_equal(json_string_value(json_object_get(a.body, "error")),
                            "BATON_EINVAL");
        json_decref(a.body);
        r = (struct proto_result){.status = BATON_ESTALE};
        extend_answer(&r, &a);
        assert_int_equal(a.http, 409);
        assert_string_equal(json_string_value(json_object_get(a.body, "error")),
                            "BATON_ESTALE");
        json_decref(a.body);
        o = apireply_event(&ev, &kind);
        assert_string_equal(kind, "released");
        assert_string_equal(json_string_value(json_object_get(o, "cause")),
                            "EXPIRE_HOLD");
        json_decref(o);
}

static void multi_lock_call_read(void **state)
{
        const char head[] =
            "POST /v1/lock/acquire HTTP/1.1\r\n" SESSION_HEADERS;
        const char body[] = "{\"locks\":[{\"name\":\"a\"},{\"name\":\"b\","
                            "\"mode\":\"shared\"}]}";
        struct api_call c;
        struct api_refusal why;

        (void)state;
        assert_int_equal(call_of(head, body, &c, &why), 0);
        assert_int_equal(c.n_names, 2);
        assert_int_equal(c.list_len, 2 + 1 + 2 + 1);
}

/* GET /v1/sessions and /v1/sessions/{id}: the cursor, the limit and the
 * id read from the path; bad ones refused. */
static void session_calls_read(void **state)
{
        struct api_call c;
        struct api_refusal why;

        (void)state;
        assert_int_equal(
            call_of("GET /v1/sessions HTTP/1.1\r\n", NULL, &c, &why), 0);
        assert_int_equal(c.op, API_SESSION_LIST);
        assert_int_equal(c.target_session, 0);
        assert_int_equal(c.limit, 100);
        assert_int_equal(call_of("GET /v1/sessions?after=42&limit=3 "
                                 "HTTP/1.1\r\n",
                                 NULL, &c, &why),
                         0);
        assert_int_equal(c.target_session, 42);
        assert_int_equal(c.limit, 3);
        assert_int_equal(
            call_of("GET /v1/sessions/77 HTTP/1.1\r\n", NULL, &c, &why), 0);
        assert_int_equal(c.op, API_SESSION_INFO);
        assert_int_equal(c.target_session, 77);
        assert_string_equal(apicall_name(API_SESSION_INFO), "session.info");
        assert_int_equal(
            call_of("GET /v1/sessions?limit=101 HTTP/1.1\r\n", NULL, &c, &why),
            400);
        assert_int_equal(
            call_of("GET /v1/sessions?after=x HTTP/1.1\r\n", NULL, &c, &why),
            400);
        assert_int_equal(
            call_of("GET /v1/sessions?prefix=a HTTP/1.1\r\n", NULL, &c, &why),
            400);
        assert_int_equal(
            call_of("GET /v1/sessions/0 HTTP/1.1\r\n", NULL, &c, &why), 404);
        assert_int_equal(
            call_of("GET /v1/sessions/abc HTTP/1.1\r\n", NULL, &c, &why), 404);
        assert_int_equal(
            call_of("POST /v1/sessions/5 HTTP/1.1\r\n", "{}", &c, &why), 405);
}

/* Each request is refused with its HTTP status and BATON_E* code, and the
 * message names the problem. */
static void bad_calls_refused_by_name(void **state)
{
#define ACQ "POST /v1/lock/acquire HTTP/1.1\r\n"
#define VAL "POST /v1/lock/value HTTP/1.1\r\n"
        static const struct refusal cases[] = {
            {"GET /v2/x HTTP/1.1\r\n", NULL, 404, BATON_EINVAL, "no such"},
            {"DELETE /v1/session HTTP/1.1\r\n", NULL, 405, BATON_EINVAL,
             "DELETE"},
            {ACQ, "{}", 401, BATON_EPERM, "Baton-Secret"},
            {ACQ SESSION_HEADERS, "{\"na\"", 400, BATON_EINVAL, "not JSON"},
            {ACQ SESSION_HEADERS, "[]", 400, BATON_EINVAL, "object"},
            {ACQ SESSION_HEADERS, "{}", 400, BATON_EINVAL, "name is required"},
            {ACQ SESSION_HEADERS, "{\"name\":\"\"}", 400, BATON_ENAME,
             "1..255"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"colour\":1}", 400,
             BATON_EINVAL, "unknown field colour"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"wait_ms\":600000}", 400,
             BATON_EINVAL, "wait_ms"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"owner\":-1}", 400,
             BATON_EINVAL, "owner"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"mode\":\"sharp\"}", 400,
             BATON_EINVAL, "exclusive, shared or semaphore"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"permits\":2}", 400,
             BATON_EINVAL, "semaphore"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"name\":\"b\"}", 400,
             BATON_EINVAL, "duplicate"},
            {ACQ "Baton-Session: x\r\nBaton-Secret: 00\r\n", "{}", 400,
             BATON_EINVAL, "Baton-Session"},
            {ACQ "Baton-Session: 1\r\nBaton-Secret: 0011\r\n", "{}", 400,
             BATON_EINVAL, "32 hex"},
            {ACQ SESSION_HEADERS "Idempotency-Key: 0\r\n", "{}", 400,
             BATON_EINVAL, "Idempotency-Key"},
            {"GET /v1/lock/holders HTTP/1.1\r\n", NULL, 400, BATON_EINVAL,
             "name is required"},
            {"GET /v1/lock/holders?name=a&x=1 HTTP/1.1\r\n", NULL, 400,
             BATON_EINVAL, "unknown parameter x"},
            {"GET /v1/lock/check?name=a&token=z HTTP/1.1\r\n", NULL, 400,
             BATON_EINVAL, "token"},
            {"GET /v1/lock/holders?name=a%00b HTTP/1.1\r\n", NULL, 400,
             BATON_EINVAL, "malformed"},
            {"GET /v1/watch?name=a&prefix=b HTTP/1.1\r\n", NULL, 400,
             BATON_EINVAL, "not both"},
            {"GET /v1/watch?name=a HTTP/1.1\r\nLast-Event-ID: 7\r\n", NULL, 400,
             BATON_EINVAL, "INDEX.ORD"},
            {"GET /v1/status HTTP/1.1\r\n", "{}", 400, BATON_EINVAL,
             "no request body"},
            {"POST /v1/lock/revoke HTTP/1.1\r\n",
             "{\"name\":\"a\",\"session\":3}", 400, BATON_EINVAL,
             "token is required"},
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"value\":\"a\\u0000b\"}",
             400, BATON_EINVAL, "not JSON"}, /* no NUL reaches a value */
            {ACQ SESSION_HEADERS, "{\"name\":\"a\",\"value\":7}", 400,
             BATON_EINVAL, "field value: expected a string"},
            {ACQ SESSION_HEADERS,
             "{\"locks\":[{\"name\":\"a\"}],\"value\":\"v\"}", 400,
             BATON_EINVAL, "not name, mode, permits, limit, value or hold_ms"},
            {VAL SESSION_HEADERS, "{\"name\":\"a\",\"token\":4}", 400,
             BATON_EINVAL, "value is required"},
            {VAL SESSION_HEADERS, "{\"name\":\"a\",\"value\":\"v\"}", 400,
             BATON_EINVAL, "token is required"},
            {VAL SESSION_HEADERS,
             "{\"name\":\"a\",\"token\":0,\"value\":\"v\"}", 400, BATON_EINVAL,
             "field token"},
            {VAL SESSION_HEADERS,
             "{\"name\":\"a\",\"token\":4,\"value\":\"v\",\"mode\":1}", 400,
             BATON_EINVAL, "unknown field mode"},
            {VAL, "{\"name\":\"a\",\"token\":4,\"value\":\"v\"}", 401,
             BATON_EPERM, "Baton-Secret"},
            {"GET /v1/lock/value HTTP/1.1\r\n", NULL, 405, BATON_EINVAL, "GET"},
        };
#undef ACQ
#undef VAL

        (void)state;
        check_refusals(cases, sizeof cases / sizeof cases[0]);
}

static void watch_position_from_last_event_id(void **state)
{
        struct api_call c;
        struct api_refusal why;

        (void)state;
        assert_int_equal(
            call_of("GET /v1/watch?prefix=jobs/&from=3.1 HTTP/1.1\r\n"
                    "Last-Event-ID: 40.2\r\n",
                    NULL, &c, &why),
            0);
        assert_true(c.prefix);
        assert_string_equal(c.name, "jobs/");
        assert_int_equal(c.from_index, 40);
        assert_int_equal(c.from_ord, 2);
        assert_int_equal(
            call_of("GET /v1/watch?prefix= HTTP/1.1\r\n", NULL, &c, &why), 0);
        assert_int_equal(c.name_len, 0);
}

/* Two writes of one session out at once never share a seq; a given key
 * is used as it is; the state machine's seqs come first. */
static void seqs_per_session(void **state)
{
        struct lockfsm_limits l;
        struct lockfsm *f;
        struct apiseqs s;

        (void)state;
        lockfsm_limits_default(&l);
        f = lockfsm_create(&l, NULL);
        assert_non_null(f);
        apiseqs_init(&s);
        assert_int_equal(apiseqs_take(&s, f, 5, 0), 1);
        assert_int_equal(apiseqs_take(&s, f, 5, 0), 2);
        assert_int_equal(apiseqs_take(&s, f, 6, 0), 1);
        assert_int_equal(apiseqs_take(&s, f, 5, 10), 10);
        assert_int_equal(apiseqs_take(&s, f, 5, 0), 11);
        apiseqs_put(&s, 5);
        apiseqs_put(&s, 5);
        apiseqs_put(&s, 5);
        apiseqs_put(&s, 5);
        /* None out: the state machine numbers again (it knows none). */
        assert_int_equal(apiseqs_take(&s, f, 5, 0), 1);
        apiseqs_close(&s);
        lockfsm_destroy(f);
}

static void statuses_fit_the_errors(void **state)
{
        (void)state;
        assert_int_equal(apireply_http_status(BATON_EBUSY), 409);
        assert_int_equal(apireply_http_status(BATON_ENOSESSION), 404);
        assert_int_equal(apireply_http_status(BATON_EEXPIRED), 410);
        assert_int_equal(apireply_http_status(BATON_EPERM), 403);
        assert_int_equal(apireply_http_status(BATON_EUNAVAILABLE), 503);
        assert_int_equal(apireply_http_status(BATON_ENOTLEADER), 503);
        assert_int_equal(apireply_http_status(BATON_ETOOMANYWAITERS), 429);
        assert_int_equal(apireply_http_status(BATON_EQUOTA), 429);
        assert_int_equal(apireply_http_status(BATON_ENAME), 400);
}

static void busy_answer_names_the_holder(void **state)
{
        struct proto_result r = {.status = BATON_EBUSY, .token = 41};
        struct api_call call = {.op = API_LOCK_ACQUIRE};
        struct proto_header h;
        struct api_answer a;
        uint8_t frame[128];
        size_t n;

        (void)state;
        n = proto_write_result(frame, sizeof frame, 3, 0, &r);
        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(apireply_read(&call, &h, frame + 16, &a), 0);
        assert_int_equal(a.http, 409);
        assert_string_equal(json_string_value(json_object_get(a.body, "error")),
                            "BATON_EBUSY");
        assert_int_equal(
            json_integer_value(json_object_get(a.body, "holder_token")), 41);
        json_decref(a.body);
}

/* The JSON "holders" array of a holders answer to the LIST_REPLY of `n`
 * entries `e` (with values and time left), the answer in `*a`. */
static json_t *holders_answer(const struct proto_lock_entry *e, uint32_t n,
                              struct api_answer *a)
{
        struct api_call call = {.op = API_LOCK_HOLDERS, .name = "db"};
        struct proto_header h;
        uint8_t frame[256];
        size_t len;

        len = proto_write_list_reply(frame, sizeof frame, 3,
                                     PROTO_FLAG_HOLDERS | PROTO_FLAG_VALUES |
                                         PROTO_FLAG_LEFT,
                                     e, n, false);
        assert_true(len > 0);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(apireply_read(&call, &h, frame + 16, a), 0);
        return json_object_get(a->body, "holders");
}

/* A holders answer with each holder's time left: a number, or null when
 * the leader keeps no lease of its session. */
static void holders_answer_with_time_left(void **state)
{
        struct proto_lock_entry e[2] = {
            {.name = {"db", 2}, .session = 5, .token = 9, .left_ms = 8000},
            {.name = {"db", 2},
             .session = 6,
             .token = 10,
             .left_ms = PROTO_SESSION_UNKNOWN},
        };
        struct api_answer a;
        json_t *holders;

        (void)state;
        holders = holders_answer(e, 2, &a);
        assert_int_equal(json_array_size(holders), 2);
        assert_int_equal(json_integer_value(json_object_get(
                             json_array_get(holders, 0), "left_ms")),
                         8000);
        assert_true(json_is_null(
            json_object_get(json_array_get(holders, 1), "left_ms")));
        json_decref(a.body);
}

/* Every grant's value in a holders answer ("" when it has none, an
 * election's leader's as before), and in a granted event's JSON. */
static void holders_and_events_carry_values(void **state)
{
        struct proto_lock_entry e[2] = {
            {.name = {"db", 2},
             .session = 5,
             .token = 9,
             .mode = COMMAND_MODE_SHARED,
             .value = {"10.0.0.7:8080", 13}},
            {.name = {"db", 2},
             .session = 6,
             .token = 10,
             .mode = COMMAND_MODE_SHARED},
        };
        struct proto_watch_event ev = {.index = 12,
                                       .ord = 1,
                                       .kind = PROTO_EVENT_GRANTED,
                                       .cause = COMMAND_ACQUIRE,
                                       .mode = COMMAND_MODE_SEMAPHORE,
                                       .session = 5,
                                       .token = 12,
                                       .permits = 2,
                                       .name = {"pool", 4},
                                       .value = {"job 77", 6}};
        struct api_answer a;
        const char *kind;
        json_t *holders, *o;

        (void)state;
        holders = holders_answer(e, 2, &a);
        assert_int_equal(json_array_size(holders), 2);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(holders, 0), "value")),
                            "10.0.0.7:8080");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(holders, 1), "value")),
                            "");
        json_decref(a.body);
        o = apireply_event(&ev, &kind);
        assert_string_equal(kind, "granted");
        assert_string_equal(json_string_value(json_object_get(o, "value")),
                            "job 77");
        assert_int_equal(json_integer_value(json_object_get(o, "permits")), 2);
        json_decref(o);
}

/* GET /v1/locks asks with client names and values, and each lock of the
 * answer has its first holder's value ("" when none). */
static void locks_listed_with_values(void **state)
{
        struct proto_lock_entry e[2] = {
            {.name = {"jobs/a", 6},
             .session = 5,
             .token = 9,
             .count = 1,
             .client_name = {"worker", 6},
             .value = {"10.0.0.7:8080", 13}},
            {.name = {"jobs/b", 6}, .session = 6, .token = 10, .count = 1},
        };
        uint8_t frame[APIFRAME_MAX];
        struct api_call call;
        struct api_refusal why;
        struct proto_header h;
        struct api_answer a;
        json_t *locks;
        size_t n;

        (void)state;
        assert_int_equal(call_of("GET /v1/locks?prefix=jobs/&limit=10 "
                                 "HTTP/1.1\r\n",
                                 NULL, &call, &why),
                         0);
        assert_int_equal(call.op, API_LOCK_LIST);
        assert_true(apiframe_write(&call, 3, 0, 0, NULL, frame, sizeof frame) >
                    0);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(h.type, PROTO_LIST);
        assert_int_equal(h.flags, PROTO_FLAG_NAMES | PROTO_FLAG_VALUES);
        n = proto_write_list_reply(frame, sizeof frame, 3,
                                   PROTO_FLAG_NAMES | PROTO_FLAG_VALUES, e, 2,
                                   false);
        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, frame, 65536), 0);
        assert_int_equal(apireply_read(&call, &h, frame + 16, &a), 0);
        locks = json_object_get(a.body, "locks");
        assert_int_equal(json_array_size(locks), 2);
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(locks, 0), "client_name")),
                            "worker");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(locks, 0), "value")),
                            "10.0.0.7:8080");
        assert_string_equal(json_string_value(json_object_get(
                                json_array_get(locks, 1), "value")),
                            "");
        assert_true(json_is_false(json_object_get(a.body, "more")));
        json_decref(a.body);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(request_read_with_its_headers_and_body),
            cmocka_unit_test(pipelined_requests_one_at_a_time),
            cmocka_unit_test(bytes_one_by_one_and_chunked_body),
            cmocka_unit_test(expect_continue_once_the_head_is_whole),
            cmocka_unit_test(oversized_and_malformed_requests_refused),
            cmocka_unit_test(chunked_body_over_the_limit_refused),
            cmocka_unit_test(acquire_call_read),
            cmocka_unit_test(value_call_read),
            cmocka_unit_test(value_calls_framed),
            cmocka_unit_test(value_too_long_refused),
            cmocka_unit_test(hold_calls_read),
            cmocka_unit_test(hold_calls_refused),
            cmocka_unit_test(hold_calls_framed),
            cmocka_unit_test(extend_answered_and_expiry_named),
            cmocka_unit_test(multi_lock_call_read),
            cmocka_unit_test(session_calls_read),
            cmocka_unit_test(bad_calls_refused_by_name),
            cmocka_unit_test(watch_position_from_last_event_id),
            cmocka_unit_test(seqs_per_session),
            cmocka_unit_test(statuses_fit_the_errors),
            cmocka_unit_test(busy_answer_names_the_holder),
            cmocka_unit_test(holders_answer_with_time_left),
            cmocka_unit_test(holders_and_events_carry_values),
            cmocka_unit_test(locks_listed_with_values),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Fuzz target of the HTTP API's requests: arbitrary bytes as what a client
 * sends on an HTTP API connection, read as apiconn.c's pump() reads them:
 * httpreq_feed() (src/server/net/httpreq.h, over http_parser) takes the
 * bytes as they arrive, in the chunks the first byte picks, pipelined
 * requests one at a time; each whole request goes to apicall_read()
 * (src/server/http/apicall.h: the route, the query, the Baton headers and
 * the JSON body, with jansson), and an accepted call to apiframe_write(),
 * the binary frame the request core is handed.
 *
 * Every request is refused with the status the server would answer (and
 * a JSON error body it can write) or read into a call whose strings are
 * within their limits and whose frame, when it encodes, decodes again as
 * the request core would decode it. Never a crash, a leak or a body or
 * target kept past its limit. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/server/http/apicall.h"
#include "../../src/server/http/apiframe.h"
#include "../../src/server/http/apireply.h"
#include "../../src/server/net/httpreq.h"
#include "replay.h"

/* The config's defaults (http-max-header-bytes, http-max-body-bytes,
 * http-max-wait-ms), and their least values, which small inputs reach. */
static const struct httpreq_limits defaults = {8192, 16384};
static const struct httpreq_limits least = {1024, 1024};
#define MAX_WAIT_MS 300000

static void fail(const char *why, const char *detail)
{
        fprintf(stderr, "fuzz_http: %s%s%s\n", why, detail != NULL ? ": " : "",
                detail != NULL ? detail : "");
        abort();
}

/* What respond_error() writes for a refusal: the JSON body must exist, or
 * the client gets a 4xx with nothing to say why. */
static void answer_error(int status, int code, const char *message)
{
        json_t *body;
        char *text;

        if (status < 400 || status > 599 || message == NULL ||
            message[0] == '\0') {
                fail("a refusal without a status or a message", message);
        }
        body = apireply_error(code, message);
        if (body == NULL) {
                fail("a refusal's JSON body cannot be made", message);
        }
        text = json_dumps(body, JSON_COMPACT);
        if (text == NULL) {
                fail("a refusal's JSON body cannot be written", message);
        }
        free(text);
        json_decref(body);
}

/* The request `r` refused by httpreq_feed(): one of the statuses it
 * documents, with a reason. */
static void refused_head(const struct httpreq *r)
{
        switch (r->status) {
        case 400:
        case 405:
        case 413:
        case 431:
        case 505:
                break;
        default:
                fail("httpreq refuses with an undocumented status", r->reason);
        }
        answer_error(r->status, BATON_EMALFORMED, r->reason);
}

static void check_string(const char *s, size_t len, size_t max,
                         const char *what)
{
        if (len > max || strlen(s) != len) {
                fail("an accepted call's string is out of bounds", what);
        }
}

/* An accepted call: its fields within their limits, and its frame, when
 * it encodes, one the request core reads back. */
static void check_call(const struct api_call *call)
{
        static const uint8_t hash[ATTACH_HASH_SIZE] = {1, 2, 3};
        uint8_t frame[APIFRAME_MAX];
        struct proto_header h;
        struct command c;
        size_t n;

        check_string(call->name, call->name_len, COMMAND_NAME_MAX, "name");
        check_string(call->value, call->value_len, COMMAND_VALUE_MAX, "value");
        check_string(call->client_name, strlen(call->client_name),
                     COMMAND_CLIENT_NAME_MAX, "client_name");
        if (call->n_names > COMMAND_MULTI_MAX ||
            call->list_len > sizeof call->list ||
            (call->n_names == 0) != (call->list_len == 0)) {
                fail("an accepted multi-lock's list is out of bounds", NULL);
        }
        if (call->wait_ms > MAX_WAIT_MS) {
                fail("an accepted call waits beyond http-max-wait-ms", NULL);
        }
        if (call->needs_session && call->session == 0) {
                fail("an accepted call acts in session 0", NULL);
        }
        /* send_call(): a write's seq is the Idempotency-Key or the next
         * the node numbers (never 0). */
        n = apiframe_write(call, 1, call->seq != 0 ? call->seq : 1, 42, hash,
                           frame, sizeof frame);
        if (n == 0) {
                return; /* 400 "the request does not encode" */
        }
        if (n < PROTO_HEADER_SIZE ||
            proto_header_decode(&h, frame, PROTO_MAX_BODY) != 0 ||
            h.length != n - PROTO_HEADER_SIZE) {
                fail("an accepted call's frame has a bad header",
                     apicall_name(call->op));
        }
        if (h.type == PROTO_COMMAND &&
            command_decode(&c, frame + PROTO_HEADER_SIZE, h.length) != 0) {
                fail("an accepted call's command does not decode",
                     apicall_name(call->op));
        }
}

/* A whole request, as apiconn.c's start() takes it. */
static void start(const struct httpreq *r)
{
        struct api_refusal why;
        struct api_call call;

        memset(&why, 0xa5, sizeof why);
        if (apicall_read(r, MAX_WAIT_MS, &call, &why) != 0) {
                if (memchr(why.message, '\0', sizeof why.message) == NULL) {
                        fail("a refusal's message is not NUL-terminated", NULL);
                }
                switch (why.http) {
                case 400:
                case 401:
                case 404:
                case 405:
                        break;
                default:
                        fail("apicall refuses with an undocumented status",
                             why.message);
                }
                answer_error(why.http, why.code, why.message);
                return;
        }
        check_call(&call);
}

/* The size of the next chunk to arrive: all at once, a byte at a time, 7
 * bytes at a time, or sizes from a little generator seeded by `mode`. */
static size_t chunk(uint8_t mode, uint32_t *x)
{
        switch (mode & 3) {
        case 0:
                return SIZE_MAX;
        case 1:
                return 1;
        case 2:
                return 7;
        default:
                *x ^= *x << 13;
                *x ^= *x >> 17;
                *x ^= *x << 5;
                return 1 + *x % 64;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct httpreq r;
        const char *p;
        size_t arrived = 0, taken = 0, n, step;
        uint32_t x;
        uint8_t mode;
        long used;
        bool open = true;

        if (size == 0) {
                return 0;
        }
        mode = data[0];
        x = 0x9e3779b9u ^ mode;
        p = (const char *)data + 1;
        size--;
        httpreq_init(&r, mode & 4 ? &least : &defaults);
        while (open && arrived < size) {
                step = chunk(mode, &x);
                arrived += step < size - arrived ? step : size - arrived;
                /* pump(): read while no request is under way. */
                while (open) {
                        n = arrived - taken;
                        used = httpreq_feed(&r, p + taken, n);
                        if (used < 0) {
                                refused_head(&r);
                                open = false; /* the connection closes */
                                break;
                        }
                        if ((size_t)used > n) {
                                fail("httpreq takes more than it is given",
                                     NULL);
                        }
                        taken += (size_t)used;
                        if (r.target_len > r.limits.max_header ||
                            r.body_len > r.limits.max_body) {
                                fail("a request kept past its limits", NULL);
                        }
                        if (!r.complete) {
                                (void)httpreq_wants_continue(&r);
                                break;
                        }
                        start(&r);
                        /* An answer closes a connection whose client
                         * does not keep it (respond()). */
                        open = r.keep_alive;
                        httpreq_next(&r);
                }
        }
        httpreq_close(&r);
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "http");
}
#endif

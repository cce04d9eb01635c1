/* What the HTTP API answers: each answer frame of the request core turned
 * into an HTTP status and a JSON body, and each BATON_E* code into the
 * HTTP status that fits it, with no I/O (docs/http.md). */
#ifndef SERVER_APIREPLY_H
#define SERVER_APIREPLY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "../../proto/proto.h"
#include "../../proto/watch.h"
#include "apicall.h"

/* One answer. */
struct api_answer {
        int http;     /* the HTTP status */
        json_t *body; /* the JSON body (owned; NULL only for an SSE start) */
        /* NOT_LEADER: the leader the node knows (0: none), and its client
         * address, for the redirect or the 503. */
        bool not_leader;
        uint64_t leader_id;
        char leader_address[PROTO_ADDRESS_MAX + 1];
        bool watching; /* a watch started: the event stream begins */
        bool close;    /* an ERROR frame: the node closes the connection */
};

/* The HTTP status of a BATON_E* code: 409 held, 404 no such session or
 * lock, 410 a session over or events compacted, 403 not permitted, 503
 * no leader or outcome unknown, 429 a limit, 400 a bad argument. */
int apireply_http_status(int code);

/* The JSON error body: {"error": "BATON_E...", "code": n, "message": m}. */
json_t *apireply_error(int code, const char *message);

/*
 * The answer to `call` that the frame `h` + `body` (borrowed) gives: 0
 * with `a` filled (a->body owned by the caller), or BATON_EMALFORMED when
 * the frame is not one the call's request is answered with.
 */
int apireply_read(const struct api_call *call, const struct proto_header *h,
                  const uint8_t *body, struct api_answer *a);

/* A watch event as the JSON of its SSE `data:` line; its SSE `event:`
 * name into `*kind` (static text). */
json_t *apireply_event(const struct proto_watch_event *e, const char **kind);

#endif /* SERVER_APIREPLY_H */

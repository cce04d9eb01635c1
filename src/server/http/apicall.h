/* The HTTP API's calls: which endpoint a request names and its arguments,
 * read from the path, the query, the Baton headers and the JSON body and
 * checked against the same limits the binary protocol's codec holds them
 * to, with no I/O (docs/http.md lists every endpoint). */
#ifndef SERVER_APICALL_H
#define SERVER_APICALL_H

#include <stdbool.h>
#include <stdint.h>

#include "../../proto/attach.h"
#include "../../proto/command.h"
#include "../net/httpreq.h"

enum api_op {
        API_SESSION_OPEN = 1,
        API_SESSION_KEEPALIVE,
        API_SESSION_CLOSE,
        API_SESSION_REVOKE,
        API_LOCK_ACQUIRE,
        API_LOCK_RELEASE,
        API_LOCK_HOLDERS,
        API_LOCK_CHECK,
        API_LOCK_LIST,
        API_LOCK_REVOKE,
        API_ELECTION_CAMPAIGN,
        API_ELECTION_PROCLAIM,
        API_ELECTION_RESIGN,
        API_ELECTION_LEADER,
        API_WATCH,
        API_STATUS,
        API_SESSION_LIST, /* GET /v1/sessions: a page of live sessions */
        API_SESSION_INFO, /* GET /v1/sessions/{id}: one */
        API_LOCK_VALUE,   /* POST /v1/lock/value: a held grant's value */
        API_LOCK_EXTEND,  /* POST /v1/lock/extend: a grant's hold time */
};

/* What one request asks for; fields its op does not take are zero. */
struct api_call {
        enum api_op op;
        /* The session it acts in (Baton-Session and Baton-Secret), for
         * every op that `needs_session`. */
        uint64_t session;
        uint8_t secret[ATTACH_SECRET_SIZE];
        bool needs_session;
        /* Idempotency-Key: the request's seq in its session (0: none
         * given, the node picks the next one). */
        uint64_t seq;
        uint64_t owner;
        char name[COMMAND_NAME_MAX + 1]; /* a lock, election or prefix */
        uint8_t name_len;
        uint8_t mode; /* COMMAND_MODE_* */
        uint32_t permits;
        uint32_t limit; /* a semaphore's permits; LIST's or SESSIONS' most
                           entries */
        uint32_t wait_ms;
        uint64_t token;
        /* revoke: whose grant or session; session.list: the cursor;
         * session.info: the session */
        uint64_t target_session;
        /* Acquire, campaign: the grant's value; lock.value, proclaim: its
         * new one. */
        char value[COMMAND_VALUE_MAX + 1];
        uint8_t value_len;
        /* Acquire: the most the grant may be held, ms (0: no limit);
         * lock.extend: the hold time restarted, from 1. */
        uint32_t hold_ms;
        /* Open. */
        uint32_t ttl_ms;
        uint32_t lock_delay_ms;
        char client_name[COMMAND_CLIENT_NAME_MAX + 1];
        /* A multi-lock's names: the MULTI's list (command.h). */
        uint8_t list[COMMAND_MULTI_MAX * (2 + COMMAND_NAME_MAX)];
        uint16_t list_len;
        uint8_t n_names;
        /* Watch: a prefix rather than a name, and where it resumes. */
        bool prefix;
        uint64_t from_index;
        uint32_t from_ord;
};

/* A request refused before it reached the cluster: the HTTP status, the
 * BATON_E* code and what was wrong (for the JSON error). */
struct api_refusal {
        int http;
        int code;
        char message[160];
};

/*
 * Read the request `r` (whole, borrowed for the call) into `call`: 0, or
 * -1 with `why` filled: 404 for no such endpoint, 405 for a method the
 * endpoint does not take, 400 (BATON_EINVAL, BATON_ENAME) for a body that
 * is not a JSON object of the endpoint's fields, a field of the wrong
 * type or out of range, an unknown field or query parameter, or a
 * missing or malformed Baton-Session / Baton-Secret / Idempotency-Key.
 * `max_wait_ms` caps wait_ms (http-max-wait-ms).
 */
int apicall_read(const struct httpreq *r, uint32_t max_wait_ms,
                 struct api_call *call, struct api_refusal *why);

/* The op's name as docs/http.md writes it, e.g. "lock.acquire". */
const char *apicall_name(enum api_op op);

#endif /* SERVER_APICALL_H */

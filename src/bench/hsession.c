/* A session of Baton's HTTP API. */
#include "hsession.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"

/* One call in the session (with its Idempotency-Key when `seq` is not
 * 0): 0 with the answer in `out`, or a BATON_E* code. */
static int session_call(struct hsession *s, struct httpc_conn *c,
                        const char *path, const char *body, uint64_t seq,
                        int64_t wait_ms, char *out, size_t cap)
{
        char headers[256];
        int status, rv, n;

        n = snprintf(headers, sizeof headers,
                     "Baton-Session: %" PRIu64 "\r\nBaton-Secret: %s\r\n",
                     s->id, s->secret);
        if (seq != 0) {
                snprintf(headers + n, sizeof headers - (size_t)n,
                         "Idempotency-Key: %" PRIu64 "\r\n", seq);
        }
        rv = httpc_call(s->cl, c, "POST", path, headers, body,
                        httpc_now_ms() + wait_ms + s->timeout_ms, &status, out,
                        cap);
        if (rv != 0) {
                return rv;
        }
        return status >= 200 && status < 300 ? 0 : httpc_code(out);
}

int hsession_open(struct hsession *s, struct httpc_cluster *cl,
                  struct httpc_conn *c, uint32_t ttl_ms, uint32_t timeout_ms,
                  const char *name)
{
        char body[256], out[1024];
        const char *secret;
        int status, rv;

        memset(s, 0, sizeof *s);
        s->cl = cl;
        s->ttl_ms = ttl_ms;
        s->timeout_ms = timeout_ms;
        snprintf(body, sizeof body, "{\"ttl_ms\": %u, \"client_name\": \"%s\"}",
                 ttl_ms, name);
        rv = httpc_call(cl, c, "POST", "/v1/session", "", body,
                        httpc_now_ms() + timeout_ms, &status, out, sizeof out);
        if (rv != 0) {
                return rv;
        }
        if (status != 201) {
                return httpc_code(out);
        }
        s->id = httpc_field(out, "session");
        secret = strstr(out, "\"secret\":\"");
        if (s->id == 0 || secret == NULL) {
                return BATON_EMALFORMED;
        }
        snprintf(s->secret, sizeof s->secret, "%.32s", secret + 10);
        s->next_seq = 1;
        return 0;
}

int hsession_keepalive(struct hsession *s, struct httpc_conn *c)
{
        char out[512];

        return session_call(s, c, "/v1/session/keepalive", NULL, 0, 0, out,
                            sizeof out);
}

int hsession_acquire(struct hsession *s, struct httpc_conn *c, const char *name,
                     uint64_t owner, int64_t wait_ms, uint64_t *token)
{
        char body[512], out[1024];
        int rv;

        snprintf(body, sizeof body,
                 "{\"name\": \"%s\", \"owner\": \"%" PRIu64
                 "\", \"wait_ms\": %" PRId64 "}",
                 name, owner, wait_ms);
        rv = session_call(s, c, "/v1/lock/acquire", body, s->next_seq++,
                          wait_ms, out, sizeof out);
        if (rv == 0) {
                *token = httpc_field(out, "token");
        }
        return rv;
}

int hsession_release(struct hsession *s, struct httpc_conn *c, const char *name,
                     uint64_t owner, uint64_t token)
{
        char body[512], out[1024];

        snprintf(body, sizeof body,
                 "{\"name\": \"%s\", \"owner\": \"%" PRIu64
                 "\", \"token\": %" PRIu64 "}",
                 name, owner, token);
        return session_call(s, c, "/v1/lock/release", body, s->next_seq++, 0,
                            out, sizeof out);
}

int hsession_close(struct hsession *s, struct httpc_conn *c)
{
        char out[512];
        int rv = 0;

        if (s->id != 0) {
                rv = session_call(s, c, "/v1/session/close", NULL,
                                  s->next_seq++, 0, out, sizeof out);
                s->id = 0;
        }
        return rv;
}

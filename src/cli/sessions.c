/* batonctl session list, info and close: what the leader knows of each
 * live session, in text or JSON. */
#include "sessions.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"

static const char *mode_name(int mode)
{
        return mode == BATON_MODE_SHARED    ? "read"
               : mode == BATON_MODE_PERMITS ? "permits"
               : mode == BATON_MODE_LEADER  ? "leader"
                                            : "write";
}

/* A leader's time in ms, or null (JSON) / "?" (text) when unknown. */
static void put_ms(FILE *out, bool json, const char *key, int64_t v)
{
        if (json) {
                fprintf(out, ",\"%s\":", key);
                if (v < 0) {
                        fputs("null", out);
                } else {
                        fprintf(out, "%" PRId64, v);
                }
        } else if (v < 0) {
                fprintf(out, " %s ?", key);
        } else {
                fprintf(out, " %s %" PRId64 "ms", key, v);
        }
}

/* A wait's time: -1 (JSON null) for one without an end. */
static int64_t wait_of(const struct baton_session_hold *h)
{
        return h->wait_ms == UINT32_MAX ? -1 : (int64_t)h->wait_ms;
}

static void put_string(FILE *out, const char *key, const char *s)
{
        fprintf(out, ",\"%s\":", key);
        print_json_string(out, s);
}

/* The holds of `s` that are grants (waiting 0) or waits (waiting 1), as
 * a JSON array. */
static void put_holds_json(FILE *out, const struct baton_session *s,
                           int waiting)
{
        const char *sep = "";
        size_t i;

        for (i = 0; i < s->n_holds; i++) {
                const struct baton_session_hold *h = &s->holds[i];
                if (h->waiting != waiting) {
                        continue;
                }
                fprintf(out, "%s{", sep);
                sep = ",";
                print_json_lock(out, h->name);
                fprintf(out, ",\"owner\":%" PRIu64 ",\"mode\":\"%s\"", h->owner,
                        mode_name(h->mode));
                if (h->mode == BATON_MODE_PERMITS) {
                        fprintf(out, ",\"permits\":%" PRIu32, h->permits);
                }
                if (waiting) {
                        put_ms(out, true, "wait_ms", wait_of(h));
                        fputc('}', out);
                } else {
                        fprintf(out,
                                ",\"token\":%" PRIu64 ",\"count\":%" PRIu32 "}",
                                h->token, h->count);
                }
        }
}

static void print_session_json(FILE *out, const struct baton_session *s)
{
        fprintf(out, "{\"session\":%" PRIu64, s->id);
        put_string(out, "client_name", s->client_name);
        put_string(out, "identity", s->identity);
        put_string(out, "address", s->address);
        fprintf(out, ",\"ttl_ms\":%" PRIu32 ",\"lock_delay_ms\":%" PRIu32,
                s->ttl_ms, s->lock_delay_ms);
        put_ms(out, true, "left_ms", s->left_ms);
        put_ms(out, true, "idle_ms", s->idle_ms);
        fprintf(out,
                ",\"revoked\":%" PRIu32 ",\"grants\":%" PRIu32
                ",\"waits\":%" PRIu32 ",\"truncated\":%s,\"locks\":[",
                s->revoked, s->n_grants, s->n_waits,
                s->n_holds < (size_t)s->n_grants + s->n_waits ? "true"
                                                              : "false");
        put_holds_json(out, s, 0);
        fputs("],\"waiting\":[", out);
        put_holds_json(out, s, 1);
        fputs("]}", out);
}

/* One line of `session list`: the client name last (it may hold spaces). */
static void print_session_line(FILE *out, const struct baton_session *s)
{
        fprintf(out, "%" PRIu64 " ttl %" PRIu32 "ms", s->id, s->ttl_ms);
        put_ms(out, false, "left", s->left_ms);
        fprintf(out, " locks %" PRIu32 " waits %" PRIu32, s->n_grants,
                s->n_waits);
        if (s->address[0] != '\0') {
                fprintf(out, " address %s", s->address);
        }
        if (s->identity[0] != '\0') {
                fprintf(out, " identity %s", s->identity);
        }
        if (s->client_name[0] != '\0') {
                fprintf(out, " client %s", s->client_name);
        }
        fputc('\n', out);
}

/* A leader's time in ms as text: "8123ms", or "unknown". */
static const char *ms_text(char *buf, size_t cap, int64_t v)
{
        if (v < 0) {
                return "unknown";
        }
        snprintf(buf, cap, "%" PRId64 "ms", v);
        return buf;
}

/* `session info`: one field a line, then a line per grant and wait. */
static void print_session_text(FILE *out, const struct baton_session *s)
{
        char left[32], idle[32];
        size_t i;

        fprintf(out,
                "session %" PRIu64 "\nclient %s\nidentity %s\naddress %s\n"
                "ttl %" PRIu32 "ms\nleft %s\nlast-keepalive %s%s\n"
                "lock-delay %" PRIu32 "ms\nrevoked %" PRIu32 "\n",
                s->id, s->client_name, s->identity, s->address, s->ttl_ms,
                ms_text(left, sizeof left, s->left_ms),
                ms_text(idle, sizeof idle, s->idle_ms),
                s->idle_ms < 0 ? "" : " ago", s->lock_delay_ms, s->revoked);
        for (i = 0; i < s->n_holds; i++) {
                const struct baton_session_hold *h = &s->holds[i];
                fprintf(out, "%s %s owner %" PRIu64 " %s",
                        h->waiting ? "waits" : "holds", h->name, h->owner,
                        mode_name(h->mode));
                if (h->waiting) {
                        fprintf(out, " wait %s\n",
                                h->wait_ms == UINT32_MAX
                                    ? "forever"
                                    : ms_text(left, sizeof left, h->wait_ms));
                } else {
                        fprintf(out, " token %" PRIu64 " count %" PRIu32 "\n",
                                h->token, h->count);
                }
        }
        if (s->n_holds < (size_t)s->n_grants + s->n_waits) {
                fprintf(out, "(%zu of %" PRIu32 " grants and waits shown)\n",
                        s->n_holds, s->n_grants + s->n_waits);
        }
}

/* Exit status of a failed call: 1 for a session that is not live. */
static int failed(const struct args *o, const char *what, int rv)
{
        print_error(o->json, what, rv);
        return rv == BATON_ENOSESSION || rv == BATON_EEXPIRED ||
                       rv == BATON_ECLOSED
                   ? 1
                   : 3;
}

static int info(baton_client *c, const struct args *o)
{
        struct baton_session *s;
        int rv = baton_session_info(c, o->id, &s);

        if (rv != 0) {
                return failed(o, "session info", rv);
        }
        if (o->json) {
                print_session_json(stdout, s);
                fputc('\n', stdout);
        } else {
                print_session_text(stdout, s);
        }
        baton_sessions_free(s, 1);
        return 0;
}

/* Page through the sessions after --after, at most --limit of them (0:
 * every one); JSON: {"sessions":[...],"next":ID}, next 0 at the end. */
static int list(baton_client *c, const struct args *o)
{
        uint64_t after = o->after, next = 0;
        uint64_t left = o->limit != 0 ? o->limit : UINT64_MAX;
        const char *sep = "";

        if (o->json) {
                fputs("{\"sessions\":[", stdout);
        }
        do {
                struct baton_session *s;
                size_t n, i,
                    want = left < BATON_SESSIONS_MAX ? (size_t)left
                                                     : BATON_SESSIONS_MAX;
                int rv = baton_sessions(c, after, want, &s, &n, &next);

                if (rv != 0) {
                        if (o->json) {
                                fputs("]}\n", stdout);
                        }
                        return failed(o, "session list", rv);
                }
                for (i = 0; i < n; i++) {
                        if (o->json) {
                                fputs(sep, stdout);
                                sep = ",";
                                print_session_json(stdout, &s[i]);
                        } else {
                                print_session_line(stdout, &s[i]);
                        }
                }
                baton_sessions_free(s, n);
                left -= n;
                after = next;
        } while (next != 0 && left > 0);
        if (o->json) {
                fprintf(stdout, "],\"next\":%" PRIu64 "}\n", next);
        } else if (next != 0) {
                fprintf(stderr,
                        "batonctl: session list: more sessions follow: "
                        "--after %" PRIu64 "\n",
                        next);
        }
        return 0;
}

int cli_session(baton_client *c, const struct args *o)
{
        return o->command == ARGS_SESSION_INFO ? info(c, o) : list(c, o);
}

/* Sessions asked for one at a time, at most; more take a walk through
 * every page. */
#define ASK_EACH 8

/* Fill left[i] for each of ids[i] that is in the page `s` of `n`. */
static void fill_from(const struct baton_session *s, size_t n,
                      const uint64_t *ids, size_t n_ids, int64_t *left)
{
        for (size_t i = 0; i < n_ids; i++) {
                for (size_t j = 0; j < n; j++) {
                        if (s[j].id == ids[i]) {
                                left[i] = s[j].left_ms;
                        }
                }
        }
}

void cli_sessions_left(baton_client *c, const uint64_t *ids, size_t n,
                       int64_t *left)
{
        struct baton_session *s;
        uint64_t after = 0;
        size_t got, i, distinct = 0;

        for (i = 0; i < n; i++) {
                size_t j = 0;
                while (j < i && ids[j] != ids[i]) {
                        j++;
                }
                distinct += j == i;
                left[i] = -1;
        }
        if (distinct <= ASK_EACH) {
                for (i = 0; i < n; i++) {
                        if (left[i] < 0 &&
                            baton_session_info(c, ids[i], &s) == 0) {
                                fill_from(s, 1, ids, n, left);
                                baton_sessions_free(s, 1);
                        }
                }
                return;
        }
        do {
                if (baton_sessions(c, after, BATON_SESSIONS_MAX, &s, &got,
                                   &after) != 0) {
                        return;
                }
                fill_from(s, got, ids, n, left);
                baton_sessions_free(s, got);
        } while (after != 0);
}

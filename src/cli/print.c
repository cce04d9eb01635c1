/* batonctl's output: the same facts as text for people or JSON for scripts. */
#include "print.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/json.h"
#include "../lib/rolename.h"

/* Write `s` (n bytes) as JSON through one of the json.h writers; returns
 * what json_text() does (true for the others). */
static bool put_json(FILE *out, const char *s, size_t n, bool hex)
{
        char small[1024];
        struct wcursor w;
        char *buf;
        bool exact = true;

        wcursor_init(&w, NULL, 0);
        if (hex) {
                json_hex(&w, s, n);
        } else {
                exact = json_text(&w, s, n);
        }
        buf = w.len <= sizeof small ? small : malloc(w.len);
        if (buf == NULL) {
                fputs("null", out); /* out of memory: still valid JSON */
                return exact;
        }
        wcursor_init(&w, buf, w.len);
        if (hex) {
                json_hex(&w, s, n);
        } else {
                json_text(&w, s, n);
        }
        fwrite(buf, 1, w.len, out);
        if (buf != small) {
                free(buf);
        }
        return exact;
}

void print_json_string(FILE *out, const char *s)
{
        put_json(out, s, strlen(s), false);
}

void print_json_exact(FILE *out, const char *key, const char *s)
{
        size_t n = strlen(s);

        fprintf(out, "\"%s\":", key);
        if (!put_json(out, s, n, false)) {
                fprintf(out, ",\"%s_hex\":", key);
                put_json(out, s, n, true);
        }
}

/* "lock":NAME, and "lock_hex":HEX after it when NAME is not valid UTF-8
 * (the "lock" string then has U+FFFD for the bytes it cannot carry). */
void print_json_lock(FILE *out, const char *name)
{
        print_json_exact(out, "lock", name);
}

/* The end of a holder's text line: " client NAME" when it has one (last,
 * as a name may hold spaces). */
static void put_client_text(FILE *out, const char *client)
{
        if (client[0] != '\0') {
                fprintf(out, " client %s", client);
        }
        fputc('\n', out);
}

/* A grant's value: " value \"V\"" in text when it has one; in JSON
 * ,"value":V always ("" when none). */
static void put_value(FILE *out, bool json, const char *value)
{
        if (json || value[0] != '\0') {
                fputs(json ? ",\"value\":" : " value ", out);
                put_json(out, value, strlen(value), false);
        }
}

/* ,"client_name":NAME, always there ("" when unknown). */
static void put_client_json(FILE *out, const char *client)
{
        fputs(",\"client_name\":", out);
        put_json(out, client, strlen(client), false);
}

void print_grant(FILE *out, bool json, const char *name, uint64_t token,
                 uint64_t session, const uint8_t *secret)
{
        char hex[2 * BATON_SECRET_SIZE + 1] = "";
        size_t i;

        for (i = 0; secret != NULL && i < BATON_SECRET_SIZE; i++) {
                snprintf(hex + 2 * i, 3, "%02x", secret[i]);
        }
        if (!json) {
                if (session != 0) {
                        fprintf(out, "%s %" PRIu64 " %" PRIu64 "%s%s\n", name,
                                token, session, hex[0] != '\0' ? " " : "", hex);
                } else {
                        fprintf(out, "%s %" PRIu64 "\n", name, token);
                }
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out, ",\"token\":%" PRIu64, token);
        if (session != 0) {
                fprintf(out, ",\"session\":%" PRIu64, session);
        }
        if (hex[0] != '\0') {
                fprintf(out, ",\"secret\":\"%s\"", hex);
        }
        fputs("}\n", out);
}

/* A holder's session's time left, as the leader counts it: " left
 * 8123ms", or ,"left_ms":8123 (null when not known). */
static void put_left(FILE *out, bool json, int64_t left_ms)
{
        if (json) {
                fputs(",\"left_ms\":", out);
                if (left_ms < 0) {
                        fputs("null", out);
                } else {
                        fprintf(out, "%" PRId64, left_ms);
                }
        } else if (left_ms >= 0) {
                fprintf(out, " left %" PRId64 "ms", left_ms);
        }
}

void print_holder(FILE *out, bool json, const char *name,
                  const struct baton_holder *h, int64_t left_ms,
                  const char *value)
{
        if (!json) {
                if (!h->held && h->waiters == 0) {
                        fprintf(out, "%s free\n", name);
                        return;
                }
                if (!h->held) {
                        fprintf(out, "%s free, waiters %" PRIu32 "\n", name,
                                h->waiters);
                        return;
                }
                fprintf(out,
                        "%s held by session %" PRIu64 " owner %" PRIu64
                        " token %" PRIu64 " count %" PRIu32 " waiters %" PRIu32,
                        name, h->session, h->owner, h->token, h->count,
                        h->waiters);
                put_left(out, false, left_ms);
                put_value(out, false, value);
                put_client_text(out, h->client_name);
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out,
                ",\"held\":%s,\"session\":%" PRIu64 ",\"owner\":%" PRIu64
                ",\"token\":%" PRIu64 ",\"count\":%" PRIu32
                ",\"waiters\":%" PRIu32 ",\"index\":%" PRIu64,
                h->held ? "true" : "false", h->session, h->owner, h->token,
                h->count, h->waiters, h->index);
        put_left(out, true, h->held ? left_ms : -1);
        put_value(out, true, value);
        put_client_json(out, h->client_name);
        fputs("}\n", out);
}

/* What a grant holds: "write", "read" or "permits K of N". */
static void put_kind(FILE *out, bool json, const struct baton_grant *g)
{
        const char *mode = g->mode == BATON_MODE_SHARED    ? "read"
                           : g->mode == BATON_MODE_PERMITS ? "permits"
                           : g->mode == BATON_MODE_LEADER  ? "leader"
                                                           : "write";

        if (json) {
                fprintf(out, ",\"mode\":\"%s\"", mode);
                if (g->mode == BATON_MODE_PERMITS) {
                        fprintf(out,
                                ",\"permits\":%" PRIu32 ",\"limit\":%" PRIu32,
                                g->permits, g->limit);
                }
                return;
        }
        if (g->mode == BATON_MODE_PERMITS) {
                fprintf(out, " permits %" PRIu32 " of %" PRIu32, g->permits,
                        g->limit);
        } else {
                fprintf(out, " %s", mode);
        }
}

/* When a grant was made, as the leader's clock said: " since
 * 2026-11-26T07:10:03Z", or ,"since":"..." (nothing when not known). */
static void put_since(FILE *out, bool json, uint32_t granted_s)
{
        time_t t = (time_t)granted_s;
        struct tm tm;
        char when[32];

        if (granted_s == 0 || gmtime_r(&t, &tm) == NULL ||
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
                return;
        }
        fprintf(out, json ? ",\"since\":\"%s\"" : " since %s", when);
}

void print_leader(FILE *out, bool json, const char *name,
                  const struct baton_leader *l)
{
        if (!json) {
                if (!l->held) {
                        fprintf(out, "%s no leader\n", name);
                        return;
                }
                fprintf(out,
                        "%s led by session %" PRIu64 " owner %" PRIu64
                        " token %" PRIu64 " candidates %" PRIu32,
                        name, l->session, l->owner, l->token, l->candidates);
                put_since(out, false, l->since_s);
                fputs(" value ", out);
                put_json(out, l->value, strlen(l->value), false);
                put_client_text(out, l->client_name);
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out,
                ",\"held\":%s,\"session\":%" PRIu64 ",\"owner\":%" PRIu64
                ",\"token\":%" PRIu64 ",\"candidates\":%" PRIu32,
                l->held ? "true" : "false", l->session, l->owner, l->token,
                l->candidates);
        put_since(out, true, l->since_s);
        fputs(",\"value\":", out);
        put_json(out, l->value, strlen(l->value), false);
        put_client_json(out, l->client_name);
        fputs("}\n", out);
}

const char *print_cause_name(int cause)
{
        switch (cause) {
        case BATON_CAUSE_CLOSE:
                return "close";
        case BATON_CAUSE_EXPIRE:
                return "expire";
        case BATON_CAUSE_ACQUIRE:
                return "acquire";
        case BATON_CAUSE_RELEASE:
                return "release";
        case BATON_CAUSE_CANCEL:
                return "cancel";
        case BATON_CAUSE_TIMEOUT:
                return "timeout";
        case BATON_CAUSE_ENTRY:
                return "handover";
        case BATON_CAUSE_REVOKE:
                return "revoke";
        case BATON_CAUSE_UNBLOCK:
                return "unblock";
        case BATON_CAUSE_MULTI:
                return "multi";
        case BATON_CAUSE_REVOKE_LOCK:
                return "revoke-lock";
        case BATON_CAUSE_PROCLAIM:
                return "proclaim";
        case BATON_CAUSE_SET_VALUE:
                return "set-value";
        case BATON_CAUSE_EXPIRE_HOLD:
                return "hold-expired";
        default:
                return "other";
        }
}

void print_event(FILE *out, bool json, const struct baton_event *e)
{
        static const char *const kinds[] = {"?", "granted", "released",
                                            "proclaimed"};
        const char *kind = e->kind >= 1 && e->kind <= 3 ? kinds[e->kind] : "?";
        const char *mode = e->mode == BATON_MODE_SHARED    ? "read"
                           : e->mode == BATON_MODE_PERMITS ? "permits"
                           : e->mode == BATON_MODE_LEADER  ? "leader"
                                                           : "write";

        if (!json) {
                fprintf(out,
                        "%s %s session %" PRIu64 " owner %" PRIu64
                        " token %" PRIu64,
                        e->name, kind, e->session, e->owner, e->token);
                fprintf(out, " %s", mode);
                if (e->mode == BATON_MODE_PERMITS) {
                        fprintf(out, " %" PRIu32, e->permits);
                }
                fprintf(out, " at %" PRIu64 ":%" PRIu32 " by %s", e->index,
                        e->ord, print_cause_name(e->cause));
                if (e->mode == BATON_MODE_LEADER &&
                    e->kind != BATON_EVENT_RELEASED) {
                        fputs(" value ", out);
                        put_json(out, e->value, strlen(e->value), false);
                }
                fputc('\n', out);
                return;
        }
        fprintf(out, "{\"event\":\"%s\",", kind);
        print_json_lock(out, e->name);
        fprintf(out,
                ",\"index\":%" PRIu64 ",\"ord\":%" PRIu32
                ",\"cause\":\"%s\",\"session\":%" PRIu64 ",\"owner\":%" PRIu64
                ",\"token\":%" PRIu64,
                e->index, e->ord, print_cause_name(e->cause), e->session,
                e->owner, e->token);
        fprintf(out, ",\"mode\":\"%s\",\"permits\":%" PRIu32, mode, e->permits);
        if (e->mode == BATON_MODE_LEADER && e->kind != BATON_EVENT_RELEASED) {
                fputs(",\"value\":", out);
                put_json(out, e->value, strlen(e->value), false);
        }
        fputs("}\n", out);
}

void print_leadership(FILE *out, bool json, const char *name, uint64_t token,
                      uint64_t session, const char *value)
{
        if (!json) {
                fprintf(out, "%s token %" PRIu64 " session %" PRIu64 " value ",
                        name, token, session);
                put_json(out, value, strlen(value), false);
                fputc('\n', out);
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out,
                ",\"token\":%" PRIu64 ",\"session\":%" PRIu64 ",\"value\":",
                token, session);
        put_json(out, value, strlen(value), false);
        fputs("}\n", out);
}

void print_revoked(FILE *out, bool json, const char *name,
                   const struct baton_grant *g)
{
        if (!json) {
                fprintf(out,
                        "%s: revoked the grant of session %" PRIu64
                        " (owner %" PRIu64 " token %" PRIu64 ")",
                        name, g->session, g->owner, g->token);
                put_client_text(out, g->client_name);
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out,
                ",\"revoked_session\":%" PRIu64 ",\"owner\":%" PRIu64
                ",\"token\":%" PRIu64,
                g->session, g->owner, g->token);
        put_client_json(out, g->client_name);
        fputs("}\n", out);
}

void print_grants(FILE *out, bool json, const char *name,
                  const struct baton_grant_value *gv, const int64_t *left,
                  size_t n, bool more)
{
        size_t i;

        if (!json && n == 0) {
                fprintf(out, "%s free\n", name);
        }
        if (json) {
                fputc('{', out);
                print_json_lock(out, name);
                fprintf(out, ",\"waiters\":%" PRIu32 ",\"holders\":[",
                        n > 0 ? gv[0].grant.waiters : 0);
        }
        for (i = 0; i < n; i++) {
                const struct baton_grant *g = &gv[i].grant;
                if (json) {
                        fprintf(out,
                                "%s{\"session\":%" PRIu64 ",\"owner\":%" PRIu64
                                ",\"token\":%" PRIu64 ",\"count\":%" PRIu32,
                                i > 0 ? "," : "", g->session, g->owner,
                                g->token, g->count);
                        put_kind(out, true, g);
                        put_since(out, true, g->granted_s);
                        put_left(out, true, left[i]);
                        put_value(out, true, gv[i].value);
                        put_client_json(out, g->client_name);
                        fputc('}', out);
                        continue;
                }
                fprintf(out,
                        "%s held by session %" PRIu64 " owner %" PRIu64
                        " token %" PRIu64 " count %" PRIu32,
                        name, g->session, g->owner, g->token, g->count);
                put_kind(out, false, g);
                put_since(out, false, g->granted_s);
                fprintf(out, " waiters %" PRIu32, g->waiters);
                put_left(out, false, left[i]);
                put_value(out, false, gv[i].value);
                put_client_text(out, g->client_name);
        }
        if (json) {
                fputs("]}\n", out);
        }
        if (more) {
                fprintf(stderr,
                        "batonctl: holder: truncated after %zu grants\n", n);
        }
}

void print_list(FILE *out, bool json, const struct baton_lock_value *locks,
                size_t n, bool more)
{
        size_t i;

        if (json) {
                fputc('[', out);
        }
        for (i = 0; i < n; i++) {
                const struct baton_lock_info *l = &locks[i].lock;
                if (!json) {
                        fprintf(out,
                                "%s session %" PRIu64 " owner %" PRIu64
                                " token %" PRIu64 " count %" PRIu32
                                " waiters %" PRIu32,
                                l->name, l->session, l->owner, l->token,
                                l->count, l->waiters);
                        put_value(out, false, locks[i].value);
                        put_client_text(out, l->client_name);
                        continue;
                }
                fputs(i > 0 ? ",{" : "{", out);
                print_json_lock(out, l->name);
                fprintf(out,
                        ",\"session\":%" PRIu64 ",\"owner\":%" PRIu64
                        ",\"token\":%" PRIu64 ",\"count\":%" PRIu32
                        ",\"waiters\":%" PRIu32,
                        l->session, l->owner, l->token, l->count, l->waiters);
                put_value(out, true, locks[i].value);
                put_client_json(out, l->client_name);
                fputc('}', out);
        }
        if (json) {
                fputs("]\n", out);
        }
        if (more) {
                fprintf(stderr,
                        "batonctl: list: truncated after %zu locks; more "
                        "match (use a longer prefix)\n",
                        n);
        }
}

void print_check(FILE *out, bool json, const char *name, uint64_t token, int rv)
{
        if (!json) {
                fprintf(out, "%s %" PRIu64 " %s\n", name, token,
                        rv == 0 ? "current" : "stale");
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out, ",\"token\":%" PRIu64 ",\"current\":%s}\n", token,
                rv == 0 ? "true" : "false");
}

static const char *member_role(int role)
{
        switch (role) {
        case BATON_MEMBER_STANDBY:
                return "standby";
        case BATON_MEMBER_VOTER:
                return "voter";
        case BATON_MEMBER_SPARE:
                return "spare";
        default:
                return "unknown";
        }
}

/* A node's versions at the end of its status line: nothing when it did
 * not answer, "unknown" from a node that does not say (before 0.2.0). */
static void print_versions(FILE *out, bool json,
                           const struct baton_node_version *v)
{
        if (v == NULL) {
                return;
        }
        if (!json) {
                if (v->release[0] == '\0') {
                        fputs(" version=unknown", out);
                        return;
                }
                fprintf(out, " version=%s command=%u snapshot=%u container=%u",
                        v->release, v->command, v->snapshot, v->container);
                return;
        }
        if (v->release[0] == '\0') {
                return; /* left out, never written as "" or 0 */
        }
        fputs(",\"version\":", out);
        print_json_string(out, v->release);
        fprintf(out,
                ",\"formats\":{\"protocol\":%u,\"command\":%u,"
                "\"snapshot\":%u,\"container\":%u}",
                v->protocol, v->command, v->snapshot, v->container);
}

/* One alarm's name: "diverged", or a bit this batonctl does not know
 * as "0x4", into `buf` (16 bytes). */
static const char *alarm_name(unsigned bit, char *buf)
{
        if (bit == BATON_ALARM_DIVERGED) {
                return "diverged";
        }
        snprintf(buf, 16, "0x%x", bit);
        return buf;
}

/* A node's alarms (NULL: not asked): nothing when it has none, "unknown"
 * from a node that does not say (left out of JSON, as an unknown version
 * is). */
static void print_alarms(FILE *out, bool json,
                         const struct baton_node_alarms *a)
{
        char buf[16];
        unsigned bit, n = 0;

        if (a == NULL || (!a->known && json)) {
                return;
        }
        if (!a->known) {
                fputs(" alarms=unknown", out);
                return;
        }
        fputs(json ? ",\"alarms\":[" : "", out);
        for (bit = 1; bit != 0; bit <<= 1) {
                if (a->alarms & bit) {
                        fprintf(out, json ? "%s\"%s\"" : "%s%s",
                                n++ > 0 ? "," : (json ? "" : " alarms="),
                                alarm_name(bit, buf));
                }
        }
        fputs(json ? "]" : "", out);
        if (!(a->alarms & BATON_ALARM_DIVERGED)) {
                return;
        }
        fprintf(out,
                json ? ",\"diverged\":{\"index\":%" PRIu64
                       ",\"digest\":\"%016" PRIx64
                       "\",\"leader_digest\":\"%016" PRIx64 "\"}"
                     : " diverged_index=%" PRIu64 " digest=%016" PRIx64
                       " leader_digest=%016" PRIx64,
                a->diverged_index, a->digest, a->leader_digest);
}

void print_status(FILE *out, bool json, const struct baton_status *st,
                  const struct baton_node_version *v,
                  const struct baton_node_alarms *a, bool first, bool last)
{
        if (!json) {
                fprintf(out,
                        "%-21s id=%" PRIu64 " role=%s term=%" PRIu64
                        " leader=%" PRIu64 " commit=%" PRIu64
                        " applied=%" PRIu64 " sessions=%" PRIu64
                        " locks=%" PRIu64 " waiters=%" PRIu64,
                        st->endpoint, st->id, role_name(st->role), st->term,
                        st->leader_id, st->commit_index, st->applied_index,
                        st->sessions, st->locks, st->waiters);
                print_versions(out, false, v);
                print_alarms(out, false, a);
                fputc('\n', out);
                return;
        }
        fputs(first ? "[" : ",", out);
        fputs("{\"endpoint\":", out);
        print_json_string(out, st->endpoint);
        fprintf(out,
                ",\"id\":%" PRIu64 ",\"role\":\"%s\",\"term\":%" PRIu64
                ",\"leader\":%" PRIu64 ",\"commit\":%" PRIu64
                ",\"applied\":%" PRIu64 ",\"last\":%" PRIu64
                ",\"sessions\":%" PRIu64 ",\"locks\":%" PRIu64
                ",\"waiters\":%" PRIu64,
                st->id, role_name(st->role), st->term, st->leader_id,
                st->commit_index, st->applied_index, st->last_index,
                st->sessions, st->locks, st->waiters);
        print_versions(out, true, v);
        print_alarms(out, true, a);
        fputc('}', out);
        if (last) {
                fputs("]\n", out);
        }
}

void print_status_error(FILE *out, bool json, const struct baton_status *st,
                        int rv, bool first, bool last)
{
        /* Read before anything else is called: the detail is the calling
         * thread's last failure's. */
        const char *detail = baton_errmsg(rv);

        if (!json) {
                fprintf(out, "%-21s error: %s\n", st->endpoint, detail);
                return;
        }
        fputs(first ? "[" : ",", out);
        fputs("{\"endpoint\":", out);
        print_json_string(out, st->endpoint);
        fputs(",\"error\":", out);
        print_json_string(out, baton_strerror(rv));
        fprintf(out, ",\"code\":%d,\"name\":\"%s\",\"detail\":", rv,
                baton_errname(rv));
        print_json_string(out, detail);
        fputc('}', out);
        if (last) {
                fputs("]\n", out);
        }
}

void print_members(FILE *out, bool json, const struct baton_status *st)
{
        unsigned i;

        if (json) {
                fputc('[', out);
        }
        for (i = 0; i < st->n_members; i++) {
                const struct baton_member *m = &st->members[i];
                if (!json) {
                        fprintf(out, "%" PRIu64 " %s raft=%s client=%s%s\n",
                                m->id, member_role(m->role), m->raft_address,
                                m->client_address,
                                m->id == st->leader_id ? " leader" : "");
                        continue;
                }
                fprintf(out, "%s{\"id\":%" PRIu64 ",\"role\":\"%s\",",
                        i > 0 ? "," : "", m->id, member_role(m->role));
                fputs("\"raft\":", out);
                print_json_string(out, m->raft_address);
                fputs(",\"client\":", out);
                print_json_string(out, m->client_address);
                fprintf(out, ",\"leader\":%s}",
                        m->id == st->leader_id ? "true" : "false");
        }
        if (json) {
                fputs("]\n", out);
        }
}

void print_error(bool json, const char *what, int rv)
{
        /* libbaton's detail of the failure, where it knows more than the
         * code says (the endpoint and the system's reason, the range the
         * cluster accepts, a file's path); baton_strerror() otherwise. */
        const char *detail = baton_errmsg(rv);

        if (!json) {
                fprintf(stderr, "batonctl: %s: %s\n", what, detail);
                return;
        }
        fputs("{\"error\":", stdout);
        print_json_string(stdout, baton_strerror(rv));
        fprintf(stdout, ",\"code\":%d,\"name\":\"%s\",\"during\":", rv,
                baton_errname(rv));
        print_json_string(stdout, what);
        if (strcmp(detail, baton_strerror(rv)) != 0) {
                fputs(",\"detail\":", stdout);
                print_json_string(stdout, detail);
        }
        fputs("}\n", stdout);
}

void print_backup(FILE *out, bool json, const char *path,
                  const struct baton_backup_info *b)
{
        char when[32] = "";
        time_t t = (time_t)(b->made_ms / 1000);
        struct tm tm;

        if (gmtime_r(&t, &tm) != NULL) {
                strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        }
        if (!json) {
                fprintf(out,
                        "%s: index %" PRIu64 " term %" PRIu64 " taken %s"
                        " sessions %" PRIu64 " locks %" PRIu64
                        " grants %" PRIu64 " waiters %" PRIu64 " bytes %" PRIu64
                        " tokens up to %" PRIu64 "\n",
                        path, b->index, b->term, when, b->sessions, b->locks,
                        b->grants, b->waiters, b->size, b->index);
                return;
        }
        fputs("{\"file\":", out);
        put_json(out, path, strlen(path), false);
        fprintf(out,
                ",\"index\":%" PRIu64 ",\"term\":%" PRIu64
                ",\"taken_ms\":%" PRIu64 ",\"taken\":\"%s\""
                ",\"sessions\":%" PRIu64 ",\"locks\":%" PRIu64
                ",\"grants\":%" PRIu64 ",\"waiters\":%" PRIu64
                ",\"bytes\":%" PRIu64 ",\"max_token\":%" PRIu64 "}\n",
                b->index, b->term, b->made_ms, when, b->sessions, b->locks,
                b->grants, b->waiters, b->size, b->index);
}

void print_member_added(FILE *out, bool json, uint64_t id)
{
        if (!json) {
                fprintf(out, "member %" PRIu64 " added as voter\n", id);
                return;
        }
        fprintf(out, "{\"member\":%" PRIu64 ",\"role\":\"voter\"}\n", id);
}

void print_member_removed(FILE *out, bool json, uint64_t id)
{
        if (!json) {
                fprintf(out, "member %" PRIu64 " removed\n", id);
                return;
        }
        fprintf(out, "{\"member\":%" PRIu64 ",\"removed\":true}\n", id);
}

void print_transferred(FILE *out, bool json, uint64_t asked, uint64_t from,
                       uint64_t to)
{
        if (json) {
                fprintf(out,
                        "{\"asked\":%" PRIu64 ",\"from\":%" PRIu64
                        ",\"to\":%" PRIu64 "}\n",
                        asked, from, to);
        } else if (from == 0) {
                fputs("leadership transfer started (the node does not say "
                      "where leadership went)\n",
                      out);
        } else if (to == 0) {
                fprintf(out,
                        "leadership left %" PRIu64 "; no leader known yet\n",
                        from);
        } else if (asked != 0 && to != asked) {
                fprintf(out,
                        "leadership transferred from %" PRIu64 " to %" PRIu64
                        ", not to %" PRIu64 "\n",
                        from, to, asked);
        } else {
                fprintf(out,
                        "leadership transferred from %" PRIu64 " to %" PRIu64
                        "\n",
                        from, to);
        }
}

void print_session_closed(FILE *out, bool json, uint64_t session)
{
        if (!json) {
                fprintf(out, "session %" PRIu64 " closed\n", session);
                return;
        }
        fprintf(out, "{\"session\":%" PRIu64 ",\"closed\":true}\n", session);
}

static const char *access_name(int role)
{
        static const char *const names[] = {"none", "read", "lock", "admin"};

        return role >= 0 && role < 4 ? names[role] : "unknown";
}

void print_acl(FILE *out, bool json, const struct baton_acl *acl)
{
        unsigned i;

        if (!json) {
                if (!acl->seeded) {
                        fputs("# the cluster has no access list yet: the "
                              "leader's config decides until it is seeded\n",
                              out);
                }
                fprintf(out, "default-role = %s\n",
                        access_name(acl->default_role));
                for (i = 0; i < acl->n_rules; i++) {
                        fprintf(out, "role = %s %s\n", acl->rules[i].identity,
                                access_name(acl->rules[i].role));
                }
                return;
        }
        fprintf(out, "{\"seeded\":%s,\"default_role\":\"%s\",\"rules\":[",
                acl->seeded ? "true" : "false", access_name(acl->default_role));
        for (i = 0; i < acl->n_rules; i++) {
                fputs(i > 0 ? ",{\"identity\":" : "{\"identity\":", out);
                print_json_string(out, acl->rules[i].identity);
                fprintf(out, ",\"role\":\"%s\"}",
                        access_name(acl->rules[i].role));
        }
        fputs("]}\n", out);
}

void print_acl_changed(FILE *out, bool json, const char *identity, int role)
{
        if (json) {
                fputs("{\"identity\":", out);
                print_json_string(out, identity);
                if (role < 0) {
                        fputs(",\"removed\":true}\n", out);
                } else {
                        fprintf(out, ",\"role\":\"%s\"}\n", access_name(role));
                }
        } else if (role < 0) {
                fprintf(out, "acl: %s removed\n", identity);
        } else {
                fprintf(out, "acl: %s is %s\n", identity, access_name(role));
        }
}

void print_value_set(FILE *out, bool json, const char *name, uint64_t token,
                     const char *value)
{
        if (!json) {
                fprintf(out, "%s token %" PRIu64 " value ", name, token);
                put_json(out, value, strlen(value), false);
                fputc('\n', out);
                return;
        }
        fputc('{', out);
        print_json_lock(out, name);
        fprintf(out, ",\"token\":%" PRIu64, token);
        put_value(out, true, value);
        fputs("}\n", out);
}

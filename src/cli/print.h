/* batonctl's output: the same facts as text for people or JSON for scripts. */
#ifndef CLI_PRINT_H
#define CLI_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../include/baton.h"

/* The name of a watch event's cause (enum baton_cause), as `watch`
 * prints it and the console sends it: "acquire", "expire", "handover"... */
const char *print_cause_name(int cause);

/* Print `s` as a JSON string of UTF-8 text (json_text(): bytes that are not
 * valid UTF-8 become U+FFFD). With --json, an object that names a lock has
 * its name in "lock", and, when the name is not valid UTF-8, its exact
 * bytes in hex in "lock_hex". */
void print_json_string(FILE *out, const char *s);
/* "lock":NAME, and "lock_hex":HEX after it when NAME is not valid UTF-8
 * (the "lock" string then has U+FFFD for the bytes it cannot carry). */
void print_json_lock(FILE *out, const char *name);
/* The same for any field: "KEY":S, then "KEY_hex":HEX when `s` is not
 * valid UTF-8. */
void print_json_exact(FILE *out, const char *key, const char *s);

/* A grant; a `session` other than 0 (a detached acquire) is shown too,
 * and a `secret` (BATON_SECRET_SIZE bytes; may be NULL), in hex, after
 * it. */
void print_grant(FILE *out, bool json, const char *name, uint64_t token,
                 uint64_t session, const uint8_t *secret);
/* holder: "NAME held by session S ... waiters W left Lms [value "V"]
 * client C" (left out: `left_ms` < 0, not known; the value: `value` "",
 * none), or a JSON object with "left_ms" and "value". */
void print_holder(FILE *out, bool json, const char *name,
                  const struct baton_holder *h, int64_t left_ms,
                  const char *value);
/* Who leads an election: "NAME led by session S owner O token T
 * candidates N [since TIME] value "V" [client C]", or "NAME no leader";
 * or one JSON object. */
void print_leader(FILE *out, bool json, const char *name,
                  const struct baton_leader *l);
/* What a backup holds (snapshot save, snapshot inspect): one line or one
 * JSON object. Every token handed out up to it is at most its index. */
void print_backup(FILE *out, bool json, const char *path,
                  const struct baton_backup_info *b);
/* One leadership as observe prints it: "NAME token T session S value
 * "V"", or one JSON object. */
void print_leadership(FILE *out, bool json, const char *name, uint64_t token,
                      uint64_t session, const char *value);
/* One event of a watch: "NAME granted session S owner O token T MODE at
 * INDEX:ORD by CAUSE [value "V"]", or one JSON object. */
void print_event(FILE *out, bool json, const struct baton_event *e);
/* revoke: the session of grant `g` of `name` ended. */
void print_revoked(FILE *out, bool json, const char *name,
                   const struct baton_grant *g);
/* holder --all: every grant of `name`, one line each ("NAME free" when
 * none), or a JSON object with the waiters and an array of grants; each
 * with its session's time left, left[i] (< 0: not known), and its value
 * (text: when it has one). */
void print_grants(FILE *out, bool json, const char *name,
                  const struct baton_grant_value *g, const int64_t *left,
                  size_t n, bool more);
/* A grant's value changed (set-value): "NAME token T value "V"" (""
 * when cleared), or one JSON object. */
void print_value_set(FILE *out, bool json, const char *name, uint64_t token,
                     const char *value);
/* LIST's answer: one line per lock (with " value "V"" when its grant
 * has one), or a JSON array (with "value" always); `more` adds a note on
 * stderr that the listing was cut short. */
void print_list(FILE *out, bool json, const struct baton_lock_value *locks,
                size_t n, bool more);
void print_check(FILE *out, bool json, const char *name, uint64_t token,
                 int rv);
/* One node's status, versions and alarms (each NULL: not asked); `first`
 * and `last` frame a JSON array. */
void print_status(FILE *out, bool json, const struct baton_status *st,
                  const struct baton_node_version *v,
                  const struct baton_node_alarms *a, bool first, bool last);
/* A node that could not be asked, in its place among print_status()'s
 * lines: its endpoint (st->endpoint) and libbaton's reason for failure
 * `rv` ("error: cannot connect to 127.0.0.1:7102: connection refused"),
 * or one JSON object with "error", "code", "name" and "detail". */
void print_status_error(FILE *out, bool json, const struct baton_status *st,
                        int rv, bool first, bool last);
void print_members(FILE *out, bool json, const struct baton_status *st);
/* An error as text on stderr, or as JSON on stdout. */
void print_error(bool json, const char *what, int rv);

/* What a change did, one line or one JSON object each: "member ID added
 * as voter", "member ID removed", "session ID closed". */
/* The access list: `default-role = ROLE`, then `role = IDENTITY ROLE` a
 * rule, as a config file says them (a comment first while the cluster
 * has none yet); or one JSON object. */
void print_acl(FILE *out, bool json, const struct baton_acl *acl);
/* One line: `IDENTITY` set to `role`, or removed (role -1). */
void print_acl_changed(FILE *out, bool json, const char *identity, int role);
void print_member_added(FILE *out, bool json, uint64_t id);
void print_member_removed(FILE *out, bool json, uint64_t id);
void print_session_closed(FILE *out, bool json, uint64_t session);
/* Where leadership went, asked to go to `asked` (0: any): "leadership
 * transferred from FROM to TO" (", not to ASKED" when another won),
 * "leadership left FROM; no leader known yet" (`to` 0), or, from a node
 * that does not say (`from` 0), that it started. */
void print_transferred(FILE *out, bool json, uint64_t asked, uint64_t from,
                       uint64_t to);

#endif /* CLI_PRINT_H */

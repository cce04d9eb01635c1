/* The request core's lines of the audit trail (base/audit.h): each
 * administrator's request it answers and each request it refuses for want
 * of permission, with who sent it, written by its host
 * (gateway_host.audit). */
#ifndef SERVER_GWAUDIT_H
#define SERVER_GWAUDIT_H

#include <stdint.h>

#include "../../proto/command.h"
#include "../../proto/aclwire.h"
#include "../../proto/proto.h"
#include "../base/audit.h"
#include "../config/settings.h"
#include "gwconn.h"

struct gateway;

/* Bytes of a client's ip:port and its NUL ("[ipv6]:port" included). */
#define GWAUDIT_ADDRESS_MAX 64

/* Who sent a request, copied at its arrival: an administrator's request
 * may be answered after its connection is gone, and its line still names
 * who asked. */
struct gwaudit_who {
        char identity[CONFIG_IDENTITY_MAX];
        char address[GWAUDIT_ADDRESS_MAX];
};

/* Copy who `c` (borrowed for the call) is into `w`. */
void gwaudit_who_init(struct gwaudit_who *w, const struct gateway_conn *c);

/* The same on the heap, for a record that keeps it only when it is an
 * administrator's (a REVOKE's pending.h record): free() it; NULL when
 * out of memory (its line then names no one). */
struct gwaudit_who *gwaudit_who_new(const struct gateway_conn *c);

/* One line: `e` (borrowed), sent by `w` (NULL: no one known); e's
 * identity and address are set from it. */
void gwaudit_as(struct gateway *g, const struct gwaudit_who *w,
                struct audit_event *e);

/* The same for a request of `c` (borrowed for the call: a connection of
 * the current input; NULL: its client left), who sent it. */
void gwaudit(struct gateway *g, const struct gateway_conn *c,
             struct audit_event *e);

/* A line about a request `action` of `c` (as gwaudit()) whose target is
 * `id` (a session, a member), answered `result`; `detail` may be NULL. */
void gwaudit_id(struct gateway *g, const struct gateway_conn *c,
                const char *action, uint64_t id, int result,
                const char *detail);

/* A line about `cmd` (a REVOKE, REVOKE_LOCK, or a command refused) sent
 * by `w`, or when that is NULL by `c` (NULL too: no one known): action
 * its type, target the name it acts on, else its session; `detail`, or
 * when that is NULL, for a REVOKE_LOCK, the grant's session and token. */
void gwaudit_command(struct gateway *g, const struct gateway_conn *c,
                     const struct gwaudit_who *w, const struct command *cmd,
                     int result, const char *detail);

/* The room of an ACL line's detail: a rule's kind, permissions and
 * quoted prefix. */
#define GWAUDIT_RULE_DETAIL_MAX (48 + 255)

/* The line of the ACL request `r` (borrowed), answered `result`, from `w`
 * or `c` as gwaudit_command() says: target the identity (a rule's
 * subject), detail a SET's role, or a rule's kind ("group; "),
 * permissions and prefix. */
void gwaudit_acl(struct gateway *g, const struct gateway_conn *c,
                 const struct gwaudit_who *w, const struct proto_acl_request *r,
                 int result);

/*
 * A request frame of `c` refused BATON_EPERM because of `why` (its role,
 * say): its line, with the action and target read from the frame as far
 * as it parses (`body`, h->length bytes, borrowed): a command's type and
 * name, an ACL request's op and identity, a member's id; else the frame's
 * type and no target.
 */
void gwaudit_refused(struct gateway *g, const struct gateway_conn *c,
                     const struct proto_header *h, const uint8_t *body,
                     const char *why);

#endif /* SERVER_GWAUDIT_H */

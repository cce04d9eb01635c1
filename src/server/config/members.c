/* The member list of batond's configuration: addresses, and the list as a
 * whole. */
#include "members.h"

#include <stdio.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../lib/address.h"

/* "host:port" or "[ipv6]:port", by the one parser of src/lib/address.c.
 * A raft address is not IPv6: libraft 0.22.1's transport fails to start
 * on "[ipv6]:port" (it takes IPv4 and names that resolve to IPv4). */
int members_parse_address(const char *s, bool raft, char *msg, size_t size)
{
        struct address a;

        if (address_parse(s, &a) != 0) {
                return settings_fail(msg, size, "'%s': %s (expected %s)", s,
                                     a.errmsg, ADDRESS_FORMS);
        }
        if (raft && a.kind == ADDRESS_IPV6) {
                return settings_fail(
                    msg, size,
                    "'%s': libraft 0.22.1 cannot use an IPv6 raft "
                    "address (expected a.b.c.d:port or host:port)",
                    s);
        }
        return 0;
}

/* Both addresses of a member, named in the message. */
int members_parse_pair(const char *raft, const char *client, char *msg,
                       size_t size)
{
        char detail[CONFIG_ERRMSG_MAX];

        if (members_parse_address(raft, true, detail, sizeof detail) != 0) {
                return settings_fail(msg, size, "raft address %s", detail);
        }
        if (members_parse_address(client, false, detail, sizeof detail) != 0) {
                return settings_fail(msg, size, "client address %s", detail);
        }
        return 0;
}

int members_check(const struct config *c, char *errmsg, size_t errmsg_size)
{
        const char *addrs[3 * CONFIG_MAX_MEMBERS + 1];
        char msg[CONFIG_ERRMSG_MAX];
        unsigned n = 0;
        unsigned i;
        unsigned j;

        if (c->n_members == 0) {
                return settings_fail(errmsg, errmsg_size,
                                     "member: none listed (one 'member = ID "
                                     "RAFT_ADDRESS CLIENT_ADDRESS' per node)");
        }
        if (c->n_members > CONFIG_MAX_MEMBERS) {
                return settings_fail(errmsg, errmsg_size,
                                     "member: too many members (at most %d)",
                                     CONFIG_MAX_MEMBERS);
        }
        for (i = 0; i < c->n_members; i++) {
                const struct config_member *m = &c->members[i];
                if (m->id == 0) {
                        return settings_fail(errmsg, errmsg_size,
                                             "member: id 0 (ids start at 1)");
                }
                for (j = 0; j < i; j++) {
                        if (c->members[j].id == m->id) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "member: duplicate id %llu",
                                    (unsigned long long)m->id);
                        }
                }
                if (memchr(m->raft_address, '\0', CONFIG_ADDRESS_MAX) == NULL ||
                    memchr(m->client_address, '\0', CONFIG_ADDRESS_MAX) ==
                        NULL) {
                        return settings_fail(
                            errmsg, errmsg_size,
                            "member %llu: address not NUL-terminated",
                            (unsigned long long)m->id);
                }
                if (members_parse_pair(m->raft_address, m->client_address, msg,
                                       sizeof msg) != 0) {
                        return settings_fail(errmsg, errmsg_size,
                                             "member %llu: %s",
                                             (unsigned long long)m->id, msg);
                }
                addrs[n++] = m->raft_address;
                addrs[n++] = m->client_address;
                if (m->http_address[0] != '\0') {
                        addrs[n++] = m->http_address;
                }
        }
        for (i = 0; i < n; i++) {
                for (j = 0; j < i; j++) {
                        if (strcmp(addrs[i], addrs[j]) == 0) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "member: address %s is used "
                                    "twice",
                                    addrs[i]);
                        }
                }
        }
        if (c->metrics_address[0] != '\0') {
                for (i = 0; i < n; i++) {
                        if (strcmp(c->metrics_address, addrs[i]) == 0) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "metrics-address: %s is also a "
                                    "member's address",
                                    addrs[i]);
                        }
                }
        }
        if (settings_member(c, c->id) == NULL) {
                return settings_fail(errmsg, errmsg_size,
                                     "id: %llu is not one of the members",
                                     (unsigned long long)c->id);
        }
        return 0;
}

/* Append one "ID RAFT CLIENT" entry to the member list. */
int members_add(struct config *c, const char *value, char *msg, size_t size)
{
        char buf[256];
        char *fields[4];
        char *p;
        char detail[CONFIG_ERRMSG_MAX];
        struct config_member *m;
        uint64_t id;
        unsigned n = 0;

        if (strlen(value) >= sizeof buf) {
                return settings_fail(msg, size, "line too long");
        }
        strcpy(buf, value);
        p = buf;
        while (n < 4) {
                p += strspn(p, " \t");
                if (*p == '\0') {
                        break;
                }
                fields[n++] = p;
                p += strcspn(p, " \t");
                if (*p != '\0') {
                        *p++ = '\0';
                }
        }
        p += strspn(p, " \t");
        if (n < 3 || *p != '\0') {
                return settings_fail(msg, size,
                                     "expected 'ID RAFT_ADDRESS CLIENT_ADDRESS "
                                     "[HTTP_ADDRESS]', got '%s'",
                                     value);
        }
        if (n == 4 && members_parse_address(fields[3], false, detail,
                                            sizeof detail) != 0) {
                return settings_fail(msg, size, "HTTP address: %s", detail);
        }
        if (settings_number(fields[0], 1, UINT64_MAX, &id, detail,
                            sizeof detail) != 0) {
                return settings_fail(msg, size, "id %s", detail);
        }
        if (members_parse_pair(fields[1], fields[2], msg, size) != 0) {
                return BATON_EINVAL;
        }
        if (settings_member(c, id) != NULL) {
                return settings_fail(msg, size, "duplicate id %llu",
                                     (unsigned long long)id);
        }
        if (c->n_members >= CONFIG_MAX_MEMBERS) {
                return settings_fail(msg, size, "too many members (at most %d)",
                                     CONFIG_MAX_MEMBERS);
        }
        m = &c->members[c->n_members++];
        memset(m, 0, sizeof *m);
        m->id = id;
        strcpy(m->raft_address, fields[1]);
        strcpy(m->client_address, fields[2]);
        if (n == 4) {
                strcpy(m->http_address, fields[3]);
        }
        return 0;
}

/* Whether listeners on `a` and `b` (both parse) would take the same port:
 * the same address, or the same port with a wildcard on one side (an IPv4
 * wildcard and an IPv6 address apart: they are separate sockets). */
static bool clash(const char *a, const char *b)
{
        struct address x, y;

        if (address_parse(a, &x) != 0 || address_parse(b, &y) != 0 ||
            x.port != y.port) {
                return false;
        }
        if (strcmp(x.host, y.host) == 0 || strcmp(x.host, "::") == 0 ||
            strcmp(y.host, "::") == 0) {
                return true;
        }
        return (strcmp(x.host, "0.0.0.0") == 0 && y.kind != ADDRESS_IPV6) ||
               (strcmp(y.host, "0.0.0.0") == 0 && x.kind != ADDRESS_IPV6);
}

int members_listen(struct config *c, char *errmsg, size_t errmsg_size)
{
        const struct config_member *self = settings_member(c, c->id);
        const char *name[] = {"raft-listen", "client-listen", "metrics-address",
                              "http-listen"};
        const char *how[] = {"", "", "", ""};
        const char *addr[4];
        unsigned i, j;

        if (self == NULL) {
                return settings_fail(errmsg, errmsg_size,
                                     "id: %llu is not one of the members",
                                     (unsigned long long)c->id);
        }
        if (c->raft_listen[0] == '\0') {
                memcpy(c->raft_listen, self->raft_address, CONFIG_ADDRESS_MAX);
                how[0] = " (the member line's)";
        }
        if (c->client_listen[0] == '\0') {
                memcpy(c->client_listen, self->client_address,
                       CONFIG_ADDRESS_MAX);
                how[1] = " (the member line's)";
        }
        addr[0] = c->raft_listen;
        addr[1] = c->client_listen;
        addr[2] = c->metrics_address;
        addr[3] = c->http_listen;
        for (i = 0; i < 4; i++) {
                for (j = 0; j < i; j++) {
                        if (addr[i][0] != '\0' && clash(addr[i], addr[j])) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "%s: %s%s takes the port of %s %s%s",
                                    name[i], addr[i], how[i], name[j], addr[j],
                                    how[j]);
                        }
                }
        }
        return 0;
}

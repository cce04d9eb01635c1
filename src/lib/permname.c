/* Permissions on lock names by name. */
#include "permname.h"

#include <stdio.h>
#include <string.h>

#include "../../include/baton/admin.h"

static const char *const names[] = {"read", "lock", "manage"};

const char *permname_bit(int bit)
{
        switch (bit) {
        case BATON_PERM_READ:
                return names[0];
        case BATON_PERM_LOCK:
                return names[1];
        case BATON_PERM_MANAGE:
                return names[2];
        default:
                return NULL;
        }
}

const char *permname_format(int perms, char *buf, size_t size)
{
        size_t at = 0;
        unsigned i;

        if (size == 0) {
                return buf;
        }
        buf[0] = '\0';
        /* Read goes without saying beside lock or manage. */
        if ((perms & (BATON_PERM_LOCK | BATON_PERM_MANAGE)) != 0) {
                perms &= ~BATON_PERM_READ;
        }
        for (i = 0; i < 3; i++) {
                if ((perms & (1 << i)) != 0 && at < size) {
                        int n = snprintf(buf + at, size - at, "%s%s",
                                         at > 0 ? "," : "", names[i]);
                        at += n > 0 ? (size_t)n : 0;
                }
        }
        return buf;
}

int permname_parse(const char *text, int *perms)
{
        const char *p = text;
        int got = 0;

        if (text == NULL || text[0] == '\0') {
                return -1;
        }
        for (;;) {
                size_t len = strcspn(p, ",");
                unsigned i;

                for (i = 0; i < 3; i++) {
                        if (len == strlen(names[i]) &&
                            memcmp(p, names[i], len) == 0) {
                                break;
                        }
                }
                if (i == 3) {
                        return -1; /* also an empty item: ",", "lock," */
                }
                got |= 1 << i;
                if (p[len] == '\0') {
                        break;
                }
                p += len + 1;
        }
        if ((got & (BATON_PERM_LOCK | BATON_PERM_MANAGE)) != 0) {
                got |= BATON_PERM_READ;
        }
        *perms = got;
        return 0;
}

void permname_refused(char *buf, size_t size, int perm, const char *name,
                      size_t len, bool prefix)
{
        const char *what = permname_bit(perm);
        int shown = len > 64 ? 64 : (int)len;

        if (name == NULL) {
                snprintf(buf, size,
                         "permission denied: no rule gives this client's "
                         "identity or groups %s on one of its names (batonctl "
                         "rule list shows the rules)",
                         what != NULL ? what : "access");
                return;
        }
        snprintf(buf, size,
                 "permission denied: no rule gives this client's identity "
                 "or groups %s on %s\"%.*s%s\" (batonctl rule list shows the "
                 "rules)",
                 what != NULL ? what : "access", prefix ? "names under " : "",
                 shown, name, len > 64 ? "..." : "");
}

/* The I/O side of a handle's link. */
#include "linkio.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "reach.h"
#include "../tls/tls.h"

void linkio_why_errno(char *why, size_t size, int err, const char *more)
{
        snprintf(why, size, "%s%s", strerror(err), more);
        if (why[0] >= 'A' && why[0] <= 'Z') {
                why[0] = (char)(why[0] - 'A' + 'a');
        }
}

void linkio_why_connect(char *why, size_t size, int err, int connect_ms)
{
        if (err == ETIMEDOUT) {
                snprintf(why, size, "timed out: no connection within %d ms",
                         connect_ms);
        } else if (err == EHOSTUNREACH || err == ENETUNREACH || err == EACCES ||
                   err == EPERM) {
                char sys[REACH_WHY_MAX];
                linkio_why_errno(sys, sizeof sys, err, "");
                snprintf(why, size, "unreachable: %s", sys);
        } else {
                linkio_why_errno(why, size, err, "");
        }
}

void linkio_why_tls(char *why, size_t size, const struct tls_conn *t)
{
        bool about_cert = false;
        const char *alert = tls_peer_alert(t, &about_cert);

        if (tls_verify_error(t)[0] != '\0') {
                snprintf(why, size,
                         "TLS: the node's certificate is refused here: %s",
                         tls_verify_error(t));
        } else if (about_cert) {
                snprintf(why, size,
                         "TLS: the node refused this client's certificate: "
                         "TLS alert %s",
                         alert);
        } else if (alert[0] != '\0') {
                snprintf(why, size,
                         "TLS: the node ended the handshake: TLS alert %s",
                         alert);
        } else {
                snprintf(why, size, "TLS: %s", tls_errmsg(t));
        }
}

/* A node of its own for the tests of connection failures: a one-node
 * cluster whose node starts with the flags of a mistake (TLS off, another
 * host's certificate), waited for until its client port listens; and the
 * ports such a test dials: one nothing listens on, and whether one
 * listens. */
#include "lonenode.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/tclient.h"

#define POLL_MS 20 /* between two looks at the client port */

int lonenode_start(struct harness *h, const char *const *flags, unsigned n,
                   const char *argv0, int timeout_ms)
{
        unsigned leader;
        int64_t until;

        if (harness_start(h, 1, NULL, argv0, 0) != 0 ||
            harness_wait_leader(h, timeout_ms, &leader) != 0 ||
            harness_term(h, 1, NULL) != 0 ||
            harness_wait_exit(h, 1, timeout_ms, NULL) != 0 ||
            harness_set_flags(h, 1, flags, n) != 0 ||
            harness_restart(h, 1) != 0) {
                return -1;
        }
        for (until = tclient_now_ms() + timeout_ms;
             !lonenode_listening(h->endpoints); tclient_sleep_ms(POLL_MS)) {
                if (tclient_now_ms() > until) {
                        snprintf(h->errmsg, sizeof h->errmsg,
                                 "the node does not listen on %s",
                                 h->endpoints);
                        return -1;
                }
        }
        return 0;
}

unsigned lonenode_free_port(void)
{
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        unsigned port = 0;

        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
            getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
                port = ntohs(sa.sin_port);
        }
        if (fd >= 0) {
                close(fd);
        }
        return port;
}

bool lonenode_listening(const char *endpoint)
{
        const char *colon = strrchr(endpoint, ':');
        struct sockaddr_in sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        bool up;

        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons((uint16_t)atoi(colon != NULL ? colon + 1 : "0"));
        up = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (fd >= 0) {
                close(fd);
        }
        return up;
}

/* Turning an endpoint of libbaton into socket addresses to connect to. */
#include "resolve.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "../../include/baton.h"
#include "../lib/address.h"

int resolve_check(const char *endpoint)
{
        struct address a;

        return address_parse(endpoint, &a);
}

int resolve_endpoint(const char *endpoint, struct addrinfo **out, char *why,
                     size_t size)
{
        struct address a;
        struct addrinfo hints;
        int rv;

        *out = NULL;
        if (address_parse(endpoint, &a) != 0) {
                snprintf(why, size, "not host:port or [ipv6]:port");
                return BATON_EINVAL;
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        if (a.kind != ADDRESS_NAME) {
                hints.ai_flags |= AI_NUMERICHOST;
        }
        rv = getaddrinfo(a.host, a.service, &hints, out);
        if (rv != 0) {
                *out = NULL;
                /* An unknown name is the usual case, and a typo: say it
                 * plainly; anything else (no resolver) in the system's
                 * words. */
                if (rv == EAI_NONAME
#ifdef EAI_NODATA
                    || rv == EAI_NODATA
#endif
                ) {
                        snprintf(why, size, "name does not resolve");
                } else {
                        snprintf(why, size, "cannot resolve the name: %s",
                                 gai_strerror(rv));
                }
                return BATON_EIO;
        }
        return 0;
}

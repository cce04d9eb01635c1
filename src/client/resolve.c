/* Turning an endpoint of libbaton into socket addresses to connect to. */
#include "resolve.h"

#include <string.h>
#include <sys/socket.h>

#include "../../include/baton.h"
#include "../lib/address.h"

int resolve_check(const char *endpoint)
{
        struct address a;

        return address_parse(endpoint, &a);
}

int resolve_endpoint(const char *endpoint, struct addrinfo **out)
{
        struct address a;
        struct addrinfo hints;

        *out = NULL;
        if (address_parse(endpoint, &a) != 0) {
                return BATON_EINVAL;
        }
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        if (a.kind != ADDRESS_NAME) {
                hints.ai_flags |= AI_NUMERICHOST;
        }
        if (getaddrinfo(a.host, a.service, &hints, out) != 0) {
                *out = NULL;
                return BATON_EIO;
        }
        return 0;
}

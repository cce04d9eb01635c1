/* Parsing of numeric "a.b.c.d:port" addresses (libraft 0.15.0 takes no other).
 */
#include "address.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

int address_parse(const char *s, struct sockaddr_in *out)
{
        const char *colon = strrchr(s, ':');
        char host[INET_ADDRSTRLEN];
        char *end;
        long port;

        if (colon == NULL || (size_t)(colon - s) >= sizeof host) {
                return BATON_EINVAL;
        }
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = '\0';
        port = strtol(colon + 1, &end, 10);
        if (*end != '\0' || port <= 0 || port > 65535) {
                return BATON_EINVAL;
        }
        memset(out, 0, sizeof *out);
        out->sin_family = AF_INET;
        out->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &out->sin_addr) != 1) {
                return BATON_EINVAL;
        }
        return 0;
}

/* Turning an endpoint of libbaton into socket addresses to connect to. */
#ifndef CLIENT_RESOLVE_H
#define CLIENT_RESOLVE_H

#include <netdb.h>

/*
 * Check `endpoint` ("host:port" or "[ipv6]:port", borrowed for the call)
 * and resolve it into the list of addresses to try in turn, IPv4 or IPv6,
 * for a TCP connection. A host name is looked up with getaddrinfo(), which
 * blocks. Returns 0 with the list in *out (free it with freeaddrinfo()),
 * BATON_EINVAL when the endpoint is malformed, or BATON_EIO when it names
 * no address (an unknown name, or no resolver); then `why` (`size` bytes)
 * says which, in a few words ("name does not resolve").
 */
int resolve_endpoint(const char *endpoint, struct addrinfo **out, char *why,
                     size_t size);

/* Whether `endpoint` is well formed (no I/O). */
int resolve_check(const char *endpoint);

#endif /* CLIENT_RESOLVE_H */

/* Parsing of numeric "a.b.c.d:port" addresses (libraft 0.15.0 takes no other).
 */
#ifndef LIB_ADDRESS_H
#define LIB_ADDRESS_H

#include <netinet/in.h>

/* Fill `out` from "a.b.c.d:port". 0 or BATON_EINVAL. */
int address_parse(const char *s, struct sockaddr_in *out);

#endif /* LIB_ADDRESS_H */

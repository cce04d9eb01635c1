/* Parsing of the numeric "a.b.c.d:port" addresses batond listens on. */
#ifndef SERVER_ADDRESS_H
#define SERVER_ADDRESS_H

#include <netinet/in.h>

/* Fill `out` from "a.b.c.d:port". 0 or BATON_EINVAL. */
int address_parse(const char *s, struct sockaddr_in *out);

#endif /* SERVER_ADDRESS_H */

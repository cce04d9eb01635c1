/* The one parser of Baton's addresses: "host:port" and "[ipv6]:port". */
#ifndef LIB_ADDRESS_H
#define LIB_ADDRESS_H

#include <stdint.h>

/* Longest address in bytes, without the NUL: the wire's limit on member
 * and client addresses (PROTO_ADDRESS_MAX, COMMAND_ADDRESS_MAX). */
#define ADDRESS_MAX 64

/* What is accepted, for error messages. */
#define ADDRESS_FORMS "host:port, [ipv6]:port"

enum address_kind {
        ADDRESS_IPV4, /* numeric "a.b.c.d" */
        ADDRESS_IPV6, /* numeric, written in brackets */
        ADDRESS_NAME, /* a host name of RFC 1123 labels, resolved later */
};

/* An address split into its parts; nothing is resolved. */
struct address {
        enum address_kind kind;
        char host[ADDRESS_MAX + 1]; /* without the brackets of IPv6 */
        char service[6];            /* the port in decimal, for getaddrinfo */
        uint16_t port;              /* 1..65535 */
        const char *errmsg; /* after a failure: what is wrong (static) */
};

/*
 * Split and check `s`: "a.b.c.d:port" (four octets 0..255 without leading
 * zeros), "[ipv6]:port" (a numeric IPv6 address), or "name:port" (labels of
 * 1..63 letters, digits and '-', not starting or ending with '-', separated
 * by dots), with a port 1..65535 without leading zeros, ADDRESS_MAX bytes
 * at most in all. `s` is borrowed for the call. Returns 0, or BATON_EINVAL
 * with a sentence in out->errmsg. No I/O: names are resolved by the caller.
 */
int address_parse(const char *s, struct address *out);

#endif /* LIB_ADDRESS_H */

/* Client connections counted per source address, so that one host cannot
 * take every connection slot (max-connections-per-address). */
#ifndef SERVER_ADDRCOUNT_H
#define SERVER_ADDRCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include "../../lib/hmap.h"

/* One source address with connections open; owned by the map. */
struct addrcount_entry {
        struct hnode node;
        uint8_t family;
        uint8_t addr[16]; /* IPv4 in the first 4 bytes */
        uint32_t n;
};

struct addrcount {
        struct hmap map;
};

void addrcount_init(struct addrcount *a);
/* Frees every entry. */
void addrcount_close(struct addrcount *a);

/*
 * Count one more connection from `sa` (the port is ignored). Returns its
 * address's entry, whose `n` includes the new connection, or NULL when out
 * of memory. Every entry returned must be given back to addrcount_put().
 */
struct addrcount_entry *addrcount_get(struct addrcount *a,
                                      const struct sockaddr_storage *sa);
/* Count one connection fewer; the entry goes with its last connection. */
void addrcount_put(struct addrcount *a, struct addrcount_entry *e);

/* "127.0.0.1" or "::1": the entry's address as text, into `out`. */
void addrcount_format(const struct addrcount_entry *e, char *out, size_t size);

/* Room for addrcount_endpoint()'s text and its NUL. */
#define ADDRCOUNT_ENDPOINT_MAX 56

/* "127.0.0.1:51234" or "[::1]:51234": the address and port of `sa` as
 * text, into `out` ("" for a family other than IPv4 and IPv6). */
void addrcount_endpoint(const struct sockaddr_storage *sa, char *out,
                        size_t size);

#endif /* SERVER_ADDRCOUNT_H */

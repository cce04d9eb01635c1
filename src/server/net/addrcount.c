/* Client connections counted per source address (see addrcount.h). */
#include "addrcount.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void addrcount_init(struct addrcount *a)
{
        hmap_init(&a->map, &mem_libc);
}

void addrcount_close(struct addrcount *a)
{
        size_t i;

        for (i = 0; i < a->map.n_buckets; i++) {
                struct hnode *n = a->map.buckets[i];
                while (n != NULL) {
                        struct hnode *next = n->next;
                        free(HMAP_DATA(n, struct addrcount_entry, node));
                        n = next;
                }
        }
        hmap_close(&a->map);
}

/* The address of `sa` without its port. */
static void key_of(const struct sockaddr_storage *sa, uint8_t *family,
                   uint8_t addr[16])
{
        memset(addr, 0, 16);
        if (sa->ss_family == AF_INET) {
                const struct sockaddr_in *in = (const void *)sa;
                memcpy(addr, &in->sin_addr, 4);
        } else if (sa->ss_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const void *)sa;
                memcpy(addr, &in6->sin6_addr, 16);
        }
        *family = (uint8_t)sa->ss_family;
}

struct addrcount_entry *addrcount_get(struct addrcount *a,
                                      const struct sockaddr_storage *sa)
{
        struct addrcount_entry *e;
        struct hnode *n;
        uint8_t family;
        uint8_t addr[16];
        uint64_t h;

        key_of(sa, &family, addr);
        h = hash_bytes(addr, sizeof addr) ^ family;
        for (n = hmap_first(&a->map, h); n != NULL; n = hmap_next(n)) {
                e = HMAP_DATA(n, struct addrcount_entry, node);
                if (e->family == family && memcmp(e->addr, addr, 16) == 0) {
                        e->n++;
                        return e;
                }
        }
        e = calloc(1, sizeof *e);
        if (e == NULL || hmap_reserve(&a->map, a->map.count + 1) != 0) {
                free(e);
                return NULL;
        }
        e->family = family;
        memcpy(e->addr, addr, sizeof addr);
        e->n = 1;
        hmap_insert(&a->map, &e->node, h);
        return e;
}

void addrcount_put(struct addrcount *a, struct addrcount_entry *e)
{
        if (--e->n == 0) {
                hmap_remove(&a->map, &e->node);
                free(e);
        }
}

void addrcount_format(const struct addrcount_entry *e, char *out, size_t size)
{
        int af = e->family == AF_INET6 ? AF_INET6 : AF_INET;

        if (inet_ntop(af, e->addr, out, (socklen_t)size) == NULL) {
                snprintf(out, size, "?");
        }
}

void addrcount_endpoint(const struct sockaddr_storage *sa, char *out,
                        size_t size)
{
        char ip[INET6_ADDRSTRLEN] = "?";

        if (sa->ss_family == AF_INET6) {
                const struct sockaddr_in6 *a = (const void *)sa;
                inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
                snprintf(out, size, "[%s]:%u", ip, ntohs(a->sin6_port));
        } else if (sa->ss_family == AF_INET) {
                const struct sockaddr_in *a = (const void *)sa;
                inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
                snprintf(out, size, "%s:%u", ip, ntohs(a->sin_port));
        } else if (size > 0) {
                out[0] = '\0';
        }
}

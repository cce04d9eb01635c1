/* The seqs out per session for the HTTP API's writes. */
#include "apiseq.h"

#include <stdlib.h>

struct apiseq {
        struct hnode node;
        uint64_t session;
        uint64_t last; /* the highest seq handed out */
        uint32_t out;  /* writes numbered and not answered yet */
};

static struct apiseq *find(const struct apiseqs *s, uint64_t session)
{
        struct hnode *n;

        for (n = hmap_first(&s->map, hash_u64(session)); n != NULL;
             n = hmap_next(n)) {
                struct apiseq *e = HMAP_DATA(n, struct apiseq, node);
                if (e->session == session) {
                        return e;
                }
        }
        return NULL;
}

void apiseqs_init(struct apiseqs *s)
{
        hmap_init(&s->map, &mem_libc);
}

void apiseqs_close(struct apiseqs *s)
{
        struct hnode *n;
        size_t i;

        for (i = 0; i < s->map.n_buckets; i++) {
                while ((n = s->map.buckets[i]) != NULL) {
                        hmap_remove(&s->map, n);
                        free(n);
                }
        }
        hmap_close(&s->map);
}

uint64_t apiseqs_take(struct apiseqs *s, const struct lockfsm *f,
                      uint64_t session, uint64_t given)
{
        struct apiseq *e = find(s, session);
        uint64_t next;

        if (e == NULL) {
                if (hmap_reserve(&s->map, s->map.count + 1) != 0 ||
                    (e = calloc(1, sizeof *e)) == NULL) {
                        return 0;
                }
                e->session = session;
                hmap_insert(&s->map, &e->node, hash_u64(session));
        }
        next = lockfsm_session_next_seq(f, session);
        if (e->last + 1 > next) {
                next = e->last + 1;
        }
        if (given != 0) {
                next = given;
        }
        if (next > e->last) {
                e->last = next;
        }
        e->out++;
        return next;
}

void apiseqs_put(struct apiseqs *s, uint64_t session)
{
        struct apiseq *e = find(s, session);

        /* Once none is out, the state machine knows every seq given:
         * the entry goes, and the map holds only sessions in flight. */
        if (e != NULL && --e->out == 0) {
                hmap_remove(&s->map, &e->node);
                free(e);
        }
}

/* The faults in force on a simulated client network, counted so that
 * overlapping faults heal independently. */
#include "simfaults.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"

void simfaults_init(struct simfaults *fs)
{
        memset(fs, 0, sizeof *fs);
}

void simfaults_close(struct simfaults *fs)
{
        free(fs->parts);
        free(fs->pauses);
        simfaults_init(fs);
}

static unsigned bit(enum simnet_side to)
{
        return to == SIMNET_NODE ? SIMNET_TO_NODE : SIMNET_TO_CLIENT;
}

static struct simfaults_rec *find(struct simfaults_rec *v, size_t n,
                                  uint64_t client, unsigned node)
{
        size_t i;

        for (i = 0; i < n; i++) {
                if (v[i].client == client && v[i].node == node) {
                        return &v[i];
                }
        }
        return NULL;
}

/* Count the counters of `dirs` in `n` up or down, all or none. */
static int count(unsigned n[2], unsigned dirs, bool up)
{
        int s;

        for (s = 0; s < 2; s++) {
                if ((dirs & bit((enum simnet_side)s)) && !up && n[s] == 0) {
                        return BATON_EINVAL;
                }
        }
        for (s = 0; s < 2; s++) {
                if (dirs & bit((enum simnet_side)s)) {
                        n[s] = up ? n[s] + 1 : n[s] - 1;
                }
        }
        return 0;
}

/* Count the record of (client, node) in `*v` up or down in `dirs`; a
 * record counted down to nothing goes. */
static int count_rec(struct simfaults_rec **v, size_t *n, size_t *cap,
                     uint64_t client, unsigned node, unsigned dirs, bool up)
{
        struct simfaults_rec *r = find(*v, *n, client, node);
        int rv;

        if (r == NULL) {
                if (!up) {
                        return BATON_EINVAL;
                }
                if (*n == *cap) {
                        size_t c = *cap == 0 ? 8 : *cap * 2;
                        void *p = realloc(*v, c * sizeof **v);
                        if (p == NULL) {
                                return BATON_ENOMEM;
                        }
                        *v = p;
                        *cap = c;
                }
                r = &(*v)[(*n)++];
                *r = (struct simfaults_rec){client, node, {0, 0}};
        }
        rv = count(r->n, dirs, up);
        if (r->n[0] == 0 && r->n[1] == 0) {
                *r = (*v)[--*n];
        }
        return rv;
}

/* A single counter, as count() does two. */
static int count_one(unsigned *n, bool up)
{
        unsigned pair[2] = {0, *n};
        int rv = count(pair, SIMNET_TO_NODE, up);

        *n = pair[SIMNET_NODE];
        return rv;
}

int simfaults_count(struct simfaults *fs, const struct simnet_fault *f, bool up)
{
        switch (f->kind) {
        case SIMNET_PARTITION:
                return count_rec(&fs->parts, &fs->n_parts, &fs->parts_cap,
                                 f->client, f->node, f->dirs, up);
        case SIMNET_ISOLATE:
                return count(fs->isolated[f->node], f->dirs, up);
        case SIMNET_KILL:
                return count_one(&fs->killed[f->node], up);
        case SIMNET_PAUSE_NODE:
                return count_one(&fs->paused[f->node], up);
        case SIMNET_PAUSE_CLIENT:
                return count_rec(&fs->pauses, &fs->n_pauses, &fs->pauses_cap,
                                 f->client, 0, SIMNET_TO_CLIENT, up);
        case SIMNET_SPIKE:
                if (!up && fs->spike_ms[f->node] < f->extra_ms) {
                        return BATON_EINVAL;
                }
                fs->spike_ms[f->node] += up ? f->extra_ms : -f->extra_ms;
                return 0;
        case SIMNET_CUT:
                break;
        }
        return BATON_EINVAL;
}

bool simfaults_parted(const struct simfaults *fs, uint64_t client,
                      unsigned node, enum simnet_side to)
{
        const struct simfaults_rec *r =
            find(fs->parts, fs->n_parts, client, node);

        return fs->isolated[node][to] > 0 || (r != NULL && r->n[to] > 0);
}

bool simfaults_held(const struct simfaults *fs, uint64_t client, unsigned node,
                    enum simnet_side s)
{
        if (s == SIMNET_NODE) {
                return fs->paused[node] > 0;
        }
        return find(fs->pauses, fs->n_pauses, client, 0) != NULL;
}

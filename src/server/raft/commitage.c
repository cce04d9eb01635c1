/* How long a leader's oldest uncommitted entry has waited (see
 * commitage.h). */
#include "commitage.h"

void commitage_init(struct commitage *a)
{
        a->index = 0;
        a->since_ms = 0;
}

void commitage_observe(struct commitage *a, uint64_t now, bool leader,
                       uint64_t commit, uint64_t last)
{
        if (!leader || (a->index != 0 && commit >= a->index)) {
                a->index = 0;
        }
        if (leader && a->index == 0 && last > commit) {
                a->index = commit + 1;
                a->since_ms = now;
        }
}

uint64_t commitage_ms(const struct commitage *a, uint64_t now)
{
        return a->index != 0 && now > a->since_ms ? now - a->since_ms : 0;
}

uint64_t commitage_index(const struct commitage *a)
{
        return a->index;
}

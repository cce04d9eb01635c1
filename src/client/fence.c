/* baton_fence: the resource side of fencing tokens (include/baton.h). */
#include "../../include/baton.h"

void baton_fence_init(struct baton_fence *f)
{
        f->highest = 0;
}

int baton_fence_admit(struct baton_fence *f, uint64_t token)
{
        if (token < f->highest) {
                return BATON_ESTALE;
        }
        f->highest = token;
        return 0;
}

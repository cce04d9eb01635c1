/* What libbaton's deciding code asks of its environment. */
#include "coreenv.h"

int64_t coreenv_jitter(const struct core_env *env, int64_t ms)
{
        if (ms <= 0) {
                return 0;
        }
        return ms / 2 + (int64_t)(env->random(env->data) % (uint64_t)ms);
}

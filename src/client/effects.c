/* What the host of libbaton's core does for its flags. */
#include "effects.h"

void effects_apply(struct registry *reg, struct linkio *io, pthread_cond_t *cv)
{
        if (reg->write_now) {
                reg->write_now = false;
                /* What the socket does not take at once, and any error,
                 * is the background thread's: it alone drops
                 * connections. */
                if (!linkio_write_direct(io)) {
                        reg->loop_needed = true;
                }
        }
        if (reg->changed) {
                reg->changed = false;
                pthread_cond_broadcast(cv);
        }
        if (reg->loop_needed) {
                reg->loop_needed = false;
                linkio_wake(io);
        }
}

/*
 * A short libbaton program: take a lock, do fenced work, release it.
 *
 *   lock_example [ENDPOINTS] [LOCK]
 *
 * ENDPOINTS defaults to the local cluster of scripts/cluster. The "resource"
 * here is a struct baton_fence standing in for a storage server that
 * remembers the highest token it has seen: a write carrying an older token
 * (from a holder that was paused past its session and lost the lock) is
 * refused with BATON_ESTALE.
 */
#include <baton.h>
#include <inttypes.h>
#include <stdio.h>

static void on_lock_lost(baton_client *c, const char *name, uint64_t token,
                         void *data)
{
        (void)c;
        (void)data;
        /* Runs on the library's thread: only note it, stop using the lock. */
        fprintf(stderr, "lost %s (token %" PRIu64 ")\n", name, token);
}

/* The protected resource: admits a write only with a current token. */
static int write_resource(struct baton_fence *fence, uint64_t token,
                          const char *what)
{
        int rv = baton_fence_admit(fence, token);

        if (rv != 0) {
                fprintf(stderr, "write '%s' refused: %s\n", what,
                        baton_strerror(rv));
                return rv;
        }
        printf("wrote '%s' under token %" PRIu64 "\n", what, token);
        return 0;
}

int main(int argc, char **argv)
{
        const char *endpoints = argc > 1 ? argv[1] : NULL;
        const char *name = argc > 2 ? argv[2] : "example";
        struct baton_options opts;
        struct baton_fence fence;
        baton_client *c;
        uint64_t token = 0;
        int rv;

        baton_options_init(&opts);
        opts.client_name = "lock_example";
        opts.on_lock_lost = on_lock_lost;
        rv = baton_client_create(&c, endpoints, &opts);
        if (rv != 0) {
                fprintf(stderr, "create: %s\n", baton_strerror(rv));
                return 1;
        }
        baton_fence_init(&fence);

        /* Wait up to 5 s in the lock's queue. */
        rv = baton_acquire(c, name, BATON_OWNER_THREAD, 5000, &token);
        if (rv != 0) {
                fprintf(stderr, "acquire %s: %s\n", name, baton_strerror(rv));
                baton_client_destroy(c);
                return 1;
        }
        /* Check the lease before each step of the work; pass the token to
         * the resource, which fences out anyone older. */
        if (baton_session_state(c) == BATON_SESSION_LIVE) {
                write_resource(&fence, token, "step 1");
        }
        if (baton_session_state(c) == BATON_SESSION_LIVE) {
                write_resource(&fence, token, "step 2");
        }
        /* A late write from an earlier holder is refused. */
        write_resource(&fence, token - 1, "late write of an old holder");

        rv = baton_release(c, name, BATON_OWNER_THREAD, token);
        if (rv != 0) {
                fprintf(stderr, "release %s: %s\n", name, baton_strerror(rv));
        }
        baton_client_destroy(c);
        return rv == 0 ? 0 : 1;
}

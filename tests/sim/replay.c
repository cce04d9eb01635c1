/* One seed of the simulation replayed alone in a fresh process, for its
 * digest: what `test_sim --nodes N --seed S` reproduces of a longer run. */
#include "replay.h"

#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"

extern char **environ;

/* Reads all of `fd` into `buf` (`cap` bytes, NUL-terminated, the rest
 * dropped). */
static void read_all(int fd, char *buf, size_t cap)
{
        size_t n = 0;
        char skip[512];

        for (;;) {
                char *to = n + 1 < cap ? buf + n : skip;
                size_t room = n + 1 < cap ? cap - 1 - n : sizeof skip;
                ssize_t got = read(fd, to, room);

                if (got < 0 && errno == EINTR) {
                        continue;
                }
                if (got <= 0) {
                        break;
                }
                if (to == buf + n) {
                        n += (size_t)got;
                }
        }
        buf[n] = '\0';
}

/* This process's environment, but for glibc's MALLOC_PERTURB_, which is
 * PERTURB in the replay: whatever a run reads of memory malloc gave it
 * before writing there is then another value than here. `env` has room
 * for ENV_MAX entries and the NULL after them. */
#define ENV_MAX 255
static void replay_env(char *env[ENV_MAX + 1])
{
        static char perturb[] = "MALLOC_PERTURB_=165";
        size_t n = 0, i;

        for (i = 0; environ[i] != NULL && n + 1 < ENV_MAX; i++) {
                if (strncmp(environ[i], "MALLOC_PERTURB_=", 16) != 0) {
                        env[n++] = environ[i];
                }
        }
        env[n++] = perturb;
        env[n] = NULL;
}

int replay_digest(unsigned nodes, uint64_t seed, const char *brk,
                  uint64_t *digest, char *reason, size_t cap)
{
        char *env[ENV_MAX + 1];
        char path[4096];
        ssize_t len;
        char n_arg[16], s_arg[32], b_arg[32], out[4096];
        char name[] = "test_sim", o_nodes[] = "--nodes", o_seed[] = "--seed",
             o_break[] = "--break";
        char *argv[] = {name,   o_nodes, n_arg,
                        o_seed, s_arg,   brk != NULL ? o_break : NULL,
                        b_arg,  NULL};
        posix_spawn_file_actions_t fa;
        const char *at;
        int fds[2], status, rv;
        pid_t pid;

        /* The file /proc/self/exe names, not the link itself: under
         * valgrind the link is valgrind's tool, while readlink() of it
         * gives this program (and the replay then runs natively). */
        len = readlink("/proc/self/exe", path, sizeof path - 1);
        if (len <= 0) {
                return fail(reason, cap, "readlink /proc/self/exe: %s",
                            strerror(errno));
        }
        path[len] = '\0';
        snprintf(n_arg, sizeof n_arg, "%u", nodes);
        snprintf(s_arg, sizeof s_arg, "%" PRIu64, seed);
        snprintf(b_arg, sizeof b_arg, "%s", brk != NULL ? brk : "");
        if (pipe(fds) != 0) {
                return fail(reason, cap, "pipe: %s", strerror(errno));
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        posix_spawn_file_actions_addclose(&fa, fds[1]);
        replay_env(env);
        rv = posix_spawn(&pid, path, &fa, NULL, argv, env);
        posix_spawn_file_actions_destroy(&fa);
        close(fds[1]);
        if (rv != 0) {
                close(fds[0]);
                return fail(reason, cap, "cannot run %s: %s", path,
                            strerror(rv));
        }
        read_all(fds[0], out, sizeof out);
        close(fds[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        at = strstr(out, "digest=");
        if (at == NULL) {
                return fail(reason, cap,
                            "the replay printed no digest (wait status "
                            "%d): %.200s",
                            status, out);
        }
        *digest = strtoull(at + strlen("digest="), NULL, 16);
        return 0;
}

unsigned replay_check(unsigned nodes, uint64_t first, unsigned n,
                      const uint64_t *digests, const char *brk, unsigned *k)
{
        unsigned failed = 0, i;

        for (i = 0; i < n; i++) {
                uint64_t seed = first + i, again = 0;
                char reason[512];

                ++*k;
                if (replay_digest(nodes, seed, brk, &again, reason,
                                  sizeof reason) != 0) {
                        printf("not ok %u - replay nodes=%u seed=%" PRIu64
                               ": %s\n",
                               *k, nodes, seed, reason);
                        failed++;
                } else if (again != digests[i]) {
                        printf("not ok %u - replay nodes=%u seed=%" PRIu64
                               ": digest %016" PRIx64
                               " in this run, %016" PRIx64
                               " alone in a fresh process: the run followed "
                               "more than its seed (reproduce: "
                               "tests/sim/test_sim --nodes %u --seeds %" PRIu64
                               " --repeat)\n",
                               *k, nodes, seed, digests[i], again, nodes, seed);
                        failed++;
                } else {
                        printf("ok %u - replay nodes=%u seed=%" PRIu64
                               " digest=%016" PRIx64
                               ": the same alone in a fresh process\n",
                               *k, nodes, seed, again);
                }
                fflush(stdout);
        }
        return failed;
}

/* See replay.h. */
#include "replay.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read all of PATH into a fresh buffer (libFuzzer gives each input its own
 * allocation too, so ASan sees a read past its end). */
static uint8_t *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL;
        size_t cap = 0;
        size_t n = 0;
        size_t got;

        if (f == NULL) {
                return NULL;
        }
        do {
                if (n == cap) {
                        uint8_t *more;

                        cap = cap == 0 ? 4096 : cap * 2;
                        more = realloc(buf, cap);
                        if (more == NULL) {
                                free(buf);
                                fclose(f);
                                return NULL;
                        }
                        buf = more;
                }
                got = fread(buf + n, 1, cap - n, f);
                n += got;
        } while (got > 0);
        fclose(f);
        /* Shrink to the exact size so that one byte past is out of bounds. */
        *len = n;
        if (n == 0) {
                free(buf);
                return malloc(1);
        }
        return realloc(buf, n);
}

static int run_file(const char *path)
{
        size_t len;
        uint8_t *buf = slurp(path, &len);

        if (buf == NULL) {
                printf("# cannot read %s\n", path);
                return -1;
        }
        fflush(stdout);
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
        return 0;
}

static int by_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of DIR, in name order (the same order every run). */
static int run_dir(const char *dir, unsigned *count)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        char **names = NULL;
        size_t n = 0;
        size_t i;
        int rv = 0;

        if (d == NULL) {
                printf("# cannot open the corpus %s\n", dir);
                return -1;
        }
        while ((e = readdir(d)) != NULL) {
                char **more;

                if (e->d_name[0] == '.') {
                        continue;
                }
                more = realloc(names, (n + 1) * sizeof *names);
                if (more == NULL) {
                        rv = -1;
                        break;
                }
                names = more;
                names[n++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, by_name);
        for (i = 0; i < n; i++) {
                char path[4096 + 258]; /* the directory, '/', a name */

                snprintf(path, sizeof path, "%s/%s", dir, names[i]);
                if (rv == 0 && run_file(path) == 0) {
                        (*count)++;
                } else {
                        rv = -1;
                }
                free(names[i]);
        }
        free(names);
        return rv;
}

int fuzz_replay_main(int argc, char **argv, const char *name)
{
        const char *srcdir = getenv("srcdir");
        char dir[4096];
        unsigned count = 0;
        int rv = 0;
        int i;

        if (argc > 1) {
                for (i = 1; i < argc && rv == 0; i++) {
                        rv = run_file(argv[i]);
                        count += rv == 0;
                }
        } else {
                snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s",
                         srcdir != NULL ? srcdir : ".", name);
                rv = run_dir(dir, &count);
        }
        printf("1..1\n");
        if (rv != 0 || count == 0) {
                printf("not ok 1 - fuzz_%s: %u inputs replayed, and the "
                       "corpus could not be read whole\n",
                       name, count);
                return 1;
        }
        printf("ok 1 - fuzz_%s: %u corpus inputs replayed without a crash "
               "or a broken invariant\n",
               name, count);
        return 0;
}

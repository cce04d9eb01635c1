/* chaos-damage: damages one file of a stopped node's data directory for
 * the corrupt-* nemeses (docs/chaos.md), and says exactly what it did.
 *
 *   chaos-damage open DIR              NAME USED of the newest open segment
 *                                      with entries (nothing if none)
 *   chaos-damage flip|zero|truncate FILE R [FROM]
 *   chaos-damage batch FILE R [FROM]   zero the header of a batch of a
 *                                      segment that starts at or after
 *                                      FROM and is not its last one
 *
 * R is a random number from the nemesis's seeded schedule; it picks the
 * byte (and bit) within the file's written part (up to its last non-zero
 * byte; past the format word for a segment), at or after FROM. One line
 * on stdout says what was done ("flipped bit 3 of byte 2856"), or starts
 * with "none" when there was nothing to damage. Exit 0, or 2 on misuse
 * or an I/O error. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned char *load(const char *path, size_t *len)
{
        struct stat st;
        unsigned char *p;
        ssize_t got;
        int fd = open(path, O_RDONLY);

        if (fd < 0 || fstat(fd, &st) != 0) {
                perror(path);
                exit(2);
        }
        p = malloc((size_t)st.st_size + 1);
        got = p ? read(fd, p, (size_t)st.st_size) : -1;
        close(fd);
        if (got != st.st_size) {
                fprintf(stderr, "%s: short read\n", path);
                exit(2);
        }
        *len = (size_t)st.st_size;
        return p;
}

static void store(const char *path, size_t off, const unsigned char *b,
                  size_t n)
{
        int fd = open(path, O_WRONLY);

        if (fd < 0 || pwrite(fd, b, n, (off_t)off) != (ssize_t)n ||
            fsync(fd) != 0) {
                perror(path);
                exit(2);
        }
        close(fd);
}

static size_t used(const unsigned char *p, size_t len)
{
        while (len > 0 && p[len - 1] == 0) {
                len--;
        }
        return len;
}

static uint64_t get64(const unsigned char *p)
{
        uint64_t v = 0;
        int i;

        for (i = 7; i >= 0; i--) {
                v = (v << 8) | p[i];
        }
        return v;
}

static int newest_open(const char *dir)
{
        char best[300] = "", path[4400];
        unsigned long no, best_no = 0;
        size_t len, u, best_u = 0;
        struct dirent *de;
        unsigned char *p;
        DIR *d = opendir(dir);

        if (d == NULL) {
                perror(dir);
                return 2;
        }
        while ((de = readdir(d)) != NULL) {
                if (sscanf(de->d_name, "open-%lu", &no) != 1 || no < best_no) {
                        continue;
                }
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                p = load(path, &len);
                u = used(p, len);
                free(p);
                if (u > 8) {
                        best_no = no;
                        best_u = u;
                        snprintf(best, sizeof best, "%s", de->d_name);
                }
        }
        closedir(d);
        if (best[0] != '\0') {
                printf("%s %zu\n", best, best_u);
        }
        return 0;
}

/* Zero 16 bytes of the entry headers of a batch that starts at or after
 * `from` and has another batch after it. */
static int zero_batch(const char *path, const unsigned char *p, size_t len,
                      unsigned long r, size_t from)
{
        size_t starts[4096], n = 0, off = 8, i, end;
        static const unsigned char z[16];
        uint64_t k, e;

        while (off + 16 <= len && n < 4096) {
                k = get64(p + off + 8);
                if (k == 0 || off + 16 + 16 * k > len) {
                        break;
                }
                end = off + 16 + 16 * k;
                for (e = 0; e < k; e++) {
                        end += (uint32_t)(p[off + 28 + 16 * e] |
                                          p[off + 29 + 16 * e] << 8 |
                                          p[off + 30 + 16 * e] << 16 |
                                          (uint32_t)p[off + 31 + 16 * e] << 24);
                }
                if (off >= from) {
                        starts[n++] = off;
                }
                off = end;
        }
        if (n < 2) {
                printf("none (%zu batches at or after byte %zu)\n", n, from);
                return 0;
        }
        i = r % (n - 1 < 4 ? n - 1 : (n - 1) / 2 + 1);
        store(path, starts[i] + 16, z, sizeof z);
        printf("zeroed bytes %zu-%zu (the entry headers of batch %zu of %zu "
               "at or after byte %zu; valid batches follow)\n",
               starts[i] + 16, starts[i] + 31, i + 1, n, from);
        return 0;
}

int main(int argc, char **argv)
{
        unsigned char *p, b;
        unsigned long r;
        size_t len, u, lo, off, n;
        const char *base;

        if (argc == 3 && strcmp(argv[1], "open") == 0) {
                return newest_open(argv[2]);
        }
        if (argc < 4) {
                fprintf(stderr, "usage: chaos-damage open DIR | "
                                "flip|zero|truncate|batch FILE R [FROM]\n");
                return 2;
        }
        r = strtoul(argv[3], NULL, 10);
        p = load(argv[2], &len);
        u = used(p, len);
        base = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
        lo = (strncmp(base, "open-", 5) == 0 ||
              (base[0] >= '0' && base[0] <= '9'))
                 ? 8
                 : 0;
        if (argc > 4 && strtoul(argv[4], NULL, 10) > lo) {
                lo = strtoul(argv[4], NULL, 10);
        }
        if (strcmp(argv[1], "batch") == 0) {
                return zero_batch(argv[2], p, len, r, lo);
        }
        if (u <= lo) {
                printf("none (nothing written past byte %zu)\n", lo);
                return 0;
        }
        off = lo + r % (u - lo);
        if (strcmp(argv[1], "flip") == 0) {
                b = (unsigned char)(p[off] ^ (1u << (r / 7 % 8)));
                store(argv[2], off, &b, 1);
                printf("flipped bit %lu of byte %zu\n", r / 7 % 8, off);
        } else if (strcmp(argv[1], "zero") == 0) {
                n = u - off < 512 ? u - off : 512;
                memset(p, 0, n);
                store(argv[2], off, p, n);
                printf("zeroed bytes %zu-%zu\n", off, off + n - 1);
        } else if (strcmp(argv[1], "truncate") == 0) {
                if (truncate(argv[2], (off_t)off) != 0) {
                        perror(argv[2]);
                        return 2;
                }
                printf("truncated to %zu bytes (was %zu, %zu written)\n", off,
                       len, u);
        } else {
                fprintf(stderr, "chaos-damage: unknown kind %s\n", argv[1]);
                return 2;
        }
        free(p);
        return 0;
}

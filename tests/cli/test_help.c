/*
 * What batonctl tells its user about itself and about sessions, checked
 * against what it does: `batonctl --help` lists every command the man page
 * lists (man/batonctl.1's SYNOPSIS), and so does the no-command error;
 * `batonctl COMMAND --help` (and `batonctl --help COMMAND`) prints that
 * command's usage alone and exits 0, for each command; the fields the help
 * says `acquire --detach` prints are the fields it prints, against a live
 * 3-node cluster (tests/integration/harness); and `release --session` of a
 * session the cluster never had says so, not that a lease ran out, while
 * one of an expired session says it expired. Prints TAP.
 *
 * The built binary is $BATONCTL, or ./batonctl in the build dir. Every
 * wait is bounded; a watchdog (BATON_TEST_WATCHDOG, default 120 s) bails
 * out of a hung run. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../lib/proc.h"
#include "../lib/tap.h"

#define WATCHDOG_S   120
#define HEALTHY_MS   20000
#define RUN_MS       60000 /* a batonctl run, at most */
#define COMMANDS_MAX 64
#define FREE_MS      20000 /* an expired session's lock is freed by then */

static const char *batonctl = "./batonctl";
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* Each line of `text` as a TAP comment. */
static void diag_text(const char *what, const char *text)
{
        const char *p = text;

        printf("# %s:\n", what);
        while (*p != '\0') {
                const char *nl = strchr(p, '\n');
                int n = nl != NULL ? (int)(nl - p) : (int)strlen(p);
                printf("#   %.*s\n", n, p);
                p += n + (nl != NULL);
        }
}

/* --- Running batonctl ------------------------------------------------------
 */

/* batonctl with `args` (NULL-terminated), to its end or for a minute at
 * most. */
static void run(struct proc *r, const char *const *args)
{
        proc_run(r, batonctl, 0, RUN_MS, NULL, args);
}

/* --- The commands the man page lists -------------------------------------- */

/* The command words of man/batonctl.1's SYNOPSIS: ".B batonctl lock",
 * ".BR \"batonctl acquire\" | try" and so on, each once. */
static unsigned man_commands(const char *path, char names[][32])
{
        FILE *f = fopen(path, "r");
        char line[512];
        unsigned n = 0;
        bool synopsis = false;

        if (f == NULL) {
                return 0;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                const char *p = NULL;
                char word[32];
                unsigned i;

                if (strncmp(line, ".SH", 3) == 0) {
                        synopsis = strstr(line, "SYNOPSIS") != NULL;
                        continue;
                }
                if (!synopsis) {
                        continue;
                }
                if (strncmp(line, ".B batonctl ", 12) == 0) {
                        p = line + 12;
                } else if (strncmp(line, ".BR \"batonctl ", 14) == 0) {
                        p = line + 14;
                }
                if (p == NULL || !islower((unsigned char)*p)) {
                        continue; /* options: \-\-help, \-\-version */
                }
                /* Lower-case letters, and roff's "\-" for a hyphen
                 * inside the word (set\-value). */
                i = 0;
                while (i + 1 < sizeof word && islower((unsigned char)*p)) {
                        word[i++] = *p++;
                        if (i + 1 < sizeof word && p[0] == '\\' &&
                            p[1] == '-' && islower((unsigned char)p[2])) {
                                word[i++] = '-';
                                p += 2;
                        }
                }
                word[i] = '\0';
                for (i = 0; i < n && strcmp(names[i], word) != 0; i++) {
                }
                if (i == n && n < COMMANDS_MAX) {
                        snprintf(names[n++], 32, "%s", word);
                }
        }
        fclose(f);
        return n;
}

/* Whether `help` has an entry for `name`: a line that starts with two
 * spaces and the name, then a space or the end of the line. */
static bool lists(const char *help, const char *name)
{
        size_t len = strlen(name);
        const char *p = help;

        while ((p = strstr(p, "\n  ")) != NULL) {
                p += 3;
                if (strncmp(p, name, len) == 0 &&
                    (p[len] == ' ' || p[len] == '\n')) {
                        return true;
                }
        }
        return false;
}

/* Whether `list` ("a, b, c or d") names `name` as a word. */
static bool names_word(const char *list, const char *name)
{
        size_t len = strlen(name);
        const char *p = list;

        while ((p = strstr(p, name)) != NULL) {
                bool before = p == list || !isalpha((unsigned char)p[-1]);
                bool after = !isalpha((unsigned char)p[len]);
                if (before && after) {
                        return true;
                }
                p += len;
        }
        return false;
}

static void check_global_help(char names[][32], unsigned n)
{
        static const char *const args[] = {"--help", NULL};
        static const char *const none[] = {NULL};
        struct proc r;
        unsigned i, missing = 0, unlisted = 0;

        run(&r, args);
        ok(r.status == 0, "--help exits 0 (%d)", r.status);
        for (i = 0; i < n; i++) {
                if (!lists(r.out, names[i])) {
                        printf("# --help has no entry for %s\n", names[i]);
                        missing++;
                }
        }
        ok(n >= 18 && missing == 0,
           "--help has an entry for each of the %u commands of "
           "batonctl(1)'s SYNOPSIS (%u missing)",
           n, missing);
        run(&r, none);
        for (i = 0; i < n; i++) {
                if (!names_word(r.err, names[i])) {
                        printf("# the no-command error does not name %s\n",
                               names[i]);
                        unlisted++;
                }
        }
        if (!ok(r.status == 2 && strstr(r.err, "no command") != NULL &&
                    unlisted == 0,
                "no command: exit 2, and the error names every command "
                "(%u not named)",
                unlisted)) {
                diag_text("stderr", r.err);
        }
}

/* `batonctl NAME --help` and `batonctl --help NAME`: exit 0, that command's
 * usage first, and not the global help. */
static void check_command_help(const char *name)
{
        const char *const after[] = {name, "--help", NULL};
        const char *const before[] = {"--help", name, NULL};
        const char *want = "usage: batonctl ";
        size_t len = strlen(want), n = strlen(name);
        struct proc r, r2;
        bool own;

        run(&r, after);
        own = strncmp(r.out, want, len) == 0 &&
              strncmp(r.out + len, name, n) == 0 &&
              (r.out[len + n] == ' ' || r.out[len + n] == '\n') &&
              strstr(r.out, "COMMAND ...") == NULL;
        if (!ok(r.status == 0 && own && r.err[0] == '\0',
                "batonctl %s --help: exit 0 (%d), its own usage", name,
                r.status)) {
                diag_text("stdout", r.out);
                diag_text("stderr", r.err);
        }
        run(&r2, before);
        ok(r2.status == 0 && strcmp(r.out, r2.out) == 0,
           "batonctl --help %s prints the same", name);
}

/* --- --detach's fields -----------------------------------------------------
 */

/* The words of a run of capitals that starts "NAME TOKEN SESSION" in
 * `text`, for each such run: how many words the help says `--detach`
 * prints. Fills counts[], returns how many runs there were. */
static unsigned detach_phrases(const char *raw, unsigned *counts, unsigned cap)
{
        static char text[PROC_OUT_MAX];
        const char *p;
        size_t at = 0;
        unsigned n = 0;

        /* One space for each run of spaces and line breaks: a phrase may
         * be wrapped. */
        for (p = raw; *p != '\0' && at < sizeof text - 1; p++) {
                bool space = isspace((unsigned char)*p);
                if (!space || (at > 0 && text[at - 1] != ' ')) {
                        text[at++] = space ? ' ' : *p;
                }
        }
        text[at] = '\0';
        p = text;

        while ((p = strstr(p, "NAME TOKEN SESSION")) != NULL && n < cap) {
                unsigned words = 0;
                const char *q = p;

                for (;;) {
                        const char *w = q;
                        while (isupper((unsigned char)*q)) {
                                q++;
                        }
                        if (q == w || (*q != ' ' && *q != '.' && *q != '\0')) {
                                break; /* not a word of capitals alone */
                        }
                        words++;
                        if (*q != ' ') {
                                break;
                        }
                        q++;
                }
                counts[n++] = words;
                p += 18;
        }
        return n;
}

static unsigned fields(const char *line)
{
        unsigned n = 0;
        bool in = false;

        for (const char *p = line; *p != '\0' && *p != '\n'; p++) {
                bool space = isspace((unsigned char)*p);
                n += !space && !in;
                in = !space;
        }
        return n;
}

static void check_detach_fields(struct harness *h)
{
        const char *const take[] = {"--endpoints", h->endpoints, "acquire",
                                    "th-detach",   "--detach",   "--ttl",
                                    "5000",        NULL};
        const char *const helps[][3] = {
            {"--help", NULL, NULL},
            {"acquire", "--help", NULL},
            {"try", "--help", NULL},
        };
        struct proc r;
        unsigned printed, i, j;

        run(&r, take);
        printed = fields(r.out);
        if (!ok(r.status == 0 && printed >= 3,
                "acquire --detach prints its grant (%u fields: %.*s)", printed,
                (int)strcspn(r.out, "\n"), r.out)) {
                diag_text("stderr", r.err);
                return;
        }
        for (i = 0; i < sizeof helps / sizeof helps[0]; i++) {
                unsigned counts[8], n, wrong = 0;

                run(&r, helps[i]);
                n = detach_phrases(r.out, counts, 8);
                for (j = 0; j < n; j++) {
                        if (counts[j] != printed) {
                                printf("# batonctl %s %s says --detach prints "
                                       "%u fields\n",
                                       helps[i][0],
                                       helps[i][1] != NULL ? helps[i][1] : "",
                                       counts[j]);
                                wrong++;
                        }
                }
                ok(n > 0 && wrong == 0,
                   "batonctl %s %s: says --detach prints NAME TOKEN SESSION "
                   "SECRET, the %u fields it prints (%u of %u phrases wrong)",
                   helps[i][0], helps[i][1] != NULL ? helps[i][1] : "", printed,
                   wrong, n);
        }
}

/* --- release --session of a session that is not live -----------------------
 */

static void check_release_messages(struct harness *h)
{
        const char *zeros = "00000000000000000000000000000000";
        const char *const never[] = {
            "--endpoints", h->endpoints, "release",  "th-never", "5",
            "--session",   "999999999",  "--secret", zeros,      NULL};
        const char *const take[] = {"--endpoints", h->endpoints, "acquire",
                                    "th-expire",   "--detach",   "--ttl",
                                    "1000",        NULL};
        const char *const holder[] = {"--endpoints", h->endpoints, "holder",
                                      "th-expire", NULL};
        char token[32] = "", session[32] = "", secret[40] = "";
        struct timespec pause = {0, 100 * 1000000};
        struct proc r;
        int waited;

        run(&r, never);
        if (!ok(r.status == 1 && strstr(r.err, "no session 999999999") &&
                    strstr(r.err, "never existed") && !strstr(r.err, "ran out"),
                "release --session of a session never opened: exit 1 (%d), "
                "says it never existed (or ended long ago), not that a lease "
                "ran out",
                r.status)) {
                diag_text("stderr", r.err);
        }
        run(&r, take);
        if (sscanf(r.out, "%*s %31s %31s %39s", token, session, secret) != 3) {
                ok(false, "acquire --detach --ttl 1000: %s%s", r.out, r.err);
                return;
        }
        /* The cluster expires it a TTL after its last keepalive. */
        for (waited = 0; waited < FREE_MS; waited += 100) {
                run(&r, holder);
                if (strstr(r.out, "free") != NULL) {
                        break;
                }
                nanosleep(&pause, NULL);
        }
        {
                const char *const late[] = {
                    "--endpoints", h->endpoints, "release",  "th-expire", token,
                    "--session",   session,      "--secret", secret,      NULL};
                run(&r, late);
        }
        if (!ok(r.status == 1 && strstr(r.err, "expired") &&
                    !strstr(r.err, "never existed"),
                "release --session of an expired session: exit 1 (%d), says "
                "it expired",
                r.status)) {
                diag_text("stderr", r.err);
        }
}

int main(int argc, char **argv)
{
        char names[COMMANDS_MAX][32];
        const char *env = getenv("BATONCTL");
        struct harness h;
        unsigned n, leader, i;

        (void)argc;
        if (env != NULL && env[0] != '\0') {
                batonctl = env;
        }
        n = man_commands(SRCDIR "/man/batonctl.1", names);
        check_global_help(names, n);
        for (i = 0; i < n; i++) {
                check_command_help(names[i]);
        }
        if (harness_open_healthy(&h, 3, argv[0], WATCHDOG_S, HEALTHY_MS,
                                 &leader) != 0) {
                ok(false, "cluster: %s", h.errmsg);
        } else {
                check_detach_fields(&h);
                check_release_messages(&h);
        }
        harness_close(&h);
        return tap_plan(&tap);
}

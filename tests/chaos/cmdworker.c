/*
 * chaos-cmdworker: a worker of the supervise workload (docs/chaos.md). It
 * runs `batonctl lock supervise-K -- chaos-unfenced ...` again and again,
 * K = id mod KEYS: each run is one process of the history (p = id * 1000 +
 * run), one batonctl with one session. The command (chaos-unfenced) writes
 * the unfenced register while it holds the lock; the nemeses kill-batonctl
 * and pause-batonctl strike the batonctl alone (its pid in --pid-file),
 * never the worker or the command.
 *
 *     chaos-cmdworker --id J --endpoints E --history FILE --batonctl PATH
 *         --command PATH --log RUN/unfenced.log --pid-file PATH
 *         --keys N --ttl MS --seed S --final-file PATH
 *
 * A run: log the acquire's invoke (`mode=cmd`); start batonctl lock
 * --ttl TTL --grace TTL/3 --wait 2*TTL+5000 with the command, which logs
 * the acquire's ok and hands the token over a pipe; hold TTL/6 to TTL/3
 * (so that some acquire succeeds at least every 2 s, for L2); log the
 * release's invoke and end the hold with SIGINT to batonctl, which passes
 * it on to the command (SIGTERM is the lock's loss: the command exits at
 * once, lingers, lingers past the grace, or ignores it, at random); log
 * how batonctl ended. batonctl cannot tell a release from a session that
 * ran out meanwhile (both exit 0), so a release is `ok` only in the final
 * run (phase=final, after the last heal), `info` otherwise; `fail` when
 * batonctl said the lock was lost (121: it released nothing).
 *
 * Once --final-file exists: one final run (retried for up to 15 s), then
 * exit 0. SIGTERM: end the current run's hold, then exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "history_out.h"

#define NS_PER_MS       UINT64_C(1000000)
#define FINAL_BUDGET_MS 15000 /* L1: acquire + release within 15 s */
#define END_BOUND_MS    60000 /* a batonctl told to end, SIGKILLed after */
#define RUNS_MAX        998   /* p = id * 1000 + run; 999 is an observer's */
#define ERR_MAX         8192

struct config {
        int id;
        const char *endpoints, *history, *batonctl, *command, *log;
        const char *pid_file, *final_file;
        uint32_t keys, ttl_ms;
        uint64_t seed;
};

/* One run of batonctl. */
struct run {
        uint64_t p;
        char key[32];
        bool final;
        pid_t pid;
        int tok_fd, err_fd;
        char token[32]; /* "" until the command reported it */
        bool told;      /* the release's invoke logged, SIGINT sent */
        char err[ERR_MAX];
        size_t n_err;
        int status; /* exit code, 128 + signal */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

static uint64_t now_ms(void)
{
        return history_now_ns() / NS_PER_MS;
}

/* splitmix64: one seed, one sequence. */
static uint64_t rnd(uint64_t *s)
{
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static uint64_t rnd_in(uint64_t *s, uint64_t lo, uint64_t hi)
{
        return lo + rnd(s) % (hi - lo + 1);
}

static void log_line(const struct config *c, const struct run *r,
                     const char *type, const char *f, const char *err)
{
        struct history_line l;
        int fd = history_open(c->history);

        if (fd < 0) {
                perror("chaos-cmdworker: history");
                exit(3);
        }
        history_line_start(&l, history_now_ns(), r->p, c->id, type, f, r->key);
        if (strcmp(f, "acquire") == 0 && strcmp(type, "invoke") == 0) {
                history_line_u64(&l, "wait", 2 * c->ttl_ms + 5000);
        }
        if (strcmp(f, "release") == 0) {
                history_line_str(&l, "token", r->token);
        }
        if (err != NULL) {
                history_line_str(&l, "err", err);
        }
        history_line_str(&l, "mode", "cmd");
        if (r->final) {
                history_line_str(&l, "phase", "final");
        }
        if (history_line_write(fd, &l) != 0) {
                perror("chaos-cmdworker: history");
                exit(3);
        }
        close(fd);
}

/* The pid of the running batonctl, for the nemeses (written whole). */
static void write_pid(const struct config *c, pid_t pid)
{
        char tmp[4200];
        FILE *f;

        snprintf(tmp, sizeof tmp, "%s.new", c->pid_file);
        f = fopen(tmp, "w");
        if (f == NULL) {
                return;
        }
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
        rename(tmp, c->pid_file);
}

/* What the command does on SIGTERM (the lock's loss), at random: exit at
 * once, linger within the grace, linger past it, or ignore it. */
static void on_term_arg(const struct config *c, uint64_t *seed, char *out,
                        size_t cap)
{
        uint32_t grace = c->ttl_ms / 3;

        switch (rnd(seed) % 5) {
        case 0:
        case 1:
                snprintf(out, cap, "exit");
                break;
        case 2:
                snprintf(out, cap, "linger:%" PRIu64,
                         rnd_in(seed, 0, grace / 2));
                break;
        case 3:
                snprintf(out, cap, "linger:%u", 10 * grace);
                break;
        default:
                snprintf(out, cap, "ignore");
                break;
        }
}

static int start(const struct config *c, struct run *r, uint64_t hold_ms,
                 uint64_t *seed)
{
        char ttl[16], grace[16], wait[16], w[16], p[32], fd[16], max[32];
        char on_term[32];
        int tok[2], err[2];

        snprintf(ttl, sizeof ttl, "%u", c->ttl_ms);
        snprintf(grace, sizeof grace, "%u", c->ttl_ms / 3);
        snprintf(wait, sizeof wait, "%u", 2 * c->ttl_ms + 5000);
        snprintf(w, sizeof w, "%d", c->id);
        snprintf(p, sizeof p, "%" PRIu64, r->p);
        snprintf(max, sizeof max, "%" PRIu64, hold_ms + 3 * c->ttl_ms);
        on_term_arg(c, seed, on_term, sizeof on_term);
        /* The token's pipe: its write end goes to the command, through
         * batonctl and the watchdog; nothing else of ours does. */
        if (pipe2(tok, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
                return -1;
        }
        snprintf(fd, sizeof fd, "%d", tok[1]);
        r->pid = fork();
        if (r->pid < 0) {
                return -1;
        }
        if (r->pid == 0) {
                const char *argv[] = {c->batonctl,
                                      "--endpoints",
                                      c->endpoints,
                                      "lock",
                                      r->key,
                                      "--ttl",
                                      ttl,
                                      "--grace",
                                      grace,
                                      "--wait",
                                      wait,
                                      "--",
                                      c->command,
                                      "--log",
                                      c->log,
                                      "--history",
                                      c->history,
                                      "--worker",
                                      w,
                                      "--process",
                                      p,
                                      "--token-fd",
                                      fd,
                                      "--max-ms",
                                      max,
                                      "--on-term",
                                      on_term,
                                      r->final ? "--final" : NULL,
                                      NULL};
                fcntl(tok[1], F_SETFD, 0);
                dup2(err[1], 2);
                execv(c->batonctl, (char *const *)argv);
                _exit(99);
        }
        close(tok[1]);
        close(err[1]);
        r->tok_fd = tok[0];
        r->err_fd = err[0];
        fcntl(r->err_fd, F_SETFL, O_NONBLOCK);
        write_pid(c, r->pid);
        return 0;
}

/* batonctl's stderr: kept for the release's verdict, copied to ours. */
static void read_err(struct run *r)
{
        char buf[1024];
        ssize_t n;

        while (r->err_fd >= 0 && (n = read(r->err_fd, buf, sizeof buf)) > 0) {
                size_t room = ERR_MAX - 1 - r->n_err;
                size_t k = (size_t)n < room ? (size_t)n : room;
                memcpy(r->err + r->n_err, buf, k);
                r->n_err += k;
                r->err[r->n_err] = '\0';
                if (write(2, buf, (size_t)n) < 0) {
                        /* our stderr is the run's log: nothing to do */
                }
        }
}

static void read_token(struct run *r)
{
        ssize_t n = read(r->tok_fd, r->token, sizeof r->token - 1);

        r->token[n > 0 ? n : 0] = '\0';
        r->token[strcspn(r->token, "\n")] = '\0';
        close(r->tok_fd);
        r->tok_fd = -1;
}

/* Wait for the token, hold, end the hold, wait for batonctl's end. */
static void supervise(const struct config *c, struct run *r, uint64_t hold_ms)
{
        uint64_t hold_end = 0, told = 0;
        int st;

        for (;;) {
                struct pollfd pfd[2] = {{r->tok_fd, POLLIN, 0},
                                        {r->err_fd, POLLIN, 0}};
                uint64_t now;

                if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
                        r->status = WIFEXITED(st) ? WEXITSTATUS(st)
                                                  : 128 + WTERMSIG(st);
                        break;
                }
                if (poll(pfd, 2, 10) > 0) {
                        if (r->tok_fd >= 0 && pfd[0].revents != 0) {
                                read_token(r);
                                hold_end = now_ms() + hold_ms;
                        }
                        read_err(r);
                }
                now = now_ms();
                if (told == 0 && r->token[0] != '\0' &&
                    (now >= hold_end || stop)) {
                        log_line(c, r, "invoke", "release", NULL);
                        r->told = true;
                        kill(r->pid, SIGINT);
                        told = now;
                } else if (told == 0 && stop && r->token[0] == '\0') {
                        kill(r->pid, SIGINT); /* still waiting: give up */
                        told = now;
                }
                if (told != 0 && now >= told + END_BOUND_MS) {
                        kill(r->pid, SIGKILL);
                }
        }
        read_err(r);
        if (r->tok_fd >= 0) { /* the command may have told it last */
                struct pollfd pfd = {r->tok_fd, POLLIN, 0};
                if (poll(&pfd, 1, 0) > 0) {
                        read_token(r);
                } else {
                        close(r->tok_fd);
                        r->tok_fd = -1;
                }
        }
        close(r->err_fd);
        r->err_fd = -1;
}

/* Log how the run ended; 0 when it acquired and released for sure. */
static int conclude(const struct config *c, struct run *r)
{
        char err[32];

        if (r->status >= 128) {
                snprintf(err, sizeof err, "SIGNAL_%d", r->status - 128);
        } else {
                snprintf(err, sizeof err, "EXIT_%d", r->status);
        }
        if (r->token[0] == '\0') {
                log_line(c, r, "info", "acquire", err);
                return -1;
        }
        if (!r->told) {
                /* batonctl ended before the hold did (killed, or the lock
                 * lost): whatever it released, it did from here on. */
                log_line(c, r, "invoke", "release", NULL);
        }
        if (r->status == 121) {
                log_line(c, r, "fail", "release", "LOST");
                return -1;
        }
        if (r->status == 0 && strstr(r->err, "batonctl: release:") == NULL) {
                log_line(c, r, r->final ? "ok" : "info", "release",
                         r->final ? NULL : "UNCONFIRMED");
                return 0;
        }
        log_line(c, r, "info", "release", err);
        return -1;
}

/* One run: 0 when it acquired and released for sure. */
static int run_once(const struct config *c, uint64_t p, bool final,
                    uint64_t *seed)
{
        uint64_t hold_ms =
            final ? 50 : rnd_in(seed, c->ttl_ms / 6, c->ttl_ms / 3);
        struct run r;

        memset(&r, 0, sizeof r);
        r.p = p;
        r.final = final;
        r.tok_fd = r.err_fd = -1;
        snprintf(r.key, sizeof r.key, "supervise-%u", c->id % c->keys);
        log_line(c, &r, "invoke", "acquire", NULL);
        if (start(c, &r, hold_ms, seed) != 0) {
                log_line(c, &r, "fail", "acquire", "NOSTART");
                return -1;
        }
        supervise(c, &r, hold_ms);
        return conclude(c, &r);
}

static void usage(void)
{
        fprintf(stderr,
                "usage: chaos-cmdworker --id J --endpoints E --history FILE "
                "--batonctl PATH\n"
                "           --command PATH --log PATH --pid-file PATH "
                "--keys N --ttl MS\n"
                "           --seed S --final-file PATH\n");
        exit(2);
}

static void parse(int argc, char **argv, struct config *c)
{
        static const struct option longs[] = {
            {"id", required_argument, NULL, 'i'},
            {"endpoints", required_argument, NULL, 'e'},
            {"history", required_argument, NULL, 'h'},
            {"batonctl", required_argument, NULL, 'b'},
            {"command", required_argument, NULL, 'c'},
            {"log", required_argument, NULL, 'l'},
            {"pid-file", required_argument, NULL, 'P'},
            {"keys", required_argument, NULL, 'k'},
            {"ttl", required_argument, NULL, 't'},
            {"seed", required_argument, NULL, 's'},
            {"final-file", required_argument, NULL, 'f'},
            {NULL, 0, NULL, 0},
        };
        int o;

        memset(c, 0, sizeof *c);
        c->keys = 1;
        c->ttl_ms = 3000;
        while ((o = getopt_long(argc, argv, "", longs, NULL)) != -1) {
                switch (o) {
                case 'i':
                        c->id = atoi(optarg);
                        break;
                case 'e':
                        c->endpoints = optarg;
                        break;
                case 'h':
                        c->history = optarg;
                        break;
                case 'b':
                        c->batonctl = optarg;
                        break;
                case 'c':
                        c->command = optarg;
                        break;
                case 'l':
                        c->log = optarg;
                        break;
                case 'P':
                        c->pid_file = optarg;
                        break;
                case 'k':
                        c->keys = (uint32_t)strtoul(optarg, NULL, 10);
                        break;
                case 't':
                        c->ttl_ms = (uint32_t)strtoul(optarg, NULL, 10);
                        break;
                case 's':
                        c->seed = strtoull(optarg, NULL, 10);
                        break;
                case 'f':
                        c->final_file = optarg;
                        break;
                default:
                        usage();
                }
        }
        if (c->id <= 0 || c->endpoints == NULL || c->history == NULL ||
            c->batonctl == NULL || c->command == NULL || c->log == NULL ||
            c->pid_file == NULL || c->final_file == NULL || c->keys == 0 ||
            c->ttl_ms < 600) {
                usage();
        }
}

int main(int argc, char **argv)
{
        struct sigaction sa = {0};
        struct config c;
        uint64_t seed, runs = 0, final_end = 0;

        parse(argc, argv, &c);
        seed = c.seed;
        sa.sa_handler = on_signal;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        while (!stop) {
                bool final = access(c.final_file, F_OK) == 0;

                if (final && final_end == 0) {
                        final_end = now_ms() + FINAL_BUDGET_MS;
                }
                if ((final && now_ms() >= final_end) || runs >= RUNS_MAX) {
                        /* L1 tells it: no final acquire and release. */
                        fprintf(stderr,
                                "chaos-cmdworker %d: no final "
                                "acquire and release\n",
                                c.id);
                        return 0;
                }
                if (!final && runs >= RUNS_MAX - 10) {
                        usleep(100 * 1000); /* the rest is the final's */
                        continue;
                }
                runs++;
                if (run_once(&c, (uint64_t)c.id * 1000 + runs, final, &seed) ==
                        0 &&
                    final) {
                        return 0;
                }
        }
        return 0;
}

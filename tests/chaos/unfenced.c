/*
 * chaos-unfenced: the command the supervise workload runs under `batonctl
 * lock NAME -- CMD` (docs/chaos.md): a writer of the unfenced register, a
 * file that takes every write and checks no token, as a resource that
 * cannot check tokens would. It trusts batonctl's promise that it is dead
 * before anyone else can hold the lock; checker S15 holds batonctl to it.
 *
 *     chaos-unfenced --log RUN/unfenced.log --history RUN/history/wJ.log
 *         --worker J --process P --token-fd N --max-ms MS
 *         [--on-term exit|ignore|linger:MS] [--final]
 *
 * From $BATON_LOCK and $BATON_TOKEN (batonctl's) it logs the acquire's ok
 * to the worker's history (`mode=cmd`: the command, not the worker, knows
 * the token), writes the token to fd N for the worker and closes it, then
 * writes one line to the log every 2 ms:
 *
 *     t=<ns> w=<J> p=<P> key=<lock> token=<T> pid=<pid> n=<seq> [phase=term]
 *
 * each with one write(2) on a file opened with O_APPEND, so the file's
 * order is the order of the writes and `t` (CLOCK_MONOTONIC, taken just
 * before the write) is never after the write. SIGINT (the worker ending
 * its hold, passed on by batonctl) ends it at once, exit 0. SIGTERM (the
 * lock lost: batonctl or its watchdog stopping it) as --on-term says:
 * exit at once (the default), ignore it, or go on writing for MS more
 * (`phase=term`), then exit 0; SIGKILL ends those. After --max-ms it exits
 * 0 on its own: a command nothing stops (batonctl-nowatchdog's, its
 * batonctl killed) writes that long.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "history_out.h"

#define NS_PER_MS UINT64_C(1000000)
#define WRITE_MS  2 /* between two writes */

static volatile sig_atomic_t got_int, got_term;

static void on_signal(int sig)
{
        if (sig == SIGINT) {
                got_int = 1;
        } else {
                got_term = 1;
        }
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

        nanosleep(&ts, NULL); /* a signal cuts it short: look at it */
}

static void usage(void)
{
        fprintf(stderr,
                "usage: chaos-unfenced --log PATH --history PATH --worker J "
                "--process P --token-fd N --max-ms MS\n"
                "           [--on-term exit|ignore|linger:MS] [--final]\n");
        exit(2);
}

struct opts {
        const char *log, *history;
        long worker, token_fd;
        unsigned long long process;
        uint64_t max_ms;
        int64_t linger_ms; /* -1: exit at once on SIGTERM; -2: ignore it */
        bool final;
};

static void parse(int argc, char **argv, struct opts *o)
{
        static const struct option longs[] = {
            {"log", required_argument, NULL, 'l'},
            {"history", required_argument, NULL, 'h'},
            {"worker", required_argument, NULL, 'w'},
            {"process", required_argument, NULL, 'p'},
            {"token-fd", required_argument, NULL, 't'},
            {"max-ms", required_argument, NULL, 'm'},
            {"on-term", required_argument, NULL, 'o'},
            {"final", no_argument, NULL, 'f'},
            {NULL, 0, NULL, 0},
        };
        int c;

        memset(o, 0, sizeof *o);
        o->token_fd = -1;
        o->linger_ms = -1;
        while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
                switch (c) {
                case 'l':
                        o->log = optarg;
                        break;
                case 'h':
                        o->history = optarg;
                        break;
                case 'w':
                        o->worker = strtol(optarg, NULL, 10);
                        break;
                case 'p':
                        o->process = strtoull(optarg, NULL, 10);
                        break;
                case 't':
                        o->token_fd = strtol(optarg, NULL, 10);
                        break;
                case 'm':
                        o->max_ms = strtoull(optarg, NULL, 10);
                        break;
                case 'f':
                        o->final = true;
                        break;
                case 'o':
                        if (strcmp(optarg, "exit") == 0) {
                                o->linger_ms = -1;
                        } else if (strcmp(optarg, "ignore") == 0) {
                                o->linger_ms = -2;
                        } else if (strncmp(optarg, "linger:", 7) == 0) {
                                o->linger_ms = strtoll(optarg + 7, NULL, 10);
                        } else {
                                usage();
                        }
                        break;
                default:
                        usage();
                }
        }
        if (o->log == NULL || o->history == NULL || o->max_ms == 0) {
                usage();
        }
}

/* The acquire's ok in the worker's history, and the token to the worker. */
static void report_grant(const struct opts *o, const char *lock,
                         const char *token)
{
        struct history_line l;
        char line[32];
        int fd = history_open(o->history);
        int n;

        if (fd >= 0) {
                history_line_start(&l, history_now_ns(), o->process,
                                   (int)o->worker, "ok", "acquire", lock);
                history_line_str(&l, "token", token);
                history_line_str(&l, "mode", "cmd");
                if (o->final) {
                        history_line_str(&l, "phase", "final");
                }
                if (history_line_write(fd, &l) != 0) {
                        perror("chaos-unfenced: history");
                }
                close(fd);
        }
        if (o->token_fd >= 0) {
                n = snprintf(line, sizeof line, "%s\n", token);
                if (write((int)o->token_fd, line, (size_t)n) != n) {
                        perror("chaos-unfenced: token fd");
                }
                close((int)o->token_fd);
        }
}

/* One write to the unfenced register. */
static void put(const struct opts *o, int fd, const char *lock,
                const char *token, uint64_t n, bool term)
{
        char line[512];
        int len = snprintf(line, sizeof line,
                           "t=%llu w=%ld p=%llu key=%s token=%s pid=%d "
                           "n=%llu%s\n",
                           (unsigned long long)history_now_ns(), o->worker,
                           o->process, lock, token, (int)getpid(),
                           (unsigned long long)n, term ? " phase=term" : "");

        if (len < 0 || (size_t)len >= sizeof line ||
            write(fd, line, (size_t)len) != len) {
                perror("chaos-unfenced: write");
                exit(3);
        }
}

int main(int argc, char **argv)
{
        const char *lock = getenv("BATON_LOCK");
        const char *token = getenv("BATON_TOKEN");
        struct sigaction sa = {0};
        uint64_t end, n = 0;
        bool lingering = false;
        struct opts o;
        int fd;

        parse(argc, argv, &o);
        if (lock == NULL || token == NULL || strchr(lock, ' ') != NULL) {
                fprintf(stderr, "chaos-unfenced: no BATON_LOCK and "
                                "BATON_TOKEN: run it under batonctl lock\n");
                return 2;
        }
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        if (o.linger_ms == -2) {
                sa.sa_handler = SIG_IGN;
        }
        sigaction(SIGTERM, &sa, NULL);
        fd = open(o.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
                fprintf(stderr, "chaos-unfenced: %s: %s\n", o.log,
                        strerror(errno));
                return 3;
        }
        report_grant(&o, lock, token);
        end = history_now_ns() + o.max_ms * NS_PER_MS;
        while (!got_int && history_now_ns() < end) {
                if (got_term && !lingering) {
                        if (o.linger_ms == -1) {
                                return 0;
                        }
                        /* A command slow to stop: it writes on. */
                        lingering = true;
                        end = history_now_ns() +
                              (uint64_t)o.linger_ms * NS_PER_MS;
                }
                put(&o, fd, lock, token, ++n, lingering);
                sleep_ms(WRITE_MS);
        }
        return 0;
}

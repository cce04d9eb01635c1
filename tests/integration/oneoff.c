/* batond processes outside a harness cluster (oneoff.h). */
#include "oneoff.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../lib/tclient.h"
#include "tlsfiles.h"

static void add(struct oneoff *o, const char *arg)
{
        if (o->argc < ONEOFF_MAX_ARGS) {
                snprintf(o->store[o->argc], sizeof o->store[o->argc], "%s",
                         arg);
                o->argv[o->argc] = o->store[o->argc];
                o->argc++;
                o->argv[o->argc] = NULL;
        }
}

void oneoff_init(struct oneoff *o, const char *batond, const char *log)
{
        memset(o, 0, sizeof *o);
        snprintf(o->log, sizeof o->log, "%s", log);
        add(o, batond);
}

void oneoff_args(struct oneoff *o, ...)
{
        const char *arg;
        va_list ap;

        va_start(ap, o);
        while ((arg = va_arg(ap, const char *)) != NULL) {
                add(o, arg);
        }
        va_end(ap);
}

void oneoff_node_args(struct oneoff *o, const struct harness *h, unsigned id,
                      const char *data_dir)
{
        const struct harness_node *nd = &h->nodes[id - 1];
        char *tls[16];
        char buf[128];
        unsigned i, n = 0;

        snprintf(buf, sizeof buf, "%u", id);
        oneoff_args(o, "--id", buf, "--data-dir", data_dir, "--metrics-address",
                    nd->metrics_address, NULL);
        tlsfiles_node_args(id, tls, &n);
        for (i = 0; i < n; i++) {
                add(o, tls[i]);
        }
        for (i = 0; i < h->n; i++) {
                snprintf(buf, sizeof buf, "%u %s %s", h->nodes[i].id,
                         h->nodes[i].raft_address, h->nodes[i].client_address);
                oneoff_args(o, "--member", buf, NULL);
        }
}

int oneoff_start(struct oneoff *o)
{
        pid_t parent = getpid();
        int fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

        if (fd < 0) {
                return -1;
        }
        fflush(stdout);
        o->started_ms = tclient_now_ms();
        o->pid = fork();
        if (o->pid < 0) {
                o->pid = 0;
                close(fd);
                return -1;
        }
        if (o->pid == 0) {
                signal(SIGPIPE, SIG_DFL);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent) {
                        _exit(127);
                }
                dup2(fd, STDOUT_FILENO);
                dup2(fd, STDERR_FILENO);
                execv(o->argv[0], o->argv);
                dprintf(STDERR_FILENO, "exec %s: %s\n", o->argv[0],
                        strerror(errno));
                _exit(127);
        }
        close(fd);
        return 0;
}

static void ended(struct oneoff *o, int wstatus)
{
        o->ended_ms = tclient_now_ms();
        o->status =
            WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
        o->pid = 0;
}

bool oneoff_wait(struct oneoff *o, int ms)
{
        int64_t end = tclient_now_ms() + ms;
        int wstatus;
        pid_t rv;

        if (o->pid == 0) {
                return true;
        }
        do {
                rv = waitpid(o->pid, &wstatus, WNOHANG);
                if (rv == o->pid) {
                        ended(o, wstatus);
                        return true;
                }
                usleep(10 * 1000);
        } while (tclient_now_ms() < end);
        return false;
}

void oneoff_stop(struct oneoff *o)
{
        if (o->pid == 0) {
                return;
        }
        kill(o->pid, SIGTERM);
        if (!oneoff_wait(o, 3000)) {
                kill(o->pid, SIGKILL);
                oneoff_wait(o, 3000);
        }
}

bool oneoff_log_has(const struct oneoff *o, const char *needle)
{
        char line[4096];
        bool found = false;
        FILE *f = fopen(o->log, "r");

        while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
                found = strstr(line, needle) != NULL;
        }
        if (f != NULL) {
                fclose(f);
        }
        return found;
}

void oneoff_log_line(const struct oneoff *o, const char *needle, char *buf,
                     size_t cap)
{
        char line[4096], last[4096] = "(empty log)", match[4096] = "";
        FILE *f = fopen(o->log, "r");

        while (f != NULL && fgets(line, sizeof line, f) != NULL) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(last, sizeof last, "%s", line);
                if (strstr(line, needle) != NULL) {
                        snprintf(match, sizeof match, "%s", line);
                }
        }
        if (f != NULL) {
                fclose(f);
        }
        snprintf(buf, cap, "%s", match[0] != '\0' ? match : last);
}

void oneoff_listing(const char *dir, char *out, size_t cap)
{
        struct dirent **names;
        char path[PATH_MAX + 256], lock[64] = "";
        struct stat st;
        size_t off = 0;
        int i, n = scandir(dir, &names, NULL, alphasort);
        FILE *f;

        snprintf(out, cap, "(missing)");
        if (n < 0) {
                return;
        }
        out[0] = '\0';
        for (i = 0; i < n; i++) {
                snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
                if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 &&
                    off < cap) {
                        off += (size_t)snprintf(out + off, cap - off,
                                                "%s %lld; ", names[i]->d_name,
                                                (long long)st.st_size);
                }
                free(names[i]);
        }
        free(names);
        snprintf(path, sizeof path, "%s/batond.lock", dir);
        if ((f = fopen(path, "r")) != NULL) {
                if (fgets(lock, sizeof lock, f) == NULL) {
                        lock[0] = '\0';
                }
                fclose(f);
                lock[strcspn(lock, "\n")] = '\0';
        }
        if (off < cap) {
                snprintf(out + off, cap - off, "lock holder '%s'", lock);
        }
}

int oneoff_listen(int *port)
{
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons((uint16_t)*port);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(fd, 4) != 0 ||
            getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
                if (fd >= 0) {
                        close(fd);
                }
                return -1;
        }
        *port = ntohs(sa.sin_port);
        return fd;
}

int oneoff_free_port(void)
{
        int port = 0;
        int fd = oneoff_listen(&port);

        if (fd < 0) {
                return 0;
        }
        close(fd);
        return port;
}

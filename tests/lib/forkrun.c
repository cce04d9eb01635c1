/* A function run in a forked child, its stderr captured (forkrun.h). */
#include "forkrun.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int forkrun(void (*fn)(void *arg), void *arg, char *said, size_t cap)
{
        size_t got = 0;
        int status = 0, fds[2];
        ssize_t n;
        pid_t pid;

        if (pipe(fds) != 0) {
                return -1;
        }
        pid = fork();
        if (pid < 0) {
                close(fds[0]);
                close(fds[1]);
                return -1;
        }
        if (pid == 0) {
                close(fds[0]);
                dup2(fds[1], STDERR_FILENO);
                fn(arg);
                _exit(0);
        }
        close(fds[1]);
        while (got + 1 < cap &&
               (n = read(fds[0], said + got, cap - 1 - got)) > 0) {
                got += (size_t)n;
        }
        said[got] = '\0';
        close(fds[0]);
        return waitpid(pid, &status, 0) == pid ? status : -1;
}

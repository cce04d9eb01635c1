/* batond under a service manager (systemd's Type=notify, sd_notify(3)):
 * READY=1 once the node serves, STATUS= lines that say what it is doing,
 * WATCHDOG=1 from the event loop when the manager asks for it, and
 * STOPPING=1 at shutdown. Without NOTIFY_SOCKET in the environment every
 * call does nothing. Nothing here blocks: a manager whose queue is full
 * misses pings, and is told the rest at the next timer tick. */
#ifndef SERVER_SERVICE_H
#define SERVER_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <uv.h>

#include "../raft/node.h"

/* How often the STATUS= line is brought up to date. */
#define SERVICE_STATUS_PERIOD_MS 1000

struct service {
        uv_loop_t *loop;
        struct node *node; /* borrowed */
        uv_timer_t status; /* STATUS= when what the node does changed */
        uv_timer_t ping;   /* WATCHDOG=1 every half WATCHDOG_USEC */
        bool notify;       /* NOTIFY_SOCKET is set */
        bool watchdog; /* the manager asked for pings (sd_watchdog_enabled) */
        bool stopping;
        bool timers; /* the timers are initialised and not closed */
        uint64_t watchdog_usec;
        char last[160]; /* the last STATUS= text sent, or owed */
        /* The manager's socket (-1: none, or sd_notify sends). */
        int fd;
        struct sockaddr_un addr;
        socklen_t addr_len;
        /* What the manager has not been told yet: its queue was full. */
        bool owe_ready, owe_stopping, owe_status;
        uint64_t pings_dropped; /* WATCHDOG=1 its full queue refused */
};

/*
 * Tell the service manager that the node serves (raft started, the client
 * and metrics ports listening): READY=1 with a STATUS= line, then keep
 * STATUS= current and, when WATCHDOG_USEC asks for it, ping WATCHDOG=1
 * from `loop` at half that period, so that a loop that hangs is noticed.
 * `node` is borrowed until service_close(). Logs what it sends at debug
 * and what fails at warn; never fails the node.
 */
void service_ready(struct service *s, uv_loop_t *loop, struct node *node);

/* STOPPING=1 with `why` as STATUS= (the node is shutting down); pings go
 * on until service_close(), since a leadership transfer takes a while. */
void service_stopping(struct service *s, const char *why);

/* Stop the timers (their handles close on the loop). */
void service_close(struct service *s);

/* The STATUS= text for a node in `role` (enum baton_node_role) with
 * `leader` (0: none) in `term`, being node `self`. Exposed for tests. */
void service_describe(char *buf, size_t cap, uint8_t role, uint64_t self,
                      uint64_t leader, uint64_t term, bool serving);

#endif /* SERVER_SERVICE_H */

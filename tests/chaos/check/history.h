/* The workers' histories of a chaos run, parsed and paired into operations
 * (docs/chaos.md, "History lines"). */
#ifndef CHAOS_CHECK_HISTORY_H
#define CHAOS_CHECK_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* How an operation completed. */
enum history_type {
        HISTORY_OK = 0,
        HISTORY_FAIL,
        HISTORY_INFO,
        HISTORY_NONE, /* no completion logged: as unknown as an info */
};

/* The operation (`f=`). */
enum history_f {
        HISTORY_ACQUIRE = 0,
        HISTORY_RELEASE,
        HISTORY_HOLDER,
        HISTORY_CLOSE,
        HISTORY_READ,
        HISTORY_WRITE,
        HISTORY_OTHER,
};

/* Sessions the history never names get an id of their own with this bit
 * set (and the process id below it), so they never equal a real one. */
#define HISTORY_SESSION_UNKNOWN (UINT64_C(1) << 63)

/* An invoke line paired with the completion line of the same process. */
struct history_op {
        int64_t invoke_ns;
        int64_t complete_ns;  /* INT64_MAX when no completion was logged */
        uint64_t process;     /* p= */
        int worker;           /* w= */
        int type;             /* enum history_type */
        int f;                /* enum history_f */
        int key;              /* key= as an id of the run's names; -1: none */
        int64_t wait_ms;      /* acquire: wait= of the invoke; -2 if absent */
        char err[40];         /* err= of the completion, "" if none */
        uint64_t session;     /* session= of the completion, 0 if absent */
        uint64_t session_eff; /* the session it acted for (below) */
        uint64_t token;
        uint64_t holder;
        uint64_t value;
        uint64_t version;
        uint64_t index;
        int64_t lease; /* lease= of the completion: absolute ns */
        bool has_token, has_holder, has_value, has_version, has_index;
        bool has_lease;
        bool final;  /* phase=final on the invoke or the completion */
        bool shared; /* mode=shared: an acquire of the read lock */
        bool sem;    /* mode=semaphore: an acquire of a semaphore's permits */
        bool multi;  /* one name of a multi-lock's acquire or release
                        (names=): the line made one op per name */
        bool leader; /* mode=leader: an election's campaign or
                        resignation (the leadership an exclusive grant) */
        bool cmd;    /* mode=cmd: the supervise workload's, through
                        batonctl lock -- CMD (its ok written by CMD) */
        uint32_t limit;   /* a semaphore's acquire: limit= (0 if absent) */
        uint32_t permits; /* and permits= (0 if absent) */
        unsigned file;    /* index into struct history.files */
        unsigned line;    /* line number of the invoke, from 1 */
};

/* What an observer's line (f=observe) says. */
enum history_obs_type {
        HISTORY_OBS_OPEN = 0,  /* a watch began: from now, or after `index`,
                                  `ord` (from=last) */
        HISTORY_OBS_EVENT,     /* an event it was told */
        HISTORY_OBS_COMPACTED, /* BATON_ECOMPACTED: events lost, from now */
        HISTORY_OBS_END,       /* the watch ended otherwise: resumed */
};

/* The kinds of event (kind=), as enum baton_event_kind. */
enum history_obs_kind {
        HISTORY_OBS_GRANTED = 1,
        HISTORY_OBS_RELEASED = 2,
        HISTORY_OBS_PROCLAIMED = 3,
};

/* One line of an observer, in the order it wrote them (its file's). */
struct history_obs {
        int64_t t;
        int worker;     /* w= */
        unsigned file;  /* index into struct history.files */
        unsigned line;  /* from 1 */
        int type;       /* enum history_obs_type */
        int key;        /* key=: the name watched, or the event's name */
        bool from_last; /* OPEN: resumed after (index, ord) */
        int kind;       /* EVENT: enum history_obs_kind, 0 unknown */
        uint64_t index;
        uint32_t ord;
        uint64_t session, owner, token;
        char mode[16];   /* EVENT: mode= (leader, exclusive, ...) */
        char value[256]; /* EVENT: value=, "" when absent */
        char err[40];    /* COMPACTED, END: err= */
        bool has_pos;    /* COMPACTED, END: index= and ord= (the last
                            event seen) */
};

/* The most names= one line may list (a multi-lock's); more are skipped. */
#define HISTORY_MAX_NAMES 16

/*
 * Every worker's history merged, ordered by invoke time (ties: file, then
 * line). An acquire or release with names=A,B,... (a multi-lock's, logged
 * as one call: key= is its first name) is one operation per name, each
 * with that name as its key and every other field of the lines. `session_eff`
 * is the completion's session when it names one, else the nearest session its
 * process named before it, else the nearest after it, else
 * HISTORY_SESSION_UNKNOWN | process: a process is one handle, so its operations
 * act for the session it last reported (an operation that opened a new session
 * after an expiry reports it itself).
 */
struct history {
        struct history_op *ops;
        size_t n, cap;
        /* The observers' lines (f=observe), by file, then line: no
         * operations. */
        struct history_obs *obs;
        size_t n_obs, cap_obs;
        char **files; /* base names, by file index */
        size_t n_files;
        size_t n_torn;       /* unterminated last lines skipped */
        size_t n_bad;        /* malformed lines skipped */
        size_t n_orphans;    /* completions without an invoke, skipped */
        char first_bad[200]; /* "file:line: why" of the first skipped line */
};

/*
 * Load RUN/history/w*.log from `dir` (the history directory). Lock and
 * register keys are interned into `keys`. A missing directory is an empty
 * history. Returns 0, or -1 with a message in `errmsg` when a file exists
 * but cannot be read.
 */
int history_load(struct history *h, const char *dir, struct util_strtab *keys,
                 char *errmsg, size_t cap);

/* Free what history_load() allocated (accepts a zeroed struct). */
void history_free(struct history *h);

/* "acquire", "ok", ...: names as the history spells them. */
const char *history_f_name(int f);
const char *history_type_name(int type);

#endif /* CHAOS_CHECK_HISTORY_H */

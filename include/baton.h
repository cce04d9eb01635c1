/*
 * Baton: a Raft-replicated distributed lock service.
 *
 * This is the only public header. It defines the error codes that every Baton
 * component reports (the server, the client library and the command line
 * tool) and the functions of libbaton.
 */
#ifndef BATON_H
#define BATON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BATON_API
#define BATON_API __attribute__((visibility("default")))
#endif

/*
 * Error codes. Every Baton function returns 0 on success or one of these
 * negative codes. The numbers are part of the wire protocol and never change
 * meaning; new codes are only ever appended.
 */
enum {
        BATON_ENOMEM = -1,       /* out of memory */
        BATON_EINVAL = -2,       /* invalid argument */
        BATON_EMALFORMED = -3,   /* malformed command or frame */
        BATON_EVERSION = -4,     /* unsupported encoding version */
        BATON_ENAME = -5,        /* lock name empty, too long or has a NUL */
        BATON_ENOSESSION = -6,   /* no such session */
        BATON_EEXPIRED = -7,     /* session expired */
        BATON_ECLOSED = -8,      /* session closed by its owner */
        BATON_EBUSY = -9,        /* lock held by another owner */
        BATON_ENOTHOLDER = -10,  /* caller does not hold the lock */
        BATON_ESTALE = -11,      /* token is not the current grant */
        BATON_ETIMEDOUT = -12,   /* wait deadline passed before a grant */
        BATON_ECANCELLED = -13,  /* wait cancelled by its owner */
        BATON_ENOTWAITING = -14, /* no such waiter (granted or gone) */
        BATON_EWAITING = -15,    /* owner already waits for this lock */
        BATON_ETOOMANYSESSIONS = -16, /* session limit reached */
        BATON_ETOOMANYLOCKS = -17,    /* per-session lock limit reached */
        BATON_ETOOMANYWAITERS = -18,  /* per-lock waiter limit reached */
        BATON_EINFLIGHT = -19,        /* too many unacknowledged requests */
        BATON_ESEQ = -20,             /* sequence number already acknowledged */
        BATON_ETTL = -21,             /* session TTL out of range */
        BATON_EUNSUPPORTED = -22,     /* lock mode not supported */
        BATON_EOVERFLOW = -23,        /* reentrancy count would overflow */
        BATON_ECORRUPT = -24,         /* snapshot corrupt or truncated */
        BATON_ENOTFOUND = -25,        /* no such lock */
        BATON_ENOTLEADER = -26,       /* this node is not the leader */
        BATON_EUNKNOWN = -27,         /* outcome unknown: retry, same seq */
        BATON_ETOOBIG = -28,          /* frame larger than the limit */
        BATON_ETOOMANYCONNS = -29,    /* connection limit reached */
        BATON_EUNAVAILABLE = -30,     /* no leader: cluster unavailable */
        BATON_ESHUTDOWN = -31,        /* node shutting down */
        BATON_EIO = -32,              /* disk or network I/O error */
        BATON_ENOSPC = -33,           /* no space left on the node's disk */
        BATON_ECANTCHANGE = -34,      /* a membership change is in progress */
        BATON_ETIMEOUT = -35,         /* no answer before the deadline */
};

/**
 * Return a static, human-readable description of a Baton error code.
 *
 * Never returns NULL: unknown codes get a generic text. Thread-safe.
 */
BATON_API const char *baton_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* BATON_H */

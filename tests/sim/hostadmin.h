/* test_simhost's operator: TRANSFER, MEMBER_REMOVE and MEMBER_ADD frames
 * sent to the node it believes leads, each answer checked against what
 * the request core and its host promise (hostadmin.c). */
#ifndef TESTS_SIM_HOSTADMIN_H
#define TESTS_SIM_HOSTADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

#include "../../src/proto/proto.h"

struct run;
struct simconn;

/* What the operator has out, or does next, in this order, over and over:
 * a member taken out and brought back, a TRANSFER, a MEMBER_ADD of an id
 * no node answers as. */
enum hostadmin_op {
        HOSTADMIN_REMOVE,
        HOSTADMIN_ADD, /* bringing the removed member back */
        HOSTADMIN_TRANSFER,
        HOSTADMIN_STRANGER,
        HOSTADMIN_N_OPS,
};

/* Negative controls of its checks (test_simhost --break). */
enum hostadmin_break {
        HOSTADMIN_BREAK_NONE,
        HOSTADMIN_BREAK_TRANSFER, /* a TRANSFERRED checked against the
                                     wrong node that handed over */
        HOSTADMIN_BREAK_MEMBER,   /* a change answered 0 checked against
                                     the wrong member */
        HOSTADMIN_BREAK_REFUSAL,  /* BATON_EUNREACHABLE taken for a code
                                     the contract does not give */
};

struct hostadmin {
        struct simconn *conn;
        unsigned node;  /* where it sends: the leader, as far as it knows */
        unsigned cycle; /* ops begun: which one is next */
        unsigned sends; /* of the op out so far */
        int op;         /* enum hostadmin_op, while `busy` */
        bool busy;
        uint64_t next_id;
        uint64_t id; /* of the frame out */
        uint8_t frame[PROTO_HEADER_SIZE + 8 + 2 * (1 + PROTO_ADDRESS_MAX)];
        size_t len;
        unsigned sent_to; /* the node the frame out went to */
        raft_time sent_at, resend_at, next_at;
        bool faulted;    /* a fault struck since the frame out was sent */
        uint64_t to;     /* TRANSFER: the voter asked for (0: any) */
        unsigned target; /* the member taken out, until back (n: none) */
        int brk;         /* enum hostadmin_break */
        /* Counts for the report. */
        unsigned transfers, transferred, removed, added, unreachable;
        unsigned refusals, redirects;
        char bad[300]; /* the first answer against the contract */
};

/* Start on the run's cluster (r->s.n nodes), first acting at `at`. */
void hostadmin_init(struct hostadmin *a, struct run *r, raft_time at, int brk);
/* One step: read answers, check them, send what is due. Once r->stopping,
 * it only brings a removed member back. */
void hostadmin_drive(struct hostadmin *a, struct run *r, raft_time now);
/* Nothing out and no member left out. */
bool hostadmin_idle(const struct hostadmin *a, const struct run *r);
/* After the run converged: every answer kept the contract, and node 0's
 * configuration has every node as a voter again. 0, or -1 with the
 * failure in `reason`. */
int hostadmin_check(struct hostadmin *a, struct run *r, char *reason,
                    size_t cap);
void hostadmin_close(struct hostadmin *a);

#endif /* TESTS_SIM_HOSTADMIN_H */

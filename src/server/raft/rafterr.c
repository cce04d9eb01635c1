/* libraft's error codes in Baton's terms. */
#include "rafterr.h"

#include <raft.h>

#include "../../../include/baton.h"

int rafterr_baton(int raft_rv)
{
        switch (raft_rv) {
        case 0:
                return 0;
        case RAFT_NOMEM:
                return BATON_ENOMEM;
        case RAFT_NOTLEADER:
                return BATON_ENOTLEADER;
        case RAFT_LEADERSHIPLOST:
                return BATON_EUNKNOWN;
        case RAFT_SHUTDOWN:
                return BATON_ESHUTDOWN;
        case RAFT_CANTCHANGE:
                return BATON_ECANTCHANGE;
        case RAFT_NOSPACE:
                return BATON_ENOSPC;
        case RAFT_IOERR:
                return BATON_EIO;
        case RAFT_CORRUPT:
                return BATON_ECORRUPT;
        case RAFT_NOCONNECTION:
                return BATON_EUNAVAILABLE;
        default:
                return BATON_EINVAL;
        }
}

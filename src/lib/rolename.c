/* Raft roles by name. */
#include "rolename.h"

#include "../../include/baton/cluster.h"

const char *role_name(int role)
{
        switch (role) {
        case BATON_ROLE_UNAVAILABLE:
                return "unavailable";
        case BATON_ROLE_FOLLOWER:
                return "follower";
        case BATON_ROLE_CANDIDATE:
                return "candidate";
        case BATON_ROLE_LEADER:
                return "leader";
        default:
                return "unknown";
        }
}

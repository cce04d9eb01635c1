/* libbaton's election calls (include/baton.h) beyond the campaign, which
 * is an acquire (acquire.c): proclaim, resign, and who leads; and the
 * value of any grant, which a proclaim is for an election's leader. */
#include <stdint.h>
#include <string.h>

#include "../../include/baton.h"
#include "client.h"
#include "clock.h"
#include "request.h"

_Static_assert(BATON_VALUE_MAX == COMMAND_VALUE_MAX,
               "baton.h and the protocol agree on a value's length");
_Static_assert((int)BATON_MODE_LEADER == (int)COMMAND_MODE_ELECTION,
               "a holder's mode is the protocol's");

/* PROCLAIM or SET_VALUE (`type`): the value of `owner`'s grant of `name`
 * that `token` names; or EXTEND: its hold time, `hold_ms`. Only the
 * session that holds it can: never opens one. */
static int change_value(baton_client *c, uint8_t type, const char *name,
                        uint64_t owner, uint64_t token, const char *value,
                        uint32_t hold_ms)
{
        size_t value_len = value != NULL ? strlen(value) : 0;
        struct proto_result res;
        struct command k;
        uint8_t len;
        int rv;

        if (c == NULL || value_len > BATON_VALUE_MAX) {
                return BATON_EINVAL;
        }
        rv = client_check_name(name, &len);
        if (rv != 0) {
                return rv;
        }
        owner = client_owner(owner);
        client_lock(c);
        session_tick(&c->core.session, clock_now_ms());
        rv = client_holding_session(c);
        if (rv != 0) {
                client_unlock(c);
                return rv;
        }
        client_command(&k, type, name, len, owner);
        k.token = token;
        k.value = value;
        k.value_len = (uint8_t)value_len;
        k.hold_ms = hold_ms;
        rv = client_run(c, &k,
                        clock_after(clock_now_ms(), c->opts.request_timeout_ms),
                        &res);
        client_unlock(c);
        return client_user_status(rv);
}

int baton_proclaim(baton_client *c, const char *name, uint64_t owner,
                   uint64_t token, const char *value)
{
        return change_value(c, COMMAND_PROCLAIM, name, owner, token, value, 0);
}

int baton_set_value(baton_client *c, const char *name, uint64_t owner,
                    uint64_t token, const char *value)
{
        return change_value(c, COMMAND_SET_VALUE, name, owner, token, value, 0);
}

int baton_extend(baton_client *c, const char *name, uint64_t owner,
                 uint64_t token, uint32_t hold_ms)
{
        if (hold_ms == 0) {
                return BATON_EINVAL;
        }
        return change_value(c, COMMAND_EXTEND, name, owner, token, NULL,
                            hold_ms);
}

int baton_resign(baton_client *c, const char *name, uint64_t owner,
                 uint64_t token)
{
        return baton_release(c, name, owner, token);
}

int baton_leader(baton_client *c, const char *name, struct baton_leader *out)
{
        struct request *r;
        uint8_t len;
        int rv;

        if (out != NULL) {
                memset(out, 0, sizeof *out);
        }
        if (c == NULL || out == NULL) {
                return BATON_EINVAL;
        }
        rv = client_check_name(name, &len);
        if (rv != 0) {
                return rv;
        }
        client_lock(c);
        r = request_leader(name, len);
        rv = r == NULL
                 ? BATON_ENOMEM
                 : client_roundtrip(
                       c, r,
                       clock_after(clock_now_ms(), c->opts.request_timeout_ms));
        if (r != NULL && rv == 0) {
                rv = client_status(r);
                if (rv == 0) {
                        *out = *r->leader;
                }
                registry_drop(&c->core.registry, r);
        }
        client_unlock(c);
        return client_user_status(rv);
}

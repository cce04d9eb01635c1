/* The deciding part of libbaton behind one handle. */
#include "core.h"

#include "outcome.h"

int core_init(struct core *k, const struct core_config *cfg,
              const struct core_env *env)
{
        struct registry_owner owner = {&k->session, outcome_final,
                                       outcome_withdraw, cfg->watch_event};
        int rv;

        rv = link_init(&k->link, cfg->endpoints, cfg->n_endpoints, env);
        if (rv != 0) {
                return rv;
        }
        locks_init(&k->locks, env);
        notify_init(&k->notify);
        registry_init(&k->registry, &k->link, env, cfg->ttl_ms, &owner);
        session_init(&k->session, cfg->ttl_ms, env, &k->registry, &k->locks,
                     &k->notify, cfg->client_name);
        k->session.lock_delay_ms = cfg->lock_delay_ms;
        return 0;
}

void core_close(struct core *k)
{
        registry_close(&k->registry);
        link_close(&k->link);
        locks_close(&k->locks);
        notify_close(&k->notify);
}

void core_lease_tick(struct core *k, int64_t now)
{
        session_tick(&k->session, now);
}

bool core_wants_link(const struct core *k)
{
        return registry_busy(&k->registry) || k->session.id != 0;
}

uint64_t core_dial(struct core *k, int64_t now)
{
        link_dial(&k->link, now, core_wants_link(k));
        return k->link.conn;
}

void core_tick(struct core *k, int64_t now)
{
        if (link_up(&k->link)) {
                registry_step(&k->registry, now);
        }
}

int64_t core_next_tick(const struct core *k)
{
        int64_t t = session_next_event(&k->session), r;

        if (link_up(&k->link)) {
                r = registry_next_event(&k->registry);
                t = r < t ? r : t;
        }
        return t;
}

struct notify_event *core_next_notice(struct core *k)
{
        return notify_pop(&k->notify);
}

int core_verdict(const struct core *k, uint64_t mark, const struct request *r,
                 bool expired, char *why, size_t size)
{
        if (expired) {
                return registry_no_answer(&k->registry, mark, r, why, size);
        }
        return registry_unreachable(&k->registry, mark, r, why, size);
}

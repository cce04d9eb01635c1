/* The metrics of quotas per identity (quotametrics.h). */
#include "quotametrics.h"

/* An identity as a label value: backslash, quote and newline escaped,
 * as the text format asks (an identity is up to 255 bytes). */
static const char *label(const struct acl_quota *q, char *buf, size_t size)
{
        size_t i, n = 0;

        for (i = 0; i < q->subject_len && n + 3 < size; i++) {
                char ch = q->subject[i];
                if (ch == '\\' || ch == '"' || ch == '\n') {
                        buf[n++] = '\\';
                        ch = ch == '\n' ? 'n' : ch;
                }
                buf[n++] = ch;
        }
        buf[n] = '\0';
        return buf;
}

void quotametrics_render(struct promtext *o, const struct acl *a,
                         const struct lockfsm *f,
                         const uint64_t refused[ACL_QUOTA_KINDS])
{
        char id[2 * ACL_IDENTITY_MAX + 4];
        uint32_t used[ACL_QUOTA_COUNTED];
        unsigned i;
        int k;

        promtext_put(o, "# HELP baton_quota_refused_total Requests this node "
                        "answered BATON_EQUOTA, by the quota used up.\n"
                        "# TYPE baton_quota_refused_total counter\n");
        for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                promtext_put(o,
                             "baton_quota_refused_total{quota=\"%s\"} %llu\n",
                             acl_quota_name(k), (unsigned long long)refused[k]);
        }
        if (!acl_has_quotas(a)) {
                return;
        }
        promtext_put(o, "# HELP baton_quota_limit A quota's limit: what the "
                        "sessions of an identity (* for the default) may "
                        "have at once, or its watches and requests a second "
                        "on each node.\n"
                        "# TYPE baton_quota_limit gauge\n");
        for (i = 0; i < a->n_quota; i++) {
                const struct acl_quota *q = &a->quota[i];
                for (k = 0; k < ACL_QUOTA_KINDS; k++) {
                        if (q->limit[k] != 0) {
                                promtext_put(o,
                                             "baton_quota_limit{identity=\"%s\""
                                             ",quota=\"%s\"} %u\n",
                                             label(q, id, sizeof id),
                                             acl_quota_name(k), q->limit[k]);
                        }
                }
        }
        promtext_put(o, "# HELP baton_quota_used What the sessions of an "
                        "identity a quota names have now, cluster-wide as "
                        "this node applied it: sessions, locks (held and "
                        "awaited), waiters.\n"
                        "# TYPE baton_quota_used gauge\n");
        for (i = 0; i < a->n_quota; i++) {
                const struct acl_quota *q = &a->quota[i];
                if (q->principal == 0) {
                        continue; /* the default: no one identity's */
                }
                lockfsm_quota_use(f, q->principal, used);
                for (k = 0; k < ACL_QUOTA_COUNTED; k++) {
                        promtext_put(o,
                                     "baton_quota_used{identity=\"%s\","
                                     "quota=\"%s\"} %u\n",
                                     label(q, id, sizeof id), acl_quota_name(k),
                                     used[k]);
                }
        }
}

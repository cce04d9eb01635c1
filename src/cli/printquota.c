/* batonctl's output of the quotas per identity (quota list, set,
 * remove). */
#include "printquota.h"

#include <stdint.h>
#include <string.h>

#include "../lib/quotaname.h"
#include "print.h"

/* The "*" quota: every identity without one of its own. */
#define EVERY_IDENTITY "*"

/* `n` counts of the first kinds as a JSON object by kind name. */
static void put_counts_json(FILE *out, const unsigned *v, int n)
{
        int k;

        fputc('{', out);
        for (k = 0; k < n; k++) {
                fprintf(out, "%s\"%s\":%u", k > 0 ? "," : "", quotaname(k),
                        v[k]);
        }
        fputc('}', out);
}

/* One quota as a JSON object: "subject", then "limits" and "used"
 * (`used` NULL: none), or "removed":true for `limits` NULL. */
static void put_quota_json(FILE *out, const char *subject,
                           const unsigned *limits, const unsigned *used)
{
        fputs("{\"subject\":", out);
        print_json_string(out, subject);
        if (limits == NULL) {
                fputs(",\"removed\":true}", out);
                return;
        }
        fputs(",\"limits\":", out);
        put_counts_json(out, limits, BATON_QUOTA_KINDS);
        if (used != NULL) {
                fputs(",\"used\":", out);
                put_counts_json(out, used, BATON_QUOTA_USED);
        }
        fputc('}', out);
}

/* `limits` as the config file's KIND=N words. */
static const char *limits_text(const unsigned *limits, char *buf, size_t size)
{
        uint32_t l[BATON_QUOTA_KINDS];
        int k;

        for (k = 0; k < BATON_QUOTA_KINDS; k++) {
                l[k] = limits[k];
        }
        return quotaname_format(l, buf, size);
}

void print_quotas(FILE *out, bool json, const struct baton_quotas *quotas)
{
        char text[QUOTANAME_TEXT_MAX];
        unsigned i;

        if (json) {
                fputs("{\"quotas\":[", out);
                for (i = 0; i < quotas->n; i++) {
                        const struct baton_quota *q = &quotas->quotas[i];
                        bool every = strcmp(q->subject, EVERY_IDENTITY) == 0;
                        fputs(i > 0 ? "," : "", out);
                        put_quota_json(out, q->subject, q->limits,
                                       every ? NULL : q->used);
                }
                fputs("]}\n", out);
                return;
        }
        if (quotas->n == 0) {
                fputs("(no quotas: identities are limited only by the "
                      "cluster's own limits)\n",
                      out);
                return;
        }
        for (i = 0; i < quotas->n; i++) {
                const struct baton_quota *q = &quotas->quotas[i];
                fprintf(out, "quota = %s %s", q->subject,
                        limits_text(q->limits, text, sizeof text));
                if (strcmp(q->subject, EVERY_IDENTITY) != 0) {
                        fprintf(out,
                                "  (in use: sessions=%u locks=%u "
                                "waiters=%u)",
                                q->used[BATON_QUOTA_SESSIONS],
                                q->used[BATON_QUOTA_LOCKS],
                                q->used[BATON_QUOTA_WAITERS]);
                }
                fputc('\n', out);
        }
}

void print_quota_changed(FILE *out, bool json, const char *subject,
                         const unsigned *limits)
{
        char text[QUOTANAME_TEXT_MAX];

        if (json) {
                put_quota_json(out, subject, limits, NULL);
                fputc('\n', out);
                return;
        }
        if (limits == NULL) {
                fprintf(out, "quota: %s removed\n", subject);
                return;
        }
        fprintf(out, "quota: %s has %s\n", subject,
                limits_text(limits, text, sizeof text));
}

/* The shared parts of baton-bench's JSON lines (label.h). */
#include "label.h"

#include "../../include/baton.h"

void bench_print_leadership(FILE *f, const struct bench_leadership *b)
{
        fprintf(f,
                ",\"leader_before\":%llu,\"leader_after\":%llu,"
                "\"term_before\":%llu,\"term_after\":%llu",
                (unsigned long long)b->leader_before,
                (unsigned long long)b->leader_after,
                (unsigned long long)b->term_before,
                (unsigned long long)b->term_after);
}

void bench_label_end(FILE *f, const struct bench_label *l, int first_error,
                     const struct bench_leadership *b, bool broken)
{
        fprintf(f, ",\"first_error\":\"%s\"",
                first_error != 0 ? baton_errname(first_error) : "");
        bench_print_leadership(f, b);
        fprintf(f, ",\"broken\":%s,\"variant\":\"%s\",\"driver\":\"%s\"}\n",
                broken ? "true" : "false", l->variant, l->driver);
        fflush(f);
}

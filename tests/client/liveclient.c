/* The libbaton handles and lock names a case on the live cluster of
 * livecluster.h makes. */
#include "liveclient.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>

#include <cmocka.h>

#include "livecluster.h"

baton_client *liveclient_new(uint32_t ttl_ms, struct baton_options *o)
{
        struct baton_options def;
        baton_client *c = NULL;
        int rv;

        if (o == NULL) {
                baton_options_init(&def);
                def.request_timeout_ms = LIVECLIENT_OP_MS;
                o = &def;
        }
        o->ttl_ms = ttl_ms;
        if (o->client_name == NULL) {
                o->client_name = "test_client";
        }
        rv = baton_client_create(&c, livecluster_endpoints(), o);
        if (rv != 0) {
                print_message("# baton_client_create: %s\n",
                              baton_strerror(rv));
        }
        assert_int_equal(rv, 0);
        return c;
}

void liveclient_name(char *buf, size_t cap, const char *what)
{
        /* The run's one counter: cmocka runs a program's cases one at a
         * time, and a name of one case must not be another's. */
        static unsigned names;

        snprintf(buf, cap, "tc-%s-%u", what, ++names);
}

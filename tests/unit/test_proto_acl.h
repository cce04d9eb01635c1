/* Cases of test_proto on ACL and ACL_REPLY: the ops on role rules as they
 * always were, the ops on rules on lock-name prefixes and on quotas, and
 * the reply's three formats. */
#ifndef TESTS_UNIT_PROTO_ACL_H
#define TESTS_UNIT_PROTO_ACL_H

/* cmocka cases, run from the table of test_proto.c. */
void acl_old_ops_unchanged(void **state);
void acl_rule_ops_round_trip(void **state);
void acl_rule_ops_refused(void **state);
void acl_rule_bodies_refused(void **state);
void acl_quota_ops_round_trip(void **state);
void acl_quota_ops_refused(void **state);
void acl_quota_bodies_refused(void **state);
void acl_reply_formats(void **state);
void acl_reply_limits(void **state);
void acl_reply_bad_bodies(void **state);
void acl_reply_quota_format(void **state);
void acl_reply_quota_bad_bodies(void **state);

#endif /* TESTS_UNIT_PROTO_ACL_H */

/* Cases of test_proto on online backups: BACKUP, BACKUP_CHUNK and the
 * backup file's header and digest. */
#ifndef TESTS_UNIT_PROTO_BACKUP_H
#define TESTS_UNIT_PROTO_BACKUP_H

/* cmocka cases, run from the table of test_proto.c. */
void backup_frames_round_trip(void **state);
void backup_chunk_bounds(void **state);
void backup_file_checks_every_byte(void **state);

#endif /* TESTS_UNIT_PROTO_BACKUP_H */

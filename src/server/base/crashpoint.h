/* Crash points: named places in batond where its chaos build,
 * batond-crashpoints, kills itself with SIGKILL when told to, so that the
 * chaos suite can crash a node at a chosen step rather than at a chosen
 * time (docs/chaos.md, "crash-point"). */
#ifndef SERVER_CRASHPOINT_H
#define SERVER_CRASHPOINT_H

/*
 * A point is one line at its place, CRASHPOINT("name"). It is compiled only
 * where BATON_CHAOS_CRASHPOINTS is defined (batond-crashpoints' own copies
 * of the rooms that hold points); in batond the macro is empty and no code
 * of this module is linked.
 *
 * Armed by the environment at start: BATON_CRASH_AT=NAME[:NTH] kills the
 * process at the NTH hit of point NAME (default 1), after a line on stderr
 * ("crash point NAME hit (NTH): SIGKILL"). Hits are counted per process: a
 * forked child counts on from what its parent had counted. Unset, empty or
 * naming another point: a hit does nothing.
 *
 * The points (the only names the chaos suite arms; crashio.h and the snap
 * room place them): append-before, append-after, snapshot-put-before,
 * snapshot-put-after, restore-before, restore-after, member-applied,
 * image-child, bgjob-after.
 */
#ifdef BATON_CHAOS_CRASHPOINTS
void crashpoint_hit(const char *name);
#define CRASHPOINT(name) crashpoint_hit(name)
#else
#define CRASHPOINT(name) ((void)0)
#endif

#endif /* SERVER_CRASHPOINT_H */

/* batonctl's commands in one table, which the parser, `batonctl --help` and
 * `batonctl COMMAND --help` all read, so that none of them can leave a
 * command out or tell another story about it. */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

/* One command (member, session and snapshot with their subcommands). */
struct commands_entry {
        const char *name;
        int command;       /* enum args_command (the first, for member) */
        unsigned min, max; /* operands after the name; subcommands count */
        /* Its usage, one line (usage errors quote it whole). */
        const char *synopsis;
        /* What it does, one paragraph (both helps wrap it). */
        const char *summary;
        /* Its own options, "--opt ARG\tWHAT" a line; NULL: none. */
        const char *options;
};

/* The entry of the command called `name`; NULL if there is none. */
const struct commands_entry *commands_find(const char *name);

/* The entry whose `command` is `command` (member's subcommands give the
 * member entry, snapshot inspect the snapshot one); NULL if none. */
const struct commands_entry *commands_of(int command);

/* "lock, sem, ... or snapshot": every command's name, for messages. */
void commands_names(char *buf, size_t cap);

/* `batonctl --help`: the global options and every command. */
void commands_usage(FILE *out);

/* `batonctl COMMAND --help`: that command's usage, what it does, its
 * options and its exit statuses. */
void commands_help(FILE *out, const struct commands_entry *e);

#endif /* CLI_COMMANDS_H */

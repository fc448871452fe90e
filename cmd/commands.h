/* commands.h — the `dralloc` subcommands. Each lives in its own cmd/<name>.c and
 * has the signature of main (argv[0] is the subcommand name). To add one: write
 * the function, declare it here, add a row to the table in main.c. Each reads its
 * flags with cmd/flags.h from a table of its own: a new flag is a row there. */
#ifndef DRA_CMD_COMMANDS_H
#define DRA_CMD_COMMANDS_H

int cmd_version(int argc, char **argv);
int cmd_allocate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* `dralloc bench e2e`: runs bench/e2e/run.sh of the source tree (cmd/bench_e2e.c). */
int cmd_bench_e2e(int argc, char **argv);
int cmd_cel(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_capacity(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_why(int argc, char **argv);
/* plan_room.c: `plan --defrag` and `plan --preempt` (their own options) */
_Bool cmd_plan_room_wanted(int argc, char **argv);
int cmd_plan_room(int argc, char **argv);

#endif

/* cli — the table-driven command line: one sd_cmd per command (one cmd_X.c each), declarative option
 * tables, one usage printer. Commands return an sd_exit code (core/err.h). */
#ifndef SD_CLI_H
#define SD_CLI_H

#include <stdio.h>

#include "core/util.h"   /* sd_split_list, sd_default_dir, sd_run_self: most commands use them */

typedef enum sd_opt_type {
    SD_OPT_FLAG,    /* int*, set to 1 */
    SD_OPT_STR,     /* const char**, points into argv */
    SD_OPT_OUT,     /* const char**, as STR: a file the command writes. sd_cli_parse refuses one that cannot be
                     * written (sd_out_file_check, "--NAME: ...") once every option is parsed, before the command
                     * starts. */
    SD_OPT_INT,     /* long*, checked against [min, max] */
    SD_OPT_DOUBLE,  /* double*, checked against [min, max] */
    SD_OPT_CHOICE,  /* const char**, one of the values its metavar lists ("auto|real|synthetic") */
    SD_OPT_LIST,    /* sd_list*, added to by every use. "a,b" is split at commas; a metavar with '|' lists
                     * the accepted values ("pdf|svg|md"), else it names one item ("NAME"). A metavar ending
                     * in "..." ("FILE...") takes whole arguments instead, every one up to the next option,
                     * unsplit: file names may hold commas. */
    SD_OPT_ARG,     /* const char**, a required positional argument; name is how usage and messages call it
                     * ("DIR"), never an option. Positional arguments fill these in table order. */
} sd_opt_type;

#define SD_LIST_MAX 64
/* A LIST option's values. Zero it before parsing; a default is added after (sd_list_split) when n is 0.
 * Never copied: split values point into its own buf. */
typedef struct sd_list {
    int n;
    const char *v[SD_LIST_MAX];   /* in order: into argv, or into buf for the items of a split value */
    size_t used;
    char buf[4096];
} sd_list;

/* Add csv's comma-separated items to l unchecked (a default the command supplies). 0 or SD_ELIMIT. */
int sd_list_split(sd_list *l, const char *csv);
/* Whether s is one of l's values. */
int sd_list_has(const sd_list *l, const char *s);
/* l's values joined by commas into buf (truncated to fit n). */
void sd_list_join(const sd_list *l, char *buf, size_t n);

typedef struct sd_opt {
    const char *name;      /* long name without "--"; for ARG the argument's name ("DIR") */
    sd_opt_type type;
    void *dst;
    const char *metavar;   /* "FILE", "N"; NULL for flags and ARG; for CHOICE (and a checked LIST) the accepted
                            * values, '|'-separated; for a whole-argument LIST "FILE..." */
    const char *help;
    double min, max;       /* for INT/DOUBLE; min == max == 0: unbounded */
} sd_opt;

typedef struct sd_cmd {
    const char *name;
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
    const char *summary;
} sd_cmd;

/* Parse --name VALUE / --name=VALUE / --flag. "--help"/"-h" prints usage and sets *help.
 * Positional arguments fill the table's ARG entries first (each one required unless *help), then pos (up
 * to max_pos), counted in *npos (may be NULL if none are allowed). Returns 0, or SD_EUSAGE with a one-line
 * message in sd_errmsg() that names the option and what it expects. */
int sd_opts_parse(const sd_opt *opts, int argc, char **argv, const char **pos, int max_pos, int *npos,
                  int *help);
void sd_opts_usage(FILE *f, const char *cmd, const char *synopsis, const char *description,
                   const sd_opt *opts);
/* A command's options parsed against its table as sd_opts_parse does (no positional arguments beyond the table's),
 * then its OUT files checked; --help prints the usage. Returns -1 to go on, or the exit code the command returns
 * now: 0 after --help, the usage error's or the unwritable file's code (its message printed). */
int sd_cli_parse(const char *cmd, const char *synopsis, const char *description, const sd_opt *opts, int argc,
                 char **argv);
/* Print "showdown CMD: MESSAGE" to stderr and return the exit code for status. */
int sd_cli_fail(const char *cmd, int status);

/* The command table (main.c). */
extern const sd_cmd sd_commands[];

int cmd_bench(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_nightly(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_env(int argc, char **argv);

/* `showdown collect DIR`, also bench's --wait: with wait, poll every poll seconds until no task of the array is
 * pending or running, then merge the cells (slurm/slurm.h). cmd names the command in messages. Returns the exit
 * code: 0 when every cell is ok, SD_EXIT_FAIL when some are not. */
struct sd_slurm_collect_opts;
int sd_cli_collect(const char *cmd, const char *dir, int wait, double poll, const struct sd_slurm_collect_opts *co);

/* The bench arguments every cell repeats: argv[1..argc) minus the options named in drop (long names, with
 * their values; opts says which take one). *out is malloc'd (strings point into argv); caller frees. */
int sd_cli_common_args(const sd_opt *opts, int argc, char **argv, const char *const *drop, char ***out,
                       int *n);

/* One cell of bench's matrix for the Slurm executor (slurm/slurm.h's sd_slurm_cell). */
struct sd_slurm_cell;
/* bench's executor options (cmd/bench_slurm.c). */
typedef struct sd_bench_exec {
    const char *executor;          /* "local" (default) or "slurm" */
    const char *partition, *gres, *constraint, *time, *results_dir;
    const char *resubmit, *cells;  /* --resubmit DIR [--cells LIST] */
    int wait;
    double poll;                   /* seconds between polls with --wait */
    long gpus;                     /* --gpus: the default --gres is gpu:N */
    const char *db, *json;         /* where the results go: a local run's, and with --wait collect's merged run */
    int no_db, quiet;
} sd_bench_exec;

/* `bench --executor slurm` / `bench --resubmit DIR`: submit (or resubmit), and with --wait poll and
 * collect. argc/argv: bench's command line (the cells' common options are taken from it). Returns an exit
 * code. */
int sd_bench_slurm(const sd_bench_exec *x, const sd_opt *opts, int argc, char **argv, const struct sd_slurm_cell *cells,
                   int ncells);
#endif

/* slurm — the benchmark matrix as one Slurm job array. `bench --executor slurm` writes a results directory
 * (manifest.json, job.sh, cells/, logs/) and submits one array task per cell with sbatch; each task runs
 * `showdown bench` for its cell into cells/cell-I.json. `collect` merges the cells into one run (each result
 * keeps its cell's environment fingerprint), says per cell what failed and how to resubmit only those.
 * showdown never schedules: states come from sacct when accounting works, else scontrol, else the files. */
#ifndef SD_SLURM_H
#define SD_SLURM_H

#include <stddef.h>
#include <stdio.h>

#define SD_SLURM_MANIFEST_SCHEMA "showdown-slurm/1"

/* One cell of the matrix: a workload through one implementation on one back-end (framework cells: backend
 * is the runner's device request). */
typedef struct sd_slurm_cell {
    const char *workload, *implementation, *backend;
} sd_slurm_cell;

/* sbatch settings; NULL: Slurm's default. */
typedef struct sd_slurm_opts {
    const char *partition, *gres, *constraint, *time;
    const char *dir;          /* results directory (shared storage); NULL: out/slurm/run-<UTC time> */
    int quiet;
} sd_slurm_opts;

/* Write dir/manifest.json and dir/job.sh for the cells and submit the array (indices 0..ncells-1).
 * Prints the job id and the directory; dir_out (may be NULL) receives the absolute directory. */
int sd_slurm_submit(const sd_slurm_opts *o, const sd_slurm_cell *cells, int ncells, char *const *common,
                    int ncommon, char *dir_out, size_t dir_len);
/* Submit again the cells in list ("2,3", ranges "0-2" allowed) of an existing directory, or every cell
 * that is not ok when list is NULL. Previous results of those cells are moved aside. Options given in o
 * (partition, gres, constraint, time) replace the manifest's. *nsubmitted may be NULL. */
int sd_slurm_resubmit(const sd_slurm_opts *o, const char *dir, const char *list, int *nsubmitted);
/* Poll every poll_s seconds until no task of the directory's submissions is pending or running. */
int sd_slurm_wait(const char *dir, double poll_s, int quiet);

typedef struct sd_slurm_collect_opts {
    const char *db;        /* database path; NULL with no_db = 0: the default */
    int no_db;
    const char *json;      /* merged results file; NULL: dir/merged.json */
    int quiet;
} sd_slurm_collect_opts;

/* Merge the cells of dir into one results document and one database run; print the per-cell states,
 * the merged table and, when cells failed, the command that resubmits only those. *nbad gets the number of
 * cells that are not ok (failed, timed out, cancelled, missing); SD_EBUSY when tasks are still pending or
 * running (nothing is merged then). */
int sd_slurm_collect(const char *dir, const sd_slurm_collect_opts *o, FILE *out, int *nbad);

/* Parse "2,3,5-7" into idx (at most max, each in [0, limit)); returns the count or SD_EUSAGE. */
int sd_slurm_parse_cells(const char *list, int limit, int *idx, int max);

#endif

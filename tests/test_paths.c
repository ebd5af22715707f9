/* test_paths — names from outside never leave their directory. sd_safe_name and sd_path_within
 * themselves; then where they are used: workload names and workload files that are symlinks out of the
 * workloads directory, template names and symlinked templates, repository owner/name (mirror directory
 * names), and the workload/implementation/backend of a published file (a verify rerun passes them to bench). */
#include "testutil.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "nn/model.h"
#include "render/template.h"
#include "score/score_data.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

Test(paths, safe_name) {
    static const char *const ok[] = {"pytorch", "mnist_mlp", "pytorch+pytorch.git", "tensorflow-2", "A.b", NULL};
    for (int i = 0; ok[i]; i++) cr_assert_eq(sd_safe_name(ok[i], "name"), 0, "%s: %s", ok[i], sd_errmsg());
    static const char *const bad[] = {"", "..", ".", "../x", "a/b", "/etc/passwd", ".hidden", "a b", "x\n", "a\\b", NULL};
    for (int i = 0; bad[i]; i++) {
        int rc = sd_safe_name(bad[i], "workload");
        cr_assert(rc == SD_EINPUT, "'%s' accepted (%d)", bad[i], rc);
        cr_assert(strncmp(sd_errmsg(), "workload", 8) == 0, "%s", sd_errmsg());
    }
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    cr_assert_eq(sd_safe_name(longname, "framework"), SD_ELIMIT);
    cr_assert(strstr(sd_errmsg(), "longer than 128 bytes"), "%s", sd_errmsg());
}

Test(paths, path_within) {
    char d[256], p[512], out[256], q[600];
    tu_tmpdir(d, sizeof d);
    tu_tmpdir(out, sizeof out);
    snprintf(p, sizeof p, "%s/a.json", d);
    tu_write_str(p, "{}");
    cr_assert_eq(sd_path_within(d, p), 0, "%s", sd_errmsg());
    snprintf(p, sizeof p, "%s/new.json", d);                 /* not there yet: its parent decides */
    cr_assert_eq(sd_path_within(d, p), 0, "%s", sd_errmsg());
    snprintf(p, sizeof p, "%s/../x.json", d);
    cr_assert_eq(sd_path_within(d, p), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "leaves"), "%s", sd_errmsg());
    cr_assert_eq(sd_path_within(d, "/etc/passwd"), SD_EINPUT);
    snprintf(p, sizeof p, "%s/link.json", d);                /* a symlink out */
    snprintf(q, sizeof q, "%s/target.json", out);
    tu_write_str(q, "{}");
    cr_assert_eq(symlink(q, p), 0);
    cr_assert_eq(sd_path_within(d, p), SD_EINPUT);
    snprintf(p, sizeof p, "%s/sub", d);                       /* a directory symlink out, file not there yet */
    cr_assert_eq(symlink(out, p), 0);
    snprintf(p, sizeof p, "%s/sub/new.json", d);
    cr_assert_eq(sd_path_within(d, p), SD_EINPUT);
}

Test(paths, workload_names_and_symlinks) {
    char d[256], out[256], p[512], q[600];
    tu_tmpdir(d, sizeof d);
    tu_tmpdir(out, sizeof out);
    sd_workload w;
    /* (a --workload holding '/' or ending in .json is the user's own path; names from files never get there:
     * see published_names) */
    cr_assert_eq(sd_workload_load(&w, d, ".."), SD_EUSAGE);
    cr_assert(strstr(sd_errmsg(), "may hold only a-z, 0-9 and _"), "%s", sd_errmsg());
    snprintf(q, sizeof q, "%s/evil.json", out);
    tu_write_str(q, "{}");
    snprintf(p, sizeof p, "%s/evil.json", d);
    cr_assert_eq(symlink(q, p), 0);
    cr_assert_eq(sd_workload_load(&w, d, "evil"), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "evil.json leaves"), "%s", sd_errmsg());
}

Test(paths, template_names_and_symlinks) {
    char d[256], out[256], p[512], q[600], buf[1024];
    tu_tmpdir(d, sizeof d);
    tu_tmpdir(out, sizeof out);
    setenv("SHOWDOWN_TEMPLATES", d, 1);
    cr_assert_eq(render_template_find("..", buf, sizeof buf), SD_EUSAGE);
    cr_assert_eq(render_template_find("a.b", buf, sizeof buf), SD_EUSAGE);
    snprintf(q, sizeof q, "%s/evil.json", out);
    tu_write_str(q, "{}");
    snprintf(p, sizeof p, "%s/evil.json", d);
    cr_assert_eq(symlink(q, p), 0);
    cr_assert_eq(render_template_find("evil", buf, sizeof buf), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "evil.json leaves"), "%s", sd_errmsg());
    snprintf(p, sizeof p, "%s/fine.json", d);
    tu_write_str(p, "{}");
    cr_assert_eq(render_template_find("fine", buf, sizeof buf), 0, "%s", sd_errmsg());
    unsetenv("SHOWDOWN_TEMPLATES");
}

Test(paths, repository_owner_and_name) {
    char key[160], owner[64], name[96];
    cr_assert_eq(score_repo_key("https://github.com/pytorch/pytorch.git", key, sizeof key, owner, sizeof owner, name,
                                sizeof name), 0);
    cr_assert_str_eq(owner, "pytorch");
    cr_assert_str_eq(name, "pytorch");
    cr_assert_eq(score_repo_key("https://github.com/../x", key, sizeof key, owner, sizeof owner, name, sizeof name),
                 SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "repository owner '..'"), "%s", sd_errmsg());
    cr_assert_eq(score_repo_key("https://github.com/o/..", key, sizeof key, owner, sizeof owner, name, sizeof name),
                 SD_EINPUT);
}

Test(paths, published_names) {
    static const char *const bad[] = {"../../etc/passwd", "/abs/spec.json", "..", "x/y"};
    for (int i = 0; i < 4; i++) {
        char doc[512];
        snprintf(doc, sizeof doc, "{\"schema\": \"showdown-results/1\", \"runs\": [{\"workload\": \"%s\", "
                 "\"implementation\": \"native\", \"backend\": \"ref\", \"summary\": {\"steady_epoch_s\": "
                 "{\"median\": 1.0}}}]}", bad[i]);
        json_t *j = NULL;
        cr_assert_eq(sd_published_parse(&j, "pub.json", doc, strlen(doc)), SD_EINPUT, "%s accepted", bad[i]);
        cr_assert_null(j);
        cr_assert(strstr(sd_errmsg(), "pub.json:1:"), "%s", sd_errmsg());
        cr_assert(strstr(sd_errmsg(), "workload '"), "%s", sd_errmsg());
    }
    const char *good = "{\"schema\": \"showdown-results/1\", \"runs\": [{\"workload\": \"mnist_mlp\", "
                       "\"implementation\": \"native\", \"backend\": \"ref\", \"summary\": {\"steady_epoch_s\": "
                       "{\"median\": 1.0}}}]}";
    json_t *j = NULL;
    cr_assert_eq(sd_published_parse(&j, "pub.json", good, strlen(good)), 0, "%s", sd_errmsg());
    json_decref(j);
}

/* What is at an output path decides what a write does: only a regular file is replaced. */
Test(paths, writes_never_replace_what_is_not_a_file) {
    char d[256], p[512], q[600];
    struct stat st;
    tu_tmpdir(d, sizeof d);
    snprintf(p, sizeof p, "%s/r.json", d);                   /* a regular file: replaced, no temp file left */
    cr_assert_eq(sd_write_file_atomic(p, "one", 3), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_write_file_atomic(p, "two!", 4), 0, "%s", sd_errmsg());
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(st.st_size, 4);
    snprintf(q, sizeof q, "%s/l.json", d);                   /* a symlink to it stays a symlink */
    cr_assert_eq(symlink(p, q), 0);
    cr_assert_eq(sd_write_file_atomic(q, "three", 5), 0, "%s", sd_errmsg());
    cr_assert_eq(lstat(q, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the symlink was replaced");
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_eq(st.st_size, 5, "the file it names was not written");
    snprintf(p, sizeof p, "%s/dir", d);                      /* a directory: refused */
    cr_assert_eq(mkdir(p, 0755), 0);
    cr_assert_eq(sd_write_file_atomic(p, "x", 1), SD_EIO);
    cr_assert(strstr(sd_errmsg(), "is a directory"), "%s", sd_errmsg());
    snprintf(q, sizeof q, "%s/dangling", d);                 /* a dangling symlink: refused, kept */
    cr_assert_eq(symlink("/nonexistent/target", q), 0);
    cr_assert_eq(sd_write_file_atomic(q, "x", 1), SD_EIO);
    cr_assert_eq(lstat(q, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    snprintf(p, sizeof p, "%s/no/such/dir/r.json", d);       /* no parent made */
    cr_assert_eq(sd_write_file_atomic(p, "x", 1), SD_EIO);
    cr_assert(strstr(sd_errmsg(), "does not exist"), "%s", sd_errmsg());
    snprintf(p, sizeof p, "%s/no", d);
    cr_assert_neq(stat(p, &st), 0, "a parent directory was made");
    cr_assert_eq(sd_write_file_atomic("", "x", 1), SD_EUSAGE);
    cr_assert_eq(sd_write_file_atomic("/", "x", 1), SD_EUSAGE);
    cr_assert_eq(sd_out_path_ok("//", "out"), SD_EUSAGE);
    cr_assert_eq(sd_mkdir_p("", 0), SD_EUSAGE);
    /* a character device: written through, never replaced (needs root for mknod) */
    snprintf(p, sizeof p, "%s/null", d);
    if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        cr_assert_eq(sd_write_file_atomic(p, "x", 1), 0, "%s", sd_errmsg());
        cr_assert_eq(stat(p, &st), 0);
        cr_assert(S_ISCHR(st.st_mode), "the device node was replaced");
    }
}

Test(paths, parents_made_only_under_the_named_directory) {
    char d[256], root[512], p[700];
    struct stat st;
    tu_tmpdir(d, sizeof d);
    snprintf(root, sizeof root, "%s/out", d);
    snprintf(p, sizeof p, "%s/figures/x.svg", root);
    cr_assert_eq(sd_mkdir_under(root, p, 1), 0, "%s", sd_errmsg());
    snprintf(p, sizeof p, "%s/figures", root);
    cr_assert(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(p, sizeof p, "%s/elsewhere/x.svg", d);          /* outside root: refused, nothing made */
    cr_assert_lt(sd_mkdir_under(root, p, 1), 0);
    snprintf(p, sizeof p, "%s/elsewhere", d);
    cr_assert_neq(stat(p, &st), 0);
    snprintf(p, sizeof p, "%s-sibling/x", root);             /* a string prefix is not inside */
    cr_assert_lt(sd_mkdir_under(root, p, 1), 0);
}

/*
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ad_clf_mount.c -- plain paths on a mounted clf take the driver.
 *
 * As ROMIO gives a path on Lustre to Lustre's driver from the file system
 * it is on, a path on a clf mount -- the mount table's type is fuse.clf
 * (kernel/, FUSE) or clf (a kernel client) -- is given to this driver
 * (romio-clf.patch calls ADIOI_CLF_On_mount from ROMIO's file-system
 * detection), which opens the same file through clf's native I/O: the
 * path inside the instance is the path below the mount point, and the
 * instance is the one the mount's source names when that is a
 * configuration file (`mount -t clf /etc/clf/clf.conf /mnt/clf`), else
 * $CLF_CONFIG or libclf's default, which must then be the mount's.  A
 * program's POSIX opens of the same path (HDF5's and PnetCDF's format
 * checks, serial tools) go through the mount to the same file.
 *
 * The answer is read from /proc/self/mountinfo at each open: the mount
 * that holds a path is the one with the longest mount point above it,
 * whatever its type (a local file system mounted inside a clf mount is
 * not clf).
 */

#include "ad_clf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void ADIOI_CLF_Unescape(char *s)
{
    char *d = s;

    for (; *s; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
            s[3] >= '0' && s[3] <= '7') {
            *d++ = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
            s += 3;
        } else {
            *d++ = *s;
        }
    }
    *d = '\0';
}

/*
 * The absolute path of filename with its directories resolved (the file
 * itself need not exist); 0, or -1 when its directory does not exist.
 */
static int ADIOI_CLF_Resolve(const char *filename, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(filename, '/'), *base;

    if (realpath(filename, real)) {
        MPL_snprintf(out, len, "%s", real);
        return 0;
    }
    if (!slash) {
        if (!getcwd(dir, sizeof(dir)))
            return -1;
        base = filename;
    } else {
        size_t n = slash == filename ? 1 : (size_t) (slash - filename);

        if (n >= sizeof(dir))
            return -1;
        memcpy(dir, filename, n);
        dir[n] = '\0';
        base = slash + 1;
    }
    if (!realpath(dir, real) || !*base)
        return -1;
    if (snprintf(out, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) >= (int) len)
        return -1;
    return 0;
}

/*
 * Whether filename is on a clf mount: then *path (len bytes) is its path
 * inside the instance and *config (len bytes) the mount's source when
 * that is a configuration file, else "".
 */
/*
 * "clf://HOST:PORT" of a URL name "clf://HOST:PORT/..." into config (len
 * bytes); 0 when name is no such URL.
 */
static int ADIOI_CLF_Url_instance(const char *name, char *config, size_t len)
{
    const char *end;

    if (strncmp(name, "clf://", 6) != 0)
        return 0;
    end = strchr(name + 6, '/');
    MPL_snprintf(config, len, "%.*s", (int) (end ? (size_t) (end - name) : strlen(name)), name);
    return 1;
}

static int ADIOI_CLF_Find_mount(const char *filename, char *path, char *config, size_t len)
{
    char abs[PATH_MAX], line[3 * PATH_MAX], best_mp[PATH_MAX] = "", best_root[PATH_MAX] = "";
    char best_type[64] = "", best_src[PATH_MAX] = "";
    size_t best = 0;
    struct stat st;
    FILE *f;

    if (ADIOI_CLF_Resolve(filename, abs, sizeof(abs)))
        return 0;
    f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        /* id parent major:minor root mount-point options [tags] - type source ... */
        char root[PATH_MAX], mp[PATH_MAX], type[64], src[PATH_MAX], *sep;
        size_t n;

        sep = strstr(line, " - ");
        if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mp) != 2 ||
            sscanf(sep + 3, "%63s %4095s", type, src) != 2)
            continue;
        ADIOI_CLF_Unescape(mp);
        n = strlen(mp);
        if (strcmp(mp, "/") == 0)
            n = 0;
        else if (strncmp(abs, mp, n) != 0 || (abs[n] != '/' && abs[n] != '\0'))
            continue;
        /* Later lines of one mount point are mounted over earlier ones. */
        if (n >= best || best_mp[0] == '\0') {
            best = n;
            MPL_snprintf(best_mp, sizeof(best_mp), "%s", mp);
            ADIOI_CLF_Unescape(root);
            MPL_snprintf(best_root, sizeof(best_root), "%s", root);
            MPL_snprintf(best_type, sizeof(best_type), "%s", type);
            ADIOI_CLF_Unescape(src);
            MPL_snprintf(best_src, sizeof(best_src), "%s", src);
        }
    }
    fclose(f);
    if (strcmp(best_type, "fuse.clf") != 0 && strcmp(best_type, "clf") != 0)
        return 0;
    MPL_snprintf(path, len, "%s%s", strcmp(best_root, "/") ? best_root : "",
                 abs[best] ? abs + best : "/");
    /* Its real path: ADIOI_CLF_Init compares it with $CLF_CONFIG's. */
    if (best_src[0] == '/' && stat(best_src, &st) == 0 && S_ISREG(st.st_mode) &&
        realpath(best_src, abs))
        MPL_snprintf(config, len, "%s", abs);
    else if (ADIOI_CLF_Url_instance(best_src, config, len))
        ;                       /* mounted as clf://HOST:PORT/ */
    else
        config[0] = '\0';
    return 1;
}

int ADIOI_CLF_On_mount(const char *filename)
{
    char path[PATH_MAX + 2], config[PATH_MAX + 2];

    return ADIOI_CLF_Find_mount(filename, path, config, sizeof(path));
}

/*
 * clf's path of an MPI file name (ROMIO has taken off any "clf:"): a name
 * on a clf mount is that mount's file; "//HOST:PORT/a" (the MPI name
 * "clf://HOST:PORT/a") is /a on the instance of the metad at HOST:PORT,
 * which needs no configuration file; any other is a path from the
 * instance's root ("clf:data" is "/data").  *config: the instance (the
 * mount's configuration file, or "clf://HOST:PORT"), or "" for
 * $CLF_CONFIG or the default.
 */
void ADIOI_CLF_Path_of(const char *filename, char *path, char *config, size_t len)
{
    if (filename[0] == '/' && filename[1] == '/') {
        /* libclf checks the name against its instance (one a process). */
        MPL_snprintf(path, len, "clf:%s", filename);
        ADIOI_CLF_Url_instance(path, config, len);
        return;
    }
    if (ADIOI_CLF_Find_mount(filename, path, config, len))
        return;
    config[0] = '\0';
    MPL_snprintf(path, len, "%s%s", filename[0] == '/' ? "" : "/", filename);
}

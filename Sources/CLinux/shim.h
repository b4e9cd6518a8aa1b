#ifndef CAMROLL_CLINUX_SHIM_H
#define CAMROLL_CLINUX_SHIM_H
/*
 * Linux-specific file-system calls that Glibc's Swift overlay does not expose without
 * _GNU_SOURCE: O_TMPFILE (an unnamed file in a directory, linked into place once complete,
 * so no half-written file ever has a name) and renameat2(RENAME_NOREPLACE).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static const int CLINUX_O_TMPFILE = O_TMPFILE;
static const int CLINUX_AT_EMPTY_PATH = AT_EMPTY_PATH;
static const int CLINUX_AT_SYMLINK_FOLLOW = AT_SYMLINK_FOLLOW;
static const unsigned CLINUX_RENAME_NOREPLACE = RENAME_NOREPLACE;

static inline int clinux_renameat2_noreplace(int olddirfd, const char *oldpath, int newdirfd,
                                              const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}
#endif

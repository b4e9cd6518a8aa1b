#ifndef CAMROLL_CLINUX_SHIM_H
#define CAMROLL_CLINUX_SHIM_H
/*
 * Linux-specific file-system calls that Glibc's Swift overlay does not expose without
 * _GNU_SOURCE: renameat2(RENAME_NOREPLACE), a rename that refuses to replace a file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static inline int clinux_renameat2_noreplace(int olddirfd, const char *oldpath, int newdirfd,
                                              const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}
#endif

#ifndef CAMROLL_CLINUX_SHIM_H
#define CAMROLL_CLINUX_SHIM_H
/*
 * Linux-specific file-system calls that Glibc's Swift overlay does not expose without
 * _GNU_SOURCE (renameat2 with RENAME_NOREPLACE, a rename that refuses to replace a file), and
 * fcntl's open-file-description locks, which Swift cannot reach through variadic fcntl().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <malloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Turns O_DIRECT on or off for an open file: 0, or -1 with errno (EINVAL where the file system
 * refuses direct I/O, as tmpfs did before Linux 6.6). */
static inline int clinux_set_direct(int fd, int on) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, on ? (flags | O_DIRECT) : (flags & ~O_DIRECT));
}

/* Where byte `offset` of the open file `fd` is on its file system's device (FIEMAP, after
 * writing out what is still in the page cache); -1 when the file system does not say, or the
 * byte is not on the device as it is in the file (a hole, inline, encoded data). */
static inline long long clinux_device_offset(int fd, unsigned long long offset) {
    struct {
        struct fiemap map;
        struct fiemap_extent extents[1];
    } request;
    memset(&request, 0, sizeof request);
    request.map.fm_start = offset;
    request.map.fm_length = 1;
    request.map.fm_flags = FIEMAP_FLAG_SYNC;
    request.map.fm_extent_count = 1;
    if (ioctl(fd, FS_IOC_FIEMAP, &request.map) != 0 || request.map.fm_mapped_extents == 0) return -1;
    const struct fiemap_extent *extent = &request.map.fm_extents[0];
    if (extent->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED
                            | FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED))
        return -1;
    if (offset < extent->fe_logical || offset - extent->fe_logical >= extent->fe_length) return -1;
    return (long long)(extent->fe_physical + (offset - extent->fe_logical));
}

/* getrandom(2): `length` bytes from the kernel's generator; the count, or -1 with errno.
 * Declared here rather than through <sys/random.h>: that header brings <sys/select.h> in with
 * _GNU_SOURCE's field names, which then clash with the Glibc module's own fd_set. */
extern ssize_t getrandom(void *buffer, size_t length, unsigned int flags);
static inline ssize_t clinux_getrandom(void *buffer, size_t length) { return getrandom(buffer, length, 0); }

/* Keeps freed memory for reuse instead of handing it back to the kernel at each free (glibc
 * trims a thread's arena with madvise once its free top passes 128 KB): see main.swift. */
static inline void clinux_keep_freed_memory(int bytes) { mallopt(M_TRIM_THRESHOLD, bytes); }

/* Whether signal `number` is ignored (SIG_IGN) as the process stands: as it was started, before
 * it changes anything (SIG_IGN is a cast macro Swift cannot import). */
static inline int clinux_signal_is_ignored(int number) {
    struct sigaction action;
    return sigaction(number, NULL, &action) == 0 && action.sa_handler == SIG_IGN;
}

/* Names the calling thread (at most 15 bytes are kept) for top -H, ps -L and perf; prctl is
 * variadic, which Swift cannot call. */
static inline int clinux_name_this_thread(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

/* memmem (a GNU extension): where `needle` first occurs in `haystack`, or NULL. */
static inline const void *clinux_memmem(const void *haystack, size_t haystack_length, const void *needle,
                                        size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

/* The file of the shared library that holds `symbol` (for --version), or NULL. */
static inline const char *clinux_library_of(const void *symbol) {
    Dl_info info;
    if (dladdr(symbol, &info) == 0) return NULL;
    return info.dli_fname;
}

/* The width of the terminal on fd in columns, or 0 when it is not a terminal or will not say. */
static inline int clinux_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}

/* The size of the terminal on fd: cells, and pixels where the terminal reports them (0 if not).
 * 0 when fd is a terminal, -1 otherwise. */
static inline int clinux_terminal_size(int fd, int *columns, int *rows, int *width_pixels, int *height_pixels) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return -1;
    *columns = size.ws_col;
    *rows = size.ws_row;
    *width_pixels = size.ws_xpixel;
    *height_pixels = size.ws_ypixel;
    return 0;
}

static inline int clinux_renameat2_noreplace(int olddirfd, const char *oldpath, int newdirfd,
                                              const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

/* A file without a name in the directory dirfd (O_TMPFILE): it takes one only when linked, and
 * vanishes with its last descriptor if it never is. -1 and errno where the file system cannot
 * make one (EOPNOTSUPP; EISDIR from kernels without O_TMPFILE). */
static inline int clinux_open_unnamed(int dirfd, mode_t mode) {
    return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
}

/* Names the unnamed file fd `name` in dirfd, never replacing (EEXIST): by the descriptor itself
 * (AT_EMPTY_PATH), which takes CAP_DAC_READ_SEARCH until Linux 6.10 (ENOENT without it), or
 * through /proc/self/fd, which any process may. */
static inline int clinux_link_unnamed(int fd, int dirfd, const char *name, int through_proc) {
    if (!through_proc) return linkat(fd, "", dirfd, name, AT_EMPTY_PATH);
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

/* Whether the file system holding path writes every change to a file anew (copy on write:
 * btrfs, bcachefs, ZFS), so that even a write over a page a file already has takes room. */
static inline int clinux_copies_on_write(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return 0;
    return info.f_type == (typeof(info.f_type))0x9123683E /* BTRFS_SUPER_MAGIC */
        || info.f_type == (typeof(info.f_type))0xca451a4e /* BCACHEFS_SUPER_MAGIC */
        || info.f_type == (typeof(info.f_type))0x2fc12fc1 /* ZFS */;
}

/* Whether the file system holding fd is FAT (vfat, msdos) or exFAT: their directories run out
 * of names with space free. */
static inline int clinux_is_fat(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return 0;
    return info.f_type == 0x4d44 /* MSDOS_SUPER_MAGIC */ || info.f_type == 0x2011BAB0 /* EXFAT_SUPER_MAGIC */;
}

/*
 * An open-file-description lock on one byte: held by whoever holds the open file, in any PID
 * namespace, and released by the kernel when the holder's last descriptor closes (exit, crash,
 * SIGKILL). 0 when taken, else -1 with errno (EAGAIN: someone else holds it).
 */
static inline int clinux_ofd_lock_byte(int fd, long long offset) {
    struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = offset, .l_len = 1, .l_pid = 0 };
    return fcntl(fd, F_OFD_SETLK, &lock);
}

/* The same, shared: any number of holders at once; it keeps only an exclusive lock out. */
static inline int clinux_ofd_share_byte(int fd, long long offset) {
    struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = offset, .l_len = 1, .l_pid = 0 };
    return fcntl(fd, F_OFD_SETLK, &lock);
}

/* 1 when another open file description holds a lock on the byte, 0 when none does, -1 on error. */
static inline int clinux_ofd_byte_is_locked(int fd, long long offset) {
    struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = offset, .l_len = 1, .l_pid = 0 };
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
}
#endif

/*
 * What an atomic save costs on a file system, apart from anything camroll does: JOBS processes
 * write COUNT files of SIZE bytes in all into one directory, each file either created under its
 * name and written (`plain`, as fio does); or written under a temporary name and renamed into
 * place without replacing (`rename`: the least an atomic save can do by names, what camroll does
 * on FAT and FUSE); or written as a file without a name (O_TMPFILE) and then linked under its
 * name, which refuses an existing one (`unnamed`: what camroll does where the file system
 * allows). With `direct`, the whole blocks go with O_DIRECT from an aligned buffer and the last
 * partial block through the page cache, as `camroll --direct` writes them. Prints the files a
 * second over all jobs.
 *
 * usage: atomic_cost DIR COUNT SIZE JOBS plain|rename|unnamed [direct]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

static int write_all(int fd, const char *bytes, size_t size) {
    while (size > 0) {
        ssize_t written = write(fd, bytes, size);
        if (written <= 0) return -1;
        bytes += written;
        size -= (size_t)written;
    }
    return 0;
}

/* The bytes into fd (whole blocks with O_DIRECT with `direct`); closes fd unless `keep_open`. */
static int write_into(int fd, const char *bytes, size_t size, int direct, int keep_open) {
    if (fd < 0) return -1;
    size_t whole = direct ? size / 4096 * 4096 : 0;
    int status = 0;
    if (whole > 0) {
        int flags = fcntl(fd, F_GETFL);
        status = fcntl(fd, F_SETFL, flags | O_DIRECT) != 0 || write_all(fd, bytes, whole) != 0
            || fcntl(fd, F_SETFL, flags) != 0;
    }
    if (status == 0) status = write_all(fd, bytes + whole, size - whole);
    if (keep_open) return status != 0 ? -1 : 0;
    return close(fd) != 0 || status != 0 ? -1 : 0;
}

static int write_file(int directory, const char *name, const char *bytes, size_t size, int direct) {
    int fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    return write_into(fd, bytes, size, direct, 0);
}

/* A file without a name, written, then linked as `name`: by its descriptor where allowed
 * (CAP_DAC_READ_SEARCH, or Linux 6.10 and later), else through /proc/self/fd. */
static int write_unnamed(int directory, const char *name, const char *bytes, size_t size, int direct) {
    int fd = openat(directory, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (write_into(fd, bytes, size, direct, 1) != 0) return -1;
    int linked = linkat(fd, "", directory, name, AT_EMPTY_PATH);
    if (linked != 0 && errno == ENOENT) {
        char proc[32];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        linked = linkat(AT_FDCWD, proc, directory, name, AT_SYMLINK_FOLLOW);
    }
    return close(fd) != 0 || linked != 0 ? -1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s DIR COUNT SIZE JOBS plain|rename|unnamed [direct]\n", argv[0]);
        return 64;
    }
    long count = atol(argv[2]), jobs = atol(argv[4]);
    size_t size = (size_t)atol(argv[3]);
    int unnamed = strcmp(argv[5], "unnamed") == 0;
    int atomic = strcmp(argv[5], "rename") == 0, direct = argc > 6 && strcmp(argv[6], "direct") == 0;
    char *bytes = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    for (size_t i = 0; i < size; i++) bytes[i] = (char)(i * 131 + 7);
    int directory = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (directory < 0 || count < 1 || jobs < 1) { perror(argv[1]); return 66; }

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long job = 0; job < jobs; job++) {
        if (fork() != 0) continue;
        char name[64], temporary[96];
        for (long i = job; i < count; i += jobs) {
            snprintf(name, sizeof name, "%06ld.jpg", i);
            if (unnamed) {
                if (write_unnamed(directory, name, bytes, size, direct) != 0) {
                    perror(name);
                    _exit(74);
                }
            } else if (atomic) {
                snprintf(temporary, sizeof temporary, ".%s.%ld-%lx.tmp", name, (long)getpid(), random());
                if (write_file(directory, temporary, bytes, size, direct) != 0
                    || syscall(SYS_renameat2, directory, temporary, directory, name, RENAME_NOREPLACE) != 0) {
                    perror(temporary);
                    _exit(74);
                }
            } else if (write_file(directory, name, bytes, size, direct) != 0) {
                perror(name);
                _exit(74);
            }
        }
        _exit(0);
    }
    int failed = 0, status;
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (failed) return 74;
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%.1f\n", (double)count / seconds);
    return 0;
}

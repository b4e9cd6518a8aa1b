/*
 * The baseline camroll's saving is measured against: the least a program can do to save the
 * same bytes N times safely enough to be comparable — open a temporary name, write, close,
 * rename into place. No catalog, no hashing, no progress. With `unnamed`, the way camroll saves
 * where the file system allows: a file without a name (O_TMPFILE), written, then linked under
 * its name (by its descriptor: root, or Linux 6.10 and later).
 *
 * usage: save_loop INPUT.jpg OUTDIR COUNT [unnamed]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "unnamed") == 0)) {
        fprintf(stderr, "usage: %s INPUT.jpg OUTDIR COUNT [unnamed]\n", argv[0]);
        return 64;
    }
    int in = open(argv[1], O_RDONLY);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0) { perror(argv[1]); return 66; }
    char *bytes = malloc(st.st_size);
    if (!bytes || read(in, bytes, st.st_size) != st.st_size) { perror("read"); return 74; }
    close(in);
    long count = atol(argv[3]);
    mkdir(argv[2], 0755);
    int unnamed = argc == 5, directory = open(argv[2], O_RDONLY | O_DIRECTORY);
    if (directory < 0) { perror(argv[2]); return 73; }

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char temporary[4096], final[4096];
    for (long i = 1; i <= count; i++) {
        snprintf(temporary, sizeof temporary, "%s/.%ld.tmp", argv[2], i);
        snprintf(final, sizeof final, "%s/%04ld.jpg", argv[2], i);
        if (unnamed) {
            int fd = openat(directory, ".", O_TMPFILE | O_WRONLY, 0644);
            if (fd < 0) { perror("O_TMPFILE"); return 73; }
            if (write(fd, bytes, st.st_size) != st.st_size) { perror("write"); return 74; }
            if (linkat(fd, "", AT_FDCWD, final, AT_EMPTY_PATH) != 0) { perror(final); return 74; }
            if (close(fd) != 0) { perror("close"); return 74; }
            continue;
        }
        int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { perror(temporary); return 73; }
        if (write(fd, bytes, st.st_size) != st.st_size) { perror("write"); return 74; }
        if (close(fd) != 0) { perror("close"); return 74; }
        if (rename(temporary, final) != 0) { perror("rename"); return 74; }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("%ld saves in %.3f s: %.1f saves/s\n", count, seconds, count / seconds);
    return 0;
}

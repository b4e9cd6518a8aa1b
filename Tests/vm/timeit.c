/*
 * timeit LABEL COMMAND...: runs COMMAND (stdout/stderr to /dev/null) and prints one line,
 * "LABEL <wall ms> <exit status> <peak RSS KB>", for the VM benchmarks. Static, so that it
 * costs the guest nothing to load; the wall time is CLOCK_MONOTONIC around fork+exec+wait.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: timeit LABEL COMMAND...\n");
        return 2;
    }
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    pid_t child = fork();
    if (child == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    wait4(child, &status, 0, &usage);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double ms = (end.tv_sec - begin.tv_sec) * 1e3 + (end.tv_nsec - begin.tv_nsec) / 1e6;
    printf("%s %.1f %d %ld\n", argv[1], ms, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
           usage.ru_maxrss);
    fflush(stdout);
    return 0;
}

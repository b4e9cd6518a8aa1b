/*
 * Test tool for the VM suite: runs a full-screen program on a pseudo-terminal and plays a
 * script of keys to it, as a user at a terminal would, then reports how the program left the
 * terminal.
 *
 *   pty-keys COLUMNS ROWS LOG -- PROGRAM ARGS... < SCRIPT
 *
 * Everything the program prints is appended to LOG. SCRIPT, one command a line:
 *   wait TEXT    until TEXT appears in the output after the last mark (60 s at most)
 *   mark         later waits look only at output from here on
 *   send KEYS    type KEYS; \e \r \n \\ and \xHH are escapes
 *   sleep MS
 *   shell CMD    run CMD with /bin/sh (while the program runs)
 *   signal N     send signal N to the program
 *   end          wait for the program to exit (60 s at most)
 * Then prints: "cpu SECONDS" (the program's user + system time); "exit N" or "killed N"; "termios same" or "termios changed" (the terminal's
 * settings against those before the program started); "cursor visible|hidden" and
 * "screen normal|alternate" from the last such sequences the program wrote.
 * Exits 0, or 3 when a wait timed out (the program is then killed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char *output;
static size_t output_length, output_capacity, mark_at;
static int master_fd;
static FILE *log_file;
static pid_t child;
static int child_status = -1;
static struct rusage child_usage;

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Reads what the program printed for up to `ms`, and notices its exit. */
static void pump(int ms) {
    struct pollfd descriptor = { .fd = master_fd, .events = POLLIN };
    if (poll(&descriptor, 1, ms) > 0 && (descriptor.revents & POLLIN)) {
        char buffer[65536];
        ssize_t n = read(master_fd, buffer, sizeof buffer);
        if (n > 0) {
            if (output_length + n + 1 > output_capacity) {
                output_capacity = (output_length + n + 1) * 2;
                output = realloc(output, output_capacity);
            }
            memcpy(output + output_length, buffer, n);
            output_length += n;
            output[output_length] = 0;
            fwrite(buffer, 1, n, log_file);
            fflush(log_file);
        }
    }
    if (child_status < 0) {
        int status;
        if (wait4(child, &status, WNOHANG, &child_usage) == child) child_status = status;
    }
}

static const char *find(const char *text) {
    return output_length > mark_at ? memmem(output + mark_at, output_length - mark_at, text, strlen(text)) : NULL;
}

static size_t unescape(const char *in, char *out) {
    size_t n = 0;
    for (; *in; in++) {
        if (*in != '\\' || !in[1]) { out[n++] = *in; continue; }
        in++;
        switch (*in) {
        case 'e': out[n++] = 27; break;
        case 'r': out[n++] = '\r'; break;
        case 'n': out[n++] = '\n'; break;
        case 'x': {
            char hex[3] = { in[1], in[1] ? in[2] : 0, 0 };
            out[n++] = (char)strtol(hex, NULL, 16);
            in += 2;
            break;
        }
        default: out[n++] = *in;
        }
    }
    return n;
}

/* The later of two sequences in the output: 1 when `on` was written last, 0 otherwise. */
static int last_is(const char *on, const char *off) {
    const char *last_on = NULL, *last_off = NULL, *p;
    for (p = output; p && (p = memmem(p, output_length - (p - output), on, strlen(on))); p++) last_on = p;
    for (p = output; p && (p = memmem(p, output_length - (p - output), off, strlen(off))); p++) last_off = p;
    return last_on > last_off;
}

static void finish(int code) {
    long long deadline = now_ms() + 60000;
    while (child_status < 0 && now_ms() < deadline) pump(50);
    if (child_status < 0) {
        kill(child, SIGKILL);
        wait4(child, &child_status, 0, &child_usage);
        code = 3;
    }
    for (int i = 0; i < 5; i++) pump(20);
    printf("cpu %.3f\n", child_usage.ru_utime.tv_sec + child_usage.ru_stime.tv_sec
                             + (child_usage.ru_utime.tv_usec + child_usage.ru_stime.tv_usec) / 1e6);
    if (WIFEXITED(child_status)) printf("exit %d\n", WEXITSTATUS(child_status));
    else printf("killed %d\n", WTERMSIG(child_status));
    exit(code);
}

int main(int argc, char **argv) {
    if (argc < 6 || strcmp(argv[4], "--") != 0) {
        fprintf(stderr, "usage: pty-keys COLUMNS ROWS LOG -- PROGRAM ARGS... < SCRIPT\n");
        return 2;
    }
    struct winsize size = { .ws_col = atoi(argv[1]), .ws_row = atoi(argv[2]) };
    log_file = fopen(argv[3], "w");
    int slave_fd;
    if (!log_file || openpty(&master_fd, &slave_fd, NULL, NULL, &size) != 0) { perror("pty-keys"); return 2; }
    struct termios before;
    tcgetattr(slave_fd, &before);
    child = fork();
    if (child == 0) {
        setsid();
        ioctl(slave_fd, TIOCSCTTY, 0);
        dup2(slave_fd, 0);
        dup2(slave_fd, 1);
        dup2(slave_fd, 2);
        close(master_fd);
        execvp(argv[5], argv + 5);
        _exit(127);
    }
    /* The slave stays open here, so that its settings can be read after the program exits. */
    output = calloc(1, 1);
    char line[4096];
    int code = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char *argument = strchr(line, ' ');
        if (argument) *argument++ = 0; else argument = line + strlen(line);
        if (strcmp(line, "wait") == 0) {
            long long deadline = now_ms() + 60000;
            while (!find(argument) && now_ms() < deadline && child_status < 0) pump(50);
            if (!find(argument)) {
                printf("timeout waiting for '%s'\n", argument);
                kill(child, SIGKILL);
                code = 3;
                break;
            }
        } else if (strcmp(line, "mark") == 0) {
            pump(0);
            mark_at = output_length;
        } else if (strcmp(line, "send") == 0) {
            char keys[4096];
            size_t n = unescape(argument, keys);
            if (write(master_fd, keys, n) != (ssize_t)n) perror("pty-keys: write");
        } else if (strcmp(line, "sleep") == 0) {
            long long deadline = now_ms() + atoi(argument);
            while (now_ms() < deadline) pump(10);
        } else if (strcmp(line, "shell") == 0) {
            pump(0);
            if (system(argument) != 0) printf("shell failed: %s\n", argument);
        } else if (strcmp(line, "signal") == 0) {
            kill(child, atoi(argument));
        } else if (strcmp(line, "end") == 0) {
            break;
        }
    }
    long long deadline = now_ms() + 60000;
    while (child_status < 0 && now_ms() < deadline) pump(50);
    struct termios after;
    tcgetattr(slave_fd, &after);
    int same = before.c_iflag == after.c_iflag && before.c_oflag == after.c_oflag && before.c_cflag == after.c_cflag
               && before.c_lflag == after.c_lflag && memcmp(before.c_cc, after.c_cc, sizeof before.c_cc) == 0;
    printf("termios %s\n", same ? "same" : "changed");
    printf("cursor %s\n", last_is("\033[?25l", "\033[?25h") ? "hidden" : "visible");
    printf("screen %s\n", last_is("\033[?1049h", "\033[?1049l") ? "alternate" : "normal");
    finish(code);
}

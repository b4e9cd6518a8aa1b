/* The SIGBUS handler and the room it can give back; see cbuserrors.h. Only calls a signal
 * handler may make: the mapping's path is looked up in /proc/self/maps by hand. */
#include "cbuserrors.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* The room kept: its descriptor, or -1. Taken by one side only, the handler or the saver. */
static int room_fd = -1;
static volatile sig_atomic_t room_given_back = 0;

int cbuserrors_keep_room(int fd) {
    int none = -1;
    if (!__atomic_compare_exchange_n(&room_fd, &none, fd, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return -1;
    room_given_back = 0; /* of this room: not yet */
    return 0;
}

/* The room taken from the other side's reach, emptied and closed (calls a signal handler may
 * make): 1, or 0 where there was none to give back. */
static int give_back(void) {
    int fd = __atomic_exchange_n(&room_fd, -1, __ATOMIC_SEQ_CST);
    if (fd < 0) return 0;
    (void)ftruncate(fd, 0);
    close(fd);
    return 1;
}

void cbuserrors_give_room_back(void) { (void)give_back(); }

int cbuserrors_room_was_given_back(void) { return room_given_back; }

static void write_all(const char *text, size_t length) {
    while (length > 0) {
        ssize_t written = write(STDERR_FILENO, text, length);
        if (written <= 0) return;
        text += written;
        length -= (size_t)written;
    }
}

static void put(const char *text) { write_all(text, strlen(text)); }

/* The hexadecimal number at *c, up to the first character that is not a hex digit. */
static unsigned long hex(const char **c) {
    unsigned long value = 0;
    for (;; (*c)++) {
        char d = **c;
        if (d >= '0' && d <= '9') value = value * 16 + (unsigned long)(d - '0');
        else if ((d | 0x20) >= 'a' && (d | 0x20) <= 'f') value = value * 16 + (unsigned long)((d | 0x20) - 'a' + 10);
        else return value;
    }
}

/* The path of the mapping that holds address in /proc/self/maps, into path (empty if none). */
static void mapping_path(unsigned long address, char *path, size_t size) {
    path[0] = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buffer[4096], line[4352];
    size_t used = 0;
    ssize_t got;
    while ((got = read(fd, buffer, sizeof buffer)) > 0) {
        for (ssize_t i = 0; i < got; i++) {
            if (buffer[i] != '\n') {
                if (used < sizeof line - 1) line[used++] = buffer[i];
                continue;
            }
            line[used] = 0;
            used = 0;
            /* "start-end perms offset dev inode   path" */
            const char *c = line;
            unsigned long start = hex(&c);
            if (*c == '-') c++;
            unsigned long end = hex(&c);
            if (address < start || address >= end) continue;
            const char *slash = strchr(c, '/');
            if (slash) {
                size_t n = strlen(slash);
                if (n >= size) n = size - 1;
                memcpy(path, slash, n);
                path[n] = 0;
            }
            close(fd);
            return;
        }
    }
    close(fd);
}

static void handler(int signal, siginfo_t *info, void *context) {
    (void)signal;
    (void)context;
    if (give_back()) {
        room_given_back = 1;
        return; /* the faulting write again, with room */
    }
    static char path[4096];
    mapping_path((unsigned long)info->si_addr, path, sizeof path);
    size_t length = strlen(path);
    if (length == 0) {
        put("camroll: error: a file mapped into memory could not be used (SIGBUS): its file system is full, "
            "or its device gone\n");
    } else {
        put("camroll: error: cannot use ");
        put(path);
        put(" (mapped into memory, SIGBUS): its file system is full, or its device gone\n");
        if (length > 4 && strcmp(path + length - 4, "-shm") == 0) {
            /* The catalog's WAL index: files saved last may have no row. */
            path[length - 4] = 0;
            put("Make room, then run 'camroll verify --repair --db ");
            put(path);
            put("': it records the files saved last.\n");
        }
    }
    _exit(74);
}

int cbuserrors_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGBUS, &action, NULL);
}

/* libv4l2 and libv4lconvert through dlopen: see include/cv4l2.h. */
#include "cv4l2.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <libv4l2.h>
#include <libv4lconvert.h>

#include "library_loader.h"

enum { FD_OPEN, CLOSE, IOCTL, MMAP, MUNMAP, LOG_FILE, V4L2_SYMBOLS };
static const char *const v4l2_symbols[V4L2_SYMBOLS] = {
    [FD_OPEN] = "v4l2_fd_open", [CLOSE] = "v4l2_close", [IOCTL] = "v4l2_ioctl",
    [MMAP] = "v4l2_mmap", [MUNMAP] = "v4l2_munmap", [LOG_FILE] = "v4l2_log_file",
};
static void *v4l2_slots[V4L2_SYMBOLS];
static struct loaded_library libv4l2 = LOADED_LIBRARY("libv4l2.so.0", v4l2_symbols, v4l2_slots);

enum { CREATE, DESTROY, CONVERT, ERROR_MESSAGE, CONVERT_SYMBOLS };
static const char *const convert_symbols[CONVERT_SYMBOLS] = {
    [CREATE] = "v4lconvert_create", [DESTROY] = "v4lconvert_destroy", [CONVERT] = "v4lconvert_convert",
    [ERROR_MESSAGE] = "v4lconvert_get_error_message",
};
static void *convert_slots[CONVERT_SYMBOLS];
static struct loaded_library libv4lconvert = LOADED_LIBRARY("libv4lconvert.so.0", convert_symbols, convert_slots);

/* Each slot called as the function it is (the types are the libraries' own declarations). */
#define V4L2(name, slot) ((__typeof__(&name))v4l2_slots[slot])
#define V4LCONVERT(name, slot) ((__typeof__(&name))convert_slots[slot])

int cv4l2_fd_open(int fd, char *why, size_t why_size) {
    if (!loaded_library_open(&libv4l2, why, why_size)) return -1;
    static FILE *null_log;
    FILE **log_file = v4l2_slots[LOG_FILE];
    if (!null_log) null_log = fopen("/dev/null", "w");
    if (null_log) *log_file = null_log;
    int result = V4L2(v4l2_fd_open, FD_OPEN)(fd, 0);
    if (result < 0) snprintf(why, why_size, "libv4l2 refused the device");
    return result;
}

/* Before libv4l2 is loaded no descriptor can be its: the kernel's calls, as libv4l2 makes them
 * for a descriptor it was not given. */
int cv4l2_close(int fd) {
    return loaded_library_is_open(&libv4l2) ? V4L2(v4l2_close, CLOSE)(fd) : close(fd);
}

int cv4l2_ioctl(int fd, unsigned long request, void *arg) {
    return loaded_library_is_open(&libv4l2) ? V4L2(v4l2_ioctl, IOCTL)(fd, request, arg) : ioctl(fd, request, arg);
}

void *cv4l2_mmap(size_t length, int fd, int64_t offset) {
    if (loaded_library_is_open(&libv4l2)) {
        return V4L2(v4l2_mmap, MMAP)(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
    }
    return mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
}

int cv4l2_munmap(void *start, size_t length) {
    return loaded_library_is_open(&libv4l2) ? V4L2(v4l2_munmap, MUNMAP)(start, length) : munmap(start, length);
}

const char *cv4l2_library_file(void) { return loaded_library_file(&libv4l2); }

int cv4l2_converter_create(int fd, void **converter, char *why, size_t why_size) {
    if (!loaded_library_open(&libv4lconvert, why, why_size)) return -1;
    *converter = V4LCONVERT(v4lconvert_create, CREATE)(fd);
    if (!*converter) snprintf(why, why_size, "libv4lconvert could not be set up for the device");
    return *converter != NULL;
}

void cv4l2_converter_destroy(void *converter) { V4LCONVERT(v4lconvert_destroy, DESTROY)(converter); }

int cv4l2_convert(void *converter, struct v4l2_format *source, struct v4l2_format *destination,
                  const unsigned char *in, int in_size, unsigned char *out, int out_size) {
    return V4LCONVERT(v4lconvert_convert, CONVERT)(converter, source, destination, (unsigned char *)in, in_size, out, out_size);
}

const char *cv4l2_converter_error(void *converter) {
    return V4LCONVERT(v4lconvert_get_error_message, ERROR_MESSAGE)(converter);
}

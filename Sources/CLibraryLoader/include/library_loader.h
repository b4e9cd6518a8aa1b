#ifndef CAMROLL_LIBRARY_LOADER_H
#define CAMROLL_LIBRARY_LOADER_H
/*
 * A C library loaded with dlopen the first time one of its functions is called, instead of by
 * the dynamic loader at every start: for those a photo from a YUYV or MJPEG camera never calls
 * (libv4l2 and libv4lconvert, libspng with zlib). Each library the loader maps at start
 * is work done before main, whatever the command: under TCG ~1.1 ms a library (docs/benchmarks.md,
 * Findings behind the code), a little everywhere.
 */
#include <pthread.h>
#include <stddef.h>

struct loaded_library {
    pthread_mutex_t lock;
    int state; /* 0 not tried, 1 loaded, -1 failed (see failure); read and set atomically */
    const char *soname;
    const char *const *symbols; /* the functions (or data) to find, in the order of `slots` */
    size_t count;
    void **slots;
    char failure[256];
};

#define LOADED_LIBRARY(soname, symbols, slots) \
    { PTHREAD_MUTEX_INITIALIZER, 0, soname, symbols, sizeof(symbols) / sizeof(*(symbols)), slots, "" }

/* A library's table from a list of its functions, FUNCTIONS(X) being X(name, result,
 * (parameters)) for each: the index of each function's slot (SLOT_name), its type
 * (name_function), and `variable`, the library loaded from `soname` with a slot for each.
 * LOADED_FUNCTION(variable, name) is then the slot called as the function it is. */
#define LOADED_LIBRARY_FUNCTIONS(variable, soname, FUNCTIONS) \
    enum { FUNCTIONS(LOADED_LIBRARY_SLOT_) SLOT_COUNT }; \
    FUNCTIONS(LOADED_LIBRARY_TYPE_) \
    static const char *const variable##_symbols[SLOT_COUNT] = {FUNCTIONS(LOADED_LIBRARY_SYMBOL_)}; \
    static void *variable##_slots[SLOT_COUNT]; \
    static struct loaded_library variable = LOADED_LIBRARY(soname, variable##_symbols, variable##_slots)
#define LOADED_FUNCTION(variable, name) ((name##_function)variable##_slots[SLOT_##name])
#define LOADED_LIBRARY_SLOT_(name, result, parameters) SLOT_##name,
#define LOADED_LIBRARY_TYPE_(name, result, parameters) typedef result(*name##_function) parameters;
#define LOADED_LIBRARY_SYMBOL_(name, result, parameters) #name,

/* Loads `library` (once, whichever thread asks first) and fills its slots. 1 when every symbol
 * was found; else 0, with why in `why` unless it is NULL ("libspng.so.0: cannot open shared
 * object file: No such file or directory"). */
int loaded_library_open(struct loaded_library *library, char *why, size_t why_size);

/* Whether `library` is loaded, without trying to load it: where a call has another way when it
 * is not (a V4L2 ioctl goes to the kernel itself). */
int loaded_library_is_open(struct loaded_library *library);

/* The file `library` was loaded from (for `camroll --version`), or NULL. */
const char *loaded_library_file(struct loaded_library *library);
#endif

/* See include/library_loader.h. */
#define _GNU_SOURCE
#include "library_loader.h"

#include <dlfcn.h>
#include <stdio.h>

int loaded_library_is_open(struct loaded_library *library) {
    return __atomic_load_n(&library->state, __ATOMIC_ACQUIRE) == 1;
}

int loaded_library_open(struct loaded_library *library, char *why, size_t why_size) {
    if (loaded_library_is_open(library)) return 1;
    pthread_mutex_lock(&library->lock);
    if (__atomic_load_n(&library->state, __ATOMIC_RELAXED) == 0) {
        int state = -1;
        void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            snprintf(library->failure, sizeof library->failure, "%s", dlerror());
        } else {
            size_t found = 0;
            for (; found < library->count; found++) {
                library->slots[found] = dlsym(handle, library->symbols[found]);
                if (!library->slots[found]) break;
            }
            if (found == library->count) {
                state = 1;
            } else {
                snprintf(library->failure, sizeof library->failure, "%s has no %s", library->soname, library->symbols[found]);
            }
        }
        /* Released: a thread that sees 1 without the lock sees the slots filled too. */
        __atomic_store_n(&library->state, state, __ATOMIC_RELEASE);
    }
    int loaded = __atomic_load_n(&library->state, __ATOMIC_RELAXED) == 1;
    if (!loaded && why) snprintf(why, why_size, "%s", library->failure);
    pthread_mutex_unlock(&library->lock);
    return loaded;
}

const char *loaded_library_file(struct loaded_library *library) {
    Dl_info info;
    if (!loaded_library_open(library, NULL, 0) || !dladdr(library->slots[0], &info)) return NULL;
    return info.dli_fname;
}

/* Signals blocked before anything else of camroll runs: see include/cearlysignals.h. */
#include "cearlysignals.h"

#include <signal.h>
#include <stddef.h>
#include <string.h>

static int blocked;

int cearlysignals_blocked_at_start(void) { return blocked; }

static void block_signals(int argc, char **argv, char **envp) {
    (void)envp;
    /* The test bundle (camrollPackageTests.xctest) links this too. */
    if (argc > 0 && argv != NULL && argv[0] != NULL) {
        size_t length = strlen(argv[0]);
        if (length >= 7 && strcmp(argv[0] + length - 7, ".xctest") == 0) return;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGWINCH);
    struct sigaction hangUp;
    if (sigaction(SIGHUP, NULL, &hangUp) == 0 && hangUp.sa_handler != SIG_IGN) sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) == 0) blocked = 1;
}

/* .preinit_array: run by the dynamic loader (and, in a static executable, by libc's start-up)
 * before every .init_array function, libraries' and the executable's alike. */
__attribute__((section(".preinit_array"), used)) static void (*const early_signals)(int, char **, char **) = block_signals;

#ifndef CAMROLL_CEARLYSIGNALS_H
#define CAMROLL_CEARLYSIGNALS_H
/*
 * SIGINT, SIGTERM, SIGHUP (unless the process was started with it ignored: nohup) and SIGWINCH
 * blocked at the first instruction of camroll's own code: a function in the executable's
 * .preinit_array, which the dynamic loader runs once it has mapped and relocated the libraries,
 * before any library's initialiser and before main. A signal that comes from then on stays
 * pending until the signal thread (SignalWatcher.start, Console/Cancellation.swift) takes it:
 * the process never dies of it, and exits 130 or 143 with a message instead. Before that moment
 * only exec and the dynamic loader have run (Tests/hostile/early_signals.py measures that window;
 * docs/snap.md, Ctrl-C and other signals).
 *
 * Nothing to call: linking this target in is enough. cearlysignals_blocked_at_start says
 * whether it ran (the test bundle, which links camroll's code too but is no camroll, is left
 * alone: its runner's Ctrl-C must still stop it).
 */
int cearlysignals_blocked_at_start(void);
#endif

#ifndef CAMROLL_CBUSERRORS_H
#define CAMROLL_CBUSERRORS_H
/*
 * SIGBUS: a page of a file mapped into memory could not be had — its file system is full (on
 * btrfs, which writes every change anew, even a page that is already there) or its device is
 * gone. SQLite maps its WAL index (the catalog's -shm file) so: a run that fills the catalog's
 * btrfs died of it, "Bus error". The handler gives back the room kept for the catalog, where
 * there is one, and lets the write be tried again with that room free; otherwise it says which
 * file could not be had and exits 74.
 *
 * A C target of its own, not the header-only CLinux: the room kept is one variable the handler
 * and the saver share, and a static variable in a header is one copy in each unit the compiler
 * makes of what includes it — an optimized build made several of CamrollKit, the room was
 * registered in one and looked for in another, and was never given back.
 */

/* Installs the handler: 0, or -1 with errno. */
int cbuserrors_install(void);

/* Keeps fd — a file that holds the room kept for the catalog (SpaceReserve) — where the handler
 * can give it back: 0, or -1 where a room is kept already. */
int cbuserrors_keep_room(int fd);

/* Gives the room kept back, where the handler has not already: emptied, then closed — the space
 * freed by the truncation itself, whatever else may still hold the file (its writeback). */
void cbuserrors_give_room_back(void);

/* Whether the handler gave the room last kept back: a mapped file found the file system full. */
int cbuserrors_room_was_given_back(void);

#endif

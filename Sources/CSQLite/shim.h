#ifndef CAMROLL_CSQLITE_SHIM_H
#define CAMROLL_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro that Swift does not import. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/* Turns off SQLite's memory statistics, which camroll never reads: keeping them takes a global
   mutex around every allocation. Only takes effect before SQLite's first use (SQLITE_MISUSE
   after it, harmlessly). sqlite3_config is variadic, which Swift cannot call. */
static inline int csqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }
#endif

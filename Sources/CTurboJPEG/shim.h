#ifndef CAMROLL_CTURBOJPEG_SHIM_H
#define CAMROLL_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#include <jconfig.h>

/* LIBJPEG_TURBO_VERSION is a bare token (2.1.5) in jconfig.h: made a string here. */
#define CTURBOJPEG_STRING(x) #x
#define CTURBOJPEG_EXPAND(x) CTURBOJPEG_STRING(x)
static inline const char *cturbojpeg_version(void) { return CTURBOJPEG_EXPAND(LIBJPEG_TURBO_VERSION); }
#endif

#ifndef CAMROLL_CTURBOJPEG_SHIM_H
#define CAMROLL_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>
#endif

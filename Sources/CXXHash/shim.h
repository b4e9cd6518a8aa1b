#ifndef CAMROLL_CXXHASH_SHIM_H
#define CAMROLL_CXXHASH_SHIM_H
#include <xxhash.h>
#endif

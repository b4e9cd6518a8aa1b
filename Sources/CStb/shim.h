/* Debian's libstb: the stb headers, with their implementations compiled into libstb.so. */
#include <stb/stb_image_resize.h>

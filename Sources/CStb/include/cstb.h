#ifndef CAMROLL_CSTB_H
#define CAMROLL_CSTB_H
/*
 * Debian's libstb (the stb headers, with their implementations compiled into libstb.so) through
 * dlopen, loaded the first time a picture is resized rather than at every start
 * (library_loader.h). The constants are stb_image_resize.h's own.
 */
#include <stddef.h>
#include <stb/stb_image_resize.h>

/* stbir_resize_uint8_srgb, loading libstb first: 1 when done; 0 when resizing failed (out of
 * memory), -1 when libstb cannot be loaded, with the reason in `why`. */
int cstb_resize_uint8_srgb(const unsigned char *input, int input_width, int input_height, int input_stride,
                           unsigned char *output, int output_width, int output_height, int output_stride,
                           int channels, int alpha_channel, int flags, char *why, size_t why_size);
#endif

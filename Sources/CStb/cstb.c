/* libstb through dlopen: see include/cstb.h. */
#include "cstb.h"

#include "library_loader.h"

static const char *const symbols[] = { "stbir_resize_uint8_srgb" };
static void *slots[1];
static struct loaded_library libstb = LOADED_LIBRARY("libstb.so.0", symbols, slots);

int cstb_resize_uint8_srgb(const unsigned char *input, int input_width, int input_height, int input_stride,
                           unsigned char *output, int output_width, int output_height, int output_stride,
                           int channels, int alpha_channel, int flags, char *why, size_t why_size) {
    if (!loaded_library_open(&libstb, why, why_size)) return -1;
    return ((__typeof__(&stbir_resize_uint8_srgb))slots[0])(
        input, input_width, input_height, input_stride, output, output_width, output_height, output_stride,
        channels, alpha_channel, flags);
}

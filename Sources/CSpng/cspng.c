/* libspng through dlopen: see include/cspng.h. */
#include "cspng.h"

#include <stdint.h>
#include <stdlib.h>

#include "library_loader.h"

enum { CTX_NEW, CTX_FREE, SET_CHUNK_LIMITS, SET_PNG_BUFFER, GET_IHDR, DECODED_IMAGE_SIZE, DECODE_IMAGE, STRERROR,
       VERSION_STRING, DECODE_ROW, GET_ROW_INFO, SET_IHDR, SET_OPTION, ENCODE_IMAGE, GET_PNG_BUFFER, SET_EXIF, GET_EXIF,
       SYMBOLS };
static const char *const symbols[SYMBOLS] = {
    [CTX_NEW] = "spng_ctx_new", [CTX_FREE] = "spng_ctx_free", [SET_CHUNK_LIMITS] = "spng_set_chunk_limits",
    [SET_PNG_BUFFER] = "spng_set_png_buffer", [GET_IHDR] = "spng_get_ihdr",
    [DECODED_IMAGE_SIZE] = "spng_decoded_image_size", [DECODE_IMAGE] = "spng_decode_image",
    [STRERROR] = "spng_strerror", [VERSION_STRING] = "spng_version_string", [DECODE_ROW] = "spng_decode_row",
    [GET_ROW_INFO] = "spng_get_row_info", [SET_IHDR] = "spng_set_ihdr",
    [SET_OPTION] = "spng_set_option", [ENCODE_IMAGE] = "spng_encode_image", [GET_PNG_BUFFER] = "spng_get_png_buffer",
    [SET_EXIF] = "spng_set_exif", [GET_EXIF] = "spng_get_exif",
};
static void *slots[SYMBOLS];
static struct loaded_library libspng = LOADED_LIBRARY("libspng.so.0", symbols, slots);

/* Each slot called as the function it is (spng.h's own declaration). */
#define SPNG(name, slot) ((__typeof__(&name))slots[slot])

int cspng_load(char *why, size_t why_size) { return loaded_library_open(&libspng, why, why_size); }

const char *cspng_version_string(void) {
    return loaded_library_open(&libspng, NULL, 0) ? SPNG(spng_version_string, VERSION_STRING)() : NULL;
}

spng_ctx *cspng_ctx_new(int flags) { return SPNG(spng_ctx_new, CTX_NEW)(flags); }
void cspng_ctx_free(spng_ctx *context) { SPNG(spng_ctx_free, CTX_FREE)(context); }
int cspng_set_chunk_limits(spng_ctx *context, size_t chunk_size, size_t cache_size) {
    return SPNG(spng_set_chunk_limits, SET_CHUNK_LIMITS)(context, chunk_size, cache_size);
}
int cspng_set_png_buffer(spng_ctx *context, const void *buffer, size_t size) {
    return SPNG(spng_set_png_buffer, SET_PNG_BUFFER)(context, buffer, size);
}
int cspng_get_ihdr(spng_ctx *context, struct spng_ihdr *header) { return SPNG(spng_get_ihdr, GET_IHDR)(context, header); }
int cspng_decoded_image_size(spng_ctx *context, int format, size_t *size) {
    return SPNG(spng_decoded_image_size, DECODED_IMAGE_SIZE)(context, format, size);
}
int cspng_decode_image(spng_ctx *context, void *out, size_t size, int format, int flags) {
    return SPNG(spng_decode_image, DECODE_IMAGE)(context, out, size, format, flags);
}
int cspng_get_exif(spng_ctx *context, struct spng_exif *exif) { return SPNG(spng_get_exif, GET_EXIF)(context, exif); }
const char *cspng_strerror(int status) { return SPNG(spng_strerror, STRERROR)(status); }

int cspng_decode_rgb_over_white(spng_ctx *context, unsigned char *out, size_t size) {
    struct spng_ihdr header;
    int status = SPNG(spng_get_ihdr, GET_IHDR)(context, &header);
    if (status != 0) return status;
    size_t width = header.width, height = header.height;
    if (width == 0 || height == 0 || width > SIZE_MAX / 4 / height || size != width * height * 3) return SPNG_EOVERFLOW;
    status = SPNG(spng_decode_image, DECODE_IMAGE)(
        context, NULL, 0, SPNG_FMT_RGBA8, SPNG_DECODE_TRNS | SPNG_DECODE_PROGRESSIVE);
    if (status != 0) return status;
    unsigned char *row = malloc(width * 4);
    if (row == NULL) return CSPNG_OUT_OF_MEMORY;
    /* Adam7: where each pass's pixels lie in a row (an interlaced row holds only its pass's). */
    static const size_t first[7] = {0, 4, 0, 2, 0, 1, 0}, step[7] = {8, 8, 4, 4, 2, 2, 1};
    for (;;) {
        struct spng_row_info info;
        status = SPNG(spng_get_row_info, GET_ROW_INFO)(context, &info);
        if (status == SPNG_EOI) { status = 0; break; }
        if (status != 0) break;
        status = SPNG(spng_decode_row, DECODE_ROW)(context, row, width * 4);
        if (status != 0 && status != SPNG_EOI) break;
        if (info.row_num >= height) { status = SPNG_EOVERFLOW; break; }
        size_t start = 0, stride = 1;
        if (header.interlace_method != 0 && info.pass >= 0 && info.pass < 7) {
            start = first[info.pass];
            stride = step[info.pass];
        }
        unsigned char *target = out + (size_t)info.row_num * width * 3;
        for (size_t x = start; x < width; x += stride) {
            const unsigned char *pixel = row + x * 4;
            unsigned alpha = pixel[3];
            for (int channel = 0; channel < 3; channel++)
                target[x * 3 + channel] = (unsigned char)((pixel[channel] * alpha + 255 * (255 - alpha) + 127) / 255);
        }
        if (status == SPNG_EOI) { status = 0; break; }
    }
    free(row);
    return status;
}

unsigned char *cspng_encode(const unsigned char *pixels, unsigned int width, unsigned int height, int channels,
                            const unsigned char *exif, size_t exif_size, size_t *size, int *error) {
    *size = 0;
    spng_ctx *context = cspng_ctx_new(SPNG_CTX_ENCODER);
    if (!context) { *error = SPNG_EMEM; return NULL; }
    struct spng_ihdr header = {
        .width = width, .height = height, .bit_depth = 8,
        .color_type = channels == 1 ? SPNG_COLOR_TYPE_GRAYSCALE : SPNG_COLOR_TYPE_TRUECOLOR,
    };
    int status = SPNG(spng_set_option, SET_OPTION)(context, SPNG_ENCODE_TO_BUFFER, 1);
    if (!status) status = SPNG(spng_set_ihdr, SET_IHDR)(context, &header);
    if (!status && exif && exif_size) {
        struct spng_exif block = {.length = exif_size, .data = (char *)exif};
        status = SPNG(spng_set_exif, SET_EXIF)(context, &block);
    }
    if (!status) status = SPNG(spng_encode_image, ENCODE_IMAGE)(context, pixels, (size_t)width * height * channels,
                                                                SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
    unsigned char *out = NULL;
    if (!status) out = SPNG(spng_get_png_buffer, GET_PNG_BUFFER)(context, size, &status);
    cspng_ctx_free(context);
    *error = status;
    return status ? NULL : out;
}

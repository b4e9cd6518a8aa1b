/* libspng through dlopen: see include/cspng.h. */
#include "cspng.h"

#include "library_loader.h"

enum { CTX_NEW, CTX_FREE, SET_CHUNK_LIMITS, SET_PNG_BUFFER, GET_IHDR, DECODED_IMAGE_SIZE, DECODE_IMAGE, STRERROR,
       VERSION_STRING, SET_IHDR, SET_OPTION, ENCODE_IMAGE, GET_PNG_BUFFER, SET_EXIF, SYMBOLS };
static const char *const symbols[SYMBOLS] = {
    [CTX_NEW] = "spng_ctx_new", [CTX_FREE] = "spng_ctx_free", [SET_CHUNK_LIMITS] = "spng_set_chunk_limits",
    [SET_PNG_BUFFER] = "spng_set_png_buffer", [GET_IHDR] = "spng_get_ihdr",
    [DECODED_IMAGE_SIZE] = "spng_decoded_image_size", [DECODE_IMAGE] = "spng_decode_image",
    [STRERROR] = "spng_strerror", [VERSION_STRING] = "spng_version_string", [SET_IHDR] = "spng_set_ihdr",
    [SET_OPTION] = "spng_set_option", [ENCODE_IMAGE] = "spng_encode_image", [GET_PNG_BUFFER] = "spng_get_png_buffer",
    [SET_EXIF] = "spng_set_exif",
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
const char *cspng_strerror(int status) { return SPNG(spng_strerror, STRERROR)(status); }

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

/* libspng through dlopen: see include/cspng.h. */
#include "cspng.h"

#include "library_loader.h"

enum { CTX_NEW, CTX_FREE, SET_CHUNK_LIMITS, SET_PNG_BUFFER, GET_IHDR, DECODED_IMAGE_SIZE, DECODE_IMAGE, STRERROR,
       VERSION_STRING, SYMBOLS };
static const char *const symbols[SYMBOLS] = {
    [CTX_NEW] = "spng_ctx_new", [CTX_FREE] = "spng_ctx_free", [SET_CHUNK_LIMITS] = "spng_set_chunk_limits",
    [SET_PNG_BUFFER] = "spng_set_png_buffer", [GET_IHDR] = "spng_get_ihdr",
    [DECODED_IMAGE_SIZE] = "spng_decoded_image_size", [DECODE_IMAGE] = "spng_decode_image",
    [STRERROR] = "spng_strerror", [VERSION_STRING] = "spng_version_string",
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

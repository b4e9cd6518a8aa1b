#ifndef CAMROLL_CSPNG_H
#define CAMROLL_CSPNG_H
/*
 * libspng (PNG files given with -d file:) through dlopen, loaded the first time a PNG is decoded
 * rather than with zlib at every start (library_loader.h). The cspng_ functions are libspng's
 * of the same name; the types and constants are spng.h's own.
 */
#include <stddef.h>
#include <spng.h>

/* Loads libspng once. 1 when it is usable; else 0, with the reason in `why`. */
int cspng_load(char *why, size_t why_size);
/* libspng's version, or NULL where it cannot be loaded. */
const char *cspng_version_string(void);

/* Only after cspng_load returned 1. */
spng_ctx *cspng_ctx_new(int flags);
void cspng_ctx_free(spng_ctx *context);
int cspng_set_chunk_limits(spng_ctx *context, size_t chunk_size, size_t cache_size);
int cspng_set_png_buffer(spng_ctx *context, const void *buffer, size_t size);
int cspng_get_ihdr(spng_ctx *context, struct spng_ihdr *header);
int cspng_decoded_image_size(spng_ctx *context, int format, size_t *size);
int cspng_decode_image(spng_ctx *context, void *out, size_t size, int format, int flags);
/* The eXIf chunk's TIFF block (libspng's memory, valid until the context is freed);
 * SPNG_ECHUNKAVAIL when none was read. Before the image is decoded it sees the chunks before the
 * image data; after, those after it too. */
int cspng_get_exif(spng_ctx *context, struct spng_exif *exif);
const char *cspng_strerror(int status);

/* What cspng_decode_rgb_over_white returns when it cannot have the memory of one row. */
#define CSPNG_OUT_OF_MEMORY (-100)
/* The whole picture into `out` as packed 8-bit RGB, `size` being width x height x 3, any bit
 * depth and colour type; transparency flattened onto white (each channel c·a + 255·(1 − a),
 * rounded). Decoded a row at a time: the memory is `out` and one RGBA row, not an RGBA copy of
 * the picture beside it. 0, or libspng's error (CSPNG_OUT_OF_MEMORY for the row). */
int cspng_decode_rgb_over_white(spng_ctx *context, unsigned char *out, size_t size);
/* 8-bit grey (`channels` 1) or RGB (3) pixels, rows packed, as a PNG with `exif` (a TIFF block,
 * no "Exif\0\0") in an eXIf chunk when given. The PNG (free it with free()) and its `size`; NULL
 * with libspng's `error` when it fails. */
unsigned char *cspng_encode(const unsigned char *pixels, unsigned int width, unsigned int height, int channels,
                            const unsigned char *exif, size_t exif_size, size_t *size, int *error);
#endif

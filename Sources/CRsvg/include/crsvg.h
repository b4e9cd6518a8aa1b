#ifndef CAMROLL_CRSVG_SHIM_H
#define CAMROLL_CRSVG_SHIM_H
/*
 * SVG drawn into PNG with librsvg (and the cairo it draws with), loaded with dlopen() the first
 * time a PNG is asked for (`stats --plot run.png`): librsvg brings GLib, Pango and cairo, which
 * no other command needs. Nothing of librsvg's is needed to build; the few types are opaque
 * here, the signatures are librsvg 2.46+'s and cairo 1.x's.
 */
#include <stddef.h>

/* Loads librsvg once. Returns 1 when it is usable; else 0, with the reason in `why`. */
int crsvg_load(char *why, size_t why_size);

/* The SVG document `svg` (`length` bytes) drawn `scale` times its own `width` x `height`
 * pixels, as PNG bytes: malloc'd, `*png_length` long (free() them). NULL on failure, with
 * librsvg's or cairo's reason in `why`. */
unsigned char *crsvg_render_png(const char *svg, size_t length, int width, int height, double scale,
                                size_t *png_length, char *why, size_t why_size);

#endif

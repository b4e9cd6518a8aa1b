#ifndef CAMROLL_CPANGO_H
#define CAMROLL_CPANGO_H
/*
 * The banner of `--timestamp` and `--title`, drawn with Pango and cairo (libpangocairo), loaded
 * with dlopen the first time a banner is asked for, as librsvg and GTK are: a plain photo never
 * loads Pango, GLib or cairo, and a machine without them takes every photo without a banner.
 * Nothing of Pango's is needed to build: its types are opaque here, the signatures Pango 1.44+'s
 * and cairo 1.x's.
 *
 * Only the banner's strip of the frame is touched, and never converted: cairo draws the banner
 * (background and text) once into premultiplied ARGB, again only when its text, colours or size
 * change, and each frame's strip is blended with it in the frame's own format (YUYV, YUV 4:2:0,
 * packed RGB; BT.601 is affine in RGB, so blending in YUV is blending in RGB). The rest of the
 * frame is never read.
 */
#include <stddef.h>
#include <stdint.h>

/* Loads libpangocairo once. 1 when usable; else 0, with the reason in `why`. */
int cpango_load(char *why, size_t why_size);

typedef struct cpango_banner cpango_banner;

/* A banner in font `family` at `pixel_size` pixels. The family fontconfig actually gives for
 * it is written to `resolved` (it substitutes another for a family it does not have). NULL,
 * with the reason in `why`, when Pango cannot be loaded or makes no layout. */
cpango_banner *cpango_banner_new(const char *family, double pixel_size, char *resolved, size_t resolved_size,
                                 char *why, size_t why_size);
void cpango_banner_free(cpango_banner *banner);

/* The texts drawn: `start` at the banner's left, `end` at its right (either may be NULL or
 * empty). A text equal to the one already laid out is not laid out again. */
void cpango_banner_set_text(cpango_banner *banner, const char *start, const char *end);

/* Characters of the texts set that no installed font has (drawn as boxes). */
int cpango_banner_unknown_glyphs(cpango_banner *banner);

/* Rows the banner takes: the texts' height and a margin above and below, an even number (a
 * YUV 4:2:0 frame's chroma rows cover two). */
int cpango_banner_height(cpango_banner *banner);

/* The colours, 0xRRGGBBAA (AA: opacity, ff opaque). */
void cpango_banner_set_colors(cpango_banner *banner, uint32_t background, uint32_t text);

/* Draws the banner on `rows` rows of a frame `width` pixels wide, already offset to the
 * strip's first row. Returns 1; 0 when cairo cannot make its surface (memory). */
int cpango_draw_on_rgb24(cpango_banner *banner, uint8_t *rgb, int width, int rows, int stride);
/* YUYV (width even); `full_range` 0 for limited-range BT.601 (Y 16-235), 1 for full. */
int cpango_draw_on_yuyv(cpango_banner *banner, uint8_t *yuyv, int width, int rows, int stride, int full_range);
/* YUV 4:2:0 planes; `rows` even; `u` and `v` offset to the strip's first chroma row. */
int cpango_draw_on_yu12(cpango_banner *banner, uint8_t *y, int y_stride, uint8_t *u, uint8_t *v, int chroma_stride,
                        int width, int rows, int full_range);

#endif

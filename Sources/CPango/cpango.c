/* Pango and cairo through dlopen, and the banner's strip to and from cairo's pixels: see
 * include/cpango.h. */
#include "cpango.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library_loader.h"

typedef struct PangoFontMap PangoFontMap;
typedef struct PangoContext PangoContext;
typedef struct PangoFont PangoFont;
typedef struct PangoFontDescription PangoFontDescription;
typedef struct PangoLayout PangoLayout;
typedef struct cairo_surface cairo_surface_t;
typedef struct cairo cairo_t;
typedef int cairo_status_t;
enum { CAIRO_STATUS_SUCCESS = 0, CAIRO_FORMAT_ARGB32 = 0, PANGO_SCALE = 1024 };

/* The functions called, in the order of their slots. dlsym on libpangocairo's handle also finds
 * the symbols of what it links: Pango, GObject, cairo. */
#define PANGO_FUNCTIONS(X) \
    X(pango_cairo_font_map_get_default, PangoFontMap *, (void)) \
    X(pango_cairo_show_layout, void, (cairo_t *, PangoLayout *)) \
    X(pango_font_map_create_context, PangoContext *, (PangoFontMap *)) \
    X(pango_font_map_load_font, PangoFont *, (PangoFontMap *, PangoContext *, const PangoFontDescription *)) \
    X(pango_font_describe, PangoFontDescription *, (PangoFont *)) \
    X(pango_font_description_new, PangoFontDescription *, (void)) \
    X(pango_font_description_set_family, void, (PangoFontDescription *, const char *)) \
    X(pango_font_description_get_family, const char *, (const PangoFontDescription *)) \
    X(pango_font_description_set_absolute_size, void, (PangoFontDescription *, double)) \
    X(pango_font_description_free, void, (PangoFontDescription *)) \
    X(pango_layout_new, PangoLayout *, (PangoContext *)) \
    X(pango_layout_set_font_description, void, (PangoLayout *, const PangoFontDescription *)) \
    X(pango_layout_set_single_paragraph_mode, void, (PangoLayout *, int)) \
    X(pango_layout_set_text, void, (PangoLayout *, const char *, int)) \
    X(pango_layout_get_pixel_size, void, (PangoLayout *, int *, int *)) \
    X(pango_layout_get_unknown_glyphs_count, int, (PangoLayout *)) \
    X(g_object_unref, void, (void *)) \
    X(cairo_image_surface_create_for_data, cairo_surface_t *, (unsigned char *, int, int, int, int)) \
    X(cairo_format_stride_for_width, int, (int, int)) \
    X(cairo_surface_status, cairo_status_t, (cairo_surface_t *)) \
    X(cairo_surface_flush, void, (cairo_surface_t *)) \
    X(cairo_surface_destroy, void, (cairo_surface_t *)) \
    X(cairo_create, cairo_t *, (cairo_surface_t *)) \
    X(cairo_destroy, void, (cairo_t *)) \
    X(cairo_set_source_rgba, void, (cairo_t *, double, double, double, double)) \
    X(cairo_paint, void, (cairo_t *)) \
    X(cairo_move_to, void, (cairo_t *, double, double))

LOADED_LIBRARY_FUNCTIONS(libpangocairo, "libpangocairo-1.0.so.0", PANGO_FUNCTIONS);
#define PANGO(name) LOADED_FUNCTION(libpangocairo, name)

int cpango_load(char *why, size_t why_size) { return loaded_library_open(&libpangocairo, why, why_size); }

/* One side's text and its layout, kept between frames: laid out again only when it changes. */
struct side {
    PangoLayout *layout;
    char *text;
    int width, height;
};

struct cpango_banner {
    PangoContext *context;
    PangoFontDescription *font;
    struct side start, end;
    int margin;
    uint32_t background, text;
    /* The banner drawn by cairo (premultiplied ARGB), kept from frame to frame: drawn again
     * only when its text, colours or size change. Each frame is then only blended with it. */
    unsigned char *scratch;
    int scratch_width, scratch_rows, scratch_stride;
    cairo_surface_t *surface;
    int drawn;
    /* The blend of the drawn banner, worked out for one frame format and kept: for each byte
     * of the strip (YUYV's packed pairs, YUV 4:2:0's planes, RGB's triples), what the banner
     * adds (`over`, times 256) and how much of what was there stays (`keep`, of 256). */
    uint16_t *over, *keep;
    size_t blend_count;
    int blend_format, blend_width, blend_rows, blend_full_range, blend_valid;
};

static void side_free(struct side *side) {
    if (side->layout) PANGO(g_object_unref)(side->layout);
    free(side->text);
}

static void free_surface(cpango_banner *banner) {
    if (banner->surface) PANGO(cairo_surface_destroy)(banner->surface);
    free(banner->scratch);
    banner->surface = NULL;
    banner->scratch = NULL;
    banner->scratch_width = banner->scratch_rows = 0;
    banner->drawn = 0;
    free(banner->over);
    free(banner->keep);
    banner->over = banner->keep = NULL;
    banner->blend_count = 0;
    banner->blend_valid = 0;
}

void cpango_banner_free(cpango_banner *banner) {
    if (!banner) return;
    side_free(&banner->start);
    side_free(&banner->end);
    free_surface(banner);
    if (banner->font) PANGO(pango_font_description_free)(banner->font);
    if (banner->context) PANGO(g_object_unref)(banner->context);
    free(banner);
}

cpango_banner *cpango_banner_new(const char *family, double pixel_size, char *resolved, size_t resolved_size,
                                 char *why, size_t why_size) {
    if (!cpango_load(why, why_size)) return NULL;
    cpango_banner *banner = calloc(1, sizeof *banner);
    if (!banner) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    PangoFontMap *map = PANGO(pango_cairo_font_map_get_default)(); /* Pango's own: not unref'd */
    banner->context = map ? PANGO(pango_font_map_create_context)(map) : NULL;
    banner->font = PANGO(pango_font_description_new)();
    if (!banner->context || !banner->font) {
        snprintf(why, why_size, "Pango made no font context (no fonts installed?)");
        cpango_banner_free(banner);
        return NULL;
    }
    PANGO(pango_font_description_set_family)(banner->font, family);
    PANGO(pango_font_description_set_absolute_size)(banner->font, pixel_size * PANGO_SCALE);
    if (resolved && resolved_size) {
        resolved[0] = 0;
        PangoFont *font = PANGO(pango_font_map_load_font)(map, banner->context, banner->font);
        if (font) {
            PangoFontDescription *described = PANGO(pango_font_describe)(font);
            const char *name = described ? PANGO(pango_font_description_get_family)(described) : NULL;
            snprintf(resolved, resolved_size, "%s", name ? name : "");
            if (described) PANGO(pango_font_description_free)(described);
            PANGO(g_object_unref)(font);
        }
    }
    struct side *sides[] = {&banner->start, &banner->end};
    for (int i = 0; i < 2; i++) {
        sides[i]->layout = PANGO(pango_layout_new)(banner->context);
        if (!sides[i]->layout) {
            snprintf(why, why_size, "Pango made no layout");
            cpango_banner_free(banner);
            return NULL;
        }
        PANGO(pango_layout_set_font_description)(sides[i]->layout, banner->font);
        /* One line whatever the text holds: a newline is drawn, not obeyed. */
        PANGO(pango_layout_set_single_paragraph_mode)(sides[i]->layout, 1);
    }
    banner->margin = (int)(pixel_size / 4 + 0.5);
    if (banner->margin < 2) banner->margin = 2;
    banner->background = 0x000000ffu;
    banner->text = 0xffffffffu;
    return banner;
}

static int set_side(struct side *side, const char *text) {
    if (!text) text = "";
    if (side->text && strcmp(side->text, text) == 0) return 0;
    free(side->text);
    side->text = strdup(text);
    PANGO(pango_layout_set_text)(side->layout, text, -1);
    if (*text) {
        PANGO(pango_layout_get_pixel_size)(side->layout, &side->width, &side->height);
    } else {
        side->width = side->height = 0;
    }
    return 1;
}

void cpango_banner_set_text(cpango_banner *banner, const char *start, const char *end) {
    if (set_side(&banner->start, start) | set_side(&banner->end, end)) banner->drawn = banner->blend_valid = 0;
}

int cpango_banner_unknown_glyphs(cpango_banner *banner) {
    return PANGO(pango_layout_get_unknown_glyphs_count)(banner->start.layout)
        + PANGO(pango_layout_get_unknown_glyphs_count)(banner->end.layout);
}

int cpango_banner_height(cpango_banner *banner) {
    int text = banner->start.height > banner->end.height ? banner->start.height : banner->end.height;
    if (text == 0) return 0;
    int rows = text + 2 * banner->margin;
    return rows + (rows & 1);
}

void cpango_banner_set_colors(cpango_banner *banner, uint32_t background, uint32_t text) {
    if (banner->background != background || banner->text != text) banner->drawn = banner->blend_valid = 0;
    banner->background = background;
    banner->text = text;
}

/* The banner, `width` x `rows`, in premultiplied ARGB: drawn by cairo when it is not yet (a new
 * text, colour or size), else the one drawn for an earlier frame. NULL when cairo cannot. */
static const uint32_t *overlay(cpango_banner *banner, int width, int rows, int *stride_pixels) {
    if (banner->scratch_width != width || banner->scratch_rows != rows) {
        free_surface(banner);
        int stride = PANGO(cairo_format_stride_for_width)(CAIRO_FORMAT_ARGB32, width);
        if (stride <= 0) return NULL;
        banner->scratch = aligned_alloc(16, ((size_t)stride * (size_t)rows + 15) & ~(size_t)15);
        if (!banner->scratch) return NULL;
        banner->surface = PANGO(cairo_image_surface_create_for_data)(banner->scratch, CAIRO_FORMAT_ARGB32, width, rows, stride);
        if (PANGO(cairo_surface_status)(banner->surface) != CAIRO_STATUS_SUCCESS) {
            free_surface(banner);
            return NULL;
        }
        banner->scratch_width = width;
        banner->scratch_rows = rows;
        banner->scratch_stride = stride;
    }
    if (!banner->drawn) {
        /* The background over nothing (transparent), then each text: the start's after the
         * margin, the end's against the right margin, both a margin below the top. */
        memset(banner->scratch, 0, (size_t)banner->scratch_stride * (size_t)rows);
        cairo_t *cairo = PANGO(cairo_create)(banner->surface);
        uint32_t b = banner->background, t = banner->text;
        PANGO(cairo_set_source_rgba)(cairo, (b >> 24) / 255.0, (b >> 16 & 0xff) / 255.0, (b >> 8 & 0xff) / 255.0, (b & 0xff) / 255.0);
        PANGO(cairo_paint)(cairo);
        PANGO(cairo_set_source_rgba)(cairo, (t >> 24) / 255.0, (t >> 16 & 0xff) / 255.0, (t >> 8 & 0xff) / 255.0, (t & 0xff) / 255.0);
        if (banner->start.width > 0) {
            PANGO(cairo_move_to)(cairo, banner->margin, banner->margin);
            PANGO(pango_cairo_show_layout)(cairo, banner->start.layout);
        }
        if (banner->end.width > 0) {
            PANGO(cairo_move_to)(cairo, width - banner->margin - banner->end.width, banner->margin);
            PANGO(pango_cairo_show_layout)(cairo, banner->end.layout);
        }
        PANGO(cairo_destroy)(cairo);
        PANGO(cairo_surface_flush)(banner->surface);
        banner->drawn = 1;
    }
    *stride_pixels = banner->scratch_stride / 4;
    return (const uint32_t *)banner->scratch;
}

/*
 * Blending. An overlay pixel is premultiplied: r' = a r, and the result is r' + (1 - a) d for
 * what was there, d. Limited- and full-range BT.601 are affine maps of RGB (Y = 16 + M rgb),
 * so the blend is done in the frame's own YUV, without converting it to RGB and back:
 * Y = 16 a + M rgb' + (1 - a) Y_d, and likewise Cb, Cr with 128. Fixed point, 1 = 256; the
 * alpha 0-255 is taken as 0-256 (a + a/128), so that opaque replaces and transparent keeps.
 */
static inline int alpha256(uint32_t p) { int a = (int)(p >> 24); return a + (a >> 7); }
static inline int red(uint32_t p) { return (int)(p >> 16 & 0xff); }
static inline int green(uint32_t p) { return (int)(p >> 8 & 0xff); }
static inline int blue(uint32_t p) { return (int)(p & 0xff); }

/* The overlay's part of Y, Cb and Cr (times 256), offsets included. */
static inline int luma_of(uint32_t p, int full_range) {
    return full_range ? 77 * red(p) + 150 * green(p) + 29 * blue(p) : 66 * red(p) + 129 * green(p) + 25 * blue(p) + 16 * alpha256(p);
}
static inline int cb_of(uint32_t p, int full_range) {
    return (full_range ? -43 * red(p) - 85 * green(p) + 128 * blue(p) : -38 * red(p) - 74 * green(p) + 112 * blue(p)) + 128 * alpha256(p);
}
static inline int cr_of(uint32_t p, int full_range) {
    return (full_range ? 128 * red(p) - 107 * green(p) - 21 * blue(p) : 112 * red(p) - 94 * green(p) - 18 * blue(p)) + 128 * alpha256(p);
}
enum { FORMAT_RGB24 = 1, FORMAT_YUYV = 2, FORMAT_YU12 = 3 };

static inline uint16_t u16(int value) { return value < 0 ? 0 : value > 65535 ? 65535 : (uint16_t)value; }

/* The blend's tables for `format`, made from the drawn banner when they are not yet. */
static int blend_tables(cpango_banner *banner, int format, int width, int rows, int full_range) {
    int pitch;
    const uint32_t *pixels = overlay(banner, width, rows, &pitch);
    if (!pixels) return 0;
    if (banner->blend_valid && banner->blend_format == format && banner->blend_width == width && banner->blend_rows == rows
        && banner->blend_full_range == full_range) return 1;
    size_t count = format == FORMAT_RGB24 ? (size_t)width * rows * 3
                 : format == FORMAT_YUYV ? (size_t)width * rows * 2
                 : (size_t)width * rows + 2 * (size_t)(width / 2) * (size_t)(rows / 2);
    if (count > banner->blend_count) {
        free(banner->over);
        free(banner->keep);
        banner->over = malloc(count * sizeof *banner->over);
        banner->keep = malloc(count * sizeof *banner->keep);
        banner->blend_count = banner->over && banner->keep ? count : 0;
        if (!banner->blend_count) return 0;
    }
    uint16_t *over = banner->over, *keep = banner->keep;
    if (format == FORMAT_RGB24) {
        for (int row = 0; row < rows; row++) {
            const uint32_t *in = pixels + (size_t)row * pitch;
            for (int x = 0; x < width; x++, over += 3, keep += 3) {
                uint32_t p = in[x];
                over[0] = u16(256 * red(p)), over[1] = u16(256 * green(p)), over[2] = u16(256 * blue(p));
                keep[0] = keep[1] = keep[2] = (uint16_t)(256 - alpha256(p));
            }
        }
    } else if (format == FORMAT_YUYV) {
        for (int row = 0; row < rows; row++) {
            const uint32_t *in = pixels + (size_t)row * pitch;
            for (int x = 0; x + 1 < width; x += 2, over += 4, keep += 4) {
                uint32_t a = in[x], b = in[x + 1];
                int keep_a = 256 - alpha256(a), keep_b = 256 - alpha256(b);
                over[0] = u16(luma_of(a, full_range)), keep[0] = (uint16_t)keep_a;
                over[2] = u16(luma_of(b, full_range)), keep[2] = (uint16_t)keep_b;
                over[1] = u16((cb_of(a, full_range) + cb_of(b, full_range) + 1) / 2);
                over[3] = u16((cr_of(a, full_range) + cr_of(b, full_range) + 1) / 2);
                keep[1] = keep[3] = (uint16_t)((keep_a + keep_b + 1) / 2);
            }
        }
    } else {
        for (int row = 0; row < rows; row++) {
            const uint32_t *in = pixels + (size_t)row * pitch;
            for (int x = 0; x < width; x++, over++, keep++) {
                *over = u16(luma_of(in[x], full_range));
                *keep = (uint16_t)(256 - alpha256(in[x]));
            }
        }
        /* Each chroma sample from the two-by-two block it covers: Cb's plane, then Cr's. */
        size_t chroma = (size_t)(width / 2) * (size_t)(rows / 2);
        for (int row = 0; row + 1 < rows; row += 2) {
            const uint32_t *top = pixels + (size_t)row * pitch, *bottom = top + pitch;
            for (int x = 0; x + 1 < width; x += 2, over++, keep++) {
                uint32_t block[4] = {top[x], top[x + 1], bottom[x], bottom[x + 1]};
                int kept = 0, cb = 0, cr = 0;
                for (int i = 0; i < 4; i++) {
                    kept += 256 - alpha256(block[i]);
                    cb += cb_of(block[i], full_range);
                    cr += cr_of(block[i], full_range);
                }
                over[0] = u16((cb + 2) / 4), over[chroma] = u16((cr + 2) / 4);
                keep[0] = keep[chroma] = (uint16_t)((kept + 2) / 4);
            }
        }
    }
    banner->blend_format = format;
    banner->blend_width = width;
    banner->blend_rows = rows;
    banner->blend_full_range = full_range;
    banner->blend_valid = 1;
    return 1;
}

/* One run of bytes blended: what the banner adds, and what stays of each byte. A plain loop of
 * 16-bit tables, which the compiler vectorizes: the whole per-frame cost of the banner. */
static void blend_bytes(uint8_t *bytes, const uint16_t *over, const uint16_t *keep, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint32_t value = ((uint32_t)over[i] + (uint32_t)keep[i] * bytes[i] + 128) >> 8;
        bytes[i] = (uint8_t)(value > 255 ? 255 : value);
    }
}

int cpango_draw_on_rgb24(cpango_banner *banner, uint8_t *rgb, int width, int rows, int stride) {
    if (!blend_tables(banner, FORMAT_RGB24, width, rows, 0)) return 0;
    size_t line = (size_t)width * 3;
    for (int row = 0; row < rows; row++) blend_bytes(rgb + (size_t)row * stride, banner->over + row * line, banner->keep + row * line, line);
    return 1;
}

int cpango_draw_on_yuyv(cpango_banner *banner, uint8_t *yuyv, int width, int rows, int stride, int full_range) {
    if (!blend_tables(banner, FORMAT_YUYV, width, rows, full_range)) return 0;
    size_t line = (size_t)(width & ~1) * 2;
    for (int row = 0; row < rows; row++) blend_bytes(yuyv + (size_t)row * stride, banner->over + row * line, banner->keep + row * line, line);
    return 1;
}

int cpango_draw_on_yu12(cpango_banner *banner, uint8_t *y, int y_stride, uint8_t *u, uint8_t *v, int chroma_stride,
                        int width, int rows, int full_range) {
    if (!blend_tables(banner, FORMAT_YU12, width, rows, full_range)) return 0;
    const uint16_t *over = banner->over, *keep = banner->keep;
    for (int row = 0; row < rows; row++, over += width, keep += width) blend_bytes(y + (size_t)row * y_stride, over, keep, (size_t)width);
    size_t half = (size_t)(width / 2), chroma = half * (size_t)(rows / 2);
    for (int row = 0; row < rows / 2; row++, over += half, keep += half) {
        blend_bytes(u + (size_t)row * chroma_stride, over, keep, half);
        blend_bytes(v + (size_t)row * chroma_stride, over + chroma, keep + chroma, half);
    }
    return 1;
}

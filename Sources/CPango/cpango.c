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
enum { CAIRO_STATUS_SUCCESS = 0, CAIRO_FORMAT_RGB24 = 1, PANGO_SCALE = 1024 };

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
    /* cairo's pixels of the strip, kept for the next frame of the same size. */
    unsigned char *scratch;
    int scratch_width, scratch_rows, scratch_stride;
    cairo_surface_t *surface;
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

static void set_side(struct side *side, const char *text) {
    if (!text) text = "";
    if (side->text && strcmp(side->text, text) == 0) return;
    free(side->text);
    side->text = strdup(text);
    PANGO(pango_layout_set_text)(side->layout, text, -1);
    if (*text) {
        PANGO(pango_layout_get_pixel_size)(side->layout, &side->width, &side->height);
    } else {
        side->width = side->height = 0;
    }
}

void cpango_banner_set_text(cpango_banner *banner, const char *start, const char *end) {
    set_side(&banner->start, start);
    set_side(&banner->end, end);
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
    banner->background = background;
    banner->text = text;
}

/* The strip's cairo pixels, `width` x `rows`: kept from the last frame when the size holds. */
static uint32_t *scratch(cpango_banner *banner, int width, int rows, int *stride_pixels) {
    if (banner->scratch_width != width || banner->scratch_rows != rows) {
        free_surface(banner);
        int stride = PANGO(cairo_format_stride_for_width)(CAIRO_FORMAT_RGB24, width);
        if (stride <= 0) return NULL;
        banner->scratch = aligned_alloc(16, ((size_t)stride * (size_t)rows + 15) & ~(size_t)15);
        if (!banner->scratch) return NULL;
        banner->surface = PANGO(cairo_image_surface_create_for_data)(banner->scratch, CAIRO_FORMAT_RGB24, width, rows, stride);
        if (PANGO(cairo_surface_status)(banner->surface) != CAIRO_STATUS_SUCCESS) {
            free_surface(banner);
            return NULL;
        }
        banner->scratch_width = width;
        banner->scratch_rows = rows;
        banner->scratch_stride = stride;
    }
    *stride_pixels = banner->scratch_stride / 4;
    return (uint32_t *)banner->scratch;
}

static int background_is_opaque(const cpango_banner *banner) { return (banner->background & 0xff) == 0xff; }

/* The background over the strip, then each text: the start's after the margin, the end's
 * against the right margin, both a margin below the strip's top. */
static void draw(cpango_banner *banner, int width) {
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
}

static inline uint8_t clamp(int value) { return value < 0 ? 0 : value > 255 ? 255 : (uint8_t)value; }
static inline uint32_t xrgb(int r, int g, int b) {
    return (uint32_t)clamp(r) << 16 | (uint32_t)clamp(g) << 8 | (uint32_t)clamp(b);
}

/* BT.601, integer: limited range (Y 16-235, chroma 16-240) or full, as JPEG's. */
static inline uint32_t rgb_of_yuv(int y, int u, int v, int full_range) {
    int d = u - 128, e = v - 128;
    if (full_range) {
        int c = y * 256;
        return xrgb((c + 359 * e + 128) >> 8, (c - 88 * d - 183 * e + 128) >> 8, (c + 454 * d + 128) >> 8);
    }
    int c = 298 * (y - 16);
    return xrgb((c + 409 * e + 128) >> 8, (c - 100 * d - 208 * e + 128) >> 8, (c + 516 * d + 128) >> 8);
}
static inline int red(uint32_t p) { return (int)(p >> 16 & 0xff); }
static inline int green(uint32_t p) { return (int)(p >> 8 & 0xff); }
static inline int blue(uint32_t p) { return (int)(p & 0xff); }
static inline uint8_t luma(int r, int g, int b, int full_range) {
    return full_range ? clamp((77 * r + 150 * g + 29 * b + 128) >> 8) : clamp(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16);
}
/* Chroma of the sums of `n` pixels' components. */
static inline void chroma(int r, int g, int b, int n, int full_range, uint8_t *u, uint8_t *v) {
    int half = 128 * n;
    if (full_range) {
        *u = clamp(((-43 * r - 85 * g + 128 * b + half) / n >> 8) + 128);
        *v = clamp(((128 * r - 107 * g - 21 * b + half) / n >> 8) + 128);
    } else {
        *u = clamp(((-38 * r - 74 * g + 112 * b + half) / n >> 8) + 128);
        *v = clamp(((112 * r - 94 * g - 18 * b + half) / n >> 8) + 128);
    }
}

int cpango_draw_on_rgb24(cpango_banner *banner, uint8_t *rgb, int width, int rows, int stride) {
    int pitch;
    uint32_t *pixels = scratch(banner, width, rows, &pitch);
    if (!pixels) return 0;
    /* An opaque background covers the strip: what was there is not read. */
    if (!background_is_opaque(banner)) {
        for (int row = 0; row < rows; row++) {
            const uint8_t *in = rgb + (size_t)row * stride;
            uint32_t *out = pixels + (size_t)row * pitch;
            for (int x = 0; x < width; x++) out[x] = xrgb(in[3 * x], in[3 * x + 1], in[3 * x + 2]);
        }
    }
    draw(banner, width);
    for (int row = 0; row < rows; row++) {
        const uint32_t *in = pixels + (size_t)row * pitch;
        uint8_t *out = rgb + (size_t)row * stride;
        for (int x = 0; x < width; x++) {
            out[3 * x] = (uint8_t)red(in[x]);
            out[3 * x + 1] = (uint8_t)green(in[x]);
            out[3 * x + 2] = (uint8_t)blue(in[x]);
        }
    }
    return 1;
}

int cpango_draw_on_yuyv(cpango_banner *banner, uint8_t *yuyv, int width, int rows, int stride, int full_range) {
    int pitch;
    uint32_t *pixels = scratch(banner, width, rows, &pitch);
    if (!pixels) return 0;
    int pairs = width / 2;
    if (!background_is_opaque(banner)) {
        for (int row = 0; row < rows; row++) {
            const uint8_t *in = yuyv + (size_t)row * stride;
            uint32_t *out = pixels + (size_t)row * pitch;
            for (int x = 0; x < pairs; x++) {
                int u = in[4 * x + 1], v = in[4 * x + 3];
                out[2 * x] = rgb_of_yuv(in[4 * x], u, v, full_range);
                out[2 * x + 1] = rgb_of_yuv(in[4 * x + 2], u, v, full_range);
            }
        }
    }
    draw(banner, width);
    for (int row = 0; row < rows; row++) {
        const uint32_t *in = pixels + (size_t)row * pitch;
        uint8_t *out = yuyv + (size_t)row * stride;
        for (int x = 0; x < pairs; x++) {
            uint32_t a = in[2 * x], b = in[2 * x + 1];
            out[4 * x] = luma(red(a), green(a), blue(a), full_range);
            out[4 * x + 2] = luma(red(b), green(b), blue(b), full_range);
            chroma(red(a) + red(b), green(a) + green(b), blue(a) + blue(b), 2, full_range, &out[4 * x + 1], &out[4 * x + 3]);
        }
    }
    return 1;
}

int cpango_draw_on_yu12(cpango_banner *banner, uint8_t *y, int y_stride, uint8_t *u, uint8_t *v, int chroma_stride,
                        int width, int rows, int full_range) {
    int pitch;
    uint32_t *pixels = scratch(banner, width, rows, &pitch);
    if (!pixels) return 0;
    if (!background_is_opaque(banner)) {
        for (int row = 0; row < rows; row++) {
            const uint8_t *luma_row = y + (size_t)row * y_stride;
            const uint8_t *u_row = u + (size_t)(row / 2) * chroma_stride, *v_row = v + (size_t)(row / 2) * chroma_stride;
            uint32_t *out = pixels + (size_t)row * pitch;
            for (int x = 0; x < width; x++) out[x] = rgb_of_yuv(luma_row[x], u_row[x / 2], v_row[x / 2], full_range);
        }
    }
    draw(banner, width);
    for (int row = 0; row < rows; row++) {
        const uint32_t *in = pixels + (size_t)row * pitch;
        uint8_t *luma_row = y + (size_t)row * y_stride;
        for (int x = 0; x < width; x++) luma_row[x] = luma(red(in[x]), green(in[x]), blue(in[x]), full_range);
    }
    /* Each chroma sample from the two-by-two block it covers (one or two pixels at an odd edge). */
    for (int row = 0; row + 1 < rows; row += 2) {
        const uint32_t *top = pixels + (size_t)row * pitch, *bottom = top + pitch;
        uint8_t *u_row = u + (size_t)(row / 2) * chroma_stride, *v_row = v + (size_t)(row / 2) * chroma_stride;
        for (int x = 0; x < width; x += 2) {
            int n = x + 1 < width ? 4 : 2;
            uint32_t a = top[x], b = bottom[x], c = x + 1 < width ? top[x + 1] : 0, d = x + 1 < width ? bottom[x + 1] : 0;
            chroma(red(a) + red(b) + red(c) + red(d), green(a) + green(b) + green(c) + green(d),
                   blue(a) + blue(b) + blue(c) + blue(d), n, full_range, &u_row[x / 2], &v_row[x / 2]);
        }
    }
    return 1;
}

/* libchafa through dlopen: see include/cchafa.h. */
#include "cchafa.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cchafa_functions {
    int loaded; /* 0 not tried, 1 ok, -1 failed */
    ChafaTermDb *(*term_db_get_default)(void);
    ChafaTermInfo *(*term_db_detect)(ChafaTermDb *, gchar **);
    ChafaTermInfo *(*term_db_get_fallback_info)(ChafaTermDb *);
    void (*term_info_supplement)(ChafaTermInfo *, ChafaTermInfo *);
    gboolean (*term_info_have_seq)(const ChafaTermInfo *, ChafaTermSeq);
    void (*term_info_unref)(ChafaTermInfo *);
    ChafaCanvasConfig *(*canvas_config_new)(void);
    void (*canvas_config_unref)(ChafaCanvasConfig *);
    void (*canvas_config_set_geometry)(ChafaCanvasConfig *, gint, gint);
    void (*canvas_config_set_canvas_mode)(ChafaCanvasConfig *, ChafaCanvasMode);
    void (*canvas_config_set_pixel_mode)(ChafaCanvasConfig *, ChafaPixelMode);
    void (*canvas_config_set_cell_geometry)(ChafaCanvasConfig *, gint, gint);
    void (*canvas_config_set_symbol_map)(ChafaCanvasConfig *, const ChafaSymbolMap *);
    void (*canvas_config_set_work_factor)(ChafaCanvasConfig *, gfloat);
    ChafaSymbolMap *(*symbol_map_new)(void);
    void (*symbol_map_unref)(ChafaSymbolMap *);
    void (*symbol_map_add_by_tags)(ChafaSymbolMap *, ChafaSymbolTags);
    void (*symbol_map_remove_by_tags)(ChafaSymbolMap *, ChafaSymbolTags);
    ChafaCanvas *(*canvas_new)(const ChafaCanvasConfig *);
    void (*canvas_unref)(ChafaCanvas *);
    void (*canvas_draw_all_pixels)(ChafaCanvas *, ChafaPixelType, const guint8 *, gint, gint, gint);
    GString *(*canvas_print)(ChafaCanvas *, ChafaTermInfo *);
    gint (*canvas_set_char_at)(ChafaCanvas *, gint, gint, gunichar);
    void (*canvas_set_colors_at)(ChafaCanvas *, gint, gint, gint, gint);
    void (*calc_canvas_geometry)(gint, gint, gint *, gint *, gfloat, gboolean, gboolean);
    gchar *(*string_free)(GString *, gboolean);
};

/* The one table: this file is compiled once, so there is one copy of it. (A static in a header
 * would be copied into each Swift file that calls through it, and only the loader's copy filled.) */
static struct cchafa_functions cchafa_table;
#define cchafa_api cchafa_table


/* Assigned with a cast to the field's own type: a store through a `void **` would not alias a
 * function pointer for the optimiser, which could then assume the table is never filled. */
#define CCHAFA_BIND(field, symbol) \
    cchafa_api.field = (__typeof__(cchafa_api.field))dlsym(library, symbol); \
    if (!cchafa_api.field) missing = symbol;

/* Loads libchafa once. Returns 1 when it is usable; else 0, with the reason in `why`. */
int cchafa_load(char *why, size_t why_size) {
    if (cchafa_api.loaded == 0) {
        const char *missing = NULL;
        void *library = dlopen("libchafa.so.0", RTLD_NOW | RTLD_LOCAL);
        cchafa_api.loaded = -1;
        if (library) {
            CCHAFA_BIND(term_db_get_default, "chafa_term_db_get_default")
            CCHAFA_BIND(term_db_detect, "chafa_term_db_detect")
            CCHAFA_BIND(term_db_get_fallback_info, "chafa_term_db_get_fallback_info")
            CCHAFA_BIND(term_info_supplement, "chafa_term_info_supplement")
            CCHAFA_BIND(term_info_have_seq, "chafa_term_info_have_seq")
            CCHAFA_BIND(term_info_unref, "chafa_term_info_unref")
            CCHAFA_BIND(canvas_config_new, "chafa_canvas_config_new")
            CCHAFA_BIND(canvas_config_unref, "chafa_canvas_config_unref")
            CCHAFA_BIND(canvas_config_set_geometry, "chafa_canvas_config_set_geometry")
            CCHAFA_BIND(canvas_config_set_canvas_mode, "chafa_canvas_config_set_canvas_mode")
            CCHAFA_BIND(canvas_config_set_pixel_mode, "chafa_canvas_config_set_pixel_mode")
            CCHAFA_BIND(canvas_config_set_cell_geometry, "chafa_canvas_config_set_cell_geometry")
            CCHAFA_BIND(canvas_config_set_symbol_map, "chafa_canvas_config_set_symbol_map")
            CCHAFA_BIND(canvas_config_set_work_factor, "chafa_canvas_config_set_work_factor")
            CCHAFA_BIND(symbol_map_new, "chafa_symbol_map_new")
            CCHAFA_BIND(symbol_map_unref, "chafa_symbol_map_unref")
            CCHAFA_BIND(symbol_map_add_by_tags, "chafa_symbol_map_add_by_tags")
            CCHAFA_BIND(symbol_map_remove_by_tags, "chafa_symbol_map_remove_by_tags")
            CCHAFA_BIND(canvas_new, "chafa_canvas_new")
            CCHAFA_BIND(canvas_unref, "chafa_canvas_unref")
            CCHAFA_BIND(canvas_draw_all_pixels, "chafa_canvas_draw_all_pixels")
            CCHAFA_BIND(canvas_print, "chafa_canvas_print")
            CCHAFA_BIND(canvas_set_char_at, "chafa_canvas_set_char_at")
            CCHAFA_BIND(canvas_set_colors_at, "chafa_canvas_set_colors_at")
            CCHAFA_BIND(calc_canvas_geometry, "chafa_calc_canvas_geometry")
            /* GLib's, found through libchafa's own dependencies. */
            CCHAFA_BIND(string_free, "g_string_free")
            if (!missing) cchafa_api.loaded = 1;
            else if (why) snprintf(why, why_size, "libchafa.so.0 has no %s", missing);
        } else if (why) {
            const char *reason = dlerror();
            snprintf(why, why_size, "%s", reason ? reason : "libchafa.so.0 not found");
        }
    }
    return cchafa_api.loaded == 1;
}

/* What the terminal described by `envp` (NULL-terminated "NAME=value" strings) can show,
 * decided as chafa's own tool decides it. Returns its term info (release with
 * cchafa_terminal_release), with chafa's fallback sequences added so that a mode forced by the
 * user can still be printed. */
ChafaTermInfo *cchafa_detect(char **envp, int *canvas_mode, int *pixel_mode) {
    ChafaTermDb *db = cchafa_api.term_db_get_default();
    ChafaTermInfo *info = cchafa_api.term_db_detect(db, envp);
    gboolean (*have)(const ChafaTermInfo *, ChafaTermSeq) = cchafa_api.term_info_have_seq;
    if (have(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_DIRECT) && have(info, CHAFA_TERM_SEQ_SET_COLOR_FG_DIRECT)
        && have(info, CHAFA_TERM_SEQ_SET_COLOR_BG_DIRECT))
        *canvas_mode = CHAFA_CANVAS_MODE_TRUECOLOR;
    else if (have(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_256) && have(info, CHAFA_TERM_SEQ_SET_COLOR_FG_256)
             && have(info, CHAFA_TERM_SEQ_SET_COLOR_BG_256))
        *canvas_mode = CHAFA_CANVAS_MODE_INDEXED_240;
    else if (have(info, CHAFA_TERM_SEQ_SET_COLOR_FGBG_16) && have(info, CHAFA_TERM_SEQ_SET_COLOR_FG_16)
             && have(info, CHAFA_TERM_SEQ_SET_COLOR_BG_16))
        *canvas_mode = CHAFA_CANVAS_MODE_INDEXED_16;
    else if (have(info, CHAFA_TERM_SEQ_INVERT_COLORS) && have(info, CHAFA_TERM_SEQ_RESET_ATTRIBUTES))
        *canvas_mode = CHAFA_CANVAS_MODE_FGBG_BGFG;
    else
        *canvas_mode = CHAFA_CANVAS_MODE_FGBG;

    if (have(info, CHAFA_TERM_SEQ_BEGIN_KITTY_IMMEDIATE_IMAGE_V1))
        *pixel_mode = CHAFA_PIXEL_MODE_KITTY;
    else if (have(info, CHAFA_TERM_SEQ_BEGIN_SIXELS) && have(info, CHAFA_TERM_SEQ_END_SIXELS))
        *pixel_mode = CHAFA_PIXEL_MODE_SIXELS;
    else
        *pixel_mode = CHAFA_PIXEL_MODE_SYMBOLS;

    ChafaTermInfo *fallback = cchafa_api.term_db_get_fallback_info(db);
    cchafa_api.term_info_supplement(info, fallback);
    cchafa_api.term_info_unref(fallback);
    return info;
}

void cchafa_terminal_release(ChafaTermInfo *info) { cchafa_api.term_info_unref(info); }

/* The largest canvas, in cells, that fits `*columns` x `*rows` with the picture's aspect kept,
 * for cells `font_ratio` (width / height) as wide as high. */
void cchafa_fit(int width, int height, int *columns, int *rows, float font_ratio) {
    cchafa_api.calc_canvas_geometry(width, height, columns, rows, font_ratio, TRUE, FALSE);
}

/* A canvas of `columns` x `rows` cells. `cell_width`/`cell_height` in pixels (0 when the
 * terminal does not say) size the pixel modes' images. Symbols: chafa's default set (blocks,
 * borders, space; no wide characters). */
ChafaCanvas *cchafa_canvas_new(int columns, int rows, int canvas_mode, int pixel_mode,
                                             int cell_width, int cell_height, float work_factor, int live) {
    ChafaCanvasConfig *config = cchafa_api.canvas_config_new();
    cchafa_api.canvas_config_set_geometry(config, columns, rows);
    cchafa_api.canvas_config_set_canvas_mode(config, (ChafaCanvasMode)canvas_mode);
    cchafa_api.canvas_config_set_pixel_mode(config, (ChafaPixelMode)pixel_mode);
    if (cell_width > 0 && cell_height > 0) cchafa_api.canvas_config_set_cell_geometry(config, cell_width, cell_height);
    ChafaSymbolMap *symbols = cchafa_api.symbol_map_new();
    cchafa_api.symbol_map_add_by_tags(symbols, CHAFA_SYMBOL_TAG_BLOCK);
    if (!live) cchafa_api.symbol_map_add_by_tags(symbols, CHAFA_SYMBOL_TAG_BORDER);
    cchafa_api.symbol_map_add_by_tags(symbols, CHAFA_SYMBOL_TAG_SPACE);
    cchafa_api.symbol_map_remove_by_tags(symbols, CHAFA_SYMBOL_TAG_WIDE);
    cchafa_api.canvas_config_set_symbol_map(config, symbols);
    cchafa_api.canvas_config_set_work_factor(config, work_factor);
    ChafaCanvas *canvas = cchafa_api.canvas_new(config);
    if (canvas && live && pixel_mode == CHAFA_PIXEL_MODE_SYMBOLS) {
        /* chafa 1.12 blanks every cell at the first print of a canvas never drawn on, cells set
         * one by one included (cchafa_draw_halves); one drawing of one pixel marks it drawn. */
        static const unsigned char black[3] = {0, 0, 0};
        cchafa_api.canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGB8, black, 1, 1, 3);
    }
    cchafa_api.symbol_map_unref(symbols);
    cchafa_api.canvas_config_unref(config);
    return canvas;
}

void cchafa_canvas_release(ChafaCanvas *canvas) { cchafa_api.canvas_unref(canvas); }

/* What prints the canvas (malloc'd, `*length` bytes; free() it), or NULL when memory ran out. */
static char *cchafa_print(ChafaCanvas *canvas, ChafaTermInfo *info, size_t *length) {
    GString *printed = cchafa_api.canvas_print(canvas, info);
    char *text = malloc(printed->len + 1);
    if (text) {
        memcpy(text, printed->str, printed->len);
        text[printed->len] = 0;
        *length = printed->len;
    }
    cchafa_api.string_free(printed, TRUE);
    return text;
}

/* Draws packed RGB pixels on the canvas and returns what to print (malloc'd, `*length` bytes;
 * free() it), or NULL when memory ran out. */
char *cchafa_draw(ChafaCanvas *canvas, ChafaTermInfo *info, const unsigned char *rgb,
                                int width, int height, int row_stride, size_t *length) {
    cchafa_api.canvas_draw_all_pixels(canvas, CHAFA_PIXEL_RGB8, rgb, width, height, row_stride);
    return cchafa_print(canvas, info, length);
}

/* The mean colour of the pixels [x0, x1) x [y0, y1), packed 0xRRGGBB. */
static int mean_color(const unsigned char *rgb, int row_stride, int x0, int x1, int y0, int y1) {
    unsigned sum[3] = {0, 0, 0}, count = (unsigned)((x1 - x0) * (y1 - y0));
    if (x1 <= x0 || y1 <= y0) return 0;
    for (int y = y0; y < y1; y++) {
        const unsigned char *pixel = rgb + (size_t)y * row_stride + (size_t)x0 * 3;
        for (int x = x0; x < x1; x++, pixel += 3) {
            sum[0] += pixel[0];
            sum[1] += pixel[1];
            sum[2] += pixel[2];
        }
    }
    return (int)((sum[0] / count) << 16 | (sum[1] / count) << 8 | sum[2] / count);
}

/* A live frame on a colour symbol canvas: every cell an upper half block, its foreground the
 * mean of the picture's area under the cell's top half and its background the bottom half's,
 * set through chafa's cell API and printed (colour sequences, palette lookups in the indexed
 * modes) by chafa. Why not cchafa_draw: chafa's symbol matcher sorts the 64 pixels of each cell
 * to find its two colours, which costs ~20 ms a frame for 160x48 cells even at work factor 0
 * (measured with chafa 1.12 on this project's machine); a live view needs a few milliseconds.
 * The picture must be at least `columns` x `2 * rows` pixels. */
char *cchafa_draw_halves(ChafaCanvas *canvas, ChafaTermInfo *info, const unsigned char *rgb, int width, int height,
                         int row_stride, int columns, int rows, size_t *length) {
    for (int row = 0; row < rows; row++) {
        int top = row * 2 * height / (rows * 2), middle = (row * 2 + 1) * height / (rows * 2);
        int bottom = (row * 2 + 2) * height / (rows * 2);
        for (int column = 0; column < columns; column++) {
            int left = column * width / columns, right = (column + 1) * width / columns;
            cchafa_api.canvas_set_char_at(canvas, column, row, 0x2580); /* ▀ */
            cchafa_api.canvas_set_colors_at(canvas, column, row, mean_color(rgb, row_stride, left, right, top, middle),
                                            mean_color(rgb, row_stride, left, right, middle, bottom));
        }
    }
    return cchafa_print(canvas, info, length);
}


/* libchafa through dlopen: see include/cchafa.h. */
#include "cchafa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library_loader.h"

/* The functions called, in the order of their slots; g_string_free is GLib's, found through
 * libchafa's own dependencies. */
#define CHAFA_FUNCTIONS(X) \
    X(chafa_term_db_get_default, ChafaTermDb *, (void)) \
    X(chafa_term_db_detect, ChafaTermInfo *, (ChafaTermDb *, gchar **)) \
    X(chafa_term_db_get_fallback_info, ChafaTermInfo *, (ChafaTermDb *)) \
    X(chafa_term_info_supplement, void, (ChafaTermInfo *, ChafaTermInfo *)) \
    X(chafa_term_info_have_seq, gboolean, (const ChafaTermInfo *, ChafaTermSeq)) \
    X(chafa_term_info_unref, void, (ChafaTermInfo *)) \
    X(chafa_canvas_config_new, ChafaCanvasConfig *, (void)) \
    X(chafa_canvas_config_unref, void, (ChafaCanvasConfig *)) \
    X(chafa_canvas_config_set_geometry, void, (ChafaCanvasConfig *, gint, gint)) \
    X(chafa_canvas_config_set_canvas_mode, void, (ChafaCanvasConfig *, ChafaCanvasMode)) \
    X(chafa_canvas_config_set_pixel_mode, void, (ChafaCanvasConfig *, ChafaPixelMode)) \
    X(chafa_canvas_config_set_cell_geometry, void, (ChafaCanvasConfig *, gint, gint)) \
    X(chafa_canvas_config_set_symbol_map, void, (ChafaCanvasConfig *, const ChafaSymbolMap *)) \
    X(chafa_canvas_config_set_work_factor, void, (ChafaCanvasConfig *, gfloat)) \
    X(chafa_symbol_map_new, ChafaSymbolMap *, (void)) \
    X(chafa_symbol_map_unref, void, (ChafaSymbolMap *)) \
    X(chafa_symbol_map_add_by_tags, void, (ChafaSymbolMap *, ChafaSymbolTags)) \
    X(chafa_symbol_map_remove_by_tags, void, (ChafaSymbolMap *, ChafaSymbolTags)) \
    X(chafa_canvas_new, ChafaCanvas *, (const ChafaCanvasConfig *)) \
    X(chafa_canvas_unref, void, (ChafaCanvas *)) \
    X(chafa_canvas_draw_all_pixels, void, (ChafaCanvas *, ChafaPixelType, const guint8 *, gint, gint, gint)) \
    X(chafa_canvas_print, GString *, (ChafaCanvas *, ChafaTermInfo *)) \
    X(chafa_canvas_set_char_at, gint, (ChafaCanvas *, gint, gint, gunichar)) \
    X(chafa_canvas_set_colors_at, void, (ChafaCanvas *, gint, gint, gint, gint)) \
    X(chafa_calc_canvas_geometry, void, (gint, gint, gint *, gint *, gfloat, gboolean, gboolean)) \
    X(g_string_free, gchar *, (GString *, gboolean))

LOADED_LIBRARY_FUNCTIONS(libchafa, "libchafa.so.0", CHAFA_FUNCTIONS);
#define CHAFA(name) LOADED_FUNCTION(libchafa, name)

/* Loads libchafa once, whichever thread asks first. Returns 1 when it is usable; else 0, with
 * the reason in `why`. */
int cchafa_load(char *why, size_t why_size) { return loaded_library_open(&libchafa, why, why_size); }

/* What the terminal described by `envp` (NULL-terminated "NAME=value" strings) can show,
 * decided as chafa's own tool decides it. Returns its term info (release with
 * cchafa_terminal_release), with chafa's fallback sequences added so that a mode forced by the
 * user can still be printed. */
ChafaTermInfo *cchafa_detect(char **envp, int *canvas_mode, int *pixel_mode) {
    ChafaTermDb *db = CHAFA(chafa_term_db_get_default)();
    ChafaTermInfo *info = CHAFA(chafa_term_db_detect)(db, envp);
    gboolean (*have)(const ChafaTermInfo *, ChafaTermSeq) = CHAFA(chafa_term_info_have_seq);
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

    ChafaTermInfo *fallback = CHAFA(chafa_term_db_get_fallback_info)(db);
    CHAFA(chafa_term_info_supplement)(info, fallback);
    CHAFA(chafa_term_info_unref)(fallback);
    return info;
}

void cchafa_terminal_release(ChafaTermInfo *info) { CHAFA(chafa_term_info_unref)(info); }

/* The largest canvas, in cells, that fits `*columns` x `*rows` with the picture's aspect kept,
 * for cells `font_ratio` (width / height) as wide as high. */
void cchafa_fit(int width, int height, int *columns, int *rows, float font_ratio) {
    CHAFA(chafa_calc_canvas_geometry)(width, height, columns, rows, font_ratio, TRUE, FALSE);
}

/* A canvas of `columns` x `rows` cells. `cell_width`/`cell_height` in pixels (0 when the
 * terminal does not say) size the pixel modes' images. Symbols: chafa's default set (blocks,
 * borders, space; no wide characters). */
ChafaCanvas *cchafa_canvas_new(int columns, int rows, int canvas_mode, int pixel_mode,
                                             int cell_width, int cell_height, float work_factor, int live) {
    ChafaCanvasConfig *config = CHAFA(chafa_canvas_config_new)();
    CHAFA(chafa_canvas_config_set_geometry)(config, columns, rows);
    CHAFA(chafa_canvas_config_set_canvas_mode)(config, (ChafaCanvasMode)canvas_mode);
    CHAFA(chafa_canvas_config_set_pixel_mode)(config, (ChafaPixelMode)pixel_mode);
    if (cell_width > 0 && cell_height > 0) CHAFA(chafa_canvas_config_set_cell_geometry)(config, cell_width, cell_height);
    ChafaSymbolMap *symbols = CHAFA(chafa_symbol_map_new)();
    CHAFA(chafa_symbol_map_add_by_tags)(symbols, CHAFA_SYMBOL_TAG_BLOCK);
    if (!live) CHAFA(chafa_symbol_map_add_by_tags)(symbols, CHAFA_SYMBOL_TAG_BORDER);
    CHAFA(chafa_symbol_map_add_by_tags)(symbols, CHAFA_SYMBOL_TAG_SPACE);
    CHAFA(chafa_symbol_map_remove_by_tags)(symbols, CHAFA_SYMBOL_TAG_WIDE);
    CHAFA(chafa_canvas_config_set_symbol_map)(config, symbols);
    CHAFA(chafa_canvas_config_set_work_factor)(config, work_factor);
    ChafaCanvas *canvas = CHAFA(chafa_canvas_new)(config);
    if (canvas && live && pixel_mode == CHAFA_PIXEL_MODE_SYMBOLS) {
        /* chafa 1.12 blanks every cell at the first print of a canvas never drawn on, cells set
         * one by one included (cchafa_draw_halves); one drawing of one pixel marks it drawn. */
        static const unsigned char black[3] = {0, 0, 0};
        CHAFA(chafa_canvas_draw_all_pixels)(canvas, CHAFA_PIXEL_RGB8, black, 1, 1, 3);
    }
    CHAFA(chafa_symbol_map_unref)(symbols);
    CHAFA(chafa_canvas_config_unref)(config);
    return canvas;
}

void cchafa_canvas_release(ChafaCanvas *canvas) { CHAFA(chafa_canvas_unref)(canvas); }

/* What prints the canvas (malloc'd, `*length` bytes; free() it), or NULL when memory ran out. */
static char *cchafa_print(ChafaCanvas *canvas, ChafaTermInfo *info, size_t *length) {
    GString *printed = CHAFA(chafa_canvas_print)(canvas, info);
    char *text = malloc(printed->len + 1);
    if (text) {
        memcpy(text, printed->str, printed->len);
        text[printed->len] = 0;
        *length = printed->len;
    }
    CHAFA(g_string_free)(printed, TRUE);
    return text;
}

/* Draws packed RGB pixels on the canvas and returns what to print (malloc'd, `*length` bytes;
 * free() it), or NULL when memory ran out. */
char *cchafa_draw(ChafaCanvas *canvas, ChafaTermInfo *info, const unsigned char *rgb,
                                int width, int height, int row_stride, size_t *length) {
    CHAFA(chafa_canvas_draw_all_pixels)(canvas, CHAFA_PIXEL_RGB8, rgb, width, height, row_stride);
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
            CHAFA(chafa_canvas_set_char_at)(canvas, column, row, 0x2580); /* ▀ */
            CHAFA(chafa_canvas_set_colors_at)(canvas, column, row, mean_color(rgb, row_stride, left, right, top, middle),
                                            mean_color(rgb, row_stride, left, right, middle, bottom));
        }
    }
    return cchafa_print(canvas, info, length);
}


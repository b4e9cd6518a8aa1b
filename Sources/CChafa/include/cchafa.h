#ifndef CAMROLL_CCHAFA_SHIM_H
#define CAMROLL_CCHAFA_SHIM_H
/*
 * Terminal pictures with libchafa (kitty graphics, sixels, iTerm2 images, or colour symbol
 * blocks), loaded with dlopen() the first time a picture is drawn: chafa brings GLib, whose
 * loading and constructors every `snap` would otherwise pay for before its first photo. Only
 * chafa's headers are used at build time.
 *
 * Drawing runs in C: a canvas is made once per geometry and redrawn for every preview frame;
 * the text chafa prints is handed to Swift as one malloc'd buffer.
 *
 * Nothing of chafa's is needed to build: its headers need GLib's, which a system-library target
 * cannot point at without linking both. The few types are opaque here and the constants are
 * chafa 1.x's (its enums only ever grow at the end).
 */
#include <stddef.h>

typedef struct ChafaTermDb ChafaTermDb;
typedef struct ChafaTermInfo ChafaTermInfo;
typedef struct ChafaCanvasConfig ChafaCanvasConfig;
typedef struct ChafaSymbolMap ChafaSymbolMap;
typedef struct ChafaCanvas ChafaCanvas;
typedef int gboolean;
typedef int gint;
typedef float gfloat;
typedef char gchar;
typedef unsigned char guint8;
typedef unsigned int gunichar;
typedef struct { gchar *str; size_t len; size_t allocated_len; } GString;
typedef int ChafaCanvasMode, ChafaPixelMode, ChafaTermSeq, ChafaSymbolTags, ChafaPixelType;
#define TRUE 1
#define FALSE 0

enum {
    CHAFA_CANVAS_MODE_TRUECOLOR = 0, CHAFA_CANVAS_MODE_INDEXED_240 = 2, CHAFA_CANVAS_MODE_INDEXED_16 = 3,
    CHAFA_CANVAS_MODE_FGBG_BGFG = 4, CHAFA_CANVAS_MODE_FGBG = 5,
};
enum {
    CHAFA_PIXEL_MODE_SYMBOLS = 0, CHAFA_PIXEL_MODE_SIXELS = 1, CHAFA_PIXEL_MODE_KITTY = 2, CHAFA_PIXEL_MODE_ITERM2 = 3,
};
enum {
    CHAFA_TERM_SEQ_RESET_ATTRIBUTES = 2, CHAFA_TERM_SEQ_INVERT_COLORS = 4,
    CHAFA_TERM_SEQ_SET_COLOR_FG_DIRECT = 31, CHAFA_TERM_SEQ_SET_COLOR_BG_DIRECT = 32, CHAFA_TERM_SEQ_SET_COLOR_FGBG_DIRECT = 33,
    CHAFA_TERM_SEQ_SET_COLOR_FG_256 = 34, CHAFA_TERM_SEQ_SET_COLOR_BG_256 = 35, CHAFA_TERM_SEQ_SET_COLOR_FGBG_256 = 36,
    CHAFA_TERM_SEQ_SET_COLOR_FG_16 = 37, CHAFA_TERM_SEQ_SET_COLOR_BG_16 = 38, CHAFA_TERM_SEQ_SET_COLOR_FGBG_16 = 39,
    CHAFA_TERM_SEQ_BEGIN_SIXELS = 40, CHAFA_TERM_SEQ_END_SIXELS = 41, CHAFA_TERM_SEQ_BEGIN_KITTY_IMMEDIATE_IMAGE_V1 = 43,
};
enum { CHAFA_SYMBOL_TAG_SPACE = 1, CHAFA_SYMBOL_TAG_BLOCK = 8, CHAFA_SYMBOL_TAG_BORDER = 16, CHAFA_SYMBOL_TAG_WIDE = 1 << 18 };
enum { CHAFA_PIXEL_RGB8 = 8 };

/* Loads libchafa once. Returns 1 when it is usable; else 0, with the reason in `why`. */
int cchafa_load(char *why, size_t why_size);

/* What the terminal described by `envp` (NULL-terminated "NAME=value" strings) can show,
 * decided as chafa's own tool decides it. Returns its term info (release with
 * cchafa_terminal_release), with chafa's fallback sequences added so that a mode forced by the
 * user can still be printed. */
ChafaTermInfo *cchafa_detect(char **envp, int *canvas_mode, int *pixel_mode);
void cchafa_terminal_release(ChafaTermInfo *info);

/* The largest canvas, in cells, that fits `*columns` x `*rows` with the picture's aspect kept,
 * for cells `font_ratio` (width / height) as wide as high. */
void cchafa_fit(int width, int height, int *columns, int *rows, float font_ratio);

/* A canvas of `columns` x `rows` cells. `cell_width`/`cell_height` in pixels (0 when the
 * terminal does not say) size the pixel modes' images. Symbols: chafa's default set (blocks,
 * borders, space; no wide characters), or with `live` blocks and space only, far fewer shapes
 * to match a cell against for a preview redrawn many times a second, and ready for
 * cchafa_draw_halves. */
ChafaCanvas *cchafa_canvas_new(int columns, int rows, int canvas_mode, int pixel_mode, int cell_width, int cell_height,
                               float work_factor, int live);
void cchafa_canvas_release(ChafaCanvas *canvas);

/* Draws packed RGB pixels on the canvas and returns what to print (malloc'd, `*length` bytes;
 * free() it), or NULL when memory ran out. */
char *cchafa_draw(ChafaCanvas *canvas, ChafaTermInfo *info, const unsigned char *rgb, int width, int height,
                  int row_stride, size_t *length);
/* A live frame on a colour symbol canvas (made with `live`): upper half blocks, each cell's two
 * colours the means of the picture under its halves, printed by chafa. A few milliseconds where
 * chafa's symbol matching takes tens (see cchafa.c). The picture must be at least `columns` x
 * `2 * rows` pixels; NULL when memory ran out. */
char *cchafa_draw_halves(ChafaCanvas *canvas, ChafaTermInfo *info, const unsigned char *rgb, int width, int height,
                         int row_stride, int columns, int rows, size_t *length);

#endif

/* librsvg and cairo through dlopen: see include/crsvg.h. */
#include "crsvg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library_loader.h"

typedef struct RsvgHandle RsvgHandle;
typedef struct cairo_surface cairo_surface_t;
typedef struct cairo cairo_t;
typedef int cairo_status_t;
typedef struct { unsigned int domain; int code; char *message; } GError;
typedef struct { double x, y, width, height; } RsvgRectangle;
typedef cairo_status_t (*cairo_write_func_t)(void *closure, const unsigned char *data, unsigned int length);
enum { CAIRO_STATUS_SUCCESS = 0, CAIRO_STATUS_WRITE_ERROR = 11, CAIRO_FORMAT_ARGB32 = 0 };

/* The functions called, in the order of their slots. dlsym on librsvg's handle also finds the
 * symbols of what it links: GObject, GLib, cairo. */
#define RSVG_FUNCTIONS(X) \
    X(rsvg_handle_new_from_data, RsvgHandle *, (const unsigned char *, size_t, GError **)) \
    X(rsvg_handle_render_document, int, (RsvgHandle *, cairo_t *, const RsvgRectangle *, GError **)) \
    X(g_object_unref, void, (void *)) \
    X(g_error_free, void, (GError *)) \
    X(cairo_image_surface_create, cairo_surface_t *, (int format, int width, int height)) \
    X(cairo_surface_destroy, void, (cairo_surface_t *)) \
    X(cairo_surface_status, cairo_status_t, (cairo_surface_t *)) \
    X(cairo_surface_write_to_png_stream, cairo_status_t, (cairo_surface_t *, cairo_write_func_t, void *)) \
    X(cairo_create, cairo_t *, (cairo_surface_t *)) \
    X(cairo_destroy, void, (cairo_t *)) \
    X(cairo_status_to_string, const char *, (cairo_status_t))

LOADED_LIBRARY_FUNCTIONS(librsvg, "librsvg-2.so.2", RSVG_FUNCTIONS);
#define RSVG(name) LOADED_FUNCTION(librsvg, name)

int crsvg_load(char *why, size_t why_size) {
    if (loaded_library_open(&librsvg, why, why_size)) return 1;
    /* A function missing: a librsvg older than rsvg_handle_render_document. */
    if (why && strstr(why, " has no ")) snprintf(why + strlen(why), why_size - strlen(why), " (librsvg 2.46 or later is needed)");
    return 0;
}

/* The PNG bytes cairo writes, gathered in one growing buffer. */
struct png_buffer { unsigned char *bytes; size_t length, capacity; };

static cairo_status_t append_png(void *closure, const unsigned char *data, unsigned int length) {
    struct png_buffer *buffer = closure;
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 65536;
        while (capacity < buffer->length + length) capacity *= 2;
        unsigned char *grown = realloc(buffer->bytes, capacity);
        if (!grown) return CAIRO_STATUS_WRITE_ERROR;
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
    return CAIRO_STATUS_SUCCESS;
}

unsigned char *crsvg_render_png(const char *svg, size_t length, int width, int height, double scale,
                                size_t *png_length, char *why, size_t why_size) {
    if (!crsvg_load(why, why_size)) return NULL;
    GError *error = NULL;
    RsvgHandle *handle = RSVG(rsvg_handle_new_from_data)((const unsigned char *)svg, length, &error);
    if (!handle) {
        snprintf(why, why_size, "librsvg cannot read the SVG: %s", error ? error->message : "unknown error");
        if (error) RSVG(g_error_free)(error);
        return NULL;
    }
    int pixels_wide = (int)(width * scale + 0.5), pixels_high = (int)(height * scale + 0.5);
    cairo_surface_t *surface = RSVG(cairo_image_surface_create)(CAIRO_FORMAT_ARGB32, pixels_wide, pixels_high);
    cairo_t *cairo = RSVG(cairo_create)(surface);
    /* The document scaled to fill the viewport: its viewBox keeps the proportions. */
    RsvgRectangle viewport = { 0, 0, pixels_wide, pixels_high };
    struct png_buffer buffer = { NULL, 0, 0 };
    unsigned char *result = NULL;
    cairo_status_t status = RSVG(cairo_surface_status)(surface);
    if (status != CAIRO_STATUS_SUCCESS) {
        snprintf(why, why_size, "cairo cannot make a %dx%d image: %s", pixels_wide, pixels_high, RSVG(cairo_status_to_string)(status));
    } else if (!RSVG(rsvg_handle_render_document)(handle, cairo, &viewport, &error)) {
        snprintf(why, why_size, "librsvg cannot draw the SVG: %s", error ? error->message : "unknown error");
        if (error) RSVG(g_error_free)(error);
    } else if ((status = RSVG(cairo_surface_write_to_png_stream)(surface, append_png, &buffer)) != CAIRO_STATUS_SUCCESS) {
        snprintf(why, why_size, "cairo cannot encode the PNG: %s", RSVG(cairo_status_to_string)(status));
    } else {
        result = buffer.bytes;
        buffer.bytes = NULL;
        *png_length = buffer.length;
    }
    free(buffer.bytes);
    RSVG(cairo_destroy)(cairo);
    RSVG(cairo_surface_destroy)(surface);
    RSVG(g_object_unref)(handle);
    return result;
}

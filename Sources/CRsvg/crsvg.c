/* librsvg and cairo through dlopen: see include/crsvg.h. */
#include "crsvg.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct RsvgHandle RsvgHandle;
typedef struct cairo_surface cairo_surface_t;
typedef struct cairo cairo_t;
typedef int cairo_status_t;
typedef struct { unsigned int domain; int code; char *message; } GError;
typedef struct { double x, y, width, height; } RsvgRectangle;
typedef cairo_status_t (*cairo_write_func_t)(void *closure, const unsigned char *data, unsigned int length);
enum { CAIRO_STATUS_SUCCESS = 0, CAIRO_STATUS_WRITE_ERROR = 11, CAIRO_FORMAT_ARGB32 = 0 };

struct crsvg_functions {
    int loaded; /* 0 not tried, 1 ok, -1 failed */
    char failure[200];
    RsvgHandle *(*handle_new_from_data)(const unsigned char *, size_t, GError **);
    int (*handle_render_document)(RsvgHandle *, cairo_t *, const RsvgRectangle *, GError **);
    void (*object_unref)(void *);
    void (*error_free)(GError *);
    cairo_surface_t *(*image_surface_create)(int format, int width, int height);
    void (*surface_destroy)(cairo_surface_t *);
    cairo_status_t (*surface_status)(cairo_surface_t *);
    cairo_status_t (*surface_write_to_png_stream)(cairo_surface_t *, cairo_write_func_t, void *);
    cairo_t *(*create)(cairo_surface_t *);
    void (*destroy)(cairo_t *);
    const char *(*status_to_string)(cairo_status_t);
};

/* One table, in this one compiled file (see cchafa.c for why not in the header). */
static struct crsvg_functions crsvg_api;

/* Assigned with a cast to the field's own type, as in cchafa.c. dlsym on librsvg's handle also
 * finds the symbols of what it links: GObject, GLib, cairo. */
#define CRSVG_BIND(field, symbol) \
    crsvg_api.field = (__typeof__(crsvg_api.field))dlsym(library, symbol); \
    if (!crsvg_api.field) missing = symbol;

int crsvg_load(char *why, size_t why_size) {
    if (crsvg_api.loaded == 0) {
        const char *missing = NULL;
        void *library = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_LOCAL);
        crsvg_api.loaded = -1;
        if (library) {
            CRSVG_BIND(handle_new_from_data, "rsvg_handle_new_from_data")
            CRSVG_BIND(handle_render_document, "rsvg_handle_render_document")
            CRSVG_BIND(object_unref, "g_object_unref")
            CRSVG_BIND(error_free, "g_error_free")
            CRSVG_BIND(image_surface_create, "cairo_image_surface_create")
            CRSVG_BIND(surface_destroy, "cairo_surface_destroy")
            CRSVG_BIND(surface_status, "cairo_surface_status")
            CRSVG_BIND(surface_write_to_png_stream, "cairo_surface_write_to_png_stream")
            CRSVG_BIND(create, "cairo_create")
            CRSVG_BIND(destroy, "cairo_destroy")
            CRSVG_BIND(status_to_string, "cairo_status_to_string")
            if (missing) {
                snprintf(crsvg_api.failure, sizeof crsvg_api.failure, "librsvg-2.so.2 has no %s (librsvg 2.46 or later is needed)", missing);
            } else {
                crsvg_api.loaded = 1;
            }
        } else {
            snprintf(crsvg_api.failure, sizeof crsvg_api.failure, "%s", dlerror());
        }
    }
    if (crsvg_api.loaded != 1) snprintf(why, why_size, "%s", crsvg_api.failure);
    return crsvg_api.loaded == 1;
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
    RsvgHandle *handle = crsvg_api.handle_new_from_data((const unsigned char *)svg, length, &error);
    if (!handle) {
        snprintf(why, why_size, "librsvg cannot read the SVG: %s", error ? error->message : "unknown error");
        if (error) crsvg_api.error_free(error);
        return NULL;
    }
    int pixels_wide = (int)(width * scale + 0.5), pixels_high = (int)(height * scale + 0.5);
    cairo_surface_t *surface = crsvg_api.image_surface_create(CAIRO_FORMAT_ARGB32, pixels_wide, pixels_high);
    cairo_t *cairo = crsvg_api.create(surface);
    /* The document scaled to fill the viewport: its viewBox keeps the proportions. */
    RsvgRectangle viewport = { 0, 0, pixels_wide, pixels_high };
    struct png_buffer buffer = { NULL, 0, 0 };
    unsigned char *result = NULL;
    cairo_status_t status = crsvg_api.surface_status(surface);
    if (status != CAIRO_STATUS_SUCCESS) {
        snprintf(why, why_size, "cairo cannot make a %dx%d image: %s", pixels_wide, pixels_high, crsvg_api.status_to_string(status));
    } else if (!crsvg_api.handle_render_document(handle, cairo, &viewport, &error)) {
        snprintf(why, why_size, "librsvg cannot draw the SVG: %s", error ? error->message : "unknown error");
        if (error) crsvg_api.error_free(error);
    } else if ((status = crsvg_api.surface_write_to_png_stream(surface, append_png, &buffer)) != CAIRO_STATUS_SUCCESS) {
        snprintf(why, why_size, "cairo cannot encode the PNG: %s", crsvg_api.status_to_string(status));
    } else {
        result = buffer.bytes;
        buffer.bytes = NULL;
        *png_length = buffer.length;
    }
    free(buffer.bytes);
    crsvg_api.destroy(cairo);
    crsvg_api.surface_destroy(surface);
    crsvg_api.object_unref(handle);
    return result;
}

#ifndef CAMROLL_CGTK_H
#define CAMROLL_CGTK_H
/*
 * The picker's window, in GTK 4, loaded with dlopen when a window is opened (as chafa and
 * librsvg are): a photo, a list or a storage test never loads GTK, and a machine without it
 * runs everything but the window. Only libgtk-4.so.1 is needed at run time, nothing of GTK's to
 * build: its types are opaque here and its constants are 4.8's (GTK keeps them stable).
 *
 * The window is built and driven here, in C, on the thread that runs the picker: widget
 * callbacks only queue events (a button, a key, a slider), which Swift takes with
 * cgtk_next_event, so no Swift closure crosses into GLib and nothing needs a destroy-notify.
 * One window per process.
 */
#include <stddef.h>

/* What the user asked for. */
enum cgtk_event_kind {
    CGTK_EVENT_SHUTTER = 1,    /* Space, the shutter button */
    CGTK_EVENT_CONFIRM = 2,    /* Enter: the shutter live, Use Photo in review */
    CGTK_EVENT_KEEP = 3,       /* u, Use Photo */
    CGTK_EVENT_RETAKE = 4,     /* r, Retake */
    CGTK_EVENT_CANCEL = 5,     /* Esc, q, the close button, Cancel */
    CGTK_EVENT_TIMER = 6,      /* t, the timer button */
    CGTK_EVENT_CAMERA = 7,     /* index: the camera chosen */
    CGTK_EVENT_RESOLUTION = 8, /* index: the size chosen */
    CGTK_EVENT_CONTROL = 9,    /* index: the control, value: its new value */
    CGTK_EVENT_MIRROR = 10,    /* value: 1 mirrored, 0 not (the preview only) */
};

struct cgtk_event {
    int kind;
    int index;
    long long value;
};

/* What the window shows below the picture. */
enum cgtk_mode {
    CGTK_MODE_LIVE = 0,    /* the camera, the shutter and the menus */
    CGTK_MODE_REVIEW = 1,  /* the shot held: Retake, Use Photo */
    CGTK_MODE_SAVING = 2,  /* the saves' progress and Cancel */
    CGTK_MODE_MESSAGE = 3, /* a message (the camera could not be opened, was unplugged) and Close */
};

/* Loads libgtk-4.so.1 once. 1 when it is usable; else 0, with why in `why`. */
int cgtk_load(char *why, size_t why_size);

/* Connects to the display and builds the window (not yet shown). 1 on success; else 0, with
 * why in `why` (no display, or one GTK cannot open). */
int cgtk_open(const char *title, const char *application_id, char *why, size_t why_size);

/* Shows the window and waits (up to 5 s) until it is on screen. */
void cgtk_present(void);

/* Destroys the window and lets GTK finish with the display. */
void cgtk_close(void);

void cgtk_set_mode(int mode);
/* The line under the picture: device, format, frame rate. */
void cgtk_set_status(const char *text);
/* Big text over the preview (the self-timer's countdown); NULL or "" hides it. */
void cgtk_set_overlay(const char *text);
/* The message mode's text: a headline and a detail (a fix, what to do). */
void cgtk_set_message(const char *headline, const char *detail);
void cgtk_set_progress(double fraction, const char *text);
/* The timer button's label ("Timer 3 s"). */
void cgtk_set_timer_label(const char *text);
void cgtk_set_mirror(int mirrored);

/* The camera menu (kind CGTK_EVENT_CAMERA) or the size menu (CGTK_EVENT_RESOLUTION): its
 * entries and the one selected; hidden with fewer than two entries. Setting it queues no event. */
void cgtk_set_choices(int kind, const char *const *labels, int count, int selected);

/* The controls popover: a slider (or a check box, for a boolean) a control. Replaces what was
 * there; none hides the button. Setting them queues no event. */
void cgtk_set_controls(int count, const char *const *labels, const long long *minimum, const long long *maximum,
                       const long long *step, const long long *value, const int *is_boolean);

/* The preview's size on screen, in pixels (0 before the window is shown). */
void cgtk_preview_size(int *width, int *height);

/* Shows packed RGB (3 bytes a pixel, `stride` bytes a row) as the picture, scaled to fit with
 * its aspect kept; copied, so `rgb` may be reused at once. Mirrored when the mirror is on. */
void cgtk_show_picture(const unsigned char *rgb, int width, int height, int stride);

/* Runs GTK's loop until an event is queued or `timeout_ms` have passed (0: only what is
 * pending). Returns the number of events queued. */
int cgtk_wait(int timeout_ms);

/* Takes the oldest queued event: 1, or 0 when there is none. */
int cgtk_next_event(struct cgtk_event *event);
#endif

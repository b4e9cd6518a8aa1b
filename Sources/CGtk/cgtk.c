/* The picker's window through GTK 4, loaded with dlopen: see include/cgtk.h. */
#include "cgtk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library_loader.h"

/* GTK's and GLib's types, opaque: only pointers to them cross this file. */
typedef struct _GtkWidget GtkWidget;
typedef struct _GObject GObject;
typedef struct _GBytes GBytes;
typedef struct _GdkTexture GdkTexture;
typedef struct _GdkDisplay GdkDisplay;
typedef struct _GVariant GVariant;
typedef struct _GParamSpec GParamSpec;
typedef struct _GMainContext GMainContext;
typedef int gboolean;
typedef void (*GCallback)(void);
typedef gboolean (*GSourceFunc)(void *);
typedef gboolean (*GtkShortcutFunc)(GtkWidget *, GVariant *, void *);

/* GTK 4.8's constants. */
enum {
    GTK_ORIENTATION_HORIZONTAL = 0, GTK_ORIENTATION_VERTICAL = 1,
    GTK_ALIGN_FILL = 0, GTK_ALIGN_START = 1, GTK_ALIGN_END = 2, GTK_ALIGN_CENTER = 3,
    GTK_CONTENT_FIT_CONTAIN = 1,
    GDK_MEMORY_R8G8B8 = 7,
    GTK_PHASE_BUBBLE = 2,
    GTK_SHORTCUT_SCOPE_LOCAL = 0,
    GTK_POLICY_NEVER = 2, GTK_POLICY_AUTOMATIC = 1,
    GTK_ACCESSIBLE_PROPERTY_LABEL = 4,
    GTK_STYLE_PROVIDER_PRIORITY_APPLICATION = 600,
};

#define GTK_FUNCTIONS(X) \
    X(gtk_init_check, gboolean, (void)) \
    X(g_set_prgname, void, (const char *)) \
    X(g_set_application_name, void, (const char *)) \
    X(g_main_context_iteration, gboolean, (GMainContext *, gboolean)) \
    X(g_timeout_add, unsigned, (unsigned, GSourceFunc, void *)) \
    X(g_source_remove, gboolean, (unsigned)) \
    X(g_signal_connect_data, unsigned long, (void *, const char *, GCallback, void *, void *, int)) \
    X(g_object_unref, void, (void *)) \
    X(g_bytes_new_take, GBytes *, (void *, size_t)) \
    X(g_bytes_unref, void, (GBytes *)) \
    X(g_malloc, void *, (size_t)) \
    X(gdk_memory_texture_new, GdkTexture *, (int, int, int, GBytes *, size_t)) \
    X(gdk_display_get_default, GdkDisplay *, (void)) \
    X(gtk_css_provider_new, void *, (void)) \
    X(gtk_css_provider_load_from_data, void, (void *, const char *, long)) \
    X(gtk_style_context_add_provider_for_display, void, (GdkDisplay *, void *, unsigned)) \
    X(gtk_window_new, GtkWidget *, (void)) \
    X(gtk_window_set_title, void, (GtkWidget *, const char *)) \
    X(gtk_window_set_default_size, void, (GtkWidget *, int, int)) \
    X(gtk_window_set_child, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_window_present, void, (GtkWidget *)) \
    X(gtk_window_destroy, void, (GtkWidget *)) \
    X(gtk_window_set_focus, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_window_get_focus_visible, gboolean, (GtkWidget *)) \
    X(gtk_widget_get_mapped, gboolean, (GtkWidget *)) \
    X(gtk_widget_get_width, int, (GtkWidget *)) \
    X(gtk_widget_get_height, int, (GtkWidget *)) \
    X(gtk_widget_set_hexpand, void, (GtkWidget *, gboolean)) \
    X(gtk_widget_set_vexpand, void, (GtkWidget *, gboolean)) \
    X(gtk_widget_set_halign, void, (GtkWidget *, int)) \
    X(gtk_widget_set_valign, void, (GtkWidget *, int)) \
    X(gtk_widget_set_visible, void, (GtkWidget *, gboolean)) \
    X(gtk_widget_set_focus_on_click, void, (GtkWidget *, gboolean)) \
    X(gtk_widget_set_tooltip_text, void, (GtkWidget *, const char *)) \
    X(gtk_widget_add_css_class, void, (GtkWidget *, const char *)) \
    X(gtk_widget_add_controller, void, (GtkWidget *, void *)) \
    X(gtk_widget_grab_focus, gboolean, (GtkWidget *)) \
    X(gtk_accessible_update_property, void, (void *, int, ...)) \
    X(gtk_box_new, GtkWidget *, (int, int)) \
    X(gtk_box_append, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_box_remove, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_overlay_new, GtkWidget *, (void)) \
    X(gtk_overlay_set_child, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_overlay_add_overlay, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_picture_new, GtkWidget *, (void)) \
    X(gtk_picture_set_paintable, void, (GtkWidget *, void *)) \
    X(gtk_picture_set_can_shrink, void, (GtkWidget *, gboolean)) \
    X(gtk_picture_set_content_fit, void, (GtkWidget *, int)) \
    X(gtk_label_new, GtkWidget *, (const char *)) \
    X(gtk_label_set_text, void, (GtkWidget *, const char *)) \
    X(gtk_label_set_wrap, void, (GtkWidget *, gboolean)) \
    X(gtk_label_set_xalign, void, (GtkWidget *, float)) \
    X(gtk_label_set_selectable, void, (GtkWidget *, gboolean)) \
    X(gtk_button_new_with_mnemonic, GtkWidget *, (const char *)) \
    X(gtk_button_set_label, void, (GtkWidget *, const char *)) \
    X(gtk_toggle_button_new_with_mnemonic, GtkWidget *, (const char *)) \
    X(gtk_toggle_button_get_active, gboolean, (GtkWidget *)) \
    X(gtk_toggle_button_set_active, void, (GtkWidget *, gboolean)) \
    X(gtk_check_button_new_with_label, GtkWidget *, (const char *)) \
    X(gtk_check_button_get_active, gboolean, (GtkWidget *)) \
    X(gtk_check_button_set_active, void, (GtkWidget *, gboolean)) \
    X(gtk_progress_bar_new, GtkWidget *, (void)) \
    X(gtk_progress_bar_set_fraction, void, (GtkWidget *, double)) \
    X(gtk_progress_bar_set_text, void, (GtkWidget *, const char *)) \
    X(gtk_progress_bar_set_show_text, void, (GtkWidget *, gboolean)) \
    X(gtk_drop_down_new_from_strings, GtkWidget *, (const char *const *)) \
    X(gtk_drop_down_get_selected, unsigned, (GtkWidget *)) \
    X(gtk_drop_down_set_selected, void, (GtkWidget *, unsigned)) \
    X(gtk_menu_button_new, GtkWidget *, (void)) \
    X(gtk_menu_button_set_label, void, (GtkWidget *, const char *)) \
    X(gtk_menu_button_set_popover, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_popover_new, GtkWidget *, (void)) \
    X(gtk_popover_set_child, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_scrolled_window_new, GtkWidget *, (void)) \
    X(gtk_scrolled_window_set_child, void, (GtkWidget *, GtkWidget *)) \
    X(gtk_scrolled_window_set_policy, void, (GtkWidget *, int, int)) \
    X(gtk_scrolled_window_set_propagate_natural_height, void, (GtkWidget *, gboolean)) \
    X(gtk_scrolled_window_set_max_content_height, void, (GtkWidget *, int)) \
    X(gtk_scale_new_with_range, GtkWidget *, (int, double, double, double)) \
    X(gtk_scale_set_draw_value, void, (GtkWidget *, gboolean)) \
    X(gtk_scale_set_digits, void, (GtkWidget *, int)) \
    X(gtk_range_set_value, void, (GtkWidget *, double)) \
    X(gtk_range_get_value, double, (GtkWidget *)) \
    X(gtk_shortcut_controller_new, void *, (void)) \
    X(gtk_shortcut_controller_set_scope, void, (void *, int)) \
    X(gtk_shortcut_controller_add_shortcut, void, (void *, void *)) \
    X(gtk_event_controller_set_propagation_phase, void, (void *, int)) \
    X(gtk_shortcut_new, void *, (void *, void *)) \
    X(gtk_shortcut_trigger_parse_string, void *, (const char *)) \
    X(gtk_callback_action_new, void *, (GtkShortcutFunc, void *, void *))

LOADED_LIBRARY_FUNCTIONS(libgtk, "libgtk-4.so.1", GTK_FUNCTIONS);
#define GTK(name) LOADED_FUNCTION(libgtk, name)

int cgtk_load(char *why, size_t why_size) { return loaded_library_open(&libgtk, why, why_size); }

#define QUEUE_SIZE 64

/* The one window, its widgets and the events its callbacks queued. */
static struct {
    GtkWidget *window, *picture, *overlay_label, *status;
    GtkWidget *live_bar, *review_bar, *saving_bar, *message_bar, *message_box;
    GtkWidget *shutter, *use, *timer, *mirror, *camera_menu, *size_menu, *controls_button, *controls_list;
    GtkWidget *camera_slot, *size_slot;
    GtkWidget *headline, *detail, *progress;
    GtkWidget **control_widgets;
    int control_count;
    int mode;
    int mirrored;
    /* While menus are filled or controls set from Swift, their callbacks queue nothing. */
    int updating;
    int popovers_open;
    struct cgtk_event queue[QUEUE_SIZE];
    int head, count;
    int timed_out;
} ui;

static void push(int kind, int index, long long value) {
    if (ui.updating) return;
    /* Full: the oldest is dropped; nobody presses 64 keys between two frames. */
    if (ui.count == QUEUE_SIZE) {
        ui.head = (ui.head + 1) % QUEUE_SIZE;
        ui.count--;
    }
    ui.queue[(ui.head + ui.count) % QUEUE_SIZE] = (struct cgtk_event){kind, index, value};
    ui.count++;
}

int cgtk_next_event(struct cgtk_event *event) {
    if (ui.count == 0) return 0;
    *event = ui.queue[ui.head];
    ui.head = (ui.head + 1) % QUEUE_SIZE;
    ui.count--;
    return 1;
}

static void connect(void *instance, const char *signal, GCallback callback, void *data) {
    GTK(g_signal_connect_data)(instance, signal, callback, data, NULL, 0);
}

static void on_clicked(GtkWidget *button, void *data) {
    (void)button;
    push((int)(intptr_t)data, 0, 0);
}

static gboolean on_close_request(GtkWidget *window, void *data) {
    (void)window, (void)data;
    push(CGTK_EVENT_CANCEL, 0, 0);
    return 1; /* kept: the picker decides when the window goes */
}

static void on_mirror_toggled(GtkWidget *button, void *data) {
    (void)data;
    ui.mirrored = GTK(gtk_toggle_button_get_active)(button) ? 1 : 0;
    push(CGTK_EVENT_MIRROR, 0, ui.mirrored);
}

static gboolean on_refocus(void *data) {
    (void)data;
    if (ui.window) GTK(gtk_window_set_focus)(ui.window, NULL);
    return 0;
}

static void on_selected(GtkWidget *menu, GParamSpec *property, void *data) {
    (void)property;
    if (ui.updating) return;
    push((int)(intptr_t)data, (int)GTK(gtk_drop_down_get_selected)(menu), 0);
    /* Chosen: Space and Enter are the shutter's again, once the menu has closed (closing, it
     * gives the focus back to itself, after this). Taken back more than once: a slow machine
     * (a few frames a second) finishes closing the menu well after the first. */
    GTK(g_timeout_add)(200, on_refocus, NULL);
    GTK(g_timeout_add)(700, on_refocus, NULL);
    GTK(g_timeout_add)(1500, on_refocus, NULL);
}

static void on_control_value(GtkWidget *scale, void *data) {
    long long value = (long long)(GTK(gtk_range_get_value)(scale) + (GTK(gtk_range_get_value)(scale) < 0 ? -0.5 : 0.5));
    push(CGTK_EVENT_CONTROL, (int)(intptr_t)data, value);
}

static void on_control_toggled(GtkWidget *check, void *data) {
    push(CGTK_EVENT_CONTROL, (int)(intptr_t)data, GTK(gtk_check_button_get_active)(check) ? 1 : 0);
}

/* The controls popover open takes the keys (Esc closes it, arrows move its sliders, Space is
 * no shutter there): the window's shortcuts stand aside meanwhile. Closed, it gives the focus
 * back to the Controls button, which Space would open again: the focus is taken back, as after
 * a menu's choice, so that Space and Enter are the shutter's. */
static void on_popover_shown(GtkWidget *popover, void *data) { (void)popover, (void)data; ui.popovers_open++; }
static void on_popover_hidden(GtkWidget *popover, void *data) {
    (void)popover, (void)data;
    if (ui.popovers_open > 0) ui.popovers_open--;
    GTK(g_timeout_add)(200, on_refocus, NULL);
}

/* A key's event, in the modes where it means something; otherwise the key goes on to the
 * widget that has the focus. */
static gboolean on_shortcut(GtkWidget *widget, GVariant *arguments, void *data) {
    (void)widget, (void)arguments;
    int kind = (int)(intptr_t)data;
    if (ui.popovers_open > 0) return 0;
    switch (kind) {
    case CGTK_EVENT_SHUTTER:
    case CGTK_EVENT_TIMER:
        if (ui.mode != CGTK_MODE_LIVE) return 0;
        break;
    case CGTK_EVENT_KEEP:
    case CGTK_EVENT_RETAKE:
        if (ui.mode != CGTK_MODE_REVIEW) return 0;
        break;
    case CGTK_EVENT_MIRROR:
        if (ui.mode != CGTK_MODE_LIVE) return 0;
        GTK(gtk_toggle_button_set_active)(ui.mirror, !ui.mirrored); /* its callback queues the event */
        return 1;
    default:
        break;
    }
    push(kind, 0, 0);
    return 1;
}

static void add_shortcut(void *controller, const char *keys, int kind) {
    void *action = GTK(gtk_callback_action_new)(on_shortcut, (void *)(intptr_t)kind, NULL);
    GTK(gtk_shortcut_controller_add_shortcut)(controller, GTK(gtk_shortcut_new)(GTK(gtk_shortcut_trigger_parse_string)(keys), action));
}

static GtkWidget *button(const char *mnemonic, const char *tooltip, int kind) {
    GtkWidget *widget = GTK(gtk_button_new_with_mnemonic)(mnemonic);
    GTK(gtk_widget_set_focus_on_click)(widget, 0);
    GTK(gtk_widget_set_tooltip_text)(widget, tooltip);
    connect(widget, "clicked", (GCallback)on_clicked, (void *)(intptr_t)kind);
    return widget;
}

static GtkWidget *bar(void) {
    GtkWidget *box = GTK(gtk_box_new)(GTK_ORIENTATION_HORIZONTAL, 8);
    GTK(gtk_widget_add_css_class)(box, "camroll-bar");
    return box;
}

static GtkWidget *spacer(void) {
    GtkWidget *space = GTK(gtk_box_new)(GTK_ORIENTATION_HORIZONTAL, 0);
    GTK(gtk_widget_set_hexpand)(space, 1);
    return space;
}

static const char *css =
    "window.camroll { background: #1e1e1e; }"
    ".camroll-bar { padding: 8px; }"
    ".camroll-status { color: #c0c0c0; font-size: small; padding: 0 10px 8px 10px; }"
    ".camroll-overlay { color: white; font-size: 96px; font-weight: bold; text-shadow: 0 0 8px black; }"
    ".camroll-headline { color: white; font-size: x-large; font-weight: bold; }"
    ".camroll-detail { color: #e0e0e0; }"
    ".camroll-message { padding: 24px; }";

int cgtk_open(const char *title, const char *application_id, char *why, size_t why_size) {
    if (!cgtk_load(why, why_size)) return 0;
    /* The application ID names the window to the desktop: X11's WM_CLASS and Wayland's
     * app_id come from the program's name. GTK gets no argv: nothing of camroll's command
     * line is GTK's to take. */
    GTK(g_set_prgname)(application_id);
    GTK(g_set_application_name)(title);
    if (!GTK(gtk_init_check)()) {
        snprintf(why, why_size, "GTK cannot open the display");
        return 0;
    }
    void *provider = GTK(gtk_css_provider_new)();
    GTK(gtk_css_provider_load_from_data)(provider, css, -1);
    GTK(gtk_style_context_add_provider_for_display)(GTK(gdk_display_get_default)(), provider, GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

    ui.window = GTK(gtk_window_new)();
    GTK(gtk_window_set_title)(ui.window, title);
    GTK(gtk_window_set_default_size)(ui.window, 960, 640);
    GTK(gtk_widget_add_css_class)(ui.window, "camroll");
    connect(ui.window, "close-request", (GCallback)on_close_request, NULL);

    GtkWidget *column = GTK(gtk_box_new)(GTK_ORIENTATION_VERTICAL, 0);
    GTK(gtk_window_set_child)(ui.window, column);

    /* The picture, filling what the bars leave, with the countdown and messages over it. */
    GtkWidget *overlay = GTK(gtk_overlay_new)();
    GTK(gtk_widget_set_hexpand)(overlay, 1);
    GTK(gtk_widget_set_vexpand)(overlay, 1);
    ui.picture = GTK(gtk_picture_new)();
    GTK(gtk_picture_set_can_shrink)(ui.picture, 1);
    GTK(gtk_picture_set_content_fit)(ui.picture, GTK_CONTENT_FIT_CONTAIN);
    GTK(gtk_accessible_update_property)(ui.picture, GTK_ACCESSIBLE_PROPERTY_LABEL, "Camera preview", -1);
    GTK(gtk_overlay_set_child)(overlay, ui.picture);
    ui.overlay_label = GTK(gtk_label_new)("");
    GTK(gtk_widget_add_css_class)(ui.overlay_label, "camroll-overlay");
    GTK(gtk_widget_set_visible)(ui.overlay_label, 0);
    GTK(gtk_overlay_add_overlay)(overlay, ui.overlay_label);
    ui.message_box = GTK(gtk_box_new)(GTK_ORIENTATION_VERTICAL, 12);
    GTK(gtk_widget_add_css_class)(ui.message_box, "camroll-message");
    GTK(gtk_widget_set_valign)(ui.message_box, GTK_ALIGN_CENTER);
    GTK(gtk_widget_set_halign)(ui.message_box, GTK_ALIGN_CENTER);
    ui.headline = GTK(gtk_label_new)("");
    GTK(gtk_widget_add_css_class)(ui.headline, "camroll-headline");
    GTK(gtk_label_set_wrap)(ui.headline, 1);
    ui.detail = GTK(gtk_label_new)("");
    GTK(gtk_widget_add_css_class)(ui.detail, "camroll-detail");
    GTK(gtk_label_set_wrap)(ui.detail, 1);
    GTK(gtk_label_set_selectable)(ui.detail, 1); /* a fix to copy into a terminal */
    GTK(gtk_box_append)(ui.message_box, ui.headline);
    GTK(gtk_box_append)(ui.message_box, ui.detail);
    GTK(gtk_widget_set_visible)(ui.message_box, 0);
    GTK(gtk_overlay_add_overlay)(overlay, ui.message_box);
    GTK(gtk_box_append)(column, overlay);

    /* Live: camera, size, controls, mirror on the left; timer and shutter on the right. */
    ui.live_bar = bar();
    ui.camera_slot = GTK(gtk_box_new)(GTK_ORIENTATION_HORIZONTAL, 0);
    ui.size_slot = GTK(gtk_box_new)(GTK_ORIENTATION_HORIZONTAL, 0);
    GTK(gtk_box_append)(ui.live_bar, ui.camera_slot);
    GTK(gtk_box_append)(ui.live_bar, ui.size_slot);
    ui.controls_button = GTK(gtk_menu_button_new)();
    GTK(gtk_menu_button_set_label)(ui.controls_button, "Controls");
    GTK(gtk_widget_set_tooltip_text)(ui.controls_button, "The camera's controls");
    GTK(gtk_widget_set_focus_on_click)(ui.controls_button, 0);
    GtkWidget *popover = GTK(gtk_popover_new)();
    connect(popover, "show", (GCallback)on_popover_shown, NULL);
    connect(popover, "hide", (GCallback)on_popover_hidden, NULL);
    GtkWidget *scroller = GTK(gtk_scrolled_window_new)();
    GTK(gtk_scrolled_window_set_policy)(scroller, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    GTK(gtk_scrolled_window_set_propagate_natural_height)(scroller, 1);
    GTK(gtk_scrolled_window_set_max_content_height)(scroller, 420);
    ui.controls_list = GTK(gtk_box_new)(GTK_ORIENTATION_VERTICAL, 4);
    GTK(gtk_scrolled_window_set_child)(scroller, ui.controls_list);
    GTK(gtk_popover_set_child)(popover, scroller);
    GTK(gtk_menu_button_set_popover)(ui.controls_button, popover);
    GTK(gtk_widget_set_visible)(ui.controls_button, 0);
    GTK(gtk_box_append)(ui.live_bar, ui.controls_button);
    ui.mirror = GTK(gtk_toggle_button_new_with_mnemonic)("_Mirror");
    GTK(gtk_widget_set_focus_on_click)(ui.mirror, 0);
    GTK(gtk_widget_set_tooltip_text)(ui.mirror, "Mirror the preview (m); the photo is saved as the camera sees it");
    connect(ui.mirror, "toggled", (GCallback)on_mirror_toggled, NULL);
    GTK(gtk_box_append)(ui.live_bar, ui.mirror);
    GTK(gtk_box_append)(ui.live_bar, spacer());
    ui.timer = button("_Timer", "Take the photo after a countdown (t)", CGTK_EVENT_TIMER);
    GTK(gtk_box_append)(ui.live_bar, ui.timer);
    ui.shutter = button("Take _Photo", "Take the photo (Space)", CGTK_EVENT_SHUTTER);
    GTK(gtk_widget_add_css_class)(ui.shutter, "suggested-action");
    GTK(gtk_box_append)(ui.live_bar, ui.shutter);
    GTK(gtk_box_append)(column, ui.live_bar);

    /* Review: the shot held, Retake or Use Photo. */
    ui.review_bar = bar();
    GTK(gtk_box_append)(ui.review_bar, button("_Retake", "Back to the camera (r)", CGTK_EVENT_RETAKE));
    GTK(gtk_box_append)(ui.review_bar, spacer());
    ui.use = button("_Use Photo", "Save this photo (Enter)", CGTK_EVENT_KEEP);
    GTK(gtk_widget_add_css_class)(ui.use, "suggested-action");
    GTK(gtk_box_append)(ui.review_bar, ui.use);
    GTK(gtk_widget_set_visible)(ui.review_bar, 0);
    GTK(gtk_box_append)(column, ui.review_bar);

    /* Saving: the N saves' progress and Cancel. */
    ui.saving_bar = bar();
    ui.progress = GTK(gtk_progress_bar_new)();
    GTK(gtk_progress_bar_set_show_text)(ui.progress, 1);
    GTK(gtk_widget_set_hexpand)(ui.progress, 1);
    GTK(gtk_widget_set_valign)(ui.progress, GTK_ALIGN_CENTER);
    GTK(gtk_box_append)(ui.saving_bar, ui.progress);
    GTK(gtk_box_append)(ui.saving_bar, button("_Cancel", "Stop saving (Esc)", CGTK_EVENT_CANCEL));
    GTK(gtk_widget_set_visible)(ui.saving_bar, 0);
    GTK(gtk_box_append)(column, ui.saving_bar);

    /* A message: Close. */
    ui.message_bar = bar();
    GTK(gtk_box_append)(ui.message_bar, spacer());
    GTK(gtk_box_append)(ui.message_bar, button("_Close", "Close the window (Esc)", CGTK_EVENT_CANCEL));
    GTK(gtk_widget_set_visible)(ui.message_bar, 0);
    GTK(gtk_box_append)(column, ui.message_bar);

    ui.status = GTK(gtk_label_new)("");
    GTK(gtk_label_set_xalign)(ui.status, 0);
    GTK(gtk_widget_add_css_class)(ui.status, "camroll-status");
    GTK(gtk_box_append)(column, ui.status);

    /* The keys, on the window, after the focused widget: one reached with Tab (a menu, the
     * mirror) takes Space and Enter as GTK's widgets do, so every menu opens from the keyboard;
     * with none focused (buttons take no focus from a click) they are the shutter's. */
    void *keys = GTK(gtk_shortcut_controller_new)();
    GTK(gtk_shortcut_controller_set_scope)(keys, GTK_SHORTCUT_SCOPE_LOCAL);
    GTK(gtk_event_controller_set_propagation_phase)(keys, GTK_PHASE_BUBBLE);
    add_shortcut(keys, "space", CGTK_EVENT_SHUTTER);
    add_shortcut(keys, "Return|KP_Enter", CGTK_EVENT_CONFIRM);
    add_shortcut(keys, "Escape|q", CGTK_EVENT_CANCEL);
    add_shortcut(keys, "<Control>c|<Control>w", CGTK_EVENT_CANCEL);
    add_shortcut(keys, "r", CGTK_EVENT_RETAKE);
    add_shortcut(keys, "u", CGTK_EVENT_KEEP);
    add_shortcut(keys, "t", CGTK_EVENT_TIMER);
    add_shortcut(keys, "m", CGTK_EVENT_MIRROR);
    GTK(gtk_widget_add_controller)(ui.window, keys);
    return 1;
}

static gboolean on_timeout(void *data) {
    (void)data;
    ui.timed_out = 1;
    return 0;
}

int cgtk_wait(int timeout_ms) {
    if (timeout_ms <= 0 || ui.count > 0) {
        while (GTK(g_main_context_iteration)(NULL, 0)) {}
        return ui.count;
    }
    ui.timed_out = 0;
    unsigned source = GTK(g_timeout_add)((unsigned)timeout_ms, on_timeout, NULL);
    while (!ui.timed_out && ui.count == 0) GTK(g_main_context_iteration)(NULL, 1);
    if (!ui.timed_out) GTK(g_source_remove)(source);
    /* What else is ready (a redraw) before the caller goes on. */
    while (GTK(g_main_context_iteration)(NULL, 0)) {}
    return ui.count;
}

/* GTK gives the first widget that takes focus (a menu) the focus when the window maps, and
 * keeps it on a button that a mode hides: the focus is taken back, so that Space and Enter are
 * the shutter's until the user moves it with Tab. */
static void unfocus(void) {
    if (!GTK(gtk_window_get_focus_visible)(ui.window)) GTK(gtk_window_set_focus)(ui.window, NULL);
}

void cgtk_present(void) {
    GTK(gtk_window_present)(ui.window);
    for (int waited = 0; waited < 500 && !GTK(gtk_widget_get_mapped)(ui.window); waited++) {
        ui.timed_out = 0;
        unsigned source = GTK(g_timeout_add)(10, on_timeout, NULL);
        while (!ui.timed_out) GTK(g_main_context_iteration)(NULL, 1);
        (void)source;
    }
    unfocus();
}

void cgtk_close(void) {
    if (!ui.window) return;
    GTK(gtk_window_destroy)(ui.window);
    ui.window = NULL;
    while (GTK(g_main_context_iteration)(NULL, 0)) {}
}

void cgtk_set_mode(int mode) {
    ui.mode = mode;
    GTK(gtk_widget_set_visible)(ui.live_bar, mode == CGTK_MODE_LIVE);
    GTK(gtk_widget_set_visible)(ui.review_bar, mode == CGTK_MODE_REVIEW);
    GTK(gtk_widget_set_visible)(ui.saving_bar, mode == CGTK_MODE_SAVING);
    GTK(gtk_widget_set_visible)(ui.message_bar, mode == CGTK_MODE_MESSAGE);
    GTK(gtk_widget_set_visible)(ui.message_box, mode == CGTK_MODE_MESSAGE);
    GTK(gtk_widget_set_visible)(ui.picture, mode != CGTK_MODE_MESSAGE);
    if (mode == CGTK_MODE_MESSAGE) GTK(gtk_widget_set_visible)(ui.overlay_label, 0);
    unfocus();
}

void cgtk_set_status(const char *text) { GTK(gtk_label_set_text)(ui.status, text); }

void cgtk_set_overlay(const char *text) {
    int shown = text && *text;
    GTK(gtk_label_set_text)(ui.overlay_label, shown ? text : "");
    GTK(gtk_widget_set_visible)(ui.overlay_label, shown);
}

void cgtk_set_message(const char *headline, const char *detail) {
    GTK(gtk_label_set_text)(ui.headline, headline ? headline : "");
    GTK(gtk_label_set_text)(ui.detail, detail ? detail : "");
    GTK(gtk_widget_set_visible)(ui.detail, detail && *detail);
}

void cgtk_set_progress(double fraction, const char *text) {
    GTK(gtk_progress_bar_set_fraction)(ui.progress, fraction < 0 ? 0 : fraction > 1 ? 1 : fraction);
    GTK(gtk_progress_bar_set_text)(ui.progress, text);
}

void cgtk_set_timer_label(const char *text) { GTK(gtk_button_set_label)(ui.timer, text); }

void cgtk_set_mirror(int mirrored) {
    ui.updating = 1;
    ui.mirrored = mirrored ? 1 : 0;
    GTK(gtk_toggle_button_set_active)(ui.mirror, ui.mirrored);
    ui.updating = 0;
}

void cgtk_set_choices(int kind, const char *const *labels, int count, int selected) {
    GtkWidget *slot = kind == CGTK_EVENT_CAMERA ? ui.camera_slot : ui.size_slot;
    GtkWidget **menu = kind == CGTK_EVENT_CAMERA ? &ui.camera_menu : &ui.size_menu;
    ui.updating = 1;
    if (*menu) GTK(gtk_box_remove)(slot, *menu);
    *menu = NULL;
    if (count >= 2) {
        const char **terminated = calloc((size_t)count + 1, sizeof(*terminated));
        if (terminated) {
            memcpy(terminated, labels, (size_t)count * sizeof(*terminated));
            *menu = GTK(gtk_drop_down_new_from_strings)(terminated);
            free(terminated);
            GTK(gtk_widget_set_tooltip_text)(*menu, kind == CGTK_EVENT_CAMERA ? "Camera" : "Picture size");
            GTK(gtk_widget_set_focus_on_click)(*menu, 0);
            GTK(gtk_accessible_update_property)(*menu, GTK_ACCESSIBLE_PROPERTY_LABEL,
                                                kind == CGTK_EVENT_CAMERA ? "Camera" : "Picture size", -1);
            /* The selection first, then the callback: setting it is not the user's choice. */
            if (selected >= 0) GTK(gtk_drop_down_set_selected)(*menu, (unsigned)selected);
            connect(*menu, "notify::selected", (GCallback)on_selected, (void *)(intptr_t)kind);
            GTK(gtk_box_append)(slot, *menu);
        }
    }
    ui.updating = 0;
}

void cgtk_set_controls(int count, const char *const *labels, const long long *minimum, const long long *maximum,
                       const long long *step, const long long *value, const int *is_boolean) {
    ui.updating = 1;
    for (int index = 0; index < ui.control_count; index++) GTK(gtk_box_remove)(ui.controls_list, ui.control_widgets[index]);
    free(ui.control_widgets);
    ui.control_widgets = count > 0 ? calloc((size_t)count, sizeof(*ui.control_widgets)) : NULL;
    ui.control_count = ui.control_widgets ? count : 0;
    for (int index = 0; index < ui.control_count; index++) {
        GtkWidget *row;
        if (is_boolean[index]) {
            row = GTK(gtk_check_button_new_with_label)(labels[index]);
            GTK(gtk_check_button_set_active)(row, value[index] != 0);
            connect(row, "toggled", (GCallback)on_control_toggled, (void *)(intptr_t)index);
        } else {
            row = GTK(gtk_box_new)(GTK_ORIENTATION_VERTICAL, 0);
            GtkWidget *label = GTK(gtk_label_new)(labels[index]);
            GTK(gtk_label_set_xalign)(label, 0);
            double span = (double)(maximum[index] - minimum[index]);
            GtkWidget *scale = GTK(gtk_scale_new_with_range)(GTK_ORIENTATION_HORIZONTAL, (double)minimum[index],
                                                             (double)maximum[index] + (span <= 0 ? 1 : 0),
                                                             step[index] > 0 ? (double)step[index] : 1);
            GTK(gtk_scale_set_digits)(scale, 0);
            GTK(gtk_scale_set_draw_value)(scale, 1);
            GTK(gtk_widget_set_hexpand)(scale, 1);
            GTK(gtk_range_set_value)(scale, (double)value[index]);
            GTK(gtk_accessible_update_property)(scale, GTK_ACCESSIBLE_PROPERTY_LABEL, labels[index], -1);
            connect(scale, "value-changed", (GCallback)on_control_value, (void *)(intptr_t)index);
            GTK(gtk_box_append)(row, label);
            GTK(gtk_box_append)(row, scale);
        }
        GTK(gtk_box_append)(ui.controls_list, row);
        ui.control_widgets[index] = row;
    }
    GTK(gtk_widget_set_visible)(ui.controls_button, ui.control_count > 0);
    ui.updating = 0;
}

void cgtk_preview_size(int *width, int *height) {
    *width = ui.picture ? GTK(gtk_widget_get_width)(ui.picture) : 0;
    *height = ui.picture ? GTK(gtk_widget_get_height)(ui.picture) : 0;
}

void cgtk_show_picture(const unsigned char *rgb, int width, int height, int stride) {
    if (width <= 0 || height <= 0 || stride < width * 3) return;
    size_t row = (size_t)width * 3, size = row * (size_t)height;
    unsigned char *copy = GTK(g_malloc)(size);
    for (int y = 0; y < height; y++) {
        const unsigned char *from = rgb + (size_t)y * (size_t)stride;
        unsigned char *to = copy + (size_t)y * row;
        if (!ui.mirrored) {
            memcpy(to, from, row);
            continue;
        }
        for (int x = 0; x < width; x++) memcpy(to + (size_t)(width - 1 - x) * 3, from + (size_t)x * 3, 3);
    }
    /* The texture owns the copy; the picture holds the texture until the next one. */
    GBytes *bytes = GTK(g_bytes_new_take)(copy, size);
    GdkTexture *texture = GTK(gdk_memory_texture_new)(width, height, GDK_MEMORY_R8G8B8, bytes, row);
    GTK(g_bytes_unref)(bytes);
    GTK(gtk_picture_set_paintable)(ui.picture, texture);
    GTK(g_object_unref)(texture);
}

#ifndef CAMROLL_CCURL_SHIM_H
#define CAMROLL_CCURL_SHIM_H
/*
 * One HTTP(S) GET with libcurl, loaded with dlopen() the first time a URL is fetched: libcurl
 * brings some thirty libraries (TLS, HTTP/2, Kerberos, LDAP…) that a photo from a camera never
 * needs, so they are not linked in and cost nothing at start-up. Only curl's header is used
 * at build time.
 *
 * The transfer is driven from C because curl_easy_setopt() and curl_easy_getinfo() are
 * variadic, which Swift cannot call.
 */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct ccurl_transfer {
    /* In: the most bytes of body kept (more aborts the transfer: too_large), and a callback
     * called as data arrives; returning non-zero from it cancels the transfer. */
    size_t max_bytes;
    int (*progress)(void *context, long long received, long long expected);
    void *context;
    /* Out. */
    int curl_code;          /* CURLcode; CURLE_OK when an HTTP answer arrived */
    long status;            /* the last response's HTTP status (after redirects) */
    int too_large;
    const char *userpwd;    /* "user:password" for the request (--user-from), or NULL */
    int headers_too_large;  /* the response's headers passed CCURL_MAX_HEADER_BYTES: aborted */
    size_t header_bytes;    /* of the response being read */
    char error[CURL_ERROR_SIZE];
    char etag[256];
    char last_modified[128];
    char content_type[128];
    unsigned char *body;
    size_t body_size;
    size_t body_capacity;
} ccurl_transfer;

typedef CURL *(*ccurl_init_fn)(void);
typedef CURLcode (*ccurl_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*ccurl_perform_fn)(CURL *);
typedef CURLcode (*ccurl_getinfo_fn)(CURL *, CURLINFO, ...);
typedef void (*ccurl_cleanup_fn)(CURL *);
typedef struct curl_slist *(*ccurl_slist_append_fn)(struct curl_slist *, const char *);
typedef void (*ccurl_slist_free_fn)(struct curl_slist *);
typedef const char *(*ccurl_strerror_fn)(CURLcode);

struct ccurl_functions {
    int loaded; /* 0 not tried, 1 ok, -1 failed */
    ccurl_init_fn init;
    ccurl_setopt_fn setopt;
    ccurl_perform_fn perform;
    ccurl_getinfo_fn getinfo;
    ccurl_cleanup_fn cleanup;
    ccurl_slist_append_fn slist_append;
    ccurl_slist_free_fn slist_free_all;
    ccurl_strerror_fn strerror;
};

/* The one table of libcurl's functions (a static inside a function: Swift emits those, where a
 * file-scope static of a header it imports is left undefined). */
static inline struct ccurl_functions *ccurl_table(void) {
    static struct ccurl_functions table;
    return &table;
}
#define ccurl_api (*ccurl_table())

/* Loads libcurl once. Returns 1 when it is usable; else 0, with dlerror()'s words in `why`. */
static inline int ccurl_load(char *why, size_t why_size) {
    if (ccurl_api.loaded == 0) {
        void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (!library) library = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL);
        ccurl_api.loaded = -1;
        if (library) {
            ccurl_api.init = (ccurl_init_fn)dlsym(library, "curl_easy_init");
            ccurl_api.setopt = (ccurl_setopt_fn)dlsym(library, "curl_easy_setopt");
            ccurl_api.perform = (ccurl_perform_fn)dlsym(library, "curl_easy_perform");
            ccurl_api.getinfo = (ccurl_getinfo_fn)dlsym(library, "curl_easy_getinfo");
            ccurl_api.cleanup = (ccurl_cleanup_fn)dlsym(library, "curl_easy_cleanup");
            ccurl_api.slist_append = (ccurl_slist_append_fn)dlsym(library, "curl_slist_append");
            ccurl_api.slist_free_all = (ccurl_slist_free_fn)dlsym(library, "curl_slist_free_all");
            ccurl_api.strerror = (ccurl_strerror_fn)dlsym(library, "curl_easy_strerror");
            if (ccurl_api.init && ccurl_api.setopt && ccurl_api.perform && ccurl_api.getinfo && ccurl_api.cleanup
                && ccurl_api.slist_append && ccurl_api.slist_free_all && ccurl_api.strerror)
                ccurl_api.loaded = 1;
        }
        if (ccurl_api.loaded != 1 && why) snprintf(why, why_size, "%s", dlerror() ? dlerror() : "libcurl.so.4 not found");
    }
    return ccurl_api.loaded == 1;
}

static inline size_t ccurl_on_body(char *data, size_t size, size_t count, void *userdata) {
    ccurl_transfer *transfer = userdata;
    size_t length = size * count;
    if (transfer->body_size + length > transfer->max_bytes) {
        transfer->too_large = 1;
        return 0; /* aborts: CURLE_WRITE_ERROR */
    }
    if (transfer->body_size + length > transfer->body_capacity) {
        size_t capacity = transfer->body_capacity ? transfer->body_capacity : 65536;
        while (capacity < transfer->body_size + length) capacity *= 2;
        unsigned char *grown = realloc(transfer->body, capacity);
        if (!grown) return 0;
        transfer->body = grown;
        transfer->body_capacity = capacity;
    }
    memcpy(transfer->body + transfer->body_size, data, length);
    transfer->body_size += length;
    return length;
}

/* Copies a header's value, trimmed, into `out` when `line` is that header. */
static inline void ccurl_header_value(const char *line, size_t length, const char *name, char *out, size_t out_size) {
    size_t name_length = strlen(name);
    if (length <= name_length || strncasecmp(line, name, name_length) != 0) return;
    const char *value = line + name_length;
    const char *end = line + length;
    while (value < end && (*value == ' ' || *value == '\t')) value++;
    while (end > value && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    size_t value_length = (size_t)(end - value) < out_size - 1 ? (size_t)(end - value) : out_size - 1;
    memcpy(out, value, value_length);
    out[value_length] = 0;
}

/* The most header bytes one response may have: a picture server's are a few hundred. (libcurl
 * itself refuses a single header over 100 kB with "Out of memory", and takes any number of small
 * ones: 200 000 of them once held a download until it timed out.) */
#define CCURL_MAX_HEADER_BYTES (64 * 1024)

static inline size_t ccurl_on_header(char *line, size_t size, size_t count, void *userdata) {
    ccurl_transfer *transfer = userdata;
    size_t length = size * count;
    if (length >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        /* A new response (after a redirect): only the last one's headers count. Its body
         * replaces any earlier one's too. */
        transfer->etag[0] = transfer->last_modified[0] = transfer->content_type[0] = 0;
        transfer->body_size = 0;
        transfer->header_bytes = 0;
    }
    transfer->header_bytes += length;
    if (transfer->header_bytes > CCURL_MAX_HEADER_BYTES) {
        transfer->headers_too_large = 1;
        return 0; /* aborts: CURLE_WRITE_ERROR */
    }
    ccurl_header_value(line, length, "etag:", transfer->etag, sizeof transfer->etag);
    ccurl_header_value(line, length, "last-modified:", transfer->last_modified, sizeof transfer->last_modified);
    ccurl_header_value(line, length, "content-type:", transfer->content_type, sizeof transfer->content_type);
    return length;
}

static inline int ccurl_on_progress(void *userdata, curl_off_t expected, curl_off_t received, curl_off_t up_total, curl_off_t up_now) {
    (void)up_total;
    (void)up_now;
    ccurl_transfer *transfer = userdata;
    return transfer->progress ? transfer->progress(transfer->context, received, expected) : 0;
}

/*
 * GET `url`, following up to 10 redirects over http/https only. `if_none_match` and
 * `if_modified_since` (either may be NULL) make it a conditional request. A connection must be
 * made within `connect_timeout_ms`; the transfer is abandoned when fewer than `min_rate` bytes a
 * second arrive over `stall_seconds` (a server that trickles bytes), and, whatever it does,
 * after `deadline_ms` in all. A user and password for the host come from `transfer->userpwd`
 * (--user-from), else from ~/.netrc where the URL has none. Returns 0 when libcurl was loaded and ran (see curl_code), -1 otherwise.
 */
static inline int ccurl_fetch(ccurl_transfer *transfer, const char *url, const char *if_none_match,
                              const char *if_modified_since, long connect_timeout_ms, long stall_seconds,
                              long min_rate, long deadline_ms, const char *user_agent) {
    if (!ccurl_load(transfer->error, sizeof transfer->error)) return -1;
    CURL *curl = ccurl_api.init();
    if (!curl) {
        snprintf(transfer->error, sizeof transfer->error, "curl_easy_init failed");
        return -1;
    }
    char header[512];
    struct curl_slist *headers = NULL;
    if (if_none_match && *if_none_match) {
        snprintf(header, sizeof header, "If-None-Match: %s", if_none_match);
        headers = ccurl_api.slist_append(headers, header);
    }
    if (if_modified_since && *if_modified_since) {
        snprintf(header, sizeof header, "If-Modified-Since: %s", if_modified_since);
        headers = ccurl_api.slist_append(headers, header);
    }
    transfer->error[0] = 0;
    ccurl_api.setopt(curl, CURLOPT_URL, url);
    ccurl_api.setopt(curl, CURLOPT_HTTPHEADER, headers);
    ccurl_api.setopt(curl, CURLOPT_USERAGENT, user_agent);
    ccurl_api.setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    ccurl_api.setopt(curl, CURLOPT_MAXREDIRS, 10L);
    ccurl_api.setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    ccurl_api.setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    ccurl_api.setopt(curl, CURLOPT_NOSIGNAL, 1L);
    ccurl_api.setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    ccurl_api.setopt(curl, CURLOPT_LOW_SPEED_LIMIT, min_rate);
    ccurl_api.setopt(curl, CURLOPT_LOW_SPEED_TIME, stall_seconds);
    ccurl_api.setopt(curl, CURLOPT_TIMEOUT_MS, deadline_ms);
    ccurl_api.setopt(curl, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);
    if (transfer->userpwd) ccurl_api.setopt(curl, CURLOPT_USERPWD, transfer->userpwd);
    ccurl_api.setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)transfer->max_bytes);
    ccurl_api.setopt(curl, CURLOPT_ERRORBUFFER, transfer->error);
    ccurl_api.setopt(curl, CURLOPT_WRITEFUNCTION, ccurl_on_body);
    ccurl_api.setopt(curl, CURLOPT_WRITEDATA, transfer);
    ccurl_api.setopt(curl, CURLOPT_HEADERFUNCTION, ccurl_on_header);
    ccurl_api.setopt(curl, CURLOPT_HEADERDATA, transfer);
    ccurl_api.setopt(curl, CURLOPT_XFERINFOFUNCTION, ccurl_on_progress);
    ccurl_api.setopt(curl, CURLOPT_XFERINFODATA, transfer);
    ccurl_api.setopt(curl, CURLOPT_NOPROGRESS, 0L);
    transfer->curl_code = ccurl_api.perform(curl);
    ccurl_api.getinfo(curl, CURLINFO_RESPONSE_CODE, &transfer->status);
    if (transfer->curl_code != CURLE_OK && !transfer->error[0])
        snprintf(transfer->error, sizeof transfer->error, "%s", ccurl_api.strerror((CURLcode)transfer->curl_code));
    ccurl_api.slist_free_all(headers);
    ccurl_api.cleanup(curl);
    return 0;
}

static inline void ccurl_release(ccurl_transfer *transfer) {
    free(transfer->body);
    transfer->body = NULL;
    transfer->body_size = transfer->body_capacity = 0;
}
#endif

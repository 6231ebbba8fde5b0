#pragma once
// Typed wrappers for libcurl's variadic entry points: Swift cannot call a C variadic
// function, so each argument kind of curl_easy_setopt / curl_easy_getinfo gets one
// static inline function here. Every wrapper returns the CURLcode unchanged.
#include <curl/curl.h>

/// Body and header callbacks: `(data, size, count, context)`, return `size * count` to go on.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);
/// Progress callback: return non-zero to abort the transfer (CURLE_ABORTED_BY_CALLBACK).
typedef int (*ccurl_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// For string options libcurl copies the string (since 7.17.0); other pointers must outlive the transfer.
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_write_function(CURL *handle, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/// The request body's source for an upload (`CURLOPT_UPLOAD`): fills `data` with up to
/// `size * count` bytes and returns how many (0 at the end).
static inline CURLcode ccurl_easy_setopt_read_function(CURL *handle, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

static inline CURLcode ccurl_easy_setopt_header_function(CURL *handle, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

static inline CURLcode ccurl_easy_setopt_xferinfo_function(CURL *handle, ccurl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/// Called once a transfer has its connection, before its request goes out (libcurl 7.80+).
static inline CURLcode ccurl_easy_setopt_prereq_function(CURL *handle, curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

/// Called for each socket libcurl made, before it connects.
static inline CURLcode ccurl_easy_setopt_sockopt_function(CURL *handle, curl_sockopt_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, callback);
}

/// Called to close a socket libcurl made (the callback closes it).
static inline CURLcode ccurl_easy_setopt_closesocket_function(CURL *handle, curl_closesocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The `CURLcode` of a `CURLMSG_DONE` message (`data` is a union Swift cannot read by name).
static inline CURLcode ccurl_message_result(const CURLMsg *message) {
    return message->data.result;
}

/// The value a write callback returns to pause its transfer (a macro Swift cannot import).
static inline size_t ccurl_write_pause(void) {
    return CURL_WRITEFUNC_PAUSE;
}

/// `curl_version_info(CURLVERSION_NOW)`: the macro is not visible to Swift.
static inline curl_version_info_data *ccurl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

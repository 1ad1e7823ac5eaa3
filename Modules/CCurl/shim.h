#ifndef PEREGRINE_CCURL_SHIM_H
#define PEREGRINE_CCURL_SHIM_H

#include <curl/curl.h>

/* Typed wrappers for libcurl's variadic calls, which Swift cannot call directly. */

typedef size_t (*peregrine_curl_data_callback)(char *data, size_t size, size_t count, void *user);

static inline CURLcode peregrine_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode peregrine_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode peregrine_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode peregrine_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                           peregrine_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode peregrine_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode peregrine_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode peregrine_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode peregrine_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode peregrine_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

#endif

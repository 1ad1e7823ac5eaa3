#ifndef PEREGRINE_CCURL_SHIM_H
#define PEREGRINE_CCURL_SHIM_H

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <sys/prctl.h>

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

typedef int (*peregrine_curl_debug_callback)(CURL *handle, curl_infotype type, char *data, size_t size, void *user);

static inline CURLcode peregrine_easy_setopt_debug_callback(CURL *handle, peregrine_curl_debug_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, callback);
}

static inline CURLcode peregrine_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/* A share of one cookie store among the easy handles of one thread (no locks needed). */
static inline CURLSH *peregrine_share_cookies(void) {
    CURLSH *share = curl_share_init();
    if (share && curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) != CURLSHE_OK) {
        curl_share_cleanup(share);
        return NULL;
    }
    return share;
}

/* Sockets opened and closed by the caller, so that a transfer can find its connection. */
static inline curl_socket_t peregrine_open_socket(struct curl_sockaddr *address) {
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

typedef curl_socket_t (*peregrine_curl_open_socket_callback)(void *user, curlsocktype purpose,
                                                             struct curl_sockaddr *address);
typedef int (*peregrine_curl_close_socket_callback)(void *user, curl_socket_t socket);

static inline CURLcode peregrine_easy_setopt_socket_callbacks(CURL *handle, peregrine_curl_open_socket_callback open,
                                                              peregrine_curl_close_socket_callback close, void *user) {
    CURLcode result = curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, user);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, close);
    if (result == CURLE_OK) result = curl_easy_setopt(handle, CURLOPT_CLOSESOCKETDATA, user);
    return result;
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

static inline CURLcode peregrine_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode peregrine_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode peregrine_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/* libcurl is built against OpenSSL here; keep OpenSSL from registering an exit handler that would
   free its state while the transfer thread may still use it. */
static inline int peregrine_openssl_init_no_atexit(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

/* Names the calling thread (for debuggers and top). */
static inline void peregrine_set_thread_name(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/* The value a write callback returns to pause the transfer (a macro Swift cannot import). */
static inline size_t peregrine_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }

#endif

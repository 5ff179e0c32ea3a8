#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "storesync_shims.h"

int storesync_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof(truncated) - 1);
    truncated[sizeof(truncated) - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

/* libpq draws random bytes from OpenSSL on every Postgres connection thread (SCRAM authentication), and
   closing a pool ends those threads just as a command returns. One still ending while exit() runs OpenSSL's
   default atexit cleanup has the per-thread records it frees freed a second time: a crash after the work is
   done. So every process linking these shims (storesync, its test worker, the test runners) keeps OpenSSL's
   global state until the process is gone. A constructor, because only OpenSSL's first initialisation
   decides, and this one runs before main and before anything could use OpenSSL. */
__attribute__((constructor)) static void storesync_keep_openssl_until_exit(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

void storesync_openssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

STACK_OF(X509) *storesync_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

int storesync_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

int storesync_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

X509 *storesync_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

void storesync_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

EVP_PKEY *storesync_ec_generate(const char *curve) {
    return EVP_EC_gen(curve);
}

EVP_PKEY *storesync_rsa_generate(unsigned int bits) {
    return EVP_RSA_gen(bits);
}

void storesync_x509v3_set_ctx_nodb(X509V3_CTX *ctx) {
    X509V3_set_ctx_nodb(ctx);
}

CURLcode storesync_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode storesync_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode storesync_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode storesync_curl_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode storesync_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode storesync_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode storesync_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

CURLMcode storesync_curl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return curl_multi_setopt(handle, option, value);
}

CURLMcode storesync_curl_multi_setopt_socket_callback(CURLM *handle, curl_socket_callback callback) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, callback);
}

CURLMcode storesync_curl_multi_setopt_timer_callback(CURLM *handle, curl_multi_timer_callback callback) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, callback);
}

_Static_assert(STORESYNC_EPOLLIN == EPOLLIN && STORESYNC_EPOLLOUT == EPOLLOUT && STORESYNC_EPOLLERR == EPOLLERR
                   && STORESYNC_EPOLLHUP == EPOLLHUP, "epoll bits");

int storesync_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int storesync_epoll_watch(int epoll, int fd, uint32_t events) {
    struct epoll_event event = { .events = events, .data.fd = fd };
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int storesync_epoll_unwatch(int epoll, int fd) {
    if (epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL) == 0 || errno == ENOENT || errno == EBADF) return 0;
    return -1;
}

int storesync_epoll_wait(int epoll, int *fds, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[128];
    if (capacity > 128) capacity = 128;
    int count = epoll_wait(epoll, ready, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        fds[i] = ready[i].data.fd;
        events[i] = ready[i].events;
    }
    return count;
}

int storesync_eventfd_create(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void storesync_eventfd_signal(int fd) {
    uint64_t one = 1;
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {}
}

void storesync_eventfd_drain(int fd) {
    uint64_t count;
    while (read(fd, &count, sizeof count) < 0 && errno == EINTR) {}
}

/// MHD's logger gets a printf format; format it here, where va_list is at home.
static void storesync_mhd_log(void *cls, const char *format, va_list arguments) {
    const struct storesync_mhd_options *options = cls;
    char message[512];
    vsnprintf(message, sizeof(message), format, arguments);
    size_t length = strlen(message);
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) {
        message[--length] = '\0';
    }
    options->error_logger(options->context, message);
}

/// The logger goes first: libmicrohttpd reports problems with earlier options through its own stderr logger.
struct MHD_Daemon *storesync_mhd_start_daemon(const struct storesync_mhd_options *options) {
    void *context = options->context;
    if (options->tls_certificate_pem != NULL && options->tls_key_pem != NULL) {
        return MHD_start_daemon(options->flags, 0, NULL, NULL, options->access_handler, context,
                                MHD_OPTION_EXTERNAL_LOGGER, storesync_mhd_log, (void *)options,
                                MHD_OPTION_SOCK_ADDR, options->address,
                                MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
                                MHD_OPTION_CONNECTION_LIMIT, options->connection_limit,
                                MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
                                MHD_OPTION_NOTIFY_COMPLETED, options->request_completed, context,
                                MHD_OPTION_NOTIFY_CONNECTION, options->connection_notify, context,
                                MHD_OPTION_URI_LOG_CALLBACK, options->uri_logger, context,
                                MHD_OPTION_HTTPS_MEM_CERT, options->tls_certificate_pem,
                                MHD_OPTION_HTTPS_MEM_KEY, options->tls_key_pem,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(options->flags, 0, NULL, NULL, options->access_handler, context,
                            MHD_OPTION_EXTERNAL_LOGGER, storesync_mhd_log, (void *)options,
                            MHD_OPTION_SOCK_ADDR, options->address,
                            MHD_OPTION_CONNECTION_TIMEOUT, options->connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, options->connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, options->per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, options->connection_memory_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, options->request_completed, context,
                            MHD_OPTION_NOTIFY_CONNECTION, options->connection_notify, context,
                            MHD_OPTION_URI_LOG_CALLBACK, options->uri_logger, context,
                            MHD_OPTION_END);
}

enum MHD_Result storesync_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

uint16_t storesync_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int storesync_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        return inet_ntop(AF_INET, &v4->sin_addr, buffer, (socklen_t)length) == NULL ? -1 : 0;
    }
    if (address->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
            return inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], buffer, (socklen_t)length) == NULL ? -1 : 0;
        }
        return inet_ntop(AF_INET6, &v6->sin6_addr, buffer, (socklen_t)length) == NULL ? -1 : 0;
    }
    return -1;
}

int storesync_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

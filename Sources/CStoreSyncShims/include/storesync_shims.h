#ifndef STORESYNC_SHIMS_H
#define STORESYNC_SHIMS_H

#include <stdint.h>

/// Names the calling OS thread (visible in `top -H`, gdb and crash reports); glibc's
/// pthread_setname_np is a GNU extension Swift's Glibc module does not expose.
int storesync_set_thread_name(const char *name);

/// pipe2(fds, O_CLOEXEC): a pipe no concurrently spawned process inherits (pipe2 needs _GNU_SOURCE).
int storesync_pipe_cloexec(int fds[2]);

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/// OpenSSL's selection constants are compound macros the importer drops.
static const int STORESYNC_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;

/// OPENSSL_free is a macro (it records the call site).
void storesync_openssl_free(void *pointer);

/// STACK_OF(X509) accessors are macros.
STACK_OF(X509) *storesync_sk_X509_new_null(void);
int storesync_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate);
int storesync_sk_X509_num(const STACK_OF(X509) *stack);
X509 *storesync_sk_X509_value(const STACK_OF(X509) *stack, int index);
/// Frees the stack and drops one reference to each certificate on it.
void storesync_sk_X509_pop_free(STACK_OF(X509) *stack);

/// EVP_EC_gen and EVP_RSA_gen are macros over the variadic EVP_PKEY_Q_keygen.
EVP_PKEY *storesync_ec_generate(const char *curve);
EVP_PKEY *storesync_rsa_generate(unsigned int bits);

/// X509V3_set_ctx_nodb is a macro.
void storesync_x509v3_set_ctx_nodb(X509V3_CTX *ctx);


#include <curl/curl.h>

/// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic; one typed wrapper per argument type.
CURLcode storesync_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode storesync_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode storesync_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode storesync_curl_easy_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback);
CURLcode storesync_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode storesync_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);
CURLMcode storesync_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value);
CURLMcode storesync_curl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value);
CURLMcode storesync_curl_multi_setopt_socket_callback(CURLM *handle, curl_socket_callback callback);
CURLMcode storesync_curl_multi_setopt_timer_callback(CURLM *handle, curl_multi_timer_callback callback);
/// CURL_SOCKET_TIMEOUT is a macro of a macro, which the importer drops.
static const curl_socket_t STORESYNC_CURL_SOCKET_TIMEOUT = CURL_SOCKET_TIMEOUT;

/// epoll for the HTTP client's socket-driven loop. `struct epoll_event` is packed on x86-64, so the
/// readiness list comes back as two plain arrays instead.
/// A new epoll instance (close-on-exec), or -1 with errno.
int storesync_epoll_create(void);
/// Watches `fd` for `events` (EPOLLIN/EPOLLOUT bits), adding it or changing what it is watched for.
int storesync_epoll_watch(int epoll, int fd, uint32_t events);
/// Stops watching `fd`; an fd already closed (and so already gone from the set) is not an error.
int storesync_epoll_unwatch(int epoll, int fd);
/// epoll_wait: up to `capacity` ready fds and their events; the count, or -1 with errno.
int storesync_epoll_wait(int epoll, int *fds, uint32_t *events, int capacity, int timeout_ms);
/// A non-blocking, close-on-exec eventfd that wakes an epoll loop from other threads.
int storesync_eventfd_create(void);
/// Makes the eventfd readable (wakes its loop); safe from any thread.
void storesync_eventfd_signal(int fd);
/// Consumes pending wake-ups.
void storesync_eventfd_drain(int fd);
/// The epoll bits the loop uses (checked against <sys/epoll.h> where the shims are compiled).
#define STORESYNC_EPOLLIN 0x001u
#define STORESYNC_EPOLLOUT 0x004u
#define STORESYNC_EPOLLERR 0x008u
#define STORESYNC_EPOLLHUP 0x010u

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Everything MHD_start_daemon (variadic) is given. The daemon keeps pointers into this struct and into
/// the TLS strings: the caller keeps all of them alive until MHD_stop_daemon has returned.
struct storesync_mhd_options {
    unsigned int flags;
    /// The address to bind; only read while the daemon starts.
    const struct sockaddr *address;
    unsigned int connection_timeout_seconds;
    unsigned int connection_limit;
    /// 0 for no per-client-address limit.
    unsigned int per_ip_connection_limit;
    /// Bytes of each connection's memory pool (request line, headers, read buffer). Headers past it get
    /// libmicrohttpd's own 431 page, so it is set well above the server's own header limit.
    size_t connection_memory_limit;
    /// PEM certificate and key; both NULL for plain HTTP.
    const char *tls_certificate_pem;
    const char *tls_key_pem;
    MHD_AccessHandlerCallback access_handler;
    MHD_RequestCompletedCallback request_completed;
    MHD_NotifyConnectionCallback connection_notify;
    void *(*uri_logger)(void *context, const char *uri, struct MHD_Connection *connection);
    /// Receives each of the daemon's error messages, already formatted (MHD hands out printf formats).
    void (*error_logger)(void *context, const char *message);
    /// Passed to every callback above.
    void *context;
};

struct MHD_Daemon *storesync_mhd_start_daemon(const struct storesync_mhd_options *options);

/// MHD_set_connection_option(MHD_CONNECTION_OPTION_TIMEOUT) (variadic): the idle timeout of one connection.
enum MHD_Result storesync_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds);

/// The port the daemon is bound to (MHD_get_daemon_info is variadic); 0 if unknown.
uint16_t storesync_mhd_bound_port(struct MHD_Daemon *daemon);

/// The connection's peer address as text (inet_ntop of MHD_CONNECTION_INFO_CLIENT_ADDRESS, IPv4-mapped IPv6
/// addresses written as IPv4) into `buffer`; 0 on success, -1 when it is unknown or not IP.
int storesync_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

#endif

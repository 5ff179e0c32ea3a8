#ifndef STORESYNC_SHIMS_H
#define STORESYNC_SHIMS_H

/// Names the calling OS thread (visible in `top -H`, gdb and crash reports); glibc's
/// pthread_setname_np is a GNU extension Swift's Glibc module does not expose.
int storesync_set_thread_name(const char *name);

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

#endif

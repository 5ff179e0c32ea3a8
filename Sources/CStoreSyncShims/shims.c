#include <pthread.h>
#include <string.h>
#include "storesync_shims.h"

int storesync_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof(truncated) - 1);
    truncated[sizeof(truncated) - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
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

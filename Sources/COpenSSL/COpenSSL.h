#pragma once
// SHA256_CTX / SHA512_CTX are deprecated in OpenSSL 3 in favour of EVP, but they are plain
// structs whose bytes can be saved and restored: that is the checkpoint (ResumeAndCheckpoints.md in the PinFetch documentation catalog).
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

/// Initializes libcrypto without its atexit cleanup. Threads that used OpenSSL run its
/// thread-local destructors when they end; if `exit` has already freed OpenSSL's state from
/// an atexit handler, those destructors crash (seen as SIGSEGV in OPENSSL_sk_delete at exit).
/// Returns 1 on success.
static inline int copenssl_init_without_atexit(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

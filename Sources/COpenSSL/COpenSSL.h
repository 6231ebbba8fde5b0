#pragma once
// SHA256_CTX / SHA512_CTX are deprecated in OpenSSL 3 in favour of EVP, but they are plain
// structs whose bytes can be saved and restored: that is the checkpoint (DESIGN.md).
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
#include <openssl/crypto.h>

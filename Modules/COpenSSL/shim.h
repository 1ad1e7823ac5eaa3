#ifndef PEREGRINE_COPENSSL_SHIM_H
#define PEREGRINE_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#endif

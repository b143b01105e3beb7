/*
 * Reference for per-record AEAD cost: the four EVP calls TLS makes per record
 * (new IV, 13-byte AAD, update, final) in a bare C loop, every return code checked.
 * `openssl speed -aead` makes the same calls but ignores their results; this
 * loop shows what the library really delivers, so cipherbench's harness overhead
 * can be read off directly.
 *
 * usage: aead_record_loop ALG BYTES SECONDS  -> prints bytes per second
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s ALG BYTES SECONDS\n", argv[0]);
        return 2;
    }
    int len = atoi(argv[2]);
    double secs = atof(argv[3]);
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, argv[1], NULL);
    if (c == NULL) {
        fprintf(stderr, "unknown cipher %s\n", argv[1]);
        return 1;
    }
    unsigned char key[64] = {1}, iv[12] = {2}, aad[13] = {3}, tag[16];
    unsigned char *buf = aligned_alloc(64, (size_t)len + 64);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl, fin;
    if (!EVP_EncryptInit_ex(ctx, c, NULL, key, iv)) return 1;
    long n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 1000; i++, n++) {
            if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1 ||
                EVP_EncryptUpdate(ctx, NULL, &outl, aad, sizeof aad) != 1 ||
                EVP_EncryptUpdate(ctx, buf, &outl, buf, len) != 1 ||
                EVP_EncryptFinal_ex(ctx, buf + outl, &fin) != 1 ||
                EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1) {
                fprintf(stderr, "EVP call failed\n");
                return 1;
            }
        }
        t = now();
    } while (t - t0 < secs);
    printf("%.0f\n", (double)n * len / (t - t0));
    return 0;
}

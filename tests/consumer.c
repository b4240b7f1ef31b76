/* A program that knows tgemm only through pkg-config (make test-install).
 * Prints the library version and multiplies a small matrix; without a GPU
 * it must get TGEMM_ERROR_NO_DEVICE, with one the exact product. */
#include <stdio.h>
#include <string.h>

#include <tgemm.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], tgemm_version_string()) != 0) {
        fprintf(stderr, "consumer: library %s, expected %s\n", tgemm_version_string(), argv[1]);
        return 1;
    }
    const float a[6] = {1, 2, 3, 4, 5, 6}; /* 2 x 3 */
    const float b[3] = {1, 1, 1};          /* 3 x 1 */
    float c[2] = {-1, -1};
    const tgemm_status s = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 2, 1, 3, 1.0f, a, 2, b, 3, 0.0f, c, 2);
    if (s == TGEMM_ERROR_NO_DEVICE && c[0] == -1 && c[1] == -1) {
        printf("consumer: tgemm %s linked; no GPU here (%s)\n", tgemm_version_string(), tgemm_status_string(s));
        return 0;
    }
    if (s == TGEMM_SUCCESS && c[0] == 9 && c[1] == 12) {
        printf("consumer: tgemm %s computed [9 12] on the GPU\n", tgemm_version_string());
        return 0;
    }
    fprintf(stderr, "consumer: status %d (%s), C = [%g %g]\n", (int)s, tgemm_status_string(s), c[0], c[1]);
    return 1;
}

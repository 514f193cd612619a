/* A stand-in for an NVRTC bug: a library named libnvrtc.so, put first on LD_LIBRARY_PATH,
 * that passes every call to the real libnvrtc.so.13 (its one dependency) except a compile
 * with the option -DCRASH=1, where it writes an assertion's line to stderr and aborts, as a
 * compiler's failed assertion does. Built here:
 *   gcc -shared -fPIC -Wl,-soname,libnvrtc.so.13 -o /tmp/stub/libnvrtc.so.13 -x c /dev/null
 *   gcc -shared -fPIC -Wl,-soname,libnvrtc.so -o .kt/shim/libnvrtc.so nvrtc-shim.c \
 *       -Wl,--no-as-needed /tmp/stub/libnvrtc.so.13 -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*compile_fn)(void *, int, const char *const *);

int nvrtcCompileProgram(void *prog, int n, const char *const *options) {
    static compile_fn real;
    if (!real) real = (compile_fn)dlsym(RTLD_NEXT, "nvrtcCompileProgram");
    for (int i = 0; i < n; i++) {
        if (strcmp(options[i], "-DCRASH=1") == 0) {
            fprintf(stderr, "libnvrtc shim: Assertion `New->getType() == getType()' failed (a stand-in for a compiler bug on this code)\n");
            abort();
        }
    }
    return real(prog, n, options);
}

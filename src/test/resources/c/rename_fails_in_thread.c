/*
 * Preloaded into a JVM (LD_PRELOAD): rename(2) fails with EIO in a thread named in FAIL_RENAME_THREADS
 * (names separated by commas, each compared on its first 15 characters: the kernel keeps no more of
 * a name); every other call is the real one.
 * A disk that fails one write, chosen by who writes it rather than by how many came before.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static int fails_here(void) {
    const char *names = getenv("FAIL_RENAME_THREADS");
    char name[17] = {0};
    if (names == NULL || prctl(PR_GET_NAME, name, 0, 0, 0) != 0) {
        return 0;
    }
    for (const char *each = names; *each != '\0';) {
        size_t length = strcspn(each, ",");
        size_t compared = length < 15 ? length : 15;
        if (compared == strlen(name) && strncmp(name, each, compared) == 0) {
            return 1;
        }
        each += length + (each[length] == ',' ? 1 : 0);
    }
    return 0;
}

int rename(const char *from, const char *to) {
    if (fails_here()) {
        errno = EIO;
        return -1;
    }
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *)) dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}

int renameat(int from_dir, const char *from, int to_dir, const char *to) {
    if (fails_here()) {
        errno = EIO;
        return -1;
    }
    int (*real)(int, const char *, int, const char *) =
            (int (*)(int, const char *, int, const char *)) dlsym(RTLD_NEXT, "renameat");
    return real(from_dir, from, to_dir, to);
}

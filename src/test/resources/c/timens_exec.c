/* Runs a command in a new time namespace whose boottime offset is given in nanoseconds, so that
 * offsets that are not whole seconds (nor whole clock ticks) can be tried; unshare(1) takes whole
 * seconds only. The offsets must be written after unshare(CLONE_NEWTIME) and before the exec that
 * moves this process into the namespace. Usage: timens_exec NANOS COMMAND [ARG]... (needs root). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: timens_exec NANOS COMMAND [ARG]...\n");
        return 64;
    }
    long long nanos = atoll(argv[1]);
    long long seconds = nanos / 1000000000LL;
    long long rest = nanos % 1000000000LL;
    if (rest < 0) {
        seconds -= 1;
        rest += 1000000000LL;
    }
    if (unshare(CLONE_NEWTIME) != 0) {
        perror("unshare(CLONE_NEWTIME)");
        return 71;
    }
    FILE *f = fopen("/proc/self/timens_offsets", "w");
    if (f == NULL || fprintf(f, "boottime %lld %lld\n", seconds, rest) < 0 || fclose(f) != 0) {
        perror("/proc/self/timens_offsets");
        return 71;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}

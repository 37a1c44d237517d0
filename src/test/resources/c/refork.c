/*
 * refork: a carrier that keeps re-forking, as a daemon that double-forks does, but forever:
 * each generation forks the next and exits at once, so exactly one process of the chain runs at
 * a time and its pid changes every few hundred microseconds. A scan that reads /proc entry by
 * entry finds the pid it listed gone, and the carrier alive under a pid it never listed. The
 * chain leads a process group of its own (its first pid), so a test ends it with kill(-pgid).
 * It prints that group id on stdout, then goes on until killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    if (setpgid(0, 0) != 0) {
        perror("setpgid");
        return 1;
    }
    printf("%ld\n", (long) getpid());
    fflush(stdout);
    fclose(stdout);
    struct timespec pause = {0, 200 * 1000};
    for (;;) {
        pid_t child = fork();
        if (child < 0) {
            nanosleep(&pause, NULL); /* out of pids for a moment: try again */
            continue;
        }
        if (child > 0) {
            _exit(0); /* the parent goes; the child carries on */
        }
        nanosleep(&pause, NULL);
    }
}

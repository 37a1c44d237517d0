/* Like leader_exits.c, but the main thread exits alone only after a line on stdin, so that a
 * watch can be made while the process is still whole. */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *linger(void *arg) {
    (void) arg;
    sleep(60);
    return NULL;
}

int main(void) {
    pthread_t t;
    char line[8];
    if (pthread_create(&t, NULL, linger, NULL) != 0) {
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    if (fgets(line, sizeof line, stdin) == NULL) {
        return 1;
    }
    syscall(SYS_exit, 0);
    return 0;
}

/* The main thread exits alone (SYS_exit, not exit_group): the kernel then shows the
 * thread-group leader as Z while the other thread keeps the process running. */
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
    if (pthread_create(&t, NULL, linger, NULL) != 0) {
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    syscall(SYS_exit, 0);
    return 0;
}

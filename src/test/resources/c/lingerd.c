/*
 * A daemon that outlives the command that started it, in the ways that slip past a tracker that
 * trusts the first proof it reads. It forks (the command exits at once) and starts a session; then,
 * as told:
 *   --leave FILE        writes "0" to FILE, the cgroup.procs of another cgroup: it moves itself
 *                       out of the cgroup it was started in;
 *   --leader-exits      its main thread exits alone (SYS_exit), so /proc/PID/stat says Z while
 *                       another thread runs on.
 * It writes its pid to PIDFILE (through a rename, after any move) and lives SECONDS seconds,
 * appending a line to PIDFILE.log every 100 ms: the writes a second writer must never overlap.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int seconds;
static char logfile[4096];

static void *work(void *arg) {
    (void) arg;
    struct timespec tick = {0, 100 * 1000 * 1000};
    for (int i = 0; i < seconds * 10; i++) {
        FILE *f = fopen(logfile, "a");
        if (f != NULL) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            fprintf(f, "%lld%03ld\n", (long long) now.tv_sec, now.tv_nsec / 1000000);
            fclose(f);
        }
        nanosleep(&tick, NULL);
    }
    exit(0); /* exit_group: every thread ends */
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: lingerd SECONDS PIDFILE [--leave CGROUP_PROCS] [--leader-exits]\n");
        return 64;
    }
    seconds = atoi(argv[1]);
    const char *pidfile = argv[2];
    const char *leave = NULL;
    int leader_exits = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--leave") == 0 && i + 1 < argc) {
            leave = argv[++i];
        } else if (strcmp(argv[i], "--leader-exits") == 0) {
            leader_exits = 1;
        } else {
            fprintf(stderr, "lingerd: unknown argument %s\n", argv[i]);
            return 64;
        }
    }
    snprintf(logfile, sizeof logfile, "%s.log", pidfile);
    pid_t p = fork();
    if (p != 0) {
        return p < 0 ? 1 : 0; /* the command ends at once */
    }
    setsid();
    if (leave != NULL) {
        FILE *procs = fopen(leave, "w");
        if (procs == NULL || fprintf(procs, "0\n") < 0 || fclose(procs) != 0) {
            perror("lingerd: cannot leave the cgroup");
            return 1;
        }
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", pidfile);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        return 1;
    }
    fprintf(f, "%d\n", (int) getpid());
    fclose(f);
    rename(tmp, pidfile);
    if (!leader_exits) {
        work(NULL);
    }
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL) != 0) {
        return 1;
    }
    syscall(SYS_exit, 0); /* the main thread alone */
    return 0;
}

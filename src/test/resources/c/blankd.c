/*
 * A daemon that hides from a scan of environments: it forks, starts a session, forks again (the
 * first two exit at once), and overwrites its own initial environment in place, as setproctitle
 * does in postgres or sendmail, so /proc/PID/environ reads as NULs. Then it writes its pid to
 * argv[2], lives argv[1] seconds and exits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: blankd SECONDS PIDFILE\n");
        return 64;
    }
    int seconds = atoi(argv[1]);
    pid_t p = fork();
    if (p != 0) {
        return p < 0 ? 1 : 0; /* the command ends at once */
    }
    setsid();
    p = fork();
    if (p != 0) {
        return p < 0 ? 1 : 0; /* so does the session leader */
    }
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    for (char **e = environ; *e; e++) {
        memset(*e, 0, strlen(*e));
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        return 1;
    }
    fprintf(f, "%d\n", (int) getpid());
    fclose(f);
    rename(tmp, argv[2]);
    sleep(seconds);
    return 0;
}

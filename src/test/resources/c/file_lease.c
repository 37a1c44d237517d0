/*
 * Holds a file lease (fcntl F_SETLEASE) on FILE, as the process that owns it may: "r" a read
 * lease, "w" a write lease. It prints "leased" once it holds it, then never lets it go of its own
 * accord: a break it is told of (SIGIO) is ignored, so the kernel ends the lease only after
 * /proc/sys/fs/lease-break-time; it then takes it again. Prints "refused ERRNO" if it cannot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: file_lease FILE r|w\n");
        return 64;
    }
    int type = argv[2][0] == 'w' ? F_WRLCK : F_RDLCK;
    signal(SIGIO, SIG_IGN);
    int said = 0;
    for (;;) {
        int fd = open(argv[1], O_RDONLY);
        if (fd >= 0 && fcntl(fd, F_SETLEASE, type) == 0) {
            if (!said) {
                printf("leased\n");
                fflush(stdout);
                said = 1;
            }
            while (fcntl(fd, F_GETLEASE) != F_UNLCK) {
                usleep(10000);
            }
            sleep(60); /* the break under way: held until the kernel takes it */
        } else if (!said) {
            printf("refused %d\n", errno);
            fflush(stdout);
            return 1;
        }
        if (fd >= 0) {
            close(fd);
        }
        usleep(1000);
    }
}

package dev.proclive.macos;

/**
 * A failed system call and the errno it left. A type of its own so that a failure can never be
 * mistaken for an answer: a failed {@code sysctl} with an errno of 0 is still a failure, not
 * "no such process".
 */
final class ErrnoException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int errno;

    ErrnoException(int errno) {
        super("errno " + errno, null, false, false);
        this.errno = errno;
    }

    int errno() {
        return errno;
    }
}

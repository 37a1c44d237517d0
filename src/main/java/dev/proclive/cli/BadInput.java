package dev.proclive.cli;

/** Input the user must fix; becomes one stderr line and exit 65. */
final class BadInput extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadInput(String message) {
        super(message, null, false, false);
    }
}
